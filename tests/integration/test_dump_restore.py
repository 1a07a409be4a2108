"""DUMP and RESTORE, byte-compatible with Redis 7 in both directions.

Every type in both its encodings goes strata -> redis-server and redis-server -> strata
through DUMP and RESTORE, and must read back equal, in the same encoding. The options
and errors of RESTORE are checked against Redis 7.0's texts (STRATA_TEST_TARGET=redis
runs the same tests with redis-server on both sides).
"""
import time

import pytest
import redis

from helpers import read_value, start_redis_server
from conftest import Server, TARGET, free_port


@pytest.fixture(scope="module")
def reference(redis_reference):
    """A redis-server beside the target, for payloads in both directions."""
    return redis_reference


@pytest.fixture
def ref(reference):
    c = reference.client()
    c.flushall()
    c.config_set("maxmemory-policy", "noeviction")
    yield c
    c.close()


def populate(c):
    """One key of every type in each encoding; returns {key: type}."""
    c.set("str", "hello")
    c.set("int", "12345")
    c.set("bigstr", "x" * 5000)
    c.set("binary", bytes(range(256)) * 4)
    c.rpush("list", "a", "b", "7", "-42")
    c.rpush("biglist", *["element-%d" % i for i in range(3000)])
    c.sadd("intset", 1, 2, 3, -70000, 1 << 40)
    c.sadd("smallset", "a", "b", "1")
    c.sadd("bigset", *["m%d" % i for i in range(700)])
    c.sadd("bigintset", *range(1000))
    c.zadd("zset", {"a": 1, "b": 2.5, "c": -3, "inf": float("inf"), "tenth": 0.1})
    c.zadd("bigzset", {"m%d" % i: i * 0.37 - 50 for i in range(300)})
    c.zadd("longmember", {"x" * 100: 1})
    c.hset("hash", mapping={"f": "v", "n": "1"})
    c.hset("bighash", mapping={"field:%d" % i: "v" * (i % 90) for i in range(600)})
    c.hset("longvalue", mapping={"f": "y" * 100})
    return {k.decode(): c.type(k).decode() for k in c.keys("*")}




def copy_all(src, dst, keys):
    for key in keys:
        payload = src.dump(key)
        assert payload is not None, key
        assert dst.restore(key, 0, payload) in (True, b"OK"), key


def check_same(a, b, keys):
    for key, kind in keys.items():
        assert b.type(key).decode() == kind, key
        assert read_value(b, key, kind) == read_value(a, key, kind), key
        ea, eb = a.object("encoding", key), b.object("encoding", key)
        # Small sets of strings are listpacks from Redis 7.2 on (strata's model) and
        # hashtables in Debian's 7.0.
        # The same for small lists (listpack, not a one-node quicklist).
        if kind == "set" and {ea, eb} == {b"listpack", b"hashtable"}:
            continue
        if kind == "list" and {ea, eb} == {b"listpack", b"quicklist"}:
            continue
        assert eb == ea, key


def test_payloads_from_the_target_restore_into_redis(rb, ref):
    keys = populate(rb)
    assert len(keys) == 16
    copy_all(rb, ref, keys)
    check_same(rb, ref, keys)


def test_payloads_from_redis_restore_into_the_target(rb, ref):
    keys = populate(ref)
    copy_all(ref, rb, keys)
    check_same(ref, rb, keys)


def test_round_trip_in_the_target_and_missing_keys(rb):
    keys = populate(rb)
    for key, kind in keys.items():
        before = read_value(rb, key, kind)
        payload = rb.dump(key)
        rb.delete(key)
        assert rb.restore(key, 0, payload)
        assert read_value(rb, key, kind) == before
    assert rb.dump("missing") is None


def test_payload_footer_is_version_and_crc64(rb):
    rb.set("k", "hello")
    p = rb.dump("k")
    version = p[-10] | p[-9] << 8
    assert 6 <= version <= 10
    assert p[0] == 0  # a string
    rb.rpush("l", "a")
    p = rb.dump("l")
    assert p[-10] | p[-9] << 8 == 10  # quicklist 2 needs RDB 10


