"""Streams: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID, XREAD, XGROUP, XREADGROUP,
XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO.

Covered: entry ids (auto "*", explicit "ms-seq", "ms" alone, partial "ms-*", the last
possible id), the id errors, NOMKSTREAM, MAXLEN/MINID trimming with "=", "~" and LIMIT
(approximate trimming removes whole nodes only, so for "~" only the lower bound is
asserted), ranges with "-", "+", exclusive "(" bounds and incomplete ids, COUNT (COUNT 0
is a null array), XDEL, XTRIM, XSETID and its checks, TYPE/OBJECT ENCODING, a stream key
under DEL/EXISTS/RENAME/COPY/EXPIRE; XREAD with COUNT, several streams, "$", ids beyond
the top, BLOCK timing out, BLOCK woken from another connection (also on a server with
three workers and several streams), BLOCK 0, a wake-up for an id below the requested one
that keeps the reader blocked, first-come first-served among readers blocked on a group;
consumer groups: XGROUP CREATE/SETID/DESTROY/CREATECONSUMER/DELCONSUMER, XREADGROUP with
">" and with history ids (deleted entries come back as nil), NOACK, XACK, XPENDING's two
forms, XCLAIM's options, XAUTOCLAIM's cursor and its list of deleted ids, XINFO STREAM
[FULL], GROUPS and CONSUMERS, and the entries-read / lag numbers Redis 7.0 reports after
reads, deletions and additions; a consumer whose connection is killed having its entries
claimed by another; a stream with groups surviving a snapshot and restart, and
DUMP/RESTORE; the RESP3 shapes (XREAD and XREADGROUP reply with a map, XINFO STREAM and
each XINFO GROUPS entry are maps); MULTI/EXEC and EVAL.

Every expected value here was checked against redis-server 7.0 (which has no "inactive"
field in XINFO CONSUMERS and no "active-time" in XINFO STREAM FULL; those came in 7.2).
Replies are read from raw connections, so each error is compared with its full text and
each reply with its exact shape (bulk strings and integers told apart); every read is
bounded by the socket's timeout. Times (idle, seen-time, delivery times) and the radix
tree counters are only checked for their type and range.
"""
import hashlib
import itertools
import select
import shutil
import tempfile
import time

import pytest

from conftest import RawConnection
from helpers import Err, is_closed, parse, resp

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
XADD_SMALLER = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
XADD_ZERO = "ERR The ID specified in XADD must be greater than 0-0"
XADD_ARITY = "ERR wrong number of arguments for 'xadd' command"
LIMIT_WITHOUT_TILDE = "ERR syntax error, LIMIT cannot be used without the special ~ option"
NO_KEY_FOR_XGROUP = ("ERR The XGROUP subcommand requires the key to exist. Note that for "
                     "CREATE you may want to use the MKSTREAM option to create an empty stream "
                     "automatically.")
BUSYGROUP = "BUSYGROUP Consumer Group name already exists"
NOT_INT = "ERR value is not an integer or out of range"
SYNTAX = "ERR syntax error"
NIL_ARRAY = b"*-1\r\n"


# ---------------------------------------------------------------- parsing, connections


class Conn(RawConnection):
    """A raw connection: cmd() returns one command's reply as raw bytes, call() parsed;
    send_cmd() only sends (for blocking commands), value() reads one reply parsed."""

    def send_cmd(self, *args):
        self.send(resp(*args))

    def cmd(self, *args):
        self.send_cmd(*args)
        return self.read_reply()

    def value(self):
        return parse(self.read_reply())

    def call(self, *args):
        self.send_cmd(*args)
        return self.value()

    def err(self, *args):
        """The text of the error reply the command gets (fails on any other reply)."""
        v = self.call(*args)
        assert isinstance(v, Err), "expected an error from %r, got %r" % (args, v)
        return str(v)

    def hello3(self):
        reply = self.call("HELLO", "3")
        assert isinstance(reply, dict) and reply["proto"] == 3, reply
        return self

    def idle(self, wait=0.2):
        """True when no reply arrives within `wait` seconds (a reader still blocked)."""
        if self.buf:
            return False
        ready, _, _ = select.select([self.sock], [], [], wait)
        return not ready


_names = itertools.count()


def uniq(prefix="s"):
    """A key name no other test uses (the module's server is shared)."""
    return "%s:%d" % (prefix, next(_names))


@pytest.fixture
def conns(server):
    """conns(resp3=False): a new raw connection to the shared server."""
    made = []

    def make(resp3=False):
        c = Conn(server.port, timeout=10)
        made.append(c)
        return c.hello3() if resp3 else c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def c(conns):
    return conns()


def E(entry_id, *fields):
    """One entry as XRANGE replies it: [id, [field, value, ...]]."""
    return [entry_id, list(fields)]


def fill(c, key, n, start=1):
    """Adds entries start-0 .. start+n-1-0, each with field f and the number as value."""
    for i in range(start, start + n):
        assert c.call("XADD", key, "%d-0" % i, "f", str(i)) == "%d-0" % i


def ids(entries):
    return [e[0] for e in entries]


def as_dict(flat):
    """A RESP2 field/value array as a dict (the order is checked separately)."""
    return dict(zip(flat[::2], flat[1::2]))


def blocked_clients(c):
    info = c.call("INFO", "clients")
    for line in info.split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    raise AssertionError(info)


