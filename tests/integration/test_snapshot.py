"""Snapshots: SAVE/BGSAVE/LASTSAVE, loading at startup, point-in-time consistency under
writes, incremental chains, and the fault paths (kill -9, corruption, a full disk).

Tests that only use Redis's commands and restart semantics also run against
redis-server (STRATA_TEST_TARGET=redis); the rest exercise strata's own files and flags.
"""
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

import helpers
from conftest import TARGET, THREADS, Server

strata_only = pytest.mark.skipif(TARGET == "redis", reason="strata snapshot files and flags")


def wait_for(pred, timeout=20.0, what="condition"):
    return helpers.wait_for(pred, timeout, what)


@pytest.fixture
def data_dir():
    d = tempfile.mkdtemp(prefix="strata-snap-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def servers(data_dir):
    # Depends on data_dir so that the servers stop (and save) before it is removed.
    started = []

    def start(**kw):
        s = Server(**kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def bgsave(c, *args):
    """BGSAVE's status reply as sent (redis-py turns it into True otherwise)."""
    c.set_response_callback("BGSAVE", lambda r, **kw: r)
    r = c.execute_command("BGSAVE", *args)
    return r.decode() if isinstance(r, bytes) else r


def wait_save_done(c, timeout=30.0):
    wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout, "save end")


def image(c, dbs=(0, 1, 2)):
    """Every key of the listed databases: type, value and absolute expiry (ms).

    Pipelined in chunks (a key's TYPE, then its value and PEXPIRETIME), so an image of
    tens of thousands of keys costs a few hundred round trips rather than one per call.
    """
    out = {}
    for db in dbs:
        c.execute_command("SELECT", db)
        keys = list(c.scan_iter(count=1000))
        for key, entry in zip(keys, helpers.read_entries(c, keys, expiry="PEXPIRETIME")):
            out[(db, key)] = entry
    c.execute_command("SELECT", 0)
    return out


def fill_every_type(c):
    c.set("s", "plain")
    c.set("bin", b"\x00\xff\r\n")
    c.set("ttl", "x" * 100, ex=1000)
    c.set("int", 12345)
    c.hset("h-small", mapping={"a": "1", "b": "2"})
    c.hset("h-big", mapping={"f%d" % i: "v%d" % i for i in range(1000)})
    c.expire("h-big", 5000)
    c.rpush("l-small", "a", "b", "c")
    c.rpush("l-big", *["e%d" % (i % 37) for i in range(5000)])
    c.sadd("s-int", 1, 2, 3, 70000)
    c.sadd("s-small", "x", "y")
    c.sadd("s-big", *["m%d" % i for i in range(1000)])
    c.zadd("z-small", {"a": 1.5, "b": -2})
    c.zadd("z-big", {"m%d" % i: i * 0.25 for i in range(1000)})
    c.execute_command("SELECT", 1)
    c.set("db1-key", "one")
    c.hset("db1-h", "f", "v")
    c.execute_command("SELECT", 0)


def test_save_lastsave_and_info_fields(servers, data_dir):
    s = servers(data_dir=data_dir)
    c = s.client()
    before = c.lastsave()
    c.set("k", "v")
    assert c.info("persistence")["rdb_changes_since_last_save"] >= 1
    assert c.save() is True
    info = c.info("persistence")
    for field in ("loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress",
                  "rdb_last_save_time", "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec",
                  "aof_enabled"):
        assert field in info, field
    assert info["loading"] == 0
    assert info["rdb_changes_since_last_save"] == 0
    assert info["rdb_last_bgsave_status"] == "ok"
    if not s.is_redis:
        assert info["snapshot_last_kind"] == "full"
        assert info["snapshot_last_keys"] == 1
    assert c.lastsave() >= before
    assert bgsave(c) == "Background saving started"
    wait_save_done(c)
    assert bgsave(c, "SCHEDULE") in ("Background saving started", "Background saving scheduled")
    wait_save_done(c)
    with pytest.raises(redis.ResponseError, match="syntax error"):
        bgsave(c, "NOW")
    if not s.is_redis:
        info = c.info("persistence")
        # Changes are tracked from the first snapshot on: the later ones are deltas.
        assert info["snapshot_last_kind"] == "incremental"
        assert info["rdb_saves"] >= 3


def test_every_type_and_ttl_round_trip(servers, data_dir):
    s = servers(data_dir=data_dir)
    c = s.client()
    fill_every_type(c)
    want = image(c)
    assert c.save() is True
    s.stop()
    s2 = servers(data_dir=data_dir)
    c2 = s2.client()
    got = image(c2)
    assert got == want
    assert c2.object("encoding", "h-big") == b"hashtable"
    assert c2.object("encoding", "s-int") == b"intset"
    assert c2.ttl("ttl") > 900


@strata_only
@pytest.mark.parametrize("load_threads", [1, 3])
def test_load_with_another_thread_count_rehashes_keys(servers, data_dir, load_threads):
    s = servers(data_dir=data_dir, threads=2)
    c = s.client()
    fill_every_type(c)
    c.mset({"k%d" % i: "v%d" % i for i in range(5000)})
    want = image(c)
    assert c.save() is True
    s.stop()
    s2 = servers(data_dir=data_dir, threads=load_threads)
    c2 = s2.client()
    assert image(c2) == want
    # Every key is reachable through its new shard: multi-key commands see them all.
    assert c2.mget(["k%d" % i for i in range(5000)]) == [b"v%d" % i for i in range(5000)]
    assert "DB loaded from disk" in s2.read_log()


@strata_only
def preload_bulk(c, n=200000):
    """Enough data that a save spans many loop turns."""
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set("bulk:%d" % i, "x" * 50)
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()


def test_point_in_time_under_concurrent_writes(servers, data_dir):
    """Writers keep changing keys while BGSAVE runs; the loaded image must be one instant.

    Each writer owns 64 keys on every shard and writes increasing sequence numbers to
    them in turn, and a cross-shard MSET writes the same number to a pair of keys on
    different shards. At one instant, each writer's keys show a prefix of its sequence:
    some n such that exactly the writes numbered <= n are visible, and MSET pairs match.
    """
    s = servers(data_dir=data_dir, threads=3)
    c = s.client()
    preload_bulk(c)
    writers = 4
    acked = [0] * writers
    stop = threading.Event()
    errors = []

    def writer(w):
        wc = s.client()
        n = 0
        try:
            while not stop.is_set():
                n += 1
                wc.set("pit:%d:%d" % (w, n % 64), n)
                wc.mset({"pair:%d:{a}" % w: n, "pair:%d:{b}" % w: n})
                acked[w] = n
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    wait_for(lambda: min(acked) > 200, 20, "writers")
    low = list(acked)
    assert bgsave(c) == "Background saving started"
    wait_save_done(c, 60)
    high = list(acked)
    stop.set()
    for t in threads:
        t.join(10)
    assert not errors, errors
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    s.stop()
    s2 = servers(data_dir=data_dir, threads=2)
    c2 = s2.client()
    for w in range(writers):
        vals = {}
        for j in range(64):
            v = c2.get("pit:%d:%d" % (w, j))
            vals[j] = int(v) if v is not None else 0
        cut = max(vals.values())
        assert low[w] <= cut <= high[w] + 1, (w, low[w], cut, high[w])
        for j in range(64):
            # The newest write numbered <= cut with this residue.
            expect = cut - ((cut - j) % 64)
            expect = expect if expect > 0 else 0
            assert vals[j] == expect, (w, j, vals[j], expect, cut)
        a = c2.get("pair:%d:{a}" % w)
        b = c2.get("pair:%d:{b}" % w)
        assert a == b, (w, a, b)
        # The pair is written after the SET numbered n: it shows n or n - 1.
        assert int(a) in (cut, cut - 1), (w, a, cut)
    assert c2.dbsize() == 200000 + writers * 66


@strata_only
def snapshot_under_writes(servers, data_dir, step, setup=None):
    """Starts a 2-thread server with the bulk preload (and `setup(client)`), calls
    `step(client, i)` for i = 0, 1, ... from a writer thread, takes a BGSAVE once 200 steps
    are acknowledged, stops the writer when the save has ended, and restarts from the
    snapshot: returns the restarted server."""
    s = servers(data_dir=data_dir, threads=2)
    c = s.client()
    preload_bulk(c)
    if setup is not None:
        setup(c)
    acked = [0]
    stop = threading.Event()
    errors = []

    def writer():
        wc = s.client()
        i = 0
        try:
            while not stop.is_set():
                step(wc, i)
                acked[0] = i
                i += 1
        except Exception as e:  # reported below
            errors.append(e)

    t = threading.Thread(target=writer)
    t.start()
    wait_for(lambda: acked[0] > 200, 20, "writer")
    assert bgsave(c) == "Background saving started"
    wait_save_done(c, 60)
    stop.set()
    t.join(10)
    assert not errors, errors
    s.stop()
    return servers(data_dir=data_dir, threads=2)


def test_point_in_time_with_values_changed_in_place(servers, data_dir):
    """SETBIT and APPEND change a value in its entry, without a new one: the snapshot must
    still hold each key as it was at the cut. A writer sets bit i of a bitmap, appends
    one byte to a log, then SETs a counter to i, all on one shard; in the image the
    bitmap's bits are a prefix, one or two more than the counter (the cut may fall
    between the commands), and the log is as long as the bits or one shorter."""
    def setup(c):
        c.setbit("bm{t}", 8 * 1024 * 1024 - 1, 1)  # a 1 MB bitmap, its last bit a marker

    def step(wc, i):
        wc.setbit("bm{t}", i, 1)
        wc.append("log{t}", "x")
        wc.set("n{t}", i)

    s2 = snapshot_under_writes(servers, data_dir, step, setup)
    c2 = s2.client()
    n = int(c2.get("n{t}"))
    bits = c2.bitcount("bm{t}") - 1  # less the marker
    assert n + 1 <= bits <= n + 2, (n, bits)
    assert c2.bitpos("bm{t}", 0) == bits  # a prefix of set bits
    assert bits - 1 <= c2.strlen("log{t}") <= bits


def test_point_in_time_with_values_written_over_in_their_entries(servers, data_dir):
    """A SET of a value as long as the one it replaces (stored the same way) rewrites the
    key's entry in place: the snapshot must still hold each key as it was at the cut. A
    writer SETs 100-byte values (packed) and 12-byte ones (raw), always the same length,
    over 64 keys in turn, then a counter, all on one shard; the image must be the state
    after some write numbered n: each key holds the last write to it numbered <= n."""
    def step(wc, i):
        wc.set("long:{t}:%d" % (i % 64), "%0100d" % i)
        wc.set("short:{t}:%d" % (i % 64), "%012d" % i)
        wc.set("n{t}", "%012d" % i)

    s2 = snapshot_under_writes(servers, data_dir, step)
    c2 = s2.client(decode_responses=True)
    n = int(c2.get("n{t}"))
    got_long = {j: int(c2.get("long:{t}:%d" % j)) for j in range(64)}
    got_short = {j: int(c2.get("short:{t}:%d" % j)) for j in range(64)}

    def state(m, with_short_of_next):
        # The keys after write m (and, when the cut fell inside write m+1, its first SETs).
        long = {j: max(i for i in range(j, m + 1, 64)) for j in range(64) if j <= m}
        short = dict(long)
        if with_short_of_next >= 1:
            long[(m + 1) % 64] = m + 1
        if with_short_of_next >= 2:
            short[(m + 1) % 64] = m + 1
        return long, short

    assert any((got_long, got_short) == state(n, k) for k in (0, 1, 2)), (
        n, {j: (got_long[j], got_short[j]) for j in range(64)
            if (got_long[j], got_short[j]) != (state(n, 0)[0][j], state(n, 0)[1][j])})


def test_incremental_chain_equals_live_data(servers, data_dir):
    args = ["--snapshot-max-deltas", "3"]
    s = servers(data_dir=data_dir, save="3600 1000000000", extra_args=args)
    c = s.client()
    rng = random.Random(5)
    c.mset({"key:%d" % i: "v%d" % i for i in range(20000)})
    fill_every_type(c)
    assert c.save() is True
    info = c.info("persistence")
    assert info["snapshot_last_kind"] == "full"
    full_bytes = info["snapshot_last_bytes"]
    kinds = []
    for round_ in range(5):
        for _ in range(300):
            k = "key:%d" % rng.randrange(25000)
            op = rng.randrange(5)
            if op == 0:
                c.delete(k)
            elif op == 1:
                c.set(k, "r%d-%d" % (round_, rng.randrange(10**6)))
            elif op == 2:
                c.set(k, "short", px=rng.randrange(1, 30))  # expires before the save
            elif op == 3:
                c.hset("h-big", "f%d" % rng.randrange(1200), round_)
            else:
                c.rpush("l-new-%d" % round_, k)
        c.execute_command("SELECT", 2)
        c.set("db2-%d" % round_, round_)
        if round_ == 2:
            c.flushdb()
        c.execute_command("SELECT", 0)
        time.sleep(0.05)
        assert bgsave(c) == "Background saving started"
        wait_save_done(c)
        info = c.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok"
        kinds.append(info["snapshot_last_kind"])
        if info["snapshot_last_kind"] == "incremental":
            assert info["snapshot_last_bytes"] < full_bytes / 3, info
    # Three deltas, then a new base, then a delta on it.
    assert kinds == ["incremental"] * 3 + ["full", "incremental"], kinds
    want = image(c)
    s.stop()  # SIGTERM with save rules: one more delta
    # The previous chain's files are gone: a base and two deltas, per shard, remain.
    snaps = [f for f in os.listdir(data_dir) if f.endswith(".snap")]
    assert len(snaps) == 3 * THREADS, snaps
    s2 = servers(data_dir=data_dir, save="3600 1000000000")
    c2 = s2.client()
    assert image(c2) == want
    # The loaded chain is extended: the next snapshot is a delta.
    c2.set("after-load", 1)
    assert c2.save() is True
    assert c2.info("persistence")["snapshot_last_kind"] == "incremental"
    s2.stop()
    s3 = servers(data_dir=data_dir, threads=3)
    want[(0, b"after-load")] = ("string", b"1", -1)
    assert image(s3.client()) == want


@strata_only
@pytest.mark.parametrize("incremental", ["yes", "no"])
def test_manual_saves_without_save_rules_are_incremental_after_the_first(servers, data_dir,
                                                                         incremental):
    """With save "" (no save rules), change tracking starts with the first snapshot, so
    the next BGSAVE writes a delta when snapshot-incremental is yes; with no, every save
    is full. Either way the chain loads back as the data was at the last save."""
    s = servers(data_dir=data_dir, save="", extra_args=["--snapshot-incremental", incremental])
    c = s.client()
    c.mset({"key:%d" % i: "v%d" % i for i in range(20000)})
    assert bgsave(c) == "Background saving started"
    wait_save_done(c)
    info = c.info("persistence")
    assert info["snapshot_last_kind"] == "full"
    full_bytes = info["snapshot_last_bytes"]
    for i in range(0, 20000, 100):  # 1% of the keys change
        c.set("key:%d" % i, "changed")
    c.delete("key:1")
    assert bgsave(c) == "Background saving started"
    wait_save_done(c)
    info = c.info("persistence")
    assert info["rdb_last_bgsave_status"] == "ok"
    if incremental == "yes":
        assert info["snapshot_last_kind"] == "incremental"
        assert info["snapshot_last_bytes"] < full_bytes / 10, (info, full_bytes)
    else:
        assert info["snapshot_last_kind"] == "full"
    want = image(c, dbs=(0,))
    c.set("after-save", 1)  # not saved: no save rules, so SIGTERM saves nothing
    s.stop()
    s2 = servers(data_dir=data_dir, save="")
    assert image(s2.client(), dbs=(0,)) == want


def test_kill_9_during_save_leaves_the_previous_snapshot(servers, data_dir):
    s = servers(data_dir=data_dir)
    c = s.client()
    pipe = c.pipeline(transaction=False)
    for i in range(100000):
        pipe.set("k:%d" % i, "a" * 40)
    pipe.execute()
    c.set("marker", "A")
    assert c.save() is True
    s.stop()
    rng = random.Random(9)
    for attempt in range(6):
        s = servers(data_dir=data_dir)
        c = s.client()
        marker = c.get("marker")
        assert marker in (b"A", b"B"), marker
        assert c.dbsize() == 100001
        c.set("marker", "B")
        bgsave(c)
        time.sleep(rng.random() * 0.2)
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait(10)
    s = servers(data_dir=data_dir)
    assert s.client().dbsize() == 100001
    leftovers = [f for f in os.listdir(data_dir) if f.endswith(".tmp")]
    # A later successful save removes what killed saves left behind.
    assert s.client().save() is True
    assert not [f for f in os.listdir(data_dir) if f.endswith(".tmp")], leftovers


def saved_dir_with_data(servers, data_dir, keys=20000):
    s = servers(data_dir=data_dir)
    c = s.client()
    c.mset({"k%d" % i: "value-%d" % i for i in range(keys)})
    assert c.save() is True
    s.stop()


@strata_only
def test_corrupt_snapshot_refuses_to_start_naming_file_and_offset(servers, data_dir):
    saved_dir_with_data(servers, data_dir)
    snap = sorted(f for f in os.listdir(data_dir) if f.endswith(".snap"))[0]
    path = os.path.join(data_dir, snap)
    with open(path, "r+b") as f:
        size = os.path.getsize(path)
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0x20]))
    s = servers(data_dir=data_dir, expect_fail=True)
    assert s.wait_exit(20) not in (None, 0)
    log = s.read_log()
    assert snap in log and "offset" in log, log
    # Told to, it starts empty instead, and says so.
    s2 = servers(data_dir=data_dir, extra_args=["--snapshot-on-corrupt", "start-empty"])
    assert s2.client().dbsize() == 0
    assert "no data" in s2.read_log()


