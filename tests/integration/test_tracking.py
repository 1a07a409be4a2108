"""Client-side caching: CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR,
CLIENT TRACKINGINFO and the invalidation messages.

Covered: RESP3 `invalidate` pushes (exact bytes) for keys a tracking client read and
another client then modified (strings, lists, hashes, sets, sorted sets, DEL, INCR,
APPEND, EXPIRE, an expiry time in the past, RENAME's source and destination), one
invalidation per read, no invalidation for keys not read, for keys only written, or for
writes that change nothing; multi-key reads registering every key; the client's own writes
(the push comes right after the write's reply, before the next pipelined reply); NOLOOP;
FLUSHALL / FLUSHDB as an invalidation with a null key list (to every tracking client, even
with NOLOOP and even from another database); expiry (active or lazy) as an invalidation;
databases being ignored (a key read in db 0 is invalidated by a write in db 1); RESP2 with
REDIRECT to a client subscribed to __redis__:invalidate (pubsub `message` frames, the
flush as a null bulk), REDIRECT to a RESP3 client, REDIRECT errors, a broken redirect
(the `tracking-redir-broken` push in RESP3, nothing in RESP2, the broken_redirect flag
and the R flag of CLIENT LIST, both set lazily); BCAST with and without PREFIX (batched
invalidations per prefix, no reads needed, NOLOOP, flushes, prefixes that accumulate);
every CLIENT TRACKING argument error and mode-switch error; OPTIN and OPTOUT with
CLIENT CACHING (one command only, MULTI/EXEC as that command, errors); CLIENT GETREDIR;
CLIENT TRACKINGINFO's exact RESP2 and RESP3 replies; tracking-table-max-keys (evicted
entries are invalidated although nobody wrote them); the INFO fields tracking_clients,
tracking_total_keys, tracking_total_items and tracking_total_prefixes; CLIENT LIST's t, B,
R flags and redir= field; MULTI/EXEC and EVAL reads being tracked; RESET turning tracking
off; HELLO 2/3 while tracking; a tracking client disconnecting after reading many keys.

Redis 7.0 quirks kept as they are (each marked where asserted): the null of a flush
invalidation follows the tracking client's protocol, not the receiver's, when the two
differ under REDIRECT; CLIENT subcommands do not use up CLIENT CACHING's flag; a broken
redirect is noticed only when an invalidation is due; a closed client's table entries stay
counted in INFO until their keys are touched.

Every expected value here was checked against redis-server 7.0. The installed redis-py
speaks only RESP2, so everything goes through a raw socket (Conn below) with every read
bounded by the socket timeout. "Nothing arrives" is checked with a PING round trip (a
server queues the invalidations a write causes before that write's reply goes out, so
they would come before the PONG) plus a short wait for stragglers.
"""
import select
import time

import pytest

from conftest import TARGET, THREADS, RawConnection
from helpers import parse, parse_client_line, resp, wait_for

OK = b"+OK\r\n"
PONG = b"+PONG\r\n"
PONG_SUBSCRIBED = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"  # PING in RESP2 subscribed mode
QUEUED = b"+QUEUED\r\n"
QUIET_S = 0.02

INVALIDATE_CHANNEL = "__redis__:invalidate"
MESSAGE_HEAD = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
# FLUSHALL / FLUSHDB: the whole cache is stale, the key list is null.
INV_ALL = b">2\r\n$10\r\ninvalidate\r\n_\r\n"
MSG_ALL = MESSAGE_HEAD + b"$-1\r\n"  # RESP2: a null bulk string, not a null array

NO_SUCH_REDIRECT = b"-ERR The client ID you want redirect to does not exist\r\n"
PREFIX_NEEDS_BCAST = b"-ERR PREFIX option requires BCAST mode to be enabled\r\n"
OPT_WITH_BCAST = b"-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"
OPTIN_AND_OPTOUT = b"-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"
SWITCH_BCAST = (b"-ERR You can't switch BCAST mode on/off before disabling tracking for "
                b"this client, and then re-enabling it with a different mode.\r\n")
SWITCH_OPT = (b"-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for "
              b"this client, and then re-enabling it with a different mode.\r\n")
CACHING_NEEDS_MODE = (b"-ERR CLIENT CACHING can be called only when the client is in "
                      b"tracking mode with OPTIN or OPTOUT mode enabled\r\n")
CACHING_YES_NEEDS_OPTIN = (b"-ERR CLIENT CACHING YES is only valid when tracking is "
                           b"enabled in OPTIN mode.\r\n")
CACHING_NO_NEEDS_OPTOUT = (b"-ERR CLIENT CACHING NO is only valid when tracking is "
                           b"enabled in OPTOUT mode.\r\n")
SYNTAX = b"-ERR syntax error\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"


def _bulk(x):
    if isinstance(x, str):
        x = x.encode()
    return b"$%d\r\n%s\r\n" % (len(x), x)


def inv(*keys):
    """The RESP3 push invalidating keys."""
    return (b">2\r\n$10\r\ninvalidate\r\n*%d\r\n" % len(keys)
            + b"".join(_bulk(k) for k in keys))


def msg(*keys):
    """The RESP2 pubsub message on __redis__:invalidate invalidating keys."""
    return MESSAGE_HEAD + b"*%d\r\n" % len(keys) + b"".join(_bulk(k) for k in keys)


def broken(cid):
    """The RESP3 push telling a client its redirect target is gone."""
    return b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % cid


def overlap(a, b, existing=False):
    return (b"-ERR Prefix '%s' overlaps with %s prefix '%s'. Prefixes for a single client "
            b"must not overlap.\r\n"
            % (a.encode(), b"an existing" if existing else b"another provided", b.encode()))


def trackinginfo(flags, redirect, prefixes=(), resp3=True):
    """The exact CLIENT TRACKINGINFO reply."""
    if resp3:
        out = b"%3\r\n$5\r\nflags\r\n~" + b"%d\r\n" % len(flags)
    else:
        out = b"*6\r\n$5\r\nflags\r\n*" + b"%d\r\n" % len(flags)
    out += b"".join(_bulk(f) for f in flags)
    out += b"$8\r\nredirect\r\n:%d\r\n" % redirect
    out += b"$8\r\nprefixes\r\n*%d\r\n" % len(prefixes) + b"".join(_bulk(p) for p in prefixes)
    return out


def is_push(frame):
    return frame[:1] == b">" or frame.startswith(MESSAGE_HEAD)


class Conn(RawConnection):
    """A raw connection. cmd() returns the raw bytes of a command's reply, setting aside
    the pushes (and RESP2 invalidation messages) that arrive before it; next_push() waits
    for the next one of those."""

    is_redis = TARGET == "redis"
    threads = THREADS

    def __init__(self, port, resp3=True):
        super().__init__(port, timeout=5)
        self.pushes = []
        if resp3:
            reply = self.call("HELLO", "3")
            assert isinstance(reply, dict) and reply["proto"] == 3, reply

    def reply(self):
        while True:
            frame = self.read_reply()
            if not is_push(frame):
                return frame
            self.pushes.append(frame)

    def cmd(self, *args):
        self.send(resp(*args))
        return self.reply()

    def call(self, *args):
        return parse(self.cmd(*args))

    def id(self):
        return self.call("CLIENT", "ID")

    def track(self, *opts):
        assert self.cmd("CLIENT", "TRACKING", "ON", *opts) == OK
        return self

    def next_push(self):
        if self.pushes:
            return self.pushes.pop(0)
        frame = self.read_reply()
        assert is_push(frame), frame
        return frame

    def assert_quiet(self):
        """Nothing was pushed: a PING round trip, then a short wait for stragglers."""
        assert self.cmd("PING") in (PONG, PONG_SUBSCRIBED)
        stray, self.pushes = self.pushes, []
        if not self.buf:
            readable, _, _ = select.select([self.sock], [], [], QUIET_S)
            if readable:
                self._fill()
        while self.buf:
            stray.append(self.read_reply())
        assert stray == []

    def expect(self, *frames):
        """The next pushes are exactly frames, and nothing follows them."""
        got = [self.next_push() for _ in frames]
        assert got == list(frames)
        self.assert_quiet()

    def expect_keys(self, *keys):
        """The invalidations of one command that changed several keys: every key once, in
        any order. Redis sends them in one message per command (BCAST) or one per key;
        strata sends the keys each shard changed in that shard's own message, so keys on
        different shards may come in separate messages, in either order."""
        want, got = sorted(keys), []
        while len(got) < len(want):
            frame = parse(self.next_push())
            body = frame[2] if frame[0] == "message" else frame[1]
            got.extend(body)
        assert sorted(got) == want
        self.assert_quiet()


