"""Sorted-set commands: ZADD (NX XX GT LT CH INCR) ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK
ZREVRANK ZRANDMEMBER ZSCAN ZCOUNT ZLEXCOUNT, the ZRANGE family (ZRANGE BYSCORE BYLEX REV
LIMIT WITHSCORES, ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX,
ZREVRANGEBYLEX), ZREMRANGEBYRANK/SCORE/LEX, ZPOPMIN ZPOPMAX ZMPOP, set algebra (ZUNION
ZINTER ZDIFF, their STORE forms, ZINTERCARD; plain sets as inputs), encodings and their
limits, score formatting, RESP3 reply types, WRONGTYPE, deletion of emptied sets,
COPY/RENAME/MOVE, keys on different shards ("a{1}", "b{2}"), a randomized model check and
memory accounting. Blocking pops are in test_zset_blocking.py.

Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it.
"""
import math
import random

import pytest
import redis

from conftest import TARGET
from helpers import NOT_FLOAT, NOT_INT, SYNTAX, WRONGTYPE, call, resp, wait_for

strata_only = pytest.mark.skipif(TARGET == "redis", reason="strata-only behaviour")

NOT_RANGE_FLOAT = "^min or max is not a float$"
NOT_LEX = "^min or max not valid string range item$"
NAN = "^resulting score is not a number \\(NaN\\)$"
NOT_POSITIVE = "^value is out of range, must be positive$"
# Members enough to pass the default zset-max-listpack-entries (128).
BIG = 200


def arity(name):
    return "^wrong number of arguments for '%s' command$" % name


def flat(pairs):
    out = []
    for m, s in pairs:
        out += [m, s]
    return out


def zadd(c, key, *pairs):
    """ZADD key score member ... from (member, score) tuples; returns the reply."""
    args = []
    for m, s in pairs:
        args += [str(s), m]
    return c.execute_command("ZADD", key, *args)


def fill(c, key, n, prefix="m"):
    """Members m0..m{n-1} with scores 0..n-1."""
    return zadd(c, key, *[("%s%d" % (prefix, i), i) for i in range(n)])


@pytest.fixture
def limits(server):
    """Restores the zset encoding limits a test changes."""
    c = server.client(decode_responses=True)
    yield c
    c.config_set("zset-max-listpack-entries", "128")
    c.config_set("zset-max-listpack-value", "64")
    c.close()


# ---------------------------------------------------------------- ZADD

def test_zadd_basic_and_type(rc):
    assert rc.execute_command("ZADD", "z", "1", "a", "2", "b") == 2
    assert rc.execute_command("ZADD", "z", "3", "a", "4", "c") == 1
    assert rc.execute_command("ZCARD", "z") == 3
    assert rc.execute_command("ZSCORE", "z", "a") == "3"
    assert rc.execute_command("TYPE", "z") == "zset"
    assert rc.execute_command("ZRANGE", "z", "0", "-1") == ["b", "a", "c"]


def test_zadd_same_member_twice_in_one_call(rc):
    assert rc.execute_command("ZADD", "z", "1", "a", "2", "a") == 1
    assert rc.execute_command("ZSCORE", "z", "a") == "2"
    assert rc.execute_command("ZADD", "z", "CH", "5", "a", "5", "a") == 1


def test_zadd_nx_xx(rc):
    zadd(rc, "z", ("a", 1))
    assert rc.execute_command("ZADD", "z", "NX", "5", "a", "2", "b") == 1
    assert rc.execute_command("ZSCORE", "z", "a") == "1"
    assert rc.execute_command("ZADD", "z", "XX", "7", "a", "3", "c") == 0
    assert rc.execute_command("ZSCORE", "z", "a") == "7"
    assert rc.execute_command("ZSCORE", "z", "c") is None
    # XX on a missing key creates nothing.
    assert rc.execute_command("ZADD", "nokey", "XX", "1", "a") == 0
    assert rc.execute_command("EXISTS", "nokey") == 0
    assert rc.execute_command("ZADD", "nokey", "XX", "INCR", "1", "a") is None
    assert rc.execute_command("EXISTS", "nokey") == 0


def test_zadd_gt_lt_ch(rc):
    zadd(rc, "z", ("a", 5), ("b", 5))
    assert rc.execute_command("ZADD", "z", "GT", "CH", "4", "a", "6", "b", "1", "c") == 2
    assert rc.execute_command("ZRANGE", "z", "0", "-1", "WITHSCORES") == [
        "c", "1", "a", "5", "b", "6"]
    assert rc.execute_command("ZADD", "z", "LT", "CH", "4", "a", "7", "b") == 1
    assert rc.execute_command("ZSCORE", "z", "a") == "4"
    assert rc.execute_command("ZSCORE", "z", "b") == "6"
    # XX combines with GT.
    assert rc.execute_command("ZADD", "z", "XX", "GT", "CH", "10", "a", "1", "new") == 1
    assert rc.execute_command("ZSCORE", "z", "new") is None
    # CH counts changed scores only; an unchanged score is not counted.
    assert rc.execute_command("ZADD", "z", "CH", "10", "a") == 0
    assert rc.execute_command("ZADD", "z", "ch", "11", "a", "1", "d") == 2


def test_zadd_incr(rc):
    assert rc.execute_command("ZADD", "z", "INCR", "1.5", "a") == "1.5"
    assert rc.execute_command("ZADD", "z", "INCR", "2", "a") == "3.5"
    assert rc.execute_command("ZADD", "z", "NX", "INCR", "1", "a") is None
    assert rc.execute_command("ZADD", "z", "XX", "INCR", "1", "b") is None
    assert rc.execute_command("ZADD", "z", "GT", "INCR", "-1", "a") is None
    assert rc.execute_command("ZADD", "z", "LT", "INCR", "-1", "a") == "2.5"
    assert rc.execute_command("ZADD", "z", "INCR", "0", "a") == "2.5"
    assert rc.execute_command("ZADD", "z", "INCR", "inf", "a") == "inf"
    assert rc.execute_command("ZADD", "z", "GT", "INCR", "1", "a") is None  # inf + 1 == inf


def test_zadd_errors(r):
    with pytest.raises(redis.ResponseError, match=arity("zadd")):
        r.execute_command("ZADD", "z", "1")
    with pytest.raises(redis.ResponseError, match=arity("zadd")):
        r.execute_command("ZADD", "z", "XX")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZADD", "z", "1", "a", "2")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZADD", "z", "NX", "XX", "CH")
    with pytest.raises(redis.ResponseError,
                       match="^XX and NX options at the same time are not compatible$"):
        r.execute_command("ZADD", "z", "NX", "XX", "1", "a")
    for opts in (["GT", "LT"], ["GT", "NX"], ["LT", "NX"]):
        with pytest.raises(redis.ResponseError,
                           match="^GT, LT, and/or NX options at the same time are not "
                                 "compatible$"):
            r.execute_command("ZADD", "z", *opts, "1", "a")
    with pytest.raises(redis.ResponseError,
                       match="^INCR option supports a single increment-element pair$"):
        r.execute_command("ZADD", "z", "INCR", "1", "a", "2", "b")
    for bad in ("abc", "nan", "1e400", "-1e400", "1e-400", " 1", "1 ", "", "1x"):
        with pytest.raises(redis.ResponseError, match=NOT_FLOAT):
            r.execute_command("ZADD", "z", bad, "a")
    # A bad score anywhere means nothing is added.
    with pytest.raises(redis.ResponseError, match=NOT_FLOAT):
        r.execute_command("ZADD", "z", "1", "a", "x", "b")
    assert r.exists("z") == 0


def test_zadd_nan_result(r):
    r.zadd("z", {"a": float("inf")})
    with pytest.raises(redis.ResponseError, match=NAN):
        r.execute_command("ZADD", "z", "INCR", "-inf", "a")
    with pytest.raises(redis.ResponseError, match=NAN):
        r.execute_command("ZINCRBY", "z", "-inf", "a")
    assert r.zscore("z", "a") == float("inf")


