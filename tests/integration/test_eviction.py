"""maxmemory eviction policies, as redis-server behaves (STRATA_TEST_TARGET=redis runs
the same checks against it): which keys each policy may take and which it keeps, the
OOM error when nothing may go, OBJECT IDLETIME / OBJECT FREQ and their errors under the
other policy, the counters, and the settings."""
import random
import threading
import time

import pytest
import redis

from helpers import wait_for

OOM = "^OOM command not allowed when used memory > 'maxmemory'.$"
LFU_NOT_SELECTED = (
    "^An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
    "that when switching between policies at runtime LRU and LFU data will take some time "
    "to adjust.$")
LFU_SELECTED = (
    "^An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust.$")

VALUE = "v" * 200


def used(c):
    return int(c.info("memory")["used_memory"])


def evicted(c):
    return int(c.info("stats")["evicted_keys"])


def fill(c, prefix, n, value=VALUE, ex=None, batch=500):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("%s:%d" % (prefix, i), value, ex=ex)
        if i % batch == batch - 1:
            p.execute()
    p.execute()


def count_present(c, prefix, n, batch=500):
    total = 0
    for start in range(0, n, batch):
        p = c.pipeline(transaction=False)
        for i in range(start, min(n, start + batch)):
            p.exists("%s:%d" % (prefix, i))
        total += sum(p.execute())
    return total


def limit_above(c, extra):
    """Sets maxmemory to what is used now plus `extra` bytes; returns the limit."""
    limit = used(c) + extra
    c.config_set("maxmemory", str(limit))
    return limit


def warm_up(c):
    """Pipelined traffic first: the I/O buffers it grows count in used_memory, so the
    limits below are set over them, not under."""
    fill(c, "warm", 20000)  # 5 MB: every receive buffer of the worker touched
    c.flushall()


@pytest.fixture
def srv(server_factory):
    s = server_factory()
    c = s.client(decode_responses=True)
    warm_up(c)
    yield c
    c.close()


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random",
                                    "volatile-ttl"])
def test_volatile_policies_never_evict_keys_without_ttl(srv, policy):
    c = srv
    c.config_set("maxmemory-policy", policy)
    fill(c, "keep", 2000)
    limit_above(c, 2 * 1024 * 1024)
    fill(c, "vol", 40000, ex=100000)  # ~10 MB with a TTL, 5x the room left
    assert used(c) < int(c.config_get("maxmemory")["maxmemory"]) * 1.05
    assert count_present(c, "keep", 2000) == 2000
    assert evicted(c) > 0
    assert count_present(c, "vol", 40000) < 40000


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random",
                                    "volatile-ttl", "noeviction"])
def test_nothing_evictable_gives_the_oom_error(srv, policy):
    c = srv
    c.config_set("maxmemory-policy", policy)
    fill(c, "keep", 1000)
    limit_above(c, 1024 * 1024)
    with pytest.raises(redis.ResponseError, match=OOM):
        for i in range(20000):
            c.set("more:%d" % i, VALUE)
    assert count_present(c, "keep", 1000) == 1000
    assert evicted(c) == 0
    # Reads and deletes still work.
    assert c.get("keep:1") == VALUE
    assert c.delete("keep:1") == 1


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu", "allkeys-random"])
def test_allkeys_policies_keep_memory_under_the_limit_without_errors(srv, policy):
    c = srv
    c.config_set("maxmemory-policy", policy)
    limit = limit_above(c, 4 * 1024 * 1024)
    fill(c, "k", 60000)  # ~15 MB of keys into 4 MB of room: never an OOM
    assert evicted(c) > 30000
    assert 0 < c.dbsize() < 60000
    assert used(c) <= limit * 1.05
    assert c.set("after", "ok") is True


def test_allkeys_lru_keeps_the_recently_used_keys(srv):
    c = srv
    c.config_set("maxmemory-policy", "allkeys-lru")
    c.config_set("maxmemory-samples", "10")
    fill(c, "cold", 8000)
    limit_above(c, 64 * 1024)
    time.sleep(1.1)  # LRU clock: one second resolution, as Redis
    p = c.pipeline(transaction=False)
    for i in range(500):
        p.get("cold:%d" % i)  # these become the recent ones
    p.execute()
    fill(c, "new", 3000)
    assert evicted(c) >= 2500
    assert count_present(c, "cold", 500) >= 400  # redis-server: 418 to 495 in 5 runs
    # The other cold keys went first.
    assert count_present(c, "cold", 8000) - count_present(c, "cold", 500) < 7500 - 2000