@pytest.fixture
def conn(server):
    """conn(resp3=True, srv=None): a new raw connection to the module's server (or srv),
    after HELLO 3 unless resp3 is false. Closed after the test."""
    made = []

    def make(resp3=True, srv=None):
        c = Conn((srv or server).port, resp3=resp3)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def info(c, section):
    """INFO section's fields as {name: str}, read on Conn c."""
    text = c.call("INFO", section)
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def tracking_stats(c):
    s = info(c, "stats")
    out = {k: int(s[k]) for k in ("tracking_total_keys", "tracking_total_items",
                                  "tracking_total_prefixes")}
    out["tracking_clients"] = int(info(c, "clients")["tracking_clients"])
    return out


def client_fields(observer, cid):
    line = observer.call("CLIENT", "LIST", "ID", cid)
    return parse_client_line(line.strip()) if line.strip() else None


def wait_client_gone(observer, cid):
    wait_for(lambda: client_fields(observer, cid) is None, what="client %d to go" % cid)


# ================================================================ 1. basics

def test_read_then_other_client_write_pushes_invalidate(conn):
    a, b = conn(), conn(resp3=False)
    a.track()
    assert a.cmd("GET", "basic:k") == b"_\r\n"
    assert b.cmd("SET", "basic:k", "1") == OK
    assert a.next_push() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\nbasic:k\r\n"
    a.assert_quiet()
    # Invalidated once: the key is no longer tracked until read again.
    assert b.cmd("SET", "basic:k", "2") == OK
    a.assert_quiet()
    assert a.cmd("GET", "basic:k") == b"$1\r\n2\r\n"
    # Reading twice still means one invalidation.
    assert a.cmd("GET", "basic:k") == b"$1\r\n2\r\n"
    assert b.cmd("SET", "basic:k", "3") == OK
    a.expect(inv("basic:k"))


MODIFICATIONS = [
    # (setup by the other client, the tracking client's read, the other client's write)
    ("set", [("SET", "m:k", "v")], ("GET", "m:k"), ("SET", "m:k", "w")),
    ("set-new", [], ("GET", "m:k"), ("SET", "m:k", "w")),
    ("del", [("SET", "m:k", "v")], ("GET", "m:k"), ("DEL", "m:k")),
    ("incr", [], ("GET", "m:k"), ("INCR", "m:k")),
    ("append", [("SET", "m:k", "v")], ("STRLEN", "m:k"), ("APPEND", "m:k", "x")),
    ("expire", [("SET", "m:k", "v")], ("GET", "m:k"), ("EXPIRE", "m:k", "100")),
    ("expire-negative", [("SET", "m:k", "v")], ("GET", "m:k"), ("EXPIRE", "m:k", "-1")),
    ("pexpireat-past", [("SET", "m:k", "v")], ("TTL", "m:k"), ("PEXPIREAT", "m:k", "1")),
    ("exists", [], ("EXISTS", "m:k"), ("SET", "m:k", "v")),
    ("type", [], ("TYPE", "m:k"), ("SET", "m:k", "v")),
    ("lpush", [], ("LRANGE", "m:k", "0", "-1"), ("LPUSH", "m:k", "x")),
    ("lpop", [("RPUSH", "m:k", "a", "b")], ("LLEN", "m:k"), ("LPOP", "m:k")),
    ("hset", [], ("HGET", "m:k", "f"), ("HSET", "m:k", "f", "v")),
    ("hdel", [("HSET", "m:k", "f", "v", "g", "w")], ("HGETALL", "m:k"), ("HDEL", "m:k", "g")),
    ("sadd", [], ("SCARD", "m:k"), ("SADD", "m:k", "x")),
    ("zadd", [], ("ZSCORE", "m:k", "x"), ("ZADD", "m:k", "1", "x")),
    ("rename-source", [("SET", "m:k", "v")], ("GET", "m:k"), ("RENAME", "m:k", "m:other")),
    ("rename-destination", [("SET", "m:other", "v")], ("GET", "m:k"),
     ("RENAME", "m:other", "m:k")),
]


@pytest.mark.parametrize("setup,read,write", [m[1:] for m in MODIFICATIONS],
                         ids=[m[0] for m in MODIFICATIONS])
def test_modification_invalidates_key_read_before(conn, setup, read, write):
    a, b = conn(), conn(resp3=False)
    for c in setup:
        assert not b.cmd(*c).startswith(b"-")
    a.track()
    assert not a.cmd(*read).startswith(b"-")
    assert not b.cmd(*write).startswith(b"-")
    a.expect(inv("m:k"))


def test_writes_that_change_nothing_do_not_invalidate(conn):
    a, b = conn(), conn(resp3=False)
    assert b.cmd("SET", "noop:set", "v") == OK
    a.track()
    a.cmd("GET", "noop:missing")
    a.cmd("GET", "noop:set")
    assert b.cmd("DEL", "noop:missing") == b":0\r\n"
    assert b.cmd("SET", "noop:set", "w", "NX") == b"$-1\r\n"
    assert b.cmd("RENAME", "noop:absent", "noop:missing") == b"-ERR no such key\r\n"
    a.assert_quiet()
    # Both are still tracked.
    assert b.cmd("DEL", "noop:set") == b":1\r\n"
    a.expect(inv("noop:set"))


def test_keys_not_read_are_not_invalidated(conn):
    a, b = conn(), conn(resp3=False)
    a.track()
    a.cmd("GET", "unread:read")
    assert b.cmd("SET", "unread:other", "1") == OK
    assert b.cmd("DEL", "unread:other") == b":1\r\n"
    a.assert_quiet()
    assert b.cmd("SET", "unread:read", "1") == OK
    a.expect(inv("unread:read"))


def test_write_commands_do_not_register_keys(conn):
    a, b = conn(), conn(resp3=False)
    a.track("NOLOOP")
    assert a.cmd("SET", "wr:k", "1") == OK
    assert a.cmd("INCR", "wr:n") == b":1\r\n"
    assert a.cmd("LPUSH", "wr:l", "x") == b":1\r\n"
    assert b.cmd("SET", "wr:k", "2") == OK
    assert b.cmd("INCR", "wr:n") == b":2\r\n"
    assert b.cmd("DEL", "wr:l") == b":1\r\n"
    a.assert_quiet()


