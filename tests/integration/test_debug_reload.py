"""DEBUG RELOAD: save, flush and load back through the snapshot, as Redis's does through
its RDB. Runs against redis-server too (STRATA_TEST_TARGET=redis), except what is
strata's own: -LOADING for other clients meanwhile, and what happens on a failure."""
import os
import shutil
import tempfile
import threading
import time

import pytest
import redis

from conftest import TARGET

DEBUG_ON = ["--enable-debug-command", "yes"]
strata_only = pytest.mark.skipif(TARGET == "redis", reason="strata's own behaviour")


@pytest.fixture
def data_dir():
    d = tempfile.mkdtemp(prefix="strata-reload-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def srv(server_factory, data_dir):
    return server_factory(threads=3, data_dir=data_dir, extra_args=DEBUG_ON)


def fill(c):
    c.mset({"s%d" % i: "v%d" % i for i in range(300)})
    c.set("n", 12345)
    c.set("ttl", "x", px=600000)
    c.rpush("list", *["e%d" % i for i in range(200)])
    c.hset("hash", mapping={"f%d" % i: i for i in range(50)})
    c.sadd("set", *range(100))
    c.sadd("strset", "a", "b", "c")
    c.zadd("zset", {"m%d" % i: i / 3 for i in range(150)})
    c.xadd("stream", {"f": "v"}, id="1-1")
    c.xgroup_create("stream", "g", id="0")
    c.pfadd("hll", *range(500))
    c.select(2)
    c.set("in-db-2", "yes")
    c.select(0)


def test_reload_keeps_every_type_ttl_and_database(srv):
    c = srv.client(decode_responses=True)
    fill(c)
    digest = c.execute_command("DEBUG", "DIGEST")
    size = c.dbsize()
    assert c.execute_command("DEBUG", "RELOAD") == "OK"
    assert c.execute_command("DEBUG", "DIGEST") == digest
    assert c.dbsize() == size
    assert 0 < c.pttl("ttl") <= 600000
    assert c.lrange("list", 0, 2) == ["e0", "e1", "e2"]
    assert c.xinfo_groups("stream")[0]["name"] == "g"
    c.select(2)
    assert c.get("in-db-2") == "yes"
    assert int(c.info("persistence")["rdb_changes_since_last_save"]) == 0


def test_nosave_loads_the_last_snapshot_and_noflush_keeps_other_keys(srv):
    c = srv.client(decode_responses=True)
    c.set("a", "saved")
    c.save()
    c.set("a", "changed")
    c.set("b", "unsaved")
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE") == "OK"
    assert c.get("a") == "saved" and c.get("b") is None
    c.set("a", "changed")
    c.set("b", "unsaved")
    assert c.execute_command("DEBUG", "RELOAD", "NOFLUSH", "NOSAVE", "MERGE") == "OK"
    assert c.get("a") == "saved" and c.get("b") == "unsaved"


def test_options_and_the_debug_gate(srv, server_factory, data_dir):
    c = srv.client(decode_responses=True)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("DEBUG", "RELOAD", "FAST")
    assert str(e.value) == "DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
    off = server_factory(data_dir=tempfile.mkdtemp(dir=data_dir))
    with pytest.raises(redis.ResponseError) as e:
        off.client().execute_command("DEBUG", "RELOAD")
    assert "DEBUG command not allowed" in str(e.value)


def test_function_libraries_survive(srv):
    c = srv.client(decode_responses=True)
    c.execute_command("FUNCTION", "LOAD",
                      "#!lua name=lib\nredis.register_function('f', function() return 7 end)")
    assert c.execute_command("DEBUG", "RELOAD") == "OK"
    assert c.execute_command("FCALL", "f", "0") == 7


@strata_only
def test_other_clients_never_see_a_partial_dataset_nor_lose_an_acknowledged_write(srv):
    c = srv.client(decode_responses=True)
    pipe = c.pipeline(transaction=False)
    for i in range(60000):
        pipe.set("k%d" % i, "v%d" % i)
    pipe.execute()
    c.set("counter", 0)
    stop = threading.Event()
    seen = {"loading": 0, "missing": 0, "acked": 0, "other": []}

    def reader():
        r = srv.client(decode_responses=True)
        i = 0
        while not stop.is_set():
            try:
                if r.get("k%d" % (i % 60000)) is None:
                    seen["missing"] += 1
            except redis.exceptions.BusyLoadingError:
                seen["loading"] += 1
            except redis.RedisError as e:
                seen["other"].append(repr(e))
            i += 1

    def writer():
        w = srv.client(decode_responses=True)
        while not stop.is_set():
            try:
                w.incr("counter")
                seen["acked"] += 1
            except redis.exceptions.BusyLoadingError:
                seen["loading"] += 1
            except redis.RedisError as e:
                seen["other"].append(repr(e))

    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    for _ in range(3):
        assert c.execute_command("DEBUG", "RELOAD") == "OK"
    time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(10)
    assert seen["missing"] == 0
    assert seen["other"] == []
    assert seen["loading"] > 0
    assert int(c.get("counter")) == seen["acked"]
    assert c.dbsize() == 60001


@strata_only
def test_nosave_without_a_snapshot_is_an_error_and_keeps_the_data(srv):
    c = srv.client(decode_responses=True)
    c.set("a", "1")
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("DEBUG", "RELOAD", "NOSAVE")
    assert str(e.value) == "Error trying to load the RDB dump, check server logs."
    assert c.get("a") == "1"


@strata_only
def test_a_file_damaged_mid_load_empties_the_server_and_it_keeps_serving(srv, data_dir):
    c = srv.client(decode_responses=True)
    c.mset({"k%d" % i: "x" * 100 for i in range(5000)})
    c.save()
    snaps = [f for f in os.listdir(data_dir) if f.endswith(".snap")]
    assert snaps
    for name in snaps:  # same size: only the block checksums can tell
        path = os.path.join(data_dir, name)
        with open(path, "r+b") as f:
            size = os.path.getsize(path)
            f.seek(size // 2)
            f.write(b"\xff" * 64)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("DEBUG", "RELOAD", "NOSAVE")
    assert str(e.value) == "Error trying to load the RDB dump, check server logs."
    assert c.ping()
    assert c.dbsize() == 0
    c.set("after", "1")
    assert c.get("after") == "1"


@strata_only
def test_noflush_keeps_the_next_snapshot_complete(server_factory, data_dir):
    """Kept keys are in no snapshot of the chain: the next one must hold them."""
    args = DEBUG_ON + ["--snapshot-incremental", "yes"]
    s = server_factory(threads=2, data_dir=data_dir, save="3600 1000000000", extra_args=args)
    c = s.client(decode_responses=True)
    c.set("saved", "1")
    c.save()
    c.set("kept", "1")
    assert c.execute_command("DEBUG", "RELOAD", "NOFLUSH", "NOSAVE") == "OK"
    c.set("later", "1")
    c.save()
    s.stop()
    s2 = server_factory(threads=2, data_dir=data_dir, extra_args=DEBUG_ON)
    c2 = s2.client(decode_responses=True)
    assert (c2.get("saved"), c2.get("kept"), c2.get("later")) == ("1", "1", "1")


@strata_only
def test_refused_with_the_spill_tier(server_factory, data_dir):
    s = server_factory(data_dir=data_dir, extra_args=DEBUG_ON + [
        "--spill-dir", os.path.join(data_dir, "spill"), "--maxmemory", "64mb"])
    c = s.client(decode_responses=True)
    c.set("a", "1")
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("DEBUG", "RELOAD")
    assert "spill-dir" in str(e.value)
    assert c.get("a") == "1"


def test_inside_multi_it_runs_between_the_transactions_commands(srv):
    # The transaction holds the locks of its keys on every shard while DEBUG RELOAD saves:
    # they are the waiting transaction's own, not a half-applied write, so the save does
    # not wait for them to go (it once retried its cut until it gave up, 20 s later).
    c = srv.client(decode_responses=True)
    keys = ["k%d" % i for i in range(12)]  # on every shard
    p = c.pipeline(transaction=True)
    for k in keys:
        p.set(k, k)
    p.execute_command("DEBUG", "RELOAD")
    p.mget(keys)
    p.set("after", "1")
    started = time.monotonic()
    replies = p.execute()
    assert time.monotonic() - started < 5
    assert replies[len(keys)] is True or replies[len(keys)] == "OK"
    assert replies[len(keys) + 1] == keys
    assert c.mget(keys) == keys
    assert c.get("after") == "1"
    # The snapshot it saved holds the writes made before it: NOSAVE loads it back.
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE") == "OK"
    assert c.mget(keys) == keys and c.get("after") is None


def test_inside_multi_while_a_snapshot_waits_for_the_transactions_locks(srv):
    # A BGSAVE that starts while the transaction holds every shard retries its cut until
    # the locks go; the transaction's DEBUG RELOAD then queues its save behind it. The
    # locks go only when the reload ends, so that cut must not wait for them either.
    c = srv.client(decode_responses=True)
    other = srv.client(decode_responses=True)
    keys = ["k%d" % i for i in range(12)]
    p = c.pipeline(transaction=True)
    for k in keys:
        p.set(k, k)
    p.execute_command("DEBUG", "SLEEP", "0.5")  # holds the locks while BGSAVE starts
    p.execute_command("DEBUG", "RELOAD")
    p.mget(keys)
    replies = []
    t = threading.Thread(target=lambda: replies.append(p.execute()))
    started = time.monotonic()
    t.start()
    time.sleep(0.2)
    assert other.bgsave()
    t.join(30)
    assert not t.is_alive()
    assert time.monotonic() - started < 5
    assert replies[0][-1] == keys
    assert c.mget(keys) == keys
