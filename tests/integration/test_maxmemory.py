"""maxmemory with the noeviction policy: over the limit, commands that add data get
Redis's OOM error; reads and deletes keep working; the limit is for the whole process,
so keys that all land on one shard are not refused early."""
import pytest
import redis

OOM = "^OOM command not allowed when used memory > 'maxmemory'.$"


def used_memory(c):
    return int(c.info("memory")["used_memory"])


def fill_until_oom(c, prefix, value, limit_keys):
    for i in range(limit_keys):
        try:
            c.set("%s:%d" % (prefix, i), value)
        except redis.ResponseError as e:
            return i, str(e)
    return limit_keys, None


def test_writes_over_maxmemory_get_oom_reads_and_deletes_work(r):
    base = used_memory(r)
    r.config_set("maxmemory", str(base + 2 * 1024 * 1024))
    try:
        written, err = fill_until_oom(r, "mm", "x" * 100000, 200)
        assert err is not None, "no OOM after %d writes of 100 KB" % written
        assert 10 <= written < 200
        # Clearly over the limit (not at its edge, where the request's own read buffer
        # decides), every write that adds data is refused.
        r.config_set("maxmemory", str(used_memory(r) - 1024 * 1024))
        for k in range(3):
            with pytest.raises(redis.ResponseError, match=OOM):
                r.set("another%d" % k, "y" * 100000)
        with pytest.raises(redis.ResponseError, match=OOM):
            r.append("mm:0", "y" * 100000)
        with pytest.raises(redis.ResponseError, match=OOM):
            r.mset({"m1": "y" * 100000, "m2": "y" * 100000})
        # Reads, deletes and expiry changes still work.
        assert r.get("mm:0") == "x" * 100000
        assert r.exists("mm:1") == 1
        assert r.expire("mm:1", 100) is True
        assert r.delete(*["mm:%d" % i for i in range(written)]) == written
        r.delete("another0", "another1", "another2")
        # Back under the limit: writes work again.
        r.config_set("maxmemory", str(base + 2 * 1024 * 1024))
        assert r.set("after", "ok") is True
        info = r.info("memory")
        assert int(info["maxmemory"]) == base + 2 * 1024 * 1024
        assert info["maxmemory_policy"] == "noeviction"
    finally:
        r.config_set("maxmemory", "0")


def test_limit_is_for_the_whole_process_not_per_shard(r):
    # All keys share a hash tag, so on strata they land on one shard; 6 MB of data under
    # a limit of base + 10 MB must be accepted whatever the shard count.
    base = used_memory(r)
    r.config_set("maxmemory", str(base + 10 * 1024 * 1024))
    try:
        for i in range(60):
            r.set("{skew}:%d" % i, "z" * 100000)
        assert r.dbsize() == 60
    finally:
        r.config_set("maxmemory", "0")


def test_maxmemory_zero_means_no_limit(r):
    r.config_set("maxmemory", "0")
    for i in range(50):
        r.set("nolimit:%d" % i, "v" * 100000)
    assert r.dbsize() == 50
