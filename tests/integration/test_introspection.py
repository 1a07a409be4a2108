"""SLOWLOG, LATENCY and DEBUG. The target and a real redis-server (both with
enable-debug-command) get the same commands: the slow log keeps the same arguments
(truncated and redacted the same way), the same errors come back, and a DEBUG SLEEP shows
up in SLOWLOG and LATENCY on both. strata's own cases: commands run on another worker's
shard, and commands across shards, are logged with the client's address and name."""
import time

import pytest
import redis

from conftest import TARGET
from helpers import start_redis_server

DEBUG_ON = ["--enable-debug-command", "yes"]


@pytest.fixture(scope="module")
def servers():
    import conftest
    a = conftest.Server(extra_args=DEBUG_ON)
    b = start_redis_server(extra_args=DEBUG_ON)
    yield a, b
    a.stop()
    b.stop()


@pytest.fixture
def both(servers):
    cs = [s.client() for s in servers]
    for c in cs:
        c.response_callbacks.clear()
        c.flushall()
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        c.execute_command("CONFIG", "SET", "slowlog-max-len", "128")
        c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "0")
        c.execute_command("SLOWLOG", "RESET")
        c.execute_command("LATENCY", "RESET")
    yield cs
    for c in cs:
        c.close()


def run(c, *args):
    try:
        return c.execute_command(*args)
    except redis.ResponseError as e:
        return "ERR: " + str(e)


def same(both, *args):
    got, want = run(both[0], *args), run(both[1], *args)
    assert got == want, (args, got, want)
    return got


def entries(c):
    """The slow log's entries, newest first, without SLOWLOG's own: (args, addr, name)."""
    out = []
    for e in c.execute_command("SLOWLOG", "GET", "-1"):
        if e[3][0].lower() in (b"slowlog", b"config"):
            continue
        out.append((e[3], e[4], e[5]))
    return out


def test_slowlog_keeps_arguments_as_redis_does(both):
    for c in both:
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        c.execute_command("SET", "k", "v" * 200)  # 128 bytes kept, the rest counted
        c.execute_command("RPUSH", "l", *[str(i) for i in range(40)])  # 32 arguments kept
        c.execute_command("HSET", "h", "f", "v")
        try:
            c.execute_command("AUTH", "user", "secret")
        except redis.ResponseError:
            pass
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
        c.execute_command("GET", "k")  # not logged: -1 turns the log off
    a, b = (entries(c) for c in both)
    assert [e[0] for e in a] == [e[0] for e in b]
    got = [e[0] for e in a]
    assert got[0] == [b"AUTH", b"(redacted)", b"(redacted)"]
    assert got[2][-1] == b"... (11 more arguments)" and len(got[2]) == 32
    assert got[3][2].endswith(b"... (72 more bytes)")
    # The client's address is given, its name empty.
    assert all(e[1].startswith(b"127.0.0.1:") and e[2] == b"" for e in a)


def test_acl_setuser_is_redacted_in_the_slowlog(both):
    """ACL SETUSER's rules hold passwords: everything after SETUSER is redacted, the
    user's name included, as Redis does."""
    for c in both:
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        c.execute_command("ACL", "SETUSER", "zz", "on", ">secret", "+get")
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
        c.execute_command("ACL", "DELUSER", "zz")
    a, b = (entries(c) for c in both)
    assert a[0][0] == b[0][0] == [b"ACL", b"SETUSER"] + [b"(redacted)"] * 4


def test_slowlog_get_len_reset_and_max_len(both):
    for c in both:
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        for i in range(10):
            c.execute_command("SET", "k%d" % i, i)
        c.execute_command("CONFIG", "SET", "slowlog-max-len", "5")
    same(both, "SLOWLOG", "LEN")
    for c in both:
        got = c.execute_command("SLOWLOG", "GET", "3")
        assert len(got) == 3
        assert got[0][0] > got[1][0] > got[2][0]  # newest first, ids falling
        assert isinstance(got[0][1], int) and isinstance(got[0][2], int)
    assert len(both[0].execute_command("SLOWLOG", "GET")) == 5
    assert len(both[0].execute_command("SLOWLOG", "GET", "-1")) == 5
    for c in both:
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    same(both, "SLOWLOG", "RESET")
    same(both, "SLOWLOG", "LEN")
    same(both, "SLOWLOG", "GET")