def wait_blocked(c, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while blocked_clients(c) != n:
        if time.monotonic() > deadline:
            pytest.fail("expected %d blocked clients, have %d" % (n, blocked_clients(c)))
        time.sleep(0.01)


def groups(c, key):
    return [as_dict(g) for g in c.call("XINFO", "GROUPS", key)]


def group(c, key, name):
    return next(g for g in groups(c, key) if g["name"] == name)


def lag_view(c, key):
    """{group: (last-delivered-id, entries-read, lag)} from XINFO GROUPS."""
    return {g["name"]: (g["last-delivered-id"], g["entries-read"], g["lag"])
            for g in groups(c, key)}


# ================================================================ 1. XADD

def test_xadd_auto_id_follows_the_server_clock(c):
    k = uniq()
    sec, usec = c.call("TIME")
    now_ms = int(sec) * 1000 + int(usec) // 1000
    first = c.call("XADD", k, "*", "f", "v")
    second = c.call("XADD", k, "*", "f", "v")
    ms1, seq1 = map(int, first.split("-"))
    ms2, seq2 = map(int, second.split("-"))
    assert abs(ms1 - now_ms) < 10000
    assert (ms2, seq2) > (ms1, seq1)
    assert c.call("XLEN", k) == 2
    # Bytes: a bulk string.
    assert c.cmd("XADD", k, "*", "f", "v").startswith(b"$")


def test_xadd_explicit_and_partial_ids(c):
    k = uniq()
    assert c.call("XADD", k, "5", "a", "1") == "5-0"  # ms alone: sequence 0
    assert c.call("XADD", k, "5-*", "b", "2") == "5-1"
    assert c.call("XADD", k, "5-7", "c", "3") == "5-7"
    assert c.call("XADD", k, "5-*", "d", "4") == "5-8"
    assert c.call("XADD", k, "6-*", "e", "5") == "6-0"
    assert c.call("XADD", k, "18446744073709551615-0", "f", "6") == "18446744073709551615-0"
    assert c.call("XRANGE", k, "-", "+") == [
        E("5-0", "a", "1"), E("5-1", "b", "2"), E("5-7", "c", "3"), E("5-8", "d", "4"),
        E("6-0", "e", "5"), E("18446744073709551615-0", "f", "6")]
    # On a new stream "0-*" starts at 0-1, since 0-0 is never valid.
    k2 = uniq()
    assert c.call("XADD", k2, "0-*", "f", "v") == "0-1"
    # Several field/value pairs, duplicates kept, binary-safe values.
    k3 = uniq()
    assert c.call("XADD", k3, "1-1", "f", "1", "f", "2", "", "x\r\ny") == "1-1"
    assert c.call("XRANGE", k3, "-", "+") == [E("1-1", "f", "1", "f", "2", "", "x\r\ny")]


def test_xadd_id_errors(c):
    k = uniq()
    assert c.call("XADD", k, "1-1", "f", "v") == "1-1"
    assert c.err("XADD", k, "1-1", "f", "v") == XADD_SMALLER
    assert c.err("XADD", k, "1-0", "f", "v") == XADD_SMALLER
    assert c.err("XADD", k, "1", "f", "v") == XADD_SMALLER
    assert c.err("XADD", k, "0-5", "f", "v") == XADD_SMALLER
    assert c.err("XADD", k, "0-0", "f", "v") == XADD_ZERO
    assert c.err("XADD", uniq(), "0-0", "f", "v") == XADD_ZERO
    for bad in ("abc", "1-x", "-1", "1-", "5.5", "1-1-1", "*-1", "5-*-1",
                "18446744073709551616-0", "1-18446744073709551616"):
        assert c.err("XADD", k, bad, "f", "v") == INVALID_ID, bad
    assert c.call("XLEN", k) == 1
    # Nothing was created by a failed XADD on a missing key.
    k2 = uniq()
    assert c.err("XADD", k2, "abc", "f", "v") == INVALID_ID
    assert c.call("EXISTS", k2) == 0


def test_xadd_at_the_last_possible_id(c):
    k = uniq()
    top = "18446744073709551615-18446744073709551615"
    assert c.call("XADD", k, "18446744073709551615-18446744073709551614", "f", "v") == (
        "18446744073709551615-18446744073709551614")
    assert c.call("XADD", k, "18446744073709551615-*", "f", "v") == top
    exhausted = "ERR The stream has exhausted the last possible ID, unable to add more items"
    assert c.err("XADD", k, "*", "f", "v") == exhausted
    assert c.err("XADD", k, "18446744073709551615-*", "f", "v") == exhausted
    # Once the top id is reached, that error comes first whatever the id.
    assert c.err("XADD", k, top, "f", "v") == exhausted
    assert c.err("XADD", k, "1-1", "f", "v") == exhausted
    assert c.call("XLEN", k) == 2


def test_xadd_nomkstream(c):
    k = uniq()
    assert c.cmd("XADD", k, "NOMKSTREAM", "*", "f", "v") == b"$-1\r\n"
    assert c.call("EXISTS", k) == 0
    assert c.call("XADD", k, "1-1", "f", "v") == "1-1"
    assert c.call("XADD", k, "NOMKSTREAM", "2-1", "f", "v") == "2-1"
    assert c.call("XADD", k, "NOMKSTREAM", "MAXLEN", "1", "3-1", "f", "v") == "3-1"
    assert c.call("XRANGE", k, "-", "+") == [E("3-1", "f", "v")]


def test_xadd_argument_errors(c):
    k = uniq()
    for args in ([k], [k, "*"], [k, "*", "f"], [k, "*", "f", "v", "g"], [k, "1-1", "f"],
                 [k, "MAXLEN", "5", "*", "f"], [k, "NOMKSTREAM", "*"]):
        assert c.err("XADD", *args) == XADD_ARITY, args
    assert c.err("XADD", k, "MAXLEN", "-1", "*", "f", "v") == (
        "ERR The MAXLEN argument must be >= 0.")
    assert c.err("XADD", k, "MAXLEN", "abc", "*", "f", "v") == NOT_INT
    assert c.err("XADD", k, "MAXLEN", "1", "MINID", "1", "*", "f", "v") == (
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
    assert c.err("XADD", k, "MAXLEN", "1", "LIMIT", "10", "*", "f", "v") == LIMIT_WITHOUT_TILDE
    assert c.err("XADD", k, "MAXLEN", "=", "1", "LIMIT", "10", "*", "f", "v") == (
        LIMIT_WITHOUT_TILDE)
    assert c.err("XADD", k, "MINID", "1", "LIMIT", "10", "*", "f", "v") == LIMIT_WITHOUT_TILDE
    assert c.err("XADD", k, "LIMIT", "10", "*", "f", "v") == (
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
    assert c.err("XADD", k, "MAXLEN", "~", "1", "LIMIT", "-1", "*", "f", "v") == (
        "ERR The LIMIT argument must be >= 0.")
    assert c.err("XADD", k, "MINID", "abc", "*", "f", "v") == INVALID_ID
    assert c.call("EXISTS", k) == 0


def test_xadd_maxlen_and_minid_exact(c):
    k = uniq()
    fill(c, k, 10)
    assert c.call("XADD", k, "MAXLEN", "5", "11-0", "f", "11") == "11-0"
    assert c.call("XLEN", k) == 5
    assert ids(c.call("XRANGE", k, "-", "+")) == ["7-0", "8-0", "9-0", "10-0", "11-0"]
    assert c.call("XADD", k, "MAXLEN", "=", "2", "12-0", "f", "12") == "12-0"
    assert ids(c.call("XRANGE", k, "-", "+")) == ["11-0", "12-0"]
    # MINID drops every entry below the id; the new entry counts.
    fill(c, k, 10, start=13)  # 13..22
    assert c.call("XADD", k, "MINID", "20", "23-0", "f", "23") == "23-0"
    assert ids(c.call("XRANGE", k, "-", "+")) == ["20-0", "21-0", "22-0", "23-0"]
    assert c.call("XADD", k, "MINID", "=", "22-0", "24-0", "f", "24") == "24-0"
    assert ids(c.call("XRANGE", k, "-", "+")) == ["22-0", "23-0", "24-0"]
    # MAXLEN 0 keeps an empty stream: the key stays, with its last id.
    assert c.call("XADD", k, "MAXLEN", "0", "25-0", "f", "25") == "25-0"
    assert c.call("XLEN", k) == 0
    assert c.call("EXISTS", k) == 1
    assert c.err("XADD", k, "25-0", "f", "v") == XADD_SMALLER


def test_xadd_approximate_trimming_keeps_at_least_the_bound(c):
    k = uniq()
    for i in range(1, 301):
        c.send_cmd("XADD", k, "MAXLEN", "~", "50", "%d-0" % i, "f", "v")
    for i in range(1, 301):
        assert c.value() == "%d-0" % i
    n = c.call("XLEN", k)
    assert 50 <= n <= 300
    # What is left is the newest entries, contiguous.
    got = ids(c.call("XRANGE", k, "-", "+"))
    assert got == ["%d-0" % i for i in range(301 - n, 301)]
    # With LIMIT (only valid with ~): never below the bound either.
    assert c.call("XADD", k, "MAXLEN", "~", "10", "LIMIT", "20", "301-0", "f", "v") == "301-0"
    assert c.call("XLEN", k) >= 10
    assert c.call("XADD", k, "MINID", "~", "290", "LIMIT", "1000", "302-0", "f", "v") == "302-0"
    first = c.call("XRANGE", k, "-", "+", "COUNT", "1")[0][0]
    assert int(first.split("-")[0]) <= 290


def test_xadd_on_a_non_stream_key(c):
    k = uniq()
    c.call("SET", k, "v")
    assert c.err("XADD", k, "*", "f", "v") == WRONGTYPE
    assert c.err("XADD", k, "NOMKSTREAM", "*", "f", "v") == WRONGTYPE
    assert c.call("GET", k) == "v"


# ================================================================ 2. XLEN, ranges, XDEL, XTRIM...

def test_xlen(c):
    k = uniq()
    assert c.cmd("XLEN", k) == b":0\r\n"
    fill(c, k, 3)
    assert c.cmd("XLEN", k) == b":3\r\n"
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XLEN", s) == WRONGTYPE


def five(c):
    k = uniq()
    for i, eid in enumerate(["5-0", "5-3", "6-0", "6-1", "7-0"]):
        c.call("XADD", k, eid, "n", str(i))
    return k


def test_xrange_whole_stream_and_count(c):
    k = five(c)
    assert c.cmd("XRANGE", k, "5-3", "5-3") == (
        b"*1\r\n*2\r\n$3\r\n5-3\r\n*2\r\n$1\r\nn\r\n$1\r\n1\r\n")
    assert ids(c.call("XRANGE", k, "-", "+")) == ["5-0", "5-3", "6-0", "6-1", "7-0"]
    assert ids(c.call("XRANGE", k, "-", "+", "COUNT", "2")) == ["5-0", "5-3"]
    assert ids(c.call("XRANGE", k, "-", "+", "COUNT", "100")) == ids(c.call("XRANGE", k, "-", "+"))
    # COUNT 0 (and a negative count) is a null array, not an empty one.
    assert c.cmd("XRANGE", k, "-", "+", "COUNT", "0") == NIL_ARRAY
    assert c.cmd("XRANGE", k, "-", "+", "COUNT", "-1") == NIL_ARRAY
    assert c.cmd("XREVRANGE", k, "+", "-", "COUNT", "0") == NIL_ARRAY
    assert c.cmd("XRANGE", uniq(), "-", "+") == b"*0\r\n"
    assert c.cmd("XRANGE", k, "7", "5") == b"*0\r\n"
    assert c.cmd("XRANGE", k, "5-1", "5-2") == b"*0\r\n"


def test_xrange_incomplete_ids(c):
    k = five(c)
    # "ms" alone is ms-0 as a start and ms-<max> as an end.
    assert ids(c.call("XRANGE", k, "6", "6")) == ["6-0", "6-1"]
    assert ids(c.call("XRANGE", k, "5", "5-0")) == ["5-0"]
    assert ids(c.call("XRANGE", k, "0", "5")) == ["5-0", "5-3"]
    assert ids(c.call("XREVRANGE", k, "6", "6")) == ["6-1", "6-0"]


def test_xrange_exclusive_bounds(c):
    k = five(c)
    assert ids(c.call("XRANGE", k, "(5-0", "(7-0")) == ["5-3", "6-0", "6-1"]
    assert ids(c.call("XRANGE", k, "(5", "+")) == ["5-3", "6-0", "6-1", "7-0"]
    assert ids(c.call("XRANGE", k, "(6", "+")) == ["6-1", "7-0"]
    # "(6" as an end is 6-<max> excluded: both 6-x entries stay.
    assert ids(c.call("XRANGE", k, "-", "(6")) == ["5-0", "5-3", "6-0", "6-1"]
    assert ids(c.call("XRANGE", k, "(0-0", "+")) == ["5-0", "5-3", "6-0", "6-1", "7-0"]
    assert ids(c.call("XREVRANGE", k, "(7-0", "(5-0")) == ["6-1", "6-0", "5-3"]
    assert ids(c.call("XREVRANGE", k, "(7", "(5")) == ["7-0", "6-1", "6-0", "5-3"]
    assert c.err("XRANGE", k, "(18446744073709551615-18446744073709551615", "+") == (
        "ERR invalid start ID for the interval")
    assert c.err("XRANGE", k, "-", "(0-0") == "ERR invalid end ID for the interval"
    for a, b in (("(-", "+"), ("-", "(+"), ("(", "+")):
        assert c.err("XRANGE", k, a, b) == INVALID_ID


def test_xrevrange(c):
    k = five(c)
    assert c.call("XREVRANGE", k, "+", "-") == [
        E("7-0", "n", "4"), E("6-1", "n", "3"), E("6-0", "n", "2"), E("5-3", "n", "1"),
        E("5-0", "n", "0")]
    assert ids(c.call("XREVRANGE", k, "+", "-", "COUNT", "2")) == ["7-0", "6-1"]
    assert ids(c.call("XREVRANGE", k, "6-0", "5-3")) == ["6-0", "5-3"]
    # The end comes first: "- +" is an empty range.
    assert c.cmd("XREVRANGE", k, "-", "+") == b"*0\r\n"


def test_xrange_errors(c):
    k = five(c)
    for a, b in (("abc", "+"), ("-", "1-a"), ("1-", "+")):
        assert c.err("XRANGE", k, a, b) == INVALID_ID
        assert c.err("XREVRANGE", k, b, a) == INVALID_ID
    assert c.err("XRANGE", k, "-", "+", "COUNT", "abc") == NOT_INT
    assert c.err("XRANGE", k, "-", "+", "FOO", "1") == SYNTAX
    assert c.err("XRANGE", k, "-", "+", "COUNT") == SYNTAX
    assert c.err("XRANGE", k, "-") == "ERR wrong number of arguments for 'xrange' command"
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XRANGE", s, "-", "+") == WRONGTYPE
    assert c.err("XREVRANGE", s, "+", "-") == WRONGTYPE


def test_xdel(c):
    k = five(c)
    assert c.cmd("XDEL", k, "5-3", "6-0", "99-0") == b":2\r\n"
    assert c.call("XDEL", k, "5-3") == 0
    assert c.call("XDEL", k, "5-3", "5-3", "7-0") == 1
    assert ids(c.call("XRANGE", k, "-", "+")) == ["5-0", "6-1"]
    assert c.call("XLEN", k) == 2
    assert c.call("XDEL", uniq(), "1-1") == 0
    assert c.err("XDEL", k, "abc") == INVALID_ID
    assert c.err("XDEL", k) == "ERR wrong number of arguments for 'xdel' command"
    # Deleting the last entries leaves an empty stream, not a missing key.
    assert c.call("XDEL", k, "5-0", "6-1") == 2
    assert c.call("EXISTS", k) == 1
    assert c.call("XLEN", k) == 0
    assert c.err("XADD", k, "7-0", "f", "v") == XADD_SMALLER


def test_xtrim_exact(c):
    k = uniq()
    fill(c, k, 30)
    assert c.cmd("XTRIM", k, "MAXLEN", "=", "25") == b":5\r\n"
    assert c.call("XTRIM", k, "MAXLEN", "25") == 0
    assert c.call("XTRIM", k, "MINID", "20") == 14
    assert ids(c.call("XRANGE", k, "-", "+", "COUNT", "1")) == ["20-0"]
    assert c.call("XTRIM", k, "MINID", "=", "25-0") == 5
    assert c.call("XLEN", k) == 6
    assert c.call("XTRIM", k, "MINID", "1") == 0
    assert c.call("XTRIM", k, "MAXLEN", "0") == 6
    assert c.call("XLEN", k) == 0
    assert c.call("EXISTS", k) == 1
    assert c.call("XTRIM", uniq(), "MAXLEN", "0") == 0


def test_xtrim_approximate_and_limit(c):
    k = uniq()
    for i in range(1, 301):
        c.send_cmd("XADD", k, "%d-0" % i, "f", "v")
    for i in range(1, 301):
        assert c.value() == "%d-0" % i
    removed = c.call("XTRIM", k, "MAXLEN", "~", "120")
    n = c.call("XLEN", k)
    assert removed == 300 - n
    assert 120 <= n <= 300
    removed = c.call("XTRIM", k, "MAXLEN", "~", "10", "LIMIT", "30")
    assert 0 <= removed <= 30
    assert c.call("XLEN", k) == n - removed >= 10
    before = c.call("XLEN", k)
    removed = c.call("XTRIM", k, "MINID", "~", "295")
    assert c.call("XLEN", k) == before - removed >= 6
    assert c.err("XTRIM", k, "MAXLEN", "10", "LIMIT", "50") == LIMIT_WITHOUT_TILDE
    assert c.err("XTRIM", k, "MINID", "=", "10", "LIMIT", "50") == LIMIT_WITHOUT_TILDE


def test_xtrim_errors(c):
    k = uniq()
    fill(c, k, 3)
    arity = "ERR wrong number of arguments for 'xtrim' command"
    assert c.err("XTRIM", k) == arity
    assert c.err("XTRIM", k, "MAXLEN") == arity
    assert c.err("XTRIM", k, "FOO", "1") == SYNTAX
    assert c.err("XTRIM", k, "MAXLEN", "1", "extra") == SYNTAX
    assert c.err("XTRIM", k, "MAXLEN", "-1") == "ERR The MAXLEN argument must be >= 0."
    assert c.err("XTRIM", k, "MAXLEN", "abc") == NOT_INT
    assert c.err("XTRIM", k, "MINID", "abc") == INVALID_ID
    assert c.call("XLEN", k) == 3
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XTRIM", s, "MAXLEN", "0") == WRONGTYPE


def test_xsetid(c):
    k = uniq()
    fill(c, k, 3)
    assert c.call("XDEL", k, "2-0") == 1
    smaller = "ERR The ID specified in XSETID is smaller than the target stream top item"
    assert c.err("XSETID", k, "2-0") == smaller
    assert c.call("XSETID", k, "3-0") == "OK"
    assert c.call("XSETID", k, "10-0") == "OK"
    assert c.err("XADD", k, "10-0", "f", "v") == XADD_SMALLER
    assert c.call("XADD", k, "10-*", "f", "v") == "10-1"
    # The check is against the last entry, not the last generated id: it may go back.
    assert c.call("XSETID", k, "20-0") == "OK"
    assert c.call("XSETID", k, "10-1") == "OK"
    assert c.call("XADD", k, "10-*", "f", "v") == "10-2"
    info = as_dict(c.call("XINFO", "STREAM", k))
    assert info["last-generated-id"] == "10-2"
    assert info["entries-added"] == 5
    assert info["max-deleted-entry-id"] == "2-0"
    # An empty stream takes any id, even one below its last generated id.
    e = uniq()
    c.call("XADD", e, "MAXLEN", "0", "50-0", "f", "v")
    assert c.call("XSETID", e, "1-0") == "OK"
    assert as_dict(c.call("XINFO", "STREAM", e))["last-generated-id"] == "1-0"
    assert c.call("XADD", e, "2-0", "f", "v") == "2-0"


def test_xsetid_entriesadded_and_maxdeletedid(c):
    k = uniq()
    fill(c, k, 3)
    assert c.err("XSETID", k, "20-0", "ENTRIESADDED", "2") == (
        "ERR The entries_added specified in XSETID is smaller than the target stream length")
    assert c.err("XSETID", k, "20-0", "ENTRIESADDED", "3", "MAXDELETEDID", "30-0") == (
        "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
    assert c.err("XSETID", k, "20-0", "ENTRIESADDED", "-1") == (
        "ERR entries_added must be positive")
    assert c.err("XSETID", k, "20-0", "ENTRIESADDED", "abc") == NOT_INT
    assert c.err("XSETID", k, "20-0", "MAXDELETEDID", "abc") == INVALID_ID
    assert c.err("XSETID", k, "20-0", "ENTRIESADDED") == SYNTAX
    assert c.err("XSETID", k, "20-0", "FOO") == SYNTAX
    assert c.call("XSETID", k, "20-0", "ENTRIESADDED", "7", "MAXDELETEDID", "15-0") == "OK"
    info = as_dict(c.call("XINFO", "STREAM", k))
    assert (info["last-generated-id"], info["entries-added"], info["max-deleted-entry-id"]) == (
        "20-0", 7, "15-0")
    # Each part can be set alone, and lowered.
    assert c.call("XSETID", k, "21-0", "MAXDELETEDID", "1-0") == "OK"
    info = as_dict(c.call("XINFO", "STREAM", k))
    assert (info["last-generated-id"], info["entries-added"], info["max-deleted-entry-id"]) == (
        "21-0", 7, "1-0")
    assert c.err("XSETID", uniq(), "1-0") == "ERR no such key"
    assert c.err("XSETID", k, "abc") == INVALID_ID
    assert c.err("XSETID", k) == "ERR wrong number of arguments for 'xsetid' command"
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XSETID", s, "1-0") == WRONGTYPE


def test_type_and_object_encoding(c):
    k = uniq()
    c.call("XADD", k, "1-1", "f", "v")
    assert c.cmd("TYPE", k) == b"+stream\r\n"
    assert c.call("OBJECT", "ENCODING", k) == "stream"
    c.call("XDEL", k, "1-1")
    assert c.cmd("TYPE", k) == b"+stream\r\n"
    e = uniq()
    c.call("XGROUP", "CREATE", e, "g", "$", "MKSTREAM")
    assert c.call("TYPE", e) == "stream"
    other = uniq()
    c.call("SET", other, "v")
    found, cursor = [], "0"
    while True:
        cursor, keys = c.call("SCAN", cursor, "TYPE", "stream")
        found += keys
        if cursor == "0":
            break
    assert sorted(found) == sorted([k, e])


def test_del_exists_rename_copy(c):
    k = uniq()
    fill(c, k, 3)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", k, ">")
    want_entries = c.call("XRANGE", k, "-", "+")
    want_groups = c.call("XINFO", "GROUPS", k)
    want_pending = c.call("XPENDING", k, "g")
    assert c.call("EXISTS", k) == 1
    dst = uniq()
    assert c.call("COPY", k, dst) == 1
    assert c.call("COPY", k, dst) == 0
    for key in (k, dst):
        assert c.call("XRANGE", key, "-", "+") == want_entries
        assert c.call("XINFO", "GROUPS", key) == want_groups
        assert c.call("XPENDING", key, "g") == want_pending
    # The copy is independent.
    c.call("XADD", dst, "9-0", "f", "9")
    c.call("XACK", dst, "g", "1-0")
    assert c.call("XLEN", k) == 3
    assert c.call("XPENDING", k, "g")[0] == 2
    moved = uniq()
    assert c.call("RENAME", k, moved) == "OK"
    assert c.call("EXISTS", k) == 0
    assert c.call("XRANGE", moved, "-", "+") == want_entries
    assert c.call("XINFO", "GROUPS", moved) == want_groups
    assert c.call("DEL", moved, dst) == 2
    assert c.call("EXISTS", moved, dst) == 0
    assert c.err("XINFO", "STREAM", moved) == "ERR no such key"


def test_expire_on_a_stream(c):
    k = uniq()
    fill(c, k, 2)
    assert c.call("EXPIRE", k, "100") == 1
    assert 0 < c.call("TTL", k) <= 100
    c.call("XADD", k, "3-0", "f", "3")  # writing to the stream keeps its TTL
    assert 0 < c.call("TTL", k) <= 100
    assert c.call("PERSIST", k) == 1
    assert c.call("TTL", k) == -1
    assert c.call("PEXPIRE", k, "50") == 1
    deadline = time.monotonic() + 5
    while c.call("EXISTS", k) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert c.call("EXISTS", k) == 0
    assert c.call("XLEN", k) == 0


# ================================================================ 3. XREAD

def test_xread_count_and_several_streams(c):
    a, b = uniq("a"), uniq("b")
    fill(c, a, 3)
    c.call("XADD", b, "1-5", "g", "1")
    assert c.call("XREAD", "STREAMS", a, "0") == [
        [a, [E("1-0", "f", "1"), E("2-0", "f", "2"), E("3-0", "f", "3")]]]
    assert c.call("XREAD", "COUNT", "2", "STREAMS", a, "0") == [
        [a, [E("1-0", "f", "1"), E("2-0", "f", "2")]]]
    assert c.call("XREAD", "COUNT", "1", "STREAMS", a, b, "1", "0") == [
        [a, [E("2-0", "f", "2")]], [b, [E("1-5", "g", "1")]]]
    # Exact bytes; a stream with nothing new (or missing) is left out.
    assert c.cmd("XREAD", "STREAMS", a, uniq(), b, "2", "0", "1-4") == (
        b"*2\r\n*2\r\n$%d\r\n%s\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"
        b"*2\r\n$%d\r\n%s\r\n*1\r\n*2\r\n$3\r\n1-5\r\n*2\r\n$1\r\ng\r\n$1\r\n1\r\n"
        % (len(a), a.encode(), len(b), b.encode()))
    assert ids(c.call("XREAD", "STREAMS", a, "2")[0][1]) == ["3-0"]  # "ms" alone: ms-0
    # COUNT 0 or below means no limit here.
    assert len(c.call("XREAD", "COUNT", "0", "STREAMS", a, "0")[0][1]) == 3
    assert len(c.call("XREAD", "COUNT", "-1", "STREAMS", a, "0")[0][1]) == 3


def test_xread_nothing_new_is_a_null_array(c):
    a = uniq()
    fill(c, a, 3)
    assert c.cmd("XREAD", "STREAMS", a, "$") == NIL_ARRAY
    assert c.cmd("XREAD", "STREAMS", a, "3-0") == NIL_ARRAY
    assert c.cmd("XREAD", "STREAMS", a, "99-0") == NIL_ARRAY
    assert c.cmd("XREAD", "STREAMS", a, "18446744073709551615-18446744073709551615") == NIL_ARRAY
    assert c.cmd("XREAD", "STREAMS", uniq(), "0") == NIL_ARRAY
    assert c.cmd("XREAD", "STREAMS", uniq(), "$") == NIL_ARRAY
    e = uniq()
    c.call("XADD", e, "MAXLEN", "0", "1-0", "f", "v")
    assert c.cmd("XREAD", "STREAMS", e, "0") == NIL_ARRAY


def test_xread_errors(c):
    a = uniq()
    fill(c, a, 1)
    assert c.err("XREAD", "STREAMS", a, "b", "0") == (
        "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
        "specified.")
    assert c.err("XREAD", "STREAMS", a) == "ERR wrong number of arguments for 'xread' command"
    assert c.err("XREAD", "STREAMS", a, ">") == (
        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
        "<consumer> option.")
    assert c.err("XREAD", "NOACK", "STREAMS", a, "0") == (
        "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
    assert c.err("XREAD", "BLOCK", "-1", "STREAMS", a, "0") == "ERR timeout is negative"
    assert c.err("XREAD", "BLOCK", "abc", "STREAMS", a, "0") == (
        "ERR timeout is not an integer or out of range")
    assert c.err("XREAD", "COUNT", "abc", "STREAMS", a, "0") == NOT_INT
    assert c.err("XREAD", "FOO", "STREAMS", a, "0") == SYNTAX
    for bad in ("abc", "(1", "+", "-"):
        assert c.err("XREAD", "STREAMS", a, bad) == INVALID_ID
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XREAD", "STREAMS", s, "0") == WRONGTYPE
    assert c.err("XREAD", "STREAMS", a, s, "0", "0") == WRONGTYPE


def test_xread_block_times_out(c):
    a = uniq()
    t0 = time.monotonic()
    assert c.cmd("XREAD", "BLOCK", "200", "STREAMS", a, "$") == NIL_ARRAY
    assert 0.15 <= time.monotonic() - t0 < 3.0
    assert c.call("EXISTS", a) == 0


def test_xread_block_with_data_there_returns_at_once(c):
    a = uniq()
    fill(c, a, 2)
    t0 = time.monotonic()
    assert c.call("XREAD", "BLOCK", "5000", "STREAMS", a, "1-0") == [[a, [E("2-0", "f", "2")]]]
    assert time.monotonic() - t0 < 2.0


def test_xread_block_woken_by_xadd_from_another_connection(conns):
    reader, writer = conns(), conns()
    a = uniq()
    fill(writer, a, 2)
    reader.send_cmd("XREAD", "BLOCK", "5000", "STREAMS", a, "$")
    wait_blocked(writer, 1)
    assert writer.call("XADD", a, "7-7", "x", "y") == "7-7"
    assert reader.value() == [[a, [E("7-7", "x", "y")]]]
    assert blocked_clients(writer) == 0


def test_xread_block_0_on_several_streams(conns):
    reader, writer = conns(), conns()
    a, b, k3 = uniq("a"), uniq("b"), uniq("c")
    fill(writer, a, 1)
    reader.send_cmd("XREAD", "BLOCK", "0", "COUNT", "5", "STREAMS", a, b, k3, "$", "$", "0")
    wait_blocked(writer, 1)
    assert writer.call("XADD", b, "1-1", "f", "v") == "1-1"
    assert reader.value() == [[b, [E("1-1", "f", "v")]]]
    # The reader is served once: a second XADD is not delivered.
    writer.call("XADD", k3, "1-1", "f", "v")
    assert reader.idle(0.1)
    assert reader.call("PING") == "PONG"


def test_xread_block_waits_for_an_id_above_the_requested_one(conns):
    reader, writer = conns(), conns()
    a = uniq()
    fill(writer, a, 3)
    reader.send_cmd("XREAD", "BLOCK", "5000", "STREAMS", a, "99-0")
    wait_blocked(writer, 1)
    # 50-0 is not after 99-0: the reader stays blocked.
    assert writer.call("XADD", a, "50-0", "f", "v") == "50-0"
    assert reader.idle(0.2)
    assert blocked_clients(writer) == 1
    assert writer.call("XADD", a, "100-0", "f", "w") == "100-0"
    assert reader.value() == [[a, [E("100-0", "f", "w")]]]


def test_xread_block_two_readers_both_get_the_entry(conns):
    r1, r2, writer = conns(), conns(), conns()
    a = uniq()
    r1.send_cmd("XREAD", "BLOCK", "5000", "COUNT", "1", "STREAMS", a, "$")
    r2.send_cmd("XREAD", "BLOCK", "5000", "COUNT", "1", "STREAMS", a, "$")
    wait_blocked(writer, 2)
    writer.call("XADD", a, "1-1", "f", "v")
    assert r1.value() == [[a, [E("1-1", "f", "v")]]]
    assert r2.value() == [[a, [E("1-1", "f", "v")]]]


def test_xread_block_across_workers(server_factory):
    """Readers and the writer on different connections, streams with different hash
    tags (different shards on a multi-threaded server): every reader is woken."""
    srv = server_factory(threads=3)
    made = []
    try:
        writer = Conn(srv.port, timeout=10)
        made.append(writer)
        keys = ["{%d}st" % i for i in range(6)]
        readers = []
        for i in range(6):
            r = Conn(srv.port, timeout=10)
            made.append(r)
            # Each reader waits on two quiet keys (other tags) and on its own key.
            quiet = ["{%d}quiet" % (i + 10), "{%d}quiet" % (i + 20)]
            r.send_cmd("XREAD", "BLOCK", "10000", "STREAMS", *quiet, keys[i], "$", "$", "$")
            readers.append(r)
            wait_blocked(writer, i + 1)
        for i in reversed(range(6)):
            assert writer.call("XADD", keys[i], "%d-1" % (i + 1), "n", str(i)) == (
                "%d-1" % (i + 1))
        for i, r in enumerate(readers):
            assert r.value() == [[keys[i], [E("%d-1" % (i + 1), "n", str(i))]]], i
        wait_blocked(writer, 0)
        # Groups too: a consumer blocked on another shard's key is woken.
        g = "{9}grp"
        writer.call("XGROUP", "CREATE", g, "g", "$", "MKSTREAM")
        readers[0].send_cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", "10000", "STREAMS", g, ">")
        wait_blocked(writer, 1)
        writer.call("XADD", g, "5-5", "f", "v")
        assert readers[0].value() == [[g, [E("5-5", "f", "v")]]]
        assert writer.call("XPENDING", g, "g")[:3] == [1, "5-5", "5-5"]
    finally:
        for conn in made:
            conn.close()


def test_xreadgroup_block_serves_consumers_first_come_first_served(conns):
    c1, c2, writer = conns(), conns(), conns()
    a = uniq()
    writer.call("XGROUP", "CREATE", a, "g", "$", "MKSTREAM")
    c1.send_cmd("XREADGROUP", "GROUP", "g", "first", "BLOCK", "5000", "COUNT", "1",
                "STREAMS", a, ">")
    wait_blocked(writer, 1)
    c2.send_cmd("XREADGROUP", "GROUP", "g", "second", "BLOCK", "5000", "COUNT", "1",
                "STREAMS", a, ">")
    wait_blocked(writer, 2)
    writer.call("XADD", a, "1-1", "f", "1")
    assert c1.value() == [[a, [E("1-1", "f", "1")]]]
    assert c2.idle(0.2)
    writer.call("XADD", a, "2-1", "f", "2")
    assert c2.value() == [[a, [E("2-1", "f", "2")]]]
    assert writer.call("XPENDING", a, "g") == [2, "1-1", "2-1", [["first", "1"], ["second", "1"]]]
    assert lag_view(writer, a) == {"g": ("2-1", 2, 0)}


def test_xreadgroup_block_times_out_and_noack_wakeup(conns):
    c1, writer = conns(), conns()
    a = uniq()
    writer.call("XGROUP", "CREATE", a, "g", "$", "MKSTREAM")
    t0 = time.monotonic()
    assert c1.cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", "150", "STREAMS", a, ">") == NIL_ARRAY
    assert 0.1 <= time.monotonic() - t0 < 3.0
    c1.send_cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "NOACK", "STREAMS", a, ">")
    wait_blocked(writer, 1)
    writer.call("XADD", a, "3-3", "f", "v")
    assert c1.value() == [[a, [E("3-3", "f", "v")]]]
    assert writer.call("XPENDING", a, "g") == [0, None, None, None]
    # A history read does not block: it answers at once, even when empty.
    assert c1.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", a, "0") == [[a, []]]


# ================================================================ 4. consumer groups

def test_xgroup_create(c):
    k = uniq()
    assert c.err("XGROUP", "CREATE", k, "g", "0") == NO_KEY_FOR_XGROUP
    assert c.call("EXISTS", k) == 0
    assert c.cmd("XGROUP", "CREATE", k, "g", "$", "MKSTREAM") == b"+OK\r\n"
    assert c.call("XLEN", k) == 0
    assert c.err("XGROUP", "CREATE", k, "g", "$", "MKSTREAM") == BUSYGROUP
    assert c.err("XGROUP", "CREATE", k, "g", "0") == BUSYGROUP
    assert c.err("XGROUP", "CREATE", k, "g2", "abc") == INVALID_ID
    assert c.call("XGROUP", "CREATE", k, "g3", "0", "ENTRIESREAD", "5") == "OK"
    assert c.err("XGROUP", "CREATE", k, "g4", "0", "ENTRIESREAD", "-2") == (
        "ERR value for ENTRIESREAD must be positive or -1")
    assert c.err("XGROUP", "CREATE", k, "g4", "0", "ENTRIESREAD", "abc") == NOT_INT
    assert c.call("XGROUP", "CREATE", k, "g4", "0", "ENTRIESREAD", "-1") == "OK"
    assert c.err("XGROUP", "CREATE", k, "g5", "0", "FOO") == (
        "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.")
    assert c.call("XINFO", "GROUPS", k) == [
        ["name", "g", "consumers", 0, "pending", 0, "last-delivered-id", "0-0",
         "entries-read", None, "lag", 0],
        ["name", "g3", "consumers", 0, "pending", 0, "last-delivered-id", "0-0",
         "entries-read", 5, "lag", 0],
        ["name", "g4", "consumers", 0, "pending", 0, "last-delivered-id", "0-0",
         "entries-read", None, "lag", 0]]
    assert as_dict(c.call("XINFO", "STREAM", k))["groups"] == 3
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XGROUP", "CREATE", s, "g", "0") == WRONGTYPE
    assert c.err("XGROUP", "CREATE", s, "g", "$", "MKSTREAM") == WRONGTYPE


def test_xgroup_create_positions_and_initial_lag(c):
    k = uniq()
    fill(c, k, 5)
    c.call("XGROUP", "CREATE", k, "at-end", "$")
    c.call("XGROUP", "CREATE", k, "at-start", "0")
    c.call("XGROUP", "CREATE", k, "in-middle", "3-0")
    c.call("XGROUP", "CREATE", k, "counted", "3-0", "ENTRIESREAD", "3")
    # Only an exact or estimable position gives a lag; the middle one is unknown (nil).
    assert lag_view(c, k) == {"at-end": ("5-0", None, 0), "at-start": ("0-0", None, 5),
                              "in-middle": ("3-0", None, None), "counted": ("3-0", 3, 2)}
    assert c.call("XREADGROUP", "GROUP", "at-start", "c", "COUNT", "1", "STREAMS", k, ">") == [
        [k, [E("1-0", "f", "1")]]]
    assert c.call("XREADGROUP", "GROUP", "at-end", "c", "STREAMS", k, ">") is None
    assert c.call("XREADGROUP", "GROUP", "in-middle", "c", "STREAMS", k, ">") == [
        [k, [E("4-0", "f", "4"), E("5-0", "f", "5")]]]
    assert lag_view(c, k) == {"at-end": ("5-0", None, 0), "at-start": ("1-0", 1, 4),
                              "in-middle": ("5-0", 5, 0), "counted": ("3-0", 3, 2)}


def test_xgroup_setid(c):
    k = uniq()
    fill(c, k, 3)
    c.call("XGROUP", "CREATE", k, "g", "$")
    assert c.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", k, ">") is None
    assert c.cmd("XGROUP", "SETID", k, "g", "0") == b"+OK\r\n"
    assert ids(c.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", k, ">")[0][1]) == [
        "1-0", "2-0", "3-0"]
    assert c.call("XGROUP", "SETID", k, "g", "1-0", "ENTRIESREAD", "1") == "OK"
    assert lag_view(c, k) == {"g": ("1-0", 1, 2)}
    assert c.call("XGROUP", "SETID", k, "g", "$") == "OK"
    assert lag_view(c, k)["g"][0] == "3-0"
    # The PEL is untouched by SETID.
    assert c.call("XPENDING", k, "g")[0] == 3
    assert c.err("XGROUP", "SETID", k, "nog", "0") == (
        "NOGROUP No such consumer group 'nog' for key name '%s'" % k)
    assert c.err("XGROUP", "SETID", uniq(), "g", "0") == NO_KEY_FOR_XGROUP
    assert c.err("XGROUP", "SETID", k, "g", "abc") == INVALID_ID
    assert c.err("XGROUP", "SETID", k, "g", "0", "ENTRIESREAD", "-5") == (
        "ERR value for ENTRIESREAD must be positive or -1")


def test_xgroup_destroy(c):
    k = uniq()
    fill(c, k, 2)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XGROUP", "CREATE", k, "h", "0")
    c.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", k, ">")
    assert c.cmd("XGROUP", "DESTROY", k, "g") == b":1\r\n"
    assert c.cmd("XGROUP", "DESTROY", k, "g") == b":0\r\n"
    assert [g["name"] for g in groups(c, k)] == ["h"]
    assert c.err("XPENDING", k, "g") == "NOGROUP No such key '%s' or consumer group 'g'" % k
    assert c.err("XGROUP", "DESTROY", uniq(), "g") == NO_KEY_FOR_XGROUP
    assert c.call("XLEN", k) == 2


def test_xgroup_createconsumer_and_delconsumer(c):
    k = uniq()
    fill(c, k, 3)
    c.call("XGROUP", "CREATE", k, "g", "0")
    assert c.cmd("XGROUP", "CREATECONSUMER", k, "g", "alice") == b":1\r\n"
    assert c.cmd("XGROUP", "CREATECONSUMER", k, "g", "alice") == b":0\r\n"
    c.call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "2", "STREAMS", k, ">")
    assert [as_dict(x)["name"] for x in c.call("XINFO", "CONSUMERS", k, "g")] == ["alice", "bob"]
    # DELCONSUMER answers how many pending entries the consumer had; they leave the PEL.
    assert c.cmd("XGROUP", "DELCONSUMER", k, "g", "bob") == b":2\r\n"
    assert c.call("XGROUP", "DELCONSUMER", k, "g", "bob") == 0
    assert c.call("XGROUP", "DELCONSUMER", k, "g", "alice") == 0
    assert c.call("XINFO", "CONSUMERS", k, "g") == []
    assert c.call("XPENDING", k, "g") == [0, None, None, None]
    assert lag_view(c, k) == {"g": ("2-0", 2, 1)}
    nogroup = "NOGROUP No such consumer group 'nog' for key name '%s'" % k
    assert c.err("XGROUP", "CREATECONSUMER", k, "nog", "x") == nogroup
    assert c.err("XGROUP", "DELCONSUMER", k, "nog", "x") == nogroup
    assert c.err("XGROUP", "CREATECONSUMER", uniq(), "g", "x") == NO_KEY_FOR_XGROUP


def test_xgroup_leaves_a_watch_alone_unless_mkstream_creates_the_key(c):
    """As Redis: XGROUP's subcommands do not count as modifying the key for WATCH, those
    that change the groups included; CREATE ... MKSTREAM that creates the key does."""
    k = uniq()
    fill(c, k, 2)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XGROUP", "CREATECONSUMER", k, "g", "alice")
    calls = [
        ["XGROUP", "CREATE", k, "g2", "0"],
        ["XGROUP", "SETID", k, "g2", "$"],
        ["XGROUP", "CREATECONSUMER", k, "g", "bob"],
        ["XGROUP", "CREATECONSUMER", k, "g", "bob"],
        ["XGROUP", "DELCONSUMER", k, "g", "bob"],
        ["XGROUP", "DELCONSUMER", k, "g", "nobody"],
        ["XGROUP", "DESTROY", k, "g2"],
        ["XGROUP", "DESTROY", k, "g2"],
    ]
    for call in calls:
        c.call("WATCH", k)
        c.call(*call)
        c.call("MULTI")
        c.call("PING")
        assert c.call("EXEC") == ["PONG"], call
    fresh = uniq()
    c.call("WATCH", fresh)
    c.call("XGROUP", "CREATE", fresh, "g", "$", "MKSTREAM")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None
    # A write to the stream itself still does.
    c.call("WATCH", k)
    c.call("XADD", k, "*", "f", "v")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None


def test_xgroup_unknown_subcommand_and_arity(c):
    k = uniq()
    assert c.err("XGROUP", "FOO", k) == "ERR unknown subcommand 'FOO'. Try XGROUP HELP."
    assert c.err("XGROUP", "CREATE", k) == (
        "ERR wrong number of arguments for 'xgroup|create' command")
    assert c.err("XGROUP") == "ERR wrong number of arguments for 'xgroup' command"
    assert c.err("XINFO", "FOO", k) == "ERR unknown subcommand 'FOO'. Try XINFO HELP."
    help_lines = c.call("XGROUP", "HELP")
    assert isinstance(help_lines, list) and len(help_lines) > 5


def test_xreadgroup_new_entries_and_history(c):
    k = uniq()
    fill(c, k, 4)
    c.call("XGROUP", "CREATE", k, "g", "0")
    assert c.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", k, ">") == [
        [k, [E("1-0", "f", "1"), E("2-0", "f", "2")]]]
    assert c.call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", k, ">") == [
        [k, [E("3-0", "f", "3")]]]
    # History: the consumer's own pending entries after the given id.
    assert c.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", k, "0") == [
        [k, [E("1-0", "f", "1"), E("2-0", "f", "2")]]]
    assert c.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", k, "1-0") == [
        [k, [E("2-0", "f", "2")]]]
    assert c.call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", k, "0") == [
        [k, [E("3-0", "f", "3")]]]
    # An empty history is an empty list for the stream, not a null.
    assert c.cmd("XREADGROUP", "GROUP", "g", "carol", "STREAMS", k, "0") == (
        b"*1\r\n*2\r\n$%d\r\n%s\r\n*0\r\n" % (len(k), k.encode()))
    assert c.call("XREADGROUP", "GROUP", "g", "carol", "COUNT", "0", "STREAMS", k, "0") == [
        [k, []]]
    # History reads count as deliveries.
    assert c.call("XPENDING", k, "g", "-", "+", "10")[0][3] == 2
    assert [e[3] for e in c.call("XPENDING", k, "g", "-", "+", "10")] == [2, 3, 2]
    assert c.call("XREADGROUP", "GROUP", "g", "dave", "STREAMS", k, ">") == [
        [k, [E("4-0", "f", "4")]]]
    assert c.cmd("XREADGROUP", "GROUP", "g", "dave", "STREAMS", k, ">") == NIL_ARRAY
    assert [as_dict(x)["name"] for x in c.call("XINFO", "CONSUMERS", k, "g")] == [
        "alice", "bob", "carol", "dave"]


