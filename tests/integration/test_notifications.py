"""Keyspace notifications: the notify-keyspace-events setting and the events it publishes.

Covered: the two channel forms (__keyspace@<db>__:<key> carrying the event name,
__keyevent@<db>__:<event> carrying the key name), each published for every event, the
keyspace form first; the event names, their order and the conditions under which they
are (and are not) emitted for the string, generic-key, list, hash, set, sorted-set and
SORT ... STORE commands, including the "del" that follows a write leaving a key empty and
the "del" of a STORE command whose result is empty; expiry ("expired", class x) found on
access and by the active cycle, and "expire"/"del" from the EXPIRE family; eviction
("evicted", class e) under maxmemory; Redis 7's "new" class (n) and key-miss class (m),
neither part of A; the class filter (K, E and the class letters); CONFIG SET/GET round
trips of the setting (7.0's A includes 'd', and 7.0 does not read back an 'n' given
next to 'A' though its events stay on), its error for a bad letter, CONFIG SET of
several settings being all-or-nothing, and the setting given at startup; events
from inside MULTI/EXEC, EVAL and FCALL; a blocked pop served by a push; and a server with
three workers where many connections write keys spread over every thread and one
subscriber receives every event.

Ordering: the events of one command come in the order Redis emits them (for LMOVE the
push on the destination comes before the pop on the source, for SMOVE the other way
round), and the events of one connection's commands, issued one after the other, arrive
in command order whatever keys (and so threads) they touch. Across connections (the
three-worker test, a blocked BLMOVE served by another client's push) only the multiset of
events, and the order of each key's own events, is fixed. An expired key may be found by
the active cycle before the test's access reaches it: the events are the same either way,
and where several keys expire together they are compared as a multiset.

Every expected value here was checked against redis-server 7.0 (STRATA_TEST_TARGET=redis).
Waits are bounded; each subscriber, thread and server started here is closed
or stopped by the test or its fixtures, and the shared server's setting is put back to
"" after each test.
"""
import collections
import threading
import time

import pytest
import redis

from helpers import wait_for

