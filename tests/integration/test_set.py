"""Set commands: SADD SREM SISMEMBER SMISMEMBER SCARD SMEMBERS SRANDMEMBER SPOP SMOVE SINTER
SINTERCARD SINTERSTORE SUNION SUNIONSTORE SDIFF SDIFFSTORE SSCAN, the intset, listpack and
hashtable encodings and their limits, WRONGTYPE, binary members, keys on several shards,
RESP3 replies, memory accounting, and atomicity of the multi-key commands across shards.

Every expected value was checked against redis-server. Redis 7.0 keeps small sets of
strings in a hashtable (the listpack encoding of sets came with 7.2), so the expected
encoding of a small non-integer set depends on the target (LISTPACK below).
redis-py strips the "ERR " prefix from error replies, so patterns below start after it.
"""
import threading
import time

import pytest
import redis

from conftest import TARGET
from helpers import NOT_INT, SYNTAX, WRONGTYPE, call, keys_on_distinct_shards, resp, shard_of
from helpers import wait_for

strata_only = pytest.mark.skipif(TARGET == "redis", reason="strata-specific")

# Members enough to pass the default set-max-intset-entries (512) and
# set-max-listpack-entries (128).
BIG = 600
OUT_OF_RANGE_POSITIVE = "^value is out of range, must be positive$"
# Key groups: one shard (always), and (probably, see test_keys_span_shards) several.
SPREAD = [("a", "b", "c", "d"), ("a{1}", "b{2}", "c{3}", "d{4}")]
SPREAD_IDS = ["same-key-shape", "hashtags"]


def arity(name):
    return "^wrong number of arguments for '%s' command$" % name


def redis_version(c):
    return tuple(int(x) for x in c.info("server")["redis_version"].split(".")[:2])


@pytest.fixture
def lp(server):
    """The encoding of a small set of strings: listpack (strata, Redis >= 7.2), or
    hashtable (Redis 7.0)."""
    c = server.client(decode_responses=True)
    try:
        if TARGET == "redis" and redis_version(c) < (7, 2):
            return "hashtable"
        return "listpack"
    finally:
        c.close()


def has_set_listpack(c):
    return TARGET != "redis" or redis_version(c) >= (7, 2)


def sadd(c, key, members):
    """One SADD of all members; returns them as a set of str."""
    members = [str(m) for m in members]
    c.execute_command("SADD", key, *members)
    return set(members)


def smembers(c, key):
    return set(call(c, "SMEMBERS", key))


def encoding(c, key):
    return call(c, "OBJECT", "ENCODING", key)


def sscan_all(c, key, *opts):
    """A full SSCAN iteration; returns (members in the order seen, number of calls)."""
    cursor, seen, calls = "0", [], 0
    while True:
        cursor, batch = call(c, "SSCAN", key, cursor, *opts)
        calls += 1
        seen += batch
        if cursor in ("0", b"0"):
            return seen, calls
        assert calls < 100000


# ---------------------------------------------------------------- SADD SCARD SMEMBERS

def test_sadd_counts_only_new_members(rc):
    assert rc.execute_command("SADD", "s", "a", "b", "c") == 3
    assert rc.execute_command("SADD", "s", "a", "d") == 1
    assert rc.execute_command("SCARD", "s") == 4
    assert smembers(rc, "s") == {"a", "b", "c", "d"}
    assert rc.execute_command("TYPE", "s") == "set"


def test_sadd_duplicates_in_one_call(rc):
    assert rc.execute_command("SADD", "s", "x", "x", "x") == 1
    assert rc.execute_command("SADD", "i", "1", "1", "2", "1") == 2
    assert rc.execute_command("SCARD", "s") == 1
    assert smembers(rc, "i") == {"1", "2"}


def test_sadd_empty_member_and_numeric_lookalikes(rc):
    members = ["", "0", "-0", "01", "+1", " 1", "1.0", "1e3", "9223372036854775808",
               "-9223372036854775808", "9223372036854775807"]
    assert rc.execute_command("SADD", "s", *members) == len(members)
    assert smembers(rc, "s") == set(members)
    for m in members:
        assert rc.execute_command("SISMEMBER", "s", m) == 1
    assert rc.execute_command("SISMEMBER", "s", "1") == 0
    assert rc.execute_command("SISMEMBER", "s", "-1") == 0


def test_scard_and_smembers_missing_key(rc):
    assert rc.execute_command("SCARD", "nokey") == 0
    assert call(rc, "SMEMBERS", "nokey") == []


