"""List commands (the non-blocking ones): LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE
LINDEX LSET LINSERT LREM LTRIM LPOS LMOVE RPOPLPUSH LMPOP, reply shapes, errors, WRONGTYPE,
deletion of emptied lists, big lists, binary data, large elements, TTL, COPY/RENAME/MOVE,
encodings, a randomized comparison with a Python model and memory accounting.

Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it.
"""
import random
import re
import threading

import pytest
import redis

from conftest import TARGET
from helpers import NOT_INT, SYNTAX, WRONGTYPE, resp, same, wait_for

strata_only = pytest.mark.skipif(TARGET == "redis", reason="strata memory accounting")

NOT_POSITIVE = "^value is out of range, must be positive$"
NO_SUCH_KEY = "^no such key$"
INDEX_OUT_OF_RANGE = "^index out of range$"
RANK_ZERO = ("^" + re.escape("RANK can't be zero: use 1 to start from the first match, "
                             "2 from the second ... or use negative to start from the end "
                             "of the list") + "$")
COUNT_NEGATIVE = "^COUNT can't be negative$"
MAXLEN_NEGATIVE = "^MAXLEN can't be negative$"
NUMKEYS_ZERO = "^numkeys should be greater than 0$"
COUNT_ZERO = "^count should be greater than 0$"
LLONG_MAX = "9223372036854775807"
LLONG_MIN = "-9223372036854775808"
# Elements enough for several quicklist nodes of the default 8 KB.
BIG = 20000


def arity(name):
    return "^wrong number of arguments for '%s' command$" % name


def redis_range(lst, start, stop):
    """The elements LRANGE start stop returns (and LTRIM keeps) for a list `lst`."""
    n = len(lst)
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    if start < 0:
        start = 0
    if start > stop or start >= n:
        return []
    if stop >= n:
        stop = n - 1
    return lst[start:stop + 1]


def redis_lrem(lst, count, value):
    """(the list after LREM key count value, number removed)."""
    limit = abs(count) if count else len(lst)
    seq = lst if count >= 0 else lst[::-1]
    out, removed = [], 0
    for x in seq:
        if x == value and removed < limit:
            removed += 1
        else:
            out.append(x)
    return (out if count >= 0 else out[::-1]), removed


def rpush_batches(client, key, items, batch=1000):
    """RPUSH items in batches onto a new list; returns the list model."""
    for i in range(0, len(items), batch):
        chunk = items[i:i + batch]
        assert client.execute_command("RPUSH", key, *chunk) == i + len(chunk)
    return list(items)


def make_big(client, key, n=BIG):
    return rpush_batches(client, key, ["e%d" % i for i in range(n)])


def lrange_all(client, key):
    return client.execute_command("LRANGE", key, 0, -1)


# ------------------------------------------------------------- LPUSH RPUSH

def test_lpush_rpush_order(rc):
    assert rc.execute_command("LPUSH", "l", "a", "b", "c") == 3
    assert lrange_all(rc, "l") == ["c", "b", "a"]
    assert rc.execute_command("RPUSH", "l", "d", "e") == 5
    assert lrange_all(rc, "l") == ["c", "b", "a", "d", "e"]
    assert rc.execute_command("LPUSH", "l", "x") == 6
    assert rc.execute_command("RPUSH", "l", "y") == 7
    assert lrange_all(rc, "l") == ["x", "c", "b", "a", "d", "e", "y"]
    assert rc.execute_command("LLEN", "l") == 7
    assert rc.execute_command("TYPE", "l") == "list"
    assert rc.execute_command("EXISTS", "l") == 1


def test_rpush_creates_key_and_keeps_duplicates(rc):
    assert rc.execute_command("RPUSH", "l", "a", "a", "", "a") == 4
    assert lrange_all(rc, "l") == ["a", "a", "", "a"]
    assert rc.execute_command("LPUSH", "m", "") == 1
    assert lrange_all(rc, "m") == [""]


@pytest.mark.parametrize("name", ["lpush", "rpush", "lpushx", "rpushx"])
def test_push_arity(rc, name):
    for args in ([], ["l"]):
        with pytest.raises(redis.ResponseError, match=arity(name)):
            rc.execute_command(name.upper(), *args)
    assert rc.execute_command("EXISTS", "l") == 0


def test_numeric_looking_elements_roundtrip_exactly(rc):
    values = ["0", "-1", "123", "-0", "007", "+1", " 1", "1 ", "1.0", "1e3",
              "9223372036854775807", "-9223372036854775808", "9223372036854775808",
              "-9223372036854775809", "18446744073709551616", "0x10", "12345678901234567890",
              "127", "128", "-128", "-129", "32767", "32768", "8388607", "8388608",
              "2147483647", "2147483648", "4294967296", "1"]
    assert rc.execute_command("RPUSH", "l", *values) == len(values)
    assert lrange_all(rc, "l") == values
    for i, v in enumerate(values):
        assert rc.execute_command("LINDEX", "l", i) == v
    assert rc.execute_command("LPOS", "l", "1") == len(values) - 1
    assert rc.execute_command("LPOS", "l", "01") is None
    assert rc.execute_command("LREM", "l", 0, "-0") == 1
    assert rc.execute_command("LREM", "l", 0, "0") == 1
    assert rc.execute_command("LLEN", "l") == len(values) - 2


# ----------------------------------------------------------- LPUSHX RPUSHX

def test_pushx_missing_key(rc):
    assert rc.execute_command("LPUSHX", "l", "a") == 0
    assert rc.execute_command("RPUSHX", "l", "a", "b") == 0
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("TYPE", "l") == "none"


def test_pushx_existing_key(rc):
    rc.execute_command("RPUSH", "l", "m")
    assert rc.execute_command("LPUSHX", "l", "b", "a") == 3
    assert rc.execute_command("RPUSHX", "l", "y", "z") == 5
    assert lrange_all(rc, "l") == ["a", "b", "m", "y", "z"]


# --------------------------------------------------------------- LPOP RPOP

