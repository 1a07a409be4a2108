#!/usr/bin/env python3
"""Command-sequence fuzzer: random commands over every family against a real server.

Several clients send pipelined batches of random commands (valid, malformed, wrong
arity, odd numbers, keys on one shard and across shards, blocking pops with short
timeouts, snapshots) and read one well-formed RESP reply for each. Between batches an
admin client checks that the server is up and that the keyspace is consistent: DBSIZE
equals what KEYS and a full SCAN see, and every key listed exists and has a type. At the
end the server must stop cleanly on SIGTERM. Any failure prints the seed; --seed N
replays the same commands (the timing of the clients may still differ).

With --with-replica, a second strata-server follows the fuzzed one (REPLICAOF) the whole
time, so every write family's propagation runs too; at the end, once the replica has
caught up, both must hold the same data (DEBUG DIGEST, with active expiry paused on the
master so that no key expires between the two digests). --replica-each-round compares
them after every round as well, so that a difference is caught in the round that made
it. On a difference the keys that differ are printed with what the master's replication
stream did to them (read back from its backlog, which --with-replica makes large enough
for the whole run); --stream-out keeps the whole stream in a file.

    /usr/bin/python3 tests/fuzz/command_fuzz.py --server-bin build-asan/server/strata-server \\
        --threads 2 --seconds 60
"""
import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

KEYS = [b"k%d" % i for i in range(12)] + [b"{t}k%d" % i for i in range(6)]
FIELDS = [b"f%d" % i for i in range(8)]
NUMBERS = [b"0", b"1", b"-1", b"2", b"10", b"-10", b"100", b"9223372036854775807",
           b"-9223372036854775808", b"3.5", b"-0.5", b"1e3", b"inf", b"-inf", b"+inf", b"nan",
           b"abc", b"", b"00", b" 1"]
FLAGS = [b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR", b"EX", b"PX", b"EXAT", b"PXAT",
         b"KEEPTTL", b"GET", b"WITHSCORES", b"LIMIT", b"COUNT", b"MATCH", b"TYPE", b"REV",
         b"BYSCORE", b"BYLEX", b"LEFT", b"RIGHT", b"MIN", b"MAX", b"ALPHA", b"DESC", b"ASC",
         b"BY", b"STORE", b"REPLACE", b"DB", b"ABSOLUTETTL", b"WEIGHTS", b"AGGREGATE",
         b"SUM", b"RANK", b"MAXLEN", b"WITHVALUES", b"ASYNC", b"SYNC"]


class Gen:
    def __init__(self, rng):
        self.r = rng

    def key(self):
        return self.r.choice(KEYS)

    def keys(self, lo=1, hi=5):
        return [self.key() for _ in range(self.r.randint(lo, hi))]

    def field(self):
        return self.r.choice(FIELDS)

    def num(self):
        if self.r.random() < 0.7:
            return str(self.r.randint(-20, 20)).encode()
        return self.r.choice(NUMBERS)

    def score(self):
        if self.r.random() < 0.7:
            return str(self.r.randint(-5, 5) + self.r.choice([0, 0.5])).encode()
        return self.r.choice(NUMBERS)

    def timeout(self):
        return self.r.choice([b"0.01", b"0.02", b"0.05"])

    def value(self):
        p = self.r.random()
        if p < 0.6:
            return self.r.choice([b"a", b"b", b"c", b"1", b"2", b"hello", b""])
        if p < 0.9:
            return bytes(self.r.randrange(256) for _ in range(self.r.randint(0, 40)))
        return b"x" * self.r.choice([100, 1000, 70000])

    def flag(self):
        return self.r.choice(FLAGS)

    def any(self):
        return self.r.choice([self.key, self.field, self.num, self.value, self.flag])()