@pytest.mark.parametrize("args", [
    ("SLOWLOG",), ("SLOWLOG", "GET", "-2"), ("SLOWLOG", "GET", "x"),
    ("SLOWLOG", "GET", "1", "2"), ("SLOWLOG", "LEN", "x"), ("SLOWLOG", "RESET", "x"),
    ("SLOWLOG", "NOSUCH"), ("SLOWLOG", "HELP"), ("SLOWLOG", "help", "x"),
    ("LATENCY",), ("LATENCY", "NOSUCH"), ("LATENCY", "HISTORY"), ("LATENCY", "HISTORY", "nosuch"),
    ("LATENCY", "LATEST", "x"), ("LATENCY", "GRAPH", "nosuch"), ("LATENCY", "DOCTOR"),
    ("LATENCY", "RESET"), ("LATENCY", "RESET", "a", "b"), ("LATENCY", "LATEST"),
    ("LATENCY", "HELP"), ("LATENCY", "HISTOGRAM", "nosuch"),
    ("DEBUG", "OBJECT", "nosuch"), ("DEBUG", "NOSUCH"), ("DEBUG", "SLEEP"),
    ("DEBUG", "DIGEST"), ("DEBUG", "DIGEST-VALUE", "nosuch"), ("DEBUG", "SLEEP", "0"),
    ("DEBUG", "CHANGE-REPL-ID"),
    ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
])
def test_replies_and_errors_match_redis(both, args):
    same(both, *args)


def test_debug_sleep_reaches_slowlog_and_latency(both):
    for c in both:
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "50000")
        c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "20")
        c.execute_command("CLIENT", "SETNAME", "sleeper")
        c.execute_command("GET", "fast")  # under both limits
        c.execute_command("DEBUG", "SLEEP", "0.1")
    for c in both:
        log = entries(c)
        assert [e[0] for e in log] == [[b"DEBUG", b"SLEEP", b"0.1"]]
        assert log[0][2] == b"sleeper"
        first = c.execute_command("SLOWLOG", "GET", "1")[0]
        assert 100000 <= first[2] < 5000000
        assert abs(first[1] - time.time()) < 30
        latest = c.execute_command("LATENCY", "LATEST")
        assert [e[0] for e in latest] == [b"command"]
        assert 100 <= latest[0][2] < 5000 and latest[0][3] == latest[0][2]
        hist = c.execute_command("LATENCY", "HISTORY", "command")
        assert len(hist) == 1 and hist[0][1] == latest[0][2]
        assert b"command" in c.execute_command("LATENCY", "GRAPH", "command")
        assert b"command" in c.execute_command("LATENCY", "DOCTOR")
        assert c.execute_command("LATENCY", "RESET", "command", "nosuch") == 1
        assert c.execute_command("LATENCY", "LATEST") == []


def test_debug_is_refused_by_default(server_factory, redis_reference):
    s = server_factory()
    for c in (s.client(), redis_reference.client()):
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("DEBUG", "SLEEP", "0")
        assert "DEBUG command not allowed" in str(e.value)
        assert "enable-debug-command" in str(e.value)


def test_debug_object_and_active_expire(both):
    for c in both:
        c.execute_command("SET", "n", "12345")
        c.execute_command("RPUSH", "l", "a", "b")
        for key in (b"n", b"l"):
            line = c.execute_command("DEBUG", "OBJECT", key)
            enc = c.execute_command("OBJECT", "ENCODING", key)
            assert b"encoding:" + enc in line and b"lru_seconds_idle:" in line
        # With active expiry off, expired keys stay counted until they are read.
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        for i in range(20):
            c.execute_command("SET", "e%d" % i, "x", "PX", "1")
        time.sleep(0.4)
        assert c.execute_command("DBSIZE") == 22
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        deadline = time.time() + 10
        while c.execute_command("DBSIZE") != 2 and time.time() < deadline:
            time.sleep(0.05)
        assert c.execute_command("DBSIZE") == 2


