"""strata-server loads a Redis RDB at startup: the migration path (stop Redis, start strata
on the same dir, or with --import-rdb FILE).

RDB files are written by the real redis-server inside the tests: every type in both
encodings, TTLs, all 16 databases, rdbcompression yes and no, rdbchecksum no. strata
loads each and must match Redis key by key. The public fixtures in
../shared/rdb-fixtures load, or are refused as their README says. Damaged files are
refused with the offset, and nothing is served.
"""
import json
import os
import shutil
import time

import pytest

from helpers import read_value, start_redis_server
from conftest import TARGET, REPO

FIXTURES = os.environ.get("STRATA_RDB_FIXTURES",
                          os.path.join(REPO, "..", "shared", "rdb-fixtures"))

pytestmark = pytest.mark.skipif(TARGET == "redis", reason="strata loading Redis's files")




@pytest.fixture
def redis_server():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    s = start_redis_server()
    yield s
    s.stop()


def populate(c):
    for db in range(16):
        c.execute_command("select", db)
        c.set("db", str(db))
    c.execute_command("select", 0)
    c.set("str", "hello")
    c.set("int", "12345")
    c.set("neg", "-7")
    c.set("bigstr", "x" * 5000)
    c.set("binary", bytes(range(256)) * 4)
    c.set("ttl", "v", px=500000)
    c.rpush("list", "a", "b", "7", "-42")
    c.rpush("biglist", *["element-%d" % i for i in range(3000)])
    c.sadd("intset", 1, 2, 3, -70000, 1 << 40)
    c.sadd("smallset", "a", "b", "1")
    c.sadd("bigset", *["m%d" % i for i in range(700)])
    c.sadd("bigintset", *range(1000))
    c.zadd("zset", {"a": 1, "b": 2.5, "c": -3, "inf": float("inf"), "tenth": 0.1})
    c.zadd("bigzset", {"m%d" % i: i * 0.37 - 50 for i in range(300)})
    c.hset("hash", mapping={"f": "v", "n": "1"})
    c.hset("bighash", mapping={"field:%d" % i: "v" * (i % 90) for i in range(600)})
    c.hset("hashttl", mapping={"f": "v"})
    c.pexpire("hashttl", 600000)
    c.execute_command("select", 3)
    c.rpush("list3", "x")
    c.set("exp3", "y", ex=1000)
    c.execute_command("select", 0)




def snapshot_of(c):
    """{(db, key): (type, value, ttl_ms)} over every database."""
    out = {}
    for db in range(16):
        c.execute_command("select", db)
        for key in c.keys("*"):
            kind = c.type(key).decode()
            out[(db, key)] = (kind, read_value(c, key, kind), c.pttl(key))
    c.execute_command("select", 0)
    return out