def test_multi_key_read_registers_every_key(conn):
    a, b = conn(), conn(resp3=False)
    a.track()
    assert a.cmd("MGET", "mk:1", "mk:2", "mk:3") == b"*3\r\n_\r\n_\r\n_\r\n"
    # One push per key (Redis: in the order MSET writes them; strata: each shard's in
    # that order).
    assert b.cmd("MSET", "mk:1", "a", "mk:2", "b") == OK
    pushes = [a.next_push(), a.next_push()]
    if a.is_redis:
        assert pushes == [inv("mk:1"), inv("mk:2")]
    else:
        assert sorted(pushes) == [inv("mk:1"), inv("mk:2")]
    a.assert_quiet()
    assert b.cmd("DEL", "mk:1", "mk:3") == b":1\r\n"  # mk:3 did not exist: no push
    a.assert_quiet()
    assert b.cmd("SET", "mk:3", "c") == OK
    a.expect(inv("mk:3"))


def test_failed_read_still_registers_the_key(conn):
    a, b = conn(), conn(resp3=False)
    assert b.cmd("RPUSH", "wt:l", "x") == b":1\r\n"
    a.track()
    assert a.cmd("GET", "wt:l") == (
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
    # Redis 7.0 tracks the keys of a read-only command even when it fails at run time...
    assert b.cmd("RPUSH", "wt:l", "y") == b":2\r\n"
    a.expect(inv("wt:l"))
    # ...but not of one rejected before running (wrong arity).
    assert a.cmd("GET", "wt:s", "extra") == (
        b"-ERR wrong number of arguments for 'get' command\r\n")
    assert b.cmd("SET", "wt:s", "1") == OK
    a.assert_quiet()


def test_two_tracking_clients_both_get_the_invalidation(conn):
    a1, a2, b = conn(), conn(), conn(resp3=False)
    a1.track()
    a2.track()
    a1.cmd("GET", "two:k")
    a2.cmd("GET", "two:k")
    assert b.cmd("SET", "two:k", "1") == OK
    a1.expect(inv("two:k"))
    a2.expect(inv("two:k"))


def test_tracking_off_stops_invalidations_and_on_starts_afresh(conn):
    a, b = conn(), conn(resp3=False)
    a.track()
    a.cmd("GET", "off:k")
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    assert b.cmd("SET", "off:k", "1") == OK
    a.assert_quiet()
    assert a.cmd("GET", "off:j") == b"_\r\n"  # not tracked: tracking is off
    a.track()
    assert b.cmd("SET", "off:k", "2") == OK
    assert b.cmd("SET", "off:j", "2") == OK
    a.assert_quiet()
    a.cmd("GET", "off:k")
    assert b.cmd("SET", "off:k", "3") == OK
    a.expect(inv("off:k"))


def test_resp2_without_redirect_receives_nothing(conn):
    a, b = conn(resp3=False), conn(resp3=False)
    a.track()
    assert a.cmd("GET", "r2:k") == b"$-1\r\n"
    assert b.cmd("SET", "r2:k", "1") == OK
    assert b.cmd("FLUSHALL") == OK
    a.assert_quiet()


# ================================================================ 2. own writes

def test_own_write_invalidation_comes_after_the_reply(conn):
    a = conn()
    a.track()
    a.cmd("GET", "own:k")
    # Redis 7.0 holds the client's own invalidation until the write's reply is out.
    a.send(resp("SET", "own:k", "1"))
    assert [a.read_reply(), a.read_reply()] == [OK, inv("own:k")]
    a.assert_quiet()
    # Pipelined: the push goes right after the reply of the write that caused it,
    # before the next command's reply.
    a.cmd("GET", "own:k")
    a.send(resp("INCR", "own:k") + resp("PING"))
    got = [a.read_reply() for _ in range(3)]
    if a.is_redis or a.threads == 1:
        assert got == [b":2\r\n", inv("own:k"), PONG]
    else:
        # From another shard the invalidation travels apart from the reply: after it,
        # but possibly after the next pipelined reply too.
        assert got[0] == b":2\r\n" and sorted(got[1:]) == sorted([inv("own:k"), PONG])
    a.assert_quiet()


def test_own_invalidation_during_a_multi_shard_write_keeps_its_reply(conn):
    """The invalidations a write across shards causes for its own (RESP3) client come
    while the write is in flight: its reply still comes, first."""
    a = conn()
    a.track()
    keys = ["msw:%d" % i for i in range(8)]
    a.cmd("MGET", *keys)
    args = []
    for k in keys:
        args += [k, "v"]
    a.send(resp("MSET", *args))
    assert a.read_reply() == OK
    got = [a.next_push() for _ in keys]
    assert sorted(got) == sorted(inv(k) for k in keys)
    a.cmd("MGET", *keys)
    a.send(resp("DEL", *keys) + resp("PING"))
    assert a.read_reply() == b":8\r\n"
    assert a.reply() == PONG
    pushes = [a.next_push() for _ in keys]
    assert sorted(pushes) == sorted(inv(k) for k in keys)
    a.assert_quiet()


def test_own_write_in_exec_and_eval_invalidates_after_the_reply(conn):
    a = conn()
    a.track()
    a.cmd("GET", "ownx:k")
    assert a.cmd("MULTI") == OK
    assert a.cmd("SET", "ownx:k", "1") == QUEUED
    assert a.cmd("PING") == QUEUED
    a.send(resp("EXEC"))
    assert [a.read_reply(), a.read_reply()] == [b"*2\r\n+OK\r\n+PONG\r\n", inv("ownx:k")]
    a.assert_quiet()
    a.cmd("GET", "ownx:k")
    a.send(resp("EVAL", "return redis.call('set', KEYS[1], 'x')", 1, "ownx:k"))
    assert [a.read_reply(), a.read_reply()] == [OK, inv("ownx:k")]
    a.assert_quiet()


# ================================================================ 3. NOLOOP

def test_noloop_skips_own_writes_only(conn):
    a, b = conn(), conn(resp3=False)
    a.track("NOLOOP")
    a.cmd("GET", "nl:k")
    assert a.cmd("SET", "nl:k", "1") == OK
    a.assert_quiet()
    # The own write still consumed the table entry: the next write by another client
    # does not invalidate a key that was not read again.
    assert b.cmd("SET", "nl:k", "2") == OK
    a.assert_quiet()
    a.cmd("GET", "nl:k")
    assert b.cmd("SET", "nl:k", "3") == OK
    a.expect(inv("nl:k"))


def test_noloop_client_still_gets_its_own_flush(conn):
    a = conn()
    a.track("NOLOOP")
    a.cmd("GET", "nlf:k")
    # NOLOOP does not cover flushes: the flushing client is told too.
    a.send(resp("FLUSHALL"))
    assert [a.read_reply(), a.read_reply()] == [OK, INV_ALL]
    a.assert_quiet()


# ================================================================ 4. flushes

@pytest.mark.parametrize("flush", [("FLUSHALL",), ("FLUSHDB",), ("FLUSHALL", "ASYNC"),
                                   ("FLUSHDB", "SYNC")])
def test_flush_invalidates_with_null_key_list(conn, flush):
    a, b = conn(), conn(resp3=False)
    a.track()
    a.cmd("GET", "fl:k")
    assert b.cmd(*flush) == OK
    assert a.next_push() == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    a.assert_quiet()
    # The flush dropped the table: a later write to the key tells nothing.
    assert b.cmd("SET", "fl:k", "1") == OK
    a.assert_quiet()


def test_flush_is_sent_to_every_tracking_client(conn):
    reader, idle, bcast, off, b = conn(), conn(), conn(), conn(), conn(resp3=False)
    reader.track()
    reader.cmd("GET", "fle:k")
    idle.track()  # tracks nothing
    bcast.track("BCAST", "PREFIX", "fle:unrelated:")
    # Even from another database, and even an empty one.
    assert b.cmd("SELECT", "5") == OK
    assert b.cmd("FLUSHDB") == OK
    for c in (reader, idle, bcast):
        c.expect(INV_ALL)
    off.assert_quiet()
    assert b.cmd("FLUSHALL") == OK
    for c in (reader, idle, bcast):
        c.expect(INV_ALL)
    off.assert_quiet()


def test_migrate_invalidates_the_keys_it_moves(conn, server_factory):
    a, b = conn(), conn(resp3=False)
    target = server_factory()
    a.track()
    assert b.cmd("SET", "mig:k", "v") == OK
    assert a.cmd("GET", "mig:k") == b"$1\r\nv\r\n"
    assert b.cmd("MIGRATE", "127.0.0.1", str(target.port), "mig:k", "0", "5000") == OK
    a.expect(inv("mig:k"))


# ================================================================ 5. expiry

def test_expiry_invalidates(conn):
    a, b = conn(), conn(resp3=False)
    a.track()
    # Left to expire on its own (active expiry).
    assert b.cmd("SET", "exp:active", "v", "PX", "30") == OK
    assert a.cmd("GET", "exp:active") == b"$1\r\nv\r\n"
    assert a.next_push() == inv("exp:active")
    a.assert_quiet()
    # Another client reading it after the deadline: expired (actively or lazily) once.
    assert b.cmd("SET", "exp:lazy", "v", "PX", "30") == OK
    assert a.cmd("GET", "exp:lazy") == b"$1\r\nv\r\n"
    time.sleep(0.04)
    assert b.cmd("GET", "exp:lazy") == b"$-1\r\n"
    a.expect(inv("exp:lazy"))


# ================================================================ 6. REDIRECT

def test_resp2_redirect_delivers_pubsub_messages(conn):
    a, s, b = conn(resp3=False), conn(resp3=False), conn(resp3=False)
    sid = s.id()
    assert s.cmd("SUBSCRIBE", INVALIDATE_CHANNEL) == (
        b"*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n")
    a.track("REDIRECT", sid)
    a.cmd("GET", "rd:k")
    assert b.cmd("SET", "rd:k", "1") == OK
    assert s.next_push() == (b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
                             b"*1\r\n$4\r\nrd:k\r\n")
    s.assert_quiet()
    a.cmd("MGET", "rd:k", "rd:j")
    assert b.cmd("MSET", "rd:k", "2", "rd:j", "2") == OK
    s.expect(msg("rd:k"), msg("rd:j"))
    a.cmd("GET", "rd:k")
    assert b.cmd("FLUSHALL") == OK
    assert s.next_push() == (b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
                             b"$-1\r\n")
    s.assert_quiet()
    a.assert_quiet()


def test_resp3_client_redirecting_to_resp2_subscriber(conn):
    a, s, b = conn(), conn(resp3=False), conn(resp3=False)
    sid = s.id()
    s.cmd("SUBSCRIBE", INVALIDATE_CHANNEL)
    a.track("REDIRECT", sid)
    a.cmd("GET", "rd3:k")
    assert b.cmd("SET", "rd3:k", "1") == OK
    s.expect(msg("rd3:k"))
    a.assert_quiet()
    # The flush's null follows the tracking client's protocol (Redis 7.0): a RESP3 null
    # inside the RESP2 message.
    assert b.cmd("FLUSHALL") == OK
    s.expect(MESSAGE_HEAD + b"_\r\n")
    a.assert_quiet()


def test_redirect_to_resp3_client_pushes_without_subscription(conn):
    a, s, b = conn(resp3=False), conn(), conn(resp3=False)
    a.track("REDIRECT", s.id())
    a.cmd("GET", "rdp:k")
    assert b.cmd("SET", "rdp:k", "1") == OK
    # A RESP3 target gets the push whether or not it subscribed to the channel.
    s.expect(inv("rdp:k"))
    a.cmd("GET", "rdp:k")
    assert b.cmd("FLUSHALL") == OK
    # Redis 7.0 writes the flush's null in the protocol of the tracking client, not of
    # the one receiving it: a RESP2 null inside a RESP3 push here.
    s.expect(b">2\r\n$10\r\ninvalidate\r\n$-1\r\n")
    a.assert_quiet()


def test_redirect_errors(conn):
    a = conn()
    assert a.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", "999999") == NO_SUCH_REDIRECT
    assert a.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", "0") == NO_SUCH_REDIRECT
    assert a.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", "-1") == NO_SUCH_REDIRECT
    assert a.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", "abc") == NOT_INT
    assert a.cmd("CLIENT", "TRACKING", "ON", "REDIRECT") == SYNTAX
    # A failed attempt leaves tracking off.
    assert a.cmd("CLIENT", "GETREDIR") == b":-1\r\n"
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["off"], -1)