@pytest.mark.skipif(TARGET == "redis", reason="strata's digest and shards")
def test_digest_follows_the_data(server_factory):
    a = server_factory(threads=3, extra_args=DEBUG_ON).client()
    b = server_factory(threads=1, extra_args=DEBUG_ON).client()
    for c in (a, b):
        assert c.execute_command("DEBUG", "DIGEST") == b"0" * 40
        c.execute_command("SET", "s", "v")
        c.execute_command("HSET", "h", "f1", "1", "f2", "2")
        c.execute_command("ZADD", "z", 1, "a", 2, "b")
        c.execute_command("SADD", "set", *range(300))
        c.execute_command("SELECT", 3)
        c.execute_command("RPUSH", "l", "x", "y")
        c.execute_command("SELECT", 0)
    assert a.execute_command("DEBUG", "DIGEST") == b.execute_command("DEBUG", "DIGEST")
    assert (a.execute_command("DEBUG", "DIGEST-VALUE", "s", "h", "missing") ==
            b.execute_command("DEBUG", "DIGEST-VALUE", "s", "h", "missing"))
    before = a.execute_command("DEBUG", "DIGEST")
    a.execute_command("EXPIRE", "s", 1000)  # an expiry counts
    assert a.execute_command("DEBUG", "DIGEST") != before
    a.execute_command("PERSIST", "s")
    assert a.execute_command("DEBUG", "DIGEST") == before
    a.execute_command("HSET", "h", "f1", "changed")
    assert a.execute_command("DEBUG", "DIGEST") != before
    assert a.execute_command("DEBUG", "DIGEST-VALUE", "missing") == [b"0" * 40]
    # Redis 7.2's fuzz test of the glob matcher (7.0 lacks it).
    assert a.execute_command("DEBUG", "STRINGMATCH-LEN") == b"Apparently Redis did not crash: test passed"


@pytest.mark.skipif(TARGET == "redis", reason="strata's digest")
def test_digest_leaves_out_a_consumers_clock(server_factory):
    """A consumer's seen and active times come from the clock of the server that applied
    the read (a replica's differs from its master's): the digest leaves them out, and
    keeps everything else of the group."""
    c = server_factory(extra_args=DEBUG_ON).client()
    c.xadd("s", {"f": "v"}, id="1-0")
    c.xgroup_create("s", "g", id="0")
    c.xreadgroup("g", "alice", {"s": ">"})
    before = c.execute_command("DEBUG", "DIGEST")
    time.sleep(0.05)
    assert c.xreadgroup("g", "alice", {"s": ">"}) == []  # seen again, nothing else
    assert c.execute_command("DEBUG", "DIGEST") == before
    c.xack("s", "g", "1-0")  # the PEL counts
    assert c.execute_command("DEBUG", "DIGEST") != before


@pytest.mark.skipif(TARGET == "redis", reason="strata's shards")
def test_commands_on_other_shards_are_logged_with_their_client(server_factory):
    c = server_factory(threads=3).client()
    c.response_callbacks.clear()
    c.execute_command("CLIENT", "SETNAME", "far")
    c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    keys = ["key:%d" % i for i in range(12)]  # spread over the three shards
    for k in keys:
        c.execute_command("SET", k, "v")
    c.execute_command("MSET", *sum(([k, "w"] for k in keys), []))  # across shards: a fiber
    pipe = c.pipeline(transaction=True)
    for k in keys[:4]:
        pipe.get(k)
    pipe.execute()
    c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    log = entries(c)
    names = {e[2] for e in log}
    assert names == {b"far"}, log
    logged = [e[0] for e in log]
    for k in keys:
        assert [b"SET", k.encode(), b"v"] in logged
    assert any(e[0] == b"MSET" for e in logged)
    assert sum(1 for e in logged if e[0] == b"GET") == 4  # EXEC's commands, not EXEC
    assert not any(e[0] == b"EXEC" for e in logged)
    # INFO commandstats now times commands across shards too.
    stats = redis.Redis(port=c.connection_pool.connection_kwargs["port"]).info("commandstats")
    assert stats["cmdstat_mset"]["calls"] == 1 and stats["cmdstat_mset"]["usec"] > 0


def monitor_lines(conn, n, timeout=10):
    """The next n lines of a MONITOR feed, without their timestamps: '[db addr] args'."""
    out = []
    deadline = time.time() + timeout
    while len(out) < n and time.time() < deadline:
        line = conn.read_reply()
        assert line.startswith(b"+") and line.endswith(b"\r\n"), line
        stamp, rest = line[1:-2].split(b" ", 1)
        assert float(stamp) > 0
        out.append(rest)
    return out


def test_monitor_shows_what_redis_shows(servers):
    from conftest import RawConnection
    from helpers import resp
    got = []
    for s in servers:
        mon = RawConnection(s.port)
        mon.send(resp("MONITOR"))
        assert mon.read_reply() == b"+OK\r\n"
        c = s.client()
        c.execute_command("SET", "k", 'a "quoted"\n\x01 value')
        c.execute_command("GET", "k")
        c.execute_command("HSET", "h", "f", "v")
        c.execute_command("SELECT", "2")
        c.execute_command("GET", "k")
        try:
            c.execute_command("AUTH", "user", "secret")
        except redis.ResponseError:
            pass
        c.execute_command("CONFIG", "GET", "port")  # admin: not shown
        c.execute_command("DBSIZE")
        addr = c.client_info()["addr"].encode()
        lines = monitor_lines(mon, 7)
        got.append([ln.replace(addr, b"ADDR") for ln in lines])
        mon.close()
        c.close()
    assert got[0] == got[1]
    assert got[0][0] == b'[0 ADDR] "SET" "k" "a \\"quoted\\"\\n\\x01 value"'