PATTERN = "__key*__:*"
BAD_CLASS = ("CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
             "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
WAIT_S = 5.0       # longest wait for an event that must come
QUIET_S = 0.05     # how long "nothing more" is watched for


# ---------------------------------------------------------------- expected events

def both(event, key, db=0):
    """The two messages one event publishes with K and E on: keyspace, then keyevent."""
    return [("__keyspace@%d__:%s" % (db, key), event),
            ("__keyevent@%d__:%s" % (db, event), key)]


def seq(*events):
    """Expected messages for a list of (event, key) or (event, key, db) with K and E on."""
    out = []
    for e in events:
        out += both(*e)
    return out


# ---------------------------------------------------------------- the subscriber

class Subscriber:
    """A dedicated pattern (or channel) subscription, read with bounded waits."""

    def __init__(self, server, names=(PATTERN,), pattern=True):
        self.client = server.client(decode_responses=True)
        self.ps = self.client.pubsub()
        try:
            kind = "psubscribe" if pattern else "subscribe"
            getattr(self.ps, kind)(*names)
            confirmed = 0
            deadline = time.monotonic() + WAIT_S
            while confirmed < len(names):
                left = deadline - time.monotonic()
                assert left > 0, "no %s confirmation" % kind
                m = self.ps.get_message(timeout=left)
                if m and m["type"] == kind:
                    confirmed += 1
        except BaseException:
            self.close()
            raise

    def next(self, timeout):
        """The next (channel, message) pair, or None after timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            m = self.ps.get_message(timeout=left)
            if m and m["type"] in ("pmessage", "message"):
                return (m["channel"], m["data"])

    def take(self, n, timeout=WAIT_S):
        """Exactly n messages; fails (showing what came) if they do not all come in time."""
        got = []
        deadline = time.monotonic() + timeout
        while len(got) < n:
            m = self.next(max(0.0, deadline - time.monotonic()))
            if m is None:
                pytest.fail("expected %d messages, got %d in %.1fs: %r"
                            % (n, len(got), timeout, got))
            got.append(m)
        return got

    def expect(self, events):
        """The next messages are exactly these (event, key[, db]) events, K and E on."""
        self.expect_raw(seq(*events))

    def expect_raw(self, pairs):
        assert self.take(len(pairs)) == pairs

    def quiet(self, wait=QUIET_S):
        """Nothing more arrives within `wait` seconds."""
        m = self.next(wait)
        assert m is None, "unexpected message %r" % (m,)

    def close(self):
        try:
            self.ps.close()
        finally:
            self.client.close()


def set_flags(c, flags):
    assert c.config_set("notify-keyspace-events", flags) is True


@pytest.fixture
def watch(server, r):
    """watch(flags="KEA"): sets notify-keyspace-events, returns a fresh subscriber to
    every key channel. Data written before the call is not observed."""
    made = []

    def make(flags="KEA", names=(PATTERN,), pattern=True):
        set_flags(r, flags)
        s = Subscriber(server, names, pattern)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
    set_flags(r, "")


@pytest.fixture
def flags_reset(r):
    """Puts the shared server's notify-keyspace-events back to "" after the test."""
    yield
    set_flags(r, "")


def flags_of(c):
    return c.config_get("notify-keyspace-events")["notify-keyspace-events"]


# ================================================================ strings

def test_set_and_its_options(r, watch):
    r.set("held", "x", ex=100)
    w = watch()
    assert r.set("k", "v") is True
    assert r.set("k", "v", ex=100) is True
    assert r.set("k", "v", px=100000) is True
    assert r.set("held", "y", keepttl=True) is True
    assert r.set("k", "w", get=True) == "v"
    assert r.set("held", "z", nx=True) is None        # not set: no event
    assert r.set("missing", "z", xx=True) is None     # not set: no event
    assert r.set("k", "v2", xx=True) is True
    w.expect([("set", "k"),
              ("set", "k"), ("expire", "k"),
              ("set", "k"), ("expire", "k"),
              ("set", "held"),
              ("set", "k"),
              ("set", "k")])
    w.quiet()


def test_setnx_setex_psetex_getset(r, watch):
    w = watch()
    assert r.setnx("a", "1") is True
    assert r.setnx("a", "2") is False
    assert r.setex("b", 100, "1") is True
    assert r.psetex("c", 100000, "1") is True
    assert r.getset("a", "3") == "1"
    assert r.getset("fresh", "1") is None
    w.expect([("set", "a"),
              ("set", "b"), ("expire", "b"),
              ("set", "c"), ("expire", "c"),
              ("set", "a"),
              ("set", "fresh")])
    w.quiet()


def test_mset_and_msetnx(r, watch):
    r.set("taken", "x")
    w = watch()
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.execute_command("MSET", "d", "1", "d", "2") is True   # once per pair
    assert r.msetnx({"p": "1", "q": "2"}) is True
    assert r.msetnx({"x": "1", "taken": "2"}) is False            # nothing set: no event
    w.expect([("set", "a"), ("set", "b"), ("set", "d"), ("set", "d"),
              ("set", "p"), ("set", "q")])
    w.quiet()


def test_counters_and_append(r, watch):
    r.set("text", "abc")
    w = watch()
    assert r.incr("n") == 1
    assert r.decr("n") == 0
    assert r.incrby("n", 5) == 5
    assert r.decrby("n", 2) == 3
    assert r.incrby("n", 0) == 3                     # still an event
    assert r.incrbyfloat("f", 1.5) == 1.5
    assert r.append("s", "ab") == 2
    assert r.append("s", "") == 2                    # still an event
    with pytest.raises(redis.ResponseError):
        r.incr("text")                               # error: no event
    w.expect([("incrby", "n")] * 5 + [("incrbyfloat", "f"), ("append", "s"), ("append", "s")])
    w.quiet()


def test_setrange(r, watch):
    r.set("k", "hello")
    w = watch()
    assert r.setrange("k", 1, "XY") == 5
    assert r.setrange("new", 2, "XY") == 4
    assert r.setrange("k", 1, "") == 5               # empty value: nothing written
    assert r.setrange("none", 0, "") == 0            # nor created
    w.expect([("setrange", "k"), ("setrange", "new")])
    w.quiet()
    assert r.exists("none") == 0


def test_getdel_and_getex(r, watch):
    r.mset({"a": "1", "b": "1", "c": "1", "d": "1"})
    r.expire("c", 100)
    w = watch()
    assert r.getdel("a") == "1"
    assert r.getdel("a") is None                     # missing: no event
    assert r.getex("b", ex=100) == "1"
    assert r.getex("b", px=100000) == "1"
    assert r.getex("c", persist=True) == "1"
    assert r.getex("c", persist=True) == "1"         # no TTL to remove: no event
    assert r.getex("d") == "1"                       # plain read: no event
    assert r.getex("d", exat=1) == "1"               # a time in the past deletes
    w.expect([("del", "a"), ("expire", "b"), ("expire", "b"), ("persist", "c"),
              ("del", "d")])
    w.quiet()
    assert r.exists("d") == 0


def test_set_with_a_past_time_sets_then_expires(r, watch):
    w = watch()
    assert r.set("k", "v", exat=1) is True
    w.expect([("set", "k"), ("expire", "k")])
    # The key is already expired: the next access (or the active cycle) removes it.
    assert r.get("k") is None
    w.expect([("expired", "k")])
    w.quiet()


# ================================================================ generic key commands

def test_del_and_unlink(r, watch):
    r.mset({"a": "1", "b": "1", "c": "1", "d": "1"})
    w = watch()
    assert r.delete("a", "missing", "b") == 2
    assert r.delete("c", "c") == 1                   # a repeated key: one event
    assert r.unlink("missing", "d") == 1
    assert r.delete("missing") == 0
    w.expect([("del", "a"), ("del", "b"), ("del", "c"), ("del", "d")])
    w.quiet()


def test_rename_and_renamenx(r, watch):
    r.mset({"a": "1", "b": "2", "c": "3", "e": "4"})
    r.expire("e", 100)
    w = watch()
    assert r.rename("a", "x") is True
    assert r.rename("b", "c") is True                # over an existing key: no "del"
    assert r.rename("c", "c") is True                # same name: no event
    assert r.renamenx("x", "c") is False             # no event
    assert r.renamenx("x", "y") is True
    assert r.rename("e", "f") is True                # the TTL moves without an event
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.rename("missing", "z")
    w.expect([("rename_from", "a"), ("rename_to", "x"),
              ("rename_from", "b"), ("rename_to", "c"),
              ("rename_from", "x"), ("rename_to", "y"),
              ("rename_from", "e"), ("rename_to", "f")])
    w.quiet()


def test_copy(r, watch):
    r.mset({"a": "1", "b": "2"})
    r.expire("a", 100)
    w = watch()
    assert r.copy("a", "c") is True                  # TTL copied, no "expire"
    assert r.copy("a", "b") is False                 # exists: no event
    assert r.copy("a", "b", replace=True) is True
    assert r.copy("a", "a2", destination_db=1) is True
    w.expect([("copy_to", "c"), ("copy_to", "b"), ("copy_to", "a2", 1)])
    w.quiet()


def test_move(server, r, watch):
    r.mset({"a": "1", "b": "2"})
    r.expire("a", 100)
    c1 = server.client(db=1, decode_responses=True)
    try:
        c1.set("b", "taken")
        w = watch()
        assert r.move("a", 1) is True
        assert r.move("b", 1) is False               # exists there: no event
        assert r.move("missing", 1) is False
        w.expect([("move_from", "a", 0), ("move_to", "a", 1)])
        w.quiet()
        assert c1.ttl("a") > 0
    finally:
        c1.close()


def test_expire_family_and_persist(r, watch):
    r.mset({"a": "1", "b": "1", "c": "1", "d": "1", "e": "1"})
    w = watch()
    assert r.expire("a", 100) is True
    assert r.pexpire("a", 100000) is True
    assert r.expireat("a", 99999999999) is True
    assert r.pexpireat("a", 99999999999000) is True
    assert r.expire("missing", 100) is False         # no event
    assert r.expire("a", 200, nx=True) is False      # condition not met: no event
    assert r.expire("a", 10, gt=True) is False
    assert r.expire("b", 10, lt=True) is True        # no TTL counts as infinite
    assert r.persist("a") is True
    assert r.persist("a") is False                   # no TTL: no event
    assert r.expire("c", -1) is True                 # past times delete: "del"
    assert r.expire("d", 0) is True
    assert r.pexpireat("e", 1) is True
    w.expect([("expire", "a")] * 4 + [("expire", "b"), ("persist", "a"),
                                      ("del", "c"), ("del", "d"), ("del", "e")])
    w.quiet()
    assert r.exists("c", "d", "e") == 0


def test_restore(r, rb, watch):
    r.rpush("src", "a", "b")
    payload = rb.dump("src")
    r.set("old", "x")
    w = watch()
    assert rb.restore("k", 0, payload) == b"OK"
    assert rb.restore("k", 0, payload, replace=True) == b"OK"
    assert rb.restore("t", 100000, payload) == b"OK"           # TTL: no "expire"
    assert rb.restore("gone", 1, payload, absttl=True) == b"OK"  # already expired: no key
    assert rb.restore("old", 1, payload, replace=True, absttl=True) == b"OK"
    w.expect([("restore", "k"), ("restore", "k"), ("restore", "t"), ("del", "old")])
    w.quiet()
    assert r.exists("gone", "old") == 0


def test_flushdb_flushall_and_swapdb_emit_nothing(r, watch):
    r.mset({"a": "1", "b": "2"})
    w = watch()
    assert r.swapdb(0, 1) is True
    assert r.flushdb() is True
    assert r.flushall() is True
    r.set("after", "1")
    w.expect([("set", "after")])
    w.quiet()


def test_channels_carry_the_database_and_the_key_as_it_is(server, r, watch):
    w = watch()
    c = server.client(db=7, decode_responses=True)
    try:
        c.set("in seven", "1")
        c.delete("in seven")
    finally:
        c.close()
    r.set("a:b c\u00e9", "1")
    w.expect_raw([("__keyspace@7__:in seven", "set"), ("__keyevent@7__:set", "in seven"),
                  ("__keyspace@7__:in seven", "del"), ("__keyevent@7__:del", "in seven"),
                  ("__keyspace@0__:a:b c\u00e9", "set"),
                  ("__keyevent@0__:set", "a:b c\u00e9")])
    w.quiet()


def test_plain_channel_subscribers_get_their_events(r, watch):
    w = watch(names=("__keyevent@0__:del", "__keyspace@0__:k"), pattern=False)
    r.set("k", "1")
    r.set("other", "1")
    r.delete("other", "k")
    w.expect_raw([("__keyspace@0__:k", "set"),
                  ("__keyevent@0__:del", "other"),
                  ("__keyspace@0__:k", "del"), ("__keyevent@0__:del", "k")])
    w.quiet()


# ================================================================ lists

def test_pushes(r, watch):
    w = watch()
    assert r.lpushx("l", "a") == 0                   # no list: no event
    assert r.lpush("l", "a", "b") == 2               # one event for all elements
    assert r.rpush("l", "c") == 3
    assert r.lpushx("l", "d") == 4
    assert r.rpushx("l", "e") == 5
    w.expect([("lpush", "l"), ("rpush", "l"), ("lpush", "l"), ("rpush", "l")])
    w.quiet()


def test_pops_and_the_del_of_an_emptied_list(r, watch):
    r.rpush("l", "a", "b", "c", "d", "e")
    r.rpush("one", "x")
    w = watch()
    assert r.lpop("l") == "a"
    assert r.rpop("l") == "e"
    assert r.lpop("l", 2) == ["b", "c"]
    assert r.lpop("l", 0) == []                      # nothing popped: no event
    assert r.rpop("l", 5) == ["d"]                   # emptied: then "del"
    assert r.lpop("l") is None
    assert r.rpop("one") == "x"
    w.expect([("lpop", "l"), ("rpop", "l"), ("lpop", "l"),
              ("rpop", "l"), ("del", "l"),
              ("rpop", "one"), ("del", "one")])
    w.quiet()


def test_lset_linsert_lrem_ltrim(r, watch):
    r.rpush("l", "a", "b", "c", "a")
    r.rpush("m", "x", "y")
    r.rpush("n", "z", "z")
    w = watch()
    assert r.lset("l", 0, "A") is True
    assert r.linsert("l", "BEFORE", "b", "z") == 5
    assert r.linsert("l", "AFTER", "nope", "z") == -1   # no pivot: no event
    assert r.lrem("l", 0, "a") == 1
    assert r.lrem("l", 0, "nope") == 0                 # nothing removed: no event
    assert r.ltrim("l", 0, -1) is True                 # changes nothing, still an event
    assert r.ltrim("l", 0, 1) is True
    assert r.ltrim("m", 5, 10) is True                 # emptied: then "del"
    assert r.lrem("n", 0, "z") == 2                    # emptied: then "del"
    w.expect([("lset", "l"), ("linsert", "l"), ("lrem", "l"),
              ("ltrim", "l"), ("ltrim", "l"),
              ("ltrim", "m"), ("del", "m"),
              ("lrem", "n"), ("del", "n")])
    w.quiet()


def test_lmove_and_rpoplpush_push_before_they_pop(r, watch):
    r.rpush("src", "a", "b", "c")
    w = watch()
    assert r.lmove("src", "dst", "LEFT", "RIGHT") == "a"
    assert r.rpoplpush("src", "dst") == "c"
    assert r.lmove("src", "src", "RIGHT", "LEFT") == "b"   # rotate: both events
    assert r.lmove("src", "dst", "RIGHT", "LEFT") == "b"   # last element: then "del"
    assert r.lmove("src", "dst", "LEFT", "LEFT") is None
    w.expect([("rpush", "dst"), ("lpop", "src"),
              ("lpush", "dst"), ("rpop", "src"),
              ("lpush", "src"), ("rpop", "src"),
              ("lpush", "dst"), ("rpop", "src"), ("del", "src")])
    w.quiet()


def test_lmpop_and_blocking_pops_with_data_there(r, watch):
    r.rpush("l", "a", "b", "c", "d", "e", "f")
    r.rpush("m", "x")
    w = watch()
    assert r.execute_command("LMPOP", 2, "nope", "l", "LEFT", "COUNT", 2) == ["l", ["a", "b"]]
    assert r.blpop(["l"], timeout=1) == ("l", "c")
    assert r.brpop(["l"], timeout=1) == ("l", "f")
    assert r.blmove("l", "m", 1, "LEFT", "RIGHT") == "d"
    assert r.brpoplpush("m", "l", 1) == "d"
    assert r.execute_command("BLMPOP", 1, 1, "l", "RIGHT", "COUNT", 10) == ["l", ["e", "d"]]
    w.expect([("lpop", "l"), ("lpop", "l"), ("rpop", "l"),
              ("rpush", "m"), ("lpop", "l"),
              ("lpush", "l"), ("rpop", "m"),
              ("rpop", "l"), ("del", "l")])
    w.quiet()


def test_a_blocked_pop_served_by_a_push(server, r, watch):
    w = watch()
    done = {}

    def blocked():
        c = server.client(decode_responses=True)
        try:
            done["reply"] = c.blpop(["q"], timeout=5)
        finally:
            c.close()

    t = threading.Thread(target=blocked, daemon=True)
    t.start()
    wait_for(lambda: int(r.info("clients")["blocked_clients"]) == 1, what="a blocked client")
    assert r.rpush("q", "a", "b") == 2
    t.join(WAIT_S)
    assert not t.is_alive() and done["reply"] == ("q", "a")
    w.expect([("rpush", "q"), ("lpop", "q")])
    w.quiet()

    # A push of one element: the served pop empties the list.
    t = threading.Thread(target=blocked, daemon=True)
    r.delete("q")
    w.expect([("del", "q")])
    t.start()
    wait_for(lambda: int(r.info("clients")["blocked_clients"]) == 1, what="a blocked client")
    assert r.lpush("q", "x") == 1
    t.join(WAIT_S)
    assert not t.is_alive() and done["reply"] == ("q", "x")
    w.expect([("lpush", "q"), ("lpop", "q"), ("del", "q")])
    w.quiet()


def test_a_blocked_lmove_served_by_a_push(server, r, watch):
    w = watch()
    done = {}

    def blocked():
        c = server.client(decode_responses=True)
        try:
            done["reply"] = c.blmove("bsrc", "bdst", 5, "LEFT", "RIGHT")
        finally:
            c.close()

    t = threading.Thread(target=blocked, daemon=True)
    t.start()
    wait_for(lambda: int(r.info("clients")["blocked_clients"]) == 1, what="a blocked client")
    assert r.rpush("bsrc", "a") == 1
    t.join(WAIT_S)
    assert not t.is_alive() and done["reply"] == "a"
    # redis-server: rpush bsrc, rpush bdst, lpop bsrc, del bsrc. The push on the
    # destination may come on another thread: only each key's own order is fixed.
    got = w.take(8)
    assert sorted(got) == sorted(seq(("rpush", "bsrc"), ("rpush", "bdst"),
                                     ("lpop", "bsrc"), ("del", "bsrc")))
    assert [m for ch, m in got if ch == "__keyspace@0__:bsrc"] == ["rpush", "lpop", "del"]
    w.quiet()


def test_write_errors_emit_nothing(r, watch):
    r.set("s", "x")
    r.rpush("l", "a")
    w = watch()
    for args in (("LPUSH", "s", "a"), ("HSET", "s", "f", "v"), ("SADD", "s", "m"),
                 ("ZADD", "s", "1", "m"), ("INCR", "l"), ("LSET", "l", "5", "x"),
                 ("APPEND", "l", "x"), ("RENAME", "nope", "x")):
        with pytest.raises(redis.ResponseError):
            r.execute_command(*args)
    w.quiet(0.1)


# ================================================================ hashes

def test_hash_commands(r, watch):
    r.hset("h", mapping={"a": "1", "b": "2"})
    w = watch()
    assert r.hset("h", "a", "1") == 0                # same value: still an event
    assert r.hset("n", mapping={"x": "1", "y": "2"}) == 2
    assert r.execute_command("HMSET", "n", "x", "3") is True
    assert r.hsetnx("n", "z", "1") == 1
    assert r.hsetnx("n", "z", "2") == 0             # no event
    assert r.hdel("h", "a", "nope") == 1
    assert r.hdel("h", "nope") == 0                  # no event
    assert r.hincrby("c", "f", 2) == 2
    assert r.hincrby("c", "f", 0) == 2               # still an event
    assert r.hincrbyfloat("c", "g", 2.5) == 2.5
    assert r.hdel("h", "b") == 1                     # last field: then "del"
    w.expect([("hset", "h"), ("hset", "n"), ("hset", "n"), ("hset", "n"),
              ("hdel", "h"), ("hincrby", "c"), ("hincrby", "c"), ("hincrbyfloat", "c"),
              ("hdel", "h"), ("del", "h")])
    w.quiet()


# ================================================================ sets

def test_sadd_srem_spop(r, watch):
    r.sadd("s", "a", "b", "c", "d", "e")
    r.sadd("t", "x", "y")
    r.sadd("u", "only")
    w = watch()
    assert r.sadd("s", "a") == 0                     # nothing added: no event
    assert r.sadd("n", "a", "b") == 2
    assert r.srem("s", "a", "nope") == 1
    assert r.srem("s", "nope") == 0                  # no event
    assert len(r.spop("s", 2)) == 2
    assert r.execute_command("SPOP", "s", 0) == []   # no event
    assert r.spop("s") is not None
    assert r.srem("s", *r.smembers("s")) == 1        # emptied: then "del"
    assert sorted(r.spop("t", 10)) == ["x", "y"]     # count >= size: then "del"
    assert r.spop("u") == "only"
    w.expect([("sadd", "n"), ("srem", "s"), ("spop", "s"), ("spop", "s"),
              ("srem", "s"), ("del", "s"),
              ("spop", "t"), ("del", "t"),
              ("spop", "u"), ("del", "u")])
    w.quiet()


def test_smove(r, watch):
    r.sadd("s", "a", "b", "c")
    r.sadd("d", "b")
    r.sadd("last", "z")
    w = watch()
    assert r.smove("s", "t", "a") is True            # srem on the source, then sadd
    assert r.smove("s", "d", "b") is True            # already in the destination: srem only
    assert r.smove("s", "s", "c") is True            # same set: no event
    assert r.smove("s", "t", "nope") is False        # no event
    assert r.smove("last", "t", "z") is True         # source emptied: srem, del, sadd
    w.expect([("srem", "s"), ("sadd", "t"),
              ("srem", "s"),
              ("srem", "last"), ("del", "last"), ("sadd", "t")])
    w.quiet()


def test_set_store_commands(r, watch):
    r.sadd("x", "1", "2", "3")
    r.sadd("y", "2", "3", "4")
    r.sadd("z", "9")
    w = watch()
    assert r.sinterstore("d1", ["x", "y"]) == 2
    assert r.sunionstore("d2", ["x", "y"]) == 4
    assert r.sdiffstore("d3", ["x", "y"]) == 1
    assert r.sinterstore("d1", ["x", "z"]) == 0      # empty result, key there: "del"
    assert r.sdiffstore("d2", ["x", "x"]) == 0
    assert r.sunionstore("d3", ["nope1", "nope2"]) == 0
    assert r.sinterstore("d4", ["x", "nope"]) == 0   # empty result, no key: no event
    w.expect([("sinterstore", "d1"), ("sunionstore", "d2"), ("sdiffstore", "d3"),
              ("del", "d1"), ("del", "d2"), ("del", "d3")])
    w.quiet()


# ================================================================ sorted sets

def test_zadd_and_zincrby(r, watch):
    r.zadd("z", {"a": 1, "b": 2})
    w = watch()
    assert r.zadd("z", {"a": 1}) == 0                # score unchanged: no event
    assert r.zadd("z", {"a": 5}) == 0                # score changed: event
    assert r.zadd("z", {"c": 3}) == 1
    assert r.zadd("z", {"a": 9}, nx=True) == 0       # no event
    assert r.zadd("z", {"q": 9}, xx=True) == 0       # no event
    assert r.zadd("z", {"a": 1}, gt=True) == 0       # no event
    assert r.zadd("z", {"a": 1}, ch=True, lt=True) == 1
    assert r.zadd("z", {"b": 2}, incr=True) == 4.0   # ZADD INCR: "zincr"
    assert r.zincrby("z", 1, "new") == 1.0
    assert r.zincrby("z", 0, "new") == 1.0           # score unchanged: no event
    assert r.zadd("z", {"a": 1}, nx=True, incr=True) is None
    w.expect([("zadd", "z"), ("zadd", "z"), ("zadd", "z"), ("zincr", "z"), ("zincr", "z")])
    w.quiet()


def test_zrem_and_zremrangeby(r, watch):
    r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6})
    r.zadd("lex", {"a": 0, "b": 0, "c": 0})
    w = watch()
    assert r.zrem("z", "a", "nope") == 1
    assert r.zrem("z", "nope") == 0                  # no event
    assert r.zremrangebyscore("z", 2, 3) == 2
    assert r.zremrangebyscore("z", 100, 200) == 0    # no event
    assert r.zremrangebyrank("z", 0, 0) == 1
    assert r.zremrangebylex("lex", "[a", "[b") == 2
    assert r.zremrangebylex("lex", "-", "+") == 1    # emptied: then "del"
    assert r.zremrangebyrank("z", 0, -1) == 2        # emptied: then "del"
    w.expect([("zrem", "z"), ("zremrangebyscore", "z"), ("zremrangebyrank", "z"),
              ("zremrangebylex", "lex"), ("zremrangebylex", "lex"), ("del", "lex"),
              ("zremrangebyrank", "z"), ("del", "z")])
    w.quiet()


