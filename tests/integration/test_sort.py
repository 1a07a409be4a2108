"""SORT and SORT_RO over lists, sets and sorted sets: numeric and ALPHA order, DESC,
LIMIT, BY and GET patterns (string keys and hash fields, on any shard), BY nosort,
STORE (overwriting, deleting on an empty result), and the errors."""
import pytest
import redis

from conftest import has_command


def test_numeric_and_alpha(r):
    r.rpush("l", "3", "1", "2", "10")
    assert r.sort("l") == ["1", "2", "3", "10"]
    assert r.sort("l", desc=True) == ["10", "3", "2", "1"]
    assert r.sort("l", alpha=True) == ["1", "10", "2", "3"]
    assert r.sort("l", start=1, num=2) == ["2", "3"]
    assert r.sort("l", start=0, num=-1) == ["1", "2", "3", "10"]
    assert r.sort("l", start=10, num=5) == []
    assert r.execute_command("SORT_RO", "l", "DESC", "LIMIT", "0", "2") == ["10", "3"]
    r.rpush("words", "b", "a", "c")
    with pytest.raises(redis.ResponseError, match="^One or more scores can't be converted into double$"):
        r.sort("words")
    assert r.sort("words", alpha=True) == ["a", "b", "c"]
    assert r.sort("missing") == []


def test_sets_and_sorted_sets(r, server):
    r.sadd("s", "5", "1", "3")
    assert r.sort("s") == ["1", "3", "5"]
    if has_command(server, "ZADD"):
        r.zadd("z", {"c": 1, "a": 3, "b": 2})
        assert r.sort("z", alpha=True) == ["a", "b", "c"]
        assert r.sort("z", by="nosort") == ["c", "b", "a"]
        assert r.sort("z", by="nosort", desc=True) == ["a", "b", "c"]


def test_by_and_get_patterns_across_shards(r):
    r.rpush("ids", "1", "2", "3")
    r.mset({"w_1": "30", "w_2": "10", "w_3": "20"})
    r.mset({"name_1": "one", "name_2": "two"})
    r.hset("h_1", "f", "x1")
    r.hset("h_3", "f", "x3")
    assert r.sort("ids", by="w_*") == ["2", "3", "1"]
    assert r.sort("ids", by="w_*", get=["#", "name_*", "h_*->f"]) == [
        "2", "two", None, "3", None, "x3", "1", "one", "x1"]
    assert r.sort("ids", by="nosort") == ["1", "2", "3"]
    assert r.sort("ids", by="missing_*") == ["1", "2", "3"]  # all weights 0: by element
    assert r.sort("ids", get="#", by="h_*->f", alpha=True) == ["2", "1", "3"]


def test_store(r):
    r.rpush("src", "b", "a")
    r.set("dst", "a string")
    assert r.sort("src", alpha=True, store="dst") == 2
    assert r.type("dst") == "list"
    assert r.lrange("dst", 0, -1) == ["a", "b"]
    assert r.sort("empty", store="dst") == 0
    assert r.exists("dst") == 0
    r.rpush("src2{x}", "2", "1")
    assert r.sort("src2{x}", store="dst{y}") == 2
    assert r.lrange("dst{y}", 0, -1) == ["1", "2"]


def test_errors(r):
    r.set("str", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.sort("str")
    r.rpush("l", "1")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SORT", "l", "BOGUS")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SORT_RO", "l", "STORE", "x")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("SORT", "l", "LIMIT", "a", "1")


def test_get_patterns_are_read_atomically(server):
    """A writer changes two keys on different shards with one MSET (atomic); SORT ... GET
    must never see one new and one old value."""
    import threading
    c = server.client(decode_responses=True)
    ids = ["a{1}", "b{2}", "c{3}", "d{4}"]
    c.rpush("ids", *ids)
    c.mset({"v_" + i: "0" for i in ids})
    stop = threading.Event()

    def writer():
        w = server.client(decode_responses=True)
        n = 0
        while not stop.is_set():
            n += 1
            w.mset({"v_" + i: str(n) for i in ids})

    t = threading.Thread(target=writer)
    t.start()
    try:
        torn = 0
        for _ in range(300):
            got = c.sort("ids", by="nosort", get="v_*")
            if len(set(got)) != 1:
                torn += 1
        assert torn == 0, "SORT saw %d torn reads" % torn
    finally:
        stop.set()
        t.join(10)