def test_redirect_can_change_while_on(conn):
    a, s1, s2, b = conn(), conn(), conn(), conn(resp3=False)
    id1, id2 = s1.id(), s2.id()
    a.track("REDIRECT", id1)
    a.track("REDIRECT", id2)
    assert a.cmd("CLIENT", "GETREDIR") == b":%d\r\n" % id2
    a.cmd("GET", "rdc:k")
    assert b.cmd("SET", "rdc:k", "1") == OK
    s2.expect(inv("rdc:k"))
    s1.assert_quiet()


def test_broken_redirect_resp3(conn):
    a, s, b = conn(), conn(), conn(resp3=False)
    sid = s.id()
    a.track("REDIRECT", sid)
    a.cmd("GET", "brk:k")
    s.close()
    wait_client_gone(b, sid)
    # Found out lazily: nothing shows until an invalidation is due.
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on"], sid)
    assert client_fields(b, a.id())["flags"] == "t"
    assert b.cmd("SET", "brk:k", "1") == OK
    assert a.next_push() == b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % sid
    a.assert_quiet()
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "broken_redirect"], sid)
    assert a.cmd("CLIENT", "GETREDIR") == b":%d\r\n" % sid
    f = client_fields(b, a.id())
    assert (f["flags"], f["redir"]) == ("tR", str(sid))
    # Sent again for every invalidation that cannot be delivered, flushes included.
    a.cmd("GET", "brk:k")
    assert b.cmd("SET", "brk:k", "2") == OK
    a.expect(broken(sid))
    a.cmd("GET", "brk:k")
    assert b.cmd("FLUSHALL") == OK
    a.expect(broken(sid))
    # The client's own write: after the reply, as for an invalidation.
    a.cmd("GET", "brk:k")
    a.send(resp("SET", "brk:k", "3"))
    assert [a.read_reply(), a.read_reply()] == [OK, broken(sid)]
    a.assert_quiet()
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["off"], -1)


def test_broken_redirect_resp2_sends_nothing(conn):
    a, s, b = conn(resp3=False), conn(resp3=False), conn(resp3=False)
    sid = s.id()
    s.cmd("SUBSCRIBE", INVALIDATE_CHANNEL)
    a.track("REDIRECT", sid)
    a.cmd("GET", "brk2:k")
    s.close()
    wait_client_gone(b, sid)
    assert b.cmd("SET", "brk2:k", "1") == OK
    a.assert_quiet()
    # Redis finds the target gone while the write runs; strata when the invalidation
    # reaches the target's worker (a hop away, so a moment later).
    info = trackinginfo(["on", "broken_redirect"], sid, resp3=False)
    wait_for(lambda: a.cmd("CLIENT", "TRACKINGINFO") == info, 5, "the broken redirect")
    assert client_fields(b, a.id())["flags"] == "tR"


# ================================================================ 7. BCAST