def test_zadd_score_forms(rc):
    zadd(rc, "z", ("hex", "0x10"), ("exp", "1e3"), ("plus", "+5"), ("inf", "+inf"),
         ("ninf", "-INF"), ("dot", ".5"), ("tiny", "4.9e-324"))
    assert rc.execute_command("ZSCORE", "z", "hex") == "16"
    assert rc.execute_command("ZSCORE", "z", "exp") == "1000"
    assert rc.execute_command("ZSCORE", "z", "plus") == "5"
    assert rc.execute_command("ZSCORE", "z", "inf") == "inf"
    assert rc.execute_command("ZSCORE", "z", "ninf") == "-inf"
    assert rc.execute_command("ZSCORE", "z", "dot") == "0.5"
    assert rc.execute_command("ZSCORE", "z", "tiny") == "4.9406564584124654e-324"


def test_score_formatting(rc):
    zadd(rc, "z", ("a", "1.1"), ("b", "0.1"), ("c", "1e20"), ("d", "123456789012"),
         ("e", "-2.5"), ("f", "3.0"), ("g", "9007199254740993"), ("h", "1.7976931348623157e308"))
    assert rc.execute_command("ZSCORE", "z", "a") == "1.1000000000000001"
    assert rc.execute_command("ZSCORE", "z", "b") == "0.10000000000000001"
    assert rc.execute_command("ZSCORE", "z", "c") == "1e+20"
    assert rc.execute_command("ZSCORE", "z", "d") == "123456789012"
    assert rc.execute_command("ZSCORE", "z", "e") == "-2.5"
    assert rc.execute_command("ZSCORE", "z", "f") == "3"
    assert rc.execute_command("ZSCORE", "z", "g") == "9007199254740992"
    assert rc.execute_command("ZSCORE", "z", "h") == "1.7976931348623157e+308"


def test_negative_zero(rc, limits):
    # The listpack stores -0 as 0; the skiplist keeps -0.
    zadd(rc, "small", ("m", "-0"))
    assert rc.execute_command("ZSCORE", "small", "m") == "0"
    limits.config_set("zset-max-listpack-entries", "0")
    zadd(rc, "big", ("m", "-0"), ("a", "0"))
    assert rc.execute_command("OBJECT", "ENCODING", "big") == "skiplist"
    assert rc.execute_command("ZSCORE", "big", "m") == "-0"
    assert rc.execute_command("ZRANGE", "big", "0", "-1", "WITHSCORES") == [
        "a", "0", "m", "-0"]
    assert rc.execute_command("ZADD", "new", "INCR", "-0", "x") == "-0"


def test_zincrby(rc):
    assert rc.execute_command("ZINCRBY", "z", "2", "a") == "2"
    assert rc.execute_command("ZINCRBY", "z", "-0.5", "a") == "1.5"
    assert rc.execute_command("ZINCRBY", "z", "1e3", "b") == "1000"
    assert rc.execute_command("ZRANGE", "z", "0", "-1") == ["a", "b"]


def test_zincrby_errors(r):
    with pytest.raises(redis.ResponseError, match=NOT_FLOAT):
        r.execute_command("ZINCRBY", "z", "abc", "a")
    with pytest.raises(redis.ResponseError, match=arity("zincrby")):
        r.execute_command("ZINCRBY", "z", "1")


# ---------------------------------------------------------------- ZREM ZCARD ZSCORE ZMSCORE

def test_zrem_and_emptied_set_is_deleted(rc):
    zadd(rc, "z", ("a", 1), ("b", 2), ("c", 3))
    assert rc.execute_command("ZREM", "z", "a", "x", "a") == 1
    assert rc.execute_command("ZREM", "nokey", "a") == 0
    assert rc.execute_command("ZREM", "z", "b", "c") == 2
    assert rc.execute_command("EXISTS", "z") == 0


def test_zcard_zscore_zmscore(rc):
    assert rc.execute_command("ZCARD", "nokey") == 0
    assert rc.execute_command("ZSCORE", "nokey", "a") is None
    assert rc.execute_command("ZMSCORE", "nokey", "a", "b") == [None, None]
    zadd(rc, "z", ("a", 1.5), ("b", "-inf"))
    assert rc.execute_command("ZCARD", "z") == 2
    assert rc.execute_command("ZSCORE", "z", "x") is None
    assert rc.execute_command("ZMSCORE", "z", "a", "x", "b") == ["1.5", None, "-inf"]
    with pytest.raises(redis.ResponseError, match=arity("zmscore")):
        rc.execute_command("ZMSCORE", "z")


def test_zrank_zrevrank(rc):
    zadd(rc, "z", ("a", 1), ("b", 2), ("c", 3))
    assert rc.execute_command("ZRANK", "z", "a") == 0
    assert rc.execute_command("ZRANK", "z", "c") == 2
    assert rc.execute_command("ZREVRANK", "z", "a") == 2
    assert rc.execute_command("ZREVRANK", "z", "c") == 0
    assert rc.execute_command("ZRANK", "z", "x") is None
    assert rc.execute_command("ZREVRANK", "nokey", "x") is None
    with pytest.raises(redis.ResponseError, match=arity("zrank")):
        rc.execute_command("ZRANK", "z", "a", "WITHSCORE", "x")


@strata_only
def test_zrank_withscore(rc):
    # WITHSCORE is Redis 7.2's.
    zadd(rc, "z", ("a", 1), ("b", 2.5))
    assert rc.execute_command("ZRANK", "z", "b", "WITHSCORE") == [1, "2.5"]
    assert rc.execute_command("ZREVRANK", "z", "b", "withscore") == [0, "2.5"]
    assert rc.execute_command("ZRANK", "z", "x", "WITHSCORE") is None
    assert rc.execute_command("ZRANK", "nokey", "x", "WITHSCORE") is None
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("ZRANK", "z", "a", "WITHSCORES")


def test_ties_order_by_member_bytes(rc):
    zadd(rc, "z", ("b", 1), ("a", 1), ("ab", 1), ("B", 1), ("\xff", 1), ("", 1), ("a\x00", 1))
    rb = call(rc, "ZRANGE", "z", "0", "-1")
    assert rb == ["", "B", "a", "a\x00", "ab", "b", "\xff"]


def test_binary_members(rb):
    m = bytes(range(256))
    rb.zadd("z", {m: 1, b"\x00": 2})
    assert rb.zscore("z", m) == 1.0
    assert rb.zrange("z", 0, -1) == [m, b"\x00"]
    assert rb.zrank("z", b"\x00") == 1


# ---------------------------------------------------------------- ZRANGE by rank

@pytest.mark.parametrize("n", [5, BIG])
def test_zrange_by_rank(rc, n):
    fill(rc, "z", n)
    names = ["m%d" % i for i in range(n)]
    for start, stop in [(0, -1), (0, 0), (1, 3), (-3, -1), (-100000, 2), (2, 100000),
                        (3, 1), (n, n + 5), (-1, -1), (-n - 5, -n - 1), (0, -n - 1)]:
        s = start if start >= 0 else max(0, n + start)
        e = stop if stop >= 0 else n + stop
        want = names[s:e + 1] if e >= 0 else []
        assert rc.execute_command("ZRANGE", "z", start, stop) == want, (start, stop)
        rev = names[::-1]
        assert rc.execute_command("ZREVRANGE", "z", start, stop) == (
            rev[s:e + 1] if e >= 0 else []), (start, stop)
    assert rc.execute_command("ZRANGE", "z", "0", "1", "WITHSCORES") == ["m0", "0", "m1", "1"]
    assert rc.execute_command("ZRANGE", "z", "0", "1", "REV", "WITHSCORES") == [
        names[-1], str(n - 1), names[-2], str(n - 2)]
    assert rc.execute_command("ZRANGE", "nokey", "0", "-1") == []


def test_zrange_rank_errors(r):
    r.zadd("z", {"a": 1})
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("ZRANGE", "z", "a", "1")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("ZRANGE", "z", "0", "1.5")
    with pytest.raises(redis.ResponseError,
                       match="^syntax error, LIMIT is only supported in combination with either "
                             "BYSCORE or BYLEX$"):
        r.execute_command("ZRANGE", "z", "0", "1", "LIMIT", "0", "1")
    # LIMIT with a count of -1 is "no limit", which is allowed.
    assert r.execute_command("ZRANGE", "z", "0", "1", "LIMIT", "5", "-1") == ["a"]
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANGE", "z", "0", "1", "LIMIT", "0")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANGE", "z", "0", "1", "FOO")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANGE", "z", "0", "1", "BYSCORE", "BYLEX")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZREVRANGE", "z", "0", "1", "REV")
    with pytest.raises(redis.ResponseError, match=arity("zrange")):
        r.execute_command("ZRANGE", "z", "0")