def test_xreadgroup_history_shows_deleted_entries_as_nil(c):
    k = uniq()
    fill(c, k, 3)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XREADGROUP", "GROUP", "g", "a", "STREAMS", k, ">")
    c.call("XDEL", k, "2-0")
    assert c.call("XREADGROUP", "GROUP", "g", "a", "STREAMS", k, "0") == [
        [k, [E("1-0", "f", "1"), ["2-0", None], E("3-0", "f", "3")]]]
    assert c.cmd("XREADGROUP", "GROUP", "g", "a", "COUNT", "1", "STREAMS", k, "1-0") == (
        b"*1\r\n*2\r\n$%d\r\n%s\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*-1\r\n" % (len(k), k.encode()))
    assert c.call("XPENDING", k, "g")[0] == 3


def test_xreadgroup_noack(c):
    k = uniq()
    fill(c, k, 2)
    c.call("XGROUP", "CREATE", k, "g", "0")
    assert c.call("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", k, ">") == [
        [k, [E("1-0", "f", "1"), E("2-0", "f", "2")]]]
    assert c.call("XPENDING", k, "g") == [0, None, None, None]
    assert c.call("XINFO", "CONSUMERS", k, "g")[0][:4] == ["name", "c", "pending", 0]
    assert lag_view(c, k) == {"g": ("2-0", 2, 0)}


