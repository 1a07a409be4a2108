"""HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFSELFTEST. The target and a real redis-server
get the same commands and must give the same replies and, through GET, the same bytes:
an HLL is a string in Redis's format, sparse or dense, and moves between the two by
GET/SET and DUMP/RESTORE unchanged."""
import random

import pytest

from helpers import same
from conftest import TARGET


def elements(n, seed, prefix="e"):
    rnd = random.Random(seed)
    return ["%s%d" % (prefix, rnd.randrange(10 ** 9)) for _ in range(n)]


def test_pfadd_and_pfcount_give_redis_bytes(pair):
    assert same(pair, "PFADD", "h") == 1  # created, even with no elements
    same(pair, "GET", "h")
    assert same(pair, "PFADD", "h") == 0
    same(pair, "PFADD", "h", "a", "b", "c")
    same(pair, "PFADD", "h", "a")
    same(pair, "GET", "h")
    same(pair, "PFCOUNT", "h")
    same(pair, "GET", "h")  # the cached count, written by PFCOUNT
    # Growing through the sparse form, one element at a time and in batches, until it
    # turns dense: the bytes match at every step checked.
    rnd = random.Random(1)
    for step in range(60):
        batch = elements(rnd.choice([1, 1, 3, 40]), step)
        same(pair, "PFADD", "h", *batch)
        if step % 5 == 0:
            same(pair, "GET", "h")
            same(pair, "PFCOUNT", "h")
    for step in range(30):
        same(pair, "PFADD", "h", *elements(300, 100 + step))
    got = same(pair, "GET", "h")
    assert len(got) == 12304  # dense
    same(pair, "PFCOUNT", "h")
    same(pair, "PFADD", "h", *elements(5000, 7))
    same(pair, "PFCOUNT", "h")
    same(pair, "GET", "h")


def test_pfcount_of_several_and_pfmerge(pair):
    same(pair, "PFADD", "{m}a", *elements(200, 1))
    same(pair, "PFADD", "{m}b", *elements(3000, 2))
    same(pair, "PFADD", "{m}c", *elements(50, 3))
    same(pair, "PFCOUNT", "{m}a", "{m}b", "{m}c", "{m}missing")
    same(pair, "PFMERGE", "{m}d", "{m}a", "{m}c")  # sparse inputs: a sparse result
    same(pair, "GET", "{m}d")
    same(pair, "PFMERGE", "{m}e", "{m}a", "{m}b")  # a dense input: dense
    same(pair, "GET", "{m}e")
    same(pair, "PFMERGE", "{m}a", "{m}c")  # into an existing one, itself included
    same(pair, "GET", "{m}a")
    same(pair, "PFMERGE", "{m}f")  # no sources: an empty HLL
    same(pair, "GET", "{m}f")
    same(pair, "PFCOUNT", "{m}a", "{m}e")


def test_changes_keep_the_ttl(pair):
    same(pair, "PFADD", "t", "a")
    same(pair, "EXPIRE", "t", 100)
    same(pair, "PFADD", "t", *elements(50, 9))  # sparse: rewritten
    same(pair, "TTL", "t")
    same(pair, "PFADD", "t", *elements(3000, 10))  # dense: in place
    same(pair, "PFCOUNT", "t")
    same(pair, "PFMERGE", "t", "t")
    same(pair, "TTL", "t")


def test_errors(pair):
    same(pair, "SET", "s", "not an hll")
    same(pair, "SET", "n", "12345")
    same(pair, "RPUSH", "l", "x")
    for key in ("s", "n", "l"):
        same(pair, "PFADD", key, "x")
        same(pair, "PFCOUNT", key)
        same(pair, "PFMERGE", "dst", key)
        same(pair, "PFCOUNT", "missing", key)
    same(pair, "EXISTS", "dst")
    same(pair, "PFADD")
    same(pair, "PFCOUNT")
    same(pair, "PFMERGE")
    # A dense header on the wrong size, and sparse runs that do not add up.
    same(pair, "SET", "d", b"HYLL\x00\x00\x00\x00" + b"\x00" * 8 + b"\x00" * 100)
    same(pair, "PFCOUNT", "d")
    bad = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80" + b"\x40\x10"
    same(pair, "SET", "bad", bad)
    same(pair, "PFCOUNT", "bad")
    same(pair, "PFADD", "bad", "x", "y", "z")
    same(pair, "PFMERGE", "dst2", "bad")
    same(pair, "PFCOUNT", "bad", "missing")
    same(pair, "PFSELFTEST")


def test_values_move_between_the_servers(pair):
    a, b = pair
    for i, n in enumerate((5, 500, 20000)):
        key = "h%d" % i
        b.execute_command("PFADD", key, *elements(n, i))
        raw = b.execute_command("GET", key)
        a.execute_command("SET", key, raw)
        assert a.execute_command("PFCOUNT", key) == b.execute_command("PFCOUNT", key)
        a.execute_command("PFADD", key, "more", "again")
        b.execute_command("PFADD", key, "more", "again")
        assert a.execute_command("GET", key) == b.execute_command("GET", key)
        dumped = a.execute_command("DUMP", key)
        b.execute_command("RESTORE", key + ":back", 0, dumped)
        assert b.execute_command("GET", key + ":back") == a.execute_command("GET", key)


def test_sparse_limit_is_a_setting(pair):
    a, b = pair
    for c in (a, b):
        c.execute_command("CONFIG", "SET", "hll-sparse-max-bytes", "200")
    try:
        same(pair, "PFADD", "h", *elements(100, 5))
        assert len(same(pair, "GET", "h")) == 12304
    finally:
        for c in (a, b):
            c.execute_command("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
    same(pair, "CONFIG", "GET", "hll-sparse-max-bytes")


@pytest.mark.skipif(TARGET == "redis", reason="strata's shards")
def test_across_shards(server_factory):
    s = server_factory(threads=3)
    c = s.client()
    keys = ["hll:%d" % i for i in range(12)]  # no hash tags: spread over the shards
    everything = []
    for i, k in enumerate(keys):
        batch = elements(300 * (i + 1), i)
        everything += batch
        c.pfadd(k, *batch)
    before = int(c.info("stats")["multi_shard_commands"])
    union = c.pfcount(*keys)
    c.pfadd("one{x}", *everything)
    assert union == c.pfcount("one{x}")
    assert c.pfmerge("merged", *keys)
    assert c.pfcount("merged") == union
    # The same registers as one key that saw every element (headers differ in the cache).
    assert c.get("merged")[16:] == c.get("one{x}")[16:]
    assert int(c.info("stats")["multi_shard_commands"]) >= before + 2
    c.close()


def test_pfdebug(pair):
    same(pair, "PFADD", "h", *elements(20, 1))
    for sub in ("ENCODING", "DECODE", "GETREG", "ENCODING", "DECODE", "TODENSE"):
        same(pair, "PFDEBUG", sub, "h")
    same(pair, "PFADD", "s", "a", "b")
    same(pair, "PFDEBUG", "TODENSE", "s")
    same(pair, "GET", "s")
    same(pair, "PFDEBUG", "GETREG", "missing")
    same(pair, "PFDEBUG", "FROB", "h")
    same(pair, "PFDEBUG", "GETREG", "h", "extra")
    same(pair, "SET", "x", "plain")
    same(pair, "PFDEBUG", "ENCODING", "x")
    same(pair, "PFDEBUG", "ENCODING")
