"""Hash commands: HSET HSETNX HGET HMGET HMSET HDEL HLEN HSTRLEN HEXISTS HKEYS HVALS
HGETALL HINCRBY HINCRBYFLOAT HRANDFIELD HSCAN, encodings and their limits, WRONGTYPE,
binary safety, big hashes, TTL, COPY/RENAME/MOVE, RESP3 replies and memory accounting.

Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it.
"""
import collections

import pytest
import redis

from conftest import TARGET
from helpers import NOT_FLOAT, NOT_INT, SYNTAX, WRONGTYPE, call, resp, wait_for

strata_only = pytest.mark.skipif(TARGET == "redis", reason="strata memory accounting")

NOT_HASH_INT = "^hash value is not an integer$"
NOT_HASH_FLOAT = "^hash value is not a float$"
# Fields enough to pass the default hash-max-listpack-entries (512) and get a hashtable.
BIG = 600
OVERFLOW = "^increment or decrement would overflow$"
NAN_OR_INF = "^increment would produce NaN or Infinity$"


def arity(name):
    return "^wrong number of arguments for '%s' command$" % name


def pairs(flat):
    """A flat [f1, v1, f2, v2, ...] reply as a list of (field, value) tuples."""
    assert len(flat) % 2 == 0
    return list(zip(flat[0::2], flat[1::2]))


def fill(client, key, n, prefix="f", value="v"):
    """Creates n fields f0..f{n-1} with values v0..v{n-1} in one HSET; returns the dict."""
    d = {"%s%d" % (prefix, i): "%s%d" % (value, i) for i in range(n)}
    args = []
    for f, v in d.items():
        args += [f, v]
    assert client.execute_command("HSET", key, *args) == n
    return d


def hscan_all(client, key, *opts):
    """A full HSCAN iteration with raw replies; returns (list of fields in the order seen,
    {field: value}, number of calls)."""
    cursor = "0"
    fields, seen, calls = [], {}, 0
    while True:
        cursor, flat = call(client, "HSCAN", key, cursor, *opts)
        calls += 1
        for f, v in pairs(flat):
            fields.append(f)
            seen[f] = v
        if cursor in ("0", b"0"):
            return fields, seen, calls
        assert calls < 100000


# ---------------------------------------------------------------- HSET HGET

def test_hset_hget_basic(rc):
    assert rc.execute_command("HSET", "h", "f", "v") == 1
    assert rc.execute_command("HGET", "h", "f") == "v"
    assert rc.execute_command("HSET", "h", "f", "v2") == 0
    assert rc.execute_command("HGET", "h", "f") == "v2"
    assert rc.execute_command("TYPE", "h") == "hash"
    assert rc.execute_command("EXISTS", "h") == 1


def test_hset_counts_only_new_fields(rc):
    assert rc.execute_command("HSET", "h", "a", "1", "b", "2") == 2
    assert rc.execute_command("HSET", "h", "a", "x", "c", "3", "d", "4") == 2
    assert rc.execute_command("HLEN", "h") == 4
    assert rc.execute_command("HGET", "h", "a") == "x"


def test_hset_duplicate_field_in_one_call_last_wins(rc):
    assert rc.execute_command("HSET", "h", "a", "1", "a", "2", "a", "3") == 1
    assert rc.execute_command("HGET", "h", "a") == "3"
    assert rc.execute_command("HLEN", "h") == 1


def test_hget_missing_key_and_field(rc):
    assert rc.execute_command("HGET", "nokey", "f") is None
    rc.execute_command("HSET", "h", "f", "v")
    assert rc.execute_command("HGET", "h", "nofield") is None


def test_empty_field_and_empty_value(rc):
    assert rc.execute_command("HSET", "h", "", "empty-field", "e", "") == 2
    assert rc.execute_command("HGET", "h", "") == "empty-field"
    assert rc.execute_command("HGET", "h", "e") == ""
    assert rc.execute_command("HSTRLEN", "h", "e") == 0
    assert rc.execute_command("HEXISTS", "h", "") == 1
    assert rc.execute_command("HLEN", "h") == 2


@pytest.mark.parametrize("value", ["0", "-1", "123", "-0", "007", "+1", " 1", "1 ", "1.0",
                                   "1e3", "9223372036854775807", "-9223372036854775808",
                                   "9223372036854775808", "18446744073709551616",
                                   "-9223372036854775809", "0x10", "12345678901234567890"])
def test_numeric_looking_values_roundtrip_exactly(rc, value):
    rc.execute_command("HSET", "h", value, value)
    assert rc.execute_command("HGET", "h", value) == value
    assert rc.execute_command("HSTRLEN", "h", value) == len(value)
    assert rc.execute_command("HKEYS", "h") == [value]
    assert rc.execute_command("HVALS", "h") == [value]


def test_hset_arity(rc):
    for args in (["h"], ["h", "f"], ["h", "f", "v", "g"], ["h", "a", "1", "b", "2", "c"]):
        with pytest.raises(redis.ResponseError, match=arity("hset")):
            rc.execute_command("HSET", *args)
    assert rc.execute_command("EXISTS", "h") == 0


def test_hset_odd_pairs_leave_existing_hash_unchanged(rc):
    rc.execute_command("HSET", "h", "a", "1")
    with pytest.raises(redis.ResponseError, match=arity("hset")):
        rc.execute_command("HSET", "h", "a", "2", "b")
    assert rc.execute_command("HGETALL", "h") == ["a", "1"]


def test_hset_reply_bytes(raw):
    c = raw()
    c.send(resp("HSET", "h", "a", "1", "b", "2") + resp("HGET", "h", "a")
           + resp("HGET", "h", "zz") + resp("HSET", "h", "a"))
    assert c.read_reply() == b":2\r\n"
    assert c.read_reply() == b"$1\r\n1\r\n"
    assert c.read_reply() == b"$-1\r\n"
    assert c.read_reply() == b"-ERR wrong number of arguments for 'hset' command\r\n"


# ------------------------------------------------------------- HSETNX HMSET

def test_hsetnx(rc):
    assert rc.execute_command("HSETNX", "h", "f", "a") == 1
    assert rc.execute_command("HSETNX", "h", "f", "b") == 0
    assert rc.execute_command("HGET", "h", "f") == "a"
    assert rc.execute_command("HSETNX", "h", "g", "c") == 1
    assert rc.execute_command("HLEN", "h") == 2


def test_hsetnx_arity(rc):
    for args in (["h", "f"], ["h", "f", "v", "x"]):
        with pytest.raises(redis.ResponseError, match=arity("hsetnx")):
            rc.execute_command("HSETNX", *args)
    assert rc.execute_command("EXISTS", "h") == 0


