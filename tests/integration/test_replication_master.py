"""The target as a replication MASTER, with real redis-server processes as its replicas
(`--replicaof`): the full sync (diskless and through a file) of every type, the command
stream after it (effects, not commands, for what is random or time-dependent), writes
running throughout the sync, expiry reaching the replica, partial resync after a dropped
link, WAIT, INFO replication / ROLE / CLIENT LIST TYPE replica, a replica killed mid-way
and two replicas at once. With STRATA_TEST_TARGET=redis the master is a redis-server too:
the same tests."""
import socket
import threading
import time

import pytest
import redis

import helpers
from conftest import TARGET, RawConnection
from helpers import call, parse_client_line, read_entries, replica_synced as synced
from helpers import start_redis_server

WAIT_S = 30.0


def wait_for(pred, timeout=WAIT_S, what="condition"):
    return helpers.wait_for(pred, timeout, what)


@pytest.fixture
def master(server_factory):
    # Redis 7 waits repl-diskless-sync-delay (5 s) before a diskless sync; 0 starts it at
    # once (strata accepts the option and always starts at once).
    return server_factory(extra_args=["--repl-diskless-sync-delay", "0"])


@pytest.fixture
def replicas(master):
    """start(m=master, *extra): a redis-server replica of m; all stopped at the end."""
    started = []

    def start(m=None, *extra):
        m = m or master
        r = start_redis_server(extra_args=["--replicaof", "127.0.0.1 %d" % m.port] +
                               list(extra))
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


def info(server, section="replication"):
    """INFO section of a server, on a connection of its own (closed after)."""
    c = server.client()
    try:
        return c.info(section)
    finally:
        c.close()


def wait_synced(m, r, what="the sync"):
    try:
        wait_for(lambda: synced(m, r), what=what)
    except AssertionError:
        mi, ri = info(m), info(r)
        raise AssertionError("timed out waiting for %s: master %s / replica %s" % (
            what, {k: v for k, v in mi.items() if "offset" in k or "slave" in k},
            {k: v for k, v in ri.items() if "offset" in k or "link" in k or "sync" in k})
        ) from None


def wait_link_up(r):
    try:
        wait_for(lambda: info(r).get("master_link_status") == "up", what="the link")
    except AssertionError:
        tail = r.read_log().strip().split("\n")[-3:]
        raise AssertionError("timed out waiting for the replica's link to come up; its log "
                             "ends with %r" % tail) from None


def image(server, dbs=(0, 1)):
    """Every key of the dbs: (db, key) -> (type, value, whether a TTL is set)."""
    out = {}
    for db in dbs:
        c = server.client(db=db)
        keys = list(c.scan_iter(count=1000))
        for key, (kind, value, ttl) in zip(keys, read_entries(c, keys)):
            if kind == "stream":
                info = c.xinfo_stream(key)
                value = (c.xrange(key), info["last-generated-id"])
            out[(db, key)] = (kind, value, ttl > 0)
        c.close()
    return out


def assert_same_image(m, r):
    want, got = image(m), image(r)
    if got != want:
        missing = sorted(set(want) - set(got))[:10]
        extra = sorted(set(got) - set(want))[:10]
        differ = [k for k in want if k in got and want[k] != got[k]][:5]
        raise AssertionError(
            "replica's image differs: %d keys on the master, %d on the replica; missing %r; "
            "extra %r; differing %s" % (len(want), len(got), missing, extra,
                                        "; ".join(describe(k, want[k], got[k])
                                                  for k in differ)))


def describe(key, want, got):
    """A short account of how one key differs (the master's value vs the replica's)."""
    if want[0] != got[0] or want[2] != got[2] or not isinstance(want[1], list):
        def short(v):
            text = repr(v)
            return text if len(text) < 120 else text[:120] + "..."
        return "%r: master %s, replica %s" % (key, short(want), short(got))
    a = [repr(x) for x in want[1]]
    b = [repr(x) for x in got[1]]
    only_m = [x for x in a if x not in set(b)][:5]
    only_r = [x for x in b if x not in set(a)][:5]
    return "%r (%s, %d vs %d items): only on the master %s, only on the replica %s" % (
        key, want[0], len(a), len(b), only_m, only_r)


def assert_ttls_close(m, r, dbs=(0, 1), slack_ms=2000):
    """Every key with a TTL on the master has about the same PTTL on the replica (relative
    expiries travel as absolute times)."""
    checked = 0
    for db in dbs:
        mc, rc = m.client(db=db), r.client(db=db)
        for key in mc.scan_iter(count=1000):
            mt = mc.pttl(key)
            if mt <= 0:
                continue
            rt = rc.pttl(key)
            assert abs(rt - mt) <= slack_ms, (db, key, mt, rt)
            checked += 1
    return checked


def fill(c, n=2000):
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set("s%d" % i, "v%d" % i)
    for i in range(100):
        pipe.set("n%d" % i, i)
    pipe.execute()
    c.set("ttl", "x", ex=1000)
    c.set("ttl-int", 7, px=900000)
    c.rpush("list", *range(300))
    c.hset("hash", mapping={"f%d" % i: i for i in range(200)})
    c.hset("small-hash", mapping={"a": "1", "b": "2"})
    c.sadd("intset", *range(100))
    c.sadd("set", *["m%d" % i for i in range(300)])
    c.zadd("zset", {"z%d" % i: i * 1.5 for i in range(200)})
    c.zadd("small-zset", {"a": 1, "b": 2.5})
    pipe = c.pipeline(transaction=False)
    for i in range(500):
        pipe.xadd("stream", {"a": str(i)})
    pipe.execute()
    c.pfadd("hll", *range(100))
    kw = c.connection_pool.connection_kwargs
    d1 = redis.Redis(host=kw["host"], port=kw["port"], db=1, socket_timeout=10)
    d1.set("db1", "yes")
    d1.rpush("db1-list", "a", "b")
    d1.set("db1-ttl", "t", ex=2000)
    d1.close()


# ---------------------------------------------------------------- 1. full sync, stream