def test_bcast_with_prefixes(conn):
    a, b = conn(), conn(resp3=False)
    a.track("BCAST", "PREFIX", "user:", "PREFIX", "obj:")
    # No read needed, and every write is announced, not only the first.
    assert b.cmd("SET", "user:1", "x") == OK
    assert a.next_push() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nuser:1\r\n"
    a.assert_quiet()
    assert b.cmd("SET", "user:1", "y") == OK
    a.expect(inv("user:1"))
    assert b.cmd("SET", "obj:9", "y") == OK
    a.expect(inv("obj:9"))
    # The prefix itself matches; matching is byte-exact (case-sensitive).
    assert b.cmd("SET", "user:", "1") == OK
    a.expect(inv("user:"))
    for key in ("other", "use", "USER:1", "xuser:1"):
        assert b.cmd("SET", key, "1") == OK
    a.assert_quiet()
    # Reads of keys outside the prefixes register nothing.
    a.cmd("GET", "other")
    assert b.cmd("SET", "other", "2") == OK
    a.assert_quiet()
    # Ignores databases too.
    assert b.cmd("SELECT", "3") == OK
    assert b.cmd("SET", "user:db3", "1") == OK
    a.expect(inv("user:db3"))


def test_bcast_batches_the_keys_of_one_command_per_prefix(conn):
    a, b = conn(), conn(resp3=False)
    a.track("BCAST", "PREFIX", "user:", "PREFIX", "obj:")
    # Redis 7.0 collects a BCAST client's keys and sends them once per prefix when the
    # command is done: one push for both keys of a prefix.
    assert b.cmd("MSET", "user:4", "1", "user:5", "1", "zzz", "1") == OK
    if a.is_redis:
        a.expect(inv("user:4", "user:5"))
    else:
        a.expect_keys("user:4", "user:5")
    assert b.cmd("DEL", "user:4", "user:5", "user:6") == b":2\r\n"
    if a.is_redis:
        a.expect(inv("user:4", "user:5"))
    else:
        a.expect_keys("user:4", "user:5")
    assert b.cmd("MSET", "user:2", "1", "obj:3", "2") == OK
    assert sorted([a.next_push(), a.next_push()]) == sorted([inv("user:2"), inv("obj:3")])
    a.assert_quiet()
    assert b.cmd("DEL", "user:2", "user:missing") == b":1\r\n"
    a.expect(inv("user:2"))


def test_bcast_without_prefix_covers_every_key(conn):
    a, b = conn(), conn(resp3=False)
    a.track("BCAST")
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "bcast"], 0, [""])
    assert b.cmd("SET", "anything", "1") == OK
    a.expect(inv("anything"))
    assert b.cmd("INCR", "n") == b":1\r\n"
    a.expect(inv("n"))
    assert b.cmd("LPUSH", "some:list", "x") == b":1\r\n"
    a.expect(inv("some:list"))
    assert b.cmd("DEL", "nothing-here") == b":0\r\n"
    a.assert_quiet()


def test_bcast_flush_own_write_and_noloop(conn):
    a, n, b = conn(), conn(), conn(resp3=False)
    a.track("BCAST", "PREFIX", "bc:")
    n.track("BCAST", "NOLOOP", "PREFIX", "bc:")
    assert b.cmd("FLUSHALL") == OK
    a.expect(INV_ALL)
    n.expect(INV_ALL)
    assert b.cmd("FLUSHDB") == OK
    a.expect(INV_ALL)
    n.expect(INV_ALL)
    # Own write: the push comes after the reply.
    a.send(resp("SET", "bc:own", "1"))
    assert [a.read_reply(), a.read_reply()] == [OK, inv("bc:own")]
    a.assert_quiet()
    n.expect(inv("bc:own"))
    # NOLOOP: n is not told about its own writes, a is.
    assert n.cmd("SET", "bc:n", "1") == OK
    a.expect(inv("bc:n"))
    n.assert_quiet()
    assert b.cmd("SET", "bc:n", "2") == OK
    a.expect(inv("bc:n"))
    n.expect(inv("bc:n"))


def test_bcast_redirect_resp2(conn):
    a, s, b = conn(resp3=False), conn(resp3=False), conn(resp3=False)
    sid = s.id()
    s.cmd("SUBSCRIBE", INVALIDATE_CHANNEL)
    a.track("BCAST", "REDIRECT", sid, "PREFIX", "r:")
    assert b.cmd("MSET", "r:1", "1", "r:2", "2") == OK
    if s.is_redis:
        s.expect(msg("r:1", "r:2"))
    else:
        s.expect_keys("r:1", "r:2")
    assert b.cmd("FLUSHALL") == OK
    s.expect(MSG_ALL)
    a.assert_quiet()


def test_bcast_prefixes_accumulate_until_off(conn):
    a, b = conn(), conn(resp3=False)
    a.track("BCAST", "PREFIX", "a", "PREFIX", "b")
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "bcast"], 0, ["a", "b"])
    # Turning it on again adds prefixes.
    a.track("BCAST", "PREFIX", "c")
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "bcast"], 0,
                                                           ["a", "b", "c"])
    assert a.cmd("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ac") == overlap(
        "ac", "a", existing=True)
    assert b.cmd("SET", "cx", "1") == OK
    a.expect(inv("cx"))
    # OFF forgets them.
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("BCAST", "PREFIX", "d")
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "bcast"], 0, ["d"])
    assert b.cmd("SET", "ax", "1") == OK
    a.assert_quiet()


def test_tracking_option_errors(conn):
    a = conn()
    t = ("CLIENT", "TRACKING")
    assert a.cmd(*t, "ON", "PREFIX", "a") == PREFIX_NEEDS_BCAST
    assert a.cmd(*t, "ON", "BCAST", "OPTIN") == OPT_WITH_BCAST
    assert a.cmd(*t, "ON", "BCAST", "OPTOUT") == OPT_WITH_BCAST
    assert a.cmd(*t, "ON", "OPTIN", "OPTOUT") == OPTIN_AND_OPTOUT
    assert a.cmd(*t, "ON", "BCAST", "PREFIX", "a", "PREFIX", "ab") == overlap("a", "ab")
    assert a.cmd(*t, "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a") == overlap("ab", "a")
    assert a.cmd(*t, "ON", "BCAST", "PREFIX", "a", "PREFIX", "a") == overlap("a", "a")
    assert a.cmd(*t, "ON", "BCAST", "PREFIX", "", "PREFIX", "a") == overlap("", "a")
    assert a.cmd(*t, "maybe") == SYNTAX
    assert a.cmd(*t, "ON", "FOO") == SYNTAX
    assert a.cmd(*t, "ON", "BCAST", "PREFIX") == SYNTAX
    assert a.cmd(*t) == b"-ERR wrong number of arguments for 'client|tracking' command\r\n"
    # None of these turned tracking on.
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["off"], -1)
    # Options are case-insensitive; repeating NOLOOP is fine.
    assert a.cmd(*t, "on", "bcast", "noloop", "noloop", "prefix", "x") == OK
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "bcast", "noloop"], 0,
                                                           ["x"])
    assert a.cmd(*t, "off") == OK