def test_allkeys_lfu_keeps_the_frequently_used_keys(srv):
    c = srv
    c.config_set("maxmemory-policy", "allkeys-lfu")
    c.config_set("maxmemory-samples", "10")
    fill(c, "k", 8000)
    p = c.pipeline(transaction=False)
    for _ in range(20):
        for i in range(500):
            p.get("k:%d" % i)
    p.execute()
    # The limit is set after the pipeline of 10000 GETs: its ~300 KB may arrive at once,
    # and the server's receive buffers that grow to take it (strata's ring; Redis's query
    # buffer) count in used_memory. Set before, that growth alone would have to be
    # evicted, hot keys and all, which is not what this test is about.
    limit_above(c, 64 * 1024)
    fill(c, "new", 3000)
    assert evicted(c) >= 2500
    assert count_present(c, "k", 500) >= 475


def test_volatile_ttl_evicts_the_nearest_expiry_first(srv):
    c = srv
    c.config_set("maxmemory-policy", "volatile-ttl")
    c.config_set("maxmemory-samples", "10")
    fill(c, "late", 4000, ex=900000)
    fill(c, "soon", 4000, ex=100000)
    limit_above(c, 128 * 1024)
    fill(c, "new", 3000, ex=800000)
    assert evicted(c) >= 2000
    late, soon = count_present(c, "late", 4000), count_present(c, "soon", 4000)
    assert late >= 3900, (late, soon)
    assert soon < 4000 - 1500, (late, soon)


def test_object_idletime_and_freq(srv):
    c = srv
    c.set("k", "v")
    time.sleep(2.1)
    assert c.object("idletime", "k") >= 2
    # OBJECT, TYPE, EXISTS and TTL do not count as an access; GET does.
    c.type("k")
    c.exists("k")
    c.ttl("k")
    assert c.object("idletime", "k") >= 2
    c.get("k")
    assert c.object("idletime", "k") <= 1
    with pytest.raises(redis.ResponseError, match=LFU_NOT_SELECTED):
        c.object("freq", "k")
    c.config_set("maxmemory-policy", "allkeys-lfu")
    c.set("f", "v")
    assert c.object("freq", "f") == 5  # a new key starts at LFU_INIT_VAL
    c.get("f")
    assert c.object("freq", "f") == 6  # the first access past the start always counts
    for _ in range(200):
        c.get("f")
    n = c.object("freq", "f")
    assert 8 <= n <= 20  # logarithmic
    c.set("f", "w")  # an overwrite keeps the counter
    assert c.object("freq", "f") >= n
    with pytest.raises(redis.ResponseError, match=LFU_SELECTED):
        c.object("idletime", "f")
    assert c.object("freq", "missing") is None
    c.config_set("maxmemory-policy", "noeviction")
    assert c.object("idletime", "f") is not None


def test_counters_and_info(srv):
    c = srv
    stats = c.info("stats")
    for field in ("evicted_keys", "total_eviction_exceeded_time",
                  "current_eviction_exceeded_time"):
        assert int(stats[field]) == 0, field
    c.config_set("maxmemory-policy", "allkeys-lru")
    limit_above(c, 512 * 1024)
    fill(c, "k", 20000)
    assert evicted(c) > 0
    assert c.info("memory")["maxmemory_policy"] == "allkeys-lru"


def test_settings_take_redis_values_and_ranges(srv):
    c = srv
    assert c.config_get("maxmemory-samples") == {"maxmemory-samples": "5"}
    assert c.config_get("maxmemory-eviction-tenacity") == {"maxmemory-eviction-tenacity": "10"}
    assert c.config_get("lfu-log-factor") == {"lfu-log-factor": "10"}
    assert c.config_get("lfu-decay-time") == {"lfu-decay-time": "1"}
    for name, bad in (("maxmemory-samples", "0"), ("maxmemory-samples", "2147483648"),
                      ("maxmemory-eviction-tenacity", "101"), ("lfu-log-factor", "-1"),
                      ("lfu-decay-time", "-1"), ("maxmemory-policy", "lru")):
        with pytest.raises(redis.ResponseError, match="CONFIG SET failed"):
            c.config_set(name, bad)
    for name, good in (("maxmemory-samples", "64"), ("maxmemory-eviction-tenacity", "100"),
                       ("lfu-log-factor", "0"), ("lfu-decay-time", "0"),
                       ("maxmemory-policy", "VOLATILE-TTL")):
        assert c.config_set(name, good) is True
    assert c.config_get("maxmemory-policy") == {"maxmemory-policy": "volatile-ttl"}


