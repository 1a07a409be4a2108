"""Spill: cold values move from RAM to a RocksDB store on disk (--spill-dir, one store
per shard under <spill-dir>/shard-<i>) and are read back when a command needs them.

Checked as a black box, on a fresh server per test:
  - strings and every collection type spill past spill-high-watermark x maxmemory and
    read back byte-exact (pipelined GETs, MGET across shards, SCAN, DBSIZE);
  - TYPE, TTL, EXISTS and STRLEN of a cold key are right without reading the disk, and
    MEMORY USAGE shows only the key and its metadata in RAM;
  - writes to cold keys (APPEND, SET, HSET, LPUSH, DEL, EXPIRE) act on the value the
    key holds, deleted keys never come back, and pipelined replies stay in order;
  - concurrent overwrites and deletes never let a reader see an older version than the
    last one acknowledged before its read, and expired cold keys stay gone;
  - snapshots hold cold values: a restart restores every key, a kill -9 while spilling
    or saving leaves the previous snapshot or the new one, whole;
  - disk faults (the spill directory removed or read-only, spill-max-disk-size reached)
    stop spilling without losing or corrupting a value, are reported in INFO tiered and
    the log, and end in Redis's OOM error under noeviction, never a crash;
  - with no spill-dir, the tier is off.

Memory limits are set over the used_memory of an idle, warmed-up server (the I/O
buffers count in used_memory, as in test_eviction.py); datasets are a few MB of 1 KB
values. Strata only: redis-server has no disk tier.
"""
import hashlib
import os
import random
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections import deque

import pytest
import redis

from conftest import TARGET, THREADS
from helpers import call, wait_for

pytestmark = pytest.mark.skipif(TARGET == "redis",
                                reason="spill is strata's: redis-server has no disk tier")

SLOW = 4 if os.environ.get("STRATA_SANITIZED") == "1" else 1  # sanitizer builds
MB = 1024 * 1024
VALUE_SIZE = 1024        # every value spilled here is >= spill-min-value-size (64)
HEADROOM = 3 * MB        # maxmemory = idle used_memory + this
CACHE_SIZE = "1mb"       # spill-cache-size: the tier's RAM, counted in used_memory
BATCH = 100              # commands per pipeline
OOM = "OOM command not allowed"
NO_ERROR = ("", "none")  # tiered_last_error when there was none
ELEMENTS = 30            # elements per collection, ELEMENT_SIZE bytes each: ~1.2 KB
ELEMENT_SIZE = 40


# ---------------------------------------------------------------- servers

class Env:
    """One test's directories (snapshots, spill store) and the servers started on them;
    the directories outlive each server, so a restart finds them."""

    def __init__(self, factory, root):
        self.factory = factory
        self.root = root
        self.data_dir = os.path.join(root, "data")
        self.spill_dir = os.path.join(root, "spill")
        os.makedirs(self.data_dir)
        os.makedirs(self.spill_dir)

    def start(self, extra=(), **kw):
        args = ["--spill-dir", self.spill_dir, "--spill-cache-size", CACHE_SIZE]
        kw.setdefault("threads", THREADS)
        return self.factory(extra_args=args + list(extra), data_dir=self.data_dir, **kw)

    def start_spilling(self, extra=()):
        """A fresh server, warmed up, with maxmemory HEADROOM over its idle usage.
        Returns (server, bytes client, maxmemory)."""
        s = self.start(extra)
        c = client(s)
        warm_up(c)
        return s, c, limit_above(c, HEADROOM)


def client(s, **kw):
    kw.setdefault("socket_timeout", 60 * SLOW)  # a write may wait for the disk
    return s.client(**kw)


@pytest.fixture
def scratch():
    d = tempfile.mkdtemp(prefix="strata-spill-")
    yield d
    for root, dirs, _ in os.walk(d):  # undo a test's chmod, so that rmtree can go in
        for name in dirs:
            try:
                os.chmod(os.path.join(root, name), 0o700)
            except OSError:
                pass
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def env(scratch, server_factory):
    # scratch is set up first, so it is removed after server_factory stops the servers.
    return Env(server_factory, scratch)


# ---------------------------------------------------------------- INFO

def used(c):
    return int(c.info("memory")["used_memory"])


def limit_above(c, extra):
    """Sets maxmemory to what is used now plus `extra` bytes; returns the limit."""
    limit = used(c) + extra
    c.config_set("maxmemory", str(limit))
    return limit


def tiered(c):
    """INFO tiered as {field: int}, tiered_last_error as its text. Parsed here rather than
    by redis-py, which would take an error text holding ',' and '=' for a dict."""
    raw = call(c, "INFO", "tiered")
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    out = {}
    for line in raw.splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        v = v.strip()
        if k != "tiered_last_error" and v.lstrip("-").isdigit():
            v = int(v)
        out[k] = v
    return out


def fault_seen(t):
    return t["tiered_spill_errors"] > 0 or t["tiered_last_error"] not in NO_ERROR


def wait_spilled(c, limit, timeout=30):
    """Waits until values are on disk and used_memory is back under maxmemory."""
    def done():
        t = tiered(c)
        return t["tiered_cold_keys"] > 0 and used(c) < limit
    wait_for(done, timeout=timeout * SLOW, what="values spilled and used_memory < maxmemory")


def wait_quiet(c, timeout=15):
    """Waits until no spill write is in flight and the spill count stays put 0.2 s."""
    last = [None]

    def quiet():
        t = tiered(c)
        now = (t["tiered_spills"], t["tiered_pending_writes"])
        if now[1] == 0 and now == last[0]:
            return True
        last[0] = now
        time.sleep(0.2)
        return False
    wait_for(quiet, timeout=timeout * SLOW, what="spilling to settle")


# ---------------------------------------------------------------- data

def blob(rnd, tag, size=VALUE_SIZE):
    """`size` bytes: the tag, then random bytes (NUL, CR LF and bytes >= 0x80 included)."""
    head = tag + b"|\x00\r\n\xff"
    return head + rnd.randbytes(size - len(head))


def strings(prefix, n, seed):
    """{prefix:i: ("string", 1 KB value)} for i < n."""
    rnd = random.Random(seed)
    return {b"%s:%d" % (prefix, i): ("string", blob(rnd, b"%s:%d" % (prefix, i)))
            for i in range(n)}