def test_switching_modes_while_on(conn):
    a = conn()
    t = ("CLIENT", "TRACKING")
    a.track("BCAST")
    assert a.cmd(*t, "ON") == SWITCH_BCAST
    assert a.cmd(*t, "ON", "OPTIN") == SWITCH_BCAST
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "bcast"], 0, [""])
    assert a.cmd(*t, "OFF") == OK
    a.track("OPTIN")
    assert a.cmd(*t, "ON", "OPTOUT") == SWITCH_OPT
    assert a.cmd(*t, "ON", "BCAST") == SWITCH_BCAST
    # Redis lets OPTIN go back to the default mode (it only refuses OPTIN <-> OPTOUT),
    # and ON again replaces the options: OPTIN is dropped here.
    assert a.cmd(*t, "ON") == OK
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on"], 0)
    assert a.cmd(*t, "ON", "OPTOUT") == OK
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "optout"], 0)
    assert a.cmd(*t, "ON", "NOLOOP") == OK
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on", "noloop"], 0)
    assert a.cmd(*t, "OFF") == OK
    assert a.cmd(*t, "OFF") == OK  # already off: fine


# ================================================================ 8. OPTIN / OPTOUT

def test_optin_tracks_only_the_command_after_caching_yes(conn):
    a, b = conn(), conn(resp3=False)
    a.track("OPTIN")
    a.cmd("GET", "oi:1")
    assert b.cmd("SET", "oi:1", "x") == OK
    a.assert_quiet()
    assert a.cmd("CLIENT", "CACHING", "yes") == OK
    a.cmd("GET", "oi:2")
    a.cmd("GET", "oi:3")
    assert b.cmd("MSET", "oi:2", "x", "oi:3", "x") == OK
    a.expect(inv("oi:2"))
    # Any command uses the flag up, even one that reads nothing.
    assert a.cmd("CLIENT", "CACHING", "YES") == OK
    assert a.cmd("PING") == PONG
    a.cmd("GET", "oi:4")
    assert b.cmd("SET", "oi:4", "x") == OK
    a.assert_quiet()
    # Even a command rejected before running...
    assert a.cmd("CLIENT", "CACHING", "yes") == OK
    assert a.cmd("GET", "oi:x", "extra") == (
        b"-ERR wrong number of arguments for 'get' command\r\n")
    a.cmd("GET", "oi:4")
    assert b.cmd("SET", "oi:4", "y") == OK
    a.assert_quiet()
    # ...but not a CLIENT command: Redis 7.0 keeps the flag across every CLIENT
    # subcommand (so that CLIENT CACHING can be pipelined with others).
    assert a.cmd("CLIENT", "CACHING", "yes") == OK
    assert isinstance(a.call("CLIENT", "ID"), int)
    a.cmd("GET", "oi:7")
    assert b.cmd("SET", "oi:7", "x") == OK
    a.expect(inv("oi:7"))
    # Every key of a multi-key read.
    assert a.cmd("CLIENT", "CACHING", "yes") == OK
    a.cmd("MGET", "oi:5", "oi:6")
    assert b.cmd("MSET", "oi:5", "x", "oi:6", "x") == OK
    a.expect_keys("oi:5", "oi:6")


def test_optin_caching_yes_then_multi_tracks_the_whole_transaction(conn):
    a, b = conn(), conn(resp3=False)
    a.track("OPTIN")
    # The flag set before MULTI covers every read EXEC runs.
    assert a.cmd("CLIENT", "CACHING", "yes") == OK
    assert a.cmd("MULTI") == OK
    assert a.cmd("GET", "oim:1") == QUEUED
    assert a.cmd("GET", "oim:2") == QUEUED
    assert a.cmd("EXEC") == b"*2\r\n_\r\n_\r\n"
    assert b.cmd("MSET", "oim:1", "x", "oim:2", "x") == OK
    a.expect_keys("oim:1", "oim:2")
    # So does CLIENT CACHING yes queued inside the transaction.
    assert a.cmd("MULTI") == OK
    assert a.cmd("CLIENT", "CACHING", "yes") == QUEUED
    assert a.cmd("GET", "oim:3") == QUEUED
    assert a.cmd("GET", "oim:4") == QUEUED
    assert a.cmd("EXEC") == b"*3\r\n+OK\r\n_\r\n_\r\n"
    assert b.cmd("MSET", "oim:3", "x", "oim:4", "x") == OK
    a.expect_keys("oim:3", "oim:4")
    # A transaction without it tracks nothing.
    assert a.cmd("MULTI") == OK
    assert a.cmd("GET", "oim:5") == QUEUED
    assert a.cmd("EXEC") == b"*1\r\n_\r\n"
    assert b.cmd("SET", "oim:5", "x") == OK
    a.assert_quiet()


def test_optin_caching_yes_then_eval(conn):
    a, b = conn(), conn(resp3=False)
    a.track("OPTIN")
    assert a.cmd("CLIENT", "CACHING", "yes") == OK
    assert a.cmd("EVAL", "return redis.call('get', KEYS[1])", 1, "oie:k") == b"_\r\n"
    assert b.cmd("SET", "oie:k", "x") == OK
    a.expect(inv("oie:k"))


def test_optout_tracks_unless_caching_no(conn):
    a, b = conn(), conn(resp3=False)
    a.track("OPTOUT")
    a.cmd("GET", "oo:1")
    assert b.cmd("SET", "oo:1", "x") == OK
    a.expect(inv("oo:1"))
    assert a.cmd("CLIENT", "CACHING", "no") == OK
    a.cmd("GET", "oo:2")
    a.cmd("GET", "oo:3")
    assert b.cmd("MSET", "oo:2", "x", "oo:3", "x") == OK
    a.expect(inv("oo:3"))
    # CACHING no before MULTI: nothing in the transaction is tracked.
    assert a.cmd("CLIENT", "CACHING", "NO") == OK
    assert a.cmd("MULTI") == OK
    assert a.cmd("GET", "oo:4") == QUEUED
    assert a.cmd("GET", "oo:5") == QUEUED
    assert a.cmd("EXEC") == b"*2\r\n_\r\n_\r\n"
    assert b.cmd("MSET", "oo:4", "x", "oo:5", "x") == OK
    a.assert_quiet()


def test_client_caching_errors(conn):
    a = conn()
    assert a.cmd("CLIENT", "CACHING", "yes") == CACHING_NEEDS_MODE
    assert a.cmd("CLIENT", "CACHING", "no") == CACHING_NEEDS_MODE
    a.track()
    assert a.cmd("CLIENT", "CACHING", "yes") == CACHING_YES_NEEDS_OPTIN
    assert a.cmd("CLIENT", "CACHING", "no") == CACHING_NO_NEEDS_OPTOUT
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("BCAST")
    assert a.cmd("CLIENT", "CACHING", "yes") == CACHING_YES_NEEDS_OPTIN
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("OPTIN")
    assert a.cmd("CLIENT", "CACHING", "no") == CACHING_NO_NEEDS_OPTOUT
    assert a.cmd("CLIENT", "CACHING", "maybe") == SYNTAX
    assert a.cmd("CLIENT", "CACHING") == (
        b"-ERR wrong number of arguments for 'client|caching' command\r\n")
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("OPTOUT")
    assert a.cmd("CLIENT", "CACHING", "yes") == CACHING_YES_NEEDS_OPTIN


# ================================================================ 9. GETREDIR

def test_getredir(conn):
    a, s = conn(resp3=False), conn()
    sid = s.id()
    assert a.cmd("CLIENT", "GETREDIR") == b":-1\r\n"
    a.track()
    assert a.cmd("CLIENT", "GETREDIR") == b":0\r\n"
    a.track("REDIRECT", sid)
    assert a.cmd("CLIENT", "GETREDIR") == b":%d\r\n" % sid
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    assert a.cmd("CLIENT", "GETREDIR") == b":-1\r\n"
    a.track("BCAST", "REDIRECT", sid)
    assert a.cmd("CLIENT", "GETREDIR") == b":%d\r\n" % sid
    assert a.cmd("CLIENT", "GETREDIR", "x") == (
        b"-ERR wrong number of arguments for 'client|getredir' command\r\n")