def test_pop_without_count(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert rc.execute_command("LPOP", "l") == "a"
    assert rc.execute_command("RPOP", "l") == "c"
    assert lrange_all(rc, "l") == ["b"]
    assert rc.execute_command("LPOP", "nokey") is None
    assert rc.execute_command("RPOP", "nokey") is None


def test_pop_with_count(rc):
    rc.execute_command("RPUSH", "l", *"abcdefg")
    assert rc.execute_command("LPOP", "l", 2) == ["a", "b"]
    assert rc.execute_command("RPOP", "l", 2) == ["g", "f"]
    assert rc.execute_command("LPOP", "l", 1) == ["c"]
    assert rc.execute_command("LPOP", "l", 0) == []
    assert rc.execute_command("RPOP", "l", 0) == []
    assert lrange_all(rc, "l") == ["d", "e"]
    assert rc.execute_command("RPOP", "l", 100) == ["e", "d"]
    assert rc.execute_command("EXISTS", "l") == 0


def test_pop_count_larger_than_list(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert rc.execute_command("LPOP", "l", LLONG_MAX) == ["a", "b", "c"]
    assert rc.execute_command("EXISTS", "l") == 0


@pytest.mark.parametrize("cmd", ["LPOP", "RPOP"])
def test_pop_count_on_missing_key_is_nil(rc, cmd):
    assert rc.execute_command(cmd, "nokey", 2) is None
    assert rc.execute_command(cmd, "nokey", 0) is None
    assert rc.execute_command("EXISTS", "nokey") == 0


@pytest.mark.parametrize("cmd", ["LPOP", "RPOP"])
@pytest.mark.parametrize("count", ["-1", LLONG_MIN, "abc", "1.5", "9223372036854775808"])
def test_pop_bad_count(rc, cmd, count):
    rc.execute_command("RPUSH", "l", "a", "b")
    for key in ("l", "nokey"):
        with pytest.raises(redis.ResponseError, match=NOT_POSITIVE):
            rc.execute_command(cmd, key, count)
    assert lrange_all(rc, "l") == ["a", "b"]


@pytest.mark.parametrize("name", ["lpop", "rpop"])
def test_pop_arity(rc, name):
    rc.execute_command("RPUSH", "l", "a", "b")
    for args in ([], ["l", "1", "2"]):
        with pytest.raises(redis.ResponseError, match=arity(name)):
            rc.execute_command(name.upper(), *args)
    assert rc.execute_command("LLEN", "l") == 2


def test_pop_reply_bytes(raw):
    c = raw()
    c.send(resp("RPUSH", "l", "a", "b", "c") + resp("LPOP", "nokey") + resp("LPOP", "nokey", 2)
           + resp("RPOP", "nokey", 0) + resp("LPOP", "l") + resp("RPOP", "l", 1)
           + resp("LPOP", "l", 0) + resp("LPOP", "l", 5) + resp("LPOP", "l", -1))
    assert c.read_reply() == b":3\r\n"
    assert c.read_reply() == b"$-1\r\n"
    assert c.read_reply() == b"*-1\r\n"
    assert c.read_reply() == b"*-1\r\n"
    assert c.read_reply() == b"$1\r\na\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\nc\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b"*1\r\n$1\r\nb\r\n"
    assert c.read_reply() == b"-ERR value is out of range, must be positive\r\n"


# -------------------------------------------------------------------- LLEN

def test_llen(rc):
    assert rc.execute_command("LLEN", "nokey") == 0
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert rc.execute_command("LLEN", "l") == 3
    rc.execute_command("LPOP", "l")
    assert rc.execute_command("LLEN", "l") == 2


# ------------------------------------------------------------------ LRANGE

@pytest.mark.parametrize("start,stop", [
    (0, -1), (0, 0), (1, 2), (-2, -1), (-3, 1), (2, 100), (-100, 1), (-100, -50), (3, 2),
    (5, 10), (6, 6), (-1, -2), (0, -7), (0, -6), (-6, -6), (4, 1),
    (LLONG_MIN, LLONG_MAX), (0, LLONG_MAX), (LLONG_MIN, -1), (LLONG_MAX, LLONG_MAX),
    (LLONG_MIN, LLONG_MIN), (-1, LLONG_MAX),
])
def test_lrange(rc, start, stop):
    model = ["a", "b", "c", "d", "e", "f"]
    rc.execute_command("RPUSH", "l", *model)
    assert rc.execute_command("LRANGE", "l", start, stop) == \
        redis_range(model, int(start), int(stop))


def test_lrange_missing_key(rc):
    assert rc.execute_command("LRANGE", "nokey", 0, -1) == []
    assert rc.execute_command("LRANGE", "nokey", 5, 1) == []


@pytest.mark.parametrize("start,stop", [("a", "1"), ("0", "b"), ("1.5", "2"), ("0", ""),
                                        ("9223372036854775808", "1"),
                                        ("0", "-9223372036854775809")])
def test_lrange_non_integer(rc, start, stop):
    rc.execute_command("RPUSH", "l", "a")
    for key in ("l", "nokey"):
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("LRANGE", key, start, stop)


def test_lrange_arity(rc):
    for args in (["l"], ["l", "0"], ["l", "0", "1", "2"]):
        with pytest.raises(redis.ResponseError, match=arity("lrange")):
            rc.execute_command("LRANGE", *args)


# ------------------------------------------------------------------ LINDEX

def test_lindex(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert [rc.execute_command("LINDEX", "l", i) for i in range(-3, 3)] == \
        ["a", "b", "c", "a", "b", "c"]
    for i in (3, -4, 100, -100, LLONG_MAX, LLONG_MIN):
        assert rc.execute_command("LINDEX", "l", i) is None
    assert rc.execute_command("LINDEX", "nokey", 0) is None


def test_lindex_errors(rc):
    rc.execute_command("RPUSH", "l", "a")
    for idx in ("a", "1.5", "", "9223372036854775808"):
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("LINDEX", "l", idx)
    with pytest.raises(redis.ResponseError, match=arity("lindex")):
        rc.execute_command("LINDEX", "l")


# -------------------------------------------------------------------- LSET

def test_lset(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert rc.execute_command("LSET", "l", 0, "A") == "OK"
    assert rc.execute_command("LSET", "l", -1, "C") == "OK"
    assert rc.execute_command("LSET", "l", -2, "B") == "OK"
    assert lrange_all(rc, "l") == ["A", "B", "C"]
    assert rc.execute_command("LSET", "l", 1, "x" * 1000) == "OK"
    assert rc.execute_command("LINDEX", "l", 1) == "x" * 1000
    assert rc.execute_command("LSET", "l", 1, "") == "OK"
    assert lrange_all(rc, "l") == ["A", "", "C"]


def test_lset_errors(rc):
    with pytest.raises(redis.ResponseError, match=NO_SUCH_KEY):
        rc.execute_command("LSET", "nokey", 0, "x")
    assert rc.execute_command("EXISTS", "nokey") == 0
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    for idx in (3, -4, 100, LLONG_MAX, LLONG_MIN):
        with pytest.raises(redis.ResponseError, match=INDEX_OUT_OF_RANGE):
            rc.execute_command("LSET", "l", idx, "x")
    for idx in ("a", "1.5", "9223372036854775808"):
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("LSET", "l", idx, "x")
    with pytest.raises(redis.ResponseError, match=arity("lset")):
        rc.execute_command("LSET", "l", 0)
    assert lrange_all(rc, "l") == ["a", "b", "c"]


def test_lset_reply_bytes(raw):
    c = raw()
    c.send(resp("RPUSH", "l", "a") + resp("LSET", "l", 0, "b") + resp("LSET", "l", 1, "b")
           + resp("LSET", "nokey", 0, "b"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"-ERR index out of range\r\n"
    assert c.read_reply() == b"-ERR no such key\r\n"


# ----------------------------------------------------------------- LINSERT

def test_linsert(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c", "b")
    assert rc.execute_command("LINSERT", "l", "BEFORE", "b", "x") == 5
    assert lrange_all(rc, "l") == ["a", "x", "b", "c", "b"]
    assert rc.execute_command("LINSERT", "l", "AFTER", "b", "y") == 6
    assert lrange_all(rc, "l") == ["a", "x", "b", "y", "c", "b"]
    assert rc.execute_command("LINSERT", "l", "before", "a", "first") == 7
    assert rc.execute_command("LINSERT", "l", "after", "b", "z") == 8
    assert rc.execute_command("LINSERT", "l", "AfTeR", "c", "last-but-one") == 9
    rc.execute_command("RPUSH", "l", "tail")
    assert rc.execute_command("LINSERT", "l", "AFTER", "tail", "end") == 11
    assert lrange_all(rc, "l") == ["first", "a", "x", "b", "z", "y", "c", "last-but-one", "b",
                                   "tail", "end"]


def test_linsert_pivot_missing(rc):
    rc.execute_command("RPUSH", "l", "a", "b")
    assert rc.execute_command("LINSERT", "l", "BEFORE", "zz", "x") == -1
    assert rc.execute_command("LINSERT", "l", "AFTER", "A", "x") == -1
    assert lrange_all(rc, "l") == ["a", "b"]


def test_linsert_key_missing(rc):
    assert rc.execute_command("LINSERT", "nokey", "BEFORE", "a", "x") == 0
    assert rc.execute_command("LINSERT", "nokey", "AFTER", "a", "x") == 0
    assert rc.execute_command("EXISTS", "nokey") == 0


def test_linsert_errors(rc):
    rc.execute_command("RPUSH", "l", "a")
    for key in ("l", "nokey"):
        for where in ("MIDDLE", "BEFOREX", ""):
            with pytest.raises(redis.ResponseError, match=SYNTAX):
                rc.execute_command("LINSERT", key, where, "a", "x")
    for args in (["l", "BEFORE", "a"], ["l", "BEFORE", "a", "x", "y"]):
        with pytest.raises(redis.ResponseError, match=arity("linsert")):
            rc.execute_command("LINSERT", *args)
    assert lrange_all(rc, "l") == ["a"]
    assert rc.execute_command("EXISTS", "nokey") == 0


# -------------------------------------------------------------------- LREM

@pytest.mark.parametrize("count,removed,left", [
    (2, 2, ["b", "c", "a", "b", "a"]),
    (-2, 2, ["a", "b", "a", "c", "b"]),
    (0, 4, ["b", "c", "b"]),
    (1, 1, ["b", "a", "c", "a", "b", "a"]),
    (-1, 1, ["a", "b", "a", "c", "a", "b"]),
    (100, 4, ["b", "c", "b"]),
    (-100, 4, ["b", "c", "b"]),
])
def test_lrem(rc, count, removed, left):
    rc.execute_command("RPUSH", "l", "a", "b", "a", "c", "a", "b", "a")
    assert rc.execute_command("LREM", "l", count, "a") == removed
    assert lrange_all(rc, "l") == left


def test_lrem_none_found(rc):
    rc.execute_command("RPUSH", "l", "a", "b")
    assert rc.execute_command("LREM", "l", 0, "zz") == 0
    assert rc.execute_command("LREM", "l", 1, "A") == 0
    assert rc.execute_command("LREM", "l", -1, "") == 0
    assert lrange_all(rc, "l") == ["a", "b"]
    assert rc.execute_command("LREM", "nokey", 0, "a") == 0
    assert rc.execute_command("EXISTS", "nokey") == 0


def test_lrem_errors(rc):
    rc.execute_command("RPUSH", "l", "a")
    for count in ("x", "1.5", "9223372036854775808"):
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("LREM", "l", count, "a")
    with pytest.raises(redis.ResponseError, match=arity("lrem")):
        rc.execute_command("LREM", "l", "0")
    assert lrange_all(rc, "l") == ["a"]


# ------------------------------------------------------------------- LTRIM

@pytest.mark.parametrize("start,stop", [
    (2, 5), (0, -1), (-3, -1), (0, 0), (-1, -1), (1, 100), (-100, 1), (-100, 100),
    (0, LLONG_MAX), (LLONG_MIN, LLONG_MAX), (-5, -3),
])
def test_ltrim_keeps_range(rc, start, stop):
    model = [str(i) for i in range(10)]
    rc.execute_command("RPUSH", "l", *model)
    assert rc.execute_command("LTRIM", "l", start, stop) == "OK"
    assert lrange_all(rc, "l") == redis_range(model, int(start), int(stop))
    assert rc.execute_command("EXISTS", "l") == 1


@pytest.mark.parametrize("start,stop", [(5, 2), (10, 20), (-1, -2), (0, -11), (-100, -11),
                                        (LLONG_MAX, LLONG_MAX), (LLONG_MIN, LLONG_MIN)])
def test_ltrim_empty_range_deletes_key(rc, start, stop):
    rc.execute_command("RPUSH", "l", *[str(i) for i in range(10)])
    assert rc.execute_command("LTRIM", "l", start, stop) == "OK"
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("TYPE", "l") == "none"
    assert rc.execute_command("LLEN", "l") == 0


def test_ltrim_missing_key_and_errors(rc):
    assert rc.execute_command("LTRIM", "nokey", 0, 1) == "OK"
    assert rc.execute_command("EXISTS", "nokey") == 0
    rc.execute_command("RPUSH", "l", "a", "b")
    for start, stop in (("a", "1"), ("0", "1.5"), ("9223372036854775808", "0")):
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command("LTRIM", "l", start, stop)
    with pytest.raises(redis.ResponseError, match=arity("ltrim")):
        rc.execute_command("LTRIM", "l", "0")
    assert lrange_all(rc, "l") == ["a", "b"]


# -------------------------------------------------------------------- LPOS

LPOS_LIST = ["a", "b", "c", "1", "2", "3", "c", "c"]


@pytest.mark.parametrize("opts,expected", [
    ([], 2),
    (["RANK", 1], 2),
    (["RANK", 2], 6),
    (["RANK", 3], 7),
    (["RANK", 4], None),
    (["RANK", -1], 7),
    (["RANK", -3], 2),
    (["RANK", -4], None),
    (["RANK", LLONG_MAX], None),
    (["COUNT", 2], [2, 6]),
    (["COUNT", 0], [2, 6, 7]),
    (["COUNT", 100], [2, 6, 7]),
    (["RANK", -1, "COUNT", 2], [7, 6]),
    (["RANK", -1, "COUNT", 0], [7, 6, 2]),
    (["RANK", 2, "COUNT", 0], [6, 7]),
    (["RANK", 4, "COUNT", 0], []),
    (["MAXLEN", 1], None),
    (["MAXLEN", 3], 2),
    (["MAXLEN", 0], 2),
    (["COUNT", 0, "MAXLEN", 7], [2, 6]),
    (["COUNT", 0, "MAXLEN", 0], [2, 6, 7]),
    (["RANK", -1, "COUNT", 0, "MAXLEN", 2], [7, 6]),
    (["RANK", -2, "MAXLEN", 1], None),
    (["rank", 2, "count", 1, "maxlen", 100], [6]),
    (["RANK", 5, "RANK", 1], 2),
    (["COUNT", 1, "COUNT", 0], [2, 6, 7]),
])
def test_lpos(rc, opts, expected):
    rc.execute_command("RPUSH", "l", *LPOS_LIST)
    assert rc.execute_command("LPOS", "l", "c", *opts) == expected


def test_lpos_not_found(rc):
    rc.execute_command("RPUSH", "l", *LPOS_LIST)
    assert rc.execute_command("LPOS", "l", "zz") is None
    assert rc.execute_command("LPOS", "l", "zz", "COUNT", 0) == []
    assert rc.execute_command("LPOS", "l", "zz", "COUNT", 3) == []
    assert rc.execute_command("LPOS", "l", "C") is None
    assert rc.execute_command("LPOS", "l", "1") == 3
    assert rc.execute_command("LPOS", "nokey", "a") is None
    assert rc.execute_command("LPOS", "nokey", "a", "COUNT", 0) == []
    assert rc.execute_command("LPOS", "nokey", "a", "RANK", -1, "COUNT", 2) == []


LPOS_ERRORS = [
    (["RANK", 0], RANK_ZERO),
    (["COUNT", -1], COUNT_NEGATIVE),
    (["MAXLEN", -1], MAXLEN_NEGATIVE),
    (["COUNT", 0, "RANK", 0], RANK_ZERO),
    (["RANK", "x"], NOT_INT),
    (["RANK", "9223372036854775808"], NOT_INT),
    # COUNT and MAXLEN answer their own message for a value that is not an integer too.
    (["COUNT", "1.5"], COUNT_NEGATIVE),
    (["MAXLEN", "9223372036854775808"], MAXLEN_NEGATIVE),
    (["FOO", 1], SYNTAX),
    (["RANK"], SYNTAX),
    (["COUNT"], SYNTAX),
    (["MAXLEN"], SYNTAX),
    (["RANK", 1, "COUNT"], SYNTAX),
]


@pytest.mark.parametrize("opts,pattern", LPOS_ERRORS,
                         ids=["-".join(map(str, a)) for a, _ in LPOS_ERRORS])
def test_lpos_errors(rc, opts, pattern):
    rc.execute_command("RPUSH", "l", *LPOS_LIST)
    for key in ("l", "nokey"):
        with pytest.raises(redis.ResponseError, match=pattern):
            rc.execute_command("LPOS", key, "c", *opts)


def test_lpos_arity(rc):
    with pytest.raises(redis.ResponseError, match=arity("lpos")):
        rc.execute_command("LPOS", "l")


def test_lpos_reply_bytes(raw):
    c = raw()
    c.send(resp("RPUSH", "l", "a", "b", "a") + resp("LPOS", "l", "a") + resp("LPOS", "l", "z")
           + resp("LPOS", "l", "a", "COUNT", 0) + resp("LPOS", "l", "z", "COUNT", 0)
           + resp("LPOS", "nokey", "a") + resp("LPOS", "l", "a", "RANK", 0))
    assert c.read_reply() == b":3\r\n"
    assert c.read_reply() == b":0\r\n"
    assert c.read_reply() == b"$-1\r\n"
    assert c.read_reply() == b"*2\r\n:0\r\n:2\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b"$-1\r\n"
    assert c.read_reply().startswith(b"-ERR RANK can't be zero")


# ------------------------------------------------------ LMOVE RPOPLPUSH

@pytest.mark.parametrize("src,dst", [("l", "d"), ("a{1}", "b{2}")])
@pytest.mark.parametrize("wherefrom,whereto,moved,src_left,dst_after", [
    ("LEFT", "LEFT", "a", ["b", "c"], ["a", "x", "y"]),
    ("LEFT", "RIGHT", "a", ["b", "c"], ["x", "y", "a"]),
    ("RIGHT", "LEFT", "c", ["a", "b"], ["c", "x", "y"]),
    ("RIGHT", "RIGHT", "c", ["a", "b"], ["x", "y", "c"]),
])
def test_lmove_directions(rc, src, dst, wherefrom, whereto, moved, src_left, dst_after):
    rc.execute_command("RPUSH", src, "a", "b", "c")
    rc.execute_command("RPUSH", dst, "x", "y")
    assert rc.execute_command("LMOVE", src, dst, wherefrom, whereto) == moved
    assert lrange_all(rc, src) == src_left
    assert lrange_all(rc, dst) == dst_after


@pytest.mark.parametrize("src,dst", [("l", "d"), ("a{1}", "b{2}")])
def test_lmove_creates_destination_and_deletes_emptied_source(rc, src, dst):
    rc.execute_command("RPUSH", src, "a", "b")
    assert rc.execute_command("LMOVE", src, dst, "left", "right") == "a"
    assert rc.execute_command("TYPE", dst) == "list"
    assert rc.execute_command("LMOVE", src, dst, "Left", "Right") == "b"
    assert rc.execute_command("EXISTS", src) == 0
    assert lrange_all(rc, dst) == ["a", "b"]
    assert rc.execute_command("LMOVE", src, dst, "LEFT", "RIGHT") is None
    assert lrange_all(rc, dst) == ["a", "b"]


@pytest.mark.parametrize("wherefrom,whereto,after", [
    ("LEFT", "RIGHT", ["b", "c", "d", "a"]),
    ("RIGHT", "LEFT", ["d", "a", "b", "c"]),
    ("LEFT", "LEFT", ["a", "b", "c", "d"]),
    ("RIGHT", "RIGHT", ["a", "b", "c", "d"]),
])
def test_lmove_same_key_rotates(rc, wherefrom, whereto, after):
    rc.execute_command("RPUSH", "l", "a", "b", "c", "d")
    moved = rc.execute_command("LMOVE", "l", "l", wherefrom, whereto)
    assert moved == ("a" if wherefrom == "LEFT" else "d")
    assert lrange_all(rc, "l") == after
    # A full rotation gives the list back.
    for _ in range(3):
        rc.execute_command("LMOVE", "l", "l", wherefrom, whereto)
    assert lrange_all(rc, "l") == ["a", "b", "c", "d"]


def test_lmove_same_key_single_element(rc):
    rc.execute_command("RPUSH", "l", "only")
    assert rc.execute_command("LMOVE", "l", "l", "LEFT", "RIGHT") == "only"
    assert rc.execute_command("RPOPLPUSH", "l", "l") == "only"
    assert lrange_all(rc, "l") == ["only"]
    assert rc.execute_command("EXISTS", "l") == 1


def test_lmove_missing_source(rc):
    assert rc.execute_command("LMOVE", "nokey", "d", "LEFT", "RIGHT") is None
    assert rc.execute_command("RPOPLPUSH", "nokey", "d") is None
    assert rc.execute_command("EXISTS", "d") == 0
    rc.execute_command("RPUSH", "d", "x")
    assert rc.execute_command("LMOVE", "nokey", "d", "RIGHT", "LEFT") is None
    assert lrange_all(rc, "d") == ["x"]


@pytest.mark.parametrize("src,dst", [("l", "s"), ("a{1}", "b{2}")])
@pytest.mark.parametrize("n", [1, 3])
def test_lmove_wrong_destination_type(rc, src, dst, n):
    items = ["e%d" % i for i in range(n)]
    rc.execute_command("RPUSH", src, *items)
    rc.execute_command("SET", dst, "str")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("LMOVE", src, dst, "LEFT", "RIGHT")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("RPOPLPUSH", src, dst)
    assert lrange_all(rc, src) == items
    assert rc.execute_command("GET", dst) == "str"
    rc.execute_command("HSET", "h", "f", "v")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("LMOVE", src, "h", "RIGHT", "LEFT")
    assert lrange_all(rc, src) == items


def test_lmove_missing_source_wrong_destination_type(rc):
    # The source is looked at first: an empty source gives nil before the destination's
    # type is checked.
    rc.execute_command("SET", "s", "str")
    assert rc.execute_command("LMOVE", "nokey", "s", "LEFT", "RIGHT") is None
    assert rc.execute_command("RPOPLPUSH", "nokey", "s") is None
    assert rc.execute_command("GET", "s") == "str"


def test_lmove_wrong_source_type(rc):
    rc.execute_command("SET", "s", "str")
    rc.execute_command("RPUSH", "d", "x")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("LMOVE", "s", "d", "LEFT", "RIGHT")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("RPOPLPUSH", "s", "d")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("LMOVE", "s", "s", "LEFT", "RIGHT")
    assert lrange_all(rc, "d") == ["x"]


def test_lmove_errors(rc):
    rc.execute_command("RPUSH", "l", "a")
    for wf, wt in (("LEFT", "MIDDLE"), ("UP", "LEFT"), ("", "RIGHT")):
        for src in ("l", "nokey"):
            with pytest.raises(redis.ResponseError, match=SYNTAX):
                rc.execute_command("LMOVE", src, "d", wf, wt)
    for args in (["l", "d", "LEFT"], ["l", "d", "LEFT", "RIGHT", "x"]):
        with pytest.raises(redis.ResponseError, match=arity("lmove")):
            rc.execute_command("LMOVE", *args)
    for args in (["l"], ["l", "d", "x"]):
        with pytest.raises(redis.ResponseError, match=arity("rpoplpush")):
            rc.execute_command("RPOPLPUSH", *args)
    assert lrange_all(rc, "l") == ["a"]
    assert rc.execute_command("EXISTS", "d") == 0


@pytest.mark.parametrize("src,dst", [("l", "d"), ("a{1}", "b{2}")])
def test_rpoplpush(rc, src, dst):
    rc.execute_command("RPUSH", src, "a", "b", "c")
    rc.execute_command("RPUSH", dst, "x")
    assert rc.execute_command("RPOPLPUSH", src, dst) == "c"
    assert rc.execute_command("RPOPLPUSH", src, dst) == "b"
    assert lrange_all(rc, src) == ["a"]
    assert lrange_all(rc, dst) == ["b", "c", "x"]
    assert rc.execute_command("RPOPLPUSH", dst, dst) == "x"
    assert lrange_all(rc, dst) == ["x", "b", "c"]
    assert rc.execute_command("RPOPLPUSH", src, dst) == "a"
    assert rc.execute_command("EXISTS", src) == 0
    assert rc.execute_command("RPOPLPUSH", src, dst) is None


@pytest.mark.parametrize("src,dst", [("l", "d"), ("a{1}", "b{2}")])
def test_lmove_many_between_keys_matches_model(rc, src, dst):
    rng = random.Random(7)
    model = {src: ["s%d" % i for i in range(300)], dst: ["d%d" % i for i in range(50)]}
    rc.execute_command("RPUSH", src, *model[src])
    rc.execute_command("RPUSH", dst, *model[dst])
    p = rc.pipeline(transaction=False)
    expected = []
    for _ in range(1000):
        a, b = (src, dst) if rng.random() < 0.5 else (dst, src)
        wf, wt = rng.choice(["LEFT", "RIGHT"]), rng.choice(["LEFT", "RIGHT"])
        p.execute_command("LMOVE", a, b, wf, wt)
        if not model[a]:
            expected.append(None)
            continue
        v = model[a].pop(0 if wf == "LEFT" else -1)
        if wt == "LEFT":
            model[b].insert(0, v)
        else:
            model[b].append(v)
        expected.append(v)
    assert p.execute() == expected
    assert lrange_all(rc, src) == model[src]
    assert lrange_all(rc, dst) == model[dst]


def test_lmove_between_shards_from_many_clients(server):
    """Clients moving elements back and forth between two keys on different shards at
    the same time: every element is still there exactly once afterwards."""
    src, dst = "a{1}", "b{2}"
    items = ["x%d" % i for i in range(200)]
    c = server.client(decode_responses=True)
    c.flushall()
    c.rpush(src, *items)
    errors = []

    def worker(seed):
        rng = random.Random(seed)
        w = server.client(decode_responses=True)
        try:
            for _ in range(10):
                p = w.pipeline(transaction=False)
                for _ in range(50):
                    a, b = (src, dst) if rng.random() < 0.5 else (dst, src)
                    p.execute_command("LMOVE", a, b, rng.choice(["LEFT", "RIGHT"]),
                                      rng.choice(["LEFT", "RIGHT"]))
                p.execute()
        except Exception as e:  # reported by the main thread
            errors.append(e)
        finally:
            w.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert not errors
        got = c.lrange(src, 0, -1) + c.lrange(dst, 0, -1)
        assert sorted(got) == sorted(items)
        assert c.llen(src) + c.llen(dst) == len(items)
    finally:
        c.close()


# ------------------------------------------------------------------- LMPOP

def test_lmpop_first_non_empty_key(rc):
    rc.execute_command("RPUSH", "b", "b1", "b2", "b3")
    rc.execute_command("RPUSH", "c", "c1")
    assert rc.execute_command("LMPOP", 3, "a", "b", "c", "LEFT") == ["b", ["b1"]]
    assert rc.execute_command("LMPOP", 3, "a", "b", "c", "RIGHT") == ["b", ["b3"]]
    assert rc.execute_command("LMPOP", 2, "c", "b", "left") == ["c", ["c1"]]
    assert rc.execute_command("EXISTS", "c") == 0
    assert rc.execute_command("LMPOP", 3, "a", "c", "b", "right") == ["b", ["b2"]]
    assert rc.execute_command("EXISTS", "b") == 0
    assert rc.execute_command("LMPOP", 3, "a", "b", "c", "LEFT") is None
    assert rc.execute_command("LMPOP", 1, "a", "LEFT", "COUNT", 5) is None


def test_lmpop_count(rc):
    rc.execute_command("RPUSH", "l", *"abcdefg")
    assert rc.execute_command("LMPOP", 1, "l", "LEFT", "COUNT", 2) == ["l", ["a", "b"]]
    assert rc.execute_command("LMPOP", 1, "l", "RIGHT", "COUNT", 3) == ["l", ["g", "f", "e"]]
    assert rc.execute_command("LMPOP", 2, "nokey", "l", "LEFT", "count", 1) == ["l", ["c"]]
    assert rc.execute_command("LMPOP", 1, "l", "RIGHT", "COUNT", LLONG_MAX) == \
        ["l", ["d"]]
    assert rc.execute_command("EXISTS", "l") == 0


def test_lmpop_keys_on_different_shards(rc):
    keys = ["a{1}", "b{2}", "c{3}", "d{4}"]
    rc.execute_command("RPUSH", "c{3}", "c1", "c2")
    rc.execute_command("RPUSH", "d{4}", "d1")
    assert rc.execute_command("LMPOP", 4, *keys, "LEFT", "COUNT", 5) == ["c{3}", ["c1", "c2"]]
    assert rc.execute_command("LMPOP", 4, *keys, "LEFT", "COUNT", 5) == ["d{4}", ["d1"]]
    assert rc.execute_command("LMPOP", 4, *keys, "LEFT") is None
    assert rc.execute_command("EXISTS", *keys) == 0


def test_lmpop_same_key_twice(rc):
    rc.execute_command("RPUSH", "l", "a", "b")
    assert rc.execute_command("LMPOP", 2, "l", "l", "LEFT", "COUNT", 10) == ["l", ["a", "b"]]


LMPOP_ERRORS = [
    ([0, "l", "LEFT"], NUMKEYS_ZERO),
    ([-1, "l", "LEFT"], NUMKEYS_ZERO),
    ([1, "l", "LEFT", "COUNT", 0], COUNT_ZERO),
    ([1, "l", "LEFT", "COUNT", -1], COUNT_ZERO),
    ([1, "l", "LEFT", "COUNT", "x"], COUNT_ZERO),
    ([2, "l", "LEFT"], SYNTAX),
    ([3, "l", "m", "LEFT"], SYNTAX),
    ([1, "l", "MIDDLE"], SYNTAX),
    ([1, "l", "LEFT", "COUNT"], SYNTAX),
    ([1, "l", "LEFT", "COUNT", 1, "COUNT", 2], SYNTAX),
    ([1, "l", "LEFT", "FOO"], SYNTAX),
    ([1, "l", "LEFT", "COUNT", 1, "extra"], SYNTAX),
    ([1, "l", "LEFT", "RIGHT"], SYNTAX),
]


@pytest.mark.parametrize("args,pattern", LMPOP_ERRORS,
                         ids=["-".join(map(str, a)) for a, _ in LMPOP_ERRORS])
def test_lmpop_errors(rc, args, pattern):
    rc.execute_command("RPUSH", "l", "a", "b")
    with pytest.raises(redis.ResponseError, match=pattern):
        rc.execute_command("LMPOP", *args)
    assert lrange_all(rc, "l") == ["a", "b"]


def test_lmpop_errors_on_missing_keys(rc):
    with pytest.raises(redis.ResponseError, match=NUMKEYS_ZERO):
        rc.execute_command("LMPOP", 0, "nokey", "LEFT")
    with pytest.raises(redis.ResponseError, match=COUNT_ZERO):
        rc.execute_command("LMPOP", 1, "nokey", "LEFT", "COUNT", 0)
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("LMPOP", 1, "nokey", "UP")


def test_lmpop_non_integer_numkeys(rc):
    rc.execute_command("RPUSH", "l", "a")
    with pytest.raises(redis.ResponseError):
        rc.execute_command("LMPOP", "x", "l", "LEFT")
    assert lrange_all(rc, "l") == ["a"]


def test_lmpop_arity(rc):
    for args in ([], ["1"], ["1", "l"]):
        with pytest.raises(redis.ResponseError, match=arity("lmpop")):
            rc.execute_command("LMPOP", *args)


def test_lmpop_wrongtype(rc):
    rc.execute_command("SET", "s", "x")
    rc.execute_command("RPUSH", "l", "a")
    for keys in (["s"], ["nokey", "s"], ["s", "l"]):
        with pytest.raises(redis.ResponseError, match=WRONGTYPE):
            rc.execute_command("LMPOP", len(keys), *keys, "LEFT")
    assert lrange_all(rc, "l") == ["a"]


def test_lmpop_reply_bytes(raw):
    c = raw()
    c.send(resp("RPUSH", "l", "a", "b", "c") + resp("LMPOP", 2, "nokey", "l", "RIGHT", "COUNT", 2)
           + resp("LMPOP", 1, "nokey", "LEFT") + resp("LMPOP", 1, "l", "LEFT"))
    assert c.read_reply() == b":3\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\nl\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n"
    assert c.read_reply() == b"*-1\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\nl\r\n*1\r\n$1\r\na\r\n"


def test_resp3_nil_replies(raw):
    c = raw()
    c.send(resp("HELLO", "3"))
    assert c.read_reply().startswith(b"%")
    c.send(resp("LPOP", "nokey") + resp("RPOP", "nokey", 2) + resp("LMPOP", 1, "nokey", "LEFT")
           + resp("LMOVE", "nokey", "d", "LEFT", "LEFT") + resp("LPOS", "nokey", "a")
           + resp("LINDEX", "nokey", 0) + resp("LPOS", "nokey", "a", "COUNT", 0)
           + resp("RPUSH", "l", "x", "y") + resp("LPOP", "l", 0)
           + resp("LMPOP", 1, "l", "RIGHT", "COUNT", 5))
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b":2\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\nl\r\n*2\r\n$1\r\ny\r\n$1\r\nx\r\n"


# ------------------------------------------------------ TYPE, OBJECT ENCODING

def test_type_and_small_encoding(rc):
    rc.execute_command("RPUSH", "l", "a", "b")
    assert rc.execute_command("TYPE", "l") == "list"
    # Redis 7.0 answers quicklist for every list, Redis 7.2 listpack for small ones.
    assert rc.execute_command("OBJECT", "ENCODING", "l") in ("listpack", "quicklist")
    assert rc.execute_command("OBJECT", "ENCODING", "nokey") is None


def test_big_list_encoding(rc):
    make_big(rc, "l")
    assert rc.execute_command("OBJECT", "ENCODING", "l") == "quicklist"
    assert rc.execute_command("TYPE", "l") == "list"


# ------------------------------------------------------------------ WRONGTYPE

@pytest.mark.parametrize("args", [
    ["LPUSH", "s", "a"], ["RPUSH", "s", "a", "b"], ["LPUSHX", "s", "a"], ["RPUSHX", "s", "a"],
    ["LPOP", "s"], ["RPOP", "s"], ["LPOP", "s", "2"], ["RPOP", "s", "0"], ["LLEN", "s"],
    ["LRANGE", "s", "0", "-1"], ["LINDEX", "s", "0"], ["LSET", "s", "0", "x"],
    ["LINSERT", "s", "BEFORE", "a", "b"], ["LREM", "s", "0", "a"], ["LTRIM", "s", "0", "1"],
    ["LPOS", "s", "a"], ["LPOS", "s", "a", "COUNT", "0"], ["LMOVE", "s", "d", "LEFT", "RIGHT"],
    ["RPOPLPUSH", "s", "d"], ["LMPOP", "1", "s", "LEFT"],
    ["LMPOP", "2", "nokey", "s", "RIGHT", "COUNT", "2"],
])
def test_list_commands_on_string_key(rc, args):
    rc.execute_command("SET", "s", "value")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(*args)
    assert rc.execute_command("GET", "s") == "value"
    assert rc.execute_command("TYPE", "s") == "string"
    assert rc.execute_command("EXISTS", "d") == 0


@pytest.mark.parametrize("args", [
    ["GET", "l"], ["APPEND", "l", "x"], ["INCR", "l"], ["DECR", "l"], ["INCRBY", "l", "2"],
    ["DECRBY", "l", "2"], ["INCRBYFLOAT", "l", "1.5"], ["STRLEN", "l"],
    ["GETRANGE", "l", "0", "-1"], ["SETRANGE", "l", "0", "x"], ["GETDEL", "l"],
    ["GETEX", "l"], ["GETSET", "l", "x"], ["SET", "l", "x", "GET"], ["HSET", "l", "f", "v"],
    ["HGET", "l", "f"], ["HLEN", "l"],
])
def test_other_commands_on_list_key(rc, args):
    rc.execute_command("RPUSH", "l", "a", "b")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(*args)
    assert rc.execute_command("TYPE", "l") == "list"
    assert lrange_all(rc, "l") == ["a", "b"]


def test_set_overwrites_list(rc):
    make_big(rc, "l", 2000)
    rc.execute_command("EXPIRE", "l", 100)
    assert rc.execute_command("MGET", "l") == [None]
    assert rc.execute_command("SET", "l", "str") == "OK"
    assert rc.execute_command("TYPE", "l") == "string"
    assert rc.execute_command("TTL", "l") == -1
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("LLEN", "l")
    rc.execute_command("DEL", "l")
    assert rc.execute_command("RPUSH", "l", "x") == 1
    assert lrange_all(rc, "l") == ["x"]


# ---------------------------------------------------- emptied lists are deleted

def _empty_by_lpop(c):
    c.execute_command("LPOP", "l")
    c.execute_command("LPOP", "l")
    c.execute_command("LPOP", "l")


def _empty_by_rpop(c):
    for _ in range(3):
        c.execute_command("RPOP", "l")


def _empty_by_lpop_count(c):
    assert c.execute_command("LPOP", "l", 3) == ["a", "b", "c"]


def _empty_by_rpop_count(c):
    assert c.execute_command("RPOP", "l", 10) == ["c", "b", "a"]


def _empty_by_lrem(c):
    c.execute_command("LSET", "l", 1, "a")
    c.execute_command("LSET", "l", 2, "a")
    assert c.execute_command("LREM", "l", 0, "a") == 3


def _empty_by_ltrim(c):
    c.execute_command("LTRIM", "l", 3, -1)


def _empty_by_lmove(c):
    for _ in range(3):
        c.execute_command("LMOVE", "l", "other{9}", "LEFT", "RIGHT")
    assert lrange_all(c, "other{9}") == ["a", "b", "c"]


def _empty_by_rpoplpush(c):
    for _ in range(3):
        c.execute_command("RPOPLPUSH", "l", "other")


def _empty_by_lmpop(c):
    assert c.execute_command("LMPOP", 1, "l", "RIGHT", "COUNT", 3) == ["l", ["c", "b", "a"]]


@pytest.mark.parametrize("scenario", [
    _empty_by_lpop, _empty_by_rpop, _empty_by_lpop_count, _empty_by_rpop_count,
    _empty_by_lrem, _empty_by_ltrim, _empty_by_lmove, _empty_by_rpoplpush, _empty_by_lmpop,
], ids=lambda f: f.__name__.strip("_"))
def test_emptied_list_is_deleted(rc, scenario):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    rc.execute_command("EXPIRE", "l", 100)
    scenario(rc)
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("TYPE", "l") == "none"
    assert rc.execute_command("LLEN", "l") == 0
    assert rc.execute_command("LPOP", "l") is None
    # The key can be created again, as any type and without the old TTL.
    assert rc.execute_command("SET", "l", "s") == "OK"
    assert rc.execute_command("GET", "l") == "s"
    assert rc.execute_command("TTL", "l") == -1


@pytest.mark.parametrize("how", ["lpop", "rpop", "ltrim", "lrem", "lmpop"])
def test_emptied_big_list_is_deleted(rc, how):
    model = make_big(rc, "l", 5000)
    if how == "lpop":
        assert rc.execute_command("LPOP", "l", 4999) == model[:4999]
        assert rc.execute_command("LPOP", "l", 10) == model[4999:]
    elif how == "rpop":
        assert rc.execute_command("RPOP", "l", 5000) == model[::-1]
    elif how == "ltrim":
        rc.execute_command("LTRIM", "l", -1, 0)
    elif how == "lrem":
        rc.execute_command("LTRIM", "l", 0, 999)
        p = rc.pipeline(transaction=False)
        for i in range(1000):
            p.execute_command("LSET", "l", i, "same")
        p.execute()
        assert rc.execute_command("LREM", "l", -5000, "same") == 1000
    else:
        assert rc.execute_command("LMPOP", 1, "l", "LEFT", "COUNT", 6000) == ["l", model]
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("RPUSH", "l", "new") == 1
    assert lrange_all(rc, "l") == ["new"]


# ------------------------------------------------------------------ big lists

def test_big_list_matches_model(rc):
    model = make_big(rc, "l")
    assert rc.execute_command("LLEN", "l") == BIG
    assert lrange_all(rc, "l") == model
    for start, stop in ((0, 99), (5000, 5099), (-100, -1), (19990, 30000), (-30000, 5),
                        (10000, 9999), (7777, 7777), (-12345, -12000), (BIG, BIG + 10),
                        (1, -2)):
        assert rc.execute_command("LRANGE", "l", start, stop) == \
            redis_range(model, start, stop), (start, stop)
    for i in (0, 1, 4999, 10000, 12345, 19999, -1, -7, -10001, -20000, 20000, -20001):
        expected = model[i] if -BIG <= i < BIG else None
        assert rc.execute_command("LINDEX", "l", i) == expected, i

    # LSET in the middle and near both ends.
    for i, v in ((10000, "mid"), (-5000, "neg"), (1, "second"), (-2, "penultimate")):
        assert rc.execute_command("LSET", "l", i, v) == "OK"
        model[i] = v
    with pytest.raises(redis.ResponseError, match=INDEX_OUT_OF_RANGE):
        rc.execute_command("LSET", "l", BIG, "x")

    # LINSERT in the middle.
    assert rc.execute_command("LINSERT", "l", "BEFORE", "e12345", "ins-before") == BIG + 1
    model.insert(model.index("e12345"), "ins-before")
    assert rc.execute_command("LINSERT", "l", "AFTER", "mid", "ins-after") == BIG + 2
    model.insert(model.index("mid") + 1, "ins-after")
    assert rc.execute_command("LINSERT", "l", "AFTER", "e19999", "tail") == BIG + 3
    model.insert(model.index("e19999") + 1, "tail")
    assert rc.execute_command("LINSERT", "l", "BEFORE", "e0", "head") == BIG + 4
    model.insert(0, "head")
    assert rc.execute_command("LINDEX", "l", 10001) == model[10001]
    assert lrange_all(rc, "l") == model

    # LPOS across the whole list.
    assert rc.execute_command("LPOS", "l", "e15001") == model.index("e15001")
    assert rc.execute_command("LPOS", "l", "e15001", "MAXLEN", 100) is None
    assert rc.execute_command("LPOS", "l", "e19997", "RANK", -1, "MAXLEN", 10) == \
        model.index("e19997")

    # LREM of duplicates spread over the list.
    dup_positions = [3, 2000, 9000, 15000, 19990]
    for i in dup_positions:
        rc.execute_command("LSET", "l", i, "dup")
        model[i] = "dup"
    assert rc.execute_command("LPOS", "l", "dup", "COUNT", 0) == dup_positions
    assert rc.execute_command("LREM", "l", 2, "dup") == 2
    model, _ = redis_lrem(model, 2, "dup")
    assert rc.execute_command("LREM", "l", -1, "dup") == 1
    model, _ = redis_lrem(model, -1, "dup")
    assert rc.execute_command("LREM", "l", 0, "dup") == 2
    model, _ = redis_lrem(model, 0, "dup")
    assert rc.execute_command("LLEN", "l") == len(model)
    assert lrange_all(rc, "l") == model

    # Pops with counts from both ends, then LTRIM.
    assert rc.execute_command("RPOP", "l", 500) == model[-500:][::-1]
    del model[-500:]
    assert rc.execute_command("LPOP", "l", 700) == model[:700]
    del model[:700]
    assert rc.execute_command("LPOP", "l") == model.pop(0)
    assert rc.execute_command("RPOP", "l") == model.pop()
    assert rc.execute_command("LTRIM", "l", 100, -101) == "OK"
    model = model[100:-100]
    assert rc.execute_command("LLEN", "l") == len(model)
    assert lrange_all(rc, "l") == model
    for i in (0, 1, len(model) // 2, -1):
        assert rc.execute_command("LINDEX", "l", i) == model[i]


def test_big_list_lpush_batches(rc):
    model = []
    for b in range(20):
        chunk = ["p%d" % (b * 1000 + i) for i in range(1000)]
        assert rc.execute_command("LPUSH", "l", *chunk) == (b + 1) * 1000
        model = chunk[::-1] + model
    assert rc.execute_command("LLEN", "l") == BIG
    assert lrange_all(rc, "l") == model
    assert rc.execute_command("LINDEX", "l", 0) == "p19999"
    assert rc.execute_command("LINDEX", "l", -1) == "p0"


def test_big_list_pipelined_single_pushes_and_pops(rc):
    p = rc.pipeline(transaction=False)
    for i in range(5000):
        if i % 2:
            p.execute_command("RPUSH", "l", "r%d" % i)
        else:
            p.execute_command("LPUSH", "l", "l%d" % i)
    assert p.execute() == list(range(1, 5001))
    model = ["l%d" % i for i in range(4998, -1, -2)] + ["r%d" % i for i in range(1, 5000, 2)]
    assert lrange_all(rc, "l") == model
    p = rc.pipeline(transaction=False)
    for i in range(2000):
        p.execute_command("LPOP" if i % 2 else "RPOP", "l")
    got = p.execute()
    expected = []
    for i in range(2000):
        expected.append(model.pop(0) if i % 2 else model.pop())
    assert got == expected
    assert lrange_all(rc, "l") == model


# ------------------------------------------------------------------ binary data

BINARY = [b"\x00", b"a\x00b", b"\xff\xfe\x00", b"\r\n", b"line\r\nbreak", b"\x00" * 100,
          bytes(range(256)), b"$5\r\nhello\r\n", b"*1\r\n", b"", b"\xff"]


def test_binary_elements(rb):
    key = b"bin\x00key\xff"
    assert rb.rpush(key, *BINARY) == len(BINARY)
    assert rb.lrange(key, 0, -1) == BINARY
    for i, b in enumerate(BINARY):
        assert rb.lindex(key, i) == b
        assert rb.execute_command("LPOS", key, b) == i
    # A prefix of an element with a NUL byte is another element.
    assert rb.execute_command("LPOS", key, b"a") is None
    assert rb.execute_command("LPOS", key, b"\x00\x00") is None
    assert rb.linsert(key, "BEFORE", b"\r\n", b"\x00new\xff") == len(BINARY) + 1
    assert rb.lindex(key, 3) == b"\x00new\xff"
    assert rb.lset(key, 0, b"\xff\x00\r\n") is True
    assert rb.lrem(key, 0, b"\x00") == 0
    assert rb.lrem(key, 0, b"\x00" * 100) == 1
    expected = [b"\xff\x00\r\n"] + BINARY[1:3] + [b"\x00new\xff"] + BINARY[3:5] + BINARY[6:]
    assert rb.lrange(key, 0, -1) == expected
    assert rb.lpop(key, 2) == expected[:2]
    assert rb.rpop(key) == b"\xff"
    assert rb.lmove(key, b"other\x00", "RIGHT", "LEFT") == b""
    assert rb.lrange(b"other\x00", 0, -1) == [b""]
    assert rb.lrange(key, 0, -1) == expected[2:-2]


def test_binary_elements_in_big_list(rb):
    items = [b"\x00%d\xff\r\n" % i for i in range(5000)]
    rpush_batches(rb, b"l", items)
    assert rb.object("encoding", b"l") == b"quicklist"
    assert rb.lrange(b"l", 0, -1) == items
    assert rb.lindex(b"l", 2500) == items[2500]
    assert rb.execute_command("LPOS", b"l", b"\x004321\xff\r\n") == 4321
    assert rb.lrem(b"l", 0, b"\x004321\xff\r\n") == 1


# ------------------------------------------------------------ large elements

def test_large_elements(rb):
    big = bytes(range(256)) * 400  # 102400 bytes
    big2 = b"\x00" * 100000 + b"end"
    big3 = b"\r\n" * 50000
    assert rb.rpush(b"l", big, b"small", big2) == 3
    assert rb.lrange(b"l", 0, -1) == [big, b"small", big2]
    assert rb.lindex(b"l", 0) == big
    assert rb.lindex(b"l", -1) == big2
    assert rb.execute_command("LPOS", b"l", big2) == 2
    assert rb.lset(b"l", 1, big3) is True
    assert rb.linsert(b"l", "AFTER", big, b"after-big") == 4
    assert rb.linsert(b"l", "BEFORE", big3, big) == 5
    assert rb.lrange(b"l", 0, -1) == [big, b"after-big", big, big3, big2]
    assert rb.lrem(b"l", 0, big) == 2
    assert rb.lrange(b"l", 0, -1) == [b"after-big", big3, big2]
    assert rb.lmove(b"l", b"d", "RIGHT", "LEFT") == big2
    assert rb.lrange(b"d", 0, -1) == [big2]
    assert rb.lpush(b"l", *([big] * 20)) == 22
    assert rb.llen(b"l") == 22
    assert rb.lpop(b"l", 19) == [big] * 19
    assert rb.rpop(b"l", 2) == [big3, b"after-big"]
    assert rb.lpop(b"l") == big
    assert rb.exists(b"l") == 0


def test_small_and_large_elements_mixed(rb):
    model = []
    for i in range(200):
        v = (b"%d:" % i) + (b"x" * (100000 if i % 50 == 0 else i % 70))
        model.append(v)
    for v in model:
        rb.rpush(b"l", v)
    assert rb.lrange(b"l", 0, -1) == model
    for i in (0, 1, 50, 99, 150, 199):
        assert rb.lindex(b"l", i) == model[i]
    assert rb.ltrim(b"l", 49, 151) is True
    model = model[49:152]
    assert rb.lrange(b"l", 0, -1) == model


# ----------------------------------------------------------------------- TTL

def test_ttl_kept_across_list_writes(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c", "d")
    assert rc.execute_command("EXPIRE", "l", 100) == 1
    for args in (["LPUSH", "l", "x"], ["RPUSH", "l", "y"], ["LPOP", "l"], ["RPOP", "l", 1],
                 ["LSET", "l", 0, "z"], ["LINSERT", "l", "BEFORE", "z", "w"],
                 ["LREM", "l", 0, "w"], ["LTRIM", "l", 0, -1], ["LPUSHX", "l", "q"],
                 ["RPUSHX", "l", "q"], ["LMOVE", "l", "l", "LEFT", "RIGHT"],
                 ["RPOPLPUSH", "l", "other"], ["LMPOP", 1, "l", "LEFT"]):
        rc.execute_command(*args)
        assert 99 <= rc.execute_command("TTL", "l") <= 100, args
    # Growing into a big list keeps the TTL too.
    before = rc.execute_command("LLEN", "l")
    for b in range(5):
        assert rc.execute_command("RPUSH", "l", *["e%d" % i for i in range(1000)]) == \
            before + (b + 1) * 1000
    assert 99 <= rc.execute_command("TTL", "l") <= 100
    assert rc.execute_command("TTL", "other") == -1


def test_lmove_keeps_destination_ttl(rc):
    rc.execute_command("RPUSH", "a{1}", "x", "y")
    rc.execute_command("RPUSH", "b{2}", "z")
    rc.execute_command("EXPIRE", "b{2}", 100)
    rc.execute_command("LMOVE", "a{1}", "b{2}", "LEFT", "LEFT")
    assert 99 <= rc.execute_command("TTL", "b{2}") <= 100
    assert rc.execute_command("TTL", "a{1}") == -1


def test_expired_list_is_gone(rc):
    rc.execute_command("RPUSH", "l", "a")
    rc.execute_command("PEXPIRE", "l", 1)
    wait_for(lambda: rc.execute_command("EXISTS", "l") == 0, what="list expiry")
    assert rc.execute_command("LPOP", "l") is None
    assert rc.execute_command("RPUSH", "l", "b") == 1
    assert lrange_all(rc, "l") == ["b"]
    assert rc.execute_command("TTL", "l") == -1


# -------------------------------------------------------- COPY RENAME MOVE

@pytest.fixture
def db1(server):
    c = server.client(db=1, decode_responses=True)
    yield c
    c.close()


def fill(client, key, n):
    return rpush_batches(client, key, ["v%d" % i for i in range(n)])


@pytest.mark.parametrize("n", [3, 5000])
@pytest.mark.parametrize("src,dst", [("l", "l2"), ("a{1}", "b{2}")])
def test_copy_list(r, n, src, dst):
    model = fill(r, src, n)
    r.expire(src, 100)
    enc = r.object("encoding", src)
    assert r.copy(src, dst) is True
    assert r.lrange(dst, 0, -1) == model
    assert r.object("encoding", dst) == enc
    assert r.type(dst) == "list"
    assert 99 <= r.ttl(dst) <= 100
    # The copy is independent of the source.
    r.lset(dst, 0, "changed")
    r.rpush(dst, "new")
    r.lpop(src)
    assert r.lrange(src, 0, -1) == model[1:]
    assert r.lrange(dst, 0, -1) == ["changed"] + model[1:] + ["new"]
    # Existing destination: 0 unless REPLACE.
    assert r.copy(src, dst) is False
    assert r.lindex(dst, 0) == "changed"
    assert r.copy(src, dst, replace=True) is True
    assert r.lrange(dst, 0, -1) == model[1:]


def test_copy_list_over_string_with_replace(r):
    r.rpush("l", "a", "b")
    r.set("s", "x")
    assert r.copy("l", "s") is False
    assert r.type("s") == "string"
    assert r.copy("l", "s", replace=True) is True
    assert r.type("s") == "list"
    assert r.lrange("s", 0, -1) == ["a", "b"]


@pytest.mark.parametrize("n", [3, 5000])
def test_copy_list_to_other_db(r, db1, n):
    model = fill(r, "l", n)
    assert r.copy("l", "l", destination_db=1) is True
    assert db1.lrange("l", 0, -1) == model
    db1.lset("l", 0, "other")
    assert r.lindex("l", 0) == "v0"


@pytest.mark.parametrize("n", [3, 5000])
@pytest.mark.parametrize("src,dst", [("l", "l2"), ("a{1}", "b{2}")])
def test_rename_list(r, n, src, dst):
    model = fill(r, src, n)
    r.expire(src, 100)
    r.set(dst, "will be overwritten")
    assert r.rename(src, dst) is True
    assert r.exists(src) == 0
    assert r.type(dst) == "list"
    assert r.lrange(dst, 0, -1) == model
    assert 99 <= r.ttl(dst) <= 100
    r.rpush(dst, "after-rename")
    assert r.llen(dst) == n + 1
    assert r.renamenx(dst, src) is True
    assert r.lrange(src, 0, -1) == model + ["after-rename"]
    r.rpush(dst, "x")
    assert r.renamenx(src, dst) is False
    assert r.lrange(dst, 0, -1) == ["x"]


@pytest.mark.parametrize("n", [3, 5000])
def test_move_list(r, db1, n):
    model = fill(r, "l", n)
    r.expire("l", 100)
    assert r.move("l", 1) is True
    assert r.exists("l") == 0
    assert db1.lrange("l", 0, -1) == model
    assert db1.type("l") == "list"
    assert 99 <= db1.ttl("l") <= 100
    r.rpush("l", "x")
    assert db1.move("l", 0) is False
    assert r.lrange("l", 0, -1) == ["x"]
    assert db1.llen("l") == n
    db1.rpush("l", "more")
    assert db1.lindex("l", -1) == "more"


# ------------------------------------------------------------ randomized model

POOL = ["v%d" % i for i in range(12)] + ["", "1", "-5", "123456789012"]


# Random test profiles: (chance of a long element, its length range, list size to grow to).
# "short" stays in one small listpack, "medium" hovers around the 8 KB listpack limit so
# lists change encoding back and forth, "large" spans several quicklist nodes.
PROFILES = {
    "short": (0.0, (0, 0), 250, 1234),
    "medium": (0.4, (40, 100), 300, 99),
    "large": (0.25, (300, 2500), 60, 20240601),
}


def _random_value(rng, profile):
    chance, (lo, hi), _, _ = PROFILES[profile]
    if chance and rng.random() < chance:
        return "%s:%s" % (rng.choice(POOL), "x" * rng.randint(lo, hi))
    return rng.choice(POOL)


def _random_member(rng, model, profile):
    if model and rng.random() < 0.7:
        return rng.choice(model)
    return _random_value(rng, profile)


def _random_step(rng, model, profile):
    """One random operation: (command args, expected reply, model after the command).
    An expected error is given as ("error", message)."""
    n = len(model)
    push_w = 16 if n < PROFILES[profile][2] else 3
    op = rng.choices(["LPUSH", "RPUSH", "LPOP", "RPOP", "LSET", "LINSERT", "LREM", "LTRIM",
                      "LRANGE"], weights=[push_w, push_w, 8, 8, 10, 10, 8, 3, 10])[0]
    if op in ("LPUSH", "RPUSH"):
        vals = [_random_value(rng, profile) for _ in range(rng.randint(1, 5))]
        new = (vals[::-1] + model) if op == "LPUSH" else (model + vals)
        return [op, "l"] + vals, len(new), new
    if op in ("LPOP", "RPOP"):
        left = op == "LPOP"
        if rng.random() < 0.5:
            if not n:
                return [op, "l"], None, model
            return [op, "l"], (model[0] if left else model[-1]), \
                (model[1:] if left else model[:-1])
        count = rng.randint(0, 6)
        if not n:
            return [op, "l", count], None, model
        if left:
            return [op, "l", count], model[:count], model[count:]
        k = min(count, n)
        return [op, "l", count], model[n - k:][::-1], model[:n - k]
    if op == "LSET":
        idx = rng.randint(-n - 2, n + 1)
        v = _random_value(rng, profile)
        if not n:
            return [op, "l", idx, v], ("error", "no such key"), model
        if -n <= idx < n:
            new = list(model)
            new[idx] = v
            return [op, "l", idx, v], "OK", new
        return [op, "l", idx, v], ("error", "index out of range"), model
    if op == "LINSERT":
        where = rng.choice(["BEFORE", "AFTER"])
        pivot = _random_member(rng, model, profile)
        v = _random_value(rng, profile)
        args = [op, "l", where, pivot, v]
        if not n:
            return args, 0, model
        if pivot not in model:
            return args, -1, model
        i = model.index(pivot) + (1 if where == "AFTER" else 0)
        return args, n + 1, model[:i] + [v] + model[i:]
    if op == "LREM":
        count = rng.randint(-3, 3)
        v = _random_member(rng, model, profile)
        new, removed = redis_lrem(model, count, v)
        return [op, "l", count, v], removed, new
    if op == "LTRIM":
        start = rng.randint(0, 4) if rng.random() < 0.8 else rng.randint(-n - 3, n + 3)
        stop = rng.choice([-1, -2, -4, n, n + 5, rng.randint(-n - 3, n + 3)])
        return [op, "l", start, stop], "OK", redis_range(model, start, stop)
    start, stop = rng.randint(-n - 3, n + 3), rng.randint(-n - 3, n + 3)
    return [op, "l", start, stop], redis_range(model, start, stop), model


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_random_operations_match_model(rc, profile):
    rng = random.Random(PROFILES[profile][3])
    model = []
    for step in range(3000):
        args, expected, after = _random_step(rng, model, profile)
        p = rc.pipeline(transaction=False)
        p.execute_command(*args)
        p.execute_command("LRANGE", "l", 0, -1)
        p.execute_command("LLEN", "l")
        p.execute_command("EXISTS", "l")
        got, items, length, exists = p.execute(raise_on_error=False)
        where = "step %d: %r" % (step, [a if len(str(a)) < 40 else str(a)[:40] + "..."
                                        for a in args])
        if isinstance(expected, tuple):
            assert isinstance(got, redis.ResponseError), where
            assert str(got) == expected[1], where
        else:
            assert got == expected, where
        model = after
        assert items == model, where
        assert length == len(model), where
        assert exists == (1 if model else 0), where


# ------------------------------------------------------------------- memory

@pytest.fixture
def mr(server_factory):
    c = server_factory().client(decode_responses=True)
    yield c
    c.close()


def list_mem(c):
    return c.info("memory")["mem_type_list"]


def wait_list_mem_zero(c, what):
    wait_for(lambda: list_mem(c)["bytes"] == 0 and list_mem(c)["keys"] == 0, timeout=2,
             what=what)


@strata_only
def test_info_mem_type_list(mr):
    t = list_mem(mr)
    assert isinstance(t, dict)
    assert t["keys"] == 0 and t["bytes"] == 0
    mr.rpush("l", "a")
    t = list_mem(mr)
    assert t["keys"] == 1 and t["bytes"] > 0
    small = t["bytes"]
    model = ["e%d" % i for i in range(BIG)]
    for i in range(0, BIG, 1000):
        mr.rpush("l", *model[i:i + 1000])
    assert mr.llen("l") == BIG + 1
    t = list_mem(mr)
    # Runs of equal-length text are packed 16 characters in 14 bytes, so the list can
    # take less than its raw bytes, never less than 7/8 of them.
    assert t["keys"] == 1 and t["bytes"] > max(small, sum(len(v) for v in model) * 7 // 8)
    mr.rpush("m", "x")
    assert list_mem(mr)["keys"] == 2
    mr.delete("l", "m")
    wait_list_mem_zero(mr, "mem_type_list back to 0 after DEL")


def _make_lists(c):
    """A big list "big" and 50 small lists "small:N"."""
    make_big(c, "big")
    p = c.pipeline(transaction=False)
    for i in range(50):
        p.rpush("small:%d" % i, *["s%d" % j for j in range(i % 7 + 1)])
    p.execute()
    assert list_mem(c)["keys"] == 51


def _small_keys():
    return ["small:%d" % i for i in range(50)]


def _by_pop_counts(c):
    _make_lists(c)
    while c.exists("big"):
        c.lpop("big", 3000)
        c.rpop("big", 2000)
    for k in _small_keys():
        c.rpop(k, 3)
        c.lpop(k, 10)


def _by_single_pops(c):
    _make_lists(c)
    c.ltrim("big", 0, 99)
    for _ in range(50):
        c.lpop("big")
        c.rpop("big")
    for k in _small_keys():
        while c.lpop(k) is not None:
            pass


def _by_ltrim(c):
    _make_lists(c)
    c.ltrim("big", 5, 4)
    for k in _small_keys():
        c.ltrim(k, 7, -1)


def _by_lrem(c):
    _make_lists(c)
    c.ltrim("big", 0, 2999)
    p = c.pipeline(transaction=False)
    for i in range(3000):
        p.lset("big", i, "x")
    p.execute()
    c.lrem("big", 0, "x")
    for i, k in enumerate(_small_keys()):
        for j in range(i % 7 + 1):
            c.lrem(k, 0, "s%d" % j)


def _by_del(c):
    _make_lists(c)
    c.delete("big", *_small_keys())


def _by_flushall(c):
    _make_lists(c)
    c.flushall()


def _by_lmove_and_lmpop(c):
    _make_lists(c)
    c.ltrim("big", 0, 499)
    for _ in range(500):
        c.lmove("big", "dst{x}", "LEFT", "RIGHT")
    assert c.llen("dst{x}") == 500
    while c.execute_command("LMPOP", 2, "dst{x}", "small:0", "LEFT", "COUNT", 100):
        pass
    while c.execute_command("LMPOP", 50, *_small_keys(), "RIGHT", "COUNT", 3):
        pass


def _by_rename_copy_move(c):
    _make_lists(c)
    c.copy("big", "big2{7}")
    c.rename("small:0", "big2{7}")
    c.copy("big", "small:1", replace=True)
    c.move("small:2", 1)
    c.execute_command("SELECT", "1")
    try:
        c.delete("small:2")
    finally:
        c.execute_command("SELECT", "0")
    c.set("big", "string now")
    c.delete("big", "big2{7}", *_small_keys())


def _by_expire(c):
    _make_lists(c)
    for k in ["big"] + _small_keys():
        c.pexpire(k, 1)
    wait_for(lambda: c.dbsize() == 0, what="expiry")


@strata_only
@pytest.mark.parametrize("scenario", [
    _by_pop_counts, _by_single_pops, _by_ltrim, _by_lrem, _by_del, _by_flushall,
    _by_lmove_and_lmpop, _by_rename_copy_move, _by_expire,
], ids=lambda f: f.__name__.strip("_"))
def test_mem_type_list_back_to_zero_when_lists_go(mr, scenario):
    # mr is a fresh client on its own server: SELECT in a scenario does not leak.
    scenario(mr)
    assert mr.dbsize() == 0
    wait_list_mem_zero(mr, "mem_type_list back to 0 after " + scenario.__name__)
    mr.flushall()
    wait_list_mem_zero(mr, "mem_type_list back to 0 after FLUSHALL")


# ---------------------------------------------------------------- list-compress-depth

def test_compressed_lists_behave_as_redis(pair):
    for c in pair:
        c.execute_command("CONFIG", "SET", "list-compress-depth", "1")
        c.execute_command("CONFIG", "SET", "list-max-listpack-size", "-1")
    try:
        rows = ["2026-12-03 INFO req=%d path=/api/items/%d" % (i, i % 50) for i in range(6000)]
        for i in range(0, len(rows), 500):
            same(pair, "RPUSH", "l", *rows[i:i + 500])
            same(pair, "LPUSH", "l", *rows[i:i + 100])
        same(pair, "LLEN", "l")
        same(pair, "OBJECT", "ENCODING", "l")
        for start, stop in ((0, 9), (3000, 3050), (-20, -1), (100, 5000), (4000, 3990)):
            same(pair, "LRANGE", "l", start, stop)
        for i in (0, 1, 2500, 5999, -1, -3333):
            same(pair, "LINDEX", "l", i)
        same(pair, "LSET", "l", 3100, "changed in the middle")
        same(pair, "LINDEX", "l", 3100)
        same(pair, "LINSERT", "l", "BEFORE", "changed in the middle", "inserted")
        same(pair, "LRANGE", "l", 3095, 3105)
        same(pair, "LREM", "l", 3, rows[7])
        same(pair, "LTRIM", "l", 5, -5)
        same(pair, "LPOS", "l", rows[4000])
        # Popping from both ends brings compressed nodes to the ends.
        for _ in range(40):
            same(pair, "LPOP", "l", 97)
            same(pair, "RPOP", "l", 89)
        same(pair, "LRANGE", "l", 0, -1)
    finally:
        for c in pair:
            c.execute_command("CONFIG", "SET", "list-compress-depth", "0")
            c.execute_command("CONFIG", "SET", "list-max-listpack-size", "-2")


@pytest.mark.skipif(TARGET == "redis", reason="strata's memory figures")
def test_compressed_lists_cost_less_memory(server_factory):
    c = server_factory(extra_args=["--threads", "1"]).client()
    rows = ["2026-12-03 INFO req=%d path=/api/items/%d status=200" % (i, i % 50)
            for i in range(20000)]
    for depth, key in ((0, "plain"), (1, "packed")):
        c.config_set("list-compress-depth", depth)
        for i in range(0, len(rows), 1000):
            c.rpush(key, *rows[i:i + 1000])
    plain, packed = c.memory_usage("plain"), c.memory_usage("packed")
    assert packed * 3 < plain, (plain, packed)
    assert c.lrange("packed", 0, -1) == c.lrange("plain", 0, -1)
    assert c.config_get("list-compress-depth")["list-compress-depth"] == "1"