def assert_same(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        ka, va, ta = a[k]
        kb, vb, tb = b[k]
        assert (ka, va) == (kb, vb), k
        if ta < 0:
            assert tb == ta, k
        else:
            assert abs(ta - tb) < 5000, (k, ta, tb)


def redis_rdb(redis_server, tmp_path, **config):
    c = redis_server.client()
    for k, v in config.items():
        c.config_set(k.replace("_", "-"), v)
    c.flushall()
    populate(c)
    expected = snapshot_of(c)
    c.save()
    c.close()
    path = tmp_path / "dump.rdb"
    shutil.copy(os.path.join(redis_server.data_dir, "dump.rdb"), path)
    return path, expected


@pytest.mark.parametrize("args", [[], ["--rdbcompression", "no"], ["--rdbchecksum", "no"]],
                         ids=["default", "rdbcompression-no", "rdbchecksum-no"])
def test_strata_loads_what_redis_wrote(server_factory, tmp_path, args):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    ref = start_redis_server(extra_args=args)
    try:
        path, expected = redis_rdb(ref, tmp_path)
    finally:
        ref.stop()
    if "--rdbchecksum" in args:
        assert path.read_bytes()[-8:] == bytes(8)
    s = server_factory(extra_args=["--import-rdb", str(path)])
    c = s.client()
    assert_same(expected, snapshot_of(c))
    # Encodings follow the sizes, as in Redis.
    assert c.object("encoding", "biglist") == b"quicklist"
    assert c.object("encoding", "bighash") == b"hashtable"
    assert c.object("encoding", "hash") == b"listpack"
    assert c.object("encoding", "intset") == b"intset"
    assert c.object("encoding", "bigzset") == b"skiplist"
    assert c.info("persistence")["loading"] == 0


def test_dbfilename_holding_an_rdb_is_loaded(redis_server, server_factory, tmp_path):
    path, expected = redis_rdb(redis_server, tmp_path)
    s = server_factory(extra_args=["--dbfilename", "dump.rdb"], data_dir=str(tmp_path))
    assert_same(expected, snapshot_of(s.client()))
    assert "Loading RDB" in s.read_log()


def test_debug_reload_loads_the_rdb_then_the_snapshot_that_replaces_it(
        redis_server, server_factory, tmp_path):
    path, expected = redis_rdb(redis_server, tmp_path)
    s = server_factory(extra_args=["--dbfilename", "dump.rdb", "--enable-debug-command", "yes"],
                       data_dir=str(tmp_path))
    c = s.client()
    c.set("extra", "1")
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE") == b"OK"  # the RDB, as it was
    assert_same(expected, snapshot_of(c))
    c.set("extra", "1")
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"  # a snapshot replaces the RDB
    assert c.get("extra") == b"1"
    c.delete("extra")
    assert_same(expected, snapshot_of(c))
    assert not path.read_bytes().startswith(b"REDIS")


def test_every_thread_count_loads_the_same(redis_server, server_factory, tmp_path):
    path, expected = redis_rdb(redis_server, tmp_path)
    for threads in (1, 3):
        s = server_factory(extra_args=["--import-rdb", str(path)], threads=threads)
        assert_same(expected, snapshot_of(s.client()))
        s.stop()


def test_damaged_rdb_is_refused_with_the_offset(redis_server, server_factory, tmp_path):
    path, _ = redis_rdb(redis_server, tmp_path)
    data = path.read_bytes()
    cases = {
        "truncated": data[: len(data) // 2],
        "flipped": data[:300] + bytes([data[300] ^ 0x40]) + data[301:],
        "no-header": b"NOTRDB" + data[6:],
    }
    for name, bad in cases.items():
        p = tmp_path / ("bad-%s.rdb" % name)
        p.write_bytes(bad)
        s = server_factory(extra_args=["--import-rdb", str(p)], expect_fail=True)
        rc = s.wait_exit(20)
        assert rc not in (None, 0), name
        log = s.read_log()
        assert "at byte" in log or "not an RDB" in log, (name, log[-2000:])


def test_missing_import_file_is_refused(server_factory, tmp_path):
    s = server_factory(extra_args=["--import-rdb", str(tmp_path / "nope.rdb")], expect_fail=True)
    assert s.wait_exit(20) not in (None, 0)


def test_expired_keys_in_the_file_are_skipped(redis_server, server_factory, tmp_path):
    c = redis_server.client()
    c.flushall()
    c.set("gone", "v", px=300)
    c.set("kept", "v")
    c.save()
    path = tmp_path / "exp.rdb"
    shutil.copy(os.path.join(redis_server.data_dir, "dump.rdb"), path)
    time.sleep(0.5)
    s = server_factory(extra_args=["--import-rdb", str(path)])
    sc = s.client()
    assert sc.keys("*") == [b"kept"]


def test_a_stream_is_loaded(redis_server, server_factory, tmp_path):
    """A stream with a group and pending entries comes in whole: its DUMP restores into
    redis-server as the stream that was saved."""
    c = redis_server.client()
    c.flushall()
    for i in range(120):
        c.xadd("events", {"f": "v%d" % i})
    c.xgroup_create("events", "g", id="0")
    c.xreadgroup("g", "worker", {"events": ">"}, count=3)
    c.save()
    path = tmp_path / "stream.rdb"
    shutil.copy(os.path.join(redis_server.data_dir, "dump.rdb"), path)
    s = server_factory(extra_args=["--import-rdb", str(path)])
    sc = s.client()
    assert sc.type("events") == b"stream"
    c.restore("back", 0, sc.dump("events"))
    assert c.xrange("back") == c.xrange("events")
    assert c.xinfo_groups("back") == c.xinfo_groups("events")
    assert c.xpending("back", "g")["pending"] == 3


# ---- the public fixtures ----

def fixture(name):
    p = os.path.join(FIXTURES, name)
    if not os.path.exists(p):
        pytest.skip("no RDB fixtures at %s" % FIXTURES)
    return p


def load_json(path):
    text = open(path).read().strip()
    if not text.startswith("[") and not text.startswith("{"):
        text = "{" + text + "}"
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


# fixture file -> its *_data.json (keys per database)
DATA = {
    "librdb/hash_zm_v2.rdb": "hash_zm_v2_data.json",
    "librdb/hash_zl_v6.rdb": "hash_zl_v6_data.json",
    "librdb/hash_lp_v11.rdb": "hash_lp_v11_data.json",
    "librdb/multiple_dbs.rdb": "multiple_dbs_data.json",
    "librdb/multiple_lists_strings.rdb": "multiple_lists_strings_data.json",
    "librdb/plain_list_v6.rdb": "plain_list_v6_data.json",
    "librdb/plain_set_v6.rdb": "plain_set_v6_data.json",
    "librdb/plain_zset_v6.rdb": "plain_zset_v6_data.json",
    "librdb/plain_zset_2_v11.rdb": "plain_zset_2_v11_data.json",
    "librdb/quicklist.rdb": "quicklist_data.json",
    "librdb/set_is_v11.rdb": "set_is_v11_data.json",
    "librdb/set_lp_v11.rdb": "set_lp_v11_data.json",
    "librdb/single_key.rdb": "single_key_data.json",
    "librdb/zset_lp_v11.rdb": "zset_lp_v11_data.json",
    "librdb/zset_zl_v6.rdb": "zset_zl_v6_data.json",
}


def as_text(v):
    return v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else v


def server_value(c, key):
    kind = c.type(key).decode()
    if kind == "string":
        return as_text(c.get(key))
    if kind == "list":
        return [as_text(x) for x in c.lrange(key, 0, -1)]
    if kind == "set":
        return sorted(as_text(x) for x in c.smembers(key))
    if kind == "hash":
        return {as_text(k): as_text(v) for k, v in c.hgetall(key).items()}
    if kind == "zset":
        return {as_text(m): s for m, s in c.zrange(key, 0, -1, withscores=True)}
    raise AssertionError(kind)


def json_value(v, kind):
    if kind == "set":
        return sorted(v)
    if kind == "zset":
        return {m: float(s) for m, s in v.items()}
    return v


@pytest.mark.parametrize("name", sorted(DATA))
def test_public_fixture_matches_its_json(server_factory, name):
    path = fixture(name)
    dbs = load_json(os.path.join(FIXTURES, "librdb", DATA[name]))
    s = server_factory(extra_args=["--import-rdb", path])
    c = s.client()
    # The JSON lists the databases that hold keys, in order.
    held = [db for db in range(16) if c.execute_command("select", db) and c.dbsize() > 0]
    assert len(held) == len(dbs), held
    for db, want in zip(held, dbs):
        c.execute_command("select", db)
        want = {k: v for k, v in want.items() if k != "__aux__"}
        assert sorted(as_text(k) for k in c.keys("*")) == sorted(want)
        for key, value in want.items():
            got = server_value(c, key)
            kind = c.type(key).decode()
            if kind == "set" and isinstance(value, dict):
                value = list(value)
            assert got == json_value(value, kind), key


@pytest.mark.parametrize("name,reason", [
    ("librdb/future_v19.rdb", "RDB version 99"),
    ("librdb/invalid_chksum_v8.rdb", "wrong checksum"),
    ("librdb/redis_ent_opcode_ram_lru.rdb", "unknown opcode or value type 107"),
    ("librdb/module.rdb", "module type 'test__rdb'"),
    ("rdbtools/redis_40_with_module.rdb", "module type 'ReJSON-RL'"),
])
def test_public_fixture_is_refused(server_factory, name, reason):
    s = server_factory(extra_args=["--import-rdb", fixture(name)], expect_fail=True)
    assert s.wait_exit(20) not in (None, 0)
    assert reason in s.read_log()


def test_module_values_are_skipped_when_asked(server_factory):
    s = server_factory(extra_args=["--import-rdb", fixture("librdb/module_aux.rdb"),
                                   "--import-rdb-skip-modules", "yes"])
    c = s.client()
    c.execute_command("select", 9)
    assert c.get("x") == b"1"


def test_idle_and_freq_are_kept_under_their_policy(server_factory):
    s = server_factory(extra_args=["--import-rdb", fixture("librdb/mem_policy_lru.rdb"),
                                   "--maxmemory-policy", "allkeys-lru"])
    idle = s.client().object("idletime", "abcdefghijk")
    assert 24 <= idle <= 30  # saved 24 s idle; the clock restarts from the load, as in Redis
    s.stop()
    s = server_factory(extra_args=["--import-rdb", fixture("librdb/mem_policy_lfu.rdb"),
                                   "--maxmemory-policy", "allkeys-lfu"])
    assert s.client().object("freq", "abcdefghijk") == 5


def test_functions_in_the_file_are_loaded(redis_server, server_factory, tmp_path):
    c = redis_server.client()
    c.flushall()
    c.function_load("#!lua name=mylib\nredis.register_function('f', function() return 1 end)",
                    replace=True)
    c.set("k", "v")
    c.save()
    path = tmp_path / "fn.rdb"
    shutil.copy(os.path.join(redis_server.data_dir, "dump.rdb"), path)
    c.function_flush()
    s = server_factory(extra_args=["--import-rdb", str(path)])
    c = s.client()
    assert c.get("k") == b"v"
    assert c.fcall("f", 0) == 1
    assert "RDB: 1 function libraries loaded" in s.read_log()
