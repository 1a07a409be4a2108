"""Large pipelined input: a client that sends megabytes of requests in one write gets
every reply, in order, promptly. (The event-loop side of this, input left waiting until
the next I/O event, is pinned down by tests/unit/server/net/event_loop_test.cc.)"""
import socket
import time


def test_large_pipelined_write_is_served_promptly(server, r):
    n = 60000
    payload = b"".join(b"*3\r\n$3\r\nSET\r\n$9\r\nbig:%05d\r\n$64\r\n%s\r\n" % (i, b"v" * 64)
                       for i in range(n))
    assert len(payload) > 4 * 1024 * 1024
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    try:
        start = time.monotonic()
        s.sendall(payload)
        want = b"+OK\r\n" * n
        got = 0
        while got < len(want):
            chunk = s.recv(1 << 20)
            assert chunk, "connection closed after %d bytes of replies" % got
            got += len(chunk)
        elapsed = time.monotonic() - start
    finally:
        s.close()
    assert got == len(want)
    assert r.dbsize() == n
    # Generous for a slow 2-core machine.
    assert elapsed < 10, "took %.1fs" % elapsed


def test_client_far_ahead_of_the_server_is_served_in_linear_time(server, r):
    """A client that writes ~100 MB of requests while reading replies on another thread
    gets ahead of the server; bytes that arrive while its connection is not reading wait
    in the event loop. Handing them over once took time proportional to all that was
    still waiting, per read: quadratic in the input."""
    import threading
    n = 800000
    payload = b"".join(b"*3\r\n$3\r\nSET\r\n$9\r\nflood:%03d\r\n$100\r\n%s\r\n" %
                       (i % 1000, b"x" * 100) for i in range(n))
    assert len(payload) > 100 * 1000 * 1000
    s = socket.create_connection(("127.0.0.1", server.port), timeout=120)
    want = 5 * n
    state = {"got": 0}

    def reader():
        while state["got"] < want:
            chunk = s.recv(1 << 20)
            if not chunk:
                return
            state["got"] += len(chunk)

    t = threading.Thread(target=reader)
    try:
        start = time.monotonic()
        t.start()
        s.sendall(payload)
        t.join(120)
        elapsed = time.monotonic() - start
    finally:
        s.close()
    assert state["got"] == want
    assert r.get("flood:999") in ("x" * 100, b"x" * 100)
    # Linear: about a second here (a few under sanitizers); the quadratic hand-over
    # took about 20 s on the same 2-core machine, and grows with the square of the input.
    assert elapsed < 12, "took %.1fs" % elapsed