@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_full_sync_of_every_type_then_the_stream(master, replicas, diskless):
    mc = master.client()
    mc.config_set("repl-diskless-sync", diskless)
    fill(mc)
    r = replicas()
    wait_synced(master, r, "the first sync")
    assert_same_image(master, r)
    assert assert_ttls_close(master, r) == 3

    # The stream: every kind of write.
    m1 = master.client(db=1)
    assert mc.incr("counter") == 1
    assert mc.incr("n1") == 2
    assert mc.delete("s1") == 1
    assert mc.expire("s2", 500)
    assert mc.set("ex1", "v", ex=300)
    assert mc.setex("ex2", 300, "v")
    assert mc.execute_command("GETEX", "s3", "EX", "400") == b"v3"
    assert mc.execute_command("GETDEL", "s4") == b"v4"
    mc.incrbyfloat("fl", 1.5)
    mc.incrbyfloat("fl", 0.25)
    mc.set("fl-ttl", "1", ex=700)
    mc.incrbyfloat("fl-ttl", 2.5)  # keeps its TTL
    mc.hincrbyfloat("hash", "fx", 2.5)
    mc.hincrbyfloat("hash", "fx", 0.1)
    mc.lpush("list", "new")
    mc.rpop("list")
    mc.execute_command("LMOVE", "list", "list2", "LEFT", "RIGHT")
    mc.execute_command("LMOVE", "list", "list2", "RIGHT", "LEFT")
    mc.hset("hash", "f0", "changed")
    mc.hdel("hash", "f1")
    assert mc.srem("set", "m1") == 1
    popped = [mc.spop("set")] + mc.spop("set", 3) + [mc.spop("intset")]
    assert len(set(popped)) == 5 and None not in popped
    mc.zincrby("zset", 10, "z1")
    mc.zpopmin("zset")
    mc.zpopmin("zset", 2)
    mc.xadd("stream", {"b": "2"})
    mc.execute_command("XTRIM", "stream", "MAXLEN", "~", "100")
    assert mc.xlen("stream") < 501
    mc.xadd("stream", {"c": "3"})
    mc.pfadd("hll", "a", "b", "c")
    mc.append("s5", "-more")
    mc.setrange("s6", 1, "XYZ")
    with mc.pipeline(transaction=True) as p:
        p.set("tx1", "a")
        p.incrby("counter", 5)
        p.spop("set")
        p.expire("tx1", 800)
        p.execute()
    assert mc.eval("redis.call('SET', KEYS[1], ARGV[1]); return 1", 1, "scripted", "yes") == 1
    spopped = mc.eval("return redis.call('SPOP', KEYS[1])", 1, "set")
    assert spopped is not None
    popped.append(spopped)
    mc.eval("local t = redis.call('TIME'); "
            "redis.call('SET', KEYS[1], t[1] .. '.' .. t[2]); "
            "redis.call('PEXPIRE', KEYS[1], 600000); return 1", 1, "timed")
    m1.set("db1-later", "1")
    m1.incr("db1-counter")
    m1.hset("db1-hash", "f", "v")
    m1.expire("db1", 900)
    # Keys in many shards at once.
    mc.mset({"multi%d" % i: i for i in range(200)})
    assert mc.delete(*["multi%d" % i for i in range(0, 200, 2)]) == 100
    mc.delete(*["s%d" % i for i in range(100, 300)])
    mc.rename("s7", "s7-renamed")
    mc.rename("list2", "list2-renamed")
    mc.sunionstore("union", "set", "intset", "nosuch")
    mc.execute_command("COPY", "hash", "hash-copy")
    mc.execute_command("COPY", "s8", "s8-copy", "DB", "1")
    mc.execute_command("COPY", "zset", "zset-copy")
    wait_synced(master, r, "the stream")
    assert_same_image(master, r)
    rc = r.client()
    for member in popped:
        assert not rc.sismember("set", member) and not rc.sismember("intset", member), member
    assert rc.get("timed") == mc.get("timed")
    assert assert_ttls_close(master, r) >= 10

    # FLUSHDB empties db 0 only; the writes after it arrive.
    mc.flushdb()
    mc.set("after-flush", "1")
    m1.set("db1-after-flush", "1")
    wait_synced(master, r, "the flush")
    assert_same_image(master, r)
    assert rc.dbsize() == 1
    assert r.client(db=1).get("db1-after-flush") == b"1"


# ---------------------------------------------------------------- 2. writes during sync

@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_writes_throughout_the_sync(master, replicas, diskless):
    mc = master.client()
    mc.config_set("repl-diskless-sync", diskless)
    fill(mc, 20000)
    stop = threading.Event()
    errors = []
    written = [0]

    def writer():
        w = master.client()
        i = 0
        try:
            while not stop.is_set():
                w.set("live%d" % (i % 500), i)
                w.incr("live-counter")
                i += 1
        except Exception as e:  # reported by the test, not lost in the thread
            errors.append(e)
        written[0] = i

    t = threading.Thread(target=writer)
    t.start()
    try:
        time.sleep(0.1)
        r = replicas()
        wait_link_up(r)
        time.sleep(0.5)
    finally:
        stop.set()
        t.join(10)
    assert not errors, errors
    assert written[0] > 0
    wait_synced(master, r, "catch-up")
    assert_same_image(master, r)
    assert int(r.client().get("live-counter")) == written[0]


# ---------------------------------------------------------------- 3. expiry

def keyspace(c, db=0):
    return c.info("keyspace").get("db%d" % db, {"keys": 0, "expires": 0})


@pytest.mark.parametrize("how", ["active", "lazy"])
def test_expiry_on_the_master_reaches_the_replica(master, replicas, how):
    mc = master.client()
    mc.set("keep", "1")
    r = replicas()
    wait_synced(master, r)
    rc = r.client()
    mc.set("k", "v", px=200)
    wait_synced(master, r, "the SET")
    # A Redis replica hides a logically expired key from reads but keeps it (and counts
    # it) until the master's DEL arrives.
    if how == "active":
        # Never touched on the master: its own expiry cycle must remove it.
        wait_for(lambda: mc.dbsize() == 1, what="the master's active expiry")
    else:
        time.sleep(0.3)
        assert mc.get("k") is None
        assert mc.exists("k") == 0
    wait_for(lambda: rc.dbsize() == 1, what="the replica's DBSIZE to drop to 1")
    ks = keyspace(rc)
    assert ks["keys"] == 1 and ks["expires"] == 0, ks
    assert [k for k in rc.scan_iter()] == [b"keep"]
    wait_synced(master, r, "the DEL")
    assert rc.dbsize() == 1


def test_pfcount_filling_the_cached_count_reaches_the_replica(master, replicas):
    """PFCOUNT of one key writes the count into the HLL's header. It is a read, but it
    changes the value's bytes, so it is sent to replicas (its may_replicate flag)."""
    mc = master.client()
    r = replicas()
    wait_synced(master, r)
    mc.pfadd("h", *["e%d" % i for i in range(50)])
    wait_synced(master, r, "the PFADD")
    rc = r.client()
    before = rc.get("h")
    assert before == mc.get("h")
    assert mc.pfcount("h") in range(45, 56)
    assert mc.get("h") != before  # the cached count is now valid
    wait_synced(master, r, "the PFCOUNT")
    assert rc.get("h") == mc.get("h")