def test_rdbcompression_decides_whether_dump_compresses(rb):
    """DUMP follows CONFIG SET rdbcompression at once: LZF for a compressible string
    with yes, the raw string with no; either payload restores to the same value."""
    value = b"abcdefgh" * 100
    rb.set("k", value)
    try:
        assert rb.config_set("rdbcompression", "no")
        raw = rb.dump("k")
        assert rb.config_set("rdbcompression", "yes")
        packed = rb.dump("k")
    finally:
        rb.config_set("rdbcompression", "yes")
    assert len(raw) > len(value) and len(packed) < len(value) // 4
    assert raw[1] >> 6 == 1  # a 14-bit length, then the bytes as they are
    assert packed[1] == 0xC3  # RDB_ENC_LZF
    for payload in (raw, packed):
        assert rb.restore("k", 0, payload, replace=True)
        assert rb.get("k") == value


def test_restore_ttl_replace_and_busykey(rb):
    rb.set("src", "v")
    p = rb.dump("src")
    with pytest.raises(redis.ResponseError, match="^BUSYKEY Target key name already exists.$"):
        rb.restore("src", 0, p)
    assert rb.restore("src", 0, p, replace=True)
    assert rb.restore("ttl", 100000, p)
    assert 90000 < rb.pttl("ttl") <= 100000
    when = int(time.time() * 1000) + 50000
    assert rb.restore("abs", when, p, absttl=True)
    assert 40000 < rb.pttl("abs") <= 50000
    assert rb.restore("noexp", 0, p)
    assert rb.pttl("noexp") == -1
    # A time already past: OK, and no key (with REPLACE, the old one is gone).
    assert rb.restore("past", 1, p, absttl=True)
    assert rb.exists("past") == 0
    rb.set("old", "x")
    assert rb.restore("old", 1, p, absttl=True, replace=True)
    assert rb.exists("old") == 0


def test_restore_errors_in_redis_order(rb):
    rb.set("k", "v")
    p = rb.dump("k")
    cases = [
        (["restore", "n", "0", p, "bogus"], "syntax error"),
        (["restore", "n", "0", p, "idletime"], "syntax error"),
        (["restore", "n", "0", p, "idletime", "1", "freq", "1"], "syntax error"),
        (["restore", "n", "0", p, "freq", "1", "idletime", "1"], "syntax error"),
        (["restore", "n", "0", p, "idletime", "x"], "value is not an integer or out of range"),
        (["restore", "n", "0", p, "idletime", "-1"], "Invalid IDLETIME value, must be >= 0"),
        (["restore", "n", "0", p, "freq", "256"], "Invalid FREQ value, must be >= 0 and <= 255"),
        (["restore", "n", "0", p, "freq", "-1"], "Invalid FREQ value, must be >= 0 and <= 255"),
        (["restore", "k", "x", p], "BUSYKEY Target key name already exists."),  # before TTL
        (["restore", "n", "x", p], "value is not an integer or out of range"),
        (["restore", "n", "-1", p], "Invalid TTL value, must be >= 0"),
        (["restore", "n", "0", p[:-1] + bytes([p[-1] ^ 1])],
         "DUMP payload version or checksum are wrong"),
        (["restore", "n", "0", b"short"], "DUMP payload version or checksum are wrong"),
        (["restore", "n", "0", p[:-10] + b"\x63\x00" + p[-8:]],
         "DUMP payload version or checksum are wrong"),
    ]
    for args, msg in cases:
        with pytest.raises(redis.ResponseError) as e:
            rb.execute_command(*args)
        assert str(e.value) == msg or (msg.startswith("BUSYKEY") and str(e.value) == msg[8:]), \
            (args[4:], str(e.value))
    assert rb.exists("n") == 0
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        rb.execute_command("restore", "n", "0")


def crc64(data):
    """Redis's CRC-64/Jones, reflected, bit by bit (slow, for tests)."""
    poly = 0x95AC9329AC4BC9B5
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc


def payload(body, version=10):
    data = body + bytes([version & 0xff, version >> 8])
    return data + crc64(data).to_bytes(8, "little")