def test_zpop_family(r, watch):
    r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7})
    r.zadd("one", {"x": 1})
    w = watch()
    assert r.zpopmin("z") == [("a", 1.0)]
    assert r.zpopmax("z") == [("g", 7.0)]
    assert r.execute_command("ZPOPMAX", "z", 0) == []   # no event
    assert r.bzpopmin(["z"], timeout=1) == ("z", "b", 2.0)
    assert r.execute_command("ZMPOP", 1, "z", "MAX", "COUNT", 2) == \
        ["z", [["f", "6"], ["e", "5"]]]
    assert r.execute_command("BZMPOP", 1, 1, "z", "MIN") == ["z", [["c", "3"]]]
    assert r.zpopmin("z", 5) == [("d", 4.0)]         # emptied: then "del"
    assert r.bzpopmax(["one"], timeout=1) == ("one", "x", 1.0)
    w.expect([("zpopmin", "z"), ("zpopmax", "z"), ("zpopmin", "z"), ("zpopmax", "z"),
              ("zpopmin", "z"), ("zpopmin", "z"), ("del", "z"),
              ("zpopmax", "one"), ("del", "one")])
    w.quiet()


def test_zset_store_commands(r, watch):
    r.zadd("x", {"a": 1, "b": 2})
    r.zadd("y", {"b": 3, "c": 4})
    r.sadd("s", "m")
    r.set("taken", "v")
    w = watch()
    assert r.zunionstore("d1", ["x", "y"]) == 3
    assert r.zinterstore("d2", ["x", "y"]) == 1
    assert r.zdiffstore("d3", ["x", "y"]) == 1
    assert r.zrangestore("d4", "x", 0, -1) == 2
    assert r.zunionstore("d5", ["s"]) == 1           # a plain set as input
    assert r.zinterstore("d1", ["x", "nope"]) == 0   # empty result, key there: "del"
    assert r.zdiffstore("taken", ["x", "x"]) == 0
    assert r.zrangestore("d4", "x", 5, 10) == 0
    assert r.zrangestore("d9", "x", 5, 10) == 0      # empty, no key: no event
    assert r.zinterstore("d9", ["x", "nope"]) == 0
    w.expect([("zunionstore", "d1"), ("zinterstore", "d2"), ("zdiffstore", "d3"),
              ("zrangestore", "d4"), ("zunionstore", "d5"),
              ("del", "d1"), ("del", "taken"), ("del", "d4")])
    w.quiet()


