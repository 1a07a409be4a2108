"""strata as a replica of a real redis-server master: REPLICAOF, the full sync (diskless
and through a file), the command stream with writes running throughout, partial resync
after a dropped link, READONLY, REPLICAOF NO ONE, ROLE, INFO replication, masterauth and
WAIT. With STRATA_TEST_TARGET=redis the replica is a redis-server too: the same tests."""
import signal
import threading
import time

import pytest
import redis

import conftest
import helpers
from helpers import replica_synced as synced, start_redis_server


def wait_for(pred, timeout=30.0, what="condition"):
    return helpers.wait_for(pred, timeout, what)


@pytest.fixture
def master():
    m = start_redis_server(extra_args=["--repl-diskless-sync-delay", "0"])
    yield m
    m.stop()


def replica_of(server_factory, m, *extra):
    return server_factory(extra_args=["--replicaof", "127.0.0.1 %d" % m.port] + list(extra))


def image(c, dbs=(0, 1)):
    out = {}
    for db in dbs:
        c.execute_command("SELECT", db)
        keys = list(c.scan_iter(count=1000))
        for key, (kind, value, ttl) in zip(keys, helpers.read_entries(c, keys)):
            if kind == "stream":
                value = c.xrange(key)
            out[(db, key)] = (kind, value, ttl > 0)
    c.execute_command("SELECT", 0)
    return out


def fill(c, n=2000):
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set("s%d" % i, "v%d" % i)
    pipe.execute()
    c.set("ttl", "x", ex=1000)
    c.rpush("list", *range(300))
    c.hset("hash", mapping={"f%d" % i: i for i in range(200)})
    c.sadd("intset", *range(100))
    c.sadd("set", *["m%d" % i for i in range(300)])
    c.zadd("zset", {"z%d" % i: i * 1.5 for i in range(200)})
    c.xadd("stream", {"a": "1"})
    c.pfadd("hll", *range(100))
    c.select(1)
    c.set("db1", "yes")
    c.select(0)


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_full_sync_then_the_stream(master, server_factory, diskless):
    mc = master.client()
    mc.config_set("repl-diskless-sync", diskless)
    fill(mc)
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the first sync")
    rc = r.client()
    assert image(rc) == image(mc)
    # The stream: every kind of write, a transaction and a script.
    mc.execute_command("INCR", "counter")
    mc.delete("s1")
    mc.expire("s2", 500)
    mc.lpush("list", "new")
    mc.hset("hash", "f0", "changed")
    mc.srem("set", "m1")
    mc.zincrby("zset", 10, "z1")
    mc.xadd("stream", {"b": "2"})
    with mc.pipeline(transaction=True) as p:
        p.set("tx1", "a")
        p.incrby("counter", 5)
        p.execute()
    mc.eval("redis.call('SET', KEYS[1], ARGV[1]); return 1", 1, "scripted", "yes")
    mc.select(1)
    mc.set("db1-later", "1")
    mc.select(0)
    mc.flushdb()  # db 0 only
    mc.set("after-flush", "1")
    wait_for(lambda: synced(master, r), what="the stream")
    assert image(rc) == image(mc)


def replica_started_under_writes(server_factory, m, write, settle_s):
    """Starts a replica of m while a thread calls write(client, i) -> next i over and over,
    and stops the writer settle_s after the replica's link is up. Returns the replica and
    the writer's last i."""
    stop = threading.Event()
    done = []

    def writer():
        w = m.client()
        i = 0
        while not stop.is_set():
            i = write(w, i)
        done.append(i)

    t = threading.Thread(target=writer)
    t.start()
    try:
        r = replica_of(server_factory, m)
        wait_for(lambda: r.client().info("replication").get("master_link_status") == "up",
                 what="the link")
        time.sleep(settle_s)
    finally:
        stop.set()
        t.join(10)
    assert done, "the writer did not finish"
    return r, done[0]


def test_writes_throughout_the_sync(master, server_factory):
    mc = master.client()
    fill(mc, 20000)

    def write(w, i):
        w.set("live%d" % (i % 500), i)
        w.incr("live-counter")
        return i + 1

    r, _ = replica_started_under_writes(server_factory, master, write, 0.5)
    wait_for(lambda: synced(master, r), what="catch-up")
    assert image(r.client()) == image(mc)