# ---------------------------------------------------------------- ZRANGE by score

SCORED = [("a", "-inf"), ("b", 1), ("c", 2), ("d", 2), ("e", 3.5), ("f", 10), ("g", "inf")]


@pytest.mark.parametrize("n_extra", [0, BIG])
def test_zrangebyscore(rc, n_extra):
    zadd(rc, "z", *SCORED)
    if n_extra:
        # Extra members between f (10) and g (inf) push the set into the big encoding.
        zadd(rc, "z", *[("x%03d" % i, 1000 + i) for i in range(n_extra)])
    extra = ["x%03d" % i for i in range(n_extra)]
    every = list("abcdef") + extra + ["g"]
    q = lambda *a: rc.execute_command("ZRANGEBYSCORE", "z", *a)  # noqa: E731
    assert q("-inf", "+inf") == every
    assert q("2", "2") == ["c", "d"]
    assert q("(2", "10") == ["e", "f"]
    assert q("2", "(10") == ["c", "d", "e"]
    assert q("(2", "(2") == []
    assert q("(1", "(3.5") == ["c", "d"]
    assert q("3", "2") == []
    assert q("-inf", "-inf") == ["a"]
    assert q("(-inf", "1") == ["b"]
    assert q("inf", "inf") == ["g"]
    assert q("10", "(inf") == ["f"] + extra
    assert q("1", "2", "WITHSCORES") == ["b", "1", "c", "2", "d", "2"]
    assert q("-inf", "inf", "LIMIT", "1", "2") == ["b", "c"]
    assert q("-inf", "inf", "LIMIT", "2", "-1") == every[2:]
    assert q("-inf", "inf", "LIMIT", "2", "0") == []
    assert q("-inf", "inf", "LIMIT", "-1", "2") == []
    assert q("-inf", "inf", "LIMIT", "100000", "2") == []
    assert q("1", "2", "LIMIT", "0", "100000", "WITHSCORES") == ["b", "1", "c", "2", "d", "2"]
    rq = lambda *a: rc.execute_command("ZREVRANGEBYSCORE", "z", *a)  # noqa: E731
    assert rq("+inf", "-inf") == every[::-1]
    assert rq("10", "(2") == ["f", "e"]
    assert rq("2", "2") == ["d", "c"]
    assert rq("2", "10") == []
    assert rq("inf", "-inf", "LIMIT", "1", "2") == every[::-1][1:3]
    assert rq("3.5", "1", "WITHSCORES", "LIMIT", "1", "1") == ["d", "2"]
    # The unified form: min and max swap places with REV.
    assert rc.execute_command("ZRANGE", "z", "(2", "10", "BYSCORE") == ["e", "f"]
    assert rc.execute_command("ZRANGE", "z", "10", "(2", "BYSCORE", "REV") == ["f", "e"]
    assert rc.execute_command("ZRANGE", "z", "10", "(2", "REV", "BYSCORE", "LIMIT", "1", "5",
                              "WITHSCORES") == ["e", "3.5"]
    assert rc.execute_command("ZRANGEBYSCORE", "nokey", "-inf", "inf") == []


def test_score_range_parsing(r):
    r.zadd("z", {"zero": 0, "one": 1, "sixteen": 16})
    # strtod rules: leading spaces, hex, and an empty bound (0) are accepted.
    assert r.execute_command("ZRANGEBYSCORE", "z", " 1", "1") == ["one"]
    assert r.execute_command("ZRANGEBYSCORE", "z", "0x10", "0x10") == ["sixteen"]
    assert r.execute_command("ZRANGEBYSCORE", "z", "", "") == ["zero"]
    assert r.execute_command("ZRANGEBYSCORE", "z", "(", "1") == ["one"]
    assert r.execute_command("ZRANGEBYSCORE", "z", "-1e400", "1e400") == [
        "zero", "one", "sixteen"]
    for bad in [("a", "1"), ("1", "b"), ("nan", "1"), ("(nan", "1"), ("1 ", "2"), ("[1", "2"),
                ("((1", "2")]:
        with pytest.raises(redis.ResponseError, match=NOT_RANGE_FLOAT):
            r.execute_command("ZRANGEBYSCORE", "z", *bad)
        with pytest.raises(redis.ResponseError, match=NOT_RANGE_FLOAT):
            r.execute_command("ZCOUNT", "z", *bad)
        with pytest.raises(redis.ResponseError, match=NOT_RANGE_FLOAT):
            r.execute_command("ZREMRANGEBYSCORE", "z", *bad)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("ZRANGEBYSCORE", "z", "0", "1", "LIMIT", "x", "1")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANGEBYSCORE", "z", "0", "1", "LIMIT", "1")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANGEBYSCORE", "z", "0", "1", "BYLEX")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANGEBYSCORE", "z", "0", "1", "REV")


# ---------------------------------------------------------------- ZRANGE by lex

LEX = ["a", "aa", "b", "c", "d", "e", "f", "g"]


@pytest.mark.parametrize("big", [False, True])
def test_zrangebylex(rc, big):
    zadd(rc, "z", *[(m, 0) for m in LEX])
    extra = []
    if big:
        extra = ["z%03d" % i for i in range(BIG)]
        zadd(rc, "z", *[(m, 0) for m in extra])
    q = lambda *a: rc.execute_command("ZRANGEBYLEX", "z", *a)  # noqa: E731
    assert q("-", "+") == LEX + extra
    assert q("[a", "[b") == ["a", "aa", "b"]
    assert q("(a", "[b") == ["aa", "b"]
    assert q("(a", "(b") == ["aa"]
    assert q("[aa", "(c") == ["aa", "b"]
    assert q("-", "[c") == ["a", "aa", "b", "c"]
    assert q("[e", "+") == ["e", "f", "g"] + extra
    assert q("[c", "[b") == []
    assert q("+", "-") == []
    assert q("-", "-") == []
    assert q("+", "+") == []
    assert q("[b", "[b") == ["b"]
    assert q("(b", "[b") == []
    assert q("[", "[b") == ["a", "aa", "b"]  # "[" alone is the empty string
    assert q("-", "+", "LIMIT", "2", "3") == ["b", "c", "d"]
    assert q("-", "+", "LIMIT", "2", "-1") == LEX[2:] + extra
    assert q("-", "+", "LIMIT", "-1", "3") == []
    rq = lambda *a: rc.execute_command("ZREVRANGEBYLEX", "z", *a)  # noqa: E731
    assert rq("+", "-") == (LEX + extra)[::-1]
    assert rq("[c", "(a") == ["c", "b", "aa"]
    assert rq("[c", "[d") == []
    assert rq("+", "-", "LIMIT", "1", "2") == (LEX + extra)[::-1][1:3]
    assert rc.execute_command("ZRANGE", "z", "[b", "[d", "BYLEX") == ["b", "c", "d"]
    assert rc.execute_command("ZRANGE", "z", "[d", "[b", "BYLEX", "REV", "LIMIT", "0", "2") == [
        "d", "c"]
    assert rc.execute_command("ZLEXCOUNT", "z", "-", "+") == len(LEX) + len(extra)
    assert rc.execute_command("ZLEXCOUNT", "z", "(a", "[c") == 3
    assert rc.execute_command("ZLEXCOUNT", "z", "[c", "[a") == 0
    assert rc.execute_command("ZLEXCOUNT", "nokey", "-", "+") == 0


