"""String commands: GET/SET family, MGET/MSET, APPEND, ranges, binary safety, WRONGTYPE.

Counters (INCR..., INCRBYFLOAT) are in test_strings_counters.py.
Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it;
test_error_reply_lines pins the full lines on the wire.
"""
import time

import pytest
import redis

from conftest import require_commands
from helpers import NOT_INT, SYNTAX, WRONGTYPE, make_list, resp


# ---------------------------------------------------------------- GET / SET

def test_get_missing_returns_nil(rc):
    assert rc.execute_command("GET", "nokey") is None


def test_set_get_roundtrip_and_overwrite(rc):
    assert rc.execute_command("SET", "k", "v1") == "OK"
    assert rc.execute_command("GET", "k") == "v1"
    assert rc.execute_command("SET", "k", "v2") == "OK"
    assert rc.execute_command("GET", "k") == "v2"


def test_empty_key_name(rc):
    assert rc.execute_command("SET", "", "v") == "OK"
    assert rc.execute_command("GET", "") == "v"
    assert rc.execute_command("EXISTS", "") == 1


def test_set_empty_string(rc):
    assert rc.execute_command("SET", "k", "") == "OK"
    assert rc.execute_command("GET", "k") == ""
    assert rc.execute_command("STRLEN", "k") == 0
    assert rc.execute_command("EXISTS", "k") == 1


def test_set_nx(rc):
    assert rc.execute_command("SET", "k", "a", "NX") == "OK"
    assert rc.execute_command("SET", "k", "b", "NX") is None
    assert rc.execute_command("GET", "k") == "a"


def test_set_xx(rc):
    assert rc.execute_command("SET", "k", "a", "XX") is None
    assert rc.execute_command("EXISTS", "k") == 0
    rc.execute_command("SET", "k", "a")
    assert rc.execute_command("SET", "k", "b", "XX") == "OK"
    assert rc.execute_command("GET", "k") == "b"


def test_set_options_are_case_insensitive(rc):
    assert rc.execute_command("set", "k", "a", "nx", "ex", "100") == "OK"
    assert 99 <= rc.execute_command("TTL", "k") <= 100


def test_set_ex_px(rc):
    assert rc.execute_command("SET", "k", "v", "EX", "100") == "OK"
    assert 99 <= rc.execute_command("TTL", "k") <= 100
    assert rc.execute_command("SET", "k2", "v", "PX", "100000") == "OK"
    assert 98000 <= rc.execute_command("PTTL", "k2") <= 100000


def test_set_exat_pxat(rc):
    at = int(time.time()) + 1000
    assert rc.execute_command("SET", "k", "v", "EXAT", at) == "OK"
    assert rc.execute_command("EXPIRETIME", "k") == at
    assert rc.execute_command("SET", "k2", "v", "PXAT", at * 1000 + 123) == "OK"
    assert rc.execute_command("PEXPIRETIME", "k2") == at * 1000 + 123


def test_set_exat_in_the_past_leaves_no_key(rc):
    assert rc.execute_command("SET", "k", "v", "EXAT", 1) == "OK"
    assert rc.execute_command("GET", "k") is None
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("SET", "k", "v", "PXAT", 1) == "OK"
    assert rc.execute_command("EXISTS", "k") == 0


@pytest.mark.parametrize("opt,val", [("EX", "0"), ("EX", "-1"), ("PX", "0"), ("PX", "-100"),
                                     ("EXAT", "0"), ("PXAT", "0"), ("EXAT", "-5"),
                                     ("EX", "9999999999999999")])
def test_set_invalid_expire_time(rc, opt, val):
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'set' command$"):
        rc.execute_command("SET", "k", "v", opt, val)
    assert rc.execute_command("EXISTS", "k") == 0


def test_set_non_integer_expire(rc):
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("SET", "k", "v", "EX", "abc")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("SET", "k", "v", "PX", "1.5")


@pytest.mark.parametrize("args", [
    ["NX", "XX"],
    ["EX", "10", "PX", "10000"],
    ["EX", "10", "EXAT", "9999999999"],
    ["PX", "10", "PXAT", "9999999999999"],
    ["KEEPTTL", "EX", "10"],
    ["PX", "10", "KEEPTTL"],
    ["FOO"],
    ["EX"],
    ["NX", "NX", "XX"],
])
def test_set_syntax_errors(rc, args):
    rc.execute_command("SET", "k", "old")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SET", "k", "v", *args)
    assert rc.execute_command("GET", "k") == "old"