def test_the_stream_sent_while_the_replica_loads_is_applied_in_order(server_factory):
    # A strata master (or redis-server with the redis target) and a replica of the same
    # kind. The replica acknowledges the image's offset once the file is in and reads
    # the stream while it loads; those bytes are its first input after the load, before
    # anything read later, so nothing is lost, doubled or reordered.
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0"])
    mc = m.client()
    fill(mc, 200000)

    def write(w, i):
        p = w.pipeline(transaction=False)
        for _ in range(50):
            p.rpush("order", i)
            p.incr("live-counter")
            i += 1
        p.execute()
        return i

    r, count = replica_started_under_writes(server_factory, m, write, 0.3)
    wait_for(lambda: synced(m, r), what="catch-up")
    rc = r.client()
    assert int(rc.get("live-counter")) == count
    assert rc.lrange("order", 0, -1) == [str(i).encode() for i in range(count)]
    assert rc.dbsize() == mc.dbsize()


def test_partial_resync_after_the_link_drops(master, server_factory):
    mc = master.client()
    fill(mc, 500)
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the first sync")
    full_syncs = int(mc.info("stats")["sync_full"])
    mc.execute_command("CLIENT", "KILL", "TYPE", "replica")
    mc.set("while-down", "1")
    wait_for(lambda: synced(master, r), what="the resync")
    stats = mc.info("stats")
    assert int(stats["sync_full"]) == full_syncs
    assert int(stats["sync_partial_ok"]) >= 1
    assert r.client().get("while-down") == b"1"
    assert image(r.client()) == image(mc)


@pytest.fixture
def slow_master():
    """A master whose keys expire only when read (active expiry paused), so a test
    decides when its DEL is sent."""
    m = start_redis_server(extra_args=["--repl-diskless-sync-delay", "0",
                                       "--enable-debug-command", "yes"])
    m.client().execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    yield m
    m.stop()


def test_an_expired_key_stays_on_the_replica_until_the_masters_del(slow_master,
                                                                   server_factory):
    """As Redis's replica: a key whose TTL passed is missing to reads but kept (and
    counted) until the master deletes it; reads never delete it themselves."""
    mc = slow_master.client()
    r = replica_of(server_factory, slow_master)
    wait_for(lambda: synced(slow_master, r), what="the first sync")
    rc = r.client()
    mc.set("keep", "1")
    mc.set("k", "v", px=200)
    mc.hset("h", "f", "v")
    mc.pexpire("h", 200)
    wait_for(lambda: synced(slow_master, r), what="the writes")
    time.sleep(0.3)
    for _ in range(2):
        assert rc.get("k") is None
        assert rc.exists("k", "h") == 0
        assert rc.hgetall("h") == {}
        assert rc.pttl("k") == -2
        assert rc.type("h") == b"none"
        assert sorted(rc.scan_iter()) == [b"keep"]
        assert rc.dbsize() == 3  # still there: only the master's DEL removes them
    assert mc.get("k") is None  # the master deletes k now, and sends its DEL
    wait_for(lambda: synced(slow_master, r), what="the DEL")
    assert rc.dbsize() == 2
    assert mc.exists("h") == 0
    wait_for(lambda: rc.dbsize() == 1, what="h's DEL")


def test_the_masters_commands_see_keys_the_replicas_clock_has_expired(slow_master,
                                                                      server_factory):
    """The master's stream is applied as the master ran it: a key it made persistent
    just before its TTL passed is kept by a replica that applies the PERSIST late (Redis
    never expires keys for its master client)."""
    mc = slow_master.client()
    r = replica_of(server_factory, slow_master)
    wait_for(lambda: synced(slow_master, r), what="the first sync")
    ttl_s = 3.0  # past the replica's ACK period: it is seen synced before the TTL ends
    t0 = time.monotonic()
    mc.set("k", "v", px=int(ttl_s * 1000))
    mc.rpush("l", "a", "b")
    mc.pexpire("l", int(ttl_s * 1000))
    wait_for(lambda: synced(slow_master, r), what="the SET")
    r.proc.send_signal(signal.SIGSTOP)  # the replica falls behind the master's clock
    try:
        assert mc.persist("k") == 1
        assert mc.rpush("l", "c") == 3
        assert mc.persist("l") == 1
        time.sleep(max(0.0, t0 + ttl_s + 0.3 - time.monotonic()))
    finally:
        r.proc.send_signal(signal.SIGCONT)
    wait_for(lambda: synced(slow_master, r), what="the PERSIST")
    rc = r.client()
    assert rc.get("k") == b"v" and rc.pttl("k") == -1
    assert rc.lrange("l", 0, -1) == [b"a", b"b", b"c"] and rc.pttl("l") == -1