def collections(prefix, n, seed):
    """n keys of each of hash, list, set and zset, each ~1.2 KB: {key: (type, value)}
    with the value as redis-py returns its read (dict, list, set, sorted pairs)."""
    rnd = random.Random(seed)
    out = {}
    for i in range(n):
        els = [rnd.randbytes(ELEMENT_SIZE) for _ in range(ELEMENTS)]
        out[b"%s:h:%d" % (prefix, i)] = ("hash", {b"f%02d" % j: e for j, e in enumerate(els)})
        out[b"%s:l:%d" % (prefix, i)] = ("list", list(els))
        els = [rnd.randbytes(ELEMENT_SIZE) for _ in range(ELEMENTS)]
        out[b"%s:s:%d" % (prefix, i)] = ("set", set(els))
        # Scores exact in binary, so they read back equal.
        pairs = [(m, rnd.randrange(-4000000, 4000000) / 4) for m in els]
        out[b"%s:z:%d" % (prefix, i)] = ("zset", sorted(pairs, key=lambda p: (p[1], p[0])))
    return out


def payload(t, v):
    """Bytes of data in a value (its RAM use when hot is at least this)."""
    if t == "string":
        return len(v)
    if t == "hash":
        return sum(len(f) + len(x) for f, x in v.items())
    if t == "zset":
        return sum(len(m) + 8 for m, _ in v)
    return sum(len(x) for x in v)


def write_command(key, t, v):
    if t == "string":
        return ("SET", key, v)
    if t == "hash":
        return ("HSET", key) + tuple(x for fv in v.items() for x in fv)
    if t == "list":
        return ("RPUSH", key) + tuple(v)
    if t == "set":
        return ("SADD", key) + tuple(v)
    return ("ZADD", key) + tuple(x for m, sc in v for x in (repr(sc), m))


def _write(c, items, give_up):
    """Writes items [(key, (type, value))], pipelined. A write refused with the OOM error
    (the disk has not taken what is over the limit yet) did nothing, so it is queued
    again and sent after a pause; give_up(seconds since the last write went in) ends
    the retries. Returns (keys written, items still refused, the last OOM error)."""
    pending = deque(items)
    written = []
    last_error = None
    last_progress = time.monotonic()
    while pending:
        chunk = [pending.popleft() for _ in range(min(BATCH, len(pending)))]
        p = c.pipeline(transaction=False)
        for k, (t, v) in chunk:
            p.execute_command(*write_command(k, t, v))
        refused = []
        for item, r in zip(chunk, p.execute(raise_on_error=False)):
            if isinstance(r, Exception):
                if not str(r).startswith(OOM):
                    raise r
                last_error = str(r)
                refused.append(item)
            else:
                written.append(item[0])
                last_progress = time.monotonic()
        if refused:
            pending.extendleft(reversed(refused))
            if give_up(time.monotonic() - last_progress):
                return written, list(pending), last_error
            time.sleep(0.05)  # let the disk catch up
    return written, [], last_error


def write_all(c, data, ttl=None, timeout=60):
    """Writes every key of data ({key: (type, value)}), waiting out OOM refusals for up
    to `timeout` seconds without progress. ttl: keys that then get EXPIRE 100000."""
    _, refused, _ = _write(c, data.items(), lambda idle: idle > timeout * SLOW)
    if refused:
        pytest.fail("%d writes still refused with OOM after %ds: %s"
                    % (len(refused), timeout * SLOW, tiered(c)))
    if ttl:
        p = c.pipeline(transaction=False)
        for k in ttl:
            p.expire(k, 100000)
        assert all(p.execute())


def write_until_refused(c, data, patience=3.0):
    """Writes data like write_all, but gives up once OOM refusals make no progress for
    `patience` seconds. Returns (keys written, the last OOM error text or None)."""
    written, _, last_error = _write(c, data.items(), lambda idle: idle > patience * SLOW)
    return written, last_error


def read_command(p, key, t):
    if t == "string":
        p.get(key)
    elif t == "hash":
        p.hgetall(key)
    elif t == "list":
        p.lrange(key, 0, -1)
    elif t == "set":
        p.smembers(key)
    else:
        p.zrange(key, 0, -1, withscores=True)


def read_all(c, keys_types, batch=200):
    """[(key, reply or exception)] reading each key's whole value, pipelined."""
    out = []
    for start in range(0, len(keys_types), batch):
        chunk = keys_types[start:start + batch]
        p = c.pipeline(transaction=False)
        for k, t in chunk:
            read_command(p, k, t)
        got = p.execute(raise_on_error=False)
        for (k, t), r in zip(chunk, got):
            if t == "zset" and isinstance(r, list):
                r = [(m, float(sc)) for m, sc in r]
            elif t == "set" and isinstance(r, (list, set)):
                r = set(r)
            out.append((k, r))
    return out


def check_all(c, data, batch=200):
    """Every key of data reads back equal to what was written."""
    got = read_all(c, [(k, t) for k, (t, _) in data.items()], batch)
    bad = [(k, r) for k, r in got if r != data[k][1]]
    assert not bad, "%d of %d keys read back wrong, first: %r -> %r" % (
        len(bad), len(data), bad[0][0], str(bad[0][1])[:200])


def usage(c, keys, batch=500):
    """MEMORY USAGE of each key (None for a missing key or an error reply)."""
    out = []
    for start in range(0, len(keys), batch):
        p = c.pipeline(transaction=False)
        for k in keys[start:start + batch]:
            p.memory_usage(k)
        got = p.execute(raise_on_error=False)
        out += [None if isinstance(u, Exception) else u for u in got]
    return out