@pytest.mark.parametrize("threads", [2, 3])
def test_monitor_keeps_the_order_a_client_sent_in_across_workers(server_factory, threads):
    """A command sent after another one's reply shows after it, wherever each ran: a GET
    of a key on another worker, then a command run on the client's own worker."""
    from conftest import RawConnection
    from helpers import keys_on_distinct_shards, resp
    s = server_factory(threads=threads)
    mon = RawConnection(s.port)
    mon.send(resp("MONITOR"))
    assert mon.read_reply() == b"+OK\r\n"
    clients = [s.client() for _ in range(threads)]  # dealt to the workers
    keys = keys_on_distinct_shards(clients[0], threads, "mo") if TARGET == "strata" \
        else ["a", "b", "c"][:threads]
    # The probes of keys_on_distinct_shards show in the feed too: a marker ends them.
    clients[0].execute_command("ECHO", "start")
    while True:
        line = mon.read_reply()
        if line.endswith(b'"ECHO" "start"\r\n'):
            break
    sent = {}
    rounds = 300 // threads
    for r in range(rounds):
        for n, c in enumerate(clients):
            for k in keys:
                c.execute_command("GET", k)
                c.execute_command("ECHO", "%d-%d-%s" % (r, n, k))
                sent.setdefault(n, []).extend([b'"GET" "%s"' % k.encode(),
                                               b'"ECHO" "%d-%d-%s"' % (r, n, k.encode())])
    addrs = {c.client_info()["addr"].encode(): n for n, c in enumerate(clients)}
    lines = monitor_lines(mon, sum(len(v) for v in sent.values()))
    seen = {n: [] for n in sent}
    for ln in lines:
        head, args = ln.split(b"] ", 1)
        seen[addrs[head.split(b" ")[1]]].append(args)
    for n in sent:
        assert seen[n] == sent[n]
    mon.close()
    for c in clients:
        c.close()


@pytest.mark.skipif(TARGET == "redis", reason="strata's workers")
def test_monitor_order_under_pipelined_traffic_on_several_workers(server_factory):
    from conftest import RawConnection
    from helpers import resp
    s = server_factory(threads=3)
    mon = RawConnection(s.port)
    mon.send(resp("MONITOR"))
    assert mon.read_reply() == b"+OK\r\n"
    clients = [s.client() for _ in range(3)]  # dealt to the three workers
    keys = ["key:%d" % i for i in range(9)]   # spread over the three shards
    rounds = 40
    for r in range(rounds):
        for n, c in enumerate(clients):
            p = c.pipeline(transaction=False)
            for k in keys:
                p.execute_command("SET", "%s:%d" % (k, n), r)
            p.execute()
    total = rounds * len(keys) * len(clients)
    lines = monitor_lines(mon, total, timeout=30)
    assert len(lines) == total
    # Every key's writes show in the order they ran: 0, 1, 2, ...
    seen = {}
    for ln in lines:
        args = ln.split(b"] ", 1)[1].split(b" ")
        key, value = args[1], int(args[2].strip(b'"'))
        assert seen.get(key, -1) == value - 1, (key, value)
        seen[key] = value
    assert len(seen) == len(keys) * len(clients)
    # RESET ends monitoring: the feed stops, the connection stays.
    mon.send(resp("RESET"))
    while mon.read_reply() != b"+RESET\r\n":
        pass
    clients[0].execute_command("SET", "after", "reset")
    mon.send(resp("PING"))
    assert mon.read_reply() == b"+PONG\r\n"


@pytest.mark.skipif(TARGET == "redis", reason="strata bounds a monitor like a subscriber")
def test_a_monitor_that_does_not_read_is_closed_past_its_limit(server_factory):
    import socket
    from conftest import RawConnection
    from helpers import resp
    s = server_factory(threads=2, extra_args=["--client-output-buffer-limit",
                                              "pubsub 256kb 0 0"])
    mon = RawConnection(s.port)
    mon.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    mon.send(resp("MONITOR"))
    assert mon.read_reply() == b"+OK\r\n"
    c = s.client()
    value = "v" * 1000
    deadline = time.time() + 20
    closed = False
    while time.time() < deadline and not closed:
        p = c.pipeline(transaction=False)
        for i in range(500):
            p.set("k%d" % i, value)
        p.execute()
        clients = c.execute_command("CLIENT", "LIST")
        closed = clients.count(b"cmd=") == 1  # only this one is left
    assert closed
    info = c.info("stats")
    assert info["client_output_buffer_limit_disconnections"] >= 1
    mon.close()