def test_xreadgroup_errors(c):
    k = uniq()
    fill(c, k, 1)
    c.call("XGROUP", "CREATE", k, "g", "0")
    assert c.err("XREADGROUP", "GROUP", "nog", "c", "STREAMS", k, ">") == (
        "NOGROUP No such key '%s' or consumer group 'nog' in XREADGROUP with GROUP option" % k)
    missing = uniq()
    assert c.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", missing, ">") == (
        "NOGROUP No such key '%s' or consumer group 'g' in XREADGROUP with GROUP option"
        % missing)
    assert c.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", k, "$") == (
        "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
        "history of this consumer by specifying a proper ID, or use the > ID to get new "
        "messages. The $ ID would just return an empty result set.")
    assert c.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", k, "abc") == INVALID_ID
    arity = "ERR wrong number of arguments for 'xreadgroup' command"
    assert c.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", k) == arity
    assert c.err("XREADGROUP", "GROUP", "g", "STREAMS", k, ">") == arity
    # The same text as XREAD's.
    assert c.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", k, k, ">") == (
        "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
        "specified.")
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, ">") == WRONGTYPE
    # Nothing was delivered by the failed calls.
    assert c.call("XPENDING", k, "g") == [0, None, None, None]


def test_xack(c):
    k = uniq()
    fill(c, k, 4)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XREADGROUP", "GROUP", "g", "a", "COUNT", "3", "STREAMS", k, ">")
    assert c.cmd("XACK", k, "g", "1-0", "3-0", "9-0") == b":2\r\n"
    assert c.call("XACK", k, "g", "1-0") == 0
    assert c.call("XACK", k, "g", "4-0") == 0  # never delivered
    assert c.call("XACK", k, "nog", "2-0") == 0
    assert c.call("XACK", uniq(), "g", "2-0") == 0
    assert c.err("XACK", k, "g", "abc") == INVALID_ID
    assert c.err("XACK", k, "g", "2-0", "abc") == INVALID_ID
    assert c.call("XPENDING", k, "g") == [1, "2-0", "2-0", [["a", "1"]]]
    assert c.err("XACK", k, "g") == "ERR wrong number of arguments for 'xack' command"
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XACK", s, "g", "1-0") == WRONGTYPE