class StreamReader(RawConnection):
    """A bare replica on a socket: PSYNC ? -1, the image skipped, then the command stream
    parsed strictly (each length canonical, CRLF after each bulk): a stream any replica
    or tool can read."""

    def __init__(self, port):
        super().__init__(port, timeout=10)
        self.send(b"PSYNC ? -1\r\n")
        assert self.read_line().startswith(b"+FULLRESYNC")
        # Newlines keep the link alive while the image is prepared.
        head = self.read_line().lstrip(b"\n")
        assert head.startswith(b"$"), head
        if head.startswith(b"$EOF:"):
            mark = head[5:]
            while mark not in self.buf:
                self._fill()
            self.buf = self.buf[self.buf.index(mark) + len(mark):]
        else:
            self.take(int(head[1:]))

    def take(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def canonical_number(self, prefix):
        line = self.read_line()
        assert line[:1] == prefix and line[1:] == str(int(line[1:])).encode(), line
        return int(line[1:])

    def command(self):
        args = []
        for _ in range(self.canonical_number(b"*")):
            args.append(self.take(self.canonical_number(b"$")))
            assert self.take(2) == b"\r\n", "a bulk not followed by CRLF in the stream"
        return args

    def commands(self, n):
        """The next n commands, less the stream's own (PING, SELECT, REPLCONF)."""
        out = []
        while len(out) < n:
            c = self.command()
            if c[0].upper() not in (b"PING", b"SELECT", b"REPLCONF"):
                out.append(c)
        return out

    def records(self, n):
        """The next n records, less the stream's own commands: ("multi", [commands]) for
        a MULTI ... EXEC block (its SELECTs left out), ("one", command) otherwise."""
        out = []
        while len(out) < n:
            c = self.command()
            name = c[0].upper()
            if name in (b"PING", b"SELECT", b"REPLCONF"):
                continue
            if name != b"MULTI":
                out.append(("one", c))
                continue
            block = []
            while True:
                c = self.command()
                if c[0].upper() == b"EXEC":
                    break
                if c[0].upper() != b"SELECT":
                    block.append(c)
            out.append(("multi", block))
        return out


@pytest.mark.parametrize("threads", [1, None], ids=["one-thread", "default-threads"])
def test_requests_in_any_accepted_encoding_reach_the_replica_intact(server_factory, replicas,
                                                                   threads):
    """A write goes to replicas as canonical RESP, and as the client's arguments, whatever
    form the client sent it in: a canonical multibulk (strata copies it as it came), a
    lowercase name, bulks followed by bytes other than CRLF (which Redis accepts and does
    not check), an inline command, a request cut across several sends, a large value.
    With one thread every write runs on the client's own shard, where strata copies the
    client's bytes; with more, some run on other shards."""
    master = server_factory(extra_args=["--repl-diskless-sync-delay", "0"], threads=threads)
    r = replicas(master)
    wait_synced(master, r)
    reader = StreamReader(master.port)
    big = b"b" * 100000
    requests = [
        b"*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n",
        b"*3\r\n$3\r\nset\r\n$2\r\nk2\r\n$2\r\nv2\r\n",
        b"*3\r\n$3\r\nSETXY$2\r\nk3\n\n$2\r\nv3AB",
        b'SET k4 "v 4"\r\n',
        b"*3\r\n$3\r\nSET\r\n$2\r\nk5\r\n$6\r\nv\r\n5\r\n\r\n",
        b"*4\r\n$5\r\nRPUSH\r\n$2\r\nk6\r\n$1\r\na\r\n$1\r\nb\r\n",
        b"*3\r\n$3\r\nSET\r\n$2\r\nk7\r\n$100000\r\n" + big + b"\r\n",
    ]
    sent = [[b"SET", b"k1", b"v1"], [b"set", b"k2", b"v2"], [b"SET", b"k3", b"v3"],
            [b"SET", b"k4", b"v 4"], [b"SET", b"k5", b"v\r\n5\r\n"],
            [b"RPUSH", b"k6", b"a", b"b"], [b"SET", b"k7", big]]
    try:
        with socket.create_connection(("127.0.0.1", master.port), timeout=10) as s:
            stream = b"".join(requests)
            # Pipelined, and cut at awkward places: inside a length line, inside a bulk.
            for part in (stream[:5], stream[5:23], stream[23:60], stream[60:1000],
                         stream[1000:]):
                s.sendall(part)
                time.sleep(0.02)
            replies = b""
            while replies.count(b"\r\n") < len(requests):
                chunk = s.recv(65536)
                assert chunk, "the master closed the connection"
                replies += chunk
        assert replies == b"+OK\r\n" * 5 + b":2\r\n" + b"+OK\r\n", replies
        # Writes to keys of different shards may run, and so reach the stream, in another
        # order than the client sent them (each key's own order holds).
        assert sorted(reader.commands(len(sent))) == sorted(sent)
    finally:
        reader.close()
    master.client().set("last", "1")
    wait_synced(master, r, "the writes")
    rc = r.client()
    for args in sent:
        if args[0] != b"RPUSH":
            assert rc.get(args[1]) == args[2], args[1]
    assert rc.lrange("k6", 0, -1) == [b"a", b"b"]
    assert_same_image(master, r)
    assert info(r).get("master_link_status") == "up"


@pytest.mark.parametrize("kind", ["exec", "exec-multi-shard", "script"])
def test_a_transaction_or_script_across_shards_is_one_block_in_the_stream(server_factory,
                                                                        replicas, kind):
    """A transaction or a script whose keys are on several shards reaches replicas as one
    MULTI ... EXEC block, in the order its commands ran, so a replica (or a master that
    dies mid-way) never holds half of it. The script's MSET over two shards is a command
    with steps of its own on each, and so is the transaction's MSET over every shard."""
    master = server_factory(extra_args=["--repl-diskless-sync-delay", "0"], threads=3)
    r = replicas(master)
    wait_synced(master, r)
    reader = StreamReader(master.port)
    keys = ["k%d" % i for i in range(8)]  # on every shard
    c = master.client()
    try:
        if kind == "exec":
            p = c.pipeline(transaction=True)
            for k in keys:
                p.set(k, "v")
            p.incr("n")
            p.rpush(keys[0] + "l", "a", "b")
            p.execute()
            want = [[b"SET", k.encode(), b"v"] for k in keys] + [
                [b"INCRBY", b"n", b"1"], [b"RPUSH", keys[0].encode() + b"l", b"a", b"b"]]
        elif kind == "exec-multi-shard":
            p = c.pipeline(transaction=True)
            p.set(keys[0], "v")
            p.execute_command("MSET", *[x for k in keys for x in (k, "m" + k)])
            p.incr("n")
            p.execute()
            want = [[b"SET", keys[0].encode(), b"v"],
                    [b"MSET"] + [x.encode() for k in keys for x in (k, "m" + k)],
                    [b"INCRBY", b"n", b"1"]]
        else:
            script = ("for _, k in ipairs(KEYS) do redis.call('SET', k, 'v') end "
                      "redis.call('MSET', KEYS[1], 'x', KEYS[2], 'y') "
                      "redis.call('SET', KEYS[3], '42') return 1")
            assert c.eval(script, len(keys), *keys) == 1
            want = [[b"SET", k.encode(), b"v"] for k in keys] + [
                [b"MSET", keys[0].encode(), b"x", keys[1].encode(), b"y"],
                [b"SET", keys[2].encode(), b"42"]]
        c.set("after", "1")
        assert reader.records(2) == [("multi", want), ("one", [b"SET", b"after", b"1"])]
    finally:
        reader.close()
    wait_synced(master, r, "the writes")
    assert_same_image(master, r)


@pytest.mark.parametrize("threads", [1, 3])
def test_a_transaction_on_one_shard_is_one_block_and_the_pops_it_serves_follow_it(
        server_factory, replicas, threads):
    """A transaction whose keys share one shard (with one thread, the client's own, where
    it runs at once) reaches replicas as one MULTI ... EXEC block. A client blocked on a
    key it gives elements to is served after it, as in Redis: the transaction's own LPOP
    takes what it pushed first, and the waiter's pop follows the block in the stream."""
    master = server_factory(extra_args=["--repl-diskless-sync-delay", "0"], threads=threads)
    r = replicas(master)
    wait_synced(master, r)
    reader = StreamReader(master.port)
    c = master.client()
    waiter = master.client()
    got = {}
    t = threading.Thread(target=lambda: got.update(v=waiter.blpop(["{t}q"], timeout=10)))
    t.start()
    try:
        deadline = time.monotonic() + 5
        while int(c.info("clients")["blocked_clients"]) < 1:
            assert time.monotonic() < deadline, "the waiter never blocked"
            time.sleep(0.01)
        p = c.pipeline(transaction=True)
        p.set("{t}a", "1")
        p.rpush("{t}q", "x", "y")
        p.lpop("{t}q")
        assert p.execute() == [True, 2, b"x"]
        t.join(10)
        assert got == {"v": (b"{t}q", b"y")}
        c.set("{t}after", "1")
        records = reader.records(3)
    finally:
        reader.close()
    assert records[0] == ("multi", [[b"SET", b"{t}a", b"1"], [b"RPUSH", b"{t}q", b"x", b"y"],
                                    [b"LPOP", b"{t}q"]])
    # The waiter's pop, alone or in a block of its own (Redis wraps it), after the block.
    assert records[1] in (("one", [b"LPOP", b"{t}q"]), ("multi", [[b"LPOP", b"{t}q"]]))
    assert records[2] == ("one", [b"SET", b"{t}after", b"1"])
    wait_synced(master, r, "the writes")
    assert_same_image(master, r)


def test_a_write_that_fails_after_a_swapdb_is_not_propagated(master, replicas):
    """A command is propagated when it changed its shard. What a command across shards
    (SWAPDB) changed there before it is not the next command's change: a SET that fails
    must not reach the replica (its rewrite for an expiry in the past is a DEL)."""
    mc = master.client()
    r = replicas()
    wait_synced(master, r)
    keys = ["s%d" % i for i in range(16)]  # some on every shard
    for k in keys:
        mc.sadd(k, "a")
    mc.swapdb(0, 1)
    mc.swapdb(0, 1)
    for k in keys:
        with pytest.raises(redis.ResponseError, match="invalid expire time"):
            mc.execute_command("SET", k, "b", "PX", "-12")
    mc.set("last", "1")
    wait_synced(master, r, "the writes")
    assert_same_image(master, r)
    assert r.client().scard("s0") == 1


def synced_master_without_expiry_cycle(server_factory, replicas, *extra):
    """A master whose expired keys go only when a command finds them (DEBUG
    SET-ACTIVE-EXPIRE 0), its client, and a replica in sync with it."""
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0",
                                   "--enable-debug-command", "yes"] + list(extra))
    mc = m.client()
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r = replicas(m)
    wait_synced(m, r)
    return m, mc, r