def test_keys_on_one_shard_evict_from_it_and_the_process_stays_under(server_factory):
    s = server_factory(threads=3)
    if s.is_redis:
        pytest.skip("shards are strata's: redis-server has one keyspace")
    c = s.client(decode_responses=True)
    try:
        warm_up(c)
        c.config_set("maxmemory-policy", "allkeys-lru")
        fill(c, "{other}", 2000)  # on another shard (strata) than the skewed keys
        limit = limit_above(c, 3 * 1024 * 1024)
        fill(c, "{skew}", 40000)  # one hash tag: one shard takes every write
        assert used(c) <= limit * 1.05
        assert evicted(c) > 20000
        # The skewed shard evicted from itself: the other keys were left alone.
        # The skewed shard evicted from itself: of the 20000+ keys evicted, the other
        # shard gave few (its per-turn share only while the writer's shard lagged; 242
        # on the slow sanitizer build, none on a release build).
        assert count_present(c, "{other}", 2000) >= 1500
    finally:
        c.close()


def test_no_eviction_while_under_the_limit(srv):
    c = srv
    c.config_set("maxmemory-policy", "allkeys-lru")
    c.config_set("maxmemory", str(used(c) + 64 * 1024 * 1024))
    fill(c, "k", 20000)
    time.sleep(0.3)
    assert evicted(c) == 0
    assert c.dbsize() == 20000


def test_big_collections_are_evicted_without_stalling(srv):
    c = srv
    c.config_set("maxmemory-policy", "allkeys-random")
    for h in range(8):
        p = c.pipeline(transaction=False)
        for i in range(0, 50000, 1000):
            p.hset("big:%d" % h, mapping={"f%d" % j: "x" * 20 for j in range(i, i + 1000)})
        p.execute()
    per_hash = used(c) // 8
    limit = used(c) - 3 * per_hash  # room for about five of the eight
    c.config_set("maxmemory", str(limit))
    c.set("trigger", "x")
    wait_for(lambda: used(c) <= limit, timeout=10, what="big hashes evicted")
    assert 2 <= evicted(c) <= 5
    assert c.dbsize() >= 4
    t0 = time.monotonic()
    assert c.ping() is True
    assert time.monotonic() - t0 < 0.5


def test_mixed_types_are_evicted(srv):
    c = srv
    c.config_set("maxmemory-policy", "allkeys-lru")
    limit = limit_above(c, 512 * 1024)
    rnd = random.Random(7)
    p = c.pipeline(transaction=False)
    for i in range(6000):
        kind = rnd.randrange(5)
        k = "t:%d" % i
        if kind == 0:
            p.set(k, VALUE)
        elif kind == 1:
            p.rpush(k, *["e%d" % j for j in range(20)])
        elif kind == 2:
            p.sadd(k, *["m%d" % j for j in range(20)])
        elif kind == 3:
            p.zadd(k, {"m%d" % j: j for j in range(20)})
        else:
            p.hset(k, mapping={"f%d" % j: "v" for j in range(20)})
        if i % 200 == 199:
            p.execute()
    p.execute()
    assert evicted(c) > 0
    assert used(c) <= limit * 1.05


def test_a_snapshot_taken_while_evicting_loads_whole(server_factory, tmp_path):
    """Evictions during a background save are deletes like any other: the image written
    is whole, and a restart loads every key in it byte-exact."""
    data_dir = str(tmp_path)
    s = server_factory(data_dir=data_dir)
    c = s.client()
    warm_up(c)
    c.config_set("maxmemory-policy", "allkeys-lru")
    fill(c, "k", 20000, value=b"%0200d" % 7)
    limit_above(c, 1024 * 1024)
    stop = threading.Event()

    def writer():
        w = s.client()
        i = 0
        while not stop.is_set():
            p = w.pipeline(transaction=False)
            for _ in range(200):
                p.set("w:%d" % i, b"%0200d" % i)
                i += 1
            p.execute()
        w.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        time.sleep(0.2)
        c.execute_command("BGSAVE")
        wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=30,
                 what="the save")
    finally:
        stop.set()
        t.join(10)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert evicted(c) > 0
    s.stop()
    s2 = server_factory(data_dir=data_dir)
    c2 = s2.client()
    n = c2.dbsize()
    assert n > 0
    for k in c2.scan_iter(count=1000):
        v = c2.get(k)
        if k.startswith(b"w:"):
            assert v == b"%0200d" % int(k[2:]), k
        else:
            assert v == b"%0200d" % 7, k
    c2.close()