def test_an_expiry_the_replica_applies_after_its_time_keeps_the_key(slow_master,
                                                                    server_factory):
    """The master sets a TTL and makes the key persistent again before it ends; a
    replica behind the master's clock applies the PEXPIREAT (and RESTORE ... ABSTTL) after
    that time. It sets the time as given and keeps the key (Redis: checkAlreadyExpired
    is false on a replica), so the PERSIST that follows finds it. The replica once
    deleted such a key at once and lost it for good."""
    mc = slow_master.client()
    r = replica_of(server_factory, slow_master)
    wait_for(lambda: synced(slow_master, r), what="the first sync")
    mc.set("k", "v")
    mc.rpush("l", "a", "b")
    mc.set("g", "w")
    mc.set("src", "dumped")
    payload = mc.dump("src")
    wait_for(lambda: synced(slow_master, r), what="the SETs")
    r.proc.send_signal(signal.SIGSTOP)  # the replica falls behind the master's clock
    try:
        at_ms = int(time.time() * 1000) + 300
        assert mc.pexpireat("k", at_ms) == 1
        assert mc.expire("l", 1) == 1
        assert mc.getex("g", px=300) == b"w"
        mc.restore("restored", at_ms, payload, absttl=True)
        for key in ("k", "l", "g", "restored"):
            assert mc.persist(key) == 1
        time.sleep(1.3)  # every TTL above has passed on the clock the replica wakes to
    finally:
        r.proc.send_signal(signal.SIGCONT)
    mc.set("after", "1")
    wait_for(lambda: synced(slow_master, r), what="the PERSISTs")
    rc = r.client()
    assert rc.get("k") == b"v" and rc.pttl("k") == -1
    assert rc.lrange("l", 0, -1) == [b"a", b"b"] and rc.pttl("l") == -1
    assert rc.get("g") == b"w" and rc.pttl("g") == -1
    assert rc.get("restored") == b"dumped" and rc.pttl("restored") == -1
    assert image(rc) == image(mc)


def test_published_messages_reach_the_replicas_subscribers(master, server_factory):
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the sync")
    helpers.published_messages_reach(r.client(), master.client())


def test_readonly_role_info_and_replicaof_no_one(master, server_factory):
    mc = master.client()
    mc.set("a", "1")
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the sync")
    rc = r.client()
    with pytest.raises(redis.ResponseError) as e:
        rc.set("b", "2")
    assert str(e.value) == "You can't write against a read only replica."
    assert rc.get("a") == b"1"
    role = rc.execute_command("ROLE")
    assert role[:3] == [b"slave", b"127.0.0.1", master.port]
    assert role[3] == b"connected"
    info = rc.info("replication")
    for field in ("master_host", "master_port", "master_link_status", "master_last_io_seconds_ago",
                  "master_sync_in_progress", "slave_repl_offset", "slave_priority",
                  "slave_read_only", "replica_announced", "connected_slaves", "master_replid",
                  "master_repl_offset"):
        assert field in info, field
    assert info["role"] == "slave" and info["slave_read_only"] == 1
    assert rc.execute_command("REPLICAOF", "127.0.0.1", str(master.port)) == \
        b"OK Already connected to specified master"
    assert rc.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    assert rc.get("a") == b"1"
    rc.set("b", "2")
    info = rc.info("replication")
    assert info["role"] == "master"
    assert info["master_replid2"] == mc.info("replication")["master_replid"]
    assert rc.execute_command("ROLE")[0] == b"master"
    # Master writes no longer arrive.
    mc.set("a", "changed")
    time.sleep(0.3)
    assert rc.get("a") == b"1"


def test_replica_read_only_no_accepts_writes(master, server_factory):
    r = replica_of(server_factory, master, "--replica-read-only", "no")
    wait_for(lambda: synced(master, r), what="the sync")
    assert r.client().set("local", "1")


def test_replica_announce_ip_is_what_the_master_lists(master, server_factory):
    r = replica_of(server_factory, master, "--replica-announce-ip", "127.0.0.9")
    wait_for(lambda: synced(master, r), what="the sync")
    slave0 = master.client().info("replication")["slave0"]
    assert slave0["ip"] == "127.0.0.9"
    assert slave0["port"] == r.port
    assert r.client().config_get("replica-announce-ip") == {"replica-announce-ip": "127.0.0.9"}


def test_replica_announce_port_is_what_the_master_lists(master, server_factory):
    r = replica_of(server_factory, master, "--slave-announce-port", "16999")
    wait_for(lambda: synced(master, r), what="the sync")
    assert master.client().info("replication")["slave0"]["port"] == 16999
    assert r.client().config_get("replica-announce-port") == {"replica-announce-port": "16999"}


def test_replicaof_errors(server_factory):
    s = server_factory()
    c = s.client()
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("REPLICAOF", "127.0.0.1", "notaport")
    assert "Invalid master port" in str(e.value)
    with pytest.raises(redis.ResponseError):
        c.execute_command("REPLICAOF", "127.0.0.1")
    assert c.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    assert c.execute_command("ROLE") == [b"master", 0, []]