def latencystats(c):
    text = c.execute_command("INFO", "latencystats").decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("latency_percentiles_usec_"):
            name, values = line[len("latency_percentiles_usec_"):].split(":")
            out[name] = dict(kv.split("=") for kv in values.split(","))
    return out


def test_latency_tracking_info_and_histogram(both):
    for c in both:
        c.execute_command("CONFIG", "RESETSTAT")
        for i in range(100):
            c.execute_command("SET", "k%d" % i, "v")
        for i in range(40):
            c.execute_command("GET", "k%d" % i)
    got = [latencystats(c) for c in both]
    for stats in got:
        for cmd in ("set", "get"):
            p = stats[cmd]
            assert list(p) == ["p50", "p99", "p99.9"]
            vals = [float(p[k]) for k in ("p50", "p99", "p99.9")]
            assert 0 < vals[0] <= vals[1] <= vals[2]
            assert all(len(p[k].split(".")[1]) == 3 for k in p)  # %.3f
    for c in both:
        h = c.execute_command("LATENCY", "HISTOGRAM", "set", "nosuch", "get")
        h = dict(zip(h[0::2], h[1::2]))
        assert set(h) == {b"set", b"get"}
        for name, calls in ((b"set", 100), (b"get", 40)):
            fields = dict(zip(h[name][0::2], h[name][1::2]))
            assert fields[b"calls"] == calls
            buckets = fields[b"histogram_usec"]
            bounds, counts = buckets[0::2], buckets[1::2]
            assert bounds == sorted(bounds) and counts == sorted(counts)
            assert counts[-1] == calls
            assert all(b in (1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454,
                             16908, 33816, 67633, 135266, 270532, 541065, 1073741)
                       for b in bounds)
        # Other percentiles, then no tracking: no new runs counted.
        c.execute_command("CONFIG", "SET", "latency-tracking-info-percentiles", "50 90")
        c.execute_command("CONFIG", "SET", "latency-tracking", "no")
        c.execute_command("GET", "k1")
        c.execute_command("CONFIG", "SET", "latency-tracking", "yes")
    got = [latencystats(c) for c in both]
    for stats in got:
        assert list(stats["get"]) == ["p50", "p90"]
    for c in both:
        h = c.execute_command("LATENCY", "HISTOGRAM", "get")
        assert dict(zip(h[1][0::2], h[1][1::2]))[b"calls"] == 40
        c.execute_command("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
        c.execute_command("CONFIG", "RESETSTAT")
        assert "set" not in latencystats(c)
        with pytest.raises(redis.ResponseError):
            c.execute_command("CONFIG", "SET", "latency-tracking-info-percentiles", "50 101")


def test_debug_quicklist_packed_threshold_and_listpack(both):
    for c in both:
        assert c.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100b") == b"OK"
    try:
        for c in both:
            c.execute_command("CONFIG", "SET", "list-max-listpack-size", "4")
        # Big elements get nodes of their own; the list reads the same.
        for args in [("RPUSH", "l", "a", "b", "x" * 150, "c", "y" * 300, "d", "e", "f"),
                     ("LPUSH", "l", "z" * 120, "q"), ("LRANGE", "l", 0, -1),
                     ("LINDEX", "l", 3), ("LSET", "l", 3, "small"), ("LRANGE", "l", 0, -1),
                     ("LPOP", "l", 3), ("RPOP", "l", 2), ("LRANGE", "l", 0, -1),
                     ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"),
                     ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "x"),
                     ("DEBUG", "LISTPACK", "nosuch")]:
            same(both, *args)
        for c in both:
            c.execute_command("HSET", "h", "f", "v")
            assert c.execute_command("DEBUG", "LISTPACK", "h") == b"Listpack structure printed on stdout"
            c.execute_command("SET", "s", "v")
            with pytest.raises(redis.ResponseError, match="Not a listpack encoded object"):
                c.execute_command("DEBUG", "LISTPACK", "s")
    finally:
        for c in both:
            c.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0")
            c.execute_command("CONFIG", "SET", "list-max-listpack-size", "-2")
