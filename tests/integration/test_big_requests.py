"""Big requests cost time linear in their size: one request of a million key/value
pairs, a million hash fields or four million arguments is answered within a generous
bound (each took minutes, or never finished, when a path was quadratic: grouping keys by
shard, inserting hash fields, resuming the parser on every read, matching repeated keys).
bench/complexity.py measures the same paths against redis-server.

Against a sanitizer build (STRATA_SANITIZED=1) the sizes are a quarter: the same paths
run, for memory errors, while the release pass holds the full sizes to their bounds."""
import os
import socket
import time

# Generous for a loaded 2-core machine and the sanitizer build; the quadratic paths took
# minutes at these sizes.
BOUND_S = 60
SCALE = 4 if os.environ.get("STRATA_SANITIZED") == "1" else 1
M = 1000000 // SCALE  # "a million"


def request(args):
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


def timed(server, payload, timeout=BOUND_S * 3):
    """Sends payload and reads one reply line (plus the bulk or array that follows it is
    not needed); returns (first reply line, seconds)."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    try:
        start = time.monotonic()
        s.sendall(payload)
        buf = b""
        while b"\r\n" not in buf:
            chunk = s.recv(1 << 20)
            assert chunk, "connection closed"
            buf += chunk
        return buf.split(b"\r\n", 1)[0], time.monotonic() - start
    finally:
        s.close()


def keys(n, prefix=b"k:"):
    return [prefix + b"%d" % i for i in range(n)]


def check(line, elapsed, want):
    assert line == want, line[:200]
    assert elapsed < BOUND_S, "took %.1fs" % elapsed


def test_mset_of_a_million_pairs(server, r):
    args = [b"MSET"]
    for k in keys(M):
        args += [k, b"v"]
    line, elapsed = timed(server, request(args))
    check(line, elapsed, b"+OK")
    assert r.dbsize() == M
    assert r.get("k:%d" % (M - 1)) == "v"


def test_mget_del_exists_of_a_million_keys(server, r):
    ks = keys(M)
    args = [b"MSET"]
    for k in ks:
        args += [k, b"1"]
    line, _ = timed(server, request(args))
    assert line == b"+OK"
    line, elapsed = timed(server, request([b"EXISTS"] + ks))
    check(line, elapsed, b":%d" % M)
    line, elapsed = timed(server, request([b"MGET"] + ks))
    check(line, elapsed, b"*%d" % M)
    line, elapsed = timed(server, request([b"DEL"] + ks + ks[:1000]))
    check(line, elapsed, b":%d" % M)
    assert r.dbsize() == 0


def test_hset_of_a_million_fields(server, r):
    args = [b"HSET", b"h"]
    for f in keys(M, b"f:"):
        args += [f, b"v"]
    line, elapsed = timed(server, request(args))
    check(line, elapsed, b":%d" % M)
    assert r.hlen("h") == M
    assert r.object("encoding", "h") == "hashtable"


def test_a_request_of_four_million_arguments(server, r):
    # Rescanning the request from its start on every read took about 35 s here; linear
    # parsing takes a few (a tighter bound than the others, to tell the two apart).
    n = 4 * M - 2
    line, elapsed = timed(server, request([b"RPUSH", b"l"] + keys(n, b"e")))
    assert line == b":%d" % n
    assert elapsed < 20, "took %.1fs" % elapsed
    assert r.llen("l") == n
    assert r.lindex("l", -1) == "e%d" % (n - 1)


def test_set_union_over_many_keys_with_repeats(server, r):
    ks = keys(M // 5, b"s:")
    for i in range(0, len(ks), 5000):
        pipe = r.pipeline(transaction=False)
        for k in ks[i:i + 5000]:
            pipe.sadd(k, "a", "b")
        pipe.execute()
    line, elapsed = timed(server, request([b"SUNIONSTORE", b"dst"] + ks + ks))
    check(line, elapsed, b":2")
    line, elapsed = timed(server, request([b"SINTER"] + ks + ks))
    check(line, elapsed, b"*2")


def test_lpos_with_maxlen_scans_only_maxlen(server, r):
    line, _ = timed(server, request([b"RPUSH", b"l"] + keys(2 * M, b"e")))
    assert line == b":%d" % (2 * M)
    # Near the end of a 2M list, outside MAXLEN from the head: not found, and each call
    # looks at 10 elements, not 2M (a thousand calls took minutes when LPOS copied the
    # whole list first).
    pipe = r.pipeline(transaction=False)
    for _ in range(1000):
        pipe.execute_command("LPOS", "l", "e%d" % (2 * M - 1), "MAXLEN", "10")
    start = time.monotonic()
    assert pipe.execute() == [None] * 1000
    assert time.monotonic() - start < BOUND_S
    assert r.execute_command("LPOS", "l", "e%d" % (2 * M - 1), "RANK", "-1") == 2 * M - 1
    assert r.execute_command("LPOS", "l", "e5", "RANK", "-1", "MAXLEN", "10") is None