@strata_only
def test_truncated_file_and_damaged_manifest_are_refused(servers, data_dir):
    saved_dir_with_data(servers, data_dir)
    snap = sorted(f for f in os.listdir(data_dir) if f.endswith(".snap"))[-1]
    path = os.path.join(data_dir, snap)
    os.truncate(path, os.path.getsize(path) - 10)
    s = servers(data_dir=data_dir, expect_fail=True)
    assert s.wait_exit(20) not in (None, 0)
    assert snap in s.read_log() and "truncated" in s.read_log()
    manifest = os.path.join(data_dir, "dump.strata")
    with open(manifest, "r+b") as f:
        f.seek(5)
        f.write(b"\xff")
    s = servers(data_dir=data_dir, expect_fail=True)
    assert s.wait_exit(20) not in (None, 0)
    assert "dump.strata" in s.read_log()


@strata_only
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_full_disk_fails_the_save_cleanly_and_serving_goes_on(servers):
    mnt = tempfile.mkdtemp(prefix="strata-full-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt]).returncode != 0:
        os.rmdir(mnt)
        pytest.skip("cannot mount a tmpfs here")
    try:
        s = servers(data_dir=mnt)
        c = s.client()
        c.set("small", "x")
        assert c.save() is True  # fits
        pipe = c.pipeline(transaction=False)
        for i in range(40000):
            pipe.set("k%d" % i, os.urandom(40).hex())
        pipe.execute()
        with pytest.raises(redis.ResponseError, match="No space left"):
            c.save()
        info = c.info("persistence")
        assert info["rdb_last_bgsave_status"] == "err"
        assert "No space left" in info["snapshot_last_error"]
        assert c.get("small") == b"x" and c.dbsize() == 40001
        bgsave(c)
        wait_save_done(c)
        assert c.info("persistence")["rdb_last_bgsave_status"] == "err"
        # Nothing half-written is left, and the previous snapshot still loads.
        assert not [f for f in os.listdir(mnt) if f.endswith(".tmp")], os.listdir(mnt)
        s.stop()
        s2 = servers(data_dir=mnt)
        assert s2.client().get("small") == b"x"
        assert s2.client().dbsize() == 1
        s2.stop()
    finally:
        subprocess.run(["umount", mnt])
        os.rmdir(mnt)


@strata_only
def test_commands_get_loading_until_the_load_ends(servers, data_dir):
    s = servers(data_dir=data_dir)
    c = s.client()
    # Big hashes: each is rebuilt field by field at load, so the load lasts long enough
    # (hundreds of ms) for a client to arrive while it runs.
    fields = {"field-%d" % f: "value-%d" % f for f in range(1000)}
    pipe = c.pipeline(transaction=False)
    for i in range(1500):
        pipe.hset("h%d" % i, mapping=fields)
        if i % 100 == 99:
            pipe.execute()
    pipe.execute()
    c.set("k1", "v" * 200)
    assert c.save() is True
    s.stop()
    s2 = servers(data_dir=data_dir, expect_fail=True)
    c2 = None
    deadline = time.monotonic() + 10
    while c2 is None and time.monotonic() < deadline:
        try:
            c2 = s2.client()
            c2.execute_command("CLIENT", "ID")  # allowed while loading
        except redis.ConnectionError:
            c2 = None
            time.sleep(0.002)
    seen_loading = False
    while True:
        try:
            v = c2.get("k1")
            break
        except redis.exceptions.BusyLoadingError as e:
            assert "loading the dataset in memory" in str(e)
            seen_loading = True
            time.sleep(0.01)
    assert v == b"v" * 200
    assert seen_loading
    assert c2.info("persistence")["loading"] == 0
    assert c2.dbsize() == 1501


def test_shutdown_save_nosave_and_sigterm(servers, data_dir):
    # With save rules, SIGTERM saves.
    s = servers(data_dir=data_dir, save="3600 1")
    s.client().set("a", 1)
    s.proc.terminate()  # SIGTERM: saves, then exits cleanly (with change tracking on)
    assert s.wait_exit(20) == 0, s.read_log()
    s.stop()
    s = servers(data_dir=data_dir, save="3600 1")
    c = s.client()
    assert c.get("a") == b"1"
    c.set("b", 2)
    c.shutdown(nosave=True)  # redis-py returns once the connection closes
    assert s.wait_exit(10) == 0, s.read_log()
    s = servers(data_dir=data_dir)  # save "": nothing automatic
    c = s.client()
    assert c.get("b") is None and c.get("a") == b"1"
    c.set("c", 3)
    c.shutdown(save=True)
    assert s.wait_exit(10) == 0
    s = servers(data_dir=data_dir)
    assert s.client().get("c") == b"3"


def test_save_rule_triggers_a_background_save(servers, data_dir):
    s = servers(data_dir=data_dir, save="1 3")
    c = s.client()
    start = c.info("persistence")["rdb_saves"] if not s.is_redis else 0
    c.set("x", 1)
    c.set("y", 2)
    c.set("z", 3)
    wait_for(lambda: c.info("persistence")["rdb_changes_since_last_save"] == 0, 10,
             "a save by the rule")
    if not s.is_redis:
        assert c.info("persistence")["rdb_saves"] > start


@strata_only
def test_snapshot_config_options(servers, data_dir):
    s = servers(data_dir=data_dir)
    c = s.client()
    assert c.config_get("snapshot-compression") == {"snapshot-compression": "lz4"}
    for codec in ("zstd", "none", "lz4"):
        c.config_set("snapshot-compression", codec)
        c.set("k", codec)
        assert c.save() is True
    with pytest.raises(redis.ResponseError):
        c.config_set("snapshot-compression", "gzip")
    with pytest.raises(redis.ResponseError, match="snapshot-cron"):
        c.config_set("snapshot-cron", "61 * * * *")
    c.config_set("snapshot-cron", "*/5 * * * *")
    assert c.config_get("snapshot-cron") == {"snapshot-cron": "*/5 * * * *"}
    with pytest.raises(redis.ResponseError):
        c.config_set("save", "100")
    with pytest.raises(redis.ResponseError):
        c.config_set("dbfilename", "a/b")
    c.config_set("dbfilename", "other.strata")
    c.set("k", "renamed")
    assert c.save() is True
    assert os.path.exists(os.path.join(data_dir, "other.strata"))


# Waits for the wall clock's next minute (30 s on average), and nothing in it depends on
# the I/O backend, the thread count or the sanitizer: it runs in the first pass only.
@strata_only
@pytest.mark.skipif(os.environ.get("STRATA_TEST_IO_BACKEND") == "epoll" or
                    os.environ.get("STRATA_SANITIZED") == "1",
                    reason="a minute-long wait that the first pass already covers")
@pytest.mark.skipif(os.environ.get("STRATA_SANITIZED") == "1",
                    reason="waits up to a minute for the clock; the release pass runs it")
def test_snapshot_cron_fires_at_the_next_minute(servers, data_dir):
    # "* * * * *" fires at the start of every minute (local time): at most ~60 s away.
    s = servers(data_dir=data_dir, extra_args=["--snapshot-cron", "* * * * *"])
    c = s.client()
    c.set("cron", "yes")
    assert c.info("persistence")["rdb_saves"] == 0
    wait_for(lambda: c.info("persistence")["rdb_saves"] >= 1, 75, "the cron snapshot")
    assert "snapshot-cron" in s.read_log()
    s.stop()
    assert servers(data_dir=data_dir).client().get("cron") == b"yes"


def test_a_failed_save_stops_writes_until_one_succeeds(servers, data_dir):
    """stop-writes-on-bgsave-error (yes by default), as in Redis: with save rules set, a
    failed snapshot makes writes and PING answer -MISCONF, reads go on, and a snapshot
    that succeeds (or the setting turned off, or no save rules) lets writes through."""
    s = servers(data_dir=data_dir, save="3600 1")
    c = s.client()
    c.set("k", "v")
    shutil.rmtree(data_dir)  # the save cannot write its files
    bgsave(c)
    wait_save_done(c)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "err"
    for args in (("SET", "k", "w"), ("DEL", "k"), ("PING",)):
        with pytest.raises(redis.ResponseError, match="^MISCONF .*stop-writes-on-bgsave-error"):
            c.execute_command(*args)
    assert c.get("k") == b"v"
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        c.eval("return redis.call('SET', KEYS[1], 'x')", 1, "k")
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        c.eval("#!lua\nreturn redis.call('SET', KEYS[1], 'x')", 1, "k")
    assert c.eval("#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", 1, "k") == b"v"
    p = c.pipeline(transaction=True)
    p.set("k", "t")
    with pytest.raises(redis.ResponseError):
        p.execute()
    assert c.config_set("stop-writes-on-bgsave-error", "no")
    assert c.set("k", "w")
    assert c.config_set("stop-writes-on-bgsave-error", "yes")
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        c.set("k", "x")
    assert c.config_set("save", "")  # no save rules: writes go on
    assert c.set("k", "x")
    assert c.config_set("save", "3600 1")
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        c.set("k", "y")
    if TARGET == "redis":
        return  # its working directory is gone for good (strata writes by full paths)
    os.mkdir(data_dir)
    bgsave(c)
    wait_save_done(c)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert c.set("k", "z")
    assert c.ping()
