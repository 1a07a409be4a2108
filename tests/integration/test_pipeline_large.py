"""Large pipelined input: a client that sends megabytes of requests in one write gets
every reply, in order, promptly. (The event-loop side of this, input left waiting until
the next I/O event, is pinned down by tests/unit/server/event_loop_test.cc.)"""
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