# ================================================================ SORT

def test_sort_store(r, watch):
    r.rpush("l", "3", "1", "2")
    r.set("taken", "v")
    w = watch()
    assert r.sort("l") == ["1", "2", "3"]            # no STORE: no event
    assert r.sort("l", store="d") == 3
    assert r.sort("l", store="taken") == 3           # over a key of another type
    assert r.sort("nope", store="d") == 0            # empty result, key there: "del"
    assert r.sort("nope", store="d") == 0            # and now no key: no event
    w.expect([("sortstore", "d"), ("sortstore", "taken"), ("del", "d")])
    w.quiet()
    assert r.lrange("taken", 0, -1) == ["1", "2", "3"]


# ================================================================ expiry

def test_expired_on_access(r, watch):
    w = watch("KEA")
    for k in ("k", "j", "w"):
        r.set(k, "v", px=20)
    w.expect([("set", "k"), ("expire", "k"), ("set", "j"), ("expire", "j"),
              ("set", "w"), ("expire", "w")])
    time.sleep(0.05)
    assert r.get("k") is None
    assert r.exists("j") == 0
    assert r.set("w", "again") is True               # a write finds it expired first
    # Found on access here, unless the active cycle got there first (same events, in
    # the cycle's order): either way each "expired" comes before the write to the key.
    assert sorted(w.take(6)) == sorted(seq(("expired", "k"), ("expired", "j"),
                                           ("expired", "w")))
    w.expect([("set", "w")])
    w.quiet()