def test_set_repeated_same_option_is_allowed(rc):
    assert rc.execute_command("SET", "k", "v", "NX", "NX") == "OK"
    assert rc.execute_command("SET", "k", "w", "XX", "XX") == "OK"
    assert rc.execute_command("GET", "k") == "w"


def test_set_without_value_is_arity_error(rc):
    with pytest.raises(redis.ResponseError,
                       match=r"^wrong number of arguments for 'set' command$"):
        rc.execute_command("SET", "k")


def test_set_overwrite_clears_ttl_keepttl_keeps_it(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("SET", "k", "v2", "KEEPTTL") == "OK"
    assert 99 <= rc.execute_command("TTL", "k") <= 100
    assert rc.execute_command("GET", "k") == "v2"
    assert rc.execute_command("SET", "k", "v3") == "OK"
    assert rc.execute_command("TTL", "k") == -1


def test_set_keepttl_on_key_without_ttl(rc):
    assert rc.execute_command("SET", "k", "v", "KEEPTTL") == "OK"
    assert rc.execute_command("TTL", "k") == -1


def test_set_get_option(rc):
    assert rc.execute_command("SET", "k", "v1", "GET") is None
    assert rc.execute_command("GET", "k") == "v1"
    assert rc.execute_command("SET", "k", "v2", "GET") == "v1"
    assert rc.execute_command("GET", "k") == "v2"


def test_set_get_with_nx_and_xx(rc):
    # NX + GET: allowed since 7.0; returns the old value, does not set when present.
    assert rc.execute_command("SET", "k", "a", "NX", "GET") is None
    assert rc.execute_command("GET", "k") == "a"
    assert rc.execute_command("SET", "k", "b", "NX", "GET") == "a"
    assert rc.execute_command("GET", "k") == "a"
    assert rc.execute_command("SET", "k", "c", "XX", "GET") == "a"
    assert rc.execute_command("GET", "k") == "c"
    assert rc.execute_command("SET", "new", "c", "XX", "GET") is None
    assert rc.execute_command("EXISTS", "new") == 0


def test_set_get_with_expire(rc):
    rc.execute_command("SET", "k", "old")
    assert rc.execute_command("SET", "k", "new", "GET", "EX", "100") == "old"
    assert 99 <= rc.execute_command("TTL", "k") <= 100


def test_set_overwrites_other_types_but_get_option_checks_type(server, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command("SET", "L", "x", "GET")
    assert rc.execute_command("TYPE", "L") == "list"
    assert rc.execute_command("SET", "L", "x", "NX") is None
    assert rc.execute_command("SET", "L", "x") == "OK"
    assert rc.execute_command("TYPE", "L") == "string"
    assert rc.execute_command("GET", "L") == "x"


# ------------------------------------------------ SETNX SETEX PSETEX GETSET

def test_setnx(rc):
    assert rc.execute_command("SETNX", "k", "a") == 1
    assert rc.execute_command("SETNX", "k", "b") == 0
    assert rc.execute_command("GET", "k") == "a"


def test_setex_psetex(rc):
    assert rc.execute_command("SETEX", "k", "100", "v") == "OK"
    assert rc.execute_command("GET", "k") == "v"
    assert 99 <= rc.execute_command("TTL", "k") <= 100
    assert rc.execute_command("PSETEX", "p", "100000", "v") == "OK"
    assert 98000 <= rc.execute_command("PTTL", "p") <= 100000


def test_setex_errors(rc):
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'setex' command$"):
        rc.execute_command("SETEX", "k", "0", "v")
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'setex' command$"):
        rc.execute_command("SETEX", "k", "-10", "v")
    with pytest.raises(redis.ResponseError,
                       match=r"^invalid expire time in 'psetex' command$"):
        rc.execute_command("PSETEX", "k", "-5", "v")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("SETEX", "k", "abc", "v")
    with pytest.raises(redis.ResponseError,
                       match=r"^wrong number of arguments for 'setex' command$"):
        rc.execute_command("SETEX", "k", "100")
    assert rc.execute_command("EXISTS", "k") == 0


def test_getset(rc):
    assert rc.execute_command("GETSET", "k", "a") is None
    assert rc.execute_command("GETSET", "k", "b") == "a"
    assert rc.execute_command("GET", "k") == "b"


def test_getset_clears_ttl(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("GETSET", "k", "z") == "v"
    assert rc.execute_command("TTL", "k") == -1


# ------------------------------------------------------------ GETDEL GETEX

def test_getdel(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETDEL", "k") == "v"
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("GETDEL", "k") is None


def test_getex_without_options_keeps_ttl(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("GETEX", "k") == "v"
    assert 99 <= rc.execute_command("TTL", "k") <= 100
    assert rc.execute_command("GETEX", "nokey") is None


def test_getex_ex_px_persist(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETEX", "k", "EX", "50") == "v"
    assert 49 <= rc.execute_command("TTL", "k") <= 50
    assert rc.execute_command("GETEX", "k", "PX", "70000") == "v"
    assert 68000 <= rc.execute_command("PTTL", "k") <= 70000
    assert rc.execute_command("GETEX", "k", "PERSIST") == "v"
    assert rc.execute_command("TTL", "k") == -1


def test_getex_exat_pxat(rc):
    at = int(time.time()) + 1000
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETEX", "k", "EXAT", at) == "v"
    assert rc.execute_command("EXPIRETIME", "k") == at
    assert rc.execute_command("GETEX", "k", "PXAT", at * 1000 + 7) == "v"
    assert rc.execute_command("PEXPIRETIME", "k") == at * 1000 + 7


def test_getex_past_time_returns_value_then_deletes(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETEX", "k", "EXAT", "1") == "v"
    assert rc.execute_command("EXISTS", "k") == 0
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETEX", "k", "PXAT", "1") == "v"
    assert rc.execute_command("EXISTS", "k") == 0


def test_getex_errors(rc):
    rc.execute_command("SET", "k", "v")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("GETEX", "k", "PERSIST", "EX", "10")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("GETEX", "k", "EX", "10", "PX", "10")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("GETEX", "k", "FOO")
    with pytest.raises(redis.ResponseError,
                       match=r"^invalid expire time in 'getex' command$"):
        rc.execute_command("GETEX", "k", "EX", "0")
    with pytest.raises(redis.ResponseError,
                       match=r"^invalid expire time in 'getex' command$"):
        rc.execute_command("GETEX", "k", "EX", "-5")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("GETEX", "k", "EX", "ten")
    assert rc.execute_command("GET", "k") == "v"
    assert rc.execute_command("TTL", "k") == -1


def test_getex_missing_key_checks_time_after_lookup(rc):
    # Redis looks the key up before validating the time: a missing key gives nil.
    assert rc.execute_command("GETEX", "nokey", "EX", "0") is None


# ---------------------------------------------------- MGET MSET MSETNX

def test_mset_mget(rc):
    assert rc.execute_command("MSET", "a", "1", "b", "2", "c", "") == "OK"
    assert rc.execute_command("MGET", "a", "nokey", "b", "c", "a") == ["1", None, "2", "", "1"]


def test_mset_last_value_wins_and_clears_ttl(rc):
    rc.execute_command("SET", "a", "x", "EX", "100")
    rc.execute_command("MSET", "a", "1", "a", "2")
    assert rc.execute_command("GET", "a") == "2"
    assert rc.execute_command("TTL", "a") == -1


def test_mset_arity(rc):
    for args in (["a"], ["a", "1", "b"]):
        with pytest.raises(redis.ResponseError,
                           match=r"^wrong number of arguments for 'mset' command$"):
            rc.execute_command("MSET", *args)
    assert rc.execute_command("EXISTS", "a") == 0


def test_msetnx(rc):
    assert rc.execute_command("MSETNX", "a", "1", "b", "2") == 1
    assert rc.execute_command("MSETNX", "b", "x", "c", "3") == 0
    assert rc.execute_command("MGET", "a", "b", "c") == ["1", "2", None]
    # Duplicate new keys in one call: all set, last value wins.
    assert rc.execute_command("MSETNX", "d", "1", "e", "2", "d", "3") == 1
    assert rc.execute_command("MGET", "d", "e") == ["3", "2"]


def test_mget_on_wrong_type_gives_nil(server, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    rc.execute_command("SET", "s", "v")
    assert rc.execute_command("MGET", "s", "L") == ["v", None]


def test_mset_overwrites_other_types(server, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    assert rc.execute_command("MSETNX", "L", "x") == 0
    rc.execute_command("MSET", "L", "x")
    assert rc.execute_command("TYPE", "L") == "string"


# ------------------------------------------------------- APPEND STRLEN

def test_append_and_strlen(rc):
    assert rc.execute_command("STRLEN", "k") == 0
    assert rc.execute_command("APPEND", "k", "Hello") == 5
    assert rc.execute_command("APPEND", "k", " World") == 11
    assert rc.execute_command("GET", "k") == "Hello World"
    assert rc.execute_command("STRLEN", "k") == 11
    assert rc.execute_command("APPEND", "k", "") == 11


def test_append_to_integer_value(rc):
    rc.execute_command("SET", "k", "10")
    assert rc.execute_command("APPEND", "k", "5") == 3
    assert rc.execute_command("INCR", "k") == 106
    assert rc.execute_command("STRLEN", "k") == 3


def test_append_keeps_ttl(rc):
    rc.execute_command("SET", "k", "a", "EX", "100")
    rc.execute_command("APPEND", "k", "b")
    assert 99 <= rc.execute_command("TTL", "k") <= 100


def test_strlen_of_integer_value(rc):
    rc.execute_command("SET", "k", "-12345")
    assert rc.execute_command("STRLEN", "k") == 6


# --------------------------------------------------------------- GETRANGE

@pytest.mark.parametrize("start,end,expected", [
    (0, 4, "Hello"),
    (-5, -1, "World"),
    (0, -1, "Hello World"),
    (5, 2, ""),
    (-100, 3, "Hell"),
    (0, 100, "Hello World"),
    (20, 30, ""),
    (-1, -5, ""),
    (11, 11, ""),
    (10, 10, "d"),
    (-3, -100, ""),
    (6, -1, "World"),
    (-1, -1, "d"),
])
def test_getrange(rc, start, end, expected):
    rc.execute_command("SET", "s", "Hello World")
    assert rc.execute_command("GETRANGE", "s", start, end) == expected


def test_getrange_missing_and_empty(rc):
    assert rc.execute_command("GETRANGE", "nokey", 0, -1) == ""
    rc.execute_command("SET", "e", "")
    assert rc.execute_command("GETRANGE", "e", 0, -1) == ""
    assert rc.execute_command("GETRANGE", "e", -1, 0) == ""


def test_getrange_integer_value(rc):
    rc.execute_command("SET", "k", "1234567")
    assert rc.execute_command("GETRANGE", "k", 1, 3) == "234"


def test_getrange_errors(rc):
    rc.execute_command("SET", "s", "abc")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("GETRANGE", "s", "a", 1)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("GETRANGE", "s", 0, "1.5")


# --------------------------------------------------------------- SETRANGE

def test_setrange_overwrite(rc):
    rc.execute_command("SET", "s", "Hello World")
    assert rc.execute_command("SETRANGE", "s", 6, "Redis") == 11
    assert rc.execute_command("GET", "s") == "Hello Redis"
    assert rc.execute_command("SETRANGE", "s", 9, "xyz") == 12
    assert rc.execute_command("GET", "s") == "Hello Redxyz"


def test_setrange_pads_with_zero_bytes(rb):
    assert rb.setrange("p", 3, b"ab") == 5
    assert rb.get("p") == b"\x00\x00\x00ab"
    rb.set("q", b"xy")
    assert rb.setrange("q", 5, b"!") == 6
    assert rb.get("q") == b"xy\x00\x00\x00!"


def test_setrange_empty_value(rc):
    # An empty value never creates the key and never pads.
    assert rc.execute_command("SETRANGE", "nokey", 5, "") == 0
    assert rc.execute_command("EXISTS", "nokey") == 0
    rc.execute_command("SET", "s", "abc")
    assert rc.execute_command("SETRANGE", "s", 100, "") == 3
    assert rc.execute_command("GET", "s") == "abc"


def test_setrange_on_integer_value(rc):
    rc.execute_command("SET", "k", "1234")
    assert rc.execute_command("SETRANGE", "k", 1, "9") == 4
    assert rc.execute_command("INCR", "k") == 1935


def test_setrange_keeps_ttl(rc):
    rc.execute_command("SET", "k", "abc", "EX", "100")
    rc.execute_command("SETRANGE", "k", 1, "X")
    assert 99 <= rc.execute_command("TTL", "k") <= 100


def test_setrange_errors(rc):
    with pytest.raises(redis.ResponseError, match=r"^offset is out of range$"):
        rc.execute_command("SETRANGE", "k", -1, "x")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("SETRANGE", "k", "abc", "x")
    # offset + length beyond 512 MB (proto-max-bulk-len); no allocation happens.
    with pytest.raises(redis.ResponseError,
                       match=r"^string exceeds maximum allowed size \(proto-max-bulk-len\)$"):
        rc.execute_command("SETRANGE", "k", 536870912, "x")
    with pytest.raises(redis.ResponseError,
                       match=r"^string exceeds maximum allowed size \(proto-max-bulk-len\)$"):
        rc.execute_command("SETRANGE", "k", 536870910, "xyz")
    assert rc.execute_command("EXISTS", "k") == 0


# ------------------------------------------------- binary safety, big values

def test_binary_safe_values(rb):
    val = b"a\x00b\r\nc\n\r\x00\xff\xfe$3\r\n*1\r\n"
    assert rb.set("bin", val) is True
    assert rb.get("bin") == val
    assert rb.strlen("bin") == len(val)
    assert rb.append("bin", b"\x00\r\n") == len(val) + 3
    assert rb.get("bin") == val + b"\x00\r\n"
    assert rb.getrange("bin", 1, 4) == b"\x00b\r\n"


def test_binary_safe_keys(rb):
    key = b"k\x00\r\n\xff"
    rb.set(key, b"v")
    assert rb.get(key) == b"v"
    assert rb.get(b"k") is None
    assert rb.exists(key) == 1


def test_every_byte_value(rb):
    val = bytes(range(256))
    rb.set("all", val)
    assert rb.get("all") == val
    assert rb.mget("all", "none") == [val, None]


def test_large_value_1mb(rb):
    val = bytes(range(256)) * 4096
    assert len(val) == 1 << 20
    rb.set("big", val)
    assert rb.strlen("big") == 1 << 20
    assert rb.get("big") == val
    assert rb.getrange("big", -3, -1) == bytes([253, 254, 255])
    assert rb.append("big", b"tail") == (1 << 20) + 4
    assert rb.getrange("big", -4, -1) == b"tail"


def test_large_value_via_setrange(rb):
    assert rb.setrange("big", (1 << 20) - 1, b"z") == 1 << 20
    val = rb.get("big")
    assert len(val) == 1 << 20
    assert val[:-1] == b"\x00" * ((1 << 20) - 1) and val[-1:] == b"z"


# ------------------------------------------------------------- WRONGTYPE

@pytest.mark.parametrize("args", [
    ["GET", "L"], ["GETSET", "L", "x"], ["GETDEL", "L"], ["GETEX", "L"],
    ["GETEX", "L", "PERSIST"], ["APPEND", "L", "x"], ["STRLEN", "L"],
    ["INCR", "L"], ["DECR", "L"], ["INCRBY", "L", "1"], ["DECRBY", "L", "1"],
    ["INCRBYFLOAT", "L", "1"], ["GETRANGE", "L", "0", "1"], ["SETRANGE", "L", "0", "x"],
    ["SETRANGE", "L", "0", ""],
])
def test_string_commands_on_wrong_type(server, rc, args):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    with pytest.raises(redis.ResponseError, match=WRONGTYPE):
        rc.execute_command(*args)
    assert rc.execute_command("TYPE", "L") == "list"


def test_setnx_on_wrong_type_is_not_an_error(server, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    assert rc.execute_command("SETNX", "L", "x") == 0
    assert rc.execute_command("TYPE", "L") == "list"


# ------------------------------------------------------- exact error lines

@pytest.mark.parametrize("cmd,line", [
    (b"SET k v NX XX", b"-ERR syntax error"),
    (b"SET k v EX 0", b"-ERR invalid expire time in 'set' command"),
    (b"SET k v EX x", b"-ERR value is not an integer or out of range"),
    (b"SETEX k 0 v", b"-ERR invalid expire time in 'setex' command"),
    (b"GETEX k EX 0", b"-ERR invalid expire time in 'getex' command"),
    (b"SETRANGE k -1 v", b"-ERR offset is out of range"),
    (b"SETRANGE k 536870912 v",
     b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)"),
    (b"INCRBY k x", b"-ERR value is not an integer or out of range"),
    (b"INCRBYFLOAT k x", b"-ERR value is not a valid float"),
    (b"INCRBYFLOAT k inf", b"-ERR increment would produce NaN or Infinity"),
    (b"MSET a", b"-ERR wrong number of arguments for 'mset' command"),
    (b"GET", b"-ERR wrong number of arguments for 'get' command"),
])
def test_error_reply_lines(raw, cmd, line):
    c = raw()
    c.send(resp("SET", "k", "1") + resp(*cmd.split(b" ")))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == line + b"\r\n"


def test_wrongtype_reply_line(server, raw, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    c = raw()
    c.send(resp("GET", "L"))
    assert c.read_reply() == (b"-WRONGTYPE Operation against a key holding the wrong kind"
                              b" of value\r\n")


def test_reply_encodings(raw):
    c = raw()
    c.send(resp("GET", "nokey") + resp("SET", "k", "") + resp("GET", "k") +
           resp("SETNX", "k", "x") + resp("MGET", "k", "nokey"))
    assert c.read_reply() == b"$-1\r\n"
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"$0\r\n\r\n"
    assert c.read_reply() == b":0\r\n"
    assert c.read_reply() == b"*2\r\n$0\r\n\r\n$-1\r\n"