def pel(c, *args):
    """XPENDING's extended form with the idle times left out: [id, consumer, deliveries]."""
    rows = c.call("XPENDING", *args)
    for row in rows:
        assert isinstance(row[2], int) and 0 <= row[2] < 60000, row
    return [[row[0], row[1], row[3]] for row in rows]


def test_xpending_summary_and_extended(c):
    k = uniq()
    fill(c, k, 4)
    c.call("XGROUP", "CREATE", k, "g", "0")
    assert c.cmd("XPENDING", k, "g") == b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    assert c.cmd("XPENDING", k, "g", "-", "+", "10") == b"*0\r\n"
    c.call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", k, ">")
    c.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", k, ">")
    # Consumers sorted by name, their counts as bulk strings.
    assert c.cmd("XPENDING", k, "g") == (
        b"*4\r\n:3\r\n$3\r\n1-0\r\n$3\r\n3-0\r\n*2\r\n*2\r\n$5\r\nalice\r\n$1\r\n2\r\n"
        b"*2\r\n$3\r\nbob\r\n$1\r\n1\r\n")
    assert pel(c, k, "g", "-", "+", "10") == [
        ["1-0", "bob", 1], ["2-0", "alice", 1], ["3-0", "alice", 1]]
    assert pel(c, k, "g", "-", "+", "10", "alice") == [["2-0", "alice", 1], ["3-0", "alice", 1]]
    assert pel(c, k, "g", "-", "+", "10", "nobody") == []
    assert pel(c, k, "g", "(1-0", "+", "10") == [["2-0", "alice", 1], ["3-0", "alice", 1]]
    assert pel(c, k, "g", "-", "(3-0", "10") == [["1-0", "bob", 1], ["2-0", "alice", 1]]
    assert c.err("XPENDING", k, "g", "2", "2") == SYNTAX  # a range needs a count
    assert pel(c, k, "g", "2", "2", "5") == [["2-0", "alice", 1]]
    assert pel(c, k, "g", "-", "+", "1") == [["1-0", "bob", 1]]
    assert pel(c, k, "g", "-", "+", "0") == []
    assert pel(c, k, "g", "-", "+", "-1") == []
    assert pel(c, k, "g", "IDLE", "0", "-", "+", "10", "bob") == [["1-0", "bob", 1]]
    assert pel(c, k, "g", "IDLE", "3600000", "-", "+", "10") == []
    row = c.call("XPENDING", k, "g", "-", "+", "1")[0]
    assert [type(x) for x in row] == [str, str, int, int]


def test_xpending_errors(c):
    k = uniq()
    fill(c, k, 1)
    c.call("XGROUP", "CREATE", k, "g", "0")
    assert c.err("XPENDING", k, "nog") == "NOGROUP No such key '%s' or consumer group 'nog'" % k
    missing = uniq()
    assert c.err("XPENDING", missing, "g") == (
        "NOGROUP No such key '%s' or consumer group 'g'" % missing)
    assert c.err("XPENDING", k, "g", "-") == SYNTAX
    assert c.err("XPENDING", k, "g", "-", "+") == SYNTAX
    assert c.err("XPENDING", k, "g", "IDLE", "10") == SYNTAX
    assert c.err("XPENDING", k, "g", "IDLE", "abc", "-", "+", "10") == NOT_INT
    assert c.err("XPENDING", k, "g", "-", "+", "abc") == NOT_INT
    assert c.err("XPENDING", k, "g", "abc", "+", "10") == INVALID_ID
    assert c.err("XPENDING", k) == "ERR wrong number of arguments for 'xpending' command"