def test_a_write_that_finds_a_key_expired_after_changing_another_is_propagated(
        server_factory, replicas):
    """DEL a b, where a is there and b's TTL has passed but no expiry cycle took it yet:
    the master deletes a, then finds b expired and sends DEL b for it. The command must
    still go out for a: the DEL for b used to reset what the master counted as the
    command's changes, so DEL a b was not sent and the replica kept a."""
    m, mc, r = synced_master_without_expiry_cycle(server_factory, replicas)
    for cmd in ("DEL", "UNLINK"):
        mc.set("{h}a", "1")
        mc.set("{h}b", "2", px=50)
        wait_synced(m, r, "the SETs")
        time.sleep(0.1)
        assert mc.execute_command(cmd, "{h}a", "{h}b") == 1
        mc.set("{h}c", cmd)
        wait_synced(m, r, cmd)
        rc = r.client()
        assert rc.exists("{h}a") == 0, "the replica kept the key %s deleted" % cmd
        assert rc.get("{h}c") == cmd.encode()
        rc.close()
    assert_same_image(m, r)


@pytest.mark.skipif(TARGET == "redis", reason="Redis 7.0 drops such keys at DEBUG RELOAD "
                    "without a DEL")
def test_a_key_the_masters_reload_drops_as_expired_is_deleted_on_the_replica(server_factory,
                                                                           replicas):
    """A reload leaves out keys whose TTL has passed; the replica, whose keys go only by
    its master's DEL, gets one for each. Without it the replica keeps the old key, and a
    later APPEND from the master writes onto its old value and TTL."""
    m, mc, r = synced_master_without_expiry_cycle(server_factory, replicas)
    mc.set("k", "old", px=100)
    mc.set("keep", "1")
    wait_synced(m, r, "the SET")
    time.sleep(0.2)
    mc.execute_command("DEBUG", "RELOAD")
    mc.append("k", "new")
    wait_synced(m, r, "the APPEND")
    rc = r.client()
    assert rc.get("k") == b"new" and rc.pttl("k") == -1
    assert rc.dbsize() == 2


@pytest.mark.skipif(TARGET == "redis", reason="strata's incremental snapshots: a reload "
                    "reads a chain of files")
def test_a_reload_of_a_chain_keeps_a_key_whose_older_record_expired(server_factory, replicas):
    """A reload reads the snapshot chain: the base, then each delta. A key saved with a
    TTL in the base and saved again without one in a delta is expired in the base's
    record but live in the delta's: the master keeps it, so the replica must not get a
    DEL for it (it once did, and the replica lost the key)."""
    m, mc, r = synced_master_without_expiry_cycle(server_factory, replicas,
                                                  "--snapshot-incremental", "yes")
    mc.rpush("k", "x")
    mc.pexpire("k", 300)
    mc.set("gone", "1", px=300)
    mc.save()  # the base: k and gone with their TTLs
    mc.persist("k")
    mc.save()  # a delta: k without one
    time.sleep(0.4)  # both base records have expired now
    mc.execute_command("DEBUG", "RELOAD")  # a third file, then the chain is read back
    assert mc.lrange("k", 0, -1) == [b"x"] and mc.pttl("k") == -1
    assert mc.exists("gone") == 0
    mc.set("last", "1")
    wait_synced(m, r, "the reload")
    rc = r.client()
    assert rc.lrange("k", 0, -1) == [b"x"] and rc.pttl("k") == -1
    assert rc.exists("gone") == 0  # its DEL still reached the replica
    assert_same_image(m, r)


def test_xsetid_reaches_the_replica(master, replicas):
    """XSETID changes a stream's last ID and nothing else: no entry, no byte count. It
    was once not counted as a change, so it never reached the replica."""
    r = replicas()
    mc = master.client()
    mc.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    mc.execute_command("XSETID", "s", "99-0")
    mc.xadd("t", {"f": "v"}, id="5-0")
    mc.execute_command("XSETID", "t", "7-0", "ENTRIESADDED", "3", "MAXDELETEDID", "6-0")
    mc.set("last", "1")
    wait_synced(master, r, "the XSETIDs")
    rc = r.client()
    for key in ("s", "t"):
        assert rc.xinfo_stream(key)["last-generated-id"] == \
            mc.xinfo_stream(key)["last-generated-id"]
    info = rc.xinfo_stream("t")
    assert info["entries-added"] == 3 and info["max-deleted-entry-id"] == b"6-0"
    assert_same_image(master, r)