def cold_keys(c, data, at_least=1):
    """The keys whose value is on disk now, told by MEMORY USAGE (which reads only the
    key's metadata, never the disk): a cold key holds only its key and metadata in RAM,
    under half its data. Fails unless there are at least `at_least`."""
    keys = list(data)
    cold = [k for k, u in zip(keys, usage(c, keys))
            if u is not None and u < payload(*data[k]) // 2]
    assert len(cold) >= at_least, (
        "%d keys cold by MEMORY USAGE, wanted %d; INFO tiered says %s cold (MEMORY USAGE "
        "must not bring a value back)" % (
            len(cold), at_least, tiered(c).get("tiered_cold_keys")))
    return cold


def log_mentions_fault(log, spill_dir, last_error):
    """True when a log line reports the spill failure."""
    if last_error not in NO_ERROR and last_error in log:
        return True
    for line in log.splitlines():
        low = line.lower()
        if ("error" in low or "fail" in low) and (
                "spill" in low or "tier" in low or "cold" in low or spill_dir in line):
            return True
    return False


def warm_up(c):
    """Pipelined traffic of the shape the tests send, from several connections at once
    (every worker's receive buffers grow to what the tests will make them): the I/O
    buffers count in used_memory, so the limits are set over them, not under."""
    port = c.connection_pool.connection_kwargs["port"]

    def one(i):
        w = redis.Redis(host="127.0.0.1", port=port, socket_timeout=60 * SLOW)
        write_all(w, strings(b"warm%d" % i, 1000, seed=99 + i))
        w.close()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    c.flushall()


# ---------------------------------------------------------------- tests

def test_strings_spill_and_read_back_byte_exact(env):
    s, c, limit = env.start_spilling()
    for i in range(THREADS):
        assert os.path.isdir(os.path.join(env.spill_dir, "shard-%d" % i)), os.listdir(
            env.spill_dir)
    assert c.config_get("spill-dir") == {"spill-dir": env.spill_dir}
    data = strings(b"s", 8000, seed=1)
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    t = tiered(c)
    assert t["tiered_enabled"] == 1
    cold = t["tiered_cold_keys"]
    assert 0 < cold <= len(data)
    assert cold + t["tiered_hot_keys"] == len(data), t
    assert t["tiered_spills"] >= cold
    # Bytes of the values on disk: about 1 KB each (a serialized value's few header bytes).
    assert cold * VALUE_SIZE * 0.9 <= t["tiered_cold_value_bytes"] <= cold * VALUE_SIZE * 1.25
    assert t["tiered_spill_errors"] == 0 and t["tiered_last_error"] in NO_ERROR, t
    assert t["tiered_pending_reads"] == 0
    wait_for(lambda: tiered(c)["tiered_disk_bytes"] > 0, timeout=10 * SLOW,
             what="spilled values flushed to disk files")
    mem = c.info("memory")
    assert 0 <= int(mem["used_memory_tiered"]) <= int(mem["used_memory"])
    # MEMORY USAGE tells the cold keys (RAM holds only key and metadata) and does not
    # bring values back: as no key is read, the count is between two INFO readings.
    n_cold = len(cold_keys(c, data))
    assert cold <= n_cold <= tiered(c)["tiered_cold_keys"], (cold, n_cold)
    assert c.dbsize() == len(data)
    assert set(c.scan_iter(count=500)) == set(data)
    before = tiered(c)
    check_all(c, data)
    keys = list(data)
    random.Random(2).shuffle(keys)
    for start in range(0, len(keys), 100):
        chunk = keys[start:start + 100]  # across shards, cold and hot mixed
        assert c.mget(chunk) == [data[k][1] for k in chunk]
    wait_for(lambda: tiered(c)["tiered_pending_reads"] == 0, timeout=5 * SLOW,
             what="no read in flight")
    after = tiered(c)
    assert after["tiered_disk_reads"] > before["tiered_disk_reads"], after
    assert after["tiered_spill_errors"] == 0
    assert int(c.info("memory")["used_memory_tiered"]) > 0  # blocks read went to the cache
    # Values read back to RAM go to disk again: used_memory comes back under the limit.
    wait_for(lambda: used(c) < limit, timeout=20 * SLOW, what="used_memory < maxmemory")
    assert c.dbsize() == len(data)
    c.close()


def test_every_type_spills_and_reads_back(env):
    s, c, limit = env.start_spilling()
    both = collections(b"t", 1000, seed=3)
    both.update(strings(b"t:str", 1000, seed=4))
    # Written in random order, so that the coldest values are of every type.
    order = list(both)
    random.Random(5).shuffle(order)
    data = {k: both[k] for k in order}
    ttl = {k for i, k in enumerate(data) if i % 7 == 0}
    write_all(c, data, ttl=ttl)
    wait_spilled(c, limit)
    wait_quiet(c)
    cold = cold_keys(c, data, at_least=5)
    by_type = {}
    for k in cold:
        by_type.setdefault(data[k][0], []).append(k)
    assert set(by_type) == {"string", "hash", "list", "set", "zset"}, {
        t: len(v) for t, v in by_type.items()}
    # TYPE, TTL and EXISTS read metadata, in RAM: no disk read, nothing comes back.
    before = tiered(c)
    p = c.pipeline(transaction=False)
    for k in cold:
        p.type(k)
        p.ttl(k)
        p.exists(k)
    got = p.execute()
    for i, k in enumerate(cold):
        typ, ttl_left, exists = got[3 * i:3 * i + 3]
        assert typ == data[k][0].encode(), (k, typ)
        if k in ttl:
            assert 99000 < ttl_left <= 100000, (k, ttl_left)
        else:
            assert ttl_left == -1, (k, ttl_left)
        assert exists == 1
    for start in range(0, len(cold), 200):
        assert c.exists(*cold[start:start + 200]) == len(cold[start:start + 200])
    after = tiered(c)
    assert after["tiered_disk_reads"] == before["tiered_disk_reads"], [(k, before[k], after[k]) for k in before if before[k] != after[k] and "read" in k or "unsp" in k or "hit" in k]
    assert after["tiered_unspills"] == before["tiered_unspills"], (before, after)
    assert after["tiered_cold_keys"] >= before["tiered_cold_keys"]
    strs = by_type["string"]
    p = c.pipeline(transaction=False)
    for k in strs:
        p.strlen(k)
    assert p.execute() == [VALUE_SIZE] * len(strs)
    # Counts need the value: read from disk, right.
    p = c.pipeline(transaction=False)
    for t, cmd in (("hash", "HLEN"), ("list", "LLEN"), ("set", "SCARD"), ("zset", "ZCARD")):
        for k in by_type[t][:20]:
            p.execute_command(cmd, k)
    assert all(n == ELEMENTS for n in p.execute())
    check_all(c, data)
    assert c.dbsize() == len(data)
    c.close()


def test_writes_to_cold_keys(env):
    s, c, limit = env.start_spilling()
    both = strings(b"w", 3000, seed=5)
    both.update({k: v for k, v in collections(b"w", 500, seed=6).items()
                 if v[0] in ("hash", "list")})
    # Written in random order, so that the coldest values are of every type.
    order = list(both)
    random.Random(7).shuffle(order)
    data = {k: both[k] for k in order}
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    cold = cold_keys(c, data, at_least=32)
    strs = [k for k in cold if data[k][0] == "string"]
    hashes = [k for k in cold if data[k][0] == "hash"]
    lists = [k for k in cold if data[k][0] == "list"]
    assert len(strs) >= 20 and len(hashes) >= 6 and len(lists) >= 6, (
        len(strs), len(hashes), len(lists))
    # Room for the values these writes bring back (a write over maxmemory is refused).
    limit = limit_above(c, 2 * MB)
    expect = dict(data)
    unspills = tiered(c)["tiered_unspills"]
    for k in strs[0:4]:
        assert c.append(k, b"+tail\xfe") == VALUE_SIZE + 6
        expect[k] = ("string", data[k][1] + b"+tail\xfe")
    for i, k in enumerate(strs[4:8]):
        v = b"new-%d\x00" % i * 100
        assert c.set(k, v) is True
        expect[k] = ("string", v)
    for k in hashes[0:3]:
        assert c.hset(k, b"added", b"\x01\x02") == 1
        assert c.hset(k, b"f00", b"changed") == 0
        h = dict(data[k][1])
        h[b"added"] = b"\x01\x02"
        h[b"f00"] = b"changed"
        expect[k] = ("hash", h)
    for k in lists[0:3]:
        assert c.lpush(k, b"head") == ELEMENTS + 1
        expect[k] = ("list", [b"head"] + data[k][1])
    deleted = strs[8:14] + hashes[3:5] + lists[3:5]
    assert c.delete(*deleted) == len(deleted)
    for k in deleted:
        del expect[k]
    for k in strs[14:18]:
        assert c.expire(k, 1000) is True
        assert 900 < c.ttl(k) <= 1000
    # Deleted, then written again: the new value, never the old copy on disk.
    again = strs[8]
    assert c.set(again, b"reborn") is True
    expect[again] = ("string", b"reborn")
    assert tiered(c)["tiered_unspills"] > unspills
    gone = [k for k in deleted if k != again]
    gone_strings = [k for k in gone if data[k][0] == "string"]
    assert c.exists(*gone) == 0
    assert c.mget(gone_strings) == [None] * len(gone_strings)
    # More data: more spilling, the changed keys may go cold again; all stays right.
    more = strings(b"more", 3000, seed=7)
    write_all(c, more)
    expect.update(more)
    wait_spilled(c, limit)
    check_all(c, expect)
    assert c.exists(*gone) == 0
    assert c.mget(gone_strings) == [None] * len(gone_strings)
    assert c.dbsize() == len(expect)
    assert set(c.scan_iter(count=500)) == set(expect)
    for k in strs[14:18]:
        assert 800 < c.ttl(k) <= 1000
    c.close()


def test_pipelined_replies_stay_in_order(env):
    s, c, limit = env.start_spilling()
    data = strings(b"p", 5000, seed=8)
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    cold = cold_keys(c, data, at_least=60)
    limit_above(c, 2 * MB)  # room for the values the SETs write
    cold_set = set(cold)
    hot = [k for k in data if k not in cold_set][:10] or [b"missing"]
    p = c.pipeline(transaction=False)
    want = []
    for i, k in enumerate(cold[:30]):
        new = b"new-%d-" % i + bytes(range(256))
        p.get(k)
        p.set(k, new)
        p.get(k)
        p.ping()
        p.get(hot[i % len(hot)])
        want += [data[k][1], True, new, True, data.get(hot[i % len(hot)], (0, None))[1]]
    a, b, d = cold[30], cold[31], cold[32]
    p.mget(a, b)  # two cold keys, likely on two shards
    p.set(a, b"x")
    p.mget(a, b)
    p.get(d)
    p.delete(d)
    p.get(d)
    want += [[data[a][1], data[b][1]], True, [b"x", data[b][1]], data[d][1], 1, None]
    assert p.execute() == want
    # Many cold reads in one pipeline, then a write: the replies in request order.
    rest = cold[33:60]
    p = c.pipeline(transaction=False)
    for k in rest:
        p.get(k)
    p.set(b"after", b"1")
    p.get(b"after")
    assert p.execute() == [data[k][1] for k in rest] + [True, b"1"]
    c.close()


def keyed_value(key):
    """A 1 KB value that can be checked knowing only its key."""
    return key + b"|" + hashlib.shake_128(key).digest(VALUE_SIZE - len(key) - 1)


def versioned(i, ver):
    """Key i's value at version ver: the version can be read from it, the rest checks it."""
    head = b"c:%d:%d:" % (i, ver)
    return head + hashlib.shake_128(head).digest(VALUE_SIZE - len(head))


def parse_version(i, value):
    """The version of a value written by versioned(), or None when it is not one."""
    parts = value.split(b":", 3)
    if len(parts) < 4 or parts[0] != b"c" or parts[1] != b"%d" % i:
        return None
    try:
        ver = int(parts[2])
    except ValueError:
        return None
    return ver if value == versioned(i, ver) else None


def test_concurrent_writes_never_show_stale_or_resurrected_values(env):
    """A writer overwrites (new version) or deletes random cold keys, one acknowledged
    command at a time; a reader pipelines GETs of the same keys; a third client writes
    filler so that spilling goes on throughout. Key k's states are h[0] (version 0),
    h[1], ... (a version, or None for deleted): a GET sent when a ops on k were
    acknowledged, answered when i ops were sent, must show one of h[a..i]."""
    s, c, limit = env.start_spilling()
    n = 5000
    data = {b"c:%d" % i: ("string", versioned(i, 0)) for i in range(n)}
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    index = {k: i for i, k in enumerate(data)}
    cold = cold_keys(c, data, at_least=1500)
    hot_set = cold[:1000]     # the writer's and reader's keys
    expiring = cold[1000:1200]
    lock = threading.Lock()
    history = {k: [0] for k in hot_set}
    acked = {k: 0 for k in hot_set}
    issued = {k: 0 for k in hot_set}
    next_version = {k: 1 for k in hot_set}
    stop = threading.Event()
    errors = []
    violations = []
    counts = {"writes": 0, "reads": 0, "filler": 0}
    duration = 2.0 * SLOW

    def writer():
        w = client(s)
        rnd = random.Random(11)
        try:
            while not stop.is_set():
                k = rnd.choice(hot_set)
                i = index[k]
                with lock:
                    if rnd.random() < 0.25:
                        nxt = None  # DEL
                    else:
                        nxt = next_version[k]
                        next_version[k] += 1
                    history[k].append(nxt)
                    issued[k] += 1
                give_up = time.monotonic() + 20 * SLOW
                while True:
                    try:
                        if nxt is None:
                            w.delete(k)
                        else:
                            assert w.set(k, versioned(i, nxt)) is True
                        break
                    except redis.ResponseError as e:
                        if not str(e).startswith(OOM) or time.monotonic() > give_up:
                            raise
                        time.sleep(0.01)  # refused: did nothing; try again
                with lock:
                    acked[k] += 1
                counts["writes"] += 1
        except Exception as e:  # reported below
            errors.append(("writer", e))
        finally:
            w.close()

    def reader():
        r = client(s)
        rnd = random.Random(12)
        try:
            while not stop.is_set():
                keys = [rnd.choice(hot_set) for _ in range(16)]
                with lock:
                    low = [acked[k] for k in keys]
                p = r.pipeline(transaction=False)
                for k in keys:
                    p.get(k)
                got = p.execute()
                with lock:
                    allowed = [history[k][lo:issued[k] + 1] for k, lo in zip(keys, low)]
                for k, v, ok in zip(keys, got, allowed):
                    seen = None if v is None else parse_version(index[k], v)
                    if v is not None and seen is None:
                        violations.append((k, "not a value written", v[:40]))
                    elif seen not in ok:
                        violations.append((k, seen, ok))
                counts["reads"] += len(keys)
        except Exception as e:
            errors.append(("reader", e))
        finally:
            r.close()

    def filler():
        f = client(s)
        rnd = random.Random(13)
        j = 0
        try:
            while not stop.is_set() and j < 4000:
                p = f.pipeline(transaction=False)
                for _ in range(50):
                    p.set(b"fill:%d" % j, blob(rnd, b"fill"))
                    j += 1
                for r in p.execute(raise_on_error=False):
                    if isinstance(r, Exception):
                        if not str(r).startswith(OOM):
                            raise r
                    else:
                        counts["filler"] += 1
                time.sleep(0.01)
        except Exception as e:
            errors.append(("filler", e))
        finally:
            f.close()

    reads_before = tiered(c)["tiered_disk_reads"]
    threads = [threading.Thread(target=fn) for fn in (writer, reader, filler)]
    for t in threads:
        t.start()
    time.sleep(duration)
    stop.set()
    for t in threads:
        t.join(30 * SLOW)
    assert not any(t.is_alive() for t in threads), "a client thread is stuck"
    assert not errors, errors
    assert not violations, "%d stale or resurrected reads, first: %r" % (
        len(violations), violations[:3])
    assert counts["writes"] > 50 and counts["reads"] > 500, counts
    assert tiered(c)["tiered_disk_reads"] > reads_before
    # Final state: each key shows its last acknowledged state.
    p = c.pipeline(transaction=False)
    for k in hot_set:
        p.get(k)
    for k, v in zip(hot_set, p.execute()):
        last = history[k][-1]
        assert (None if v is None else parse_version(index[k], v)) == last, (k, last)

    # Expiry of cold keys: gone once due, and stay gone.
    still_cold = set(cold_keys(c, {k: data[k] for k in expiring}, at_least=50))
    expiring = [k for k in expiring if k in still_cold]
    p = c.pipeline(transaction=False)
    for k in expiring:
        p.pexpire(k, 200)
    assert all(p.execute())
    time.sleep(0.35)
    p = c.pipeline(transaction=False)
    for k in expiring:
        p.get(k)
    assert p.execute() == [None] * len(expiring)
    assert c.exists(*expiring) == 0
    time.sleep(0.5)
    write_all(c, strings(b"late", 1000, seed=14))  # more spilling and disk activity
    assert c.exists(*expiring) == 0
    assert c.mget(expiring) == [None] * len(expiring)
    assert c.set(expiring[0], b"fresh") is True
    assert c.get(expiring[0]) == b"fresh"
    # The keys nobody touched still hold version 0.
    touched = set(hot_set) | set(expiring)
    untouched = [k for k in data if k not in touched]
    check_all(c, {k: data[k] for k in untouched})
    c.close()


@pytest.mark.parametrize("store", ["lsm", "blob"])
def test_restart_restores_cold_values(env, store):
    # blob: the values in BlobDB files (spill-blob-min-size), which the checkpoint links too
    extra = ["--spill-blob-min-size", "512"] if store == "blob" else []
    s, c, limit = env.start_spilling(extra)
    c1 = client(s, db=1)
    data1 = strings(b"db1", 500, seed=17)
    write_all(c1, data1)  # first: the oldest keys, so among the first to go cold
    data = strings(b"r", 2000, seed=15)
    data.update(collections(b"r", 400, seed=16))
    ttl = {k for i, k in enumerate(data) if i % 5 == 0}
    write_all(c, data, ttl=ttl)
    wait_spilled(c, limit)
    wait_quiet(c)
    assert tiered(c)["tiered_cold_keys"] > 0
    cold_keys(c1, data1)  # some of database 1 went cold too
    p = c.pipeline(transaction=False)
    for k in ttl:
        p.execute_command("PEXPIRETIME", k)
    expiry = dict(zip(ttl, p.execute()))
    assert c.save() is True
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    c.close()
    c1.close()
    s.stop()
    s2 = env.start(extra)  # same --dir, --spill-dir and --threads; no maxmemory now
    c = client(s2)
    c1 = client(s2, db=1)
    assert tiered(c)["tiered_enabled"] == 1
    # The load did not pull the values into RAM.
    wait_for(lambda: tiered(c)["tiered_cold_keys"] > 0, timeout=5 * SLOW,
             what="cold keys after the restart")
    assert c.dbsize() == len(data) and c1.dbsize() == len(data1)
    p = c.pipeline(transaction=False)
    for k in ttl:
        p.execute_command("PEXPIRETIME", k)
    assert dict(zip(ttl, p.execute())) == expiry
    assert c.ttl(next(k for k in data if k not in ttl)) == -1
    check_all(c, data)
    check_all(c1, data1)
    assert "DB loaded from disk" in s2.read_log()
    c.close()
    c1.close()


def test_a_restart_with_another_thread_count_keeps_every_spilled_value(env):
    """Spilled values follow their keys to the shards of another thread count: the load
    copies each surviving key's record into its new shard's store. Then the next
    snapshot (a full one) is loadable again, under yet another count."""
    counts = [THREADS, 1 if THREADS > 1 else 2, THREADS + 1]
    s, c, limit = env.start_spilling()
    data = strings(b"t", 1500, seed=41)
    data.update(collections(b"t", 300, seed=42))
    ttl = {k for i, k in enumerate(data) if i % 7 == 0}
    write_all(c, data, ttl=ttl)
    wait_spilled(c, limit)
    wait_quiet(c)
    # A key overwritten and one deleted after a first snapshot, then a second snapshot:
    # the load must not miss (or resurrect) either.
    assert c.save() is True
    changed, gone = list(data)[3], list(data)[4]
    c.delete(changed, gone)
    data.pop(gone)
    assert c.set(changed, b"changed after the first snapshot") is True
    data[changed] = ("string", b"changed after the first snapshot")
    assert c.save() is True
    cold_before = tiered(c)["tiered_cold_keys"]
    assert cold_before > 0
    c.close()
    s.stop()
    for threads in counts[1:]:
        s = env.start(threads=threads)
        c = client(s)
        # The values stayed on disk: copied between the stores, not pulled into RAM.
        wait_for(lambda: tiered(c)["tiered_cold_keys"] > 0, timeout=5 * SLOW,
                 what="cold keys after the restart")
        assert "spilled values copied from the stores of" in s.read_log()
        # The work directories of the copy are gone. The next snapshot (a full one) is
        # taken before any read: without maxmemory a value read comes back to RAM for
        # good, and the next restart is to find the values cold.
        assert not [d for d in os.listdir(env.spill_dir) if d.startswith("reshard-")]
        assert c.save() is True
        assert c.dbsize() == len(data)
        assert c.get(gone) is None
        check_all(c, data)
        t = tiered(c)
        assert t["tiered_read_errors"] == 0 and t["tiered_last_error"] in NO_ERROR, t
        ttls = [c.ttl(k) for k in list(ttl)[:20] if k in data]
        assert ttls and all(x > 0 for x in ttls), ttls
        c.close()
        s.stop()


@pytest.mark.parametrize("fault", ["files-removed", "blocks-damaged"])
def test_a_damaged_checkpoint_of_another_thread_count_refuses_to_start(env, fault):
    """files-removed: the old stores do not open; blocks-damaged: they open, and the
    copy meets a record that does not read back. Either way the server says what and
    does not start (never a partial load)."""
    s, c, limit = env.start_spilling()
    data = strings(b"m", 5000, seed=43)
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    assert c.save() is True
    c.close()
    s.stop()
    damaged = 0
    for root, _, files in os.walk(env.data_dir):
        if ".cold" not in root:
            continue
        for f in files:
            if not f.endswith(".sst"):
                continue
            path = os.path.join(root, f)
            if fault == "files-removed":
                os.unlink(path)
            else:
                size = os.path.getsize(path)
                with open(path, "r+b") as fh:  # data blocks come first, the index last
                    for at in (size // 8, size // 4, size // 3):
                        fh.seek(at)
                        fh.write(b"\xff" * 64)
            damaged += 1
    assert damaged > 0
    s = env.start(threads=1 if THREADS > 1 else 2, expect_fail=True)
    assert s.wait_exit(timeout=30 * SLOW) not in (None, 0)
    log = s.read_log()
    if fault == "files-removed":
        assert "Can't open the spill store" in log, log[-2000:]
    else:
        assert "Can't load the snapshot" in log and "spill store" in log, log[-2000:]


def test_records_freed_before_a_snapshot_are_reclaimed_after_the_restart(env):
    # Deleted cold values are dead records, dropped from the store's files only when a
    # file is rewritten; a snapshot's checkpoint links the files as they are. After the
    # restart the server finds the records no key names and reclaims their space.
    s, c, limit = env.start_spilling()
    data = strings(b"o", 4000, seed=21)
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    cold = cold_keys(c, data, at_least=1000)
    gone = cold[::4]  # a quarter: under spill-gc-dead-fraction, so no file is rewritten
    for i in range(0, len(gone), 500):
        c.delete(*gone[i:i + 500])
    wait_for(lambda: tiered(c)["tiered_dead_records"] >= len(gone) * 9 // 10, timeout=5 * SLOW,
             what="the deleted values' records counted dead")
    assert c.save() is True
    c.close()
    s.stop()
    s2 = env.start()
    c = client(s2)
    wait_for(lambda: tiered(c)["tiered_orphans_found"] >= len(gone) * 9 // 10, timeout=10 * SLOW,
             what="the records no key names found after the restart")
    for k in gone:
        del data[k]
    assert c.dbsize() == len(data)
    check_all(c, data)
    before = tiered(c)["tiered_disk_bytes"]
    c.config_set("spill-gc-dead-fraction", "0.1")
    wait_for(lambda: tiered(c)["tiered_dead_records_dropped"] >= len(gone) * 9 // 10,
             timeout=20 * SLOW, what="the dead records dropped by GC")
    wait_for(lambda: tiered(c)["tiered_disk_bytes"] < before * 0.9, timeout=10 * SLOW,
             what="disk space reclaimed")
    # The drops and the disk bytes move while GC's compaction runs; its count of files
    # rewritten comes when the worker takes the finished job back.
    wait_for(lambda: tiered(c)["tiered_gc_file_rewrites"] > 0, timeout=5 * SLOW,
             what="GC's file rewrites counted")
    check_all(c, data)
    c.close()


def test_kill_9_while_spilling_or_saving_keeps_a_whole_snapshot(env):
    s, c, limit = env.start_spilling()
    base = strings(b"s1", 3000, seed=18)
    write_all(c, base)
    c.set(b"marker", b"A")
    wait_spilled(c, limit)
    assert c.save() is True  # S1
    committed = dict(base)
    committed[b"marker"] = ("string", b"A")

    def keep_writing(srv, prefix, acked):
        """Writes prefix:0, prefix:1, ... (keyed_value) until the server dies."""
        w = client(srv, socket_timeout=5)
        j = 0
        try:
            while True:
                p = w.pipeline(transaction=False)
                for _ in range(50):
                    k = b"%s:%d" % (prefix, j)
                    p.set(k, keyed_value(k))
                    j += 1
                for r in p.execute(raise_on_error=False):
                    if not isinstance(r, Exception):
                        acked[0] += 1
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            pass  # killed
        finally:
            w.close()

    def kill(srv):
        srv.proc.kill()
        srv.proc.wait(10)

    def check_restart(new_keys, new_marker):
        """Starts on the directories; returns the server, its client, and whether the
        new snapshot (holding new_keys and new_marker) is the one loaded."""
        s2 = env.start()
        c2 = client(s2)
        marker = c2.get(b"marker")
        newer = new_marker is not None and marker == new_marker
        assert marker == (new_marker if newer else committed[b"marker"][1]), marker
        check_all(c2, {k: v for k, v in committed.items() if k != b"marker"})
        if new_keys:
            present = c2.exists(*new_keys)
            if newer:
                check_all(c2, new_keys)
            else:
                assert present == 0, present
        # Keys written while the save began may or may not be in it; when there, exact.
        for k in c2.scan_iter(match=b"late*", count=1000):
            assert c2.get(k) == keyed_value(k), k
        return s2, c2, newer

    # Kill -9 while spilling, with no save since S1: S1 comes back exactly.
    acked = [0]
    t = threading.Thread(target=keep_writing, args=(s, b"lost", acked))
    t.start()
    wait_for(lambda: acked[0] > 500, timeout=20 * SLOW, what="writes while spilling")
    kill(s)
    t.join(20)
    c.close()
    s, c, newer = check_restart({}, None)
    assert c.dbsize() == len(committed)
    assert not list(c.scan_iter(match=b"lost:*", count=1000))

    # Kill -9 during a background save, early and late in it.
    for attempt, delay in enumerate((0.02, 0.3)):
        limit_above(c, HEADROOM)
        new = strings(b"n%d" % attempt, 1000, seed=20 + attempt)
        write_all(c, new)
        marker = b"B%d" % attempt
        c.set(b"marker", marker)
        acked = [0]
        t = threading.Thread(target=keep_writing, args=(s, b"late%d" % attempt, acked))
        t.start()
        assert c.bgsave() is True
        time.sleep(delay * SLOW)
        kill(s)
        t.join(20)
        c.close()
        s, c, newer = check_restart(new, marker)
        late = list(c.scan_iter(match=b"late%d:*" % attempt, count=1000))
        if newer:
            committed.update(new)
            committed[b"marker"] = ("string", marker)
            # What the loaded snapshot holds of the late writes is part of it now.
            committed.update({k: ("string", keyed_value(k)) for k in late})
        else:
            assert not late, late[:5]
        assert c.dbsize() == len(committed)
    assert c.save() is True
    c.close()


def test_memory_usage_tiered_reports_ram_and_disk(env):
    s, c, limit = env.start_spilling()
    data = strings(b"u", 5000, seed=80)
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    cold = cold_keys(c, data, at_least=10)
    reads = tiered(c)["tiered_disk_reads"]
    k = cold[0]
    got = call(c, "MEMORY", "USAGE", k, "TIERED")
    if isinstance(got, list):  # RESP2: a flat array
        got = dict(zip(got[::2], got[1::2]))
    assert got[b"ram"] == c.memory_usage(k) < 200, got
    assert VALUE_SIZE <= got[b"disk"] <= VALUE_SIZE + 16, got
    # A key in RAM shows no disk bytes and its whole value in RAM. Spilling may go on
    # after the quiet wait (a slow build), so a key not cold a moment ago may be cold
    # now: every reply must have one of the two shapes, and the first in RAM is checked.
    cold_set = set(cold)
    for x in [x for x in data if x not in cold_set][:50]:
        got = call(c, "MEMORY", "USAGE", x, "TIERED")
        if isinstance(got, list):
            got = dict(zip(got[::2], got[1::2]))
        if got[b"disk"] == 0:
            assert got[b"ram"] > VALUE_SIZE, got
            break
        assert got[b"ram"] < 200 and VALUE_SIZE <= got[b"disk"] <= VALUE_SIZE + 16, got
    assert tiered(c)["tiered_disk_reads"] == reads  # metadata: nothing read from disk
    assert c.memory_usage(b"missing") is None
    c.close()


def test_incremental_snapshots_keep_cold_values(env):
    """A full snapshot, then changes to cold keys (read back, overwritten, deleted) and
    new ones, then a delta: a restart from the chain has every key as it was."""
    s = env.start(save="3600 1000000000")  # rules on: changes are tracked for deltas
    c = client(s)
    warm_up(c)
    limit = limit_above(c, HEADROOM)
    data = strings(b"i", 4000, seed=70)
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    assert c.save() is True
    assert c.info("persistence")["snapshot_last_kind"] == "full"
    cold = cold_keys(c, data, at_least=120)
    expect = dict(data)
    for k in cold[:50]:
        assert c.get(k) == data[k][1]  # read back to RAM: not a change of value
    for k in cold[50:80]:
        assert c.set(k, b"over" + k) is True
        expect[k] = ("string", b"over" + k)
    for k in cold[80:100]:
        assert c.delete(k) == 1
        del expect[k]
    for k in cold[100:120]:
        assert c.expire(k, 100000) is True  # metadata only: stays cold
    more = strings(b"j", 1000, seed=71)
    write_all(c, more)
    expect.update(more)
    wait_quiet(c)
    assert c.save() is True
    assert c.info("persistence")["snapshot_last_kind"] == "incremental"
    c.close()
    s.proc.kill()  # no shutdown save: the chain above is what loads
    s.proc.wait(10)
    s2 = env.start(save="3600 1000000000")
    c2 = client(s2)
    assert tiered(c2)["tiered_cold_keys"] > 0
    assert c2.dbsize() == len(expect)
    check_all(c2, expect)
    for k in cold[80:100]:
        assert c2.exists(k) == 0
    for k in cold[100:120]:
        assert 0 < c2.ttl(k) <= 100000
    c2.close()


@pytest.mark.parametrize("fault", ["removed", "read-only"])
def test_a_broken_spill_dir_stops_spilling_and_serving_goes_on(env, fault):
    if fault == "read-only" and os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    s, c, limit = env.start_spilling()
    data = strings(b"a", 3000, seed=40)
    write_all(c, data)
    wait_spilled(c, limit)
    wait_quiet(c)
    if fault == "removed":
        shutil.rmtree(env.spill_dir)
    else:
        for root, dirs, _ in os.walk(env.spill_dir):
            for name in dirs:
                os.chmod(os.path.join(root, name), stat.S_IRUSR | stat.S_IXUSR)
        os.chmod(env.spill_dir, stat.S_IRUSR | stat.S_IXUSR)
    more = strings(b"b", 4000, seed=41)
    written, _ = write_until_refused(c, more, patience=2.0)
    wait_for(lambda: fault_seen(tiered(c)), timeout=15 * SLOW,
             what="the spill error in INFO tiered")
    assert s.proc.poll() is None, s.read_log()[-3000:]
    assert c.ping() is True
    alive = dict(data)
    alive.update({k: more[k] for k in written})
    assert c.dbsize() == len(alive)
    # Values in RAM read back exactly; a value on disk reads back exactly or gets an
    # error reply (the I/O error), never nil or other bytes.
    keys = list(alive)
    hot = {k for k, u in zip(keys, usage(c, keys)) if u is not None and u >= VALUE_SIZE}
    assert hot
    for k, r in read_all(c, [(k, "string") for k in keys]):
        if isinstance(r, redis.ResponseError) and k not in hot:
            assert str(r), k
        else:
            assert r == alive[k][1], (k, k in hot, str(r)[:100])
    t = tiered(c)
    log = s.read_log()
    assert log_mentions_fault(log, env.spill_dir, t["tiered_last_error"]), log[-3000:]
    assert len(log) < MB, "the error floods the log"
    s.proc.terminate()
    assert s.wait_exit(20) == 0, s.read_log()[-3000:]


def test_a_full_disk_stops_spilling_and_serving_goes_on(env, scratch):
    """The spill store on a 3 MB tmpfs (needs mount rights: skipped without them). The
    disk fills up; the server keeps serving every key it acknowledged, says so in INFO
    and the log, and never crashes."""
    mnt = os.path.join(scratch, "small")
    os.makedirs(mnt)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    s = None
    try:
        env.spill_dir = os.path.join(mnt, "spill")
        s, c, limit = env.start_spilling()
        data = strings(b"f", 9000, seed=90)
        written, last_error = write_until_refused(c, data, patience=3.0)
        assert s.proc.poll() is None
        t = tiered(c)
        assert t["tiered_cold_keys"] > 0, t
        assert t["tiered_spill_errors"] > 0 or t["tiered_last_error"] not in NO_ERROR, t
        alive = {k: data[k] for k in written}
        assert c.dbsize() == len(alive)
        bad = [k for k, got in read_all(c, [(k, "string") for k in alive])
               if isinstance(got, Exception) or got != alive[k][1]]
        assert not bad, bad[:3]
        log = s.read_log()
        assert log_mentions_fault(log, env.spill_dir, t["tiered_last_error"])
        # The store stops taking new records while it still has room for its own
        # flushes: RocksDB never meets the full disk (a write that fails inside it can
        # abort the process; see ColdStore::FreeBytes).
        assert "kept free for the store's own flushes" in log
        assert "No space left on device: While" not in log, log[-2000:]
        c.close()
    finally:
        if s is not None:
            s.stop()
        subprocess.run(["umount", mnt], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_spill_max_disk_size_bounds_the_disk_then_writes_get_oom(env):
    s, c, limit = env.start_spilling(["--spill-max-disk-size", "1mb"])
    data = strings(b"d", 8000, seed=50)
    written, last_error = write_until_refused(c, data, patience=3.0)
    assert len(written) < len(data), "8 MB fit in 3 MB of RAM and 1 MB of disk"
    assert last_error is not None and last_error.startswith(OOM), last_error
    assert s.proc.poll() is None
    t = tiered(c)
    assert t["tiered_cold_keys"] > 0, t
    assert t["tiered_disk_bytes"] < 4 * MB, t
    assert t["tiered_cold_value_bytes"] < 4 * MB, t
    alive = {k: data[k] for k in written}
    assert c.dbsize() == len(alive)
    check_all(c, alive)
    # Deleting values in RAM makes room again.
    keys = list(alive)
    hot = [k for k, u in zip(keys, usage(c, keys)) if u is not None and u >= VALUE_SIZE]
    assert len(hot) >= 200, len(hot)
    half = hot[:len(hot) // 2]
    assert c.delete(*half) == len(half)
    assert c.set(b"after", b"ok") is True
    assert tiered(c)["tiered_disk_bytes"] < 4 * MB
    c.close()


def test_values_under_the_minimum_size_stay_in_ram(env):
    s, c, limit = env.start_spilling(["--spill-min-value-size", "4096"])
    assert c.config_get("spill-min-value-size") == {"spill-min-value-size": "4096"}
    data = strings(b"m", 5000, seed=60)
    written, last_error = write_until_refused(c, data, patience=2.0)
    assert last_error is not None and last_error.startswith(OOM)  # noeviction, as Redis
    t = tiered(c)
    assert t["tiered_cold_keys"] == 0 and t["tiered_spills"] == 0, t
    check_all(c, {k: data[k] for k in written})
    c.close()


def test_settings_from_the_config_file_and_flags(env, server_factory):
    conf = ("spill-dir %s\nspill-high-watermark 0.7\nspill-low-watermark 0.5\n"
            "spill-min-value-size 128\nspill-max-disk-size 64mb\nspill-blob-min-size 4kb\n"
            "spill-compression zstd\n" % env.spill_dir)
    s = server_factory(config_text=conf, extra_args=["--spill-cache-size", "2mb"],
                       data_dir=env.data_dir)
    c = s.client(decode_responses=True)
    cfg = c.config_get("spill-*")
    assert cfg["spill-dir"] == env.spill_dir
    assert float(cfg["spill-high-watermark"]) == 0.7
    assert float(cfg["spill-low-watermark"]) == 0.5
    assert cfg["spill-min-value-size"] == "128"
    assert cfg["spill-max-disk-size"] == str(64 * MB)
    assert cfg["spill-cache-size"] == str(2 * MB)
    assert cfg["spill-blob-min-size"] == "4096"
    assert cfg["spill-compression"] == "zstd"
    assert tiered(c)["tiered_enabled"] == 1
    with pytest.raises(redis.ResponseError):
        c.config_set("spill-dir", env.root)  # startup only
    c.close()


def test_spill_off_without_spill_dir(server_factory):
    s = server_factory()
    c = s.client(decode_responses=True)
    assert c.config_get("spill-dir") == {"spill-dir": ""}
    cfg = c.config_get("spill-*")
    assert float(cfg["spill-high-watermark"]) == 0.9
    assert float(cfg["spill-low-watermark"]) == 0.8
    assert cfg["spill-min-value-size"] == "64"
    assert cfg["spill-max-disk-size"] == "0"
    assert cfg["spill-cache-size"] == "0"
    assert cfg["spill-blob-min-size"] == "0"
    assert cfg["spill-compression"] == "lz4"
    t = tiered(c)
    assert t["tiered_enabled"] == 0, t
    assert t.get("tiered_cold_keys", 0) == 0
    assert int(c.info("memory")["used_memory_tiered"]) == 0
    with pytest.raises(redis.ResponseError):
        c.config_set("spill-dir", tempfile.gettempdir())  # startup only
    # Over maxmemory, nothing spills: noeviction's OOM, as without the feature.
    c.config_set("maxmemory", str(used(c) + MB))
    with pytest.raises(redis.ResponseError, match="^" + OOM):
        for i in range(5000):
            c.set("k%d" % i, "v" * VALUE_SIZE)
    assert tiered(c)["tiered_enabled"] == 0
    c.close()