def test_lex_range_errors(r):
    r.zadd("z", {"a": 0})
    for bad in [("a", "+"), ("-", "b"), ("", "+"), ("-x", "+"), ("[a", "++"), ("{a", "[b")]:
        with pytest.raises(redis.ResponseError, match=NOT_LEX):
            r.execute_command("ZRANGEBYLEX", "z", *bad)
        with pytest.raises(redis.ResponseError, match=NOT_LEX):
            r.execute_command("ZLEXCOUNT", "z", *bad)
        with pytest.raises(redis.ResponseError, match=NOT_LEX):
            r.execute_command("ZREMRANGEBYLEX", "z", *bad)
    with pytest.raises(redis.ResponseError,
                       match="^syntax error, WITHSCORES not supported in combination with BYLEX$"):
        r.execute_command("ZRANGEBYLEX", "z", "-", "+", "WITHSCORES")
    with pytest.raises(redis.ResponseError,
                       match="^syntax error, WITHSCORES not supported in combination with BYLEX$"):
        r.execute_command("ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES")
    # Errors in the options come before the range's.
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANGEBYLEX", "z", "x", "y", "FOO")


# ---------------------------------------------------------------- ZCOUNT

def test_zcount(rc):
    zadd(rc, "z", *SCORED)
    assert rc.execute_command("ZCOUNT", "z", "-inf", "+inf") == 7
    assert rc.execute_command("ZCOUNT", "z", "2", "3.5") == 3
    assert rc.execute_command("ZCOUNT", "z", "(2", "(3.5") == 0
    assert rc.execute_command("ZCOUNT", "z", "(2", "3.5") == 1
    assert rc.execute_command("ZCOUNT", "z", "5", "1") == 0
    assert rc.execute_command("ZCOUNT", "nokey", "0", "1") == 0


# ---------------------------------------------------------------- ZRANGESTORE

def test_zrangestore(rc):
    zadd(rc, "src", *SCORED)
    assert rc.execute_command("ZRANGESTORE", "dst", "src", "1", "3") == 3
    assert rc.execute_command("ZRANGE", "dst", "0", "-1", "WITHSCORES") == [
        "b", "1", "c", "2", "d", "2"]
    assert rc.execute_command("ZRANGESTORE", "dst", "src", "(1", "inf", "BYSCORE", "LIMIT", "1",
                              "2") == 2
    assert rc.execute_command("ZRANGE", "dst", "0", "-1") == ["d", "e"]
    assert rc.execute_command("ZRANGESTORE", "dst", "src", "10", "2", "BYSCORE", "REV") == 4
    assert rc.execute_command("ZRANGE", "dst", "0", "-1") == ["c", "d", "e", "f"]
    assert rc.execute_command("ZRANGESTORE", "dst", "src", "0", "0", "REV") == 1
    assert rc.execute_command("ZRANGE", "dst", "0", "-1") == ["g"]
    # Overwrites any type and drops the TTL.
    rc.execute_command("SET", "str", "x", "EX", "100")
    assert rc.execute_command("ZRANGESTORE", "str", "src", "0", "1") == 2
    assert rc.execute_command("TYPE", "str") == "zset"
    assert rc.execute_command("TTL", "str") == -1
    # An empty result deletes the destination; a missing source too.
    assert rc.execute_command("ZRANGESTORE", "dst", "src", "5", "1") == 0
    assert rc.execute_command("EXISTS", "dst") == 0
    rc.execute_command("SET", "dst", "x")
    assert rc.execute_command("ZRANGESTORE", "dst", "nokey", "0", "-1") == 0
    assert rc.execute_command("EXISTS", "dst") == 0
    # Source and destination the same key.
    assert rc.execute_command("ZRANGESTORE", "src", "src", "0", "1") == 2
    assert rc.execute_command("ZRANGE", "src", "0", "-1") == ["a", "b"]


def test_zrangestore_errors(rc):
    zadd(rc, "src", ("a", 1))
    rc.execute_command("SET", "str", "x")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("ZRANGESTORE", "dst", "src", "0", "-1", "WITHSCORES")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("ZRANGESTORE", "dst", "str", "0", "-1")
    with pytest.raises(redis.ResponseError, match=arity("zrangestore")):
        rc.execute_command("ZRANGESTORE", "dst", "src", "0")


@pytest.mark.parametrize("big", [False, True])
def test_zrangestore_across_shards(rc, big):
    n = BIG if big else 10
    fill(rc, "a{1}", n)
    rc.execute_command("SET", "b{2}", "x")
    assert rc.execute_command("ZRANGESTORE", "b{2}", "a{1}", "0", "4") == 5
    assert rc.execute_command("ZRANGE", "b{2}", "0", "-1") == ["m0", "m1", "m2", "m3", "m4"]
    assert rc.execute_command("ZRANGESTORE", "b{2}", "a{1}", "0", "-1") == n
    assert rc.execute_command("ZCARD", "b{2}") == n
    assert rc.execute_command("OBJECT", "ENCODING", "b{2}") == (
        "skiplist" if big else "listpack")
    assert rc.execute_command("ZRANGESTORE", "b{2}", "nokey{1}", "0", "-1") == 0
    assert rc.execute_command("EXISTS", "b{2}") == 0
    rc.execute_command("SET", "s{1}", "x")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("ZRANGESTORE", "b{2}", "s{1}", "0", "-1")


# ---------------------------------------------------------------- ZREMRANGEBY*

@pytest.mark.parametrize("n", [10, BIG])
def test_zremrangebyrank(rc, n):
    fill(rc, "z", n)
    assert rc.execute_command("ZREMRANGEBYRANK", "z", "0", "1") == 2
    assert rc.execute_command("ZRANGE", "z", "0", "0") == ["m2"]
    assert rc.execute_command("ZREMRANGEBYRANK", "z", "-2", "-1") == 2
    assert rc.execute_command("ZREMRANGEBYRANK", "z", "5", "3") == 0
    assert rc.execute_command("ZREMRANGEBYRANK", "z", "100000", "200000") == 0
    assert rc.execute_command("ZCARD", "z") == n - 4
    assert rc.execute_command("ZREMRANGEBYRANK", "z", "-100000", "100000") == n - 4
    assert rc.execute_command("EXISTS", "z") == 0
    assert rc.execute_command("ZREMRANGEBYRANK", "nokey", "0", "-1") == 0
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("ZREMRANGEBYRANK", "z", "a", "1")


def test_zremrangebyscore_and_lex(rc):
    zadd(rc, "z", *SCORED)
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "(2", "10") == 2
    assert rc.execute_command("ZRANGE", "z", "0", "-1") == ["a", "b", "c", "d", "g"]
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "-inf", "(-inf") == 0
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "-inf", "-inf") == 1
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "-inf", "+inf") == 4
    assert rc.execute_command("EXISTS", "z") == 0
    assert rc.execute_command("ZREMRANGEBYSCORE", "nokey", "-inf", "+inf") == 0
    zadd(rc, "l", *[(m, 0) for m in LEX])
    assert rc.execute_command("ZREMRANGEBYLEX", "l", "(a", "[c") == 3
    assert rc.execute_command("ZRANGE", "l", "0", "-1") == ["a", "d", "e", "f", "g"]
    assert rc.execute_command("ZREMRANGEBYLEX", "l", "[e", "+") == 3
    assert rc.execute_command("ZREMRANGEBYLEX", "l", "-", "+") == 2
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("ZREMRANGEBYLEX", "nokey", "-", "+") == 0


# ---------------------------------------------------------------- ZPOPMIN ZPOPMAX

@pytest.mark.parametrize("n", [5, BIG])
def test_zpopmin_zpopmax(rc, n):
    fill(rc, "z", n)
    assert rc.execute_command("ZPOPMIN", "z") == ["m0", "0"]
    assert rc.execute_command("ZPOPMAX", "z") == ["m%d" % (n - 1), str(n - 1)]
    assert rc.execute_command("ZPOPMIN", "z", "2") == ["m1", "1", "m2", "2"]
    assert rc.execute_command("ZPOPMAX", "z", "1") == ["m%d" % (n - 2), str(n - 2)]
    assert rc.execute_command("ZPOPMIN", "z", "0") == []
    left = n - 5
    got = rc.execute_command("ZPOPMAX", "z", "100000")
    assert len(got) == 2 * left
    if left:
        assert got[0] == "m%d" % (n - 3)
    assert rc.execute_command("EXISTS", "z") == 0
    assert rc.execute_command("ZPOPMIN", "z") == []
    assert rc.execute_command("ZPOPMAX", "nokey", "3") == []