def commands(g):
    """(name, argument builder) per command; builders return the arguments after the
    name. Blocking pops always get a short positive timeout (0 would wait forever)."""
    k, ks, f, n, v, fl, sc, to = (g.key, g.keys, g.field, g.num, g.value, g.flag, g.score,
                                  g.timeout)
    off = lambda: g.r.choice([b"0", b"7", b"100", b"1000", b"8191", b"-1", b"x", b"4294967296",
                              str(g.r.randrange(40000)).encode()])  # noqa: E731
    pairs = lambda gen: sum(([a, b] for a, b in gen), [])  # noqa: E731
    lon = lambda: g.r.choice([b"13.36", b"-180", b"180", b"0", b"181", b"x",  # noqa: E731
                              str(g.r.uniform(-180, 180)).encode()])
    lat = lambda: g.r.choice([b"38.1", b"85.05112878", b"-85.06", b"0", b"nan",  # noqa: E731
                              str(g.r.uniform(-85, 85)).encode()])
    rad = lambda: g.r.choice([b"0", b"1", b"200", b"5000", b"-1", b"x",  # noqa: E731
                              b"20000000", b"inf"])
    unit = lambda: g.r.choice([b"m", b"km", b"mi", b"ft", b"au"])  # noqa: E731
    return [
        # strings
        ("SET", lambda: [k(), v()] + g.r.sample([b"NX", b"XX", b"GET", b"KEEPTTL"], 1)),
        ("SET", lambda: [k(), v(), g.r.choice([b"EX", b"PX"]), n()]),
        ("GET", lambda: [k()]), ("GETSET", lambda: [k(), v()]), ("GETDEL", lambda: [k()]),
        ("GETEX", lambda: [k(), fl(), n()]), ("APPEND", lambda: [k(), v()]),
        ("STRLEN", lambda: [k()]), ("INCR", lambda: [k()]), ("DECRBY", lambda: [k(), n()]),
        ("INCRBYFLOAT", lambda: [k(), sc()]), ("SETRANGE", lambda: [k(), n(), v()]),
        ("GETRANGE", lambda: [k(), n(), n()]), ("SETNX", lambda: [k(), v()]),
        ("SETEX", lambda: [k(), n(), v()]), ("MSET", lambda: pairs((x, v()) for x in ks())),
        ("MSETNX", lambda: pairs((x, v()) for x in ks())), ("MGET", lambda: ks(1, 8)),
        ("LCS", lambda: [k(), k()]),
        # bitmaps (offsets kept small: a valid huge one makes a 512 MB value)
        ("SETBIT", lambda: [k(), off(), g.r.choice([b"0", b"1", b"2"])]),
        ("GETBIT", lambda: [k(), off()]),
        ("BITCOUNT", lambda: [k()] + g.r.choice([[], [n(), n()], [n(), n(), b"BIT"]])),
        ("BITPOS", lambda: [k(), g.r.choice([b"0", b"1"])] + [n() for _ in
                                                               range(g.r.randint(0, 2))]),
        ("BITOP", lambda: [g.r.choice([b"AND", b"OR", b"XOR", b"NOT"]), k()] + ks(1, 3)),
        ("BITFIELD", lambda: [k(), g.r.choice([b"GET", b"SET", b"INCRBY"]),
                              g.r.choice([b"i8", b"u4", b"i64", b"u63", b"x1"]), off(), n(),
                              b"OVERFLOW", g.r.choice([b"WRAP", b"SAT", b"FAIL"]),
                              b"INCRBY", b"i16", b"#3", n()]),
        ("BITFIELD_RO", lambda: [k(), b"GET", b"u8", off()]),
        # HyperLogLog
        ("PFADD", lambda: [k()] + [v() for _ in range(g.r.randint(0, 5))]),
        ("PFCOUNT", lambda: ks(1, 3)), ("PFMERGE", lambda: [k()] + ks(1, 3)),
        # geo (a sorted set of geohash scores)
        ("GEOADD", lambda: [k()] + g.r.sample([b"NX", b"XX", b"CH"], g.r.randint(0, 1)) + sum(
            ([lon(), lat(), f()] for _ in range(g.r.randint(1, 3))), [])),
        ("GEOPOS", lambda: [k(), f(), f()]), ("GEOHASH", lambda: [k(), f()]),
        ("GEODIST", lambda: [k(), f(), f()] + g.r.choice([[], [unit()]])),
        ("GEOSEARCH", lambda: [k()] + g.r.choice([[b"FROMMEMBER", f()],
                                                  [b"FROMLONLAT", lon(), lat()]])
         + g.r.choice([[b"BYRADIUS", rad(), unit()], [b"BYBOX", rad(), rad(), unit()]])
         + g.r.sample([b"ASC", b"WITHDIST", b"WITHCOORD", b"WITHHASH", b"COUNT", b"3", b"ANY"],
                      g.r.randint(0, 3))),
        ("GEOSEARCHSTORE", lambda: [k(), k(), b"FROMLONLAT", lon(), lat(), b"BYRADIUS", rad(),
                                    unit()] + g.r.choice([[], [b"STOREDIST"]])),
        ("GEORADIUS", lambda: [k(), lon(), lat(), rad(), unit()]
         + g.r.choice([[], [b"STORE", k()], [b"STOREDIST", k(), b"COUNT", b"2"],
                       [b"WITHDIST", b"DESC"]])),
        ("GEORADIUSBYMEMBER_RO", lambda: [k(), f(), rad(), unit(), b"WITHCOORD"]),
        # keys
        ("DEL", lambda: ks()), ("UNLINK", lambda: ks()), ("EXISTS", lambda: ks()),
        ("TOUCH", lambda: ks()), ("TYPE", lambda: [k()]), ("RENAME", lambda: [k(), k()]),
        ("RENAMENX", lambda: [k(), k()]), ("COPY", lambda: [k(), k()] + ([b"REPLACE"]
                                                                         if g.r.random() < .5
                                                                         else [])),
        ("MOVE", lambda: [k(), g.r.choice([b"0", b"1", b"2", b"99"])]),
        ("EXPIRE", lambda: [k(), n()] + ([fl()] if g.r.random() < .3 else [])),
        ("PEXPIRE", lambda: [k(), g.r.choice([b"1", b"5", b"100000"])]),
        ("TTL", lambda: [k()]), ("PTTL", lambda: [k()]), ("PERSIST", lambda: [k()]),
        ("EXPIRETIME", lambda: [k()]), ("OBJECT", lambda: [g.r.choice([b"ENCODING", b"FREQ",
                                                                       b"IDLETIME", b"HELP"]),
                                                           k()]),
        ("RANDOMKEY", lambda: []), ("DBSIZE", lambda: []),
        ("SCAN", lambda: [n()] + ([b"MATCH", b"k*"] if g.r.random() < .5 else [])),
        ("KEYS", lambda: [g.r.choice([b"*", b"k?", b"{t}*", b"[a-k]*", b"\\"])]),
        ("SORT", lambda: [k()] + g.r.sample([b"ALPHA", b"DESC", b"LIMIT", b"0", b"3"], 2)),
        ("SELECT", lambda: [g.r.choice([b"0", b"0", b"0", b"1", b"16", b"-1"])]),
        ("SWAPDB", lambda: [b"0", b"1"]),
        # hashes
        ("HSET", lambda: [k()] + pairs((f(), v()) for _ in range(g.r.randint(1, 4)))),
        ("HGET", lambda: [k(), f()]), ("HDEL", lambda: [k(), f(), f()]),
        ("HGETALL", lambda: [k()]), ("HKEYS", lambda: [k()]), ("HVALS", lambda: [k()]),
        ("HLEN", lambda: [k()]), ("HEXISTS", lambda: [k(), f()]),
        ("HINCRBY", lambda: [k(), f(), n()]), ("HINCRBYFLOAT", lambda: [k(), f(), sc()]),
        ("HMGET", lambda: [k(), f(), f(), f()]), ("HSETNX", lambda: [k(), f(), v()]),
        ("HSTRLEN", lambda: [k(), f()]), ("HRANDFIELD", lambda: [k(), n()] +
                                          ([b"WITHVALUES"] if g.r.random() < .5 else [])),
        ("HSCAN", lambda: [k(), b"0"]),
        # sets
        ("SADD", lambda: [k()] + [g.r.choice(FIELDS + NUMBERS[:6]) for _ in range(3)]),
        ("SREM", lambda: [k(), f(), n()]), ("SMEMBERS", lambda: [k()]),
        ("SISMEMBER", lambda: [k(), f()]), ("SMISMEMBER", lambda: [k(), f(), n()]),
        ("SCARD", lambda: [k()]), ("SPOP", lambda: [k()] + ([n()] if g.r.random() < .5
                                                             else [])),
        ("SRANDMEMBER", lambda: [k(), n()]), ("SINTER", lambda: ks()),
        ("SUNION", lambda: ks()), ("SDIFF", lambda: ks()),
        ("SINTERSTORE", lambda: [k()] + ks()), ("SUNIONSTORE", lambda: [k()] + ks()),
        ("SDIFFSTORE", lambda: [k()] + ks()), ("SMOVE", lambda: [k(), k(), f()]),
        ("SINTERCARD", lambda: [b"2", k(), k()] + ([b"LIMIT", n()] if g.r.random() < .5
                                                   else [])),
        ("SSCAN", lambda: [k(), b"0"]),
        # lists
        ("LPUSH", lambda: [k(), v(), v()]), ("RPUSH", lambda: [k(), v()]),
        ("LPUSHX", lambda: [k(), v()]), ("LPOP", lambda: [k()] + ([n()] if g.r.random() < .4
                                                                   else [])),
        ("RPOP", lambda: [k()]), ("LRANGE", lambda: [k(), n(), n()]), ("LLEN", lambda: [k()]),
        ("LINDEX", lambda: [k(), n()]), ("LSET", lambda: [k(), n(), v()]),
        ("LINSERT", lambda: [k(), g.r.choice([b"BEFORE", b"AFTER", b"X"]), v(), v()]),
        ("LREM", lambda: [k(), n(), v()]), ("LTRIM", lambda: [k(), n(), n()]),
        ("LPOS", lambda: [k(), v()] + g.r.sample([b"RANK", b"1", b"COUNT", b"0", b"MAXLEN",
                                                   b"2"], 2)),
        ("LMOVE", lambda: [k(), k(), g.r.choice([b"LEFT", b"RIGHT"]),
                           g.r.choice([b"LEFT", b"RIGHT"])]),
        ("RPOPLPUSH", lambda: [k(), k()]),
        ("LMPOP", lambda: [b"2", k(), k(), g.r.choice([b"LEFT", b"RIGHT"])]),
        ("BLPOP", lambda: ks(1, 3) + [to()]), ("BRPOP", lambda: ks(1, 2) + [to()]),
        ("BLMOVE", lambda: [k(), k(), b"LEFT", b"RIGHT", to()]),
        ("BLMPOP", lambda: [to(), b"2", k(), k(), b"LEFT"]),
        # sorted sets
        ("ZADD", lambda: [k()] + ([fl()] if g.r.random() < .3 else []) +
         pairs((sc(), f()) for _ in range(g.r.randint(1, 3)))),
        ("ZREM", lambda: [k(), f(), f()]), ("ZSCORE", lambda: [k(), f()]),
        ("ZINCRBY", lambda: [k(), sc(), f()]), ("ZCARD", lambda: [k()]),
        ("ZRANGE", lambda: [k(), n(), n()] + ([b"WITHSCORES"] if g.r.random() < .5 else [])),
        ("ZRANGE", lambda: [k(), sc(), sc(), b"BYSCORE"]),
        ("ZRANGEBYSCORE", lambda: [k(), g.r.choice([b"-inf", b"(1", b"0"]),
                                   g.r.choice([b"+inf", b"5", b"(3"])]),
        ("ZRANGEBYLEX", lambda: [k(), g.r.choice([b"-", b"[a", b"(f1"]),
                                 g.r.choice([b"+", b"[z", b"x"])]),
        ("ZREVRANGE", lambda: [k(), n(), n()]), ("ZRANK", lambda: [k(), f()]),
        ("ZCOUNT", lambda: [k(), sc(), sc()]), ("ZLEXCOUNT", lambda: [k(), b"-", b"+"]),
        ("ZPOPMIN", lambda: [k()] + ([n()] if g.r.random() < .5 else [])),
        ("ZPOPMAX", lambda: [k()]), ("ZMPOP", lambda: [b"2", k(), k(), b"MIN"]),
        ("BZPOPMIN", lambda: ks(1, 2) + [to()]),
        ("BZMPOP", lambda: [to(), b"1", k(), b"MAX"]),
        ("ZUNIONSTORE", lambda: [k(), b"2", k(), k()]),
        ("ZINTERSTORE", lambda: [k(), b"2", k(), k(), b"AGGREGATE", b"MAX"]),
        ("ZDIFF", lambda: [b"2", k(), k()]), ("ZRANDMEMBER", lambda: [k(), n()]),
        ("ZMSCORE", lambda: [k(), f(), f()]), ("ZRANGESTORE", lambda: [k(), k(), n(), n()]),
        ("ZREMRANGEBYSCORE", lambda: [k(), sc(), sc()]),
        ("ZREMRANGEBYRANK", lambda: [k(), n(), n()]), ("ZSCAN", lambda: [k(), b"0"]),
        # server and connection
        ("PING", lambda: []), ("ECHO", lambda: [v()]), ("TIME", lambda: []),
        ("INFO", lambda: g.r.sample([b"server", b"memory", b"keyspace", b"stats", b"all"], 1)),
        ("MEMORY", lambda: [b"USAGE", k()]), ("MEMORY", lambda: [b"STATS"]),
        ("COMMAND", lambda: [b"COUNT"]), ("CLIENT", lambda: [b"ID"]),
        ("CLIENT", lambda: [b"SETNAME", g.r.choice([b"fuzz", b"bad name"])]),
        ("CLIENT", lambda: [b"LIST"]), ("CONFIG", lambda: [b"GET", b"max*"]),
        ("SLOWLOG", lambda: g.r.choice([[b"GET"], [b"GET", n()], [b"LEN"], [b"RESET"], [b"X"]])),
        ("LATENCY", lambda: g.r.choice([[b"LATEST"], [b"HISTORY", b"command"], [b"RESET"],
                                        [b"DOCTOR"], [b"GRAPH", b"command"]])),
        ("CONFIG", lambda: [b"SET", g.r.choice([b"slowlog-log-slower-than",
                                                b"latency-monitor-threshold",
                                                b"list-compress-depth"]),
                            g.r.choice([b"0", b"1", b"-1", b"100"])]),
        ("DEBUG", lambda: [b"SLEEP", b"0"]),
        # A reload under the other clients' traffic (they get -LOADING meanwhile).
        ("DEBUG", lambda: [b"RELOAD"] + g.r.choice([[], [b"NOFLUSH"], [b"BAD"]])),
        ("COMMAND", lambda: [g.r.choice([b"GETKEYS", b"GETKEYSANDFLAGS"]),
                             g.r.choice([b"SET", b"ZUNIONSTORE", b"SORT", b"MIGRATE", b"EVAL",
                                         b"BITFIELD", b"GEORADIUS", b"XREAD", b"OBJECT",
                                         b"LMPOP", b"BZMPOP", b"SMOVE", b"NOSUCH"])] +
                            [g.any() for _ in range(g.r.randrange(0, 7))]),
        ("COMMAND", lambda: [b"DOCS"] + [g.r.choice([b"set", b"config|get", b"x|y", b"nosuch",
                                                     g.any()])]),
        ("COMMAND", lambda: [b"INFO", g.r.choice([b"eval", b"get", b"nosuch"])]),
        ("ROLE", lambda: []), ("REPLICAOF", lambda: [b"NO", b"ONE"]),
        ("LASTSAVE", lambda: []), ("BGSAVE", lambda: []),
        ("HELLO", lambda: [g.r.choice([b"2", b"3", b"4"])]),
        ("FLUSHDB", lambda: [g.r.choice([b"ASYNC", b"SYNC"])]),
        # transactions: whatever follows a MULTI is queued until EXEC or DISCARD
        ("MULTI", lambda: []), ("EXEC", lambda: []), ("DISCARD", lambda: []),
        ("WATCH", lambda: ks(1, 3)), ("UNWATCH", lambda: []),
        # scripts: a key's shard, redis.call errors, a Lua error, a table reply
        ("EVAL", lambda: [b"return redis.call('GET', KEYS[1])", b"1", k()]),
        ("EVAL", lambda: [b"return redis.call('INCR', KEYS[1])", b"1", k()]),
        ("EVAL", lambda: [b"redis.call('SET', KEYS[1], ARGV[1]); return {1, ARGV[1], {err='x'}}",
                          b"1", k(), v()]),
        ("EVAL", lambda: [b"error('boom')", b"0"]),
        ("EVAL", lambda: [b"return redis.pcall('LPUSH', KEYS[1], 'x')", b"1", k()]),
        ("EVALSHA", lambda: [b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db", b"0"]),
        # scripts across shards: declared keys anywhere, multi-shard commands inside,
        # undeclared keys (before and after a write), the whole keyspace
        ("EVAL", lambda: [b"local s = 0; for i, k in ipairs(KEYS) do "
                          b"s = s + (tonumber(redis.pcall('INCR', k)) or 0) end; return s",
                          b"3", k(), k(), k()]),
        ("EVAL", lambda: [b"redis.call('MSET', KEYS[1], ARGV[1], KEYS[2], ARGV[1]); "
                          b"return redis.call('MGET', KEYS[1], KEYS[2], KEYS[3])",
                          b"3", k(), k(), k(), v()]),
        ("EVAL", lambda: [b"return redis.pcall('RENAME', KEYS[1], KEYS[2])", b"2", k(), k()]),
        ("EVAL", lambda: [b"return redis.pcall('RPOPLPUSH', KEYS[1], KEYS[2])", b"2", k(), k()]),
        ("EVAL", lambda: [b"redis.call('SET', KEYS[1], 1); return redis.pcall('GET', ARGV[1])",
                          b"1", k(), k()]),
        ("EVAL", lambda: [b"return {redis.call('DBSIZE'), redis.pcall('DEL', ARGV[1], ARGV[2])}",
                          b"0", k(), k()]),
        ("EVAL_RO", lambda: [b"return redis.call('EXISTS', KEYS[1], KEYS[2], ARGV[1])",
                             b"2", k(), k(), k()]),
        ("SCRIPT", lambda: [g.r.choice([b"LOAD", b"EXISTS", b"FLUSH"]), b"return 1"]),
        # Pub/Sub and keyspace notifications: a client's own channels only (a message it
        # read would count as a reply), publishes that reach nobody, events on every write
        # (fixed names: SUNSUBSCRIBE without one confirms each shard channel the client has)
        ("SUBSCRIBE", lambda: [b"fuzz:" + g.r.choice([b"a", b"b"])]),
        ("UNSUBSCRIBE", lambda: [b"fuzz:" + g.r.choice([b"a", b"b"])]),
        ("SSUBSCRIBE", lambda: [b"fuzz:s"]), ("SUNSUBSCRIBE", lambda: []),
        ("PUBLISH", lambda: [b"fuzz:nobody", v()]), ("SPUBLISH", lambda: [k(), v()]),
        ("PUBSUB", lambda: [g.r.choice([b"CHANNELS", b"NUMPAT", b"NUMSUB", b"SHARDNUMSUB"])]),
        ("RESET", lambda: []),
        ("CONFIG", lambda: [b"SET", b"notify-keyspace-events",
                            g.r.choice([b"", b"KEA", b"KExn", b"El$", b"Kgm"])]),
        # client-side caching (RESP2 and RESP3; no REDIRECT: its target's messages would
        # look like replies)
        ("CLIENT", lambda: [b"TRACKING", g.r.choice([b"ON", b"ON", b"OFF"])] + g.r.choice(
            [[], [b"BCAST"], [b"BCAST", b"PREFIX", b"k"], [b"OPTIN"], [b"OPTOUT"],
             [b"NOLOOP"], [b"PREFIX", b"x"]])),
        ("CLIENT", lambda: [b"CACHING", g.r.choice([b"YES", b"NO", b"maybe"])]),
        ("CLIENT", lambda: [g.r.choice([b"TRACKINGINFO", b"GETREDIR"])]),
        ("CONFIG", lambda: [b"SET", b"tracking-table-max-keys",
                            g.r.choice([b"0", b"3", b"1000000"])]),
        # streams: IDs right and wrong, groups, trimming, short blocking reads
        ("XADD", lambda: [k()] + g.r.choice([[], [b"MAXLEN", b"~", b"5"], [b"MINID", b"2"],
                                             [b"NOMKSTREAM"]]) +
                 [g.r.choice([b"*", b"*", b"5-*", b"7", b"0-0", b"x"]), b"f", v(), b"g", v()]),
        ("XRANGE", lambda: [k(), g.r.choice([b"-", b"(1", b"3"]), g.r.choice([b"+", b"9", b"(5"]),
                            b"COUNT", g.r.choice([b"2", b"0", b"-1"])]),
        ("XREVRANGE", lambda: [k(), b"+", b"-"]), ("XLEN", lambda: [k()]),
        ("XDEL", lambda: [k(), g.r.choice([b"1-0", b"2", b"bad"])]),
        ("XTRIM", lambda: [k(), g.r.choice([b"MAXLEN", b"MINID"]), g.r.choice([b"=", b"~"]),
                           g.r.choice([b"0", b"3", b"5-0"])]),
        ("XGROUP", lambda: [b"CREATE", k(), b"g", g.r.choice([b"0", b"$"]), b"MKSTREAM"]),
        ("XGROUP", lambda: [b"DESTROY", k(), b"g"]), ("XGROUP", lambda: [b"SETID", k(), b"g", b"$"]),
        ("XREADGROUP", lambda: [b"GROUP", b"g", b"c", b"COUNT", b"3", b"STREAMS", k(), k(),
                                g.r.choice([b">", b"0"]), b">"]),
        ("XREAD", lambda: [b"COUNT", b"2", b"STREAMS", k(), k(), b"0", b"$"]),
        ("XREAD", lambda: [b"BLOCK", b"1", b"STREAMS", k(), b"$"]),
        ("XACK", lambda: [k(), b"g", b"1-0", b"2-0"]), ("XPENDING", lambda: [k(), b"g"]),
        ("XCLAIM", lambda: [k(), b"g", b"c2", b"0", b"1-0", b"JUSTID"]),
        ("XAUTOCLAIM", lambda: [k(), b"g", b"c2", b"0", b"0", b"COUNT", b"5"]),
        ("XINFO", lambda: [g.r.choice([b"STREAM", b"GROUPS"]), k()]),
        ("XSETID", lambda: [k(), g.r.choice([b"99-0", b"0-1"])]),
        # nonsense
        ("NOSUCHCOMMAND", lambda: [g.any()]),
    ]


INVALIDATION_PUSHES = (b"invalidate", b"tracking-redir-broken")


class Reader:
    """Reads one RESP2/RESP3 reply from a socket; raises on anything malformed."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        if not line:
            raise ValueError("empty reply line")
        t, rest = line[:1], line[1:]
        if t in b"+-":
            return (t, rest)
        if t in b":(":
            int(rest)
            return (t, rest)
        if t == b",":
            float(rest.replace(b"inf", b"1e999"))
            return (t, rest)
        if t in b"_":
            return (t, None)
        if t == b"#":
            if rest not in (b"t", b"f"):
                raise ValueError("bad boolean %r" % rest)
            return (t, rest)
        if t in b"$=!":
            n = int(rest)
            return (t, None if n < 0 else self._exact(n))
        if t in b"*~>":
            n = int(rest)
            return (t, None if n < 0 else [self.read() for _ in range(n)])
        if t == b"%" or t == b"|":
            n = int(rest)
            return (t, [(self.read(), self.read()) for _ in range(n)])
        raise ValueError("bad reply type %r" % line[:40])


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def mutate(g, name, args):
    """Sometimes break a call: wrong arity, junk argument, lower-case name. Blocking pops
    are left alone: a junk last argument would be their timeout (0 waits forever). So are
    the (un)subscribe commands: one reply per channel, so a junk channel (or none, for
    "every channel") would change how many replies the call has."""
    if (name.startswith("B") and name not in ("BGSAVE",)) or "SUBSCRIBE" in name:
        return [name.encode()] + args
    p = g.r.random()
    if p < 0.05 and args:
        args = args[:-1]
    elif p < 0.10:
        args = args + [g.any()]
    elif p < 0.15:
        name = name.lower()
    return [name.encode() if isinstance(name, str) else name] + args


class Fuzzer:
    def __init__(self, port, seed, clients, batch):
        self.port, self.seed, self.clients, self.batch = port, seed, clients, batch
        self.sent = 0
        self.errors = []
        # Each client's commands of the round that ran last, with their replies' kinds,
        # for the report when a round ends with the replica not matching.
        self.last_round = {}

    def client_batch(self, index, round_no):
        g = Gen(random.Random(self.seed * 1000003 + index * 7919 + round_no))
        table = commands(g)
        calls = []
        sent_args = []
        for _ in range(self.batch):
            name, build = g.r.choice(table)
            args = mutate(g, name, build())
            sent_args.append(args)
            calls.append(encode(args))
        sock = self.socks[index]
        sock.sendall(b"".join(calls))
        reader = self.readers[index]
        log = []
        for args in sent_args:
            kind, payload = reader.read()
            # Invalidations (CLIENT TRACKING) are pushes beside the replies, not replies.
            while kind == b">" and payload and payload[0][1] in INVALIDATION_PUSHES:
                kind, payload = reader.read()
            if kind == b"-" and b"internal error" in payload:
                raise AssertionError("internal error reply: %r" % payload)
            if isinstance(payload, bytes):
                payload = payload[:40]
            elif isinstance(payload, list):
                payload = "%d items" % len(payload)
            log.append((args, kind, payload))
        self.last_round[index] = log
        self.sent += len(calls)

    def print_last_round(self, names):
        """Each client's commands of the last round that name one of `names` or change
        databases or the client's own, in the order the client sent them, with replies."""
        shown = (b"SELECT", b"SWAPDB", b"FLUSHDB", b"FLUSHALL", b"MOVE", b"COPY", b"MULTI",
                 b"EXEC", b"DISCARD", b"RESET", b"DEBUG")
        for index in sorted(self.last_round):
            lines = []
            for i, (args, kind, payload) in enumerate(self.last_round[index]):
                name = args[0].upper() if args and isinstance(args[0], bytes) else b""
                if name in shown or names & set(a for a in args[1:] if isinstance(a, bytes)):
                    lines.append("    #%d %r -> %s %r" % (
                        i, [a[:40] if isinstance(a, bytes) else a for a in args],
                        kind.decode(errors="replace"), payload))
            print("  client %d, %d commands of its last round:" % (index, len(lines)))
            for line in lines[-120:]:
                print(line)

    def run(self, seconds, check):
        self.socks = []
        self.readers = []
        for _ in range(self.clients):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
            self.socks.append(s)
            self.readers.append(Reader(s))
        deadline = time.monotonic() + seconds
        round_no = 0
        try:
            while time.monotonic() < deadline:
                threads = []
                failures = []

                def work(i, r=round_no):
                    try:
                        self.client_batch(i, r)
                    except Exception as e:  # noqa: BLE001 - reported with the seed
                        failures.append("client %d, round %d: %s: %s" % (i, r, type(e).__name__,
                                                                          e))

                for i in range(self.clients):
                    t = threading.Thread(target=work, args=(i,))
                    t.start()
                    threads.append(t)
                for t in threads:
                    t.join(120)
                    if t.is_alive():
                        failures.append("a client got no reply within 120 s")
                if failures:
                    raise AssertionError("; ".join(failures))
                check()
                round_no += 1
        finally:
            for s in self.socks:
                s.close()
        return round_no


def admin_call(port, *args):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(encode([a if isinstance(a, bytes) else str(a).encode() for a in args]))
        return Reader(s).read()
    finally:
        s.close()


def info_field(port, section, name):
    for line in admin_call(port, "INFO", section)[1].decode(errors="replace").splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return None


def key_digests(port):
    """{(db, key): (type, DEBUG DIGEST-VALUE)} for every key of the databases the fuzzer
    uses (KEYS and DIGEST-VALUE read without expiring anything on a replica)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    r = Reader(s)
    out = {}
    try:
        for db in (b"0", b"1", b"2"):
            s.sendall(encode([b"SELECT", db]))
            r.read()
            s.sendall(encode([b"KEYS", b"*"]))
            _, listed = r.read()
            for _, key in listed:
                s.sendall(encode([b"TYPE", key]) + encode([b"DEBUG", b"DIGEST-VALUE", key]))
                _, kind = r.read()
                _, digest = r.read()
                out[(db, key)] = (kind, repr(digest))
    finally:
        s.close()
    return out


def replication_stream(port, limit_bytes=256 << 20):
    """The master's replication stream from its first byte, as (offset, db, args) per
    command: read as a replica would, with PSYNC of the master's own replication id at
    offset 1 (the fuzzed master keeps a backlog large enough for the whole run). None
    when the master no longer holds the start of its history."""
    replid = info_field(port, "replication", "master_replid")
    end = int(info_field(port, "replication", "master_repl_offset"))
    if end > limit_bytes:
        return None
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(encode([b"PSYNC", replid.encode(), b"1"]))
        r = Reader(s)
        kind, line = r.read()
        if kind != b"+" or not line.startswith(b"CONTINUE"):
            return None
        while len(r.buf) < end:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            r.buf += chunk
        data = r.buf[:end]
    finally:
        s.close()
    out, at, db = [], 0, 0
    while at < len(data):
        start = at
        if data[at:at + 1] != b"*":  # a newline the master sent alone (keepalive)
            at = data.index(b"\n", at) + 1
            continue
        nl = data.index(b"\r\n", at)
        argc = int(data[at + 1:nl])
        at = nl + 2
        args = []
        for _ in range(argc):
            nl = data.index(b"\r\n", at)
            n = int(data[at + 1:nl])
            args.append(data[nl + 2:nl + 2 + n])
            at = nl + 2 + n + 2
        if args and args[0].upper() == b"SELECT":
            db = int(args[1])
        out.append((start + 1, db, args))
    return out


def print_replica_differences(port, rport, stream_path=None, since=0, limit=20,
                              differing=None):
    """The keys whose presence, type or value differs between master and replica, and
    what the replication stream did to each (the whole stream goes to stream_path). The
    keys' names are added to `differing` when given."""
    if differing is None:
        differing = set()
    try:
        m, rep = key_digests(port), key_digests(rport)
    except (OSError, ValueError) as e:
        print("command_fuzz: could not list the differences: %s" % e)
        return
    diff = sorted(k for k in set(m) | set(rep) if m.get(k) != rep.get(k))
    differing.update(key for _, key in diff[:limit])
    print("command_fuzz: %d keys differ between master and replica" % len(diff))
    for db, key in diff[:limit]:
        values = []
        kind = (m.get((db, key)) or rep.get((db, key)))[0]
        # A stream's whole state (groups, consumers, pending entries); a string's bytes.
        show = [b"XINFO", b"STREAM", key, b"FULL"] if kind == b"stream" else [b"GET", key]
        for p in (port, rport):
            s = socket.create_connection(("127.0.0.1", p), timeout=30)
            try:
                s.sendall(encode([b"SELECT", db]) + encode(show))
                r = Reader(s)
                r.read()
                value = r.read()[1]
                values.append(value[:60] if isinstance(value, bytes) else value)
            finally:
                s.close()
        print("  db %s key %r: master %r, replica %r; %s: master %r, replica %r" % (
            db.decode(), key, m.get((db, key)), rep.get((db, key)), show[0].decode(), values[0],
            values[1]))
    try:
        stream = replication_stream(port)
    except (OSError, ValueError) as e:
        print("command_fuzz: could not read the replication stream: %s" % e)
        return
    if stream is None:
        print("command_fuzz: the master no longer holds its whole replication stream")
        return
    if stream_path is not None:
        with open(stream_path, "w") as f:
            for offset, db, args in stream:
                f.write("%d db %d %r\n" % (offset, db, args))
        print("command_fuzz: the whole replication stream is in %s" % stream_path)
    wanted = set((int(db), key) for db, key in diff[:limit])
    names = set(key for _, key in wanted)
    whole = (b"SWAPDB", b"FLUSHDB", b"FLUSHALL", b"MOVE", b"MULTI", b"EXEC")
    if since > 0:
        # Every command since the replica last matched that names one of the keys (in
        # any database), or moves or empties databases.
        shown = [c for c in stream if c[0] >= since and
                 (names & set(c[2][1:]) or c[2][0].upper() in whole)]
        print("command_fuzz: the replica matched at offset %d; since then, %d commands "
              "name those keys or change databases (offset, db, command):" %
              (since, len(shown)))
        shown = shown[-200:]
    else:
        shown = [c for c in stream if any((c[1], a) in wanted for a in c[2][1:])]
        print("command_fuzz: the stream's last %d commands naming those keys in their "
              "database (offset, db, command):" % min(len(shown), 60))
        shown = shown[-60:]
    for offset, db, args in shown:
        print("  %d db %d %r" % (offset, db, [a[:40] for a in args]))


def replica_matches_now(port, rport, seconds=30, replica=None):
    """Waits for the replica to reach the master's offset with the same DEBUG DIGEST (no
    client traffic meanwhile). The offset it matched at, or None after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if replica is not None and replica.poll() is not None:
            raise AssertionError("the replica exited with status %s" % replica.returncode)
        try:
            link = info_field(rport, "replication", "master_link_status")
            mo = info_field(port, "replication", "master_repl_offset")
            ro = info_field(rport, "replication", "slave_repl_offset")
            if link == "up" and mo == ro:
                md = admin_call(port, "DEBUG", "DIGEST")[1]
                rd = admin_call(rport, "DEBUG", "DIGEST")[1]
                if md == rd and info_field(port, "replication", "master_repl_offset") == mo:
                    return int(mo)
        except OSError:
            pass
        time.sleep(0.05)
    return None


def compare_with_replica(port, rport, replica, stream_path=None):
    """The replica caught up holds the master's data (DEBUG DIGEST of both), with active
    expiry paused on the master so that no key expires between the two digests."""
    admin_call(port, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
    at = replica_matches_now(port, rport, 60, replica)
    if at is None:
        print_replica_differences(port, rport, stream_path)
        raise AssertionError("the replica does not match the master within 60 s (offsets: "
                             "master %s, replica %s)" % (
                                 info_field(port, "replication", "master_repl_offset"),
                                 info_field(rport, "replication", "slave_repl_offset")))
    print("command_fuzz: the replica caught up at offset %d with the same digest" % at)
    admin_call(port, "DEBUG", "SET-ACTIVE-EXPIRE", "1")


def check_keyspace(port):
    """DBSIZE, KEYS and a full SCAN agree in every database the fuzzer uses, and every
    key listed exists and has a type. Expiry is first taken out of the picture: every
    key the fuzzer can name is touched (an expired one is deleted then, as Redis deletes
    it on access; DBSIZE counts it until then) and made persistent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    r = Reader(s)
    try:
        for db in (b"0", b"1", b"2"):
            s.sendall(encode([b"SELECT", db]))
            r.read()
            for key in KEYS:
                s.sendall(encode([b"EXISTS", key]) + encode([b"PERSIST", key]))
                r.read()
                r.read()
            s.sendall(encode([b"DBSIZE"]))
            _, size = r.read()
            s.sendall(encode([b"KEYS", b"*"]))
            _, listed = r.read()
            names = sorted(x[1] for x in listed)
            scanned, cursor = [], b"0"
            for _ in range(10000):
                s.sendall(encode([b"SCAN", cursor, b"COUNT", b"7"]))
                _, (c, batch) = r.read()
                cursor = c[1]
                scanned += [x[1] for x in batch[1]]
                if cursor == b"0":
                    break
            if int(size) != len(names):
                raise AssertionError("db %s: DBSIZE %s but KEYS lists %d" % (db, size, len(names)))
            if sorted(set(scanned)) != names:
                extra = []
                for key in sorted(set(scanned) ^ set(names)):
                    s.sendall(encode([b"TYPE", key]) + encode([b"PTTL", key]))
                    extra.append((key, r.read()[1], r.read()[1]))
                raise AssertionError("(type, pttl of the differing keys: %r) " % extra +"db %s: SCAN saw %d keys, KEYS %d (only SCAN: %r, only "
                                     "KEYS: %r)" % (db, len(set(scanned)), len(names),
                                                    sorted(set(scanned) - set(names)),
                                                    sorted(set(names) - set(scanned))))
            for key in names:
                s.sendall(encode([b"TYPE", key]) + encode([b"EXISTS", key]))
                _, t = r.read()
                _, e = r.read()
                if t not in (b"string", b"list", b"set", b"zset", b"hash", b"stream") or e != b"1":
                    raise AssertionError("db %s: key %r listed but TYPE %r EXISTS %r" %
                                         (db, key, t, e))
    finally:
        s.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def print_thread_stacks(pid):
    """A server that stopped answering is still running: where each of its threads waits
    is the first thing to know. Printed when gdb is installed; bounded in time."""
    gdb = shutil.which("gdb")
    if gdb is None:
        print("command_fuzz: gdb is not installed, no thread stacks")
        return
    try:
        out = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                             stdin=subprocess.DEVNULL).stdout.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        print("command_fuzz: gdb failed: %s" % e)
        return
    print("--- the server's threads ---")
    print("\n".join(line for line in out.splitlines() if line.startswith(("#", "Thread"))))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server-bin", default=os.environ.get(
        "STRATA_SERVER_BIN", os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "build", "server", "strata-server")))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--batch", type=int, default=200, help="commands per client per round")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--with-replica", action="store_true",
                   help="a strata replica follows the server; the data must match at the end")
    p.add_argument("--stream-out", default=None,
                   help="with --with-replica: where to write the master's whole replication "
                   "stream when the replica does not match")
    p.add_argument("--replica-each-round", action="store_true",
                   help="with --with-replica: compare the replica with the master after "
                   "every round too, so that a difference is found in the round that made it")
    a = p.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
    print("command_fuzz: seed %d, %d threads, %.0f s (replay: --seed %d --threads %d)" %
          (seed, a.threads, a.seconds, seed, a.threads), flush=True)
    work = tempfile.mkdtemp(prefix="strata-command-fuzz-")
    port = free_port()
    log_path = os.path.join(work, "server.log")
    log = open(log_path, "w")
    proc = subprocess.Popen([a.server_bin, "--port", str(port), "--bind", "127.0.0.1",
                             "--threads", str(a.threads), "--save", "", "--dir", work,
                             "--enable-debug-command", "yes"] +
                            (["--repl-backlog-size", "256mb"] if a.with_replica else []),
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    ok = False
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if admin_call(port, "PING")[1] == b"PONG":
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("the server did not start")
            time.sleep(0.05)

        matched = [0]
        fuzzer_ref = [None]

        def check():
            if proc.poll() is not None:
                raise AssertionError("the server exited with status %s" % proc.returncode)
            check_keyspace(port)
            if a.with_replica and a.replica_each_round:
                at = replica_matches_now(port, rport)
                if at is None:
                    names = set()
                    print_replica_differences(port, rport, a.stream_out, since=matched[0],
                                              differing=names)
                    fuzzer_ref[0].print_last_round(names)
                    raise AssertionError("after a round the replica does not match the "
                                         "master (it last matched at offset %d)" % matched[0])
                matched[0] = at

        replica = None
        if a.with_replica:
            rport = free_port()
            rwork = os.path.join(work, "replica")
            os.makedirs(rwork)
            replica = subprocess.Popen(
                [a.server_bin, "--port", str(rport), "--bind", "127.0.0.1", "--threads",
                 str(a.threads), "--save", "", "--dir", rwork, "--enable-debug-command", "yes",
                 "--replicaof", "127.0.0.1 %d" % port],
                stdout=open(os.path.join(work, "replica.log"), "w"), stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)
        try:
            fuzzer = Fuzzer(port, seed, a.clients, a.batch)
            fuzzer_ref[0] = fuzzer
            rounds = fuzzer.run(a.seconds, check)
            if replica is not None:
                compare_with_replica(port, rport, replica, a.stream_out)
        finally:
            if replica is not None and replica.poll() is None:
                replica.terminate()
                replica.wait(timeout=60)
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=60)
        if status != 0:
            raise AssertionError("the server exited with status %s on SIGTERM" % status)
        ok = True
        print("command_fuzz: %d commands in %d rounds, server consistent and stopped cleanly" %
              (fuzzer.sent, rounds))
    except Exception as e:  # noqa: BLE001 - every failure ends with the seed and the log
        print("command_fuzz: FAILED (seed %d, %d threads): %s" % (seed, a.threads, e))
        if proc.poll() is None:
            print_thread_stacks(proc.pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        with open(log_path, errors="replace") as f:
            server_log = f.read()
        if not ok:
            print("--- server log (last lines) ---\n" + server_log[-6000:])
            replica_log = os.path.join(work, "replica.log")
            if os.path.exists(replica_log):
                with open(replica_log, errors="replace") as f:
                    print("--- replica log (last lines) ---\n" + f.read()[-4000:])
        else:
            print("command_fuzz: %d DEBUG RELOADs ran" %
                  server_log.count("DB reloaded by DEBUG RELOAD"))
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