def test_pops_served_by_a_blocking_moves_push_keep_their_place_in_the_stream(server_factory,
                                                                            replicas):
    """BLMOVE and RPOPLPUSH across shards push to their destination in a step of their
    own, which wakes the clients blocked there; those pops must follow the push in the
    stream. They once went after whatever command next ran on that shard, or before the
    RPOPLPUSH in a transaction's record: a replica then popped another element. Clients
    block, the moves feed them and pushes follow at once, over and over, and the replica
    must end as the master."""
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0"], threads=3)
    r = replicas(m)
    wait_synced(m, r)
    keys = ["q%d" % i for i in range(6)]
    stop = time.monotonic() + 4
    errors = []

    def popper(i):
        c = m.client()
        try:
            while time.monotonic() < stop:
                c.blpop(keys[i % len(keys)], timeout=0.05)
        except redis.RedisError as e:
            errors.append(e)

    def mover(i):
        c = m.client()
        n = 0
        try:
            while time.monotonic() < stop:
                p = c.pipeline(transaction=False)
                for j in range(20):
                    src, dst = keys[(i + j) % len(keys)], keys[(i + j + 1) % len(keys)]
                    p.rpush(src, "v%d-%d" % (i, n))
                    if j % 2 == 0:
                        p.execute_command("BLMOVE", src, dst, "LEFT", "RIGHT", "0.01")
                    else:
                        p.execute_command("RPOPLPUSH", src, dst)
                    p.lpush(dst, "z%d-%d" % (i, n))
                    n += 1
                p.execute(raise_on_error=False)
                # The same inside a transaction: its record must hold the push, then
                # the pops it served.
                src, dst = keys[n % len(keys)], keys[(n + 2) % len(keys)]
                t = c.pipeline(transaction=True)
                t.rpush(src, "t%d-%d" % (i, n))
                t.execute_command("RPOPLPUSH", src, dst)
                t.lpush(dst, "u%d-%d" % (i, n))
                t.execute(raise_on_error=False)
        except redis.RedisError as e:
            errors.append(e)

    threads = [threading.Thread(target=popper, args=(i,)) for i in range(6)]
    threads += [threading.Thread(target=mover, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    m.client().set("last", "1")
    wait_synced(m, r, "the moves")
    assert_same_image(m, r)


def test_published_messages_reach_the_replicas_subscribers(master, replicas):
    r = replicas()
    wait_synced(master, r)
    helpers.published_messages_reach(r.client(), master.client())


def group_state(c, key, skip=()):
    """A stream's consumer groups as XINFO STREAM FULL shows them, less what each server
    sets from its own clock when a command runs (a consumer's seen-time and active-time)
    and the fields in skip: positions, pending entries with their delivery times and
    counts, consumers."""
    skip = ("seen-time", "active-time") + tuple(skip)

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in skip}
        if isinstance(v, list):
            if len(v) % 2 == 0 and v[:1] == ["name"]:  # a consumer, as flat pairs
                return clean(dict(zip(v[::2], v[1::2])))
            return [clean(x) for x in v]
        return v
    info = c.xinfo_stream(key, full=True)
    return clean({"groups": info["groups"], "length": info["length"],
                  "last-generated-id": info["last-generated-id"]})


def test_xgroup_calls_that_change_nothing_are_not_propagated(master, replicas):
    """XGROUP DESTROY of a group that is not there, CREATECONSUMER of a consumer that is,
    and DELCONSUMER of one that is not change nothing: like Redis, the master sends them
    to no replica. Those that change something follow, in order."""
    mc = master.client()
    r = replicas()
    wait_synced(master, r)
    mc.xadd("s", {"f": "v"}, id="1-0")
    mc.xgroup_create("s", "g", id="0")
    mc.xgroup_createconsumer("s", "g", "c")
    reader = StreamReader(master.port)
    try:
        assert mc.xgroup_destroy("s", "nope") == 0
        assert mc.xgroup_createconsumer("s", "g", "c") == 0
        assert mc.xgroup_delconsumer("s", "g", "nobody") == 0
        mc.set("marker", "1")
        assert mc.xgroup_createconsumer("s", "g", "d") == 1
        assert mc.xgroup_delconsumer("s", "g", "c") == 0
        assert mc.xgroup_destroy("s", "g") == 1
        got = [cmd for _, cmd in reader.records(4)]
    finally:
        reader.close()
    names = [[a.upper() if i == 0 or (i == 1 and c[0].upper() == b"XGROUP") else a
              for i, a in enumerate(c)] for c in got]
    assert names == [
        [b"SET", b"marker", b"1"],
        [b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"d"],
        [b"XGROUP", b"DELCONSUMER", b"s", b"g", b"c"],
        [b"XGROUP", b"DESTROY", b"s", b"g"]]
    wait_synced(master, r, "the XGROUP calls")
    assert_same_image(master, r)


def test_commands_across_shards_that_change_nothing_are_not_propagated(server_factory):
    """A command whose keys are on several shards and that changes nothing (an empty
    source, an error such as WRONGTYPE, RENAMENX onto a key that is there, a SORT without
    STORE) reaches no replica, as from Redis, which propagates only a call that changed
    the data; the same commands that do change something follow, in order."""
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0"], threads=3)
    c = m.client()
    if TARGET == "redis":
        a, b, x = "a", "b", "x"
    else:
        a, b, x = helpers.keys_on_distinct_shards(c, 3, "noop")
    c.set(x, "str")
    c.rpush("l", 3, 1, 2)
    reader = StreamReader(m.port)
    try:
        nothing = [
            ("RPOPLPUSH", a, b), ("LMOVE", a, b, "LEFT", "RIGHT"), ("LMPOP", 2, a, b, "LEFT"),
            ("ZMPOP", 2, a, b, "MIN"), ("RENAME", a, b), ("COPY", a, b),
            ("SMOVE", a, b, "m"), ("SINTERSTORE", a, b, x), ("SUNIONSTORE", a, b, x),
            ("SINTERSTORE", a, b, "nokey"), ("ZUNIONSTORE", a, 2, b, x),
            ("ZINTERSTORE", a, 2, b, "nokey"), ("BITOP", "OR", a, "l", b),
            ("PFMERGE", a, x, b), ("ZRANGESTORE", a, x, 0, -1), ("SORT", "l", "BY", b + "_*"),
            ("SORT", x, "STORE", a), ("GEOSEARCHSTORE", a, x, "FROMLONLAT", 0, 0, "BYRADIUS",
                                      1, "km"),
            # An empty result with no destination to delete.
            ("BITOP", "OR", a, b, "nokey"), ("ZRANGESTORE", a, b, 0, -1),
            ("GEOSEARCHSTORE", a, b, "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km")]
        for cmd in nothing:
            try:
                c.execute_command(*cmd)
            except redis.ResponseError:
                pass
        c.set(a, "v")
        assert c.renamenx(a, x) == 0
        assert c.msetnx({b: "1", x: "2"}) == 0
        assert c.execute_command("COPY", a, x) == 0
        c.set("marker", "1")
        c.rpush(b, "e")
        assert c.rpoplpush(b, "l") == b"e"
        # An empty result over a destination that is there deletes it: a change.
        assert c.execute_command("ZRANGESTORE", x, "nokey", 0, -1) == 0
        assert c.execute_command("BITOP", "OR", a, "nokey") == 0
        assert c.exists(x, a) == 0
        got = [cmd for _, cmd in reader.records(6)]
    finally:
        reader.close()
    assert [g[0].upper() for g in got] == [b"SET", b"SET", b"RPUSH", b"RPOPLPUSH",
                                           b"ZRANGESTORE", b"BITOP"], got
    assert got[0][1:] == [a.encode(), b"v"] and got[1][1:] == [b"marker", b"1"], got


def test_sort_by_a_pattern_across_shards_is_numbered_when_it_stores(server_factory, replicas):
    """SORT ... BY names keys only known once the list is read; when they are on shards
    it did not hold, strata lets its locks go and takes the larger set. Its record must
    be numbered when it stores, not at that first release: a write to the list in
    between would otherwise reach replicas after the SORT though it ran before it, and
    the replica's copy of the stored list would differ."""
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0"], threads=3)
    c = m.client()
    r = replicas(m)
    wait_synced(m, r)
    for i in range(20):
        c.set("w_%d" % i, 20 - i)
    c.rpush("src", *range(8))
    stop = threading.Event()

    def writer():
        w = m.client()
        n = 0
        while not stop.is_set():
            p = w.pipeline(transaction=False)
            p.lpush("src", n % 20)
            p.rpop("src")
            p.execute()
            n += 1
        w.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        for i in range(150):
            c.sort("src", by="w_*", store="dst%d" % i)
    finally:
        stop.set()
        t.join()
    wait_synced(m, r, "the SORTs")
    rc = r.client()
    differ = [i for i in range(150)
              if c.lrange("dst%d" % i, 0, -1) != rc.lrange("dst%d" % i, 0, -1)]
    assert differ == [], "the replica's stored lists differ for %d of 150 SORTs" % len(differ)


def test_consumer_groups_reach_the_replica_as_their_effects(master, replicas):
    # XREADGROUP, XCLAIM and XAUTOCLAIM depend on the time and on when they run: the
    # replica must get what they did (Redis sends XCLAIM ... TIME ... RETRYCOUNT ...,
    # XGROUP SETID and CREATECONSUMER), so that its pending entries, delivery times and
    # counts, consumers and group positions are the master's.
    mc = master.client(decode_responses=True)
    other = master.client(decode_responses=True)
    r = replicas()
    wait_synced(master, r)
    streams = ["s%d" % i for i in range(6)]  # on several shards
    for s in streams:
        for i in range(6):
            mc.xadd(s, {"f": i})
        mc.xgroup_create(s, "g", id="0")
    a, b = streams[0], streams[1]
    mc.xreadgroup("g", "c1", {a: ">"}, count=2)
    mc.xreadgroup("g", "c1", {s: ">" for s in streams}, count=1)  # every shard at once
    time.sleep(0.02)
    mc.xreadgroup("g", "c2", {a: ">"}, count=1, noack=True)
    # Redis 7.0 itself sends neither a history read's new delivery times and counts, nor
    # the consumer such a read creates, nor a group's entries-read after a plain read:
    # its replicas differ there. strata sends them, so with strata as the master they
    # are compared too.
    gaps = TARGET == "redis"
    if not gaps:
        mc.xreadgroup("g", "c1", {a: "0"})  # history: each delivered again
        mc.xreadgroup("g", "c7", {b: "0"})  # creates c7, reads nothing
    pending = mc.xpending_range(a, "g", "-", "+", 10)
    time.sleep(0.02)
    mc.xclaim(a, "g", "c3", 10, [pending[0]["message_id"]])
    mc.xclaim(a, "g", "c3", 0, [pending[1]["message_id"]], justid=True)
    last_of_b = mc.xrange(b)[-1][0]  # never delivered: FORCE makes it pending
    mc.execute_command("XCLAIM", b, "g", "c8", 0, last_of_b, "FORCE", "LASTID",
                       "99999999999999-0")
    mc.xautoclaim(b, "g", "c4", 0, "0", count=1)
    # A pending entry whose entry is gone: XAUTOCLAIM drops it from the PEL.
    victim = mc.xpending_range(streams[2], "g", "-", "+", 1)[0]["message_id"]
    mc.xdel(streams[2], victim)
    assert mc.xautoclaim(streams[2], "g", "c5", 0, "0")[2] == [victim]
    # A blocked XREADGROUP, served by a later XADD.
    got = []
    t = threading.Thread(target=lambda: got.append(
        other.xreadgroup("g", "c6", {streams[3]: ">"}, count=10, block=5000)))
    mc.xreadgroup("g", "c0", {streams[3]: ">"})  # nothing new left for c6 to take at once
    t.start()
    wait_for(lambda: mc.info("clients")["blocked_clients"] == 1, what="the XREADGROUP to block")
    mc.xadd(streams[3], {"f": "late"})
    t.join(10)
    assert got and got[0][0][1][0][1] == {"f": "late"}
    # Inside a transaction and a script too.
    p = mc.pipeline(transaction=True)
    p.xreadgroup("g", "c9", {streams[4]: ">"}, count=2)
    p.xclaim(streams[4], "g", "c10", 0, [mc.xrange(streams[4])[0][0]])
    p.execute()
    mc.eval("return redis.call('XREADGROUP', 'GROUP', 'g', 'c11', 'COUNT', 1, "
            "'STREAMS', KEYS[1], '>')", 1, streams[5])
    wait_synced(master, r, "the reads")
    rc = r.client(decode_responses=True)
    skip = ("entries-read", "lag") if gaps else ()
    for s in streams:
        assert group_state(rc, s, skip) == group_state(mc, s, skip), s


# ---------------------------------------------------------------- 4. partial resync

@pytest.mark.parametrize("side", ["master-side", "replica-side"])
def test_partial_resync_after_the_link_drops(master, replicas, side):
    mc = master.client()
    fill(mc, 500)
    r = replicas()
    wait_synced(master, r, "the first sync")
    rc = r.client()
    stats = mc.info("stats")
    full, partial = int(stats["sync_full"]), int(stats["sync_partial_ok"])
    assert full >= 1
    replid = mc.info("replication")["master_replid"]
    # A replica that retried its handshake under load leaves its first connection until
    # the master reads that connection's end, and its new one is a replica only from its
    # PSYNC on: wait until the one link there is has been the only one for a while.
    def replica_links():
        return len(mc.execute_command("CLIENT", "LIST", "TYPE", "replica").strip().splitlines())

    def one_link_settled():
        for _ in range(5):
            if replica_links() != 1:
                return False
            time.sleep(0.1)
        return True

    wait_for(one_link_settled, what="one replica connection")
    if side == "master-side":
        assert mc.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    else:
        assert rc.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
    mc.set("while-down", "1")
    mc.incr("n5")
    mc.srem("set", "m7")
    mc.spop("set")
    mc.rpush("list", "down")
    mc.expire("s9", 300)
    wait_for(lambda: int(mc.info("stats")["sync_partial_ok"]) > partial,
             what="a partial resync (sync_partial_ok)")
    wait_synced(master, r, "the resync")
    stats = mc.info("stats")
    assert int(stats["sync_full"]) == full
    assert int(stats["sync_partial_ok"]) == partial + 1
    assert rc.get("while-down") == b"1"
    assert r.client().info("replication")["master_replid"] == replid
    assert_same_image(master, r)
    # And the stream goes on after the resync.
    mc.set("after-resync", "1")
    wait_synced(master, r, "the stream after the resync")
    assert rc.get("after-resync") == b"1"
    assert mc.info("replication")["connected_slaves"] == 1


def test_full_resync_after_the_backlog_is_outgrown(master, replicas):
    mc = master.client()
    mc.config_set("repl-backlog-size", "16kb")
    fill(mc, 500)
    r = replicas()
    wait_synced(master, r, "the first sync")
    rc = r.client()
    stats = mc.info("stats")
    full, err = int(stats["sync_full"]), int(stats["sync_partial_err"])
    # The replica leaves (keeping its history), far more than the backlog holds is
    # written, and it comes back asking to continue.
    rc.execute_command("REPLICAOF", "NO", "ONE")
    wait_for(lambda: mc.info("replication")["connected_slaves"] == 0, what="the replica gone")
    p = mc.pipeline(transaction=False)
    for i in range(3000):
        p.set("outgrown:%d" % i, "x" * 100)
    p.execute()
    rc.execute_command("REPLICAOF", "127.0.0.1", master.port)
    wait_for(lambda: int(mc.info("stats")["sync_full"]) > full, what="a full resync")
    wait_synced(master, r, "the full resync")
    stats = mc.info("stats")
    assert int(stats["sync_partial_err"]) == err + 1
    assert_same_image(master, r)


# ---------------------------------------------------------------- 5. WAIT

def test_wait_without_a_replica_then_a_replica_syncs(master, replicas):
    mc = master.client()
    mc.set("k", "v")
    t0 = time.monotonic()
    assert mc.execute_command("WAIT", 1, 200) == 0
    assert 0.19 <= time.monotonic() - t0 < 2.0
    # A replica that comes after the WAIT still syncs (whatever the WAIT left in the
    # stream follows the image, not inside it).
    r = replicas()
    wait_synced(master, r)
    assert r.client().get("k") == b"v"
    mc.set("k", "v2")
    assert mc.execute_command("WAIT", 1, 2000) == 1


def test_wait_with_one_replica(master, replicas):
    mc = master.client()
    mc.set("k", "v")
    r = replicas()
    wait_synced(master, r)
    for i in range(3):
        mc.set("k", "v%d" % i)
        t0 = time.monotonic()
        assert mc.execute_command("WAIT", 1, 2000) == 1
        assert time.monotonic() - t0 < 1.0
        assert r.client().get("k") == b"v%d" % i
    mc.set("k2", "v")
    t0 = time.monotonic()
    assert mc.execute_command("WAIT", 2, 300) == 1
    took = time.monotonic() - t0
    assert 0.29 <= took < 2.0, took
    # Other clients are served while one waits.
    blocked = master.client(socket_timeout=5)
    done = []
    th = threading.Thread(target=lambda: done.append(blocked.execute_command("WAIT", 2, 1000)))
    th.start()
    try:
        time.sleep(0.1)
        assert mc.ping()
        assert mc.get("k2") == b"v"
    finally:
        th.join(5)
    assert done == [1]
    # The replica gone, WAIT counts none again.
    r.stop()
    wait_for(lambda: mc.info("replication")["connected_slaves"] == 0, what="the replica to go")
    mc.set("k3", "v")
    t0 = time.monotonic()
    assert mc.execute_command("WAIT", 1, 200) == 0
    assert 0.19 <= time.monotonic() - t0 < 2.0


def test_a_paused_master_keeps_its_stream_still(server_factory, replicas):
    """As Redis: while clients are paused (CLIENT PAUSE, or a failover's pause) the
    master's offset stays where the pause found it, so a replica can reach it: a read
    of an expired key deletes nothing, and WAIT's GETACK waits for the end of the pause.
    Both go out after it. (No PING meanwhile: its period is longer than the test.)"""
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0",
                                   "--repl-ping-replica-period", "60"])
    mc = m.client()
    r = replicas(m)
    mc.set("live", "v")
    mc.set("short", "v", px=2000)
    expires_at = time.monotonic() + 2.0
    wait_synced(m, r)
    # The master has the replica's ACK of everything so far (WAIT then counts it).
    wait_for(lambda: info(m).get("slave0", {}).get("offset") == info(m)["master_repl_offset"],
             what="the replica's ACK")
    rc = r.client()
    assert rc.dbsize() == 2
    try:
        assert mc.execute_command("CLIENT", "PAUSE", 20000, "WRITE") == b"OK"
        offset = info(m)["master_repl_offset"]
        time.sleep(max(0.0, expires_at + 0.2 - time.monotonic()))
        assert mc.get("short") is None
        assert mc.exists("short") == 0
        t0 = time.monotonic()
        assert mc.execute_command("WAIT", 2, 300) == 1  # blocks: one replica only
        assert time.monotonic() - t0 >= 0.29
        time.sleep(0.2)
        assert info(m)["master_repl_offset"] == offset
        assert rc.dbsize() == 2
        assert info(r)["master_repl_offset"] == offset
    finally:
        mc.execute_command("CLIENT", "UNPAUSE")
    # The DEL (the next read, or the expiry cycle) and the GETACK follow the pause.
    assert mc.get("short") is None
    wait_for(lambda: rc.dbsize() == 1, what="the DEL to reach the replica")
    wait_synced(m, r)
    assert info(m)["master_repl_offset"] > offset