def test_bad_data_format(rb):
    assert crc64(b"123456789") == 0xe9c6d914c4b8d9ca
    rb.set("k", "v")
    good = rb.dump("k")
    assert payload(good[:-10], good[-10] | good[-9] << 8) == good
    bodies = [b"\x01\x00",                 # an empty list
              b"\x02\x02\x01a\x01a",       # a set with a duplicate member
              b"\x08\x00",                 # type 8 does not exist
              b"\x00\x0fhel"]              # a cut string (past the footer too)
    if TARGET != "redis":
        # Redis reads a value's end out of the footer, and ignores bytes after it.
        bodies += [b"\x00\x05hel", b"\x00\x01ab"]
    for body in bodies:
        with pytest.raises(redis.ResponseError, match="^Bad data format"):
            rb.restore("n", 0, payload(body))
    assert rb.exists("n") == 0


def test_restore_idletime_and_freq_follow_the_policy(rb):
    rb.set("k", "v")
    p = rb.dump("k")
    rb.config_set("maxmemory-policy", "allkeys-lru")
    try:
        assert rb.restore("idle", 0, p, idletime=1000)
        assert 1000 <= rb.object("idletime", "idle") <= 1002
        rb.config_set("maxmemory-policy", "allkeys-lfu")
        assert rb.restore("freq", 0, p, frequency=100)
        assert rb.object("freq", "freq") == 100
    finally:
        rb.config_set("maxmemory-policy", "noeviction")


def test_a_stream_travels_from_redis_and_back(rb, ref):
    """A stream with deleted entries, a group with pending entries and two consumers:
    redis-server's DUMP restores into the target, whose DUMP restores into redis-server
    as the same stream (entries, metadata, groups, PEL, consumers)."""
    ref.delete("st", "st2")
    for i in range(250):  # several nodes
        ref.xadd("st", {"f": "v%d" % i, "n": str(i)}, id="%d-1" % (i + 1))
    ref.xdel("st", "3-1", "100-1")
    ref.xgroup_create("st", "g", id="0")
    ref.xreadgroup("g", "alice", {"st": ">"}, count=5)
    ref.xreadgroup("g", "bob", {"st": ">"}, count=2)
    ref.xack("st", "g", "1-1")
    rb.delete("st")
    assert rb.restore("st", 0, ref.dump("st"))
    assert rb.type("st") == b"stream"
    assert ref.restore("st2", 0, rb.dump("st"))
    assert ref.xrange("st2") == ref.xrange("st")
    info = ref.xinfo_stream("st")
    info2 = ref.xinfo_stream("st2")
    for k in ("length", "last-generated-id", "max-deleted-entry-id", "entries-added",
              "recorded-first-entry-id", "first-entry", "last-entry", "groups"):
        assert info2[k] == info[k], k
    assert ref.xinfo_groups("st2") == ref.xinfo_groups("st")
    def pel(key):
        return [(p["message_id"], p["consumer"], p["times_delivered"])
                for p in ref.xpending_range(key, "g", "-", "+", 100)]
    assert pel("st2") == pel("st") and len(pel("st")) == 6
    names = sorted(c["name"] for c in ref.xinfo_consumers("st2", "g"))
    assert names == [b"alice", b"bob"]

def test_an_empty_stream_is_restored(rb, ref):
    """A stream whose entries were all deleted is still a key, with its last ID and its
    groups: RESTORE creates it (as Redis does), both ways."""
    ref.delete("es", "es2")
    ref.xadd("es", {"a": "b"}, id="7-7")
    ref.xdel("es", "7-7")
    ref.xgroup_create("es", "g", id="$")
    rb.delete("es")
    assert rb.restore("es", 0, ref.dump("es"))
    assert rb.type("es") == b"stream" and rb.xlen("es") == 0
    assert rb.xinfo_stream("es")["last-generated-id"] == b"7-7"
    assert [g["name"] for g in rb.xinfo_groups("es")] == [b"g"]
    assert ref.restore("es2", 0, rb.dump("es"))
    assert ref.xinfo_stream("es2")["last-generated-id"] == b"7-7"
    assert ref.xinfo_groups("es2") == ref.xinfo_groups("es")