def test_expired_is_class_x_and_generic_is_not(r, watch):
    w = watch("Ex")
    r.set("k", "v", px=20)                           # set ($) and expire (g): filtered
    time.sleep(0.05)
    assert r.get("k") is None
    r.set("plain", "v", ex=100)
    r.delete("plain")
    w.expect_raw([("__keyevent@0__:expired", "k")])
    w.quiet()


def test_active_expiry_publishes_expired(server, r, watch):
    w = watch("KEx")
    r.set("k0", "v", px=100)
    c5 = server.client(db=5, decode_responses=True)
    try:
        c5.set("k5", "v", px=100)
        # Nothing touches the keys again: the server's own expiry cycle must find them.
        got = w.take(4, timeout=WAIT_S)
        assert sorted(got) == sorted(both("expired", "k0") + both("expired", "k5", 5))
        w.quiet()
        assert c5.dbsize() == 0
    finally:
        c5.close()
    assert r.dbsize() == 0


# ================================================================ new and keymiss

def test_new_is_emitted_only_when_a_key_is_created(r, rb, watch):
    r.set("exists", "1")
    r.rpush("src", "1", "2")
    r.sadd("set", "m")
    r.zadd("zs", {"m": 1})
    payload = rb.dump("exists")
    w = watch("KEn")
    r.set("a", "1")
    r.set("a", "2")                                  # overwrite: no event
    r.set("exists", "x")
    r.lpush("l", "x")
    r.hset("h", "f", "v")
    r.sadd("s", "m")
    r.zadd("z", {"m": 1})
    r.incr("n")
    r.append("ap", "x")
    r.rename("a", "b")
    r.rename("b", "exists")                          # replaces the key: "new"
    r.copy("exists", "c")
    r.lmove("src", "dst", "LEFT", "LEFT")
    r.sunionstore("u", ["set"])
    r.sunionstore("u", ["set"])                      # overwrite: no event
    r.zunionstore("zu", ["zs"])
    r.sort("src", store="st")
    rb.restore("rs", 0, payload)
    r.move("c", 3)
    r.setrange("none", 0, "")                        # nothing created: no event
    w.expect([("new", k) for k in ("a", "l", "h", "s", "z", "n", "ap", "b", "exists", "c",
                                   "dst", "u", "zu", "st", "rs")] + [("new", "c", 3)])
    w.quiet()