def test_zpop_errors(rc):
    zadd(rc, "z", ("a", 1))
    rc.execute_command("SET", "s", "x")
    for bad in ("-1", "abc", "1.5"):
        with pytest.raises(redis.ResponseError, match=NOT_POSITIVE):
            rc.execute_command("ZPOPMIN", "z", bad)
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("ZPOPMIN", "z", "1", "2")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("ZPOPMAX", "s", "0")
    assert rc.execute_command("ZCARD", "z") == 1


# ---------------------------------------------------------------- ZMPOP

def test_zmpop(rc):
    zadd(rc, "b{2}", ("x", 1), ("y", 2), ("z", 3))
    assert rc.execute_command("ZMPOP", "2", "a{1}", "b{2}", "MIN") == ["b{2}", [["x", "1"]]]
    assert rc.execute_command("ZMPOP", "2", "a{1}", "b{2}", "MAX", "COUNT", "10") == [
        "b{2}", [["z", "3"], ["y", "2"]]]
    assert rc.execute_command("EXISTS", "b{2}") == 0
    assert rc.execute_command("ZMPOP", "2", "a{1}", "b{2}", "MIN") is None
    zadd(rc, "a{1}", ("p", 1))
    zadd(rc, "b{2}", ("q", 1))
    assert rc.execute_command("ZMPOP", "2", "a{1}", "b{2}", "min", "count", "5") == [
        "a{1}", [["p", "1"]]]
    # The first existing key decides, even when it holds another type.
    rc.execute_command("SET", "a{1}", "x")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("ZMPOP", "2", "a{1}", "b{2}", "MIN")
    assert rc.execute_command("ZMPOP", "2", "nokey{1}", "b{2}", "MIN") == ["b{2}", [["q", "1"]]]


def test_zmpop_errors(r):
    r.zadd("z", {"a": 1})
    numkeys = "^numkeys should be greater than 0$"
    for args in (["0", "z", "MIN"], ["-1", "z", "MIN"], ["x", "z", "MIN"]):
        with pytest.raises(redis.ResponseError, match=numkeys):
            r.execute_command("ZMPOP", *args)
    for args in (["2", "z", "MIN"], ["1", "z", "MINX"], ["1", "z", "MIN", "COUNT"],
                 ["1", "z", "MIN", "COUNT", "1", "COUNT", "1"], ["1", "z", "MIN", "FOO"]):
        with pytest.raises(redis.ResponseError, match=SYNTAX):
            r.execute_command("ZMPOP", *args)
    for bad in ("0", "-1", "x"):
        with pytest.raises(redis.ResponseError, match="^count should be greater than 0$"):
            r.execute_command("ZMPOP", "1", "z", "MIN", "COUNT", bad)
    with pytest.raises(redis.ResponseError, match=arity("zmpop")):
        r.execute_command("ZMPOP", "1", "z")
    assert r.zcard("z") == 1


# ---------------------------------------------------------------- ZRANDMEMBER

@pytest.mark.parametrize("n", [5, BIG])
def test_zrandmember(rc, n):
    fill(rc, "z", n)
    members = {"m%d" % i for i in range(n)}
    assert rc.execute_command("ZRANDMEMBER", "z") in members
    assert rc.execute_command("ZRANDMEMBER", "z", "0") == []
    got = rc.execute_command("ZRANDMEMBER", "z", "3")
    assert len(got) == 3 and len(set(got)) == 3 and set(got) <= members
    got = rc.execute_command("ZRANDMEMBER", "z", str(n + 10))
    assert sorted(got) == sorted(members)
    got = rc.execute_command("ZRANDMEMBER", "z", "-20")
    assert len(got) == 20 and set(got) <= members
    got = rc.execute_command("ZRANDMEMBER", "z", "4", "WITHSCORES")
    assert len(got) == 8
    for m, s in zip(got[0::2], got[1::2]):
        assert s == m[1:]
    got = rc.execute_command("ZRANDMEMBER", "z", "-7", "withscores")
    assert len(got) == 14
    # A count near half the set takes the other sampling path.
    got = rc.execute_command("ZRANDMEMBER", "z", str(n // 2 + 1))
    assert len(set(got)) == n // 2 + 1
    assert rc.execute_command("ZRANDMEMBER", "nokey") is None
    assert rc.execute_command("ZRANDMEMBER", "nokey", "5") == []
    assert rc.execute_command("ZRANDMEMBER", "nokey", "5", "WITHSCORES") == []


def test_zrandmember_errors(r):
    r.zadd("z", {"a": 1})
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("ZRANDMEMBER", "z", "abc")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANDMEMBER", "z", "1", "WITHSCORE")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANDMEMBER", "z", "1", "WITHSCORES", "x")
    with pytest.raises(redis.ResponseError,
                       match="^value is out of range, value must between -9223372036854775807 "
                             "and 9223372036854775807$"):
        r.execute_command("ZRANDMEMBER", "z", "-9223372036854775808")
    with pytest.raises(redis.ResponseError, match="^value is out of range$"):
        r.execute_command("ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES")
    r.set("s", "x")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZRANDMEMBER", "s", "1", "x")


# ---------------------------------------------------------------- ZSCAN

def zscan_all(c, key, *opts):
    cursor = "0"
    seen = {}
    calls = 0
    while True:
        cursor, items = call(c, "ZSCAN", key, cursor, *opts)
        calls += 1
        for m, s in zip(items[0::2], items[1::2]):
            seen[m] = s
        if cursor == "0":
            return seen, calls
        assert calls < 100000


def test_zscan_small_returns_everything_at_once(rc):
    zadd(rc, "z", ("a", 1.5), ("b", 2), ("c", "inf"))
    cursor, items = call(rc, "ZSCAN", "z", "0")
    assert cursor == "0"
    assert items == ["a", "1.5", "b", "2", "c", "inf"]
    assert call(rc, "ZSCAN", "z", "0", "MATCH", "[ab]") == ["0", ["a", "1.5", "b", "2"]]
    assert call(rc, "ZSCAN", "nokey", "0") == ["0", []]


def test_zscan_big(rc):
    fill(rc, "z", 1000)
    seen, calls = zscan_all(rc, "z", "COUNT", "20")
    assert len(seen) == 1000 and calls > 1
    assert seen["m7"] == "7"
    seen, _ = zscan_all(rc, "z", "MATCH", "m1*", "COUNT", "100")
    assert set(seen) == {m for m in ("m%d" % i for i in range(1000)) if m.startswith("m1")}


def test_zscan_errors(r):
    r.zadd("z", {"a": 1})
    r.set("s", "x")
    with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
        r.execute_command("ZSCAN", "z", "x")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZSCAN", "z", "0", "COUNT", "0")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZSCAN", "z", "0", "FOO")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("ZSCAN", "z", "0", "COUNT", "x")
    # The type is checked before the options, and a missing key ignores them.
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        r.execute_command("ZSCAN", "s", "0", "COUNT", "0")
    assert call(r, "ZSCAN", "nokey", "0", "COUNT", "0") == ["0", []]


# ---------------------------------------------------------------- algebra

def pairs_of(reply):
    return list(zip(reply[0::2], reply[1::2]))