def test_masterauth(server_factory):
    m = start_redis_server(extra_args=["--repl-diskless-sync-delay", "0", "--requirepass", "pw"])
    try:
        mc = m.client(password="pw")
        mc.set("secret", "1")
        r = replica_of(server_factory, m, "--masterauth", "pw")
        wait_for(lambda: r.client().info("replication")["master_link_status"] == "up",
                 what="the sync")
        assert r.client().get("secret") == b"1"
        bad = replica_of(server_factory, m, "--masterauth", "wrong")
        time.sleep(1.5)
        info = bad.client().info("replication")
        assert info["master_link_status"] == "down"
        assert bad.client().get("secret") is None
    finally:
        m.stop()


def test_wait_counts_the_replica_and_a_dead_master_leaves_the_data(master, server_factory):
    mc = master.client()
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the sync")
    mc.set("k", "v")
    assert mc.execute_command("WAIT", 1, 5000) == 1
    assert r.client().get("k") == b"v"
    master.stop()
    wait_for(lambda: r.client().info("replication")["master_link_status"] == "down",
             what="the link to go down")
    assert r.client().get("k") == b"v"


def test_scripts_on_a_read_only_replica(master, server_factory):
    mc = master.client()
    mc.set("k", "v")
    mc.execute_command("FUNCTION", "LOAD",
                       "#!lua name=lib\n"
                       "redis.register_function('w', function(keys) "
                       "return redis.call('SET', keys[1], 'x') end)\n"
                       "redis.register_function{function_name='r', callback=function(keys) "
                       "return redis.call('GET', keys[1]) end, flags={'no-writes'}}")
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the sync")
    rc = r.client()
    assert rc.eval("return redis.call('GET', KEYS[1])", 1, "k") == b"v"
    with pytest.raises(redis.ResponseError) as e:
        rc.eval("return redis.call('SET', KEYS[1], 'x')", 1, "k")
    assert "You can't write against a read only replica" in str(e.value)
    assert rc.eval("#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", 1, "k") == b"v"
    with pytest.raises(redis.ResponseError) as e:
        rc.eval("#!lua\nreturn redis.call('SET', KEYS[1], 'x')", 1, "k")
    assert "You can't write against a read only replica" in str(e.value)
    assert rc.execute_command("FCALL", "r", 1, "k") == b"v"
    with pytest.raises(redis.ResponseError) as e:
        rc.execute_command("FCALL", "w", 1, "k")
    assert "You can't write against a read only replica" in str(e.value)
    assert rc.get("k") == b"v"
    # The master's scripts reach the replica (as their effects).
    mc.eval("return redis.call('SET', KEYS[1], 'from-master')", 1, "k")
    wait_for(lambda: rc.get("k") == b"from-master", what="the script's write")


BUSY_SCRIPT = """
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat
  t = redis.call('TIME')
until t[1] * 1000000 + t[2] - start > tonumber(ARGV[1])
return 1
"""


def test_the_stream_waits_for_a_busy_script_on_the_replica(master, server_factory):
    """A read-only script past busy-reply-threshold on the replica: its master's writes
    wait for it and are all applied after it (as Redis's replica stops reading its
    master meanwhile), not refused with -BUSY and lost. With several workers the script
    runs on each of two, so that one round's is not the master client's."""
    r = replica_of(server_factory, master, "--busy-reply-threshold", "100",
                   "--enable-debug-command", "yes")
    wait_for(lambda: synced(master, r), what="the sync")
    if conftest.TARGET == "redis":
        clients = [r.client(), r.client()]
    else:
        clients = list(other_workers(r))
    mc = master.client()
    rc = r.client()
    for round_, c in enumerate(clients):
        t = threading.Thread(target=c.eval, args=(BUSY_SCRIPT, 0, 1000000))
        t.start()
        time.sleep(0.3)  # past the threshold: busy
        p = mc.pipeline(transaction=False)
        for i in range(100):
            p.set("busy:%d:%d" % (round_, i), i)
        p.execute()
        t.join(10)
        wait_for(lambda: rc.dbsize() == 100 * (round_ + 1),
                 what="every write of the master on the replica")
        assert rc.get("busy:%d:99" % round_) == b"99"
        wait_for(lambda: synced(master, r), what="the offsets to meet")