@pytest.mark.parametrize("n", [5, 100, BIG, 3000])
def test_smembers_integers_and_strings(rc, n):
    ints = sadd(rc, "i", range(-(n // 2), n - n // 2))
    strs = sadd(rc, "s", ("m%d" % i for i in range(n)))
    assert rc.execute_command("SCARD", "i") == n
    assert smembers(rc, "i") == ints
    assert smembers(rc, "s") == strs
    assert len(call(rc, "SMEMBERS", "s")) == n


def test_intset_members_come_back_in_ascending_order(rc):
    rc.execute_command("SADD", "s", "5", "-3", "100000", "0", "-70000", "7")
    assert call(rc, "SMEMBERS", "s") == ["-70000", "-3", "0", "5", "7", "100000"]
    assert encoding(rc, "s") == "intset"


def test_sadd_reply_bytes(raw):
    c = raw()
    c.send(resp("SADD", "s", "a", "b", "a") + resp("SCARD", "s") + resp("SMEMBERS", "nokey")
           + resp("SADD", "i", "1") + resp("SMEMBERS", "i"))
    assert c.read_reply() == b":2\r\n"
    assert c.read_reply() == b":2\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\n1\r\n"


@pytest.mark.parametrize("name,args", [
    ("sadd", ["s"]), ("srem", ["s"]), ("sismember", ["s"]), ("sismember", ["s", "a", "b"]),
    ("smismember", ["s"]), ("scard", []), ("scard", ["s", "t"]), ("smembers", []),
    ("srandmember", []), ("spop", []), ("smove", ["a", "b"]),
    ("smove", ["a", "b", "c", "d"]), ("sinter", []), ("sintercard", ["1"]),
    ("sinterstore", ["d"]), ("sunion", []), ("sunionstore", ["d"]), ("sdiff", []),
    ("sdiffstore", ["d"]), ("sscan", ["s"]),
])
def test_arity_errors(rc, name, args):
    with pytest.raises(redis.ResponseError, match=arity(name)):
        rc.execute_command(name.upper(), *args)


# ---------------------------------------------------------------- SREM

def test_srem(rc):
    sadd(rc, "s", ["a", "b", "c", "d"])
    assert rc.execute_command("SREM", "s", "a", "x", "a") == 1
    assert rc.execute_command("SREM", "s", "b", "c") == 2
    assert smembers(rc, "s") == {"d"}
    assert rc.execute_command("SREM", "nokey", "a") == 0


@pytest.mark.parametrize("members", [["1", "2", "3"], ["a", "b", "c"],
                                     ["m%d" % i for i in range(BIG)],
                                     [str(i) for i in range(BIG)]],
                         ids=["intset", "listpack", "hashtable", "int-hashtable"])
def test_srem_last_member_deletes_key(rc, members):
    sadd(rc, "s", members)
    assert rc.execute_command("SREM", "s", *members[1:]) == len(members) - 1
    assert rc.execute_command("EXISTS", "s") == 1
    assert rc.execute_command("SREM", "s", members[0], "extra") == 1
    assert rc.execute_command("EXISTS", "s") == 0
    assert rc.execute_command("SCARD", "s") == 0


def test_srem_non_integer_from_intset(rc):
    sadd(rc, "s", [1, 2, 3])
    assert rc.execute_command("SREM", "s", "a", "01", "+1", "1.0") == 0
    assert rc.execute_command("SREM", "s", "2") == 1
    assert encoding(rc, "s") == "intset"


# ---------------------------------------------------------------- SISMEMBER SMISMEMBER

@pytest.mark.parametrize("members", [[1, 2, 300000], ["a", "b"],
                                     ["m%d" % i for i in range(BIG)]],
                         ids=["intset", "listpack", "hashtable"])
def test_sismember_and_smismember(rc, members):
    s = sadd(rc, "s", members)
    first = sorted(s)[0]
    assert rc.execute_command("SISMEMBER", "s", first) == 1
    assert rc.execute_command("SISMEMBER", "s", "nope") == 0
    assert rc.execute_command("SMISMEMBER", "s", first, "nope", first) == [1, 0, 1]
    assert rc.execute_command("SISMEMBER", "nokey", "a") == 0
    assert rc.execute_command("SMISMEMBER", "nokey", "a", "b") == [0, 0]


def test_smismember_reply_bytes(raw):
    c = raw()
    c.send(resp("SADD", "s", "a") + resp("SMISMEMBER", "s", "a", "b")
           + resp("SISMEMBER", "s", "a"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"*2\r\n:1\r\n:0\r\n"
    assert c.read_reply() == b":1\r\n"


# ---------------------------------------------------------------- SRANDMEMBER

def test_srandmember_missing_key(rc):
    assert rc.execute_command("SRANDMEMBER", "nokey") is None
    assert call(rc, "SRANDMEMBER", "nokey", "5") == []
    assert call(rc, "SRANDMEMBER", "nokey", "-5") == []
    assert call(rc, "SRANDMEMBER", "nokey", "0") == []


MEMBER_SHAPES = [[1, 2, 3, 4, 5], ["a", "b", "c", "d", "e"], list(range(BIG)),
                 ["m%d" % i for i in range(1000)]]
SHAPE_IDS = ["intset", "listpack", "int-hashtable", "hashtable"]


@pytest.mark.parametrize("members", MEMBER_SHAPES, ids=SHAPE_IDS)
def test_srandmember_counts(rc, members):
    s = sadd(rc, "s", members)
    n = len(s)
    assert rc.execute_command("SRANDMEMBER", "s") in s
    assert call(rc, "SRANDMEMBER", "s", "0") == []
    for count in (1, 2, n // 3, n // 2, n - 1, n, n + 1, 9223372036854775807):
        if count < 1:
            continue
        got = call(rc, "SRANDMEMBER", "s", count)
        assert len(got) == min(count, n)
        assert len(set(got)) == len(got)
        assert set(got) <= s
    for count in (-1, -3, -(n + 5)):
        got = call(rc, "SRANDMEMBER", "s", count)
        assert len(got) == -count
        assert set(got) <= s
    assert smembers(rc, "s") == s  # read-only


def test_srandmember_negative_count_repeats(rc):
    sadd(rc, "s", ["a", "b"])
    got = call(rc, "SRANDMEMBER", "s", "-50")
    assert len(got) == 50
    assert set(got) == {"a", "b"}  # 2^-49 chance of missing one


def test_srandmember_is_random(rc):
    s = sadd(rc, "s", ["m%d" % i for i in range(1000)])
    seen = set()
    for _ in range(200):
        seen.add(rc.execute_command("SRANDMEMBER", "s"))
    assert len(seen) > 50
    seen = set(call(rc, "SRANDMEMBER", "s", "-2000"))
    assert len(seen) > 500 and seen <= s


def test_srandmember_errors(rc):
    sadd(rc, "s", ["a"])
    for key in ("s", "nokey"):
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("SRANDMEMBER", key, "abc")
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("SRANDMEMBER", key, "1.5")
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("SRANDMEMBER", key, "9223372036854775808")
        with pytest.raises(redis.ResponseError,
                           match="^value is out of range, value must between "
                                 "-9223372036854775807 and 9223372036854775807$"):
            rc.execute_command("SRANDMEMBER", key, "-9223372036854775808")
        with pytest.raises(redis.ResponseError, match=SYNTAX):
            rc.execute_command("SRANDMEMBER", key, "1", "2")


# ---------------------------------------------------------------- SPOP

def test_spop_missing_key(rc):
    assert rc.execute_command("SPOP", "nokey") is None
    assert call(rc, "SPOP", "nokey", "3") == []
    assert call(rc, "SPOP", "nokey", "0") == []


@pytest.mark.parametrize("members", MEMBER_SHAPES, ids=SHAPE_IDS)
def test_spop_single_until_empty(rc, members):
    s = sadd(rc, "s", members)
    popped = set()
    for i in range(len(s)):
        m = rc.execute_command("SPOP", "s")
        assert m in s and m not in popped
        popped.add(m)
        if i % 97 == 0:
            assert rc.execute_command("SCARD", "s") == len(s) - len(popped)
    assert popped == s
    assert rc.execute_command("EXISTS", "s") == 0
    assert rc.execute_command("SPOP", "s") is None


@pytest.mark.parametrize("members", MEMBER_SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 1.0, 2.0])
def test_spop_with_count(rc, members, fraction):
    s = sadd(rc, "s", members)
    rc.execute_command("EXPIRE", "s", "100")
    count = max(1, int(len(s) * fraction))
    got = call(rc, "SPOP", "s", count)
    assert len(got) == min(count, len(s))
    assert len(set(got)) == len(got)
    assert set(got) <= s
    left = smembers(rc, "s")
    assert left | set(got) == s
    assert not left & set(got)
    if count >= len(s):
        assert rc.execute_command("EXISTS", "s") == 0
    else:
        assert rc.execute_command("SCARD", "s") == len(s) - count
        assert 99 <= rc.execute_command("TTL", "s") <= 100


def test_spop_count_zero_and_huge(rc):
    s = sadd(rc, "s", ["a", "b", "c"])
    assert call(rc, "SPOP", "s", "0") == []
    assert rc.execute_command("SCARD", "s") == 3
    assert set(call(rc, "SPOP", "s", "9223372036854775807")) == s
    assert rc.execute_command("EXISTS", "s") == 0


def test_spop_intset_keeps_its_encoding(rc):
    sadd(rc, "s", range(100))
    call(rc, "SPOP", "s", "90")
    assert encoding(rc, "s") == "intset"
    call(rc, "SPOP", "s", "2")
    assert encoding(rc, "s") == "intset"
    assert rc.execute_command("SCARD", "s") == 8


def test_spop_errors(rc):
    sadd(rc, "s", ["a"])
    for key in ("s", "nokey"):
        for count in ("abc", "-1", "1.5", "9223372036854775808"):
            with pytest.raises(redis.ResponseError, match=OUT_OF_RANGE_POSITIVE):
                rc.execute_command("SPOP", key, count)
        with pytest.raises(redis.ResponseError, match=SYNTAX):
            rc.execute_command("SPOP", key, "1", "2")
    assert smembers(rc, "s") == {"a"}


def test_spop_reply_bytes(raw):
    c = raw()
    c.send(resp("SADD", "s", "a") + resp("SPOP", "s", "5") + resp("SPOP", "s")
           + resp("SADD", "s", "b") + resp("SPOP", "s"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\na\r\n"
    assert c.read_reply() == b"$-1\r\n"
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"$1\r\nb\r\n"


# ---------------------------------------------------------------- SMOVE

@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_smove(rc, keys):
    src, dst = keys[0], keys[1]
    sadd(rc, src, ["a", "b", "1"])
    sadd(rc, dst, ["c"])
    assert rc.execute_command("SMOVE", src, dst, "a") == 1
    assert smembers(rc, src) == {"b", "1"}
    assert smembers(rc, dst) == {"a", "c"}
    assert rc.execute_command("SMOVE", src, dst, "nope") == 0
    # Already in the destination: still 1, and gone from the source.
    sadd(rc, dst, ["b"])
    assert rc.execute_command("SMOVE", src, dst, "b") == 1
    assert smembers(rc, src) == {"1"}
    # The last member: the source goes, a missing destination is created.
    assert rc.execute_command("SMOVE", src, keys[2], "1") == 1
    assert rc.execute_command("EXISTS", src) == 0
    assert smembers(rc, keys[2]) == {"1"}
    assert encoding(rc, keys[2]) == "intset"
    assert rc.execute_command("SMOVE", src, dst, "a") == 0


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_smove_keeps_ttls_and_converts(rc, keys, lp):
    src, dst = keys[0], keys[1]
    sadd(rc, src, ["x", "y"])
    sadd(rc, dst, [1, 2, 3])
    rc.execute_command("EXPIRE", src, "100")
    rc.execute_command("EXPIRE", dst, "200")
    assert rc.execute_command("SMOVE", src, dst, "x") == 1
    assert 99 <= rc.execute_command("TTL", src) <= 100
    assert 199 <= rc.execute_command("TTL", dst) <= 200
    assert encoding(rc, dst) == lp
    assert smembers(rc, dst) == {"1", "2", "3", "x"}


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_smove_big_sets(rc, keys):
    src, dst = keys[0], keys[1]
    s = sadd(rc, src, ("m%d" % i for i in range(BIG)))
    d = sadd(rc, dst, ("n%d" % i for i in range(BIG)))
    for i in range(0, BIG, 50):
        assert rc.execute_command("SMOVE", src, dst, "m%d" % i) == 1
    moved = {"m%d" % i for i in range(0, BIG, 50)}
    assert smembers(rc, src) == s - moved
    assert smembers(rc, dst) == d | moved


def test_smove_same_key(rc):
    sadd(rc, "s", ["a", "b"])
    assert rc.execute_command("SMOVE", "s", "s", "a") == 1
    assert rc.execute_command("SMOVE", "s", "s", "z") == 0
    assert smembers(rc, "s") == {"a", "b"}
    assert rc.execute_command("SMOVE", "nokey", "nokey", "a") == 0


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_smove_wrong_types(rc, keys):
    src, dst, other = keys[0], keys[1], keys[2]
    sadd(rc, src, ["a"])
    rc.set(dst, "string")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("SMOVE", src, dst, "a")
    # Nothing moved.
    assert smembers(rc, src) == {"a"}
    assert rc.get(dst) == "string"
    # Wrong-type source.
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("SMOVE", dst, src, "a")
    # A missing source answers 0 before the destination's type is looked at.
    assert rc.execute_command("SMOVE", other, dst, "a") == 0
    # A member that is not there, with a wrong-type destination: still WRONGTYPE.
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("SMOVE", src, dst, "nope")


# ---------------------------------------------------------------- SINTER SUNION SDIFF

@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_sinter_sunion_sdiff(rc, keys):
    a, b, c, missing = keys
    sadd(rc, a, ["x", "y", "z", "1", "2"])
    sadd(rc, b, ["y", "z", "w", "2"])
    sadd(rc, c, ["z", "2", "q"])
    assert set(call(rc, "SINTER", a, b, c)) == {"z", "2"}
    assert set(call(rc, "SINTER", a, b)) == {"y", "z", "2"}
    assert set(call(rc, "SINTER", a)) == {"x", "y", "z", "1", "2"}
    assert set(call(rc, "SUNION", a, b, c)) == {"x", "y", "z", "1", "2", "w", "q"}
    assert set(call(rc, "SDIFF", a, b, c)) == {"x", "1"}
    assert set(call(rc, "SDIFF", a, b)) == {"x", "1"}
    assert set(call(rc, "SDIFF", b, a)) == {"w"}
    # A missing key is an empty set.
    assert call(rc, "SINTER", a, missing, b) == []
    assert set(call(rc, "SUNION", missing, c)) == {"z", "2", "q"}
    assert set(call(rc, "SDIFF", a, missing)) == {"x", "y", "z", "1", "2"}
    assert call(rc, "SDIFF", missing, a) == []
    assert call(rc, "SINTER", missing) == []
    assert call(rc, "SUNION", missing) == []
    # Same key more than once.
    assert set(call(rc, "SINTER", a, a)) == {"x", "y", "z", "1", "2"}
    assert set(call(rc, "SUNION", a, a)) == {"x", "y", "z", "1", "2"}
    assert call(rc, "SDIFF", a, a) == []
    assert call(rc, "SDIFF", a, b, a) == []


def test_sunion_and_sdiff_of_integers_are_ascending(rc):
    # The result is built in an intset, so it comes back sorted.
    sadd(rc, "a", [30, 10, -5, 7])
    sadd(rc, "b", [20, 10, -100])
    assert call(rc, "SUNION", "a", "b") == ["-100", "-5", "7", "10", "20", "30"]
    assert call(rc, "SDIFF", "a", "b") == ["-5", "7", "30"]


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_set_algebra_big(rc, keys):
    a, b, c, _ = keys
    sa = sadd(rc, a, ("m%d" % i for i in range(0, 3000)))
    sb = sadd(rc, b, ("m%d" % i for i in range(0, 3000, 2)))
    sc = sadd(rc, c, ("m%d" % i for i in range(0, 3000, 3)))
    assert set(call(rc, "SINTER", a, b, c)) == sa & sb & sc
    assert set(call(rc, "SUNION", b, c)) == sb | sc
    assert set(call(rc, "SDIFF", a, b, c)) == sa - sb - sc
    # The first set small against big others, and the reverse (both SDIFF algorithms).
    sadd(rc, "small{x}", ["m1", "m2", "m3", "zz"])
    assert set(call(rc, "SDIFF", "small{x}", a, b)) == {"zz"}
    assert set(call(rc, "SDIFF", a, "small{x}")) == sa - {"m1", "m2", "m3"}


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_set_algebra_wrongtype_anywhere(rc, keys):
    a, b, s, missing = keys
    sadd(rc, a, ["x"])
    sadd(rc, b, ["x"])
    rc.set(s, "string")
    for cmd in ("SINTER", "SUNION", "SDIFF"):
        for args in ([s, a], [a, s], [a, b, s], [missing, s], [a, missing, s]):
            with pytest.raises(redis.ResponseError, match=WRONGTYPE):
                rc.execute_command(cmd, *args)
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("SINTERCARD", "2", missing, s)


# ---------------------------------------------------------------- STORE variants

@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_store_variants(rc, keys):
    a, b, c, d = keys
    sadd(rc, a, ["x", "y", "1"])
    sadd(rc, b, ["y", "1", "2"])
    assert rc.execute_command("SINTERSTORE", d, a, b) == 2
    assert smembers(rc, d) == {"y", "1"}
    assert rc.execute_command("SUNIONSTORE", d, a, b) == 4
    assert smembers(rc, d) == {"x", "y", "1", "2"}
    assert rc.execute_command("SDIFFSTORE", d, a, b) == 1
    assert smembers(rc, d) == {"x"}
    # A missing source.
    assert rc.execute_command("SUNIONSTORE", d, c, a) == 3
    assert rc.execute_command("SDIFFSTORE", d, a, c) == 3
    assert rc.execute_command("SINTERSTORE", d, a, c) == 0
    assert rc.execute_command("EXISTS", d) == 0


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
@pytest.mark.parametrize("cmd", ["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"])
def test_store_overwrites_any_type_and_ttl(rc, keys, cmd):
    a, b, _, d = keys
    sadd(rc, a, ["x", "y"])
    sadd(rc, b, ["y", "z"])
    for make in (lambda: rc.set(d, "v", ex=100),
                 lambda: rc.execute_command("HSET", d, "f", "v"),
                 lambda: sadd(rc, d, ["old"]) and rc.expire(d, 100)):
        rc.delete(d)
        make()
        n = rc.execute_command(cmd, d, a, b)
        assert n == {"SINTERSTORE": 1, "SUNIONSTORE": 3, "SDIFFSTORE": 1}[cmd]
        assert rc.execute_command("TYPE", d) == "set"
        assert rc.execute_command("SCARD", d) == n
        assert rc.execute_command("TTL", d) == -1


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_store_empty_result_deletes_destination(rc, keys):
    a, b, c, d = keys
    sadd(rc, a, ["x"])
    sadd(rc, b, ["y"])
    for cmd, args in (("SINTERSTORE", [a, b]), ("SDIFFSTORE", [a, a]),
                      ("SUNIONSTORE", [c]), ("SINTERSTORE", [a, c]), ("SDIFFSTORE", [c, a])):
        rc.set(d, "something")
        assert rc.execute_command(cmd, d, *args) == 0
        assert rc.execute_command("EXISTS", d) == 0
        # Nothing to delete: still 0.
        assert rc.execute_command(cmd, d, *args) == 0


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_store_destination_is_a_source(rc, keys):
    a, b, _, _ = keys
    sadd(rc, a, ["1", "2", "3"])
    sadd(rc, b, ["3", "4"])
    assert rc.execute_command("SUNIONSTORE", a, a, b) == 4
    assert smembers(rc, a) == {"1", "2", "3", "4"}
    assert rc.execute_command("SDIFFSTORE", a, a, b) == 2
    assert smembers(rc, a) == {"1", "2"}
    assert rc.execute_command("SINTERSTORE", b, a, b) == 0
    assert rc.execute_command("EXISTS", b) == 0


@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
@pytest.mark.parametrize("cmd", ["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"])
def test_store_wrongtype_source_leaves_destination(rc, keys, cmd):
    a, s, _, d = keys
    sadd(rc, a, ["x"])
    rc.set(s, "string")
    sadd(rc, d, ["keep"])
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(cmd, d, a, s)
    assert smembers(rc, d) == {"keep"}


def test_store_result_encodings(rc, lp):
    sadd(rc, "i1", range(0, 100))
    sadd(rc, "i2", range(50, 150))
    sadd(rc, "s1", ["a", "b", "1", "2"])
    sadd(rc, "s2", ["b", "1", "2", "c"])
    sadd(rc, "big", ("m%d" % i for i in range(BIG)))
    rc.execute_command("SUNIONSTORE", "d", "i1", "i2")
    assert encoding(rc, "d") == "intset"
    rc.execute_command("SINTERSTORE", "d", "i1", "i2")
    assert encoding(rc, "d") == "intset"
    rc.execute_command("SDIFFSTORE", "d", "i1", "i2")
    assert encoding(rc, "d") == "intset"
    # Integers out of strings: the intersection is stored as an intset.
    rc.execute_command("SINTERSTORE", "d", "s1", "s2")
    assert smembers(rc, "d") == {"b", "1", "2"}
    assert encoding(rc, "d") == lp
    rc.execute_command("SREM", "s1", "b")
    rc.execute_command("SINTERSTORE", "d", "s1", "s2")
    assert encoding(rc, "d") == "intset"
    rc.execute_command("SUNIONSTORE", "d", "s1", "s2")
    assert encoding(rc, "d") == lp
    rc.execute_command("SUNIONSTORE", "d", "big", "s1")
    assert encoding(rc, "d") == "hashtable"
    rc.execute_command("SUNIONSTORE", "d", "i1", "i2", "big")
    assert encoding(rc, "d") == "hashtable"
    # Integers only, past set-max-intset-entries.
    sadd(rc, "i3", range(1000, 1600))
    rc.execute_command("SUNIONSTORE", "d", "i1", "i3")
    assert encoding(rc, "d") == "hashtable"


# ---------------------------------------------------------------- SINTERCARD

@pytest.mark.parametrize("keys", SPREAD, ids=SPREAD_IDS)
def test_sintercard(rc, keys):
    a, b, c, missing = keys
    sadd(rc, a, ("m%d" % i for i in range(100)))
    sadd(rc, b, ("m%d" % i for i in range(0, 100, 2)))
    sadd(rc, c, ("m%d" % i for i in range(0, 100, 5)))
    assert rc.execute_command("SINTERCARD", "1", a) == 100
    assert rc.execute_command("SINTERCARD", "2", a, b) == 50
    assert rc.execute_command("SINTERCARD", "3", a, b, c) == 10
    assert rc.execute_command("SINTERCARD", "3", a, b, c, "LIMIT", "0") == 10
    assert rc.execute_command("SINTERCARD", "3", a, b, c, "LIMIT", "1") == 1
    assert rc.execute_command("SINTERCARD", "3", a, b, c, "limit", "4") == 4
    assert rc.execute_command("SINTERCARD", "3", a, b, c, "LIMIT", "10") == 10
    assert rc.execute_command("SINTERCARD", "3", a, b, c, "LIMIT", "1000") == 10
    assert rc.execute_command("SINTERCARD", "2", a, b, "LIMIT", "5", "LIMIT", "7") == 7
    assert rc.execute_command("SINTERCARD", "2", a, missing) == 0
    assert rc.execute_command("SINTERCARD", "1", missing) == 0
    assert rc.execute_command("SINTERCARD", "2", a, a) == 100
    # Keys named like the options are keys when numkeys says so.
    sadd(rc, "LIMIT", ["m1", "m2"])
    assert rc.execute_command("SINTERCARD", "2", a, "LIMIT") == 2


def test_sintercard_errors(rc):
    sadd(rc, "a", ["x"])
    for numkeys in ("0", "-1", "abc", "1.5"):
        with pytest.raises(redis.ResponseError, match="^numkeys should be greater than 0$"):
            rc.execute_command("SINTERCARD", numkeys, "a")
    with pytest.raises(redis.ResponseError,
                       match="^Number of keys can't be greater than number of args$"):
        rc.execute_command("SINTERCARD", "3", "a", "b")
    for limit in ("-1", "abc"):
        with pytest.raises(redis.ResponseError, match="^LIMIT can't be negative$"):
            rc.execute_command("SINTERCARD", "1", "a", "LIMIT", limit)
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SINTERCARD", "1", "a", "LIMIT")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SINTERCARD", "1", "a", "b")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SINTERCARD", "1", "a", "FOO", "1")


# ---------------------------------------------------------------- SSCAN

def test_sscan_missing_key(rc):
    assert call(rc, "SSCAN", "nokey", "0") == ["0", []]
    assert call(rc, "SSCAN", "nokey", "12345") == ["0", []]


@pytest.mark.parametrize("members", [list(range(100)), ["m%d" % i for i in range(50)]],
                         ids=["intset", "small-strings"])
def test_sscan_small_set_in_one_call(rc, members):
    s = sadd(rc, "s", members)
    cursor, got = call(rc, "SSCAN", "s", "0", "COUNT", "1")
    if encoding(rc, "s") != "hashtable":
        assert cursor == "0"
        assert set(got) == s and len(got) == len(s)
    seen, _ = sscan_all(rc, "s")
    assert set(seen) == s


@pytest.mark.parametrize("count", [None, 1, 7, 100, 10000])
def test_sscan_full_iteration_over_5000_members(rc, count):
    s = sadd(rc, "s", ("member:%d" % i for i in range(5000)))
    opts = [] if count is None else ["COUNT", count]
    seen, calls = sscan_all(rc, "s", *opts)
    assert set(seen) == s
    if count is None or count < 100:
        assert calls > 10


def test_sscan_5000_integers(rc):
    s = sadd(rc, "s", range(5000))
    assert encoding(rc, "s") == "hashtable"
    seen, calls = sscan_all(rc, "s", "COUNT", "50")
    assert set(seen) == s and calls > 1


def test_sscan_match(rc):
    s = sadd(rc, "s", ("m%d" % i for i in range(1000)))
    seen, _ = sscan_all(rc, "s", "MATCH", "m1*", "COUNT", "50")
    assert set(seen) == {m for m in s if m.startswith("m1")}
    sadd(rc, "i", range(30))
    cursor, got = call(rc, "SSCAN", "i", "0", "MATCH", "*[13]")
    assert cursor == "0"
    assert set(got) == {str(i) for i in range(30) if str(i)[-1] in "13"}
    seen, _ = sscan_all(rc, "s", "MATCH", "nomatch*")
    assert seen == []


def test_sscan_while_the_set_grows(rc):
    s = sadd(rc, "s", ("m%d" % i for i in range(500)))
    cursor, seen, extra, i = "0", set(), 0, 0
    while True:
        cursor, got = call(rc, "SSCAN", "s", cursor, "COUNT", "20")
        seen.update(got)
        rc.execute_command("SADD", "s", *("g%d" % (extra + j) for j in range(50)))
        extra += 50
        i += 1
        if cursor == "0":
            break
        assert i < 2000
    assert s <= seen


def test_sscan_errors(rc):
    sadd(rc, "s", ["a"])
    for key in ("s", "nokey"):
        for cursor in ("abc", "1.5", " 1", "1 ", "+", "-", "0x1", "18446744073709551616"):
            with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
                rc.execute_command("SSCAN", key, cursor)
    # Cursors are read as strtoul reads them; a small set comes back whole whatever the
    # cursor.
    for cursor in ("", "+0", "-0", "-1", "18446744073709551615"):
        assert call(rc, "SSCAN", "s", cursor) == ["0", ["a"]]
    for opts in (["COUNT", "0"], ["COUNT", "-1"], ["COUNT"], ["MATCH"], ["FOO", "bar"],
                 ["TYPE", "set"]):
        with pytest.raises(redis.ResponseError, match=SYNTAX):
            rc.execute_command("SSCAN", "s", "0", *opts)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("SSCAN", "s", "0", "COUNT", "abc")
    # A missing key is answered before the options are read.
    assert call(rc, "SSCAN", "nokey", "0", "COUNT", "0") == ["0", []]


def test_sscan_reply_bytes(raw):
    c = raw()
    c.send(resp("SADD", "s", "a") + resp("SSCAN", "s", "0") + resp("SSCAN", "nokey", "0"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*0\r\n"


# ---------------------------------------------------------------- encodings

def test_encoding_intset_limits(rc):
    sadd(rc, "s", range(512))
    assert encoding(rc, "s") == "intset"
    rc.execute_command("SADD", "s", "512")
    assert encoding(rc, "s") == "hashtable"
    # Removing members never converts back.
    rc.execute_command("SREM", "s", *range(500))
    assert encoding(rc, "s") == "hashtable"


def test_encoding_intset_holds_every_int64(rc):
    sadd(rc, "s", [1, 2])
    for v in (1 << 15, 1 << 16, 1 << 31, 1 << 40, -(1 << 62), 9223372036854775807,
              -9223372036854775808):
        rc.execute_command("SADD", "s", str(v))
        assert encoding(rc, "s") == "intset"
    assert rc.execute_command("SISMEMBER", "s", "9223372036854775807") == 1
    assert rc.execute_command("SISMEMBER", "s", str(1 << 31)) == 1
    assert rc.execute_command("SCARD", "s") == 9
    rc.execute_command("SADD", "s", "9223372036854775808")
    assert encoding(rc, "s") != "intset"
    assert rc.execute_command("SISMEMBER", "s", "9223372036854775808") == 1


def test_encoding_intset_to_listpack_on_a_string(rc, lp):
    sadd(rc, "s", [1, 2, 3])
    assert encoding(rc, "s") == "intset"
    rc.execute_command("SADD", "s", "a")
    assert encoding(rc, "s") == lp
    rc.execute_command("SREM", "s", "a")
    assert encoding(rc, "s") == lp
    assert smembers(rc, "s") == {"1", "2", "3"}
    for m in ("01", "+1", "1.5", " 1"):
        sadd(rc, "t" + m, [5, m])
        assert encoding(rc, "t" + m) == lp


def test_encoding_listpack_limits(rc, lp):
    sadd(rc, "s", ("m%d" % i for i in range(128)))
    assert encoding(rc, "s") == lp
    rc.execute_command("SADD", "s", "m128")
    assert encoding(rc, "s") == "hashtable"
    sadd(rc, "l", ["x" * 64])
    assert encoding(rc, "l") == lp
    rc.execute_command("SADD", "l", "y" * 65)
    assert encoding(rc, "l") == "hashtable"
    rc.execute_command("SREM", "l", "y" * 65)
    assert encoding(rc, "l") == "hashtable"
    # An intset meeting a long string goes straight to hashtable.
    sadd(rc, "i", [1, 2])
    rc.execute_command("SADD", "i", "z" * 65)
    assert encoding(rc, "i") == "hashtable"


def test_encoding_of_new_sets_from_one_sadd(rc, lp):
    sadd(rc, "a", range(200))
    assert encoding(rc, "a") == "intset"
    sadd(rc, "b", range(600))
    assert encoding(rc, "b") == "hashtable"
    sadd(rc, "c", ["x"] + list(range(100)))
    assert encoding(rc, "c") == lp
    sadd(rc, "d", [1, "x"])
    assert encoding(rc, "d") == lp


def test_object_encoding_missing_key(rc):
    assert rc.execute_command("OBJECT", "ENCODING", "nokey") is None


@pytest.fixture
def fresh(server_factory):
    """A client of a server of its own (tests that change the config)."""
    c = server_factory().client(decode_responses=True)
    yield c
    c.close()


def test_config_set_max_intset_entries(fresh):
    assert fresh.config_get("set-max-intset-entries") == {"set-max-intset-entries": "512"}
    fresh.config_set("set-max-intset-entries", "10")
    sadd(fresh, "s", range(10))
    assert encoding(fresh, "s") == "intset"
    fresh.execute_command("SADD", "s", "10")
    assert encoding(fresh, "s") == "hashtable"
    # An existing bigger intset stays one until it is written.
    fresh.config_set("set-max-intset-entries", "512")
    sadd(fresh, "t", range(20))
    fresh.config_set("set-max-intset-entries", "5")
    assert encoding(fresh, "t") == "intset"
    assert fresh.execute_command("SREM", "t", "0") == 1
    assert encoding(fresh, "t") == "intset"
    fresh.execute_command("SADD", "t", "100")
    assert encoding(fresh, "t") == "hashtable"
    fresh.config_set("set-max-intset-entries", "0")
    sadd(fresh, "u", [1])
    assert encoding(fresh, "u") != "intset"


def test_config_set_listpack_limits(fresh):
    if not has_set_listpack(fresh):
        pytest.skip("sets have no listpack encoding before Redis 7.2")
    cfg = fresh.config_get("set-max-listpack-*")
    assert cfg == {"set-max-listpack-entries": "128", "set-max-listpack-value": "64"}
    fresh.config_set("set-max-listpack-entries", "4")
    sadd(fresh, "s", ["a", "b", "c", "d"])
    assert encoding(fresh, "s") == "listpack"
    fresh.execute_command("SADD", "s", "e")
    assert encoding(fresh, "s") == "hashtable"
    fresh.config_set("set-max-listpack-value", "3")
    sadd(fresh, "t", ["abc"])
    assert encoding(fresh, "t") == "listpack"
    fresh.execute_command("SADD", "t", "abcd")
    assert encoding(fresh, "t") == "hashtable"
    # An intset whose integers are longer than the value limit skips the listpack.
    sadd(fresh, "i", [12345])
    fresh.execute_command("SADD", "i", "x")
    assert encoding(fresh, "i") == "hashtable"
    # SADD sizes the set for all its arguments, repeats included.
    fresh.config_set("set-max-listpack-entries", "128")
    sadd(fresh, "r", ["a"])
    fresh.execute_command("SADD", "r", *(["a"] * 129))
    assert encoding(fresh, "r") == "hashtable"
    assert fresh.execute_command("SCARD", "r") == 1


# ---------------------------------------------------------------- WRONGTYPE

@pytest.mark.parametrize("args", [
    ["SADD", "k", "a"], ["SREM", "k", "a"], ["SISMEMBER", "k", "a"],
    ["SMISMEMBER", "k", "a"], ["SCARD", "k"], ["SMEMBERS", "k"], ["SRANDMEMBER", "k"],
    ["SRANDMEMBER", "k", "2"], ["SPOP", "k"], ["SPOP", "k", "2"], ["SMOVE", "k", "s", "a"],
    ["SMOVE", "s", "k", "a"], ["SINTER", "k"], ["SINTERCARD", "1", "k"],
    ["SINTERSTORE", "d", "k"], ["SUNION", "k"], ["SUNIONSTORE", "d", "k"], ["SDIFF", "k"],
    ["SDIFF", "s", "k"], ["SDIFFSTORE", "d", "k"], ["SSCAN", "k", "0"],
])
@pytest.mark.parametrize("kind", ["string", "hash"])
def test_set_commands_on_other_types(rc, args, kind):
    sadd(rc, "s", ["a"])
    if kind == "string":
        rc.set("k", "v")
    else:
        rc.execute_command("HSET", "k", "f", "v")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(*args)
    assert rc.execute_command("TYPE", "k") == kind
    assert smembers(rc, "s") == {"a"}


@pytest.mark.parametrize("args", [["GET", "s"], ["APPEND", "s", "x"], ["INCR", "s"],
                                  ["HGET", "s", "f"], ["HSET", "s", "f", "v"]])
def test_other_commands_on_a_set(rc, args):
    sadd(rc, "s", ["a"])
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(*args)


def test_set_and_del_replace_a_set(rc):
    sadd(rc, "s", ("m%d" % i for i in range(BIG)))
    rc.set("s", "now a string")
    assert rc.get("s") == "now a string"
    sadd(rc, "t", [1, 2])
    assert rc.delete("t") == 1
    assert rc.exists("t") == 0


# ---------------------------------------------------------------- binary members

BINARY = [b"\x00", b"a\x00b", b"\xff\xfe", b"\r\n", b"", b"\x80" * 70, b"1\x00"]


def test_binary_members(rb):
    assert rb.sadd("s", *BINARY) == len(BINARY)
    assert rb.smembers("s") == set(BINARY)
    for m in BINARY:
        assert rb.sismember("s", m)
    assert not rb.sismember("s", b"\x00\x00")
    assert rb.smismember("s", [b"\x00", b"x"]) == [1, 0]
    rb.sadd("t", b"\x00", b"\xff\xfe", b"other")
    assert rb.sinter("s", "t") == {b"\x00", b"\xff\xfe"}
    assert rb.sunion("s", "t") == set(BINARY) | {b"other"}
    assert rb.sdiff("t", "s") == {b"other"}
    assert rb.smove("s", "t", b"a\x00b")
    assert rb.sismember("t", b"a\x00b")
    assert set(rb.sscan_iter("s")) == set(BINARY) - {b"a\x00b"}
    assert rb.srem("s", b"\r\n", b"") == 2


@pytest.mark.parametrize("keys", [("a", "b"), ("a{1}", "b{2}")])
def test_binary_members_hashtable(rb, keys):
    members = {bytes([i % 256, (i * 7) % 256, 0]) + b"%d" % i for i in range(BIG)}
    rb.sadd(keys[0], *members)
    assert rb.object("encoding", keys[0]) == b"hashtable"
    assert rb.smembers(keys[0]) == members
    assert rb.sunionstore(keys[1], keys[0]) == BIG
    assert rb.smembers(keys[1]) == members
    cursor, seen = 0, set()
    while True:
        cursor, got = rb.sscan(keys[0], cursor, count=100)
        seen.update(got)
        if cursor == 0:
            break
    assert seen == members


def test_large_members(rb):
    big = b"x" * 1000000
    assert rb.sadd("s", big, b"small") == 2
    assert rb.sismember("s", big)
    assert rb.smembers("s") == {big, b"small"}
    assert rb.spop("s", 5) and not rb.exists("s")


# ---------------------------------------------------------------- keys, TTL, RENAME

@pytest.mark.parametrize("n", [3, 50, BIG])
@pytest.mark.parametrize("src,dst", [("s", "t"), ("a{1}", "b{2}")])
def test_rename_copy_move_sets(r, n, src, dst):
    if n == 50:
        members = sadd(r, src, ("m%d" % i for i in range(n)))
    else:
        members = sadd(r, src, range(n))
    r.expire(src, 100)
    before = encoding(r, src)
    assert r.rename(src, dst)
    assert smembers(r, dst) == members
    assert 99 <= r.ttl(dst) <= 100
    assert encoding(r, dst) == before
    assert r.copy(dst, src)
    r.execute_command("SADD", src, "extra")
    assert smembers(r, dst) == members
    assert r.execute_command("SCARD", src) == n + 1
    assert r.move(dst, 1)
    assert r.exists(dst) == 0
    db1 = redis.Redis(connection_pool=redis.ConnectionPool(
        host="127.0.0.1", port=r.connection_pool.connection_kwargs["port"], db=1,
        decode_responses=True))
    try:
        assert smembers(db1, dst) == members
        db1.delete(dst)
    finally:
        db1.close()


def test_expired_set_is_gone(rc):
    sadd(rc, "s", ["a", "b"])
    rc.execute_command("PEXPIRE", "s", "20")
    time.sleep(0.05)
    assert rc.execute_command("SCARD", "s") == 0
    assert rc.execute_command("SADD", "s", "c") == 1
    assert smembers(rc, "s") == {"c"}
    assert rc.execute_command("TTL", "s") == -1


def test_scan_type_set(r):
    sadd(r, "s1", ["a"])
    sadd(r, "s2", [1])
    r.set("str", "x")
    keys = set()
    cursor = 0
    while True:
        cursor, got = r.scan(cursor, _type="set")
        keys.update(got)
        if cursor == 0:
            break
    assert keys == {"s1", "s2"}


# ---------------------------------------------------------------- RESP3

def test_resp3_set_replies(raw):
    c = raw()
    c.send(resp("HELLO", "3"))
    assert c.read_reply().startswith(b"%")
    c.send(resp("SADD", "a", "x") + resp("SADD", "b", "x", "y")
           + resp("SMEMBERS", "a") + resp("SMEMBERS", "nokey")
           + resp("SINTER", "a", "b") + resp("SUNION", "a") + resp("SDIFF", "b", "a")
           + resp("SINTER", "a", "nokey")
           + resp("SRANDMEMBER", "a", "1") + resp("SRANDMEMBER", "a", "-2")
           + resp("SRANDMEMBER", "nokey") + resp("SRANDMEMBER", "nokey", "2")
           + resp("SPOP", "nokey") + resp("SPOP", "nokey", "2")
           + resp("SMISMEMBER", "a", "x", "z") + resp("SSCAN", "a", "0")
           + resp("SINTERCARD", "2", "a", "b") + resp("SPOP", "b", "1")
           + resp("SPOP", "a", "0"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b":2\r\n"
    assert c.read_reply() == b"~1\r\n$1\r\nx\r\n"
    assert c.read_reply() == b"~0\r\n"
    assert c.read_reply() == b"~1\r\n$1\r\nx\r\n"
    assert c.read_reply() == b"~1\r\n$1\r\nx\r\n"
    assert c.read_reply() == b"~1\r\n$1\r\ny\r\n"
    assert c.read_reply() == b"~0\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\nx\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\nx\r\n$1\r\nx\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"~0\r\n"
    assert c.read_reply() == b"*2\r\n:1\r\n:0\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nx\r\n"
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() in (b"~1\r\n$1\r\nx\r\n", b"~1\r\n$1\r\ny\r\n")
    assert c.read_reply() == b"~0\r\n"


def test_resp2_set_replies_are_arrays(raw):
    c = raw()
    c.send(resp("SADD", "a", "x") + resp("SMEMBERS", "a") + resp("SUNION", "a", "nokey")
           + resp("SPOP", "nokey", "1") + resp("SRANDMEMBER", "nokey"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\nx\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\nx\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b"$-1\r\n"


def test_wrongtype_reply_bytes(raw):
    c = raw()
    c.send(resp("SET", "k", "v") + resp("SADD", "k", "a"))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == (b"-WRONGTYPE Operation against a key holding the wrong kind "
                              b"of value\r\n")


# ---------------------------------------------------------------- COMMAND

def test_command_info(rc):
    info = rc.execute_command("COMMAND", "INFO", "sadd", "smove", "sinter", "sinterstore")
    sadd_info, smove_info, sinter_info, store_info = info
    assert sadd_info[0] == "sadd" and sadd_info[1] == -3
    assert set(sadd_info[2]) >= {"write", "denyoom", "fast"}
    assert sadd_info[3:6] == [1, 1, 1]
    assert set(sadd_info[6]) >= {"@write", "@set", "@fast"}
    assert smove_info[1] == 4 and smove_info[3:6] == [1, 2, 1]
    assert sinter_info[1] == -2 and sinter_info[3:6] == [1, -1, 1]
    assert "readonly" in sinter_info[2] and "@set" in sinter_info[6]
    assert store_info[1] == -3 and "denyoom" in store_info[2]


# ---------------------------------------------------------------- memory accounting

def set_mem(c):
    return c.info("memory")["mem_type_set"]


@strata_only
@pytest.mark.parametrize("scenario", ["srem", "spop", "spop_count", "smove", "del", "store",
                                      "overwrite", "rename", "expire", "flushall"])
def test_mem_type_set_back_to_zero(fresh, scenario):
    c = fresh
    assert set_mem(c)["keys"] == 0 and set_mem(c)["bytes"] == 0
    big = ["m%d" % i for i in range(2000)]
    sadd(c, "big", big)
    sadd(c, "ints", range(100))
    sadd(c, "small", ["a", "b"])
    t = set_mem(c)
    assert t["keys"] == 3 and t["bytes"] > sum(len(m) for m in big)
    if scenario == "srem":
        c.execute_command("SREM", "big", *big)
        c.execute_command("SREM", "ints", *range(100))
        c.execute_command("SREM", "small", "a", "b")
    elif scenario == "spop":
        for k, n in (("big", 2000), ("ints", 100), ("small", 2)):
            for _ in range(n):
                c.execute_command("SPOP", k)
    elif scenario == "spop_count":
        for k in ("big", "ints", "small"):
            c.execute_command("SPOP", k, "10")
            c.execute_command("SPOP", k, "100000")
    elif scenario == "smove":
        for m in big:
            c.execute_command("SMOVE", "big", "moved{x}", m)
        c.execute_command("DEL", "moved{x}", "ints", "small")
    elif scenario == "del":
        c.execute_command("DEL", "big", "ints", "small")
    elif scenario == "store":
        c.execute_command("SUNIONSTORE", "u{1}", "big", "ints", "small")
        c.execute_command("SINTERSTORE", "big", "big", "ints")
        c.execute_command("SDIFFSTORE", "ints", "ints", "ints")
        c.execute_command("SINTERSTORE", "small", "small", "nokey")
        c.execute_command("DEL", "u{1}")
    elif scenario == "overwrite":
        for k in ("big", "ints", "small"):
            c.set(k, "string")
        c.execute_command("DEL", "big", "ints", "small")
    elif scenario == "rename":
        c.rename("big", "b{2}")
        c.copy("b{2}", "c{3}")
        c.execute_command("DEL", "b{2}", "c{3}", "ints", "small")
    elif scenario == "expire":
        for k in ("big", "ints", "small"):
            c.pexpire(k, 1)
        wait_for(lambda: c.exists("big", "ints", "small") == 0, what="expiry")
    else:
        c.flushall()
    assert c.dbsize() == 0
    wait_for(lambda: set_mem(c)["keys"] == 0 and set_mem(c)["bytes"] == 0, timeout=2,
             what="mem_type_set back to 0 after " + scenario)


def test_memory_usage_of_sets(r):
    sadd(r, "ints", range(10))
    sadd(r, "big", ("member-%d" % i for i in range(2000)))
    assert r.memory_usage("big") > 2000 * 10
    assert 0 < r.memory_usage("ints") < r.memory_usage("big") / 20


# ---------------------------------------------------------------- several shards

@strata_only
def test_keys_span_shards(server_factory):
    """The hashtag keys used throughout land on more than one shard, so the tests above
    exercise the multi-shard path too."""
    c = server_factory(threads=2).client(decode_responses=True)
    shards = {shard_of(c, k) for k in SPREAD[1]}
    assert len(shards) > 1
    before = c.info("stats")["multi_shard_commands"]
    sadd(c, "a{1}", ["x"])
    call(c, "SUNION", *SPREAD[1])
    assert c.info("stats")["multi_shard_commands"] > before
    c.close()


@pytest.fixture
def threaded(server_factory):
    s = server_factory(threads=3)
    c = s.client(decode_responses=True)
    yield s, c
    c.close()


def test_multi_shard_commands_are_atomic(threaded):
    """Writers move tokens between two sets with a plain SADD then SREM (never atomic),
    so every token is in one set or both at every instant, and a writer has at most one
    token in both. SUNIONSTORE, SINTERSTORE, SINTERCARD and SMOVE run against them all
    along: a torn read across the shards would lose a token from the union or show
    two tokens of one writer in the intersection."""
    server, c = threaded
    if TARGET == "redis":
        a, b, dst_tag = "ta", "tb", "x"
    else:
        a, b, third = keys_on_distinct_shards(c, 3, "atomic")
        dst_tag = third[third.index("{") + 1:-1]
    writers = 3
    tokens = {w: ["w%d-t%d" % (w, i) for i in range(20)] for w in range(writers)}
    for w in range(writers):
        sadd(c, a, tokens[w])
    every = set().union(*tokens.values())
    stop = threading.Event()
    errors = []
    stats = {"moves": 0, "checks": 0}
    lock = threading.Lock()

    def writer(w):
        cl = server.client(decode_responses=True)
        where = {t: a for t in tokens[w]}
        n = 0
        try:
            while not stop.is_set():
                t = tokens[w][n % len(tokens[w])]
                src, to = where[t], (b if where[t] == a else a)
                cl.execute_command("SADD", to, t)
                cl.execute_command("SREM", src, t)
                where[t] = to
                n += 1
            with lock:
                stats["moves"] += n
        except Exception as e:  # pragma: no cover - reported below
            errors.append("writer %d: %r" % (w, e))
        finally:
            cl.close()

    def checker(k):
        dst = "dst%d{%s}" % (k, dst_tag)  # on a third shard, one per checker
        cl = server.client(decode_responses=True)
        n = 0
        try:
            while not stop.is_set():
                size = cl.execute_command("SUNIONSTORE", dst, a, b)
                got = set(call(cl, "SMEMBERS", dst))
                if got != every or size != len(every):
                    errors.append("union lost tokens: %r" % sorted(every - got)[:5])
                    stop.set()
                cl.execute_command("SINTERSTORE", dst, a, b)
                both = set(call(cl, "SMEMBERS", dst))
                per_writer = [len([t for t in both if t.startswith("w%d-" % w)])
                              for w in range(writers)]
                if max(per_writer) > 1:
                    errors.append("intersection mixes two instants: %r" % sorted(both))
                    stop.set()
                if cl.execute_command("SINTERCARD", "2", a, b) > writers:
                    errors.append("SINTERCARD over the writers' count")
                    stop.set()
                n += 1
            with lock:
                stats["checks"] += n
        except Exception as e:  # pragma: no cover
            errors.append("checker: %r" % e)
        finally:
            cl.close()

    def mover():
        # SMOVE a private token back and forth: the union must always hold it exactly once.
        cl = server.client(decode_responses=True)
        try:
            here, there = a, b
            while not stop.is_set():
                if cl.execute_command("SMOVE", here, there, "shuttle") != 1:
                    errors.append("shuttle lost")
                    stop.set()
                here, there = there, here
        except Exception as e:  # pragma: no cover
            errors.append("mover: %r" % e)
        finally:
            cl.close()

    c.execute_command("SADD", a, "shuttle")
    every.add("shuttle")
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    threads += [threading.Thread(target=checker, args=(k,)) for k in range(2)]
    threads += [threading.Thread(target=mover)]
    for t in threads:
        t.start()
    time.sleep(3.0)
    stop.set()
    for t in threads:
        t.join(timeout=20)
    assert not any(t.is_alive() for t in threads), "client threads hung"
    assert not errors, errors[:5]
    assert stats["moves"] > 0 and stats["checks"] > 0
    assert set(call(c, "SUNION", a, b)) == every