@pytest.mark.parametrize("keys", [("a", "b", "c"), ("a{1}", "b{2}", "c{3}")])
def test_zunion_zinter_zdiff(rc, keys):
    a, b, c = keys
    zadd(rc, a, ("x", 1), ("y", 2), ("z", 3))
    zadd(rc, b, ("y", 10), ("z", 20), ("w", 30))
    rc.execute_command("SADD", c, "z", "w", "v")
    assert rc.execute_command("ZUNION", "2", a, b) == ["x", "y", "z", "w"]
    assert rc.execute_command("ZUNION", "2", a, b, "WITHSCORES") == [
        "x", "1", "y", "12", "z", "23", "w", "30"]
    assert rc.execute_command("ZUNION", "3", a, b, c, "WITHSCORES") == [
        "v", "1", "x", "1", "y", "12", "z", "24", "w", "31"]
    assert rc.execute_command("ZUNION", "2", a, b, "WEIGHTS", "2", "0.5", "WITHSCORES") == [
        "x", "2", "y", "9", "w", "15", "z", "16"]
    assert rc.execute_command("ZUNION", "2", a, b, "AGGREGATE", "MIN", "WITHSCORES") == [
        "x", "1", "y", "2", "z", "3", "w", "30"]
    assert rc.execute_command("ZUNION", "2", a, b, "AGGREGATE", "max", "WITHSCORES") == [
        "x", "1", "y", "10", "z", "20", "w", "30"]
    assert rc.execute_command("ZINTER", "2", a, b, "WITHSCORES") == ["y", "12", "z", "23"]
    assert rc.execute_command("ZINTER", "3", a, b, c, "WITHSCORES") == ["z", "24"]
    assert rc.execute_command("ZINTER", "2", a, c, "WEIGHTS", "1", "5", "WITHSCORES") == [
        "z", "8"]
    assert rc.execute_command("ZINTER", "2", a, "nokey") == []
    assert rc.execute_command("ZDIFF", "2", a, b, "WITHSCORES") == ["x", "1"]
    assert rc.execute_command("ZDIFF", "3", b, a, c) == []
    assert rc.execute_command("ZDIFF", "2", b, "nokey", "WITHSCORES") == [
        "y", "10", "z", "20", "w", "30"]
    assert rc.execute_command("ZDIFF", "1", "nokey") == []
    assert rc.execute_command("ZINTERCARD", "2", a, b) == 2
    assert rc.execute_command("ZINTERCARD", "3", a, b, c) == 1
    assert rc.execute_command("ZINTERCARD", "2", a, b, "LIMIT", "1") == 1
    assert rc.execute_command("ZINTERCARD", "2", a, b, "LIMIT", "0") == 2
    assert rc.execute_command("ZINTERCARD", "2", a, "nokey") == 0


@pytest.mark.parametrize("keys", [("d", "a", "b"), ("d{3}", "a{1}", "b{2}")])
def test_store_forms(rc, keys):
    d, a, b = keys
    zadd(rc, a, ("x", 1), ("y", 2))
    zadd(rc, b, ("y", 3), ("z", 4))
    rc.execute_command("SET", d, "x", "EX", "100")
    assert rc.execute_command("ZUNIONSTORE", d, "2", a, b) == 3
    assert rc.execute_command("TYPE", d) == "zset"
    assert rc.execute_command("TTL", d) == -1
    assert rc.execute_command("ZRANGE", d, "0", "-1", "WITHSCORES") == [
        "x", "1", "z", "4", "y", "5"]
    assert rc.execute_command("ZINTERSTORE", d, "2", a, b, "WEIGHTS", "1", "-1") == 1
    assert rc.execute_command("ZRANGE", d, "0", "-1", "WITHSCORES") == ["y", "-1"]
    assert rc.execute_command("ZDIFFSTORE", d, "2", a, b) == 1
    assert rc.execute_command("ZRANGE", d, "0", "-1", "WITHSCORES") == ["x", "1"]
    # Empty results delete the destination.
    assert rc.execute_command("ZINTERSTORE", d, "2", a, "nokey") == 0
    assert rc.execute_command("EXISTS", d) == 0
    assert rc.execute_command("ZUNIONSTORE", d, "1", "nokey") == 0
    # The destination may be an input.
    assert rc.execute_command("ZUNIONSTORE", a, "2", a, b, "AGGREGATE", "MAX") == 3
    assert rc.execute_command("ZRANGE", a, "0", "-1", "WITHSCORES") == [
        "x", "1", "y", "3", "z", "4"]
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("ZUNIONSTORE", d, "2", a, b, "WITHSCORES")


def test_algebra_arithmetic(rc):
    zadd(rc, "a", ("x", 1), ("y", 2))
    zadd(rc, "i", ("x", 1))
    zadd(rc, "n", ("x", "-inf"))
    # 0 * inf is NaN, counted as 0; inf + -inf is 0.
    assert rc.execute_command("ZUNION", "2", "a", "i", "WEIGHTS", "0", "inf", "WITHSCORES") == [
        "y", "0", "x", "inf"]
    assert rc.execute_command("ZUNION", "2", "a", "n", "WEIGHTS", "inf", "1", "WITHSCORES") == [
        "x", "0", "y", "inf"]
    assert rc.execute_command("ZINTER", "2", "a", "n", "WEIGHTS", "inf", "1", "WITHSCORES") == [
        "x", "0"]
    assert rc.execute_command("ZUNION", "1", "a", "WEIGHTS", "0", "WITHSCORES") == [
        "x", "0", "y", "0"]
    assert rc.execute_command("ZUNION", "2", "a", "a", "WITHSCORES") == ["x", "2", "y", "4"]
    assert rc.execute_command("ZINTER", "2", "a", "a", "AGGREGATE", "MIN", "WITHSCORES") == [
        "x", "1", "y", "2"]
    # WITHSCORES may repeat.
    assert rc.execute_command("ZUNION", "1", "a", "WITHSCORES", "WITHSCORES") == [
        "x", "1", "y", "2"]


def test_algebra_errors(r):
    r.zadd("a", {"x": 1})
    r.set("s", "x")
    for cmd, args in [("zunion", ["0", "a"]), ("zinter", ["0", "a"]), ("zdiff", ["-1", "a"]),
                      ("zintercard", ["0", "a"]), ("zunionstore", ["d", "0", "a"]),
                      ("zinterstore", ["d", "0", "a"]), ("zdiffstore", ["d", "0", "a"])]:
        with pytest.raises(redis.ResponseError,
                           match="^at least 1 input key is needed for '%s' command$" % cmd):
            r.execute_command(cmd, *args)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("ZUNION", "x", "a")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZUNION", "3", "a", "b")
    with pytest.raises(redis.ResponseError, match="^weight value is not a float$"):
        r.execute_command("ZUNION", "2", "a", "b", "WEIGHTS", "1", "x")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZUNION", "2", "a", "b", "WEIGHTS", "1")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZUNION", "2", "a", "b", "AGGREGATE", "AVG")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZDIFF", "2", "a", "b", "WEIGHTS", "1", "2")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZDIFF", "2", "a", "b", "AGGREGATE", "SUM")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        r.execute_command("ZINTERCARD", "2", "a", "b", "WITHSCORES")
    for bad in ("-1", "x"):
        with pytest.raises(redis.ResponseError, match="^LIMIT can't be negative$"):
            r.execute_command("ZINTERCARD", "2", "a", "b", "LIMIT", bad)
    # WRONGTYPE comes before errors in the options, on one shard or several.
    for keys in (("a", "s"), ("a{1}", "s{2}")):
        r.zadd(keys[0], {"x": 1})
        r.set(keys[1], "x")
        for cmd in ("ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD"):
            with pytest.raises(redis.ResponseError, match=WRONGTYPE):
                r.execute_command(cmd, "2", *keys, "WEIGHTS", "x", "y")
        with pytest.raises(redis.ResponseError, match=WRONGTYPE):
            r.execute_command("ZUNIONSTORE", "d", "2", *keys, "AGGREGATE", "foo")
    assert r.exists("d") == 0


@pytest.mark.parametrize("big", [False, True])
def test_algebra_result_encoding(rc, limits, big):
    n = BIG if big else 20
    fill(rc, "a", n)
    fill(rc, "b", n)
    assert rc.execute_command("ZUNIONSTORE", "d", "2", "a", "b") == n
    assert rc.execute_command("OBJECT", "ENCODING", "d") == ("skiplist" if big else "listpack")
    assert rc.execute_command("ZSCORE", "d", "m3") == "6"
    # Long members force the big form whatever the count.
    zadd(rc, "long", ("x" * 65, 1))
    assert rc.execute_command("ZUNIONSTORE", "d2", "1", "long") == 1
    assert rc.execute_command("OBJECT", "ENCODING", "d2") == "skiplist"
    # Results of a big input that fit the limits are small again.
    limits.config_set("zset-max-listpack-entries", "0")
    zadd(rc, "bigone", ("p", 1), ("q", 2))
    limits.config_set("zset-max-listpack-entries", "128")
    assert rc.execute_command("OBJECT", "ENCODING", "bigone") == "skiplist"
    assert rc.execute_command("ZUNIONSTORE", "d3", "1", "bigone") == 2
    assert rc.execute_command("OBJECT", "ENCODING", "d3") == "listpack"