# ================================================================ 10. TRACKINGINFO

@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_trackinginfo(conn, resp3):
    a, s = conn(resp3=resp3), conn()
    sid = s.id()

    def ti():
        return a.cmd("CLIENT", "TRACKINGINFO")

    assert ti() == trackinginfo(["off"], -1, resp3=resp3)
    a.track()
    assert ti() == trackinginfo(["on"], 0, resp3=resp3)
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("BCAST", "NOLOOP", "PREFIX", "p:", "PREFIX", "q:")
    assert ti() == trackinginfo(["on", "bcast", "noloop"], 0, ["p:", "q:"], resp3=resp3)
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("OPTIN")
    assert ti() == trackinginfo(["on", "optin"], 0, resp3=resp3)
    assert a.cmd("CLIENT", "CACHING", "yes") == OK
    # CLIENT commands leave the flag alone; any other command uses it up.
    assert ti() == trackinginfo(["on", "optin", "caching-yes"], 0, resp3=resp3)
    assert ti() == trackinginfo(["on", "optin", "caching-yes"], 0, resp3=resp3)
    assert a.cmd("PING") == PONG
    assert ti() == trackinginfo(["on", "optin"], 0, resp3=resp3)
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("OPTOUT", "NOLOOP", "REDIRECT", sid)
    assert a.cmd("CLIENT", "CACHING", "no") == OK
    assert ti() == trackinginfo(["on", "optout", "caching-no", "noloop"], sid, resp3=resp3)
    assert a.cmd("ECHO", "x") == b"$1\r\nx\r\n"
    assert ti() == trackinginfo(["on", "optout", "noloop"], sid, resp3=resp3)
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    assert ti() == trackinginfo(["off"], -1, resp3=resp3)
    assert a.cmd("CLIENT", "TRACKINGINFO", "x") == (
        b"-ERR wrong number of arguments for 'client|trackinginfo' command\r\n")


def test_trackinginfo_all_flags_with_broken_redirect(conn):
    a, s, b = conn(), conn(), conn(resp3=False)
    sid = s.id()
    a.track("OPTOUT", "NOLOOP", "REDIRECT", sid)
    a.cmd("GET", "tib:k")
    s.close()
    wait_client_gone(b, sid)
    assert b.cmd("SET", "tib:k", "1") == OK
    a.expect(broken(sid))
    assert a.cmd("CLIENT", "CACHING", "no") == OK
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(
        ["on", "optout", "caching-no", "noloop", "broken_redirect"], sid)


# ================================================================ 11. table limit, INFO

def test_tracking_table_max_keys_default(conn):
    a = conn(resp3=False)
    assert a.cmd("CONFIG", "GET", "tracking-table-max-keys") == (
        b"*2\r\n$23\r\ntracking-table-max-keys\r\n$7\r\n1000000\r\n")


def test_tracking_table_max_keys_evicts_with_invalidations(conn, server_factory):
    srv = server_factory()
    a, b = conn(srv=srv), conn(resp3=False, srv=srv)
    assert b.cmd("CONFIG", "SET", "tracking-table-max-keys", "2") == OK
    assert b.cmd("CONFIG", "GET", "tracking-table-max-keys") == (
        b"*2\r\n$23\r\ntracking-table-max-keys\r\n$1\r\n2\r\n")
    a.track()
    keys = ["mx:%d" % i for i in range(5)]
    for k in keys:
        assert a.cmd("GET", k) == b"_\r\n"
    # The table is cut back to the limit (soon; Redis does it before commands and in
    # its cron), each dropped key invalidated although nobody wrote it.
    wait_for(lambda: tracking_stats(b)["tracking_total_keys"] <= 2, what="eviction")
    left = tracking_stats(b)["tracking_total_keys"]
    got = [parse(a.next_push()) for _ in range(len(keys) - left)]
    a.assert_quiet()
    evicted = [g[1][0] for g in got]
    assert all(g[0] == "invalidate" and len(g[1]) == 1 for g in got), got
    assert len(set(evicted)) == len(evicted) and set(evicted) <= set(keys)
    # The keys still in the table are still tracked.
    for k in keys:
        assert b.cmd("SET", k, "v") == OK
    kept = [parse(a.next_push())[1][0] for _ in range(left)]
    a.assert_quiet()
    assert sorted(kept + evicted) == sorted(keys)
    # 0 means no limit.
    assert b.cmd("CONFIG", "SET", "tracking-table-max-keys", "0") == OK
    for i in range(20):
        a.cmd("GET", "mx0:%d" % i)
    assert tracking_stats(b)["tracking_total_keys"] == 20
    a.assert_quiet()


def test_tracking_tables_are_counted_in_used_memory(conn, server_factory):
    """strata's INFO memory names the tables' bytes (mem_tracking), inside used_memory;
    a flush gives them back."""
    srv = server_factory()
    b = conn(resp3=False, srv=srv)
    if b.is_redis:
        pytest.skip("mem_tracking is strata's")

    def memory():
        m = info(b, "memory")
        return int(m["mem_tracking"]), int(m["used_memory"])

    base_tracking, base_used = memory()
    a = conn(srv=srv)
    a.track()
    keys = ["mem:%05d" % i for i in range(5000)]
    for i in range(0, len(keys), 500):
        a.cmd("MGET", *keys[i:i + 500])
    tracking, used = memory()
    # At least the key, its hash node and a client entry each.
    assert tracking - base_tracking >= 5000 * 40, (base_tracking, tracking)
    assert used - base_used >= tracking - base_tracking
    assert b.cmd("FLUSHALL") == OK
    wait_for(lambda: memory()[0] < base_tracking + 4096, 5, "the tables to empty")


def test_info_tracking_fields(conn, server_factory):
    srv = server_factory()
    b = conn(resp3=False, srv=srv)
    assert tracking_stats(b) == {"tracking_total_keys": 0, "tracking_total_items": 0,
                                 "tracking_total_prefixes": 0, "tracking_clients": 0}
    a1, a2 = conn(srv=srv), conn(srv=srv)
    a1.track()
    assert tracking_stats(b)["tracking_clients"] == 1
    a1.cmd("MGET", "i:1", "i:2")
    a2.track()
    a2.cmd("MGET", "i:2", "i:3")
    # keys: distinct keys in the table; items: (key, client) pairs.
    assert tracking_stats(b) == {"tracking_total_keys": 3, "tracking_total_items": 4,
                                 "tracking_total_prefixes": 0, "tracking_clients": 2}
    p1, p2 = conn(srv=srv), conn(srv=srv)
    p1.track("BCAST", "PREFIX", "x:", "PREFIX", "y:")
    p2.track("BCAST", "PREFIX", "x:", "PREFIX", "z:")
    # prefixes: distinct prefixes over all BCAST clients; BCAST reads add no keys.
    p1.cmd("GET", "x:1")
    assert tracking_stats(b) == {"tracking_total_keys": 3, "tracking_total_items": 4,
                                 "tracking_total_prefixes": 3, "tracking_clients": 4}
    assert b.cmd("SET", "i:2", "v") == OK
    assert tracking_stats(b)["tracking_total_keys"] == 2
    assert tracking_stats(b)["tracking_total_items"] == 2
    assert p2.cmd("CLIENT", "TRACKING", "OFF") == OK
    assert tracking_stats(b)["tracking_total_prefixes"] == 2
    assert tracking_stats(b)["tracking_clients"] == 3
    p1.close()
    wait_for(lambda: tracking_stats(b)["tracking_clients"] == 2, what="p1 to go")
    assert tracking_stats(b)["tracking_total_prefixes"] == 0
    assert b.cmd("FLUSHALL") == OK
    assert tracking_stats(b) == {"tracking_total_keys": 0, "tracking_total_items": 0,
                                 "tracking_total_prefixes": 0, "tracking_clients": 2}


