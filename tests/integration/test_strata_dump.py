"""strata-dump end to end, between the target (strata, or redis-server with
STRATA_TEST_TARGET=redis) and a real redis-server.

dump (replication and SCAN), restore, copy --follow with writes running on the source,
verify (which must find a planted difference), inspect, resume after kill -9, filters,
database maps, big keys in chunks, the type-command fallback, and the errors and exit
codes scripts rely on. An RDB strata-dump writes from a strata server loads into
redis-server 7 and matches.
"""
import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest

from helpers import start_redis_server
from conftest import TARGET, REPO, free_port

DUMP_BIN = os.environ.get("STRATA_DUMP_BIN",
                          os.path.join(REPO, "build", "tools", "strata-dump", "strata-dump"))
FIXTURES = os.environ.get("STRATA_RDB_FIXTURES",
                          os.path.join(REPO, "..", "shared", "rdb-fixtures"))

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed")


def tool(*args, timeout=60, check=None):
    p = subprocess.run([DUMP_BIN, *map(str, args), "--no-progress"], capture_output=True,
                       text=True, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def addr(server):
    return "127.0.0.1:%d" % server.port




@pytest.fixture
def ref():
    s = start_redis_server(extra_args=["--repl-diskless-sync-delay", "0"])
    yield s
    s.stop()


def populate(c, n=2000):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("key:%d" % i, "v" * (i % 40))
    p.execute()
    c.rpush("list", *range(500))
    c.sadd("intset", 1, 2, 3)
    c.sadd("set", *["m%d" % i for i in range(300)])
    c.zadd("zset", {"a": 1.5, "b": -2, "c": float("inf")})
    c.hset("hash", mapping={"f%d" % i: "x" * i for i in range(100)})
    c.set("ttl", "v", px=600000)
    c.execute_command("select", 5)
    c.set("in-db5", "y")
    c.execute_command("select", 0)


def test_dump_restore_verify_redis_to_target(ref, server, tmp_path):
    populate(ref.client())
    out = tmp_path / "redis.rdb"
    p = tool("dump", "--from", addr(ref), "-o", out, check=0)
    assert "by replication" in p.stdout
    tool("restore", out, "--to", addr(server), check=0)
    p = tool("verify", "--from", addr(ref), "--to", addr(server), check=0)
    assert "0 differences" in p.stdout
    assert server.client().ttl("ttl") > 500


def test_strata_written_rdb_loads_into_redis(server, tmp_path):
    populate(server.client())
    out = tmp_path / "dump.rdb"
    p = tool("dump", "--from", addr(server), "-o", out, check=0)
    # strata serves PSYNC too: the tool reads it as a replica would.
    assert "by replication" in p.stdout
    r = start_redis_server(data_dir=str(tmp_path), extra_args=["--dbfilename", "dump.rdb"])
    try:
        assert r.client().dbsize() == server.client().dbsize()
        tool("verify", "--from", addr(server), "--to", addr(r), check=0)
        tool("verify", "--from", out, "--to", addr(r), check=0)
    finally:
        r.stop()


def test_verify_finds_planted_differences(ref, server):
    populate(ref.client(), 100)
    tool("copy", "--from", addr(ref), "--to", addr(server), check=0)
    c = server.client()
    c.set("key:7", "changed")
    c.delete("key:8")
    c.set("extra", "x")
    c.persist("ttl")
    p = tool("verify", "--from", addr(ref), "--to", addr(server), check=1)
    assert 'value differs: db 0 key "key:7"' in p.stdout
    assert 'only in %s: db 0 key "key:8"' % addr(ref) in p.stdout
    assert 'only in %s: db 0 key "extra"' % addr(server) in p.stdout
    assert 'ttl differs: db 0 key "ttl"' in p.stdout
    assert "4 differences" in p.stdout


@pytest.mark.parametrize("direction", ["redis-to-target", "target-to-redis"])
def test_copy_follow_with_writes_during_the_copy(ref, server, direction):
    # The other way round, the source is the server under test: strata serves PSYNC and
    # its stream as Redis does, so the tool follows it the same way.
    if direction == "target-to-redis":
        ref, server = server, ref
    src = ref.client()
    populate(src, 5000)
    stop = threading.Event()
    written = []

    def writer():
        c = ref.client()
        i = 0
        while not stop.is_set():
            c.set("live:%d" % i, i)
            c.incr("counter")
            c.rpush("list", i)
            written.append(i)
            i += 1
            time.sleep(0.001)

    t = threading.Thread(target=writer)
    t.start()
    proc = subprocess.Popen([DUMP_BIN, "copy", "--from", addr(ref), "--to", addr(server),
                             "--follow", "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and server.client().exists("counter") == 0:
            time.sleep(0.1)
        time.sleep(1.0)
        stop.set()
        t.join()
        # The stream catches up: every write reaches the target.
        deadline = time.time() + 20
        while time.time() < deadline:
            if server.client().get("counter") == src.get("counter"):
                break
            time.sleep(0.1)
        assert len(written) > 50
        p = tool("verify", "--from", addr(ref), "--to", addr(server))
        assert p.returncode == 0, p.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, (out, err)
    assert "replicated commands" in out


def test_resume_after_kill(ref, server, tmp_path):
    c = ref.client()
    p = c.pipeline(transaction=False)
    for i in range(200000):
        p.set("k%d" % i, "x" * 20)
        if i % 10000 == 0:
            p.execute()
    p.execute()
    out = tmp_path / "big.rdb"
    tool("dump", "--from", addr(ref), "-o", out, check=0)
    ck = tmp_path / "big.ck"
    proc = subprocess.Popen([DUMP_BIN, "restore", str(out), "--to", addr(server), "--checkpoint",
                             str(ck), "--checkpoint-every-ms", "5", "--connections", "1",
                             "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and not ck.exists():
        time.sleep(0.002)
    proc.kill()
    proc.wait()
    assert ck.exists(), "no checkpoint before the kill"
    partial = server.client().dbsize()
    assert partial < 200000
    p = tool("restore", out, "--to", addr(server), "--checkpoint", ck, "--resume", check=0)
    assert "resuming at position" in p.stdout
    tool("verify", "--from", addr(ref), "--to", addr(server), check=0)
    assert not ck.exists()


def test_filters_and_db_map(ref, server, tmp_path):
    populate(ref.client(), 50)
    out = tmp_path / "f.rdb"
    tool("dump", "--from", addr(ref), "-o", out, "--match", "key:1*", "--match", "hash", check=0)
    p = tool("inspect", out, "--format", "json", check=0)
    keys = sorted(json.loads(line)["key"] for line in p.stdout.splitlines())
    assert keys == sorted(["hash"] + ["key:1"] + ["key:1%d" % i for i in range(10)])
    tool("restore", out, "--to", addr(server), "--db-map", "0:3", "--type", "hash", check=0)
    c = server.client()
    assert c.dbsize() == 0
    c.execute_command("select", 3)
    assert c.keys("*") == [b"hash"]
    tool("restore", out, "--to", addr(server), "--db", "5", check=0)  # nothing in db 5 kept
    out_all = tmp_path / "all.rdb"
    tool("dump", "--from", addr(ref), "-o", out_all, "--db", "5", check=0)
    p = tool("inspect", out_all, "--format", "csv", check=0)
    assert p.stdout.splitlines()[0] == "db,key,type,encoding,elements,bytes,expire_ms"
    assert p.stdout.splitlines()[1].startswith("5,in-db5,string,")


def test_inspect_summary(ref, tmp_path):
    populate(ref.client(), 300)
    out = tmp_path / "s.rdb"
    tool("dump", "--from", addr(ref), "-o", out, check=0)
    p = tool("inspect", out, "--summary", "--depth", "1", check=0)
    assert "key:*" in p.stdout
    line = [l for l in p.stdout.splitlines() if l.startswith("key:*")][0]
    assert " 300 " in line
    assert "RDB version" in p.stdout


def test_big_keys_go_in_chunks(ref, server, tmp_path):
    c = ref.client()
    c.set("bigstr", "s" * 100000)
    c.rpush("biglist", *["e%d" % i for i in range(20000)])
    c.hset("bighash", mapping={"f%d" % i: "v" * 10 for i in range(5000)})
    c.zadd("bigz", {"m%d" % i: i for i in range(5000)})
    c.expire("biglist", 1000)
    out = tmp_path / "b.rdb"
    tool("dump", "--from", addr(ref), "-o", out, check=0)
    p = tool("restore", out, "--to", addr(server), "--max-value-bytes", "1kb", check=0)
    assert "4 in chunks" in p.stdout
    tool("verify", "--from", addr(ref), "--to", addr(server), check=0)


@pytest.mark.parametrize("fixture", ["set_lp_v11.rdb", "stream_v11.rdb"])
def test_refused_payload_falls_back_to_type_commands(ref, fixture):
    path = os.path.join(FIXTURES, "librdb", fixture)
    if not os.path.exists(path):
        pytest.skip("no RDB fixtures")
    # Redis 7.2 encodings (RDB 11): a set listpack, a stream of type 21 with groups.
    # Debian's Redis 7.0 refuses the payloads and gets the type's commands instead (for
    # the stream XADD, XSETID, XGROUP and XCLAIM).
    p = tool("restore", path, "--to", addr(ref), check=0)
    assert "1 with type commands" in p.stdout
    tool("verify", "--from", path, "--to", addr(ref), check=0)


def test_busykey_needs_replace(ref, server, tmp_path):
    populate(ref.client(), 10)
    out = tmp_path / "x.rdb"
    tool("dump", "--from", addr(ref), "-o", out, check=0)
    tool("restore", out, "--to", addr(server), check=0)
    p = tool("restore", out, "--to", addr(server), check=5)
    assert "already exists on the target (use --replace)" in p.stderr
    tool("restore", out, "--to", addr(server), "--replace", check=0)


def test_errors_and_exit_codes(server, tmp_path):
    dead = "127.0.0.1:%d" % free_port()
    p = tool("dump", "--from", dead, "-o", tmp_path / "x.rdb", check=3)
    assert "cannot connect" in p.stderr
    p = tool("restore", tmp_path / "missing.rdb", "--to", addr(server), check=4)
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(b"REDIS0010\xfe\x00\x00\x03key")
    p = tool("restore", bad, "--to", addr(server), check=4)
    assert "at byte" in p.stderr
    p = tool("inspect", bad, check=4)
    p = tool("restore", bad, "--to", addr(server), "--db-map", "x", check=2)
    assert "--db-map" in p.stderr
    p = tool("verify", "--from", dead, "--to", addr(server), check=3)


def test_wrong_password_is_told(tmp_path):
    s = start_redis_server(extra_args=["--requirepass", "secret",
                                       "--repl-diskless-sync-delay", "0"])
    try:
        p = tool("dump", "--from", addr(s), "-o", tmp_path / "x.rdb", "-a", "wrong", check=3)
        assert "AUTH failed" in p.stderr
        tool("dump", "--from", addr(s), "-o", tmp_path / "x.rdb", "-a", "secret", check=0)
    finally:
        s.stop()


def test_source_refusing_psync_and_dump(tmp_path):
    s = start_redis_server(extra_args=["--rename-command", "PSYNC", "", "--rename-command", "DUMP", "",
                                "--rename-command", "SYNC", ""])
    try:
        s.client().set("k", "v")
        p = tool("dump", "--from", addr(s), "-o", tmp_path / "x.rdb", check=4)
        assert "refused PSYNC" in p.stdout
        assert "refused DUMP" in p.stderr
        p = tool("dump", "--from", addr(s), "-o", tmp_path / "x.rdb", "--method", "psync", check=3)
        assert "refused PSYNC" in p.stderr
    finally:
        s.stop()


def test_strata_snapshots_in_and_out(ref, server_factory, tmp_path):
    if TARGET == "redis":
        pytest.skip("strata's snapshot format")
    populate(ref.client(), 500)
    # A live redis-server to a strata snapshot, which strata-server loads.
    snap = tmp_path / "dump.strata"
    tool("dump", "--from", addr(ref), "-o", snap, "--format", "strata", check=0)
    s = server_factory(extra_args=["--dbfilename", "dump.strata"], data_dir=str(tmp_path))
    tool("verify", "--from", addr(ref), "--to", addr(s), check=0)
    # A snapshot strata-server wrote (two shards' files) restores into redis-server,
    # and inspect and verify read it offline.
    c = s.client()
    c.set("extra", "x")
    c.save()
    s.stop()
    r2 = start_redis_server()
    try:
        tool("restore", snap, "--to", addr(r2), check=0)
        assert r2.client().get("extra") == b"x"
        tool("verify", "--from", snap, "--to", addr(r2), check=0)
        p = tool("inspect", snap, check=0)
        assert "strata snapshot" in p.stdout
    finally:
        r2.stop()


def test_functions_travel_between_redis_and_the_target(ref, server, tmp_path):
    c = ref.client()
    c.function_load("#!lua name=mylib\nredis.register_function('f', function() return 1 end)",
                    replace=True)
    c.set("k", "v")
    out = tmp_path / "fn.rdb"
    tool("dump", "--from", addr(ref), "-o", out, "--method", "scan", check=0)
    t = server.client()
    t.function_flush()
    tool("restore", out, "--to", addr(server), check=0)
    assert t.fcall("f", 0) == 1
    # And back out of the target, by SCAN and FUNCTION LIST WITHCODE.
    back = tmp_path / "back.rdb"
    tool("dump", "--from", addr(server), "-o", back, "--method", "scan", check=0)
    r2 = start_redis_server()
    try:
        tool("restore", back, "--to", addr(r2), check=0)
        assert r2.client().fcall("f", 0) == 1
    finally:
        r2.stop()
        t.function_flush()


def test_functions_travel_with_a_dump(ref, tmp_path):
    c = ref.client()
    c.function_load("#!lua name=mylib\nredis.register_function('f', function() return 1 end)")
    c.set("k", "v")
    out = tmp_path / "fn.rdb"
    tool("dump", "--from", addr(ref), "-o", out, "--method", "scan", check=0)
    r2 = start_redis_server()
    try:
        tool("restore", out, "--to", addr(r2), check=0)
        libs = r2.client().execute_command("FUNCTION", "LIST")
        assert len(libs) == 1 and b"mylib" in libs[0]
    finally:
        r2.stop()


# ---------------------------------------------------------------- streams

def make_streams(c):
    """A stream with a deleted entry, two groups (pending entries of two consumers, and a
    consumer with nothing pending), and an empty stream that keeps its last ID."""
    for i in range(30):
        c.xadd("st", {"f": "v%d" % i, "n": str(i)}, id="%d-1" % (i + 1))
    c.xdel("st", "25-1")
    c.xgroup_create("st", "g1", id="0")
    c.xreadgroup("g1", "alice", {"st": ">"}, count=4)
    c.xreadgroup("g1", "bob", {"st": ">"}, count=2)
    c.xack("st", "g1", "2-1")
    c.xgroup_create("st", "g2", id="$")
    c.execute_command("XGROUP", "CREATECONSUMER", "st", "g2", "idle")
    c.xadd("empty", {"a": "b"}, id="7-7")
    c.xdel("empty", "7-7")
    c.xgroup_create("empty", "g", id="$")
    c.pexpire("st", 3600000)


def stream_state(server, key):
    """XINFO STREAM FULL without what a copy cannot keep (seen and active times), and
    what only some versions report."""
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    try:
        raw = c.execute_command("XINFO", "STREAM", key, "FULL")
    finally:
        c.close()

    def as_dict(flat):
        return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}

    info = as_dict(raw)
    out = {k: info[k] for k in ("length", "last-generated-id", "max-deleted-entry-id",
                                "entries-added", "entries")}
    groups = []
    for g in info["groups"]:
        g = as_dict(g)
        consumers = []
        for con in g["consumers"]:
            con = as_dict(con)
            consumers.append((con["name"], con["pel-count"],
                              [(p[0], p[1], p[2]) for p in con["pending"]]))
        groups.append((g["name"], g["last-delivered-id"], g["entries-read"], g["pel-count"],
                       [tuple(p) for p in g["pending"]], consumers))
    out["groups"] = groups
    return out


def test_streams_travel_every_way(ref, server, server_factory, tmp_path):
    make_streams(ref.client())
    want = stream_state(ref, "st")
    out = tmp_path / "streams.rdb"
    tool("dump", "--from", addr(ref), "-o", out, check=0)
    # RESTORE into the target.
    tool("restore", out, "--to", addr(server), check=0)
    tool("verify", "--from", addr(ref), "--to", addr(server), check=0)
    assert stream_state(server, "st") == want
    assert server.client().pttl("st") > 3000000
    # Type commands (every key past --max-value-bytes) into another redis-server: the same
    # stream, delivery times and counts included.
    r2 = start_redis_server()
    try:
        p = tool("restore", out, "--to", addr(r2), "--max-value-bytes", "1", check=0)
        assert "2 in chunks" in p.stdout
        tool("verify", "--from", addr(ref), "--to", addr(r2), check=0)
        assert stream_state(r2, "st") == want
        assert stream_state(r2, "empty") == stream_state(ref, "empty")
    finally:
        r2.stop()
    # The target's streams in an RDB of version 10, which redis-server 7.0 loads.
    out10 = tmp_path / "from-target.rdb"
    tool("dump", "--from", addr(server), "-o", out10, "--rdb-version", "10", check=0)
    r3 = start_redis_server(data_dir=str(tmp_path), extra_args=["--dbfilename", out10.name])
    try:
        tool("verify", "--from", addr(server), "--to", addr(r3), check=0)
        assert stream_state(r3, "st") == want
    finally:
        r3.stop()
    if TARGET == "redis":
        return
    # A strata snapshot holding them, which strata-server loads.
    snap = tmp_path / "streams.strata"
    tool("dump", "--from", addr(ref), "-o", snap, "--format", "strata", check=0)
    s = server_factory(extra_args=["--dbfilename", snap.name], data_dir=str(tmp_path))
    tool("verify", "--from", addr(ref), "--to", addr(s), check=0)
    assert stream_state(s, "st") == want


def test_verify_sees_a_pending_entry_moved(ref, server, tmp_path):
    make_streams(ref.client())
    out = tmp_path / "s.rdb"
    tool("dump", "--from", addr(ref), "-o", out, check=0)
    tool("restore", out, "--to", addr(server), check=0)
    c = server.client()
    c.xclaim("st", "g1", "bob", 0, ["3-1"])
    p = tool("verify", "--from", addr(ref), "--to", addr(server), check=1)
    assert "st" in p.stdout


def test_rdb_version_asked_for_rewrites_a_transferred_file(ref, tmp_path):
    populate(ref.client(), 200)
    make_streams(ref.client())
    out = tmp_path / "v11.rdb"
    p = tool("dump", "--from", addr(ref), "-o", out, "--rdb-version", "11", check=0)
    assert "by replication" not in p.stdout, p.stdout
    with open(out, "rb") as f:
        assert f.read(9) == b"REDIS0011"
    tool("verify", "--from", out, "--to", addr(ref), check=0)
    # Without the option the source's own file is kept; asking for its own version too.
    for extra in ([], ["--rdb-version", "10"]):
        out10 = tmp_path / ("v10-%d.rdb" % len(extra))
        p = tool("dump", "--from", addr(ref), "-o", out10, *extra, check=0)
        assert "by replication" in p.stdout
        with open(out10, "rb") as f:
            assert f.read(9) == b"REDIS0010"