def test_min_replicas_to_write(server_factory, replicas):
    """min-replicas-to-write (alias min-slaves-to-write), as Redis: with fewer good
    replicas (online, acknowledged within min-replicas-max-lag seconds) a master refuses
    writes, a script's writes and a transaction with -NOREPLICAS, and reads go on; INFO
    says how many are good."""
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0",
                                   "--min-slaves-to-write", "1", "--min-replicas-max-lag", "2"])
    mc = m.client()
    for args in (("SET", "k", "v"), ("INCR", "n")):
        with pytest.raises(redis.ResponseError, match="^NOREPLICAS Not enough good replicas"):
            mc.execute_command(*args)
    with pytest.raises(redis.ResponseError, match="^NOREPLICAS"):
        mc.eval("return redis.call('SET', KEYS[1], 'x')", 1, "k")
    p = mc.pipeline(transaction=True)
    p.set("k", "t")
    with pytest.raises(redis.ResponseError):
        p.execute()
    assert mc.get("k") is None
    assert mc.ping()
    assert info(m)["min_slaves_good_slaves"] == 0
    r = replicas(m)
    wait_synced(m, r)
    wait_for(lambda: info(m)["min_slaves_good_slaves"] == 1, what="a good replica")
    assert mc.set("k", "v")
    assert mc.eval("return redis.call('SET', KEYS[1], 'x')", 1, "k") == b"OK"
    r.stop()
    wait_for(lambda: info(m)["min_slaves_good_slaves"] == 0, what="the replica to go")
    with pytest.raises(redis.ResponseError, match="^NOREPLICAS"):
        mc.set("k", "w")
    assert mc.config_set("min-replicas-max-lag", "0")  # off
    assert mc.set("k", "w")
    assert "min_slaves_good_slaves" not in info(m)
    assert mc.config_get("min-replicas-to-write") == {"min-replicas-to-write": "1"}