def test_a_busy_script_on_a_one_worker_replica(master, server_factory):
    """With one worker the busy script's worker is the master client's own. While it runs
    the replica answers its clients (-BUSY) but does not read its master's stream (as
    Redis's replica); the writes are applied after it, none lost."""
    one = ["--threads", "1"] if conftest.TARGET == "strata" else []
    r = replica_of(server_factory, master, "--busy-reply-threshold", "100", *one)
    wait_for(lambda: synced(master, r), what="the sync")
    c = r.client()
    rc = r.client()
    t = threading.Thread(target=c.eval, args=(BUSY_SCRIPT, 0, 1500000))
    t.start()
    try:
        wait_for(lambda: busy_reply(rc), what="the replica's -BUSY")
        mc = master.client()
        p = mc.pipeline(transaction=False)
        for i in range(100):
            p.set("busy1:%d" % i, i)
        p.execute()
        with pytest.raises(redis.ResponseError, match="^BUSY"):
            rc.get("busy1:0")
    finally:
        t.join(10)
    wait_for(lambda: rc.dbsize() == 100, what="every write of the master on the replica")
    assert rc.get("busy1:99") == b"99"
    wait_for(lambda: synced(master, r), what="the offsets to meet")


def busy_reply(c):
    try:
        c.ping()
        return False
    except redis.ResponseError as e:
        return str(e).startswith("BUSY")


def test_a_replica_ignores_maxmemory_unless_told_otherwise(master, server_factory):
    """replica-ignore-maxmemory yes (the default): a replica over maxmemory evicts
    nothing and refuses nothing; its keys go only by its master's DELs, so it keeps
    what its master has. With no it evicts by its own policy, as Redis's does."""
    r = replica_of(server_factory, master, "--maxmemory", "2mb",
                   "--maxmemory-policy", "allkeys-random")
    wait_for(lambda: synced(master, r), what="the sync")
    rc = r.client(decode_responses=True)
    assert rc.config_get("replica-ignore-maxmemory") == {"replica-ignore-maxmemory": "yes"}
    assert rc.config_get("slave-ignore-maxmemory") == {"slave-ignore-maxmemory": "yes"}
    mc = master.client()
    p = mc.pipeline(transaction=False)
    for i in range(4000):
        p.set("big:%d" % i, "x" * 1000)
    p.execute()
    wait_for(lambda: synced(master, r), what="the writes")
    assert rc.info("memory")["used_memory"] > 2 * 1024 * 1024
    assert rc.dbsize() == 4000
    assert rc.info("stats")["evicted_keys"] == 0
    rc.config_set("replica-read-only", "no")
    assert rc.set("local", "v")  # no OOM for its own clients either
    assert rc.config_set("replica-ignore-maxmemory", "no")
    wait_for(lambda: rc.dbsize() < 4000, what="the replica's own eviction")
    assert rc.info("stats")["evicted_keys"] > 0
    with pytest.raises(redis.ResponseError):
        rc.config_set("replica-ignore-maxmemory", "maybe")


def test_an_error_the_replica_gets_from_its_masters_command_is_logged(master, server_factory):
    """The master never sees its replica's replies; one that is an error (the data went
    apart: here a writable replica's own list where the master has a counter) is logged
    as Redis logs it, and the stream goes on."""
    r = replica_of(server_factory, master, "--replica-read-only", "no")
    wait_for(lambda: synced(master, r), what="the sync")
    rc = r.client()
    rc.rpush("counter", "local")
    mc = master.client()
    mc.execute_command("INCR", "counter")
    mc.set("after", "1")
    wait_for(lambda: rc.get("after") == b"1", what="the stream after the error")
    wait_for(lambda: "sending an error to its master" in r.read_log(), what="the log line")
    line = [ln for ln in r.read_log().splitlines() if "sending an error to its master" in ln][0]
    assert "== CRITICAL == This replica is sending an error to its master: '-WRONGTYPE" in line
    assert "after processing the command 'incr'" in line


def test_serve_stale_data_no(master, server_factory):
    mc = master.client()
    mc.set("k", "v")
    r = replica_of(server_factory, master, "--replica-serve-stale-data", "no")
    wait_for(lambda: synced(master, r), what="the sync")
    rc = r.client()
    assert rc.get("k") == b"v"
    master.stop()
    wait_for(lambda: rc.info("replication")["master_link_status"] == "down", what="link down")

    def refused():
        try:
            rc.get("k")
            return False
        except redis.ResponseError as e:
            return str(e).startswith("Link with MASTER is down") or "MASTERDOWN" in str(e)
    wait_for(refused, what="MASTERDOWN")
    assert rc.info("replication")["role"] == "slave"  # INFO, CONFIG, ROLE... still answer
    rc.config_set("replica-serve-stale-data", "yes")
    wait_for(lambda: not refused(), what="stale data served again")
    assert rc.get("k") == b"v"