def test_hmset(rc):
    assert rc.execute_command("HMSET", "h", "a", "1", "b", "2") == "OK"
    assert rc.execute_command("HMSET", "h", "a", "3") == "OK"
    assert rc.execute_command("HMGET", "h", "a", "b") == ["3", "2"]


def test_hmset_arity(rc):
    for args in (["h"], ["h", "f"], ["h", "f", "v", "g"]):
        with pytest.raises(redis.ResponseError, match=arity("hmset")):
            rc.execute_command("HMSET", *args)
    assert rc.execute_command("EXISTS", "h") == 0


# ------------------------------------------------------------------- HMGET

def test_hmget(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc.execute_command("HMGET", "h", "a", "x", "b", "a") == ["1", None, "2", "1"]


def test_hmget_missing_key(rc):
    assert rc.execute_command("HMGET", "nokey", "a", "b") == [None, None]


def test_hmget_arity(rc):
    with pytest.raises(redis.ResponseError, match=arity("hmget")):
        rc.execute_command("HMGET", "h")


# -------------------------------------------------------------------- HDEL

def test_hdel(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert rc.execute_command("HDEL", "h", "a") == 1
    assert rc.execute_command("HDEL", "h", "a") == 0
    assert rc.execute_command("HDEL", "h", "b", "nofield", "b") == 1
    assert rc.execute_command("HGETALL", "h") == ["c", "3"]
    assert rc.execute_command("HDEL", "nokey", "a") == 0


def test_hdel_last_field_deletes_key(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc.execute_command("HDEL", "h", "a", "b", "c") == 2
    assert rc.execute_command("EXISTS", "h") == 0
    assert rc.execute_command("TYPE", "h") == "none"
    assert rc.execute_command("HLEN", "h") == 0
    assert rc.execute_command("DBSIZE") == 0


def test_hdel_last_field_of_big_hash_deletes_key(rc):
    d = fill(rc, "h", BIG)
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "hashtable"
    fields = list(d)
    assert rc.execute_command("HDEL", "h", *fields[:-1]) == BIG - 1
    assert rc.execute_command("HLEN", "h") == 1
    assert rc.execute_command("HDEL", "h", fields[-1]) == 1
    assert rc.execute_command("EXISTS", "h") == 0
    # The key can be created again as any type.
    rc.execute_command("SET", "h", "s")
    assert rc.execute_command("GET", "h") == "s"


def test_hdel_arity(rc):
    with pytest.raises(redis.ResponseError, match=arity("hdel")):
        rc.execute_command("HDEL", "h")


# ---------------------------------------------------- HLEN HSTRLEN HEXISTS

def test_hlen(rc):
    assert rc.execute_command("HLEN", "nokey") == 0
    rc.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc.execute_command("HLEN", "h") == 2


def test_hstrlen(rc):
    rc.execute_command("HSET", "h", "s", "hello", "n", "-123", "e", "", "big", "x" * 1000)
    assert rc.execute_command("HSTRLEN", "h", "s") == 5
    assert rc.execute_command("HSTRLEN", "h", "n") == 4
    assert rc.execute_command("HSTRLEN", "h", "e") == 0
    assert rc.execute_command("HSTRLEN", "h", "big") == 1000
    assert rc.execute_command("HSTRLEN", "h", "nofield") == 0
    assert rc.execute_command("HSTRLEN", "nokey", "f") == 0


def test_hexists(rc):
    rc.execute_command("HSET", "h", "a", "")
    assert rc.execute_command("HEXISTS", "h", "a") == 1
    assert rc.execute_command("HEXISTS", "h", "b") == 0
    assert rc.execute_command("HEXISTS", "nokey", "a") == 0


@pytest.mark.parametrize("name,args", [
    ("hlen", []), ("hlen", ["h", "x"]), ("hstrlen", ["h"]), ("hexists", ["h"]),
    ("hget", ["h"]), ("hget", ["h", "f", "g"]), ("hkeys", []), ("hvals", ["h", "x"]),
    ("hgetall", []), ("hincrby", ["h", "f"]), ("hincrbyfloat", ["h", "f"]),
    ("hrandfield", []), ("hscan", ["h"]),
])
def test_arity_errors(rc, name, args):
    with pytest.raises(redis.ResponseError, match=arity(name)):
        rc.execute_command(name.upper(), *args)


# ------------------------------------------------------- HKEYS HVALS HGETALL

def test_hkeys_hvals_hgetall(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert sorted(rc.execute_command("HKEYS", "h")) == ["a", "b", "c"]
    assert sorted(rc.execute_command("HVALS", "h")) == ["1", "2", "3"]
    assert sorted(pairs(rc.execute_command("HGETALL", "h"))) == [("a", "1"), ("b", "2"),
                                                                 ("c", "3")]


def test_missing_key_gives_empty_lists(rc):
    assert rc.execute_command("HKEYS", "nokey") == []
    assert rc.execute_command("HVALS", "nokey") == []
    assert rc.execute_command("HGETALL", "nokey") == []


def test_small_hash_keeps_insertion_order(rc):
    # A listpack hash iterates in insertion order; updates keep a field's position.
    rc.execute_command("HSET", "h", "z", "1", "a", "2", "m", "3")
    rc.execute_command("HSET", "h", "a", "22")
    assert rc.execute_command("HKEYS", "h") == ["z", "a", "m"]
    assert rc.execute_command("HGETALL", "h") == ["z", "1", "a", "22", "m", "3"]


@pytest.mark.parametrize("n", [10, 1000])
def test_hkeys_hvals_hgetall_agree_on_order(rc, n):
    fill(rc, "h", n)
    keys = rc.execute_command("HKEYS", "h")
    vals = rc.execute_command("HVALS", "h")
    assert pairs(rc.execute_command("HGETALL", "h")) == list(zip(keys, vals))
    assert len(set(keys)) == n


# ----------------------------------------------------------------- HINCRBY

def test_hincrby(rc):
    assert rc.execute_command("HINCRBY", "h", "n", "5") == 5
    assert rc.execute_command("HINCRBY", "h", "n", "-7") == -2
    assert rc.execute_command("HINCRBY", "h", "n", "0") == -2
    assert rc.execute_command("HGET", "h", "n") == "-2"
    rc.execute_command("HSET", "h", "m", "100")
    assert rc.execute_command("HINCRBY", "h", "m", "1") == 101
    assert rc.execute_command("HGET", "h", "m") == "101"


def test_hincrby_on_hashtable_encoding(rc):
    fill(rc, "h", BIG)
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "hashtable"
    assert rc.execute_command("HINCRBY", "h", "cnt", "3") == 3
    assert rc.execute_command("HINCRBY", "h", "cnt", "3") == 6
    assert rc.execute_command("HGET", "h", "cnt") == "6"


def test_hincrby_limits(rc):
    rc.execute_command("HSET", "h", "max", "9223372036854775806", "min", "-9223372036854775807")
    assert rc.execute_command("HINCRBY", "h", "max", "1") == 9223372036854775807
    assert rc.execute_command("HINCRBY", "h", "min", "-1") == -9223372036854775808
    with pytest.raises(redis.ResponseError, match=OVERFLOW):
        rc.execute_command("HINCRBY", "h", "max", "1")
    with pytest.raises(redis.ResponseError, match=OVERFLOW):
        rc.execute_command("HINCRBY", "h", "min", "-1")
    with pytest.raises(redis.ResponseError, match=OVERFLOW):
        rc.execute_command("HINCRBY", "h", "max", "9223372036854775807")
    assert rc.execute_command("HGET", "h", "max") == "9223372036854775807"
    assert rc.execute_command("HGET", "h", "min") == "-9223372036854775808"
    assert rc.execute_command("HINCRBY", "h", "new", "-9223372036854775808") == \
        -9223372036854775808


@pytest.mark.parametrize("value", ["abc", "", "1.5", " 1", "1 ", "9223372036854775808",
                                   "1e3", "0x10"])
def test_hincrby_non_integer_field_value(rc, value):
    rc.execute_command("HSET", "h", "f", value)
    with pytest.raises(redis.ResponseError, match=NOT_HASH_INT):
        rc.execute_command("HINCRBY", "h", "f", "1")
    assert rc.execute_command("HGET", "h", "f") == value


@pytest.mark.parametrize("incr", ["abc", "", "1.5", "9223372036854775808", " 1"])
def test_hincrby_invalid_increment(rc, incr):
    rc.execute_command("HSET", "h", "f", "1")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("HINCRBY", "h", "f", incr)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("HINCRBY", "nokey", "f", incr)
    assert rc.execute_command("HGET", "h", "f") == "1"
    assert rc.execute_command("EXISTS", "nokey") == 0


def test_hincrby_reply_bytes(raw):
    c = raw()
    c.send(resp("HINCRBY", "h", "f", "-3") + resp("HSET", "h", "s", "x")
           + resp("HINCRBY", "h", "s", "1"))
    assert c.read_reply() == b":-3\r\n"
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"-ERR hash value is not an integer\r\n"


# ------------------------------------------------------------ HINCRBYFLOAT

@pytest.mark.parametrize("start,incr,expected", [
    ("10.50", "0.1", "10.6"),
    ("5.0e3", "2.0e2", "5200"),
    ("10", "0.5", "10.5"),
    ("1.5", "-1.5", "0"),
    ("3", "0", "3"),
    ("-1.5", "0.25", "-1.25"),
    ("0", "1e20", "100000000000000000000"),
    ("5", ".5", "5.5"),
    ("1", "5.0e3", "5001"),
])
def test_hincrbyfloat_formatting(rc, start, incr, expected):
    rc.execute_command("HSET", "h", "f", start)
    assert rc.execute_command("HINCRBYFLOAT", "h", "f", incr) == expected
    assert rc.execute_command("HGET", "h", "f") == expected


def test_hincrbyfloat_new_key_and_field(rc):
    assert rc.execute_command("HINCRBYFLOAT", "h", "f", "1.5") == "1.5"
    assert rc.execute_command("HINCRBYFLOAT", "h", "g", "2") == "2"
    assert rc.execute_command("HINCRBYFLOAT", "h", "t", "0.1") == "0.1"
    assert rc.execute_command("HINCRBYFLOAT", "h", "t", "0.1") == "0.2"
    assert rc.execute_command("HINCRBYFLOAT", "h", "t", "0.1") == "0.3"
    assert rc.execute_command("HLEN", "h") == 3
    # An integral result can be incremented with HINCRBY afterwards.
    assert rc.execute_command("HINCRBY", "h", "g", "1") == 3


def test_hincrbyfloat_reply_is_bulk_string(raw):
    c = raw()
    c.send(resp("HSET", "h", "f", "10.5") + resp("HINCRBYFLOAT", "h", "f", "0.1"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"$4\r\n10.6\r\n"


@pytest.mark.parametrize("value", ["abc", "", " 1", "1 ", "1.5.5", "nan", "1,5"])
def test_hincrbyfloat_non_float_field_value(rc, value):
    rc.execute_command("HSET", "h", "f", value)
    with pytest.raises(redis.ResponseError, match=NOT_HASH_FLOAT):
        rc.execute_command("HINCRBYFLOAT", "h", "f", "1")
    assert rc.execute_command("HGET", "h", "f") == value


@pytest.mark.parametrize("incr", ["abc", "", " 1", "1 ", "nan", "1,5"])
def test_hincrbyfloat_invalid_increment(rc, incr):
    rc.execute_command("HSET", "h", "f", "1")
    with pytest.raises(redis.ResponseError, match=NOT_FLOAT):
        rc.execute_command("HINCRBYFLOAT", "h", "f", incr)
    assert rc.execute_command("HGET", "h", "f") == "1"


@pytest.mark.parametrize("start", ["1", None])
@pytest.mark.parametrize("incr", ["inf", "-inf", "+inf", "Infinity", "-INF"])
def test_hincrbyfloat_infinite_increment(rc, start, incr):
    if start is not None:
        rc.execute_command("HSET", "h", "f", start)
    with pytest.raises(redis.ResponseError, match="^value is NaN or Infinity$"):
        rc.execute_command("HINCRBYFLOAT", "h", "f", incr)
    assert rc.execute_command("HGET", "h", "f") == start
    assert rc.execute_command("EXISTS", "h") == (start is not None)


@pytest.mark.parametrize("start,incr", [("inf", "1"), ("-inf", "0"), ("+inf", "-1.5")])
def test_hincrbyfloat_result_nan_or_infinity(rc, start, incr):
    rc.execute_command("HSET", "h", "f", start)
    with pytest.raises(redis.ResponseError, match=NAN_OR_INF):
        rc.execute_command("HINCRBYFLOAT", "h", "f", incr)
    assert rc.execute_command("HGET", "h", "f") == start


# -------------------------------------------------------------- HRANDFIELD

def test_hrandfield_missing_key(rc):
    assert rc.execute_command("HRANDFIELD", "nokey") is None
    assert rc.execute_command("HRANDFIELD", "nokey", "5") == []
    assert rc.execute_command("HRANDFIELD", "nokey", "-5") == []
    assert rc.execute_command("HRANDFIELD", "nokey", "5", "WITHVALUES") == []


def test_hrandfield_single(rc):
    d = fill(rc, "h", 5)
    for _ in range(20):
        assert rc.execute_command("HRANDFIELD", "h") in d


def test_hrandfield_count_zero(rc):
    fill(rc, "h", 5)
    assert rc.execute_command("HRANDFIELD", "h", "0") == []
    assert rc.execute_command("HRANDFIELD", "h", "0", "WITHVALUES") == []


@pytest.mark.parametrize("n", [5, BIG])
def test_hrandfield_positive_count_distinct(rc, n):
    d = fill(rc, "h", n)
    for count in (1, 3, n - 1, n, n + 1, 10 * n):
        got = rc.execute_command("HRANDFIELD", "h", count)
        assert len(got) == min(count, n)
        assert len(set(got)) == len(got)
        assert set(got) <= set(d)


@pytest.mark.parametrize("n", [5, BIG])
def test_hrandfield_positive_count_withvalues(rc, n):
    d = fill(rc, "h", n)
    for count in (2, n, n + 10):
        got = pairs(rc.execute_command("HRANDFIELD", "h", count, "WITHVALUES"))
        assert len(got) == min(count, n)
        assert len({f for f, _ in got}) == len(got)
        for f, v in got:
            assert d[f] == v


@pytest.mark.parametrize("n", [1, 5, BIG])
def test_hrandfield_negative_count_allows_repeats(rc, n):
    d = fill(rc, "h", n)
    got = rc.execute_command("HRANDFIELD", "h", "-1000")
    assert len(got) == 1000
    assert set(got) <= set(d)
    if n == 1:
        assert got == ["f0"] * 1000
    if n == 5:
        # 1000 picks from 5 fields: every field shows up.
        assert set(got) == set(d)
    got = pairs(rc.execute_command("HRANDFIELD", "h", "-20", "withvalues"))
    assert len(got) == 20
    for f, v in got:
        assert d[f] == v


def test_hrandfield_huge_counts(rc):
    d = fill(rc, "h", 10)
    # Without WITHVALUES any count up to LONG_MAX is allowed.
    got = rc.execute_command("HRANDFIELD", "h", "9223372036854775807")
    assert sorted(got) == sorted(d)
    assert rc.execute_command("HRANDFIELD", "nokey", "9223372036854775807") == []
    # With WITHVALUES the count must stay within +-LONG_MAX/2.
    got = pairs(rc.execute_command("HRANDFIELD", "h", "4611686018427387903", "WITHVALUES"))
    assert dict(got) == d and len(got) == 10
    for count in ("4611686018427387904", "-4611686018427387904", "9223372036854775807",
                  "-9223372036854775807"):
        for key in ("h", "nokey"):
            with pytest.raises(redis.ResponseError, match="^value is out of range$"):
                rc.execute_command("HRANDFIELD", key, count, "WITHVALUES")


def test_hrandfield_count_below_minus_long_max(rc):
    rc.execute_command("HSET", "h", "a", "1")
    msg = ("^value is out of range, value must between -9223372036854775807 and "
           "9223372036854775807$")
    for key in ("h", "nokey"):
        with pytest.raises(redis.ResponseError, match=msg):
            rc.execute_command("HRANDFIELD", key, "-9223372036854775808")
        with pytest.raises(redis.ResponseError, match=msg):
            rc.execute_command("HRANDFIELD", key, "-9223372036854775808", "WITHVALUES")


@pytest.mark.parametrize("args,pattern", [
    (["1", "FOO"], SYNTAX),
    (["1", "WITHVALUES", "x"], SYNTAX),
    (["1", "WITHVALUES", "WITHVALUES"], SYNTAX),
    (["abc"], NOT_INT),
    (["1.5"], NOT_INT),
    (["9223372036854775808"], NOT_INT),
    (["abc", "WITHVALUES"], NOT_INT),
])
def test_hrandfield_errors(rc, args, pattern):
    rc.execute_command("HSET", "h", "a", "1")
    with pytest.raises(redis.ResponseError, match=pattern):
        rc.execute_command("HRANDFIELD", "h", *args)
    with pytest.raises(redis.ResponseError, match=pattern):
        rc.execute_command("HRANDFIELD", "nokey", *args)


def test_hrandfield_reply_bytes(raw):
    c = raw()
    c.send(resp("HSET", "h", "a", "1") + resp("HRANDFIELD", "h")
           + resp("HRANDFIELD", "h", "-2", "WITHVALUES") + resp("HRANDFIELD", "nokey")
           + resp("HRANDFIELD", "nokey", "3"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"$1\r\na\r\n"
    assert c.read_reply() == b"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert c.read_reply() == b"$-1\r\n"
    assert c.read_reply() == b"*0\r\n"


# ------------------------------------------------------------------- HSCAN

def test_hscan_missing_key(rc):
    assert call(rc, "HSCAN", "nokey", "0") == ["0", []]


def test_hscan_small_hash_returns_everything_in_one_call(rc):
    d = fill(rc, "h", 20)
    cursor, flat = call(rc, "HSCAN", "h", "0", "COUNT", "1")
    assert cursor == "0"
    assert dict(pairs(flat)) == d and len(flat) == 40


@pytest.mark.parametrize("count", [None, 1, 7, 100, 10000])
def test_hscan_big_hash_returns_every_field(rc, count):
    d = fill(rc, "h", 2000)
    opts = [] if count is None else ["COUNT", count]
    fields, seen, calls = hscan_all(rc, "h", *opts)
    assert seen == d
    assert set(fields) == set(d)
    if count is None or count < 100:
        assert calls > 1


def test_hscan_match(rc):
    d = fill(rc, "h", 1000)
    _, seen, _ = hscan_all(rc, "h", "MATCH", "f1*", "COUNT", "50")
    assert seen == {f: v for f, v in d.items() if f.startswith("f1")}
    small = fill(rc, "s", 10)
    cursor, flat = call(rc, "HSCAN", "s", "0", "MATCH", "*[13]")
    assert cursor == "0"
    assert dict(pairs(flat)) == {f: v for f, v in small.items() if f[-1] in "13"}
    _, seen, _ = hscan_all(rc, "h", "MATCH", "nomatch*")
    assert seen == {}


def test_hscan_guarantee_while_hash_grows(rc):
    d = fill(rc, "h", 500)
    cursor, seen, extra, i = "0", set(), 0, 0
    while True:
        cursor, flat = call(rc, "HSCAN", "h", cursor, "COUNT", "20")
        seen.update(f for f, _ in pairs(flat))
        # Grow the hash in between calls so its table resizes during the iteration.
        args = []
        for _ in range(50):
            args += ["g%d" % extra, "x"]
            extra += 1
        rc.execute_command("HSET", "h", *args)
        i += 1
        if cursor == "0":
            break
        assert i < 2000
    assert set(d) <= seen


def test_hscan_errors(rc):
    rc.execute_command("HSET", "h", "a", "1")
    for key in ("h", "nokey"):
        with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
            rc.execute_command("HSCAN", key, "abc")
        with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
            rc.execute_command("HSCAN", key, "1.5")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("HSCAN", "h", "0", "COUNT", "0")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("HSCAN", "h", "0", "COUNT", "-1")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("HSCAN", "h", "0", "COUNT", "abc")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("HSCAN", "h", "0", "COUNT")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("HSCAN", "h", "0", "MATCH")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("HSCAN", "h", "0", "FOO", "bar")


def test_hscan_reply_bytes(raw):
    c = raw()
    c.send(resp("HSET", "h", "a", "1") + resp("HSCAN", "h", "0")
           + resp("HSCAN", "nokey", "0"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*0\r\n"


# ------------------------------------------------------ TYPE, OBJECT ENCODING

def test_type_and_small_encoding(rc):
    rc.execute_command("HSET", "h", "a", "1")
    assert rc.execute_command("TYPE", "h") == "hash"
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "listpack"


def test_default_listpack_limits(rc):
    assert rc.execute_command("CONFIG", "GET", "hash-max-listpack-entries") == \
        ["hash-max-listpack-entries", "512"]
    assert rc.execute_command("CONFIG", "GET", "hash-max-listpack-value") == \
        ["hash-max-listpack-value", "64"]
    assert rc.execute_command("CONFIG", "GET", "hash-max-ziplist-entries") == \
        ["hash-max-ziplist-entries", "512"]
    assert rc.execute_command("CONFIG", "GET", "hash-max-ziplist-value") == \
        ["hash-max-ziplist-value", "64"]


def test_encoding_converts_after_max_entries(rc):
    fill(rc, "h", 512)
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "listpack"
    rc.execute_command("HSET", "h", "one-more", "x")
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "hashtable"
    assert rc.execute_command("HLEN", "h") == 513
    # Deleting fields does not convert back.
    rc.execute_command("HDEL", "h", *["f%d" % i for i in range(510)])
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "hashtable"
    assert rc.execute_command("HLEN", "h") == 3


@pytest.mark.parametrize("how", ["hset", "hsetnx", "hmset", "field"])
def test_encoding_converts_on_long_value(rc, how):
    rc.execute_command("HSET", "h", "a", "1")
    v64, v65 = "x" * 64, "x" * 65
    rc.execute_command("HSET", "h", "v64", v64, v64, "f64")
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "listpack"
    if how == "hset":
        rc.execute_command("HSET", "h", "b", v65)
    elif how == "hsetnx":
        assert rc.execute_command("HSETNX", "h", "b", v65) == 1
    elif how == "hmset":
        rc.execute_command("HMSET", "h", "b", v65)
    else:
        rc.execute_command("HSET", "h", v65, "short")
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "hashtable"
    assert rc.execute_command("HGET", "h", "v64") == v64
    assert rc.execute_command("HGET", "h", v64) == "f64"
    assert rc.execute_command("HLEN", "h") == 4


def test_object_encoding_missing_key(rc):
    assert rc.execute_command("OBJECT", "ENCODING", "nokey") is None


def test_config_set_listpack_limits(server_factory):
    s = server_factory()
    c = s.client(decode_responses=True)
    try:
        assert c.config_set("hash-max-listpack-entries", 4)
        assert c.config_set("hash-max-listpack-value", 8)
        c.hset("a", mapping={"f%d" % i: "v" for i in range(4)})
        assert c.object("encoding", "a") == "listpack"
        c.hset("a", "f4", "v")
        assert c.object("encoding", "a") == "hashtable"
        c.hset("b", "f", "x" * 8)
        assert c.object("encoding", "b") == "listpack"
        c.hset("b", "g", "x" * 9)
        assert c.object("encoding", "b") == "hashtable"
        # The old ziplist names are aliases of the same settings.
        assert c.config_get("hash-max-ziplist-entries") == {"hash-max-ziplist-entries": "4"}
        assert c.config_get("hash-max-ziplist-value") == {"hash-max-ziplist-value": "8"}
        assert c.config_set("hash-max-ziplist-entries", 2)
        assert c.config_set("hash-max-ziplist-value", 100)
        assert c.config_get("hash-max-listpack-entries") == {"hash-max-listpack-entries": "2"}
        assert c.config_get("hash-max-listpack-value") == {"hash-max-listpack-value": "100"}
        c.hset("c", mapping={"x": "1", "y": "2"})
        assert c.object("encoding", "c") == "listpack"
        c.hset("c", "z", "3")
        assert c.object("encoding", "c") == "hashtable"
        c.hset("d", "f", "y" * 100)
        assert c.object("encoding", "d") == "listpack"
        # Existing hashes keep their encoding.
        assert c.object("encoding", "a") == "hashtable"
        assert c.hgetall("a") == {"f%d" % i: "v" for i in range(5)}
        # Zero entries: every new hash is a hashtable.
        assert c.config_set("hash-max-listpack-entries", 0)
        c.hset("e", "f", "v")
        assert c.object("encoding", "e") == "hashtable"
        assert c.hgetall("e") == {"f": "v"}
    finally:
        c.close()


def test_config_set_listpack_limit_errors(server_factory):
    # Own server: a wrongly accepted value must not leak into the other tests.
    s = server_factory()
    c = s.client(decode_responses=True)
    try:
        before = {**c.config_get("hash-max-listpack-entries"),
                  **c.config_get("hash-max-listpack-value")}
        for name in ("hash-max-listpack-entries", "hash-max-ziplist-value"):
            with pytest.raises(redis.ResponseError):
                c.config_set(name, "abc")
            with pytest.raises(redis.ResponseError):
                c.config_set(name, "-1")
        after = {**c.config_get("hash-max-listpack-entries"),
                 **c.config_get("hash-max-listpack-value")}
        assert after == before
    finally:
        c.close()


# ------------------------------------------------------------------ WRONGTYPE

@pytest.mark.parametrize("args", [
    ["HSET", "s", "f", "v"], ["HSETNX", "s", "f", "v"], ["HGET", "s", "f"],
    ["HMGET", "s", "f", "g"], ["HMSET", "s", "f", "v"], ["HDEL", "s", "f"], ["HLEN", "s"],
    ["HSTRLEN", "s", "f"], ["HEXISTS", "s", "f"], ["HKEYS", "s"], ["HVALS", "s"],
    ["HGETALL", "s"], ["HINCRBY", "s", "f", "1"], ["HINCRBYFLOAT", "s", "f", "1.5"],
    ["HRANDFIELD", "s"], ["HRANDFIELD", "s", "2"], ["HRANDFIELD", "s", "-2", "WITHVALUES"],
    ["HSCAN", "s", "0"],
])
def test_hash_commands_on_string_key(rc, args):
    rc.execute_command("SET", "s", "value")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(*args)
    assert rc.execute_command("GET", "s") == "value"
    assert rc.execute_command("TYPE", "s") == "string"


@pytest.mark.parametrize("args", [
    ["GET", "h"], ["APPEND", "h", "x"], ["INCR", "h"], ["DECR", "h"], ["INCRBY", "h", "2"],
    ["DECRBY", "h", "2"], ["INCRBYFLOAT", "h", "1.5"], ["STRLEN", "h"],
    ["GETRANGE", "h", "0", "-1"], ["SETRANGE", "h", "0", "x"], ["GETDEL", "h"],
    ["GETEX", "h"], ["GETSET", "h", "x"], ["SET", "h", "x", "GET"],
])
def test_string_commands_on_hash_key(rc, args):
    rc.execute_command("HSET", "h", "f", "v")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(*args)
    assert rc.execute_command("TYPE", "h") == "hash"
    assert rc.execute_command("HGETALL", "h") == ["f", "v"]


def test_mget_on_hash_gives_nil(rc):
    rc.execute_command("HSET", "h", "f", "v")
    rc.execute_command("SET", "s", "x")
    assert rc.execute_command("MGET", "s", "h") == ["x", None]


def test_wrongtype_reply_bytes(raw):
    c = raw()
    c.send(resp("SET", "s", "v") + resp("HGET", "s", "f"))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == \
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


# -------------------------------------------------------- SET over a hash

def test_set_overwrites_hash(rc):
    fill(rc, "h", 200)
    rc.execute_command("EXPIRE", "h", "100")
    assert rc.execute_command("SET", "h", "NX", "NX") is None
    assert rc.execute_command("TYPE", "h") == "hash"
    assert rc.execute_command("SET", "h", "str") == "OK"
    assert rc.execute_command("TYPE", "h") == "string"
    assert rc.execute_command("GET", "h") == "str"
    assert rc.execute_command("TTL", "h") == -1
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("HGET", "h", "f0")
    rc.execute_command("DEL", "h")
    assert rc.execute_command("HSET", "h", "x", "1") == 1
    assert rc.execute_command("HGETALL", "h") == ["x", "1"]


def test_mset_overwrites_hash(rc):
    rc.execute_command("HSET", "h", "f", "v")
    assert rc.execute_command("MSETNX", "h", "x") == 0
    rc.execute_command("MSET", "h", "x")
    assert rc.execute_command("TYPE", "h") == "string"


def test_del_and_unlink_hash(rc):
    rc.execute_command("HSET", "a", "f", "v")
    fill(rc, "b", 500)
    assert rc.execute_command("DEL", "a") == 1
    assert rc.execute_command("UNLINK", "b") == 1
    assert rc.execute_command("EXISTS", "a", "b") == 0
    assert rc.execute_command("HLEN", "b") == 0


# --------------------------------------------------------------- binary data

BINARY = [b"\x00", b"a\x00b", b"\xff\xfe\x00", b"\r\n", b"line\r\nbreak", b"\x00" * 100,
          bytes(range(256)), b"$5\r\nhello\r\n", b"*1\r\n"]


def test_binary_fields_and_values(rb):
    mapping = {}
    for i, b in enumerate(BINARY):
        mapping[b] = b"val-" + b
        mapping[b"k%d-" % i + b] = b
    args = []
    for f, v in mapping.items():
        args += [f, v]
    assert rb.execute_command("HSET", b"bin\x00key\xff", *args) == len(mapping)
    for f, v in mapping.items():
        assert rb.execute_command("HGET", b"bin\x00key\xff", f) == v
        assert rb.execute_command("HSTRLEN", b"bin\x00key\xff", f) == len(v)
        assert rb.execute_command("HEXISTS", b"bin\x00key\xff", f) == 1
    assert rb.hgetall(b"bin\x00key\xff") == mapping
    assert sorted(rb.hkeys(b"bin\x00key\xff")) == sorted(mapping)
    assert sorted(rb.hvals(b"bin\x00key\xff")) == sorted(mapping.values())
    assert rb.hmget(b"bin\x00key\xff", [b"\x00", b"\x00\x00", b"\r\n"]) == \
        [b"val-\x00", None, b"val-\r\n"]
    # The prefix of a field with a NUL byte is another field.
    assert rb.hget(b"bin\x00key\xff", b"a") is None
    assert rb.hdel(b"bin\x00key\xff", b"a\x00b") == 1
    assert rb.hexists(b"bin\x00key\xff", b"a\x00b") == 0
    assert rb.hexists(b"bin\x00key\xff", b"k1-a\x00b") == 1


def test_binary_hashtable_encoding(rb):
    mapping = {b"\x00%d\xff" % i: b"\r\n%d\x00" % i for i in range(BIG)}
    rb.hset(b"h", mapping=mapping)
    assert rb.object("encoding", b"h") == b"hashtable"
    assert rb.hgetall(b"h") == mapping
    _, seen, _ = hscan_all(rb, b"h", "COUNT", "30")
    assert seen == mapping
    got = rb.execute_command("HRANDFIELD", b"h", "5", "WITHVALUES")
    for f, v in pairs(got):
        assert mapping[f] == v


def test_binary_hincrby_field(rb):
    assert rb.hincrby(b"h", b"\x00\xff\r\n", 7) == 7
    assert rb.hget(b"h", b"\x00\xff\r\n") == b"7"


# ----------------------------------------------------- large values, many fields

def test_large_value(rb):
    big = bytes(range(256)) * 400  # 102400 bytes
    assert rb.hset(b"h", b"big", big) == 1
    assert rb.hget(b"h", b"big") == big
    assert rb.hstrlen(b"h", b"big") == len(big)
    assert rb.object("encoding", b"h") == b"hashtable"
    big2 = b"\x00" * 100000 + b"end"
    assert rb.hset(b"h", b"big", big2) == 0
    assert rb.hget(b"h", b"big") == big2
    rb.hset(b"h", big, b"field-is-100k")
    assert rb.hget(b"h", big) == b"field-is-100k"
    assert rb.hgetall(b"h") == {b"big": big2, big: b"field-is-100k"}


def test_many_fields(r):
    d = {"field:%d" % i: "value:%d:%s" % (i, "x" * (i % 50)) for i in range(5000)}
    assert r.hset("h", mapping=d) == 5000
    assert r.hlen("h") == 5000
    assert r.hgetall("h") == d
    assert sorted(r.hkeys("h")) == sorted(d)
    assert collections.Counter(r.hvals("h")) == collections.Counter(d.values())
    sample = ["field:%d" % i for i in range(0, 5000, 97)] + ["nofield"]
    assert r.hmget("h", sample) == [d.get(f) for f in sample]
    assert r.object("encoding", "h") == "hashtable"
    # Delete every other field; the rest is still intact.
    gone = ["field:%d" % i for i in range(0, 5000, 2)]
    assert r.hdel("h", *gone) == 2500
    for f in gone:
        del d[f]
    assert r.hlen("h") == 2500
    assert r.hgetall("h") == d


def test_many_fields_pipelined_updates(r):
    p = r.pipeline(transaction=False)
    for i in range(3000):
        p.hset("h", "f%d" % i, i)
    assert p.execute() == [1] * 3000
    p = r.pipeline(transaction=False)
    for i in range(3000):
        p.hincrby("h", "f%d" % i, 1)
    assert p.execute() == [i + 1 for i in range(3000)]
    assert r.hgetall("h") == {"f%d" % i: str(i + 1) for i in range(3000)}


# ----------------------------------------------------------------------- TTL

def test_ttl_kept_across_hash_writes(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc.execute_command("EXPIRE", "h", "100") == 1
    rc.execute_command("HSET", "h", "c", "3")
    assert 99 <= rc.execute_command("TTL", "h") <= 100
    rc.execute_command("HDEL", "h", "a")
    assert 99 <= rc.execute_command("TTL", "h") <= 100
    rc.execute_command("HINCRBY", "h", "n", "1")
    rc.execute_command("HINCRBYFLOAT", "h", "x", "1.5")
    rc.execute_command("HSETNX", "h", "d", "4")
    rc.execute_command("HMSET", "h", "e", "5")
    assert 99 <= rc.execute_command("TTL", "h") <= 100
    # Growing past the listpack limit keeps the TTL too.
    fill(rc, "h", BIG, prefix="g")
    assert rc.execute_command("OBJECT", "ENCODING", "h") == "hashtable"
    assert 99 <= rc.execute_command("TTL", "h") <= 100


def test_emptied_hash_loses_ttl(rc):
    rc.execute_command("HSET", "h", "a", "1")
    rc.execute_command("EXPIRE", "h", "100")
    rc.execute_command("HDEL", "h", "a")
    assert rc.execute_command("EXISTS", "h") == 0
    rc.execute_command("HSET", "h", "a", "1")
    assert rc.execute_command("TTL", "h") == -1


def test_expired_hash_is_gone(rc):
    rc.execute_command("HSET", "h", "a", "1")
    rc.execute_command("PEXPIRE", "h", "1")
    wait_for(lambda: rc.execute_command("EXISTS", "h") == 0, what="hash expiry")
    assert rc.execute_command("HGET", "h", "a") is None
    assert rc.execute_command("HSET", "h", "b", "2") == 1
    assert rc.execute_command("HGETALL", "h") == ["b", "2"]
    assert rc.execute_command("TTL", "h") == -1


# -------------------------------------------------------- COPY RENAME MOVE

@pytest.fixture
def db1(server):
    c = server.client(db=1, decode_responses=True)
    yield c
    c.close()


@pytest.mark.parametrize("n", [3, 1000])
@pytest.mark.parametrize("src,dst", [("h", "h2"), ("a{1}", "b{2}")])
def test_copy_hash(r, n, src, dst):
    d = fill(r, src, n)
    r.expire(src, 100)
    enc = r.object("encoding", src)
    assert r.copy(src, dst) is True
    assert r.hgetall(dst) == d
    assert r.object("encoding", dst) == enc
    assert 99 <= r.ttl(dst) <= 100
    # The copy is independent of the source.
    r.hset(dst, "f0", "changed")
    r.hdel(dst, "f1")
    r.hset(dst, "new", "x")
    assert r.hgetall(src) == d
    r.hset(src, "f2", "src-only")
    assert r.hget(dst, "f2") == "v2"
    # Existing destination: 0 unless REPLACE.
    assert r.copy(src, dst) is False
    assert r.hget(dst, "f0") == "changed"
    assert r.copy(src, dst, replace=True) is True
    assert r.hgetall(dst) == r.hgetall(src)


def test_copy_hash_over_string_with_replace(r):
    r.hset("h", "f", "v")
    r.set("s", "x")
    assert r.copy("h", "s") is False
    assert r.type("s") == "string"
    assert r.copy("h", "s", replace=True) is True
    assert r.type("s") == "hash"
    assert r.hgetall("s") == {"f": "v"}


def test_copy_hash_to_other_db(r, db1):
    d = fill(r, "h", 500)
    assert r.copy("h", "h", destination_db=1) is True
    assert db1.hgetall("h") == d
    db1.hset("h", "f0", "other")
    assert r.hget("h", "f0") == "v0"


@pytest.mark.parametrize("n", [3, 1000])
@pytest.mark.parametrize("src,dst", [("h", "h2"), ("a{1}", "b{2}")])
def test_rename_hash(r, n, src, dst):
    d = fill(r, src, n)
    r.expire(src, 100)
    r.set(dst, "will be overwritten")
    assert r.rename(src, dst) is True
    assert r.exists(src) == 0
    assert r.type(dst) == "hash"
    assert r.hgetall(dst) == d
    assert 99 <= r.ttl(dst) <= 100
    r.hset(dst, "after", "rename")
    assert r.hlen(dst) == n + 1
    assert r.renamenx(dst, src) is True
    assert r.hlen(src) == n + 1
    r.hset(dst, "x", "y")
    assert r.renamenx(src, dst) is False
    assert r.hgetall(dst) == {"x": "y"}


@pytest.mark.parametrize("n", [3, 1000])
def test_move_hash(r, db1, n):
    d = fill(r, "h", n)
    r.expire("h", 100)
    assert r.move("h", 1) is True
    assert r.exists("h") == 0
    assert db1.hgetall("h") == d
    assert db1.type("h") == "hash"
    assert 99 <= db1.ttl("h") <= 100
    r.hset("h", "x", "1")
    assert db1.move("h", 0) is False
    assert r.hgetall("h") == {"x": "1"}
    assert db1.hlen("h") == n


# --------------------------------------------------------------------- RESP3

def test_resp3_hgetall_is_a_map(raw):
    c = raw()
    c.send(resp("HELLO", "3"))
    hello = c.read_reply()
    assert hello.startswith(b"%")
    c.send(resp("HSET", "h", "a", "1", "b", "2") + resp("HGETALL", "h"))
    assert c.read_reply() == b":2\r\n"
    reply = c.read_reply()
    assert reply.startswith(b"%2\r\n")
    assert reply in (b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
                     b"%2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n")
    c.send(resp("HGETALL", "nokey"))
    assert c.read_reply() == b"%0\r\n"


def test_resp3_big_hgetall_is_a_map(raw):
    c = raw()
    c.send(resp("HELLO", "3"))
    c.read_reply()
    args = []
    for i in range(BIG):
        args += ["f%d" % i, "v%d" % i]
    c.send(resp("HSET", "h", *args) + resp("HGETALL", "h"))
    assert c.read_reply() == b":%d\r\n" % BIG
    assert c.read_reply().startswith(b"%%%d\r\n" % BIG)


def test_resp3_other_hash_replies(raw):
    c = raw()
    c.send(resp("HELLO", "3"))
    c.read_reply()
    c.send(resp("HSET", "h", "a", "1") + resp("HRANDFIELD", "h", "-2", "WITHVALUES")
           + resp("HRANDFIELD", "h", "1") + resp("HGET", "h", "nofield")
           + resp("HINCRBYFLOAT", "h", "a", "0.5") + resp("HKEYS", "h")
           + resp("HSCAN", "h", "0"))
    assert c.read_reply() == b":1\r\n"
    # WITHVALUES in RESP3: an array of [field, value] pairs.
    assert c.read_reply() == (b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
                              b"*2\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert c.read_reply() == b"*1\r\n$1\r\na\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"$3\r\n1.5\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\na\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$3\r\n1.5\r\n"


# ------------------------------------------------------------------- memory

def test_memory_usage_of_big_hash(r):
    d = fill(r, "h", 2000, value="value-")
    assert r.object("encoding", "h") == "hashtable"
    payload = sum(len(f) + len(v) for f, v in d.items())
    assert r.memory_usage("h", samples=0) > payload
    assert r.memory_usage("h") > payload
    assert r.memory_usage("nokey") is None


# Accounting tests run on their own server each, so a leak in one cannot fail another.

@pytest.fixture
def mr(server_factory):
    c = server_factory().client(decode_responses=True)
    yield c
    c.close()


def hash_mem(c):
    return c.info("memory")["mem_type_hash"]


def wait_hash_mem_zero(c, what):
    wait_for(lambda: hash_mem(c)["bytes"] == 0 and hash_mem(c)["keys"] == 0, timeout=2,
             what=what)


@strata_only
def test_info_mem_type_hash(mr):
    t = hash_mem(mr)
    assert isinstance(t, dict)
    assert t["keys"] == 0 and t["bytes"] == 0
    mr.hset("h", "f", "v")
    t = hash_mem(mr)
    assert t["keys"] == 1 and t["bytes"] > 0
    small = t["bytes"]
    fill(mr, "h", BIG)
    t = hash_mem(mr)
    assert t["keys"] == 1 and t["bytes"] > small
    mr.delete("h")
    wait_hash_mem_zero(mr, "mem_type_hash back to 0 after DEL")


@strata_only
def test_mem_type_hash_back_to_zero_after_flushall(mr):
    p = mr.pipeline(transaction=False)
    for i in range(1000):
        p.hset("hash:%d" % i, mapping={"a": "1", "b": "x" * (i % 100)})
    p.execute()
    big = fill(mr, "big", 2000)
    t = hash_mem(mr)
    assert t["keys"] == 1001
    payload = sum(len(f) + len(v) for f, v in big.items())
    assert t["bytes"] > payload
    grown = t["bytes"]
    mr.copy("big", "big2")
    mr.rename("hash:0", "moved{x}")
    t = hash_mem(mr)
    assert t["keys"] == 1002 and t["bytes"] > grown
    mr.flushall()
    wait_hash_mem_zero(mr, "mem_type_hash back to 0 after FLUSHALL")


def _hdel_all_at_once(c):
    d = fill(c, "h", BIG)
    assert c.hdel("h", *d) == BIG


def _hdel_in_two_steps(c):
    d = list(fill(c, "h", BIG))
    c.hdel("h", *d[:-1])
    c.hdel("h", d[-1])


def _hdel_one_by_one_small(c):
    for f in fill(c, "h", 5):
        c.hdel("h", f)


def _hdel_after_conversion(c):
    fill(c, "h", 3)
    c.hset("h", "long", "x" * 100)
    c.hdel("h", "f0", "f1", "f2", "long")


def _set_over_hash(c):
    fill(c, "h", BIG)
    c.set("h", "x")
    c.delete("h")


def _rename_over_hash(c):
    fill(c, "a{1}", BIG)
    fill(c, "b{2}", BIG)
    c.rename("a{1}", "b{2}")
    c.delete("b{2}")


def _copy_replace_over_hash(c):
    fill(c, "a", BIG)
    fill(c, "b", 10)
    c.copy("a", "b", replace=True)
    c.delete("a", "b")


def _move_and_back(c):
    fill(c, "h", BIG)
    c.move("h", 1)
    c.execute_command("SELECT", "1")
    try:
        c.delete("h")
    finally:
        c.execute_command("SELECT", "0")


def _expire(c):
    fill(c, "h", BIG)
    fill(c, "s", 3)
    c.pexpire("h", 1)
    c.pexpire("s", 1)
    wait_for(lambda: c.exists("h", "s") == 0, what="expiry")


def _hincrbyfloat_then_unlink(c):
    for i in range(BIG):
        c.hincrbyfloat("h", "f%d" % i, 0.5)
    c.unlink("h")


@strata_only
@pytest.mark.parametrize("scenario", [
    _hdel_all_at_once, _hdel_in_two_steps, _hdel_one_by_one_small, _hdel_after_conversion,
    _set_over_hash, _rename_over_hash, _copy_replace_over_hash, _move_and_back, _expire,
    _hincrbyfloat_then_unlink,
], ids=lambda f: f.__name__.strip("_"))
def test_mem_type_hash_back_to_zero_when_hashes_go(mr, scenario):
    # mr is a fresh client: SELECT in a scenario does not leak to other tests.
    scenario(mr)
    assert mr.dbsize() == 0
    wait_hash_mem_zero(mr, "mem_type_hash back to 0 after " + scenario.__name__)
    mr.flushall()
    wait_hash_mem_zero(mr, "mem_type_hash back to 0 after FLUSHALL")