# ================================================================ 12. CLIENT LIST

def test_client_list_flags(conn):
    a, s, b = conn(), conn(resp3=False), conn(resp3=False)
    aid, sid = a.id(), s.id()

    def fields():
        f = client_fields(b, aid)
        return f["flags"], f["redir"]

    assert fields() == ("N", "-1")
    a.track()
    assert fields() == ("t", "0")
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("BCAST", "PREFIX", "cl:")
    assert fields() == ("tB", "0")
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("BCAST", "REDIRECT", sid)
    assert fields() == ("tB", str(sid))
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    a.track("OPTIN", "NOLOOP", "REDIRECT", sid)
    assert fields() == ("t", str(sid))
    a.cmd("CLIENT", "CACHING", "yes")
    a.cmd("GET", "cl:k")
    s.close()
    wait_client_gone(b, sid)
    assert fields() == ("t", str(sid))  # not broken until an invalidation is due
    assert b.cmd("SET", "cl:k", "1") == OK
    # Found when the invalidation reaches the target's worker (strata: a hop away).
    wait_for(lambda: fields() == ("tR", str(sid)), 5, "the broken redirect")
    # CLIENT INFO shows the same.
    f = parse_client_line(a.call("CLIENT", "INFO").strip())
    assert (f["flags"], f["redir"]) == ("tR", str(sid))
    assert a.cmd("CLIENT", "TRACKING", "OFF") == OK
    assert fields() == ("N", "-1")


# ================================================================ 13. MULTI, scripts

def test_reads_in_exec_and_scripts_are_tracked(conn):
    a, b = conn(), conn(resp3=False)
    a.track()
    assert a.cmd("MULTI") == OK
    assert a.cmd("GET", "tx:1") == QUEUED
    assert a.cmd("HGET", "tx:2", "f") == QUEUED
    assert a.cmd("EXEC") == b"*2\r\n_\r\n_\r\n"
    assert b.cmd("SET", "tx:1", "1") == OK
    a.expect(inv("tx:1"))
    assert b.cmd("HSET", "tx:2", "f", "v") == b":1\r\n"
    a.expect(inv("tx:2"))
    assert a.cmd("EVAL", "return redis.call('get', KEYS[1])", 1, "sc:1") == b"_\r\n"
    assert b.cmd("SET", "sc:1", "1") == OK
    a.expect(inv("sc:1"))
    # A script that only writes registers nothing.
    assert a.cmd("EVAL", "return redis.call('set', KEYS[1], 'x')", 1, "sc:2") == OK
    a.assert_quiet()
    assert b.cmd("SET", "sc:2", "1") == OK
    a.assert_quiet()
    # Another client's transaction: one invalidation for the key, however many writes.
    a.cmd("GET", "tx:3")
    assert b.cmd("MULTI") == OK
    assert b.cmd("SET", "tx:3", "1") == QUEUED
    assert b.cmd("SET", "tx:3", "2") == QUEUED
    assert b.cmd("EXEC") == b"*2\r\n+OK\r\n+OK\r\n"
    a.expect(inv("tx:3"))


# ================================================================ 14. RESET, HELLO

def test_reset_turns_tracking_off(conn):
    a, b = conn(), conn(resp3=False)
    a.track("OPTOUT", "NOLOOP")
    a.cmd("GET", "rs:k")
    assert a.cmd("RESET") == b"+RESET\r\n"
    assert a.cmd("CLIENT", "GETREDIR") == b":-1\r\n"
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["off"], -1, resp3=False)
    assert a.call("HELLO", "3")["proto"] == 3
    assert b.cmd("SET", "rs:k", "1") == OK
    a.assert_quiet()
    # And it can be turned on again, in another mode.
    a.track("BCAST", "PREFIX", "rs:")
    assert b.cmd("SET", "rs:k", "2") == OK
    a.expect(inv("rs:k"))


def test_hello_switches_while_tracking(conn):
    a, b = conn(resp3=False), conn(resp3=False)
    # Tracking turned on in RESP2, then HELLO 3: pushes start arriving.
    a.track()
    assert a.call("HELLO", "3")["proto"] == 3
    a.cmd("GET", "hl:k")
    assert b.cmd("SET", "hl:k", "1") == OK
    a.expect(inv("hl:k"))
    # Back to RESP2: tracking stays on, but invalidations have nowhere to go (and the
    # entry is used up).
    a.cmd("GET", "hl:k")
    assert a.cmd("HELLO", "2").startswith(b"*14\r\n")
    assert a.cmd("CLIENT", "TRACKINGINFO") == trackinginfo(["on"], 0, resp3=False)
    assert b.cmd("SET", "hl:k", "2") == OK
    a.assert_quiet()
    assert a.call("HELLO", "3")["proto"] == 3
    assert b.cmd("SET", "hl:k", "3") == OK
    a.assert_quiet()


# ================================================================ 15. databases

def test_databases_are_ignored(conn):
    a, b = conn(), conn(resp3=False)
    a.track()
    a.cmd("GET", "db:k")
    assert b.cmd("SELECT", "1") == OK
    # Tracking works on key names only: a write to the same name in another database
    # invalidates the key read in db 0.
    assert b.cmd("SET", "db:k", "1") == OK
    a.expect(inv("db:k"))
    # Also the other way round: read in db 2, written in db 0.
    assert a.cmd("SELECT", "2") == OK
    a.cmd("GET", "db:j")
    assert b.cmd("SELECT", "0") == OK
    assert b.cmd("SET", "db:j", "1") == OK
    a.expect(inv("db:j"))
    assert b.cmd("SELECT", "1") == OK
    assert b.cmd("FLUSHDB") == OK  # another database, an invalidation all the same
    a.expect(INV_ALL)


# ================================================================ 16. disconnects

def test_tracking_client_disconnect_after_many_reads(conn, server_factory):
    srv = server_factory()
    a, b = conn(srv=srv), conn(resp3=False, srv=srv)
    a.track()
    keys = ["dc:%d" % i for i in range(200)]
    assert a.cmd("MGET", *keys[:100]).startswith(b"*100\r\n")
    a.send(b"".join(resp("GET", k) for k in keys[100:]))
    for _ in keys[100:]:
        assert a.reply() == b"_\r\n"
    assert tracking_stats(b) == {"tracking_total_keys": 200, "tracking_total_items": 200,
                                 "tracking_total_prefixes": 0, "tracking_clients": 1}
    a.close()
    wait_for(lambda: tracking_stats(b)["tracking_clients"] == 0, what="a to go")
    # Redis leaves the table entries of a closed client until the keys are touched.
    assert tracking_stats(b) == {"tracking_total_keys": 200, "tracking_total_items": 200,
                                 "tracking_total_prefixes": 0, "tracking_clients": 0}
    assert b.cmd("MSET", *[x for k in keys[:50] for x in (k, "v")]) == OK
    stats = tracking_stats(b)
    assert (stats["tracking_total_keys"], stats["tracking_total_items"]) == (150, 150)
    assert b.cmd("FLUSHALL") == OK
    assert tracking_stats(b)["tracking_total_keys"] == 0
    # The server is fine and tracking still works for others.
    c = conn(srv=srv)
    c.track()
    c.cmd("GET", "dc:0")
    assert b.cmd("SET", "dc:0", "w") == OK
    c.expect(inv("dc:0"))