def test_migrate_moves_copies_and_replaces(rb, ref, reference):
    port = reference.port
    rb.set("a", "1")
    rb.set("t", "v", px=100000)
    rb.rpush("l", "x", "y")
    assert rb.execute_command("MIGRATE", "127.0.0.1", port, "a", 0, 1000) == b"OK"
    assert rb.exists("a") == 0 and ref.get("a") == b"1"
    # KEYS with COPY, into another database: the source keeps them; a missing key is fine.
    assert rb.execute_command("MIGRATE", "127.0.0.1", port, "", 3, 1000, "COPY", "KEYS",
                              "l", "t", "missing") == b"OK"
    assert rb.exists("l", "t") == 2
    ref.execute_command("select", 3)
    assert ref.lrange("l", 0, -1) == [b"x", b"y"]
    assert 90000 < ref.pttl("t") <= 100000
    # Already there: the target's error, and the key stays here.
    with pytest.raises(redis.ResponseError,
                       match="^Target instance replied with error: BUSYKEY Target key name "
                             "already exists.$"):
        rb.execute_command("MIGRATE", "127.0.0.1", port, "l", 3, 1000)
    assert rb.exists("l") == 1
    assert rb.execute_command("MIGRATE", "127.0.0.1", port, "l", 3, 1000, "REPLACE") == b"OK"
    assert rb.exists("l") == 0
    assert rb.execute_command("MIGRATE", "127.0.0.1", port, "nothing", 0, 1000) == b"NOKEY"


def test_migrate_many_keys_across_shards(rb, ref, reference):
    keys = ["k%d" % i for i in range(200)]
    for k in keys:
        rb.set(k, k)
    assert rb.execute_command("MIGRATE", "127.0.0.1", reference.port, "", 0, 5000, "KEYS",
                              *keys) == b"OK"
    assert rb.dbsize() == 0
    assert ref.mget(keys) == [k.encode() for k in keys]


def test_migrate_errors(rb, ref, reference, tmp_path):
    rb.set("a", "1")
    dead = free_port()
    # Refused at once: Redis fails on its first write, and says so.
    with pytest.raises(redis.ResponseError,
                       match="^IOERR error or timeout writing to target instance$"):
        rb.execute_command("MIGRATE", "127.0.0.1", dead, "a", 0, 1000)
    assert rb.exists("a") == 1
    with pytest.raises(redis.ResponseError, match="the key argument must be set to the empty"):
        rb.execute_command("MIGRATE", "127.0.0.1", reference.port, "a", 0, 1000, "KEYS", "a")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        rb.execute_command("MIGRATE", "127.0.0.1", reference.port, "a", 0, 1000, "BOGUS")
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        rb.execute_command("MIGRATE", "127.0.0.1", reference.port, "a", "x", 1000)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        rb.execute_command("MIGRATE", "127.0.0.1", reference.port, "a", 0)


def test_migrate_with_auth():
    locked = start_redis_server(extra_args=["--requirepass", "secret"])
    src = Server()
    try:
        c = src.client()
        c.set("a", "1")
        with pytest.raises(redis.ResponseError, match="Target instance replied with error"):
            c.execute_command("MIGRATE", "127.0.0.1", locked.port, "a", 0, 1000)
        assert c.exists("a") == 1
        assert c.execute_command("MIGRATE", "127.0.0.1", locked.port, "a", 0, 1000, "AUTH",
                                 "secret") == b"OK"
        assert locked.client(password="secret").get("a") == b"1"
        c.set("b", "2")
        assert c.execute_command("MIGRATE", "127.0.0.1", locked.port, "b", 0, 1000, "AUTH2",
                                 "default", "secret") == b"OK"
    finally:
        src.stop()
        locked.stop()


def test_migrate_timeout_keeps_the_key_and_the_server_serving(rb, server):
    import socket
    import threading
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts (the kernel does) and never answers
    rb.set("a", "1")
    result = {}

    def migrate():
        c = server.client()
        try:
            c.execute_command("MIGRATE", "127.0.0.1", silent.getsockname()[1], "a", 0, 1500)
        except redis.ResponseError as e:
            result["error"] = str(e)
        c.close()

    t = threading.Thread(target=migrate)
    t0 = time.monotonic()
    t.start()
    time.sleep(0.3)
    # Other clients are served meanwhile (only "a" waits); redis-server blocks instead.
    other = server.client()
    assert other.set("b", "2") is True
    if TARGET != "redis":
        assert time.monotonic() - t0 < 1.2
    t.join(10)
    silent.close()
    assert result["error"] == "IOERR error or timeout reading to target instance"
    assert rb.get("a") == b"1"