# ---------------------------------------------------------------- 6. INFO, ROLE, CLIENT LIST

def info_lines(c, section):
    text = call(c, "INFO", section)
    if isinstance(text, bytes):
        text = text.decode()
    out = {}
    for line in text.split("\r\n"):
        if line and not line.startswith("#") and ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def test_info_role_and_client_list(master, replicas):
    mc = master.client()
    mc.set("a", "1")
    c = master.client(decode_responses=True)
    info = info_lines(c, "replication")
    assert info["role"] == "master" and info["connected_slaves"] == "0"
    assert not any(k.startswith("slave0") for k in info)
    r = replicas()
    wait_synced(master, r)
    mc.set("b", "2")
    wait_synced(master, r, "the write")

    info = info_lines(c, "replication")
    assert info["role"] == "master"
    assert info["connected_slaves"] == "1"
    assert "slave1" not in info
    fields = dict(f.split("=", 1) for f in info["slave0"].split(","))
    assert list(fields) == ["ip", "port", "state", "offset", "lag"], info["slave0"]
    assert fields["ip"] == "127.0.0.1"
    assert fields["port"] == str(r.port)
    assert fields["state"] == "online"
    assert 0 <= int(fields["offset"]) <= int(info["master_repl_offset"])
    assert 0 <= int(fields["lag"]) <= 5
    assert len(info["master_replid"]) == 40
    int(info["master_replid"], 16)
    assert int(info["master_repl_offset"]) > 0
    assert info["repl_backlog_active"] == "1"
    assert int(info["repl_backlog_size"]) > 0
    assert int(info["repl_backlog_first_byte_offset"]) >= 1
    assert 0 < int(info["repl_backlog_histlen"]) <= int(info["repl_backlog_size"])
    # The replica acknowledges (REPLCONF ACK, once a second): its offset reaches the
    # master's in INFO and ROLE.
    def acked():
        i = info_lines(c, "replication")
        f = dict(x.split("=", 1) for x in i["slave0"].split(","))
        return f["offset"] == i["master_repl_offset"]
    wait_for(acked, what="the replica's ACK in INFO")

    role = call(mc, "ROLE")
    assert len(role) == 3, role
    assert role[0] == b"master"
    assert isinstance(role[1], int) and role[1] > 0
    assert len(role[2]) == 1, role
    ip, port, off = role[2][0]
    assert ip == b"127.0.0.1"
    assert port == str(r.port).encode()
    assert isinstance(off, bytes) and 0 <= int(off) <= role[1]

    def role_acked():
        ro = call(mc, "ROLE")
        return int(ro[2][0][2]) == ro[1]
    wait_for(role_acked, what="the replica's ACK in ROLE")

    for kind in ("replica", "slave"):
        lines = [l for l in call(c, "CLIENT", "LIST", "TYPE", kind).split("\n") if l.strip()]
        assert len(lines) == 1, (kind, lines)
        assert "S" in parse_client_line(lines[0].strip())["flags"], lines[0]
    normal = call(c, "CLIENT", "LIST", "TYPE", "normal")
    for line in normal.split("\n"):
        if line.strip():
            assert "S" not in parse_client_line(line.strip())["flags"], line