def test_new_comes_before_the_write_event_and_is_not_in_A(r, watch):
    w = watch("KEAn")
    r.set("k", "v")
    r.hincrby("h", "f", 1)
    w.expect([("new", "k"), ("set", "k"), ("new", "h"), ("hincrby", "h")])
    set_flags(r, "KEA")
    r.set("k2", "v")
    w.expect([("set", "k2")])
    w.quiet()


def test_new_after_an_expired_key(r, watch):
    w = watch("KEAn")
    r.set("k", "v", px=20)
    w.expect([("new", "k"), ("set", "k"), ("expire", "k")])
    time.sleep(0.05)
    r.lpush("k", "x")
    w.expect([("expired", "k"), ("new", "k"), ("lpush", "k")])
    w.quiet()


def test_keymiss_class_m(r, watch):
    r.set("a", "1")
    w = watch("KEm")
    assert r.get("nope") is None
    assert r.get("a") == "1"                         # a hit: no event
    assert r.mget("m1", "a", "m2") == [None, "1", None]
    assert r.hget("a2", "f") is None
    r.set("ok", "1")                                 # writes: not class m
    w.expect([("keymiss", "nope"), ("keymiss", "m1"), ("keymiss", "m2"),
              ("keymiss", "a2")])
    w.quiet()
    set_flags(r, "KEA")                              # A leaves m out
    assert r.get("nope") is None
    w.quiet()