def claim_setup(c, n=5):
    k = uniq()
    fill(c, k, n)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", k, ">")
    return k


def test_xclaim_basics(c):
    k = claim_setup(c)
    # Not idle long enough: nothing claimed, and no consumer created.
    assert c.cmd("XCLAIM", k, "g", "bob", "3600000", "1-0") == b"*0\r\n"
    assert [as_dict(x)["name"] for x in c.call("XINFO", "CONSUMERS", k, "g")] == ["alice"]
    assert c.call("XCLAIM", k, "g", "bob", "0", "1-0") == [E("1-0", "f", "1")]
    # JUSTID: ids only, and the delivery count is not raised.
    assert c.cmd("XCLAIM", k, "g", "bob", "0", "2-0", "JUSTID") == b"*1\r\n$3\r\n2-0\r\n"
    # Several ids; one not pending is skipped.
    assert c.call("XCLAIM", k, "g", "carol", "0", "4-0", "5-0", "9-0") == [
        E("4-0", "f", "4"), E("5-0", "f", "5")]
    assert pel(c, k, "g", "-", "+", "10") == [
        ["1-0", "bob", 2], ["2-0", "bob", 1], ["3-0", "alice", 1], ["4-0", "carol", 2],
        ["5-0", "carol", 2]]
    assert c.call("XPENDING", k, "g")[3] == [["alice", "1"], ["bob", "2"], ["carol", "2"]]
    # A negative min-idle-time is taken as 0.
    assert c.call("XCLAIM", k, "g", "alice", "-1", "1-0", "JUSTID") == ["1-0"]


def test_xclaim_idle_time_retrycount(c):
    k = claim_setup(c)
    assert c.call("XCLAIM", k, "g", "bob", "0", "3-0", "IDLE", "5000", "RETRYCOUNT", "7") == [
        E("3-0", "f", "3")]
    row = c.call("XPENDING", k, "g", "3-0", "3-0", "1")[0]
    assert row[:2] == ["3-0", "bob"] and 5000 <= row[2] < 65000 and row[3] == 7
    # Only entries idle for more than 5s now: 3-0.
    assert [r[0] for r in c.call("XPENDING", k, "g", "IDLE", "4000", "-", "+", "10")] == ["3-0"]
    assert c.call("XCLAIM", k, "g", "carol", "4000", "1-0", "3-0", "JUSTID") == ["3-0"]
    # TIME sets the delivery time as a unix time in ms.
    sec, _ = c.call("TIME")
    c.call("XCLAIM", k, "g", "bob", "0", "4-0", "TIME", str((int(sec) - 100) * 1000))
    row = c.call("XPENDING", k, "g", "4-0", "4-0", "1")[0]
    assert row[1] == "bob" and 95000 <= row[2] < 200000 and row[3] == 2
    c.call("XCLAIM", k, "g", "bob", "0", "5-0", "TIME", "1000")
    assert c.call("XPENDING", k, "g", "5-0", "5-0", "1")[0][2] > 10 ** 12
    # A negative IDLE is 0.
    c.call("XCLAIM", k, "g", "bob", "0", "2-0", "IDLE", "-5", "JUSTID")
    assert 0 <= c.call("XPENDING", k, "g", "2-0", "2-0", "1")[0][2] < 60000


def test_xclaim_force_and_deleted_entries(c):
    k = claim_setup(c, n=3)
    fill(c, k, 3, start=4)  # 4-0..6-0, never delivered
    # FORCE creates the PEL entry when the entry exists in the stream.
    assert c.call("XCLAIM", k, "g", "bob", "0", "5-0", "FORCE") == [E("5-0", "f", "5")]
    assert c.call("XCLAIM", k, "g", "bob", "0", "6-0", "FORCE", "JUSTID") == ["6-0"]
    # ... and not for an id that is not in the stream.
    assert c.call("XCLAIM", k, "g", "bob", "0", "99-0", "FORCE") == []
    assert pel(c, k, "g", "-", "+", "10") == [
        ["1-0", "alice", 1], ["2-0", "alice", 1], ["3-0", "alice", 1], ["5-0", "bob", 2],
        ["6-0", "bob", 1]]
    # FORCE does not move the group.
    assert lag_view(c, k) == {"g": ("3-0", 3, 3)}
    # A pending entry that was deleted is dropped from the PEL when claimed.
    c.call("XDEL", k, "2-0")
    assert c.call("XCLAIM", k, "g", "bob", "0", "2-0") == []
    assert c.call("XCLAIM", k, "g", "bob", "0", "2-0", "JUSTID") == []
    assert [r[0] for r in pel(c, k, "g", "-", "+", "10")] == ["1-0", "3-0", "5-0", "6-0"]


