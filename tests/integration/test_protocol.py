"""RESP2/RESP3 wire protocol, byte for byte: reply types, inline commands, pipelining,
HELLO, generic command errors and malformed requests.

Every expected byte string here was checked against redis-server 7.0.
"""
import os
import socket
import time

import pytest

from conftest import RawConnection, require_commands
from helpers import cmd, expect_closed, roundtrip, send_until_closed


# ---------------------------------------------------------------- RESP2 reply types

def test_simple_string_replies(raw):
    c = raw()
    assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"
    assert roundtrip(c, cmd("SET", "a", "b")) == b"+OK\r\n"
    assert roundtrip(c, cmd("TYPE", "a")) == b"+string\r\n"
    assert roundtrip(c, cmd("TYPE", "missing")) == b"+none\r\n"


def test_error_replies(raw):
    c = raw()
    assert roundtrip(c, cmd("SET", "n", "abc")) == b"+OK\r\n"
    assert roundtrip(c, cmd("INCR", "n")) == b"-ERR value is not an integer or out of range\r\n"
    # an error does not end the connection
    assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"


def test_wrongtype_error_reply(server, raw):
    require_commands(server, "RPUSH")
    c = raw()
    c.send(cmd("RPUSH", "l", "x"))
    assert c.read_reply() == b":1\r\n"
    assert roundtrip(c, cmd("GET", "l")) == (
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
    # an error does not end the connection
    assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"


def test_integer_replies(raw):
    c = raw()
    assert roundtrip(c, cmd("INCR", "i")) == b":1\r\n"
    assert roundtrip(c, cmd("DECRBY", "i", "5")) == b":-4\r\n"
    assert roundtrip(c, cmd("EXISTS", "i", "nope")) == b":1\r\n"
    assert roundtrip(c, cmd("INCRBY", "big", "9223372036854775807")) == b":9223372036854775807\r\n"


def test_bulk_string_replies(raw):
    c = raw()
    roundtrip(c, cmd("SET", "a", "hello"))
    assert roundtrip(c, cmd("GET", "a")) == b"$5\r\nhello\r\n"
    roundtrip(c, cmd("SET", "empty", ""))
    assert roundtrip(c, cmd("GET", "empty")) == b"$0\r\n\r\n"
    # values are binary safe: CR LF and NUL inside a bulk
    val = b"a\r\nb\x00c\xff"
    assert roundtrip(c, cmd("SET", b"bin\r\nkey", val)) == b"+OK\r\n"
    assert roundtrip(c, cmd("GET", b"bin\r\nkey")) == b"$7\r\n" + val + b"\r\n"
    assert roundtrip(c, cmd("ECHO", "")) == b"$0\r\n\r\n"


def test_null_bulk_reply(raw):
    c = raw()
    assert roundtrip(c, cmd("GET", "missing")) == b"$-1\r\n"


def test_array_replies(raw):
    c = raw()
    roundtrip(c, cmd("SET", "a", "1"))
    assert roundtrip(c, cmd("MGET", "a", "missing")) == b"*2\r\n$1\r\n1\r\n$-1\r\n"
    assert roundtrip(c, cmd("KEYS", "nomatch*")) == b"*0\r\n"
    roundtrip(c, cmd("MSET", "e1", "x", "e2", "yy"))
    assert roundtrip(c, cmd("MGET", "e1", "e2")) == b"*2\r\n$1\r\nx\r\n$2\r\nyy\r\n"


def test_null_array_reply(server, raw):
    require_commands(server, "BLPOP")
    c = raw()
    # a blocking pop that times out answers with the RESP2 null array
    assert roundtrip(c, cmd("BLPOP", "nolist", "0.01")) == b"*-1\r\n"


def test_nested_array_reply(server, raw):
    require_commands(server, "MULTI", "EXEC")
    c = raw()
    roundtrip(c, cmd("SET", "k", "v"))
    roundtrip(c, cmd("MULTI"))
    assert roundtrip(c, cmd("GET", "k")) == b"+QUEUED\r\n"
    assert roundtrip(c, cmd("MGET", "k", "nope")) == b"+QUEUED\r\n"
    assert roundtrip(c, cmd("EXEC")) == b"*2\r\n$1\r\nv\r\n*2\r\n$1\r\nv\r\n$-1\r\n"


def test_command_names_are_case_insensitive(raw):
    c = raw()
    assert roundtrip(c, cmd("ping")) == b"+PONG\r\n"
    assert roundtrip(c, cmd("PiNg")) == b"+PONG\r\n"
    assert roundtrip(c, cmd("set", "K", "v")) == b"+OK\r\n"
    # keys are not
    assert roundtrip(c, cmd("get", "k")) == b"$-1\r\n"
    assert roundtrip(c, cmd("GET", "K")) == b"$1\r\nv\r\n"


# ---------------------------------------------------------------- inline commands

def test_inline_ping_set_get(raw):
    c = raw()
    assert roundtrip(c, b"PING\r\n") == b"+PONG\r\n"
    assert roundtrip(c, b"SET a b\r\n") == b"+OK\r\n"
    assert roundtrip(c, b"GET a\r\n") == b"$1\r\nb\r\n"
    assert roundtrip(c, b"ping hello\r\n") == b"$5\r\nhello\r\n"


def test_inline_bare_newline_and_extra_whitespace(raw):
    c = raw()
    assert roundtrip(c, b"PING\n") == b"+PONG\r\n"
    assert roundtrip(c, b"SET  a \t b   \r\n") == b"+OK\r\n"
    assert roundtrip(c, b"GET a\r\n") == b"$1\r\nb\r\n"


def test_inline_empty_lines_are_ignored(raw):
    c = raw()
    assert roundtrip(c, b"\r\n\r\n   \r\nPING\r\n") == b"+PONG\r\n"


def test_inline_double_quoted_args(raw):
    c = raw()
    assert roundtrip(c, b'SET "a b" "c d"\r\n') == b"+OK\r\n"
    assert roundtrip(c, b'GET "a b"\r\n') == b"$3\r\nc d\r\n"
    # escapes inside double quotes: \xHH, \n, \t, \\, \"
    assert roundtrip(c, b'SET esc "x\\x41\\n\\t\\\\\\"y"\r\n') == b"+OK\r\n"
    assert roundtrip(c, cmd("GET", "esc")) == b'$7\r\nxA\n\t\\"y\r\n'
    assert roundtrip(c, b'SET empty ""\r\n') == b"+OK\r\n"
    assert roundtrip(c, cmd("STRLEN", "empty")) == b":0\r\n"


def test_inline_single_quoted_args(raw):
    c = raw()
    assert roundtrip(c, b"SET 'x y' 'it\\'s'\r\n") == b"+OK\r\n"
    assert roundtrip(c, cmd("GET", "x y")) == b"$4\r\nit's\r\n"


def test_inline_and_multibulk_mixed_on_one_connection(raw):
    c = raw()
    c.send(b"SET k 1\r\n" + cmd("INCR", "k") + b"INCR k\r\n" + cmd("GET", "k"))
    assert [c.read_reply() for _ in range(4)] == [b"+OK\r\n", b":2\r\n", b":3\r\n", b"$1\r\n3\r\n"]


def test_inline_unbalanced_quotes(raw):
    c = raw()
    c.send(b'SET "a b\r\n')
    assert c.read_reply() == b"-ERR Protocol error: unbalanced quotes in request\r\n"
    expect_closed(c)


def test_inline_closing_quote_must_be_followed_by_space(raw):
    c = raw()
    c.send(b'SET "a"b c\r\n')
    assert c.read_reply() == b"-ERR Protocol error: unbalanced quotes in request\r\n"
    expect_closed(c)


def test_inline_too_big(raw):
    c = raw()
    data = send_until_closed(c, b"x" * (70 * 1024))
    assert data == b"-ERR Protocol error: too big inline request\r\n"


# ---------------------------------------------------------------- pipelining

def test_pipeline_1000_set_get_in_one_write(raw):
    c = raw()
    n = 1000
    req = b"".join(cmd("SET", "k_%d" % i, "v_%d" % i) + cmd("GET", "k_%d" % i)
                   for i in range(n))
    c.send(req)
    for i in range(n):
        assert c.read_reply() == b"+OK\r\n"
        v = b"v_%d" % i
        assert c.read_reply() == b"$%d\r\n%s\r\n" % (len(v), v)


def test_pipeline_replies_keep_order_across_keys_and_types(raw):
    c = raw()
    n = 500
    req = b""
    expected = []
    for i in range(n):
        req += cmd("INCR", "ctr")
        expected.append(b":%d\r\n" % (i + 1))
        req += cmd("APPEND", "str_%d" % (i % 7), "x")
        expected.append(b":%d\r\n" % (i // 7 + 1))
        req += cmd("GET", "missing_%d" % i)
        expected.append(b"$-1\r\n")
        req += b"ECHO e%d\r\n" % i
        expected.append(b"$%d\r\ne%d\r\n" % (len(b"e%d" % i), i))
    c.send(req)
    got = [c.read_reply() for _ in range(len(expected))]
    assert got == expected


def test_pipeline_with_errors_in_the_middle(raw):
    c = raw()
    c.send(cmd("SET", "a", "1") + cmd("NOSUCHCMD") + cmd("GET") + cmd("GET", "a"))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"-ERR unknown command 'NOSUCHCMD', with args beginning with: \r\n"
    assert c.read_reply() == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert c.read_reply() == b"$1\r\n1\r\n"


def test_request_split_into_single_bytes(raw):
    c = raw()
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    req = cmd("SET", "split", "value") + b"GET split\r\n"
    for i in range(len(req)):
        c.send(req[i:i + 1])
        if i % 4 == 0:
            time.sleep(0.001)
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"$5\r\nvalue\r\n"


def test_empty_and_negative_multibulk_are_ignored(raw):
    c = raw()
    c.send(b"*0\r\n*-1\r\n" + cmd("PING"))
    assert c.read_reply() == b"+PONG\r\n"


# ---------------------------------------------------------------- big values, QUIT

def test_10mb_value_round_trip(rb):
    val = os.urandom(1024) * (10 * 1024)  # 10 MiB, with CR/LF/NUL bytes inside
    assert rb.set("big", val) is True
    assert rb.strlen("big") == len(val)
    assert rb.get("big") == val


def test_10mb_value_raw(raw):
    c = raw()
    val = b"0123456789abcdef" * (10 * 1024 * 1024 // 16)
    c.send(cmd("SET", "bigraw", val))
    assert c.read_reply() == b"+OK\r\n"
    c.send(cmd("GET", "bigraw"))
    assert c.read_reply() == b"$%d\r\n" % len(val) + val + b"\r\n"


def test_quit_replies_ok_and_closes(raw):
    c = raw()
    c.send(b"QUIT\r\n")
    assert expect_closed(c) == b"+OK\r\n"
    c2 = raw()
    c2.send(cmd("QUIT"))
    assert expect_closed(c2) == b"+OK\r\n"


def test_commands_after_quit_in_same_write_are_not_run(raw, r):
    c = raw()
    c.send(cmd("SET", "before", "1") + cmd("QUIT") + cmd("SET", "after", "1"))
    assert expect_closed(c) == b"+OK\r\n+OK\r\n"
    assert r.get("before") == "1"
    assert r.get("after") is None


# ---------------------------------------------------------------- generic command errors

def test_unknown_command_error(raw):
    c = raw()
    assert roundtrip(c, cmd("foo", "a", "b")) == (
        b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n")
    assert roundtrip(c, b"foo a b\r\n") == (
        b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n")
    assert roundtrip(c, cmd("foo")) == b"-ERR unknown command 'foo', with args beginning with: \r\n"
    # the name is echoed as sent
    assert roundtrip(c, cmd("FoO", "x")) == (
        b"-ERR unknown command 'FoO', with args beginning with: 'x' \r\n")


def test_unknown_command_error_truncates_args(raw):
    """Redis appends "'arg' " while the args text is under 128 chars, each arg cut so
    that the text stays within 128 chars."""
    c = raw()
    assert roundtrip(c, cmd("foo", "x" * 200, "b")) == (
        b"-ERR unknown command 'foo', with args beginning with: '" + b"x" * 128 + b"' \r\n")
    assert roundtrip(c, cmd("foo", "y" * 60, "z" * 100, "w")) == (
        b"-ERR unknown command 'foo', with args beginning with: '" + b"y" * 60 + b"' '"
        + b"z" * 65 + b"' \r\n")
    args = ["a%d" % i for i in range(40)]
    text = b""
    for a in args:
        if len(text) >= 128:
            break
        text += b"'" + a.encode()[:128 - len(text)] + b"' "
    assert roundtrip(c, cmd("foo", *args)) == (
        b"-ERR unknown command 'foo', with args beginning with: " + text + b"\r\n")


def test_wrong_arity_error(raw):
    c = raw()
    assert roundtrip(c, cmd("GET")) == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert roundtrip(c, cmd("get", "a", "b")) == (
        b"-ERR wrong number of arguments for 'get' command\r\n")
    # the command name in the message is lower case whatever was sent
    assert roundtrip(c, b"GeT\r\n") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert roundtrip(c, cmd("SET", "a")) == b"-ERR wrong number of arguments for 'set' command\r\n"
    # subcommands are named container|sub
    assert roundtrip(c, cmd("CONFIG", "GET")) == (
        b"-ERR wrong number of arguments for 'config|get' command\r\n")


# ---------------------------------------------------------------- malformed requests

@pytest.mark.parametrize("payload,error", [
    (b"*1\r\n$x\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$-1\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1x\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n*1\r\n", b"-ERR Protocol error: expected '$', got '*'\r\n"),
    (b"*1\r\n:1\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
    (b"*2\r\n$3\r\nGET\r\nfoo\r\n", b"-ERR Protocol error: expected '$', got 'f'\r\n"),
], ids=["bulk-len-not-number", "bulk-len-negative", "multibulk-len-not-number",
        "multibulk-len-trailing-junk", "nested-array", "integer-arg", "arg-without-dollar"])
def test_malformed_multibulk_closes_connection(server, raw, payload, error):
    other = raw()
    assert roundtrip(other, cmd("SET", "alive", "1")) == b"+OK\r\n"
    c = raw()
    assert send_until_closed(c, payload) == error
    # another client on the same server is unaffected
    assert roundtrip(other, cmd("GET", "alive")) == b"$1\r\n1\r\n"
    fresh = raw()
    assert roundtrip(fresh, cmd("PING")) == b"+PONG\r\n"


def test_replies_before_a_protocol_error_are_delivered(raw):
    c = raw()
    data = send_until_closed(c, cmd("SET", "a", "1") + cmd("GET", "a") + b"*1\r\n$x\r\n")
    assert data == b"+OK\r\n$1\r\n1\r\n-ERR Protocol error: invalid bulk length\r\n"


def test_bulk_length_over_proto_max_bulk_len(raw):
    c = raw()
    # default proto-max-bulk-len is 512mb = 536870912
    assert send_until_closed(c, b"*1\r\n$536870913\r\n") == (
        b"-ERR Protocol error: invalid bulk length\r\n")
    c2 = raw()
    assert send_until_closed(c2, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$99999999999999999999\r\n") == (
        b"-ERR Protocol error: invalid bulk length\r\n")


def test_multibulk_length_too_large(raw):
    c = raw()
    # the limit is INT_MAX elements (2147483647)
    assert send_until_closed(c, b"*2147483648\r\n") == (
        b"-ERR Protocol error: invalid multibulk length\r\n")
    c2 = raw()
    assert send_until_closed(c2, b"*3000000000\r\n") == (
        b"-ERR Protocol error: invalid multibulk length\r\n")


# ---------------------------------------------------------------- RESP3 / HELLO

HELLO_KEYS = [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]


def parse_hello(reply, proto):
    """Splits a HELLO reply into {key: raw value bytes}, checking the outer framing."""
    conn = RawConnection.__new__(RawConnection)
    conn.buf = reply
    conn.sock = None
    header = conn.read_line()
    if proto == 3:
        assert header == b"%7"
    else:
        assert header == b"*14"
    out = {}
    keys = []
    for _ in range(7):
        k = conn.read_reply()
        v = conn.read_reply()
        assert k.startswith(b"$")
        key = k.split(b"\r\n")[1]
        keys.append(key)
        out[key] = v
    assert conn.buf == b""
    assert keys == HELLO_KEYS
    return out


def test_hello_3_returns_map(server, raw):
    c = raw()
    cid = roundtrip(c, cmd("CLIENT", "ID"))
    reply = roundtrip(c, cmd("HELLO", "3"))
    fields = parse_hello(reply, 3)
    assert fields[b"proto"] == b":3\r\n"
    assert fields[b"id"] == cid
    assert fields[b"mode"] == b"$10\r\nstandalone\r\n"
    assert fields[b"role"] == b"$6\r\nmaster\r\n"
    assert fields[b"modules"] == b"*0\r\n"
    assert fields[b"server"].startswith(b"$")
    assert fields[b"version"].startswith(b"$")
    if server.is_redis:
        assert fields[b"server"] == b"$5\r\nredis\r\n"


def test_hello_without_version_and_hello_2(raw):
    c = raw()
    fields = parse_hello(roundtrip(c, cmd("HELLO")), 2)
    assert fields[b"proto"] == b":2\r\n"
    fields = parse_hello(roundtrip(c, cmd("HELLO", "2")), 2)
    assert fields[b"proto"] == b":2\r\n"
    # HELLO with no version reports the current protocol
    parse_hello(roundtrip(c, cmd("HELLO", "3")), 3)
    fields = parse_hello(roundtrip(c, cmd("HELLO")), 3)
    assert fields[b"proto"] == b":3\r\n"


def test_resp3_reply_types(raw):
    c = raw()
    roundtrip(c, cmd("HELLO", "3"))
    assert roundtrip(c, cmd("GET", "missing")) == b"_\r\n"
    assert roundtrip(c, cmd("SET", "k", "v")) == b"+OK\r\n"
    assert roundtrip(c, cmd("MGET", "k", "missing")) == b"*2\r\n$1\r\nv\r\n_\r\n"
    assert roundtrip(c, cmd("INCR", "n")) == b":1\r\n"
    # INCRBYFLOAT stays a bulk string in RESP3
    assert roundtrip(c, cmd("INCRBYFLOAT", "f", "1.5")) == b"$3\r\n1.5\r\n"
    # errors are unchanged
    assert roundtrip(c, cmd("GET")) == b"-ERR wrong number of arguments for 'get' command\r\n"


def test_resp3_reply_types_of_other_data_types(server, raw):
    require_commands(server, "ZADD", "ZSCORE", "ZINCRBY", "ZMSCORE", "ZRANGE", "HSET",
                     "HGETALL", "SADD", "SMEMBERS", "BLPOP")
    c = raw()
    roundtrip(c, cmd("HELLO", "3"))
    # scores are doubles
    assert roundtrip(c, cmd("ZADD", "z", "1.5", "a")) == b":1\r\n"
    assert roundtrip(c, cmd("ZSCORE", "z", "a")) == b",1.5\r\n"
    assert roundtrip(c, cmd("ZINCRBY", "z", "1", "a")) == b",2.5\r\n"
    assert roundtrip(c, cmd("ZADD", "z", "3", "b")) == b":1\r\n"
    assert roundtrip(c, cmd("ZSCORE", "z", "b")) == b",3\r\n"
    assert roundtrip(c, cmd("ZSCORE", "z", "nope")) == b"_\r\n"
    assert roundtrip(c, cmd("ZADD", "z", "inf", "pinf", "-inf", "ninf")) == b":2\r\n"
    assert roundtrip(c, cmd("ZSCORE", "z", "pinf")) == b",inf\r\n"
    assert roundtrip(c, cmd("ZSCORE", "z", "ninf")) == b",-inf\r\n"
    assert roundtrip(c, cmd("ZMSCORE", "z", "a", "nope")) == b"*2\r\n,2.5\r\n_\r\n"
    # WITHSCORES gives [member, score] pairs
    assert roundtrip(c, cmd("ZRANGE", "z", "1", "2", "WITHSCORES")) == (
        b"*2\r\n*2\r\n$1\r\na\r\n,2.5\r\n*2\r\n$1\r\nb\r\n,3\r\n")
    # maps and sets
    assert roundtrip(c, cmd("HSET", "h", "f", "v")) == b":1\r\n"
    assert roundtrip(c, cmd("HGETALL", "h")) == b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert roundtrip(c, cmd("HGETALL", "nohash")) == b"%0\r\n"
    assert roundtrip(c, cmd("SADD", "s", "m")) == b":1\r\n"
    assert roundtrip(c, cmd("SMEMBERS", "s")) == b"~1\r\n$1\r\nm\r\n"
    assert roundtrip(c, cmd("SMEMBERS", "noset")) == b"~0\r\n"
    # null array becomes null too
    assert roundtrip(c, cmd("BLPOP", "nolist", "0.01")) == b"_\r\n"


def test_resp3_config_get_is_a_map(server, raw):
    c = raw()
    roundtrip(c, cmd("HELLO", "3"))
    port = str(server.port).encode()
    assert roundtrip(c, cmd("CONFIG", "GET", "port")) == (
        b"%1\r\n$4\r\nport\r\n$" + str(len(port)).encode() + b"\r\n" + port + b"\r\n")


def test_resp3_back_to_resp2(server, raw):
    c = raw()
    roundtrip(c, cmd("HELLO", "3"))
    assert roundtrip(c, cmd("GET", "missing")) == b"_\r\n"
    parse_hello(roundtrip(c, cmd("HELLO", "2")), 2)
    assert roundtrip(c, cmd("GET", "missing")) == b"$-1\r\n"
    # a map reply (CONFIG GET is one in RESP3) is a flat array again
    port = str(server.port).encode()
    assert roundtrip(c, cmd("CONFIG", "GET", "port")) == (
        b"*2\r\n$4\r\nport\r\n$" + str(len(port)).encode() + b"\r\n" + port + b"\r\n")


def test_resp3_is_per_connection(raw):
    a, b = raw(), raw()
    roundtrip(a, cmd("HELLO", "3"))
    assert roundtrip(a, cmd("GET", "missing")) == b"_\r\n"
    assert roundtrip(b, cmd("GET", "missing")) == b"$-1\r\n"


@pytest.mark.parametrize("version", ["4", "1", "0", "-1"])
def test_hello_unsupported_version(raw, version):
    c = raw()
    assert roundtrip(c, cmd("HELLO", version)) == b"-NOPROTO unsupported protocol version\r\n"
    # the connection stays open and in RESP2
    assert roundtrip(c, cmd("GET", "missing")) == b"$-1\r\n"


def test_hello_bad_arguments(raw):
    c = raw()
    assert roundtrip(c, cmd("HELLO", "foo")) == (
        b"-ERR Protocol version is not an integer or out of range\r\n")
    assert roundtrip(c, cmd("HELLO", "3", "FOO")) == b"-ERR Syntax error in HELLO option 'FOO'\r\n"
    assert roundtrip(c, cmd("HELLO", "3", "SETNAME")) == (
        b"-ERR Syntax error in HELLO option 'SETNAME'\r\n")
    assert roundtrip(c, cmd("HELLO", "3", "AUTH", "default")) == (
        b"-ERR Syntax error in HELLO option 'AUTH'\r\n")
    # a failed HELLO does not switch the protocol
    assert roundtrip(c, cmd("GET", "missing")) == b"$-1\r\n"


def test_hello_setname(raw):
    c = raw()
    parse_hello(roundtrip(c, cmd("HELLO", "3", "SETNAME", "foo")), 3)
    assert roundtrip(c, cmd("CLIENT", "GETNAME")) == b"$3\r\nfoo\r\n"
    c2 = raw()
    assert roundtrip(c2, cmd("HELLO", "3", "SETNAME", "a b")) == (
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n")
    assert roundtrip(c2, cmd("CLIENT", "GETNAME")) == b"$-1\r\n"


def test_hello_auth_without_password_configured(raw):
    # the default user has nopass, so any password is accepted
    c = raw()
    parse_hello(roundtrip(c, cmd("HELLO", "3", "AUTH", "default", "whatever")), 3)


def password_server(server_factory):
    """A server whose default user needs the password "sekret". (Set at runtime: the
    harness's readiness probe cannot get past NOAUTH.)"""
    s = server_factory()
    c = s.client()
    assert c.config_set("requirepass", "sekret") is True
    c.close()
    return s


def test_hello_auth_with_requirepass(server_factory):
    s = password_server(server_factory)
    c = RawConnection(s.port)
    try:
        assert roundtrip(c, cmd("PING")) == b"-NOAUTH Authentication required.\r\n"
        assert roundtrip(c, cmd("HELLO", "3")) == (
            b"-NOAUTH HELLO must be called with the client already authenticated, otherwise "
            b"the HELLO AUTH <user> <pass> option can be used to authenticate the client and "
            b"select the RESP protocol version at the same time\r\n")
        assert roundtrip(c, cmd("HELLO", "3", "AUTH", "default", "wrong")) == (
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
        assert roundtrip(c, cmd("GET", "x")) == b"-NOAUTH Authentication required.\r\n"
        fields = parse_hello(roundtrip(c, cmd("HELLO", "3", "AUTH", "default", "sekret")), 3)
        assert fields[b"proto"] == b":3\r\n"
        assert roundtrip(c, cmd("GET", "x")) == b"_\r\n"
    finally:
        c.close()
    c = RawConnection(s.port)
    try:
        reply = roundtrip(c, cmd("HELLO", "2", "AUTH", "default", "sekret", "SETNAME", "bob"))
        assert parse_hello(reply, 2)[b"proto"] == b":2\r\n"
        assert roundtrip(c, cmd("CLIENT", "GETNAME")) == b"$3\r\nbob\r\n"
    finally:
        c.close()


def test_auth_command_with_requirepass(server_factory):
    s = password_server(server_factory)
    c = RawConnection(s.port)
    try:
        assert roundtrip(c, cmd("AUTH", "wrong")) == (
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
        assert roundtrip(c, cmd("AUTH")) == b"-ERR wrong number of arguments for 'auth' command\r\n"
        # an unknown command is reported as unknown even before authenticating
        assert roundtrip(c, cmd("foo")) == b"-ERR unknown command 'foo', with args beginning with: \r\n"
        assert roundtrip(c, cmd("AUTH", "sekret")) == b"+OK\r\n"
        assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"
        assert roundtrip(c, cmd("AUTH", "default", "sekret")) == b"+OK\r\n"
    finally:
        c.close()