class FakeMaster:
    """A master that answers the handshake, then sends what the test gives it as the RDB
    transfer and holds the connection (or closes it). Counts the connections it gets."""

    def __init__(self, transfer, close_after=True, gate=None):
        import socket
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.transfer = transfer
        self.close_after = close_after
        self.gate = gate  # when given, the transfer waits for it to be set
        self.at_psync = threading.Event()
        self.connections = 0
        self.stopped = threading.Event()
        self.held = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @staticmethod
    def read_command(conn, buf):
        """One RESP command from conn (buf: bytes already read); returns (args, rest)."""
        def need(n):
            nonlocal buf
            while len(buf) < n:
                data = conn.recv(4096)
                if not data:
                    raise OSError("closed")
                buf += data

        def line():
            nonlocal buf
            while b"\r\n" not in buf:
                need(len(buf) + 1)
            head, buf = buf.split(b"\r\n", 1)
            return head

        count = int(line()[1:])
        args = []
        for _ in range(count):
            n = int(line()[1:])
            need(n + 2)
            args.append(buf[:n])
            buf = buf[n + 2:]
        return args, buf

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            try:
                conn.settimeout(5)
                buf = b""
                while True:
                    args, buf = self.read_command(conn, buf)
                    name = args[0].upper()
                    if name == b"PING":
                        conn.sendall(b"+PONG\r\n")
                    elif name == b"PSYNC":
                        conn.sendall(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n")
                        self.at_psync.set()
                        if self.gate is not None:
                            self.gate.wait(10)
                        conn.sendall(self.transfer)
                        break
                    else:
                        conn.sendall(b"+OK\r\n")
                if self.close_after:
                    time.sleep(0.2)
                    conn.close()
                else:
                    self.held.append(conn)
            except OSError:
                conn.close()

    def stop(self):
        self.stopped.set()
        self.thread.join(5)
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("transfer", [
    b"$30\r\nNOT AN RDB FILE AT ALL........",         # refused at the header
    b"$100000\r\nREDIS0010",                          # the master goes away mid-transfer
    b"$EOF:" + b"m" * 40 + b"\r\nREDIS0010\xfa\x00",  # no mark: never ends, then closed
], ids=["garbage", "truncated", "eof-unfinished"])
def test_a_bad_transfer_keeps_the_data_and_retries(server, server_factory, transfer):
    if server.is_redis and transfer.startswith(b"$30"):
        pytest.skip("Redis flushes before it finds the file bad; strata checks first")
    fake = FakeMaster(transfer)
    try:
        s = server_factory()
        c = s.client()
        c.set("mine", "1")
        c.execute_command("REPLICAOF", "127.0.0.1", str(fake.port))
        wait_for(lambda: fake.connections >= 2, what="a retry")
        wait_for(lambda: no_one(c), what="REPLICAOF NO ONE outside a load")
        assert c.get("mine") == b"1"
        assert c.info("replication")["role"] == "master"
    finally:
        fake.stop()


def no_one(c):
    """REPLICAOF NO ONE; False when it was refused because a load is running."""
    try:
        c.execute_command("REPLICAOF", "NO", "ONE")
        return True
    except redis.exceptions.BusyLoadingError:
        return False


def test_replicaof_is_refused_while_the_image_loads(master, server_factory):
    """REPLICAOF NO ONE while the master's image loads is refused with -LOADING and
    changes nothing, as in Redis; once loaded, the replica follows the master."""
    n = 1000000
    mc = master.client()
    mc.eval("for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'k' .. i, 'v') end", 0, n)
    r = replica_of(server_factory, master)
    c = r.client()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if c.info("persistence")["loading"] == 1:
            break
        time.sleep(0.001)
    else:
        pytest.fail("the replica never showed loading:1")
    try:
        c.execute_command("REPLICAOF", "NO", "ONE")
    except redis.exceptions.BusyLoadingError:
        refused = True
    else:
        # Only when the load ended right before it; then nothing loads any more.
        refused = False
        try:
            assert c.dbsize() == n
        except redis.exceptions.BusyLoadingError:
            pytest.fail("REPLICAOF NO ONE answered OK while the image loaded")
    if refused:
        wait_for(lambda: synced(master, r), what="the sync after the refused REPLICAOF")
        assert c.info("replication")["role"] == "slave"
        mc.set("after", "1")
        wait_for(lambda: c.get("after") == b"1", what="the stream after the load")
        assert no_one(c)
    assert c.info("replication")["role"] == "master"
    assert c.dbsize() >= n


def tiny_rdb(key, value):
    """An RDB 10 file holding one string (checksum included)."""
    from test_dump_restore import crc64
    body = (b"REDIS0010\xfe\x00\x00" + bytes([len(key)]) + key + bytes([len(value)]) + value
            + b"\xff")
    return body + crc64(body).to_bytes(8, "little")


def other_workers(s):
    """Two clients of s that two different workers serve: while one sleeps in DEBUG
    SLEEP (which holds its worker), the other still answers at once."""
    a = s.client()
    for _ in range(8):
        b = s.client()
        t = threading.Thread(target=a.execute_command, args=("DEBUG", "SLEEP", "0.5"))
        t.start()
        time.sleep(0.1)
        t0 = time.monotonic()
        b.ping()
        fast = time.monotonic() - t0 < 0.25
        t.join()
        if fast:
            return a, b
    pytest.fail("no two connections on different workers")


def test_replicaof_no_one_before_a_queued_load_keeps_later_writes(server, server_factory):
    """The link takes a received image for loading and asks worker 0 to load it; a
    REPLICAOF NO ONE that comes before worker 0 starts the load (held here by DEBUG
    SLEEP) is refused with -LOADING. Before, it answered OK, and the load that ran
    after flushed the writes the new master had taken meanwhile."""
    if server.is_redis:
        pytest.skip("one thread: nothing runs between Redis's decision to load and the load")
    rdb = tiny_rdb(b"theirs", b"1")
    s = server_factory(extra_args=["--enable-debug-command", "yes"])
    a, b = other_workers(s)
    refused = 0
    # One of the two holds worker 0, where loads run; which one is not known.
    for sleeper, other in ((a, b), (b, a)):
        gate = threading.Event()
        fake = FakeMaster(b"$%d\r\n" % len(rdb) + rdb, close_after=False, gate=gate)
        try:
            other.execute_command("REPLICAOF", "127.0.0.1", str(fake.port))
            assert fake.at_psync.wait(10)
            t = threading.Thread(target=sleeper.execute_command, args=("DEBUG", "SLEEP", "1.5"))
            t.start()
            time.sleep(0.2)
            gate.set()  # the image arrives, and the link takes it for loading
            time.sleep(0.4)
            written = []
            if no_one(other):
                for i in range(20):  # some on the awake worker's shard, which run now
                    other.set("after:%d" % i, "1")
                    written.append("after:%d" % i)
            else:
                refused += 1
            t.join()
            wait_for(lambda: no_one(other), what="REPLICAOF NO ONE after the load")
            time.sleep(0.2)
            for k in written:
                assert other.get(k) == b"1", "%s, written after REPLICAOF NO ONE said OK, is gone" % k
            other.flushall()
        finally:
            fake.stop()
    assert refused >= 1  # the run that held worker 0


def test_a_replica_killed_during_a_full_sync_syncs_again(master, server_factory, tmp_path):
    mc = master.client()
    fill(mc, 1000)
    # A first master that starts a transfer and stalls: the replica is killed mid-sync.
    fake = FakeMaster(b"$1000000\r\nREDIS0010", close_after=False)
    try:
        data_dir = str(tmp_path)
        r = server_factory(data_dir=data_dir,
                           extra_args=["--replicaof", "127.0.0.1 %d" % fake.port])
        wait_for(lambda: r.client().info("replication")["master_sync_in_progress"] == 1,
                 what="the transfer to start")
        wait_for(lambda: r.client().info("replication").get("master_sync_read_bytes") == 9,
                 what="the first bytes")
        info = r.client().info("replication")
        assert info["master_sync_total_bytes"] == 1000000
        assert info["master_sync_left_bytes"] == 1000000 - 9
        assert info["master_link_status"] == "down"
        r.proc.kill()
        r.proc.wait(10)
    finally:
        fake.stop()
    r2 = server_factory(data_dir=data_dir,
                        extra_args=["--replicaof", "127.0.0.1 %d" % master.port])
    wait_for(lambda: synced(master, r2), what="the sync after the restart")
    assert image(r2.client()) == image(mc)


def test_replicaof_is_kept_by_config_rewrite(master, server_factory):
    s = server_factory(config_text="port 0\n")
    c = s.client(decode_responses=True)
    assert c.config_get("replicaof") == {"replicaof": ""}
    c.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
    assert c.config_get("replicaof") == {"replicaof": "127.0.0.1 %d" % master.port}
    c.config_rewrite()
    conf = open(s.cmd[1]).read()
    assert "replicaof 127.0.0.1 %d" % master.port in conf
    wait_for(lambda: c.info("replication")["master_link_status"] == "up", what="link up")
    master.stop()
    wait_for(lambda: "master_link_down_since_seconds" in c.info("replication"),
             what="link down")
    assert c.info("replication")["master_link_down_since_seconds"] >= 0
    c.execute_command("REPLICAOF", "NO", "ONE")
    assert c.config_get("replicaof") == {"replicaof": ""}


def test_replicaof_in_the_config_file(master, server_factory):
    master.client().set("k", "v")
    s = server_factory(config_text="replicaof 127.0.0.1 %d\n" % master.port)
    wait_for(lambda: synced(master, s), what="the sync")
    assert s.client().get("k") == b"v"
    bad = server_factory(config_text="replicaof 127.0.0.1\n", expect_fail=True)
    assert bad.wait_exit() not in (None, 0)


def test_client_list_and_kill_by_type(master, server_factory):
    mc = master.client()
    mc.set("k", "v")
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the sync")
    rc = r.client(decode_responses=True)
    lines = rc.execute_command("CLIENT", "LIST", "TYPE", "master").strip().split("\n")
    assert len(lines) == 1 and "flags=M" in lines[0]
    assert "flags=M" not in rc.execute_command("CLIENT", "LIST", "TYPE", "normal")
    for cmd in (("CLIENT", "LIST", "TYPE", "nope"), ("CLIENT", "KILL", "TYPE", "nope")):
        with pytest.raises(redis.ResponseError) as e:
            rc.execute_command(*cmd)
        assert str(e.value) == "Unknown client type 'nope'"
    other = r.client()
    other.ping()
    assert rc.execute_command("CLIENT", "KILL", "TYPE", "normal") >= 1
    assert rc.info("replication")["master_link_status"] == "up"
    assert rc.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
    mc.set("after", "1")
    wait_for(lambda: synced(master, r), what="the resync")
    assert rc.get("after") == "1"


def test_refused_with_the_spill_tier(server, server_factory, tmp_path):
    if server.is_redis:
        pytest.skip("strata's spill tier")
    args = ["--spill-dir", str(tmp_path / "spill"), "--maxmemory", "64mb"]
    s = server_factory(extra_args=args)
    with pytest.raises(redis.ResponseError) as e:
        s.client().execute_command("REPLICAOF", "127.0.0.1", "6379")
    assert "spill-dir" in str(e.value)
    assert s.client().info("replication")["role"] == "master"
    bad = server_factory(extra_args=args + ["--replicaof", "127.0.0.1 6379"], expect_fail=True)
    assert bad.wait_exit() not in (None, 0)
    assert "spill-dir" in bad.read_log()


def test_wait_without_replicas(server_factory, server):
    s = server_factory()
    c = s.client()
    c.set("k", "v")
    assert c.execute_command("WAIT", 0, 0) == 0
    t0 = time.monotonic()
    assert c.execute_command("WAIT", 1, 200) == 0
    assert time.monotonic() - t0 >= 0.19
    for args, err in ((("x", "0"), "value is not an integer or out of range"),
                      (("1", "x"), "timeout is not an integer or out of range"),
                      (("1", "-1"), "timeout is negative")):
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("WAIT", *args)
        assert str(e.value) == err
    with c.pipeline(transaction=True) as p:  # inside EXEC: at once
        p.execute_command("WAIT", 1, 0)
        assert p.execute() == [0]
    # A client blocked for ever leaves cleanly; others are served meanwhile.
    blocked = s.client(socket_timeout=0.3)
    with pytest.raises(redis.exceptions.TimeoutError):
        blocked.execute_command("WAIT", 1, 0)
    blocked.close()
    assert c.ping()


def test_replconf_options_and_errors(pair):
    from helpers import same
    same(pair, "REPLCONF", "listening-port", "1234")
    same(pair, "REPLCONF", "capa", "eof", "capa", "psync2")
    same(pair, "REPLCONF", "nosuch", "x")
    same(pair, "REPLCONF", "listening-port")
    same(pair, "ROLE")


def test_the_masters_bytes_are_counted_apart(master, server_factory):
    """INFO total_net_repl_input_bytes holds the master's image and stream, which
    total_net_input_bytes holds too, as Redis 7 counts them; the master counts what it
    sent its replica in total_net_repl_output_bytes."""
    mc = master.client()
    fill(mc, 500)
    r = replica_of(server_factory, master)
    wait_for(lambda: synced(master, r), what="the first sync")
    before, after, repl, total = helpers.repl_bytes_growth(
        mc, r.client(), "input", lambda: wait_for(lambda: synced(master, r), what="the stream"))
    assert before["total_net_repl_input_bytes"] > 500 * 8  # the image at least
    assert before["total_net_input_bytes"] >= before["total_net_repl_input_bytes"]
    # The stream's 50 SETs of 1000 bytes, in both; the client's INFO calls only in the
    # total.
    assert repl >= 50000
    assert repl <= total < repl + 5000
    assert "instantaneous_input_repl_kbps" in after
    ms = mc.info("stats")
    assert ms["total_net_repl_output_bytes"] >= 50000
    assert ms["total_net_output_bytes"] >= ms["total_net_repl_output_bytes"]