def test_xclaim_lastid(c):
    k = claim_setup(c, n=3)
    assert c.call("XCLAIM", k, "g", "bob", "0", "1-0", "LASTID", "10-0", "JUSTID") == ["1-0"]
    g = group(c, k, "g")
    assert (g["last-delivered-id"], g["pending"], g["consumers"]) == ("10-0", 3, 2)
    # A LASTID below the group's position leaves it.
    c.call("XCLAIM", k, "g", "bob", "0", "1-0", "LASTID", "2-0", "JUSTID")
    assert group(c, k, "g")["last-delivered-id"] == "10-0"
    assert c.call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", k, ">") is None
    c.call("XADD", k, "11-0", "f", "11")
    assert ids(c.call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", k, ">")[0][1]) == ["11-0"]


def test_xclaim_errors(c):
    k = claim_setup(c, n=2)
    assert c.err("XCLAIM", k, "nog", "bob", "0", "1-0") == (
        "NOGROUP No such key '%s' or consumer group 'nog'" % k)
    missing = uniq()
    assert c.err("XCLAIM", missing, "g", "bob", "0", "1-0") == (
        "NOGROUP No such key '%s' or consumer group 'g'" % missing)
    assert c.err("XCLAIM", k, "g", "bob", "abc", "1-0") == (
        "ERR Invalid min-idle-time argument for XCLAIM")
    assert c.err("XCLAIM", k, "g", "bob", "0", "abc") == "ERR Unrecognized XCLAIM option 'abc'"
    assert c.err("XCLAIM", k, "g", "bob", "0", "1-0", "FOO") == (
        "ERR Unrecognized XCLAIM option 'FOO'")
    assert c.err("XCLAIM", k, "g", "bob", "0", "1-0", "IDLE", "abc") == (
        "ERR Invalid IDLE option argument for XCLAIM")
    assert c.err("XCLAIM", k, "g", "bob", "0", "1-0", "TIME", "abc") == (
        "ERR Invalid TIME option argument for XCLAIM")
    assert c.err("XCLAIM", k, "g", "bob", "0", "1-0", "RETRYCOUNT", "abc") == (
        "ERR Invalid RETRYCOUNT option argument for XCLAIM")
    assert c.err("XCLAIM", k, "g", "bob", "0", "1-0", "LASTID", "abc") == INVALID_ID
    assert c.err("XCLAIM", k, "g", "bob", "0") == (
        "ERR wrong number of arguments for 'xclaim' command")
    # Nothing changed.
    assert pel(c, k, "g", "-", "+", "10") == [["1-0", "alice", 1], ["2-0", "alice", 1]]


def test_xautoclaim_cursor_count_and_deleted_ids(c):
    k = claim_setup(c)
    # Nothing idle long enough: cursor 0-0, no consumer created.
    assert c.cmd("XAUTOCLAIM", k, "g", "bob", "3600000", "0") == (
        b"*3\r\n$3\r\n0-0\r\n*0\r\n*0\r\n")
    assert len(c.call("XINFO", "CONSUMERS", k, "g")) == 1
    c.call("XDEL", k, "2-0", "4-0")
    # Deleted entries count against COUNT, are listed third and leave the PEL.
    assert c.call("XAUTOCLAIM", k, "g", "bob", "0", "0", "COUNT", "2") == [
        "3-0", [E("1-0", "f", "1")], ["2-0"]]
    assert c.call("XAUTOCLAIM", k, "g", "bob", "0", "3-0", "COUNT", "2") == [
        "5-0", [E("3-0", "f", "3")], ["4-0"]]
    assert c.call("XAUTOCLAIM", k, "g", "bob", "0", "5-0", "COUNT", "2") == [
        "0-0", [E("5-0", "f", "5")], []]
    assert pel(c, k, "g", "-", "+", "10") == [
        ["1-0", "bob", 2], ["3-0", "bob", 2], ["5-0", "bob", 2]]
    # The start may be exclusive or incomplete; "+" finds nothing.
    assert c.call("XAUTOCLAIM", k, "g", "carol", "0", "(1-0", "COUNT", "1") == [
        "5-0", [E("3-0", "f", "3")], []]
    assert c.call("XAUTOCLAIM", k, "g", "carol", "0", "4", "COUNT", "1") == [
        "0-0", [E("5-0", "f", "5")], []]
    assert c.call("XAUTOCLAIM", k, "g", "carol", "0", "+") == ["0-0", [], []]
    assert c.call("XAUTOCLAIM", k, "g", "carol", "-5", "-") == [
        "0-0", [E("1-0", "f", "1"), E("3-0", "f", "3"), E("5-0", "f", "5")], []]
    assert c.call("XPENDING", k, "g") == [3, "1-0", "5-0", [["carol", "3"]]]


def test_xautoclaim_justid_and_errors(c):
    k = claim_setup(c, n=3)
    assert c.cmd("XAUTOCLAIM", k, "g", "bob", "0", "0", "JUSTID") == (
        b"*3\r\n$3\r\n0-0\r\n*3\r\n$3\r\n1-0\r\n$3\r\n2-0\r\n$3\r\n3-0\r\n*0\r\n")
    # JUSTID leaves the delivery counts.
    assert pel(c, k, "g", "-", "+", "10") == [
        ["1-0", "bob", 1], ["2-0", "bob", 1], ["3-0", "bob", 1]]
    count_err = "ERR COUNT must be > 0"
    assert c.err("XAUTOCLAIM", k, "g", "bob", "0", "0", "COUNT", "0") == count_err
    assert c.err("XAUTOCLAIM", k, "g", "bob", "0", "0", "COUNT", "-1") == count_err
    assert c.err("XAUTOCLAIM", k, "g", "bob", "0", "0", "COUNT", "abc") == count_err
    assert c.err("XAUTOCLAIM", k, "g", "bob", "abc", "0") == (
        "ERR Invalid min-idle-time argument for XAUTOCLAIM")
    assert c.err("XAUTOCLAIM", k, "g", "bob", "0", "abc") == INVALID_ID
    assert c.err("XAUTOCLAIM", k, "g", "bob", "0", "0", "FOO") == SYNTAX
    assert c.err("XAUTOCLAIM", k, "nog", "bob", "0", "0") == (
        "NOGROUP No such key '%s' or consumer group 'nog'" % k)
    missing = uniq()
    assert c.err("XAUTOCLAIM", missing, "g", "bob", "0", "0") == (
        "NOGROUP No such key '%s' or consumer group 'g'" % missing)
    assert c.err("XAUTOCLAIM", k, "g", "bob", "0") == (
        "ERR wrong number of arguments for 'xautoclaim' command")
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XAUTOCLAIM", s, "g", "bob", "0", "0") == WRONGTYPE


def test_xinfo_groups_entries_read_and_lag(c):
    """The numbers Redis 7.0 gives while a group reads past a deletion: exact while no
    deleted id lies ahead of the group, nil while one does, exact again at the end."""
    k = uniq()
    fill(c, k, 5)
    c.call("XGROUP", "CREATE", k, "g", "0")
    assert c.call("XINFO", "GROUPS", k) == [
        ["name", "g", "consumers", 0, "pending", 0, "last-delivered-id", "0-0",
         "entries-read", None, "lag", 5]]
    c.call("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", k, ">")
    assert c.call("XINFO", "GROUPS", k) == [
        ["name", "g", "consumers", 1, "pending", 2, "last-delivered-id", "2-0",
         "entries-read", 2, "lag", 3]]
    c.call("XDEL", k, "5-0")  # a deletion ahead of the group: the lag is unknown
    assert lag_view(c, k) == {"g": ("2-0", 2, None)}
    c.call("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", k, ">")
    assert lag_view(c, k) == {"g": ("3-0", None, None)}
    c.call("XADD", k, "6-0", "f", "6")
    assert lag_view(c, k) == {"g": ("3-0", None, None)}
    assert ids(c.call("XREADGROUP", "GROUP", "g", "c2", "STREAMS", k, ">")[0][1]) == [
        "4-0", "6-0"]
    assert c.call("XINFO", "GROUPS", k) == [
        ["name", "g", "consumers", 2, "pending", 5, "last-delivered-id", "6-0",
         "entries-read", 6, "lag", 0]]
    # Deletions behind the group change nothing.
    c.call("XDEL", k, "1-0")
    assert lag_view(c, k) == {"g": ("6-0", 6, 0)}
    c.call("XADD", k, "7-0", "f", "7")
    c.call("XADD", k, "8-0", "f", "8")
    assert lag_view(c, k) == {"g": ("6-0", 6, 2)}
    c.call("XACK", k, "g", "2-0", "3-0")
    assert group(c, k, "g")["pending"] == 3


def test_xinfo_groups_lag_after_a_deletion_behind_every_entry(c):
    k = uniq()
    fill(c, k, 4)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", k, ">")
    c.call("XDEL", k, "1-0")  # before the first entry left: no gap ahead
    assert lag_view(c, k) == {"g": ("2-0", 2, 2)}
    c.call("XGROUP", "CREATE", k, "h", "0")
    # Entries-read estimated from the first entry: 4 added, 3 there.
    assert lag_view(c, k)["h"] == ("0-0", None, 3)
    c.call("XREADGROUP", "GROUP", "h", "c", "COUNT", "1", "STREAMS", k, ">")
    assert lag_view(c, k)["h"] == ("2-0", 2, 2)


def test_xinfo_consumers(c):
    k = claim_setup(c, n=3)
    c.call("XGROUP", "CREATECONSUMER", k, "g", "zed")
    got = c.call("XINFO", "CONSUMERS", k, "g")
    assert [x[::2] for x in got] == [["name", "pending", "idle"]] * 2
    assert [(as_dict(x)["name"], as_dict(x)["pending"]) for x in got] == [("alice", 3), ("zed", 0)]
    for x in got:
        assert isinstance(as_dict(x)["idle"], int) and 0 <= as_dict(x)["idle"] < 60000
    assert c.err("XINFO", "CONSUMERS", k, "nog") == (
        "NOGROUP No such consumer group 'nog' for key name '%s'" % k)
    assert c.err("XINFO", "CONSUMERS", uniq(), "g") == "ERR no such key"


def test_xinfo_stream(c):
    k = uniq()
    fill(c, k, 3)
    c.call("XDEL", k, "2-0")
    c.call("XGROUP", "CREATE", k, "g", "0")
    info = c.call("XINFO", "STREAM", k)
    assert info[::2] == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                         "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                         "groups", "first-entry", "last-entry"]
    d = as_dict(info)
    assert isinstance(d.pop("radix-tree-keys"), int)
    assert isinstance(d.pop("radix-tree-nodes"), int)
    assert d == {"length": 2, "last-generated-id": "3-0", "max-deleted-entry-id": "2-0",
                 "entries-added": 3, "recorded-first-entry-id": "1-0", "groups": 1,
                 "first-entry": E("1-0", "f", "1"), "last-entry": E("3-0", "f", "3")}
    c.call("XDEL", k, "1-0")
    d = as_dict(c.call("XINFO", "STREAM", k))
    assert (d["recorded-first-entry-id"], d["max-deleted-entry-id"], d["first-entry"]) == (
        "3-0", "2-0", E("3-0", "f", "3"))
    # Trimming does not record a deleted id; an empty stream has nil first/last entries.
    t = uniq()
    fill(c, t, 5)
    c.call("XTRIM", t, "MAXLEN", "0")
    raw = c.cmd("XINFO", "STREAM", t)
    d = as_dict(parse(raw))
    assert (d["length"], d["last-generated-id"], d["max-deleted-entry-id"], d["entries-added"],
            d["recorded-first-entry-id"], d["groups"], d["first-entry"], d["last-entry"]) == (
        0, "5-0", "0-0", 5, "0-0", 0, None, None)
    assert raw.endswith(b"$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n")
    assert c.err("XINFO", "STREAM", uniq()) == "ERR no such key"
    assert c.err("XINFO", "STREAM", k, "FOO") == (
        "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")
    s = uniq()
    c.call("SET", s, "v")
    assert c.err("XINFO", "STREAM", s) == WRONGTYPE
    assert c.err("XINFO", "GROUPS", s) == WRONGTYPE
    assert c.err("XINFO", "GROUPS", uniq()) == "ERR no such key"


def full_shape(info):
    """XINFO STREAM FULL with the times and radix tree counters replaced by their type."""
    d = as_dict(info)
    assert info[::2] == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                         "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                         "entries", "groups"]
    d["radix-tree-keys"] = type(d["radix-tree-keys"])
    d["radix-tree-nodes"] = type(d["radix-tree-nodes"])
    gs = []
    for g in d["groups"]:
        assert g[::2] == ["name", "last-delivered-id", "entries-read", "lag", "pel-count",
                          "pending", "consumers"]
        gd = as_dict(g)
        gd["pending"] = [[p[0], p[1], type(p[2]), p[3]] for p in gd["pending"]]
        cs = []
        for cons in gd["consumers"]:
            assert cons[::2] == ["name", "seen-time", "pel-count", "pending"]
            cd = as_dict(cons)
            cd["seen-time"] = type(cd["seen-time"])
            cd["pending"] = [[p[0], type(p[1]), p[2]] for p in cd["pending"]]
            cs.append(cd)
        gd["consumers"] = cs
        gs.append(gd)
    d["groups"] = gs
    return d


def full_fixture(c, k):
    fill(c, k, 3)
    c.call("XDEL", k, "2-0")
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("XGROUP", "CREATE", k, "h", "$")
    c.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", k, ">")
    c.call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", k, ">")
    c.call("XGROUP", "CREATECONSUMER", k, "g", "carol")


FULL_WANT = {
    "length": 2, "radix-tree-keys": int, "radix-tree-nodes": int,
    "last-generated-id": "3-0", "max-deleted-entry-id": "2-0", "entries-added": 3,
    "recorded-first-entry-id": "1-0",
    "entries": [E("1-0", "f", "1"), E("3-0", "f", "3")],
    "groups": [
        {"name": "g", "last-delivered-id": "3-0", "entries-read": 3, "lag": 0,
         "pel-count": 2,
         "pending": [["1-0", "alice", int, 1], ["3-0", "bob", int, 1]],
         "consumers": [
             {"name": "alice", "seen-time": int, "pel-count": 1, "pending": [["1-0", int, 1]]},
             {"name": "bob", "seen-time": int, "pel-count": 1, "pending": [["3-0", int, 1]]},
             {"name": "carol", "seen-time": int, "pel-count": 0, "pending": []}]},
        {"name": "h", "last-delivered-id": "3-0", "entries-read": None, "lag": 0,
         "pel-count": 0, "pending": [], "consumers": []}]}


def test_xinfo_stream_full(c):
    k = uniq()
    full_fixture(c, k)
    info = c.call("XINFO", "STREAM", k, "FULL")
    assert full_shape(info) == FULL_WANT
    # The times are unix times in ms.
    sec, _ = c.call("TIME")
    alice = as_dict(as_dict(info)["groups"][0])["consumers"][0]
    assert abs(as_dict(alice)["seen-time"] - int(sec) * 1000) < 60000
    assert full_shape(c.call("XINFO", "STREAM", k, "FULL", "COUNT", "0")) == FULL_WANT
    # COUNT limits the entries and each group's PEL list.
    one = full_shape(c.call("XINFO", "STREAM", k, "FULL", "COUNT", "1"))
    assert one["entries"] == [E("1-0", "f", "1")]
    assert one["groups"][0]["pending"] == [["1-0", "alice", int, 1]]
    assert one["groups"][0]["pel-count"] == 2
    assert c.err("XINFO", "STREAM", k, "FULL", "COUNT", "abc") == NOT_INT


# ================================================================ 5. a consumer that dies

def test_entries_of_a_killed_consumer_are_reclaimed(conns):
    a, b, admin = conns(), conns(), conns()
    k = uniq()
    fill(admin, k, 3)
    admin.call("XGROUP", "CREATE", k, "g", "0")
    assert ids(a.call("XREADGROUP", "GROUP", "g", "A", "STREAMS", k, ">")[0][1]) == [
        "1-0", "2-0", "3-0"]
    a_id = a.call("CLIENT", "ID")
    assert admin.call("CLIENT", "KILL", "ID", str(a_id)) == 1
    assert is_closed(a)
    # The entries stay pending for A until someone claims them.
    assert admin.call("XPENDING", k, "g") == [3, "1-0", "3-0", [["A", "3"]]]
    assert b.call("XAUTOCLAIM", k, "g", "B", "0", "0-0", "COUNT", "10") == [
        "0-0", [E("1-0", "f", "1"), E("2-0", "f", "2"), E("3-0", "f", "3")], []]
    assert admin.call("XPENDING", k, "g") == [3, "1-0", "3-0", [["B", "3"]]]
    assert b.call("XACK", k, "g", "1-0", "2-0", "3-0") == 3
    assert admin.cmd("XPENDING", k, "g") == b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    assert admin.call("XPENDING", k, "g", "-", "+", "10") == []
    # A is still a consumer of the group, with nothing pending.
    assert [(as_dict(x)["name"], as_dict(x)["pending"])
            for x in admin.call("XINFO", "CONSUMERS", k, "g")] == [("A", 0), ("B", 0)]


# ================================================================ 6. persistence

@pytest.fixture
def data_dir():
    d = tempfile.mkdtemp(prefix="strata-streams-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def stream_image(c, k):
    """The deterministic state of a stream and its groups."""
    return {
        "entries": c.call("XRANGE", k, "-", "+"),
        "full": full_shape(c.call("XINFO", "STREAM", k, "FULL")),
        "groups": c.call("XINFO", "GROUPS", k),
        "pending": c.call("XPENDING", k, "g"),
        "pel": pel(c, k, "g", "-", "+", "100"),
        "pel-h": pel(c, k, "h", "-", "+", "100"),
    }


def test_streams_survive_a_restart(data_dir, server_factory):
    s = server_factory(data_dir=data_dir)
    c = Conn(s.port, timeout=10)
    k = "persisted"
    try:
        full_fixture(c, k)
        fill(c, k, 3, start=4)  # 4-0..6-0
        c.call("XDEL", k, "5-0")
        c.call("XREADGROUP", "GROUP", "h", "dan", "STREAMS", k, ">")
        c.call("XCLAIM", k, "g", "bob", "0", "1-0", "RETRYCOUNT", "4", "JUSTID")
        e = "empty"
        c.call("XADD", e, "MAXLEN", "0", "9-9", "f", "v")
        c.call("XGROUP", "CREATE", e, "g", "$")
        want = stream_image(c, k)
        want_empty = (c.call("XINFO", "STREAM", e)[6:], c.call("XINFO", "GROUPS", e))
        want_seen = {as_dict(x)["name"]: as_dict(x)["idle"]
                     for x in c.call("XINFO", "CONSUMERS", k, "g")}
        assert want["pel"] == [["1-0", "bob", 4], ["3-0", "bob", 1]]
        assert c.call("SAVE") == "OK"
    finally:
        c.close()
    s.stop()
    s2 = server_factory(data_dir=data_dir)
    c2 = Conn(s2.port, timeout=10)
    try:
        assert c2.call("TYPE", k) == "stream"
        assert stream_image(c2, k) == want
        assert (c2.call("XINFO", "STREAM", e)[6:], c2.call("XINFO", "GROUPS", e)) == want_empty
        # Idle times carry on from the saved times (they do not restart at 0 or go back).
        for x in c2.call("XINFO", "CONSUMERS", k, "g"):
            assert as_dict(x)["idle"] >= want_seen[as_dict(x)["name"]]
        # The restored groups keep working.
        assert c2.call("XADD", k, "7-0", "f", "7") == "7-0"
        assert c2.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", k, ">") == [
            [k, [E("4-0", "f", "4"), E("6-0", "f", "6"), E("7-0", "f", "7")]]]
        assert c2.err("XADD", e, "9-9", "f", "v") == XADD_SMALLER
    finally:
        c2.close()


def test_dump_restore_round_trip(c):
    k = uniq()
    full_fixture(c, k)
    payload = c.call("DUMP", k).encode("latin-1")
    dst = uniq()
    assert c.call("RESTORE", dst, "0", payload) == "OK"
    assert c.call("TYPE", dst) == "stream"
    assert c.call("XRANGE", dst, "-", "+") == c.call("XRANGE", k, "-", "+")
    assert c.call("XINFO", "GROUPS", dst) == c.call("XINFO", "GROUPS", k)
    assert full_shape(c.call("XINFO", "STREAM", dst, "FULL")) == FULL_WANT
    assert pel(c, dst, "g", "-", "+", "10") == pel(c, k, "g", "-", "+", "10")
    assert c.err("RESTORE", dst, "0", payload) == "BUSYKEY Target key name already exists."
    assert c.call("RESTORE", dst, "0", payload, "REPLACE") == "OK"
    assert c.call("DUMP", uniq()) is None


# ================================================================ 7. RESP3

def test_resp3_xrange_and_xread(conns):
    c = conns(resp3=True)
    a, b = uniq("a"), uniq("b")
    fill(c, a, 2)
    c.call("XADD", b, "1-5", "g", "1")
    # XRANGE is an array of [id, [field, value]] pairs, as in RESP2.
    assert c.cmd("XRANGE", a, "-", "+", "COUNT", "1") == (
        b"*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n")
    # XREAD is a map: stream name to its entries.
    A, B = a.encode(), b.encode()
    assert c.cmd("XREAD", "STREAMS", a, b, "1", "0") == (
        b"%2\r\n$" + str(len(A)).encode() + b"\r\n" + A + b"\r\n"
        b"*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n"
        b"$" + str(len(B)).encode() + b"\r\n" + B + b"\r\n"
        b"*1\r\n*2\r\n$3\r\n1-5\r\n*2\r\n$1\r\ng\r\n$1\r\n1\r\n")
    # Nothing to read, and COUNT 0 on a range: RESP3 nulls.
    assert c.cmd("XREAD", "STREAMS", a, "$") == b"_\r\n"
    assert c.cmd("XREAD", "BLOCK", "50", "STREAMS", a, "$") == b"_\r\n"
    assert c.cmd("XRANGE", a, "-", "+", "COUNT", "0") == b"_\r\n"
    c.call("XGROUP", "CREATE", a, "g", "0")
    assert c.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", a, ">") == (
        b"%1\r\n$" + str(len(A)).encode() + b"\r\n" + A + b"\r\n"
        b"*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n")