# ---------------------------------------------------------------- WRONGTYPE

WRONGTYPE_CALLS = [
    ["ZADD", "k", "1", "a"], ["ZINCRBY", "k", "1", "a"], ["ZREM", "k", "a"], ["ZCARD", "k"],
    ["ZSCORE", "k", "a"], ["ZMSCORE", "k", "a"], ["ZRANK", "k", "a"], ["ZREVRANK", "k", "a"],
    ["ZRANDMEMBER", "k"], ["ZRANDMEMBER", "k", "2"], ["ZSCAN", "k", "0"],
    ["ZCOUNT", "k", "0", "1"], ["ZLEXCOUNT", "k", "-", "+"], ["ZRANGE", "k", "0", "-1"],
    ["ZRANGE", "k", "0", "1", "BYSCORE"], ["ZREVRANGE", "k", "0", "-1"],
    ["ZRANGEBYSCORE", "k", "0", "1"], ["ZREVRANGEBYSCORE", "k", "1", "0"],
    ["ZRANGEBYLEX", "k", "-", "+"], ["ZREVRANGEBYLEX", "k", "+", "-"],
    ["ZRANGESTORE", "d", "k", "0", "-1"], ["ZREMRANGEBYRANK", "k", "0", "-1"],
    ["ZREMRANGEBYSCORE", "k", "0", "1"], ["ZREMRANGEBYLEX", "k", "-", "+"],
    ["ZPOPMIN", "k"], ["ZPOPMAX", "k", "2"], ["ZMPOP", "1", "k", "MIN"],
    ["ZUNION", "1", "k"], ["ZINTER", "1", "k"], ["ZDIFF", "1", "k"], ["ZINTERCARD", "1", "k"],
    ["ZUNIONSTORE", "d", "1", "k"], ["ZINTERSTORE", "d", "1", "k"],
    ["ZDIFFSTORE", "d", "1", "k"], ["BZPOPMIN", "k", "0.01"], ["BZPOPMAX", "k", "0.01"],
    ["BZMPOP", "0.01", "1", "k", "MAX"],
]


@pytest.mark.parametrize("args", WRONGTYPE_CALLS, ids=lambda a: " ".join(a))
def test_wrongtype(r, args):
    r.set("k", "v")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        r.execute_command(*args)
    assert r.get("k") == "v"
    assert r.exists("d") == 0


def test_set_inputs_are_not_wrongtype_for_algebra(r):
    r.sadd("k", "a", "b")
    assert r.execute_command("ZUNION", "1", "k", "WITHSCORES") in (
        ["a", "1", "b", "1"], ["b", "1", "a", "1"])
    assert r.execute_command("ZINTERCARD", "1", "k") == 2
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        r.execute_command("ZCARD", "k")


def test_other_commands_on_a_zset_are_wrongtype(r):
    r.zadd("z", {"a": 1})
    for args in (["GET", "z"], ["LPUSH", "z", "x"], ["SADD", "z", "x"], ["HGET", "z", "x"]):
        with pytest.raises(redis.ResponseError, match=WRONGTYPE):
            r.execute_command(*args)


# ---------------------------------------------------------------- encodings

def test_encoding_thresholds(rc, limits):
    fill(rc, "z", 128)
    assert rc.execute_command("OBJECT", "ENCODING", "z") == "listpack"
    zadd(rc, "z", ("m128", 128))
    assert rc.execute_command("OBJECT", "ENCODING", "z") == "skiplist"
    # No way back by removing.
    rc.execute_command("ZREMRANGEBYRANK", "z", "0", "-3")
    assert rc.execute_command("ZCARD", "z") == 2
    assert rc.execute_command("OBJECT", "ENCODING", "z") == "skiplist"
    zadd(rc, "v", ("x" * 64, 1))
    assert rc.execute_command("OBJECT", "ENCODING", "v") == "listpack"
    zadd(rc, "v", ("y" * 65, 1))
    assert rc.execute_command("OBJECT", "ENCODING", "v") == "skiplist"
    zadd(rc, "v2", ("y" * 65, 1))
    assert rc.execute_command("OBJECT", "ENCODING", "v2") == "skiplist"


def test_encoding_config(rc, limits):
    limits.config_set("zset-max-listpack-entries", "4")
    limits.config_set("zset-max-listpack-value", "10")
    assert limits.config_get("zset-max-ziplist-entries") == {"zset-max-ziplist-entries": "4"}
    fill(rc, "z", 4)
    assert rc.execute_command("OBJECT", "ENCODING", "z") == "listpack"
    zadd(rc, "z", ("m4", 4))
    assert rc.execute_command("OBJECT", "ENCODING", "z") == "skiplist"
    zadd(rc, "w", ("0123456789", 1))
    assert rc.execute_command("OBJECT", "ENCODING", "w") == "listpack"
    zadd(rc, "w", ("0123456789a", 1))
    assert rc.execute_command("OBJECT", "ENCODING", "w") == "skiplist"
    limits.config_set("zset-max-listpack-entries", "0")
    zadd(rc, "zero", ("a", 1))
    assert rc.execute_command("OBJECT", "ENCODING", "zero") == "skiplist"


@pytest.mark.parametrize("big", [False, True])
def test_copy_rename_move(rc, big):
    n = BIG if big else 10
    fill(rc, "z", n)
    enc = "skiplist" if big else "listpack"
    want = rc.execute_command("ZRANGE", "z", "0", "-1", "WITHSCORES")
    assert rc.execute_command("COPY", "z", "c{1}") == 1
    assert rc.execute_command("ZRANGE", "c{1}", "0", "-1", "WITHSCORES") == want
    assert rc.execute_command("OBJECT", "ENCODING", "c{1}") == enc
    assert rc.execute_command("RENAME", "c{1}", "r{2}") == "OK"
    assert rc.execute_command("ZRANGE", "r{2}", "0", "-1", "WITHSCORES") == want
    assert rc.execute_command("OBJECT", "ENCODING", "r{2}") == enc
    assert rc.execute_command("MOVE", "r{2}", "1") == 1
    rc.execute_command("SELECT", "1")
    assert rc.execute_command("ZRANGE", "r{2}", "0", "-1", "WITHSCORES") == want
    rc.execute_command("FLUSHDB")
    rc.execute_command("SELECT", "0")


def test_ttl_is_kept_by_writes(rc):
    zadd(rc, "z", ("a", 1), ("b", 2))
    rc.execute_command("EXPIRE", "z", "100")
    zadd(rc, "z", ("c", 3))
    rc.execute_command("ZREM", "z", "a")
    rc.execute_command("ZINCRBY", "z", "1", "b")
    rc.execute_command("ZPOPMIN", "z")
    assert 0 < rc.execute_command("TTL", "z") <= 100


def test_expired_zset_is_gone(rc):
    zadd(rc, "z", ("a", 1))
    rc.execute_command("PEXPIRE", "z", "20")
    wait_for(lambda: rc.execute_command("EXISTS", "z") == 0, timeout=2, what="expiry")
    assert rc.execute_command("ZCARD", "z") == 0
    assert rc.execute_command("ZADD", "z", "XX", "1", "a") == 0


# ---------------------------------------------------------------- RESP3

def hello3(raw):
    c = raw()
    c.send(resp("HELLO", "3"))
    assert c.read_reply().startswith(b"%")
    return c


def test_resp3_scores_are_doubles(raw):
    c = hello3(raw)
    c.send(resp("ZADD", "z", "1.5", "a", "2", "b", "inf", "c") + resp("ZSCORE", "z", "a")
           + resp("ZSCORE", "z", "c") + resp("ZSCORE", "z", "x") + resp("ZMSCORE", "z", "b", "x")
           + resp("ZINCRBY", "z", "1", "b") + resp("ZADD", "z", "INCR", "1", "b")
           + resp("ZADD", "z", "NX", "INCR", "1", "b"))
    assert c.read_reply() == b":3\r\n"
    assert c.read_reply() == b",1.5\r\n"
    assert c.read_reply() == b",inf\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"*2\r\n,2\r\n_\r\n"
    assert c.read_reply() == b",3\r\n"
    assert c.read_reply() == b",4\r\n"
    assert c.read_reply() == b"_\r\n"