# ================================================================ class filter

# One script of commands and every message it publishes with "KEAn", each tagged with
# its class; the filter tests below expect the subset their flags select.
SCRIPT = [("SET", "a", "1"), ("LPUSH", "l", "x"), ("LPOP", "l"), ("HSET", "h", "f", "v"),
          ("SADD", "s", "m"), ("ZADD", "z", "1", "m"), ("EXPIRE", "a", "100"),
          ("DEL", "a")]
SCRIPT_EVENTS = [("n", "new", "a"), ("$", "set", "a"), ("n", "new", "l"), ("l", "lpush", "l"),
                 ("l", "lpop", "l"), ("g", "del", "l"), ("n", "new", "h"),
                 ("h", "hset", "h"), ("n", "new", "s"), ("s", "sadd", "s"),
                 ("n", "new", "z"), ("z", "zadd", "z"), ("g", "expire", "a"),
                 ("g", "del", "a")]


def selected(flags):
    classes = set(flags.replace("A", "g$lshzxetd")) - set("KE")
    out = []
    for cls, event, key in SCRIPT_EVENTS:
        if cls in classes:
            ks, ke = both(event, key)
            out += ([ks] if "K" in flags else []) + ([ke] if "E" in flags else [])
    return out


@pytest.mark.parametrize("flags", ["KEA", "Kl", "El", "K$g", "Eg", "Kh", "Es", "Ez", "KEgz",
                                   "KEn", "Kn$", "A", "K", "E", "g$lshzxet", "KEm", "KEx",
                                   "KEt", "KEd"])
def test_class_filter(r, watch, flags):
    w = watch(flags)
    for args in SCRIPT:
        r.execute_command(*args)
    want = selected(flags)
    if want:
        w.expect_raw(want)
    w.quiet()


def test_empty_setting_turns_events_off(r, watch):
    w = watch("KEA")
    r.set("a", "1")
    w.expect([("set", "a")])
    set_flags(r, "")
    r.set("b", "1")
    r.delete("a", "b")
    w.quiet(0.1)


# ================================================================ CONFIG SET / GET

@pytest.mark.parametrize("value,reads_back", [
    ("", ""), ("KEA", "AKE"), ("AKE", "AKE"), ("A", "A"), ("K", "K"), ("E", "E"),
    ("Kl", "lK"), ("lK", "lK"), ("El", "lE"), ("zhs$K", "$shzK"), ("Ex", "xE"),
    ("KEe", "eKE"), ("KEt", "tKE"), ("KEd", "dKE"), ("nK", "nK"), ("KEn", "nKE"),
    ("mE", "Em"), ("KEAm", "AKEm"), ("KKK", "K"), ("KEAA", "AKE"),
    ("KEg$lshzxet", "g$lshzxetKE"),
    # 'd' is part of A in Redis 7.0, so these read back as A ...
    ("KEg$lshzxetd", "AKE"), ("KEAd", "AKE"),
    # ... and next to A, 'n' is not written back, though its events are on (see below).
    ("KEAn", "AKE"), ("KEAmn", "AKEm"),
])
def test_config_round_trip(r, flags_reset, value, reads_back):
    assert r.config_set("notify-keyspace-events", value) is True
    assert flags_of(r) == reads_back
    # Setting what was read back gives the same text again.
    assert r.config_set("notify-keyspace-events", reads_back) is True
    assert flags_of(r) == reads_back


def test_n_next_to_A_still_works_though_it_does_not_read_back(r, watch):
    w = watch("KEAn")
    assert flags_of(r) == "AKE"
    r.set("k", "v")
    w.expect([("new", "k"), ("set", "k")])
    w.quiet()


@pytest.mark.parametrize("value", ["kea", "KEX", "KE1", "KE ", " ", "KEAq", "KE*", "KE,A"])
def test_config_set_rejects_unknown_letters(r, flags_reset, value):
    set_flags(r, "Kl")
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("notify-keyspace-events", value)
    assert str(e.value) == BAD_CLASS
    assert flags_of(r) == "lK"                       # unchanged


def test_config_set_of_several_is_all_or_nothing(r, flags_reset):
    with pytest.raises(redis.ResponseError, match="maxmemory-policy"):
        r.execute_command("CONFIG", "SET", "notify-keyspace-events", "KEA",
                          "maxmemory-policy", "bogus")
    assert flags_of(r) == ""
    with pytest.raises(redis.ResponseError, match="notify-keyspace-events"):
        r.execute_command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru",
                          "notify-keyspace-events", "KEAq")
    assert r.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
    assert r.execute_command("CONFIG", "SET", "notify-keyspace-events", "Kz",
                             "maxmemory-policy", "noeviction") == "OK"
    assert flags_of(r) == "zK"


def test_config_get_default_and_by_pattern(r, flags_reset):
    assert r.execute_command("CONFIG", "GET", "notify-keyspace-events") == \
        ["notify-keyspace-events", ""]
    assert r.config_get("notify-keyspace-*") == {"notify-keyspace-events": ""}