def test_resp3_xread_block_wakeup_is_a_map(conns):
    reader, writer = conns(resp3=True), conns()
    a = uniq()
    reader.send_cmd("XREAD", "BLOCK", "5000", "STREAMS", a, "$")
    wait_blocked(writer, 1)
    writer.call("XADD", a, "4-4", "k", "v")
    A = a.encode()
    assert reader.read_reply() == (
        b"%1\r\n$" + str(len(A)).encode() + b"\r\n" + A + b"\r\n"
        b"*1\r\n*2\r\n$3\r\n4-4\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n")


def test_resp3_xinfo_replies_are_maps(conns):
    c = conns(resp3=True)
    k = uniq()
    c.call("XADD", k, "1-5", "g", "1")
    c.call("XGROUP", "CREATE", k, "g", "$")
    raw = c.cmd("XINFO", "STREAM", k)
    assert raw.startswith(b"%10\r\n$6\r\nlength\r\n:1\r\n$15\r\nradix-tree-keys\r\n:")
    info = parse(raw)
    assert list(info) == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                          "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                          "groups", "first-entry", "last-entry"]
    assert info["first-entry"] == E("1-5", "g", "1")
    assert c.cmd("XINFO", "GROUPS", k) == (
        b"*1\r\n%6\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n"
        b"$17\r\nlast-delivered-id\r\n$3\r\n1-5\r\n$12\r\nentries-read\r\n_\r\n"
        b"$3\r\nlag\r\n:0\r\n")
    c.call("XGROUP", "CREATECONSUMER", k, "g", "x")
    cons = parse(c.cmd("XINFO", "CONSUMERS", k, "g"))
    assert list(cons[0]) == ["name", "pending", "idle"]
    full = parse(c.cmd("XINFO", "STREAM", k, "FULL"))
    assert isinstance(full, dict) and isinstance(full["groups"][0], dict)
    assert isinstance(full["groups"][0]["consumers"][0], dict)
    # XPENDING stays an array, its empty parts RESP3 nulls.
    assert c.cmd("XPENDING", k, "g") == b"*4\r\n:0\r\n_\r\n_\r\n_\r\n"


# ================================================================ 8. MULTI, EVAL

def test_multi_exec(c):
    k = uniq()
    c.call("XADD", k, "1-1", "f", "v")
    assert c.call("MULTI") == "OK"
    for args in (("XADD", k, "2-1", "g", "w"), ("XRANGE", k, "-", "+"),
                 ("XREAD", "BLOCK", "0", "STREAMS", k, "$"), ("XADD", k, "1-0", "x", "y"),
                 ("XLEN", k)):
        assert c.cmd(*args) == b"+QUEUED\r\n"
    # A blocking read in a transaction does not block; the failing XADD fails alone.
    assert c.cmd("EXEC") == (
        b"*5\r\n$3\r\n2-1\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
        b"*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\ng\r\n$1\r\nw\r\n*-1\r\n"
        b"-" + XADD_SMALLER.encode() + b"\r\n:2\r\n")
    # An arity error while queueing aborts the transaction.
    c.call("MULTI")
    assert c.cmd("XADD", k, "9-0", "x", "y") == b"+QUEUED\r\n"
    assert c.err("XADD", k, "*", "x") == XADD_ARITY
    assert c.err("EXEC") == "EXECABORT Transaction discarded because of previous errors."
    assert c.call("XLEN", k) == 2


def test_multi_exec_group_reads(c):
    k = uniq()
    fill(c, k, 2)
    c.call("XGROUP", "CREATE", k, "g", "0")
    c.call("MULTI")
    c.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", k, ">")
    c.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", k, ">")
    c.call("XACK", k, "g", "1-0")
    assert c.call("EXEC") == [[[k, [E("1-0", "f", "1"), E("2-0", "f", "2")]]], None, 1]
    assert c.call("XPENDING", k, "g")[:3] == [1, "2-0", "2-0"]


def script_err(body, text, line=1):
    return "%s script: %s, on @user_script:%d." % (
        text, hashlib.sha1(body.encode()).hexdigest(), line)


def test_eval_xadd_and_xrange(c):
    k = uniq()
    body = ("return {redis.call('XADD', KEYS[1], '5-5', 'a', 'b'), "
            "redis.call('XRANGE', KEYS[1], '-', '+'), redis.call('XLEN', KEYS[1])}")
    assert c.cmd("EVAL", body, "1", k) == (
        b"*3\r\n$3\r\n5-5\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n:1\r\n")
    body = "return redis.pcall('XADD', KEYS[1], '1-1', 'a', 'b')"
    assert c.err("EVAL", body, "1", k) == XADD_SMALLER
    body = "return redis.call('XREAD', 'BLOCK', '0', 'STREAMS', KEYS[1], '$')"
    assert c.err("EVAL", body, "1", k) == script_err(
        body, "ERR XREAD command is not allowed with BLOCK option from scripts")
    # Without BLOCK it reads as usual; nothing new is a nil (false in Lua).
    body = ("local r = redis.call('XREAD', 'STREAMS', KEYS[1], '$') "
            "if r == false then return 'none' end return r")
    assert c.call("EVAL", body, "1", k) == "none"
    body = ("redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '0') "
            "return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '>')")
    assert c.call("EVAL", body, "1", k) == [[k, [E("5-5", "a", "b")]]]
    assert c.call("XPENDING", k, "g")[0] == 1


def test_one_xadd_wakes_a_reader_queued_behind_waiters_it_cannot_serve(conns):
    """Two consumers of one group wait, then an XREAD: one XADD serves the first
    consumer and the XREAD (the second consumer has nothing left and keeps waiting; it
    must not stop the queue from being served)."""
    c1, c2, r, writer = conns(), conns(), conns(), conns()
    a = uniq()
    writer.call("XGROUP", "CREATE", a, "g", "$", "MKSTREAM")
    c1.send_cmd("XREADGROUP", "GROUP", "g", "one", "BLOCK", "5000", "STREAMS", a, ">")
    wait_blocked(writer, 1)
    c2.send_cmd("XREADGROUP", "GROUP", "g", "two", "BLOCK", "5000", "STREAMS", a, ">")
    wait_blocked(writer, 2)
    r.send_cmd("XREAD", "BLOCK", "5000", "STREAMS", a, "$")
    wait_blocked(writer, 3)
    writer.call("XADD", a, "1-1", "f", "1")
    assert c1.value() == [[a, [E("1-1", "f", "1")]]]
    assert r.value() == [[a, [E("1-1", "f", "1")]]]
    assert c2.idle(0.2)
    writer.call("XADD", a, "2-1", "f", "2")
    assert c2.value() == [[a, [E("2-1", "f", "2")]]]


def test_xreadgroup_creates_its_consumer_only_when_it_serves_it(c):
    """As Redis 7.0: reading nothing new leaves no consumer behind; the first read that
    delivers creates it (and publishes xgroup-createconsumer)."""
    k = uniq()
    c.call("XGROUP", "CREATE", k, "g", "$", "MKSTREAM")
    assert c.call("XREADGROUP", "GROUP", "g", "idle", "STREAMS", k, ">") is None
    assert c.call("XINFO", "CONSUMERS", k, "g") == []
    c.call("XADD", k, "1-1", "f", "v")
    c.call("XREADGROUP", "GROUP", "g", "worker", "STREAMS", k, ">")
    assert [as_dict(x)["name"] for x in c.call("XINFO", "CONSUMERS", k, "g")] == ["worker"]
