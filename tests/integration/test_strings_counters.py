"""Counter commands on strings: INCR DECR INCRBY DECRBY INCRBYFLOAT.

Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it;
test_strings.py::test_error_reply_lines pins full lines on the wire.
"""

import pytest
import redis

from helpers import NOT_FLOAT, NOT_INT


# ---------------------------------------------------- INCR DECR INCRBY DECRBY

def test_incr_decr_on_missing_key(rc):
    assert rc.execute_command("INCR", "a") == 1
    assert rc.execute_command("DECR", "b") == -1
    assert rc.execute_command("INCRBY", "c", "10") == 10
    assert rc.execute_command("DECRBY", "d", "10") == -10
    assert rc.execute_command("MGET", "a", "b", "c", "d") == ["1", "-1", "10", "-10"]


def test_incr_family_on_existing_value(rc):
    rc.execute_command("SET", "k", "10")
    assert rc.execute_command("INCR", "k") == 11
    assert rc.execute_command("INCRBY", "k", "-20") == -9
    assert rc.execute_command("DECRBY", "k", "-9") == 0
    assert rc.execute_command("DECR", "k") == -1
    assert rc.execute_command("GET", "k") == "-1"


def test_incr_keeps_ttl(rc):
    rc.execute_command("SET", "k", "1", "EX", "100")
    rc.execute_command("INCR", "k")
    assert 99 <= rc.execute_command("TTL", "k") <= 100


def test_incr_at_int64_limits(rc):
    rc.execute_command("SET", "k", "9223372036854775806")
    assert rc.execute_command("INCR", "k") == 9223372036854775807
    rc.execute_command("SET", "m", "-9223372036854775807")
    assert rc.execute_command("DECR", "m") == -9223372036854775808
    assert rc.execute_command("GET", "m") == "-9223372036854775808"


@pytest.mark.parametrize("start,cmd,arg", [
    ("9223372036854775807", "INCR", None),
    ("-9223372036854775808", "DECR", None),
    ("-9223372036854775808", "INCRBY", "-1"),
    ("5", "INCRBY", "9223372036854775807"),
    ("-5", "DECRBY", "9223372036854775807"),
])
def test_incr_overflow(rc, start, cmd, arg):
    rc.execute_command("SET", "k", start)
    args = [cmd, "k"] + ([arg] if arg is not None else [])
    with pytest.raises(redis.ResponseError,
                       match=r"^increment or decrement would overflow$"):
        rc.execute_command(*args)
    assert rc.execute_command("GET", "k") == start


def test_decrby_int64_min(rc):
    rc.execute_command("SET", "k", "5")
    with pytest.raises(redis.ResponseError, match=r"^decrement would overflow$"):
        rc.execute_command("DECRBY", "k", "-9223372036854775808")
    assert rc.execute_command("GET", "k") == "5"


@pytest.mark.parametrize("value", ["abc", "1.0", " 1", "1 ", "+1", "01", "-0", "",
                                   "12345678901234567890", "0x10", "1e3"])
def test_incr_non_integer_value(rc, value):
    rc.execute_command("SET", "k", value)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("INCR", "k")
    assert rc.execute_command("GET", "k") == value


@pytest.mark.parametrize("arg", ["abc", "1.5", "9223372036854775808", "", " 1"])
def test_incrby_non_integer_argument(rc, arg):
    rc.execute_command("SET", "k", "1")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("INCRBY", "k", arg)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("DECRBY", "k", arg)
    assert rc.execute_command("GET", "k") == "1"


# ------------------------------------------------------------- INCRBYFLOAT
# redis-py turns INCRBYFLOAT replies into floats; `rc` keeps the exact text.

@pytest.mark.parametrize("start,incr,expected", [
    ("10.5", "0.1", "10.6"),
    ("5.0e3", "2.0e2", "5200"),
    ("3.0", "0", "3"),
    ("1.10", "0", "1.1"),
    ("10", "1.5", "11.5"),
    ("11.5", "-11.5", "0"),
    ("0", "1e-3", "0.001"),
    ("0", "1.23e-5", "0.0000123"),
    ("0", "1e20", "100000000000000000000"),
    ("-1.5", "0.25", "-1.25"),
    ("5", "+1", "6"),
    ("5", ".5", "5.5"),
    ("5", "5.", "10"),
    ("0", "-0.0", "0"),
    ("1", "5.0e3", "5001"),
])
def test_incrbyfloat_formatting(rc, start, incr, expected):
    rc.execute_command("SET", "k", start)
    assert rc.execute_command("INCRBYFLOAT", "k", incr) == expected
    assert rc.execute_command("GET", "k") == expected


def test_incrbyfloat_missing_key_and_repeated_tenths(rc):
    assert rc.execute_command("INCRBYFLOAT", "k", "0.1") == "0.1"
    assert rc.execute_command("INCRBYFLOAT", "k", "0.1") == "0.2"
    assert rc.execute_command("INCRBYFLOAT", "k", "0.1") == "0.3"
    assert rc.execute_command("INCRBYFLOAT", "n", "3") == "3"


def test_incrbyfloat_reply_bytes(raw):
    c = raw()
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nf\r\n$4\r\n10.5\r\n"
           b"*3\r\n$11\r\nINCRBYFLOAT\r\n$1\r\nf\r\n$3\r\n0.1\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"$4\r\n10.6\r\n"


def test_incrbyfloat_keeps_ttl(rc):
    rc.execute_command("SET", "k", "1", "EX", "100")
    rc.execute_command("INCRBYFLOAT", "k", "1.5")
    assert 99 <= rc.execute_command("TTL", "k") <= 100


@pytest.mark.parametrize("value", ["abc", "", " 1", "1 ", "1.5.5", "nan"])
def test_incrbyfloat_invalid_stored_value(rc, value):
    rc.execute_command("SET", "k", value)
    with pytest.raises(redis.ResponseError, match=NOT_FLOAT):
        rc.execute_command("INCRBYFLOAT", "k", "1")
    assert rc.execute_command("GET", "k") == value


@pytest.mark.parametrize("arg", ["abc", "", " 1", "1 ", "nan", "1,5"])
def test_incrbyfloat_invalid_increment(rc, arg):
    rc.execute_command("SET", "k", "1")
    with pytest.raises(redis.ResponseError, match=NOT_FLOAT):
        rc.execute_command("INCRBYFLOAT", "k", arg)
    assert rc.execute_command("GET", "k") == "1"


@pytest.mark.parametrize("start,incr", [("1", "inf"), ("1", "-inf"), ("inf", "1"),
                                        ("1", "+inf")])
def test_incrbyfloat_nan_or_infinity(rc, start, incr):
    rc.execute_command("SET", "k", start)
    with pytest.raises(redis.ResponseError,
                       match=r"^increment would produce NaN or Infinity$"):
        rc.execute_command("INCRBYFLOAT", "k", incr)
    assert rc.execute_command("GET", "k") == start


def test_incrbyfloat_result_works_with_incr_only_if_integral(rc):
    rc.execute_command("SET", "k", "1")
    assert rc.execute_command("INCRBYFLOAT", "k", "2") == "3"
    assert rc.execute_command("INCR", "k") == 4
    rc.execute_command("INCRBYFLOAT", "k", "0.5")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("INCR", "k")