def test_resp3_ranges_and_pops(raw):
    c = hello3(raw)
    c.send(resp("ZADD", "z", "1", "a", "2", "b", "3", "c")
           + resp("ZRANGE", "z", "0", "1", "WITHSCORES")
           + resp("ZRANGE", "z", "0", "1")
           + resp("ZRANGEBYSCORE", "z", "-inf", "inf", "WITHSCORES", "LIMIT", "2", "1")
           + resp("ZUNION", "1", "z", "WITHSCORES")
           + resp("ZRANDMEMBER", "z", "-1", "WITHSCORES")
           + resp("ZPOPMIN", "z")
           + resp("ZPOPMIN", "z", "1")
           + resp("ZSCAN", "z", "0")
           + resp("ZMPOP", "1", "z", "MAX")
           + resp("ZPOPMAX", "z")
           + resp("ZMPOP", "1", "z", "MAX")
           + resp("ZRANK", "z", "a"))
    assert c.read_reply() == b":3\r\n"
    assert c.read_reply() == b"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert c.read_reply() == b"*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"
    assert c.read_reply() == (b"*3\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
                              b"*2\r\n$1\r\nc\r\n,3\r\n")
    assert c.read_reply().startswith(b"*1\r\n*2\r\n$1\r\n")
    assert c.read_reply() == b"*2\r\n$1\r\na\r\n,1\r\n"
    assert c.read_reply() == b"*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"
    assert c.read_reply() == b"*0\r\n"
    assert c.read_reply() == b"_\r\n"
    assert c.read_reply() == b"_\r\n"


def test_resp2_raw_replies(raw):
    c = raw()
    c.send(resp("ZADD", "z", "1.5", "a") + resp("ZSCORE", "z", "a")
           + resp("ZMPOP", "1", "nokey", "MIN") + resp("ZRANGE", "z", "0", "-1", "WITHSCORES")
           + resp("ZPOPMIN", "z", "1"))
    assert c.read_reply() == b":1\r\n"
    assert c.read_reply() == b"$3\r\n1.5\r\n"
    assert c.read_reply() == b"*-1\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\na\r\n$3\r\n1.5\r\n"
    assert c.read_reply() == b"*2\r\n$1\r\na\r\n$3\r\n1.5\r\n"


# ---------------------------------------------------------------- COMMAND

def test_command_info(r):
    info = call(r, "COMMAND", "INFO", "zadd", "zrangestore", "zunionstore")
    assert info[0][0] == "zadd" and info[0][1] == -4
    assert "@sortedset" in info[0][6]
    assert info[1][1] == -5
    assert info[2][1] == -4


# ---------------------------------------------------------------- model check

class Model:
    def __init__(self):
        self.scores = {}

    def ordered(self):
        return sorted(self.scores.items(), key=lambda kv: (kv[1], kv[0].encode()))


def fmt(score):
    if score == math.inf:
        return "inf"
    if score == -math.inf:
        return "-inf"
    if score == int(score):
        return str(int(score))
    return repr(score)


@pytest.mark.parametrize("seed,members", [(1, 60), (2, 400)])
def test_random_operations_match_a_model(rc, seed, members):
    rng = random.Random(seed)
    m = Model()
    for step in range(1500):
        op = rng.randrange(10)
        name = "m%d" % rng.randrange(members)
        if op < 5:
            s = rng.randrange(-50, 50) / 2
            rc.execute_command("ZADD", "z", fmt(s), name)
            m.scores[name] = s
        elif op == 5:
            by = rng.randrange(-10, 10) / 4
            got = rc.execute_command("ZINCRBY", "z", fmt(by), name)
            m.scores[name] = m.scores.get(name, 0) + by
            assert float(got) == m.scores[name]
        elif op == 6:
            rc.execute_command("ZREM", "z", name)
            m.scores.pop(name, None)
        elif op == 7 and m.scores:
            k = rng.randrange(1, 4)
            got = rc.execute_command("ZPOPMIN" if rng.randrange(2) else "ZPOPMAX", "z", k)
            for member in got[0::2]:
                m.scores.pop(member)
        elif op == 8:
            lo = rng.randrange(-30, 30) / 2
            hi = lo + rng.randrange(0, 10)
            n = rc.execute_command("ZREMRANGEBYSCORE", "z", fmt(lo), "(" + fmt(hi))
            doomed = [k for k, v in m.scores.items() if lo <= v < hi]
            assert n == len(doomed)
            for k in doomed:
                del m.scores[k]
        if step % 100 == 0 or op == 9:
            ordered = m.ordered()
            assert rc.execute_command("ZCARD", "z") == len(ordered)
            got = rc.execute_command("ZRANGE", "z", "0", "-1", "WITHSCORES")
            assert got[0::2] == [k for k, _ in ordered]
            assert [float(x) for x in got[1::2]] == [v for _, v in ordered]
            if ordered:
                i = rng.randrange(len(ordered))
                k, v = ordered[i]
                assert rc.execute_command("ZRANK", "z", k) == i
                assert rc.execute_command("ZREVRANK", "z", k) == len(ordered) - 1 - i
                lo = rng.randrange(-30, 30) / 2
                hi = lo + rng.randrange(0, 20) / 2
                want = [kk for kk, vv in ordered if lo < vv <= hi]
                assert rc.execute_command("ZRANGEBYSCORE", "z", "(" + fmt(lo), fmt(hi)) == want
                assert rc.execute_command("ZCOUNT", "z", "(" + fmt(lo), fmt(hi)) == len(want)
                assert rc.execute_command("ZREVRANGEBYSCORE", "z", fmt(hi),
                                          "(" + fmt(lo)) == want[::-1]


# ---------------------------------------------------------------- memory

def test_memory_usage_of_big_zset(r):
    fill(r, "z", 2000)
    assert r.object("encoding", "z") == "skiplist"
    assert r.memory_usage("z") > sum(len("m%d" % i) for i in range(2000))


@pytest.fixture
def mr(server_factory):
    c = server_factory().client(decode_responses=True)
    yield c
    c.close()


def zset_mem(c):
    return c.info("memory")["mem_type_zset"]


@strata_only
def test_info_mem_type_zset_back_to_zero(mr):
    t = zset_mem(mr)
    assert t["keys"] == 0 and t["bytes"] == 0
    fill(mr, "small", 10)
    small = zset_mem(mr)["bytes"]
    assert small > 0
    fill(mr, "big{1}", 5000)
    t = zset_mem(mr)
    assert t["keys"] == 2 and t["bytes"] > small + 5000 * 8
    # Every kind of removal gives the bytes back.
    mr.execute_command("ZREMRANGEBYRANK", "big{1}", "0", "999")
    mr.execute_command("ZPOPMAX", "big{1}", "1000")
    mr.execute_command("ZREM", "big{1}", "m1500", "m1501")
    mr.execute_command("ZUNIONSTORE", "u{2}", "2", "big{1}", "small")
    mr.execute_command("ZRANGESTORE", "r{3}", "big{1}", "0", "-1")
    mr.execute_command("COPY", "big{1}", "c{4}")
    mr.execute_command("ZREMRANGEBYSCORE", "big{1}", "-inf", "+inf")
    mr.delete("small", "u{2}", "r{3}", "c{4}")
    wait_for(lambda: zset_mem(mr)["bytes"] == 0 and zset_mem(mr)["keys"] == 0, timeout=2,
             what="mem_type_zset back to 0")


def test_unlink_big_zset_frees_it(mr):
    pipe = mr.pipeline(transaction=False)
    for i in range(0, 60000, 1000):
        pipe.zadd("big", {"m%d" % j: j for j in range(i, i + 1000)})
    pipe.execute()
    assert mr.unlink("big") == 1
    assert mr.exists("big") == 0
    wait_for(lambda: int(mr.info("memory")["lazyfree_pending_objects"]) == 0, timeout=10,
             what="lazy freeing")
    if TARGET != "redis":
        assert zset_mem(mr)["bytes"] == 0 and zset_mem(mr)["keys"] == 0
