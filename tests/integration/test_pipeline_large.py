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


def _flood(server, n):
    """Writes n pipelined SETs of 100 bytes (about 130 bytes each) as fast as the socket
    takes them while another thread reads the replies; returns the seconds it took."""
    import threading
    payload = b"".join(b"*3\r\n$3\r\nSET\r\n$9\r\nflood:%03d\r\n$100\r\n%s\r\n" %
                       (i % 1000, b"x" * 100) for i in range(n))
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
    return elapsed


def test_client_far_ahead_of_the_server_is_served_in_linear_time(server, r):
    """A client that writes ~100 MB of requests while reading replies on another thread
    gets ahead of the server; bytes that arrive while its connection is not reading wait
    in the event loop. Handing them over once took time proportional to all that was
    still waiting, per read: quadratic in the input. Checked as a ratio, so that the
    check holds on a slow machine or under sanitizers: four times the input must take
    about four times as long (the quadratic hand-over took sixteen times, about 20 s for
    the full size on a 2-core machine)."""
    n = 800000
    quarter = _flood(server, n // 4)
    full = _flood(server, n)
    assert r.get("flood:999") in ("x" * 100, b"x" * 100)
    assert full < 8 * quarter + 1.0, "%.1fs for 4x the input of %.1fs" % (full, quarter)
    assert full < 90, "took %.1fs" % full