# ---------------------------------------------------------------- 7. a replica killed

@pytest.mark.parametrize("when", ["during-sync", "online"])
def test_a_killed_replica_is_dropped_and_a_new_one_syncs(master, replicas, when):
    mc = master.client()
    ms = master.client(decode_responses=True)
    fill(mc, 20000 if when == "during-sync" else 500)
    r = replicas()
    if when == "during-sync":
        # Killed as soon as the master counts it as a replica (its PSYNC arrived): while
        # the image is made or sent.
        wait_for(lambda: call(ms, "CLIENT", "LIST", "TYPE", "replica").strip() != "",
                 what="the replica's PSYNC")
    else:
        wait_synced(master, r)
        assert mc.info("replication")["connected_slaves"] == 1
    r.proc.kill()
    r.proc.wait(10)
    wait_for(lambda: mc.info("replication")["connected_slaves"] == 0,
             what="the master to drop the dead replica")
    assert call(ms, "CLIENT", "LIST", "TYPE", "replica").strip() == ""
    # The master keeps serving.
    assert mc.ping()
    mc.set("after-the-kill", "1")
    assert mc.get("after-the-kill") == b"1"
    mc.incr("n3")
    r2 = replicas()
    wait_synced(master, r2, "the new replica's sync")
    assert_same_image(master, r2)
    assert mc.info("replication")["connected_slaves"] == 1
    mc.set("later", "2")
    wait_synced(master, r2, "the stream")
    assert r2.client().get("later") == b"2"


# ---------------------------------------------------------------- 8. two replicas

@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_two_replicas_at_once(master, replicas, diskless):
    mc = master.client()
    mc.config_set("repl-diskless-sync", diskless)
    fill(mc, 3000)
    r1 = replicas()
    r2 = replicas()
    wait_synced(master, r1, "the first replica's sync")
    wait_synced(master, r2, "the second replica's sync")
    assert mc.info("replication")["connected_slaves"] == 2
    assert_same_image(master, r1)
    assert_same_image(master, r2)
    mc.incr("counter")
    mc.spop("set", 2)
    mc.delete("s10")
    mc.set("new", "1", ex=100)
    assert mc.execute_command("WAIT", 2, 5000) == 2
    wait_synced(master, r1, "the stream (1)")
    wait_synced(master, r2, "the stream (2)")
    assert_same_image(master, r1)
    assert_same_image(master, r2)
    info = info_lines(master.client(decode_responses=True), "replication")
    ports = sorted(dict(f.split("=", 1) for f in info[s].split(","))["port"]
                   for s in ("slave0", "slave1"))
    assert ports == sorted([str(r1.port), str(r2.port)])


def test_what_replicas_are_sent_is_counted_apart(master, replicas):
    """INFO total_net_repl_output_bytes holds the image and the stream sent to replicas,
    which total_net_output_bytes holds too, as Redis 7 counts them."""
    c = master.client()
    fill(c, 500)
    r = replicas()
    wait_synced(master, r)
    before, after, repl, total = helpers.repl_bytes_growth(
        c, c, "output", lambda: wait_synced(master, r, "the stream"))
    assert before["total_net_repl_output_bytes"] > 500 * 8  # the image at least
    assert before["total_net_output_bytes"] >= before["total_net_repl_output_bytes"]
    # The stream in both; the 50 OK replies and the INFO reply only in the total.
    assert repl >= 50000
    assert repl <= total < repl + 20000
    assert after["total_net_repl_input_bytes"] == 0
    assert r.client().info("stats")["total_net_repl_input_bytes"] >= 50000