def test_setting_given_at_startup(server_factory):
    s = server_factory(extra_args=["--notify-keyspace-events", "KEl"])
    c = s.client(decode_responses=True)
    sub = None
    try:
        assert flags_of(c) == "lKE"
        sub = Subscriber(s)
        c.set("a", "1")
        c.rpush("l", "x")
        sub.expect([("rpush", "l")])
        sub.quiet()
    finally:
        if sub is not None:
            sub.close()
        c.close()


# ================================================================ MULTI/EXEC, scripts

def test_events_from_multi_exec(server, r, watch):
    r.set("str", "x")
    w = watch()
    p = r.pipeline(transaction=True)
    p.set("a", "1").lpush("l", "x").incr("a").lpush("str", "y").delete("a").expire("l", 100)
    res = p.execute(raise_on_error=False)
    assert res[:3] == [True, 1, 2] and isinstance(res[3], redis.ResponseError)
    # The failing command emits nothing; the others all do, in order.
    w.expect([("set", "a"), ("lpush", "l"), ("incrby", "a"), ("del", "a"), ("expire", "l")])
    w.quiet()
    # A discarded transaction emits nothing.
    t = server.client(decode_responses=True, single_connection_client=True)
    t.response_callbacks.clear()
    try:
        assert t.execute_command("MULTI") == "OK"
        assert t.execute_command("SET", "b", "1") == "QUEUED"
        assert t.execute_command("DISCARD") == "OK"
    finally:
        t.close()
    w.quiet()


def test_events_from_eval(r, watch):
    r.set("str", "x")
    w = watch()
    assert r.eval("redis.call('SET', KEYS[1], '1'); redis.call('RPUSH', KEYS[2], 'a', 'b');"
                  "redis.call('DEL', KEYS[1]); return 1", 2, "a", "l") == 1
    # pcall's error emits nothing and the script goes on.
    assert r.eval("redis.call('SET', KEYS[1], '1'); redis.pcall('LPUSH', KEYS[2], 'x');"
                  "redis.call('EXPIRE', KEYS[1], 100); return 1", 2, "b", "str") == 1
    # An error that stops the script keeps the events of what it had done.
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.eval("redis.call('SET', KEYS[1], '1'); redis.call('LPUSH', KEYS[2], 'x')",
               2, "c", "str")
    w.expect([("set", "a"), ("rpush", "l"), ("del", "a"),
              ("set", "b"), ("expire", "b"),
              ("set", "c")])
    w.quiet()


def test_events_from_fcall(r, watch):
    r.function_load("#!lua name=notifytest\n"
                    "redis.register_function('bump', function(keys, args)\n"
                    "  redis.call('HINCRBY', keys[1], 'n', 1)\n"
                    "  return redis.call('INCR', keys[2])\n"
                    "end)", replace=True)
    try:
        w = watch()
        assert r.fcall("bump", 2, "h", "c") == 1
        w.expect([("hincrby", "h"), ("incrby", "c")])
        w.quiet()
    finally:
        r.function_delete("notifytest")


# ================================================================ threads, eviction

def test_many_connections_over_three_threads_one_subscriber(server_factory):
    s = server_factory(threads=3)
    admin = s.client(decode_responses=True)
    try:
        set_flags(admin, "KEA")
        sub = Subscriber(s)
    except BaseException:
        admin.close()
        raise
    writers, keys = 4, 40
    errors = []

    def write(n):
        c = s.client(decode_responses=True)
        try:
            for i in range(keys):
                k = "w%d:%d" % (n, i)
                c.set(k, "v", ex=100)
                c.rpush("l:" + k, "a")
                c.hset("h:" + k, "f", "v")
                c.delete(k)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    try:
        threads = [threading.Thread(target=write, args=(n,), daemon=True)
                   for n in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errors and not any(t.is_alive() for t in threads)
        per_key = [("set", ""), ("expire", ""), ("rpush", "l:"), ("hset", "h:"), ("del", "")]
        want = []
        for n in range(writers):
            for i in range(keys):
                k = "w%d:%d" % (n, i)
                for event, prefix in per_key:
                    want += both(event, prefix + k)
        got = sub.take(len(want), timeout=15)
        assert collections.Counter(got) == collections.Counter(want)
        sub.quiet()
        # Each key's own events arrive in the order its writes were made.
        for n in range(writers):
            for i in range(keys):
                ch = "__keyspace@0__:w%d:%d" % (n, i)
                assert [m for c, m in got if c == ch] == ["set", "expire", "del"]
    finally:
        sub.close()
        admin.close()


def test_eviction_publishes_evicted(server_factory):
    s = server_factory()
    c = s.client(decode_responses=True)
    try:
        # Pipelined traffic first: the I/O buffers it grows count as used memory, so the
        # limit below is set over them.
        p = c.pipeline(transaction=False)
        for i in range(5000):
            p.set("warm:%d" % i, "v" * 200)
        p.execute()
        c.flushall()
        value = "v" * 1000
        for i in range(200):
            c.set("k:%d" % i, value)
        set_flags(c, "Ee")
        sub = Subscriber(s)
        try:
            c.config_set("maxmemory-policy", "allkeys-random")
            start = int(c.info("stats")["evicted_keys"])
            c.config_set("maxmemory", str(int(c.info("memory")["used_memory"]) + 64 * 1024))
            for i in range(200, 600):
                c.set("k:%d" % i, value)
            c.config_set("maxmemory", "0")           # no eviction from here on
            n = int(c.info("stats")["evicted_keys"]) - start
            assert n > 0
            keys = sub.take(n, timeout=WAIT_S)      # one event per eviction counted
            sub.quiet()
            assert {ch for ch, _ in keys} == {"__keyevent@0__:evicted"}
            names = [k for _, k in keys]
            assert len(set(names)) == n
            assert all(k.startswith("k:") for k in names)
            assert sum(c.exists(k) for k in names) == 0   # none was written again
            assert c.dbsize() == 600 - n
        finally:
            sub.close()
    finally:
        c.close()
