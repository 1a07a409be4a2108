"""UNLINK and FLUSHALL/FLUSHDB ASYNC: the keys are gone at once, big collections and
big databases are freed a slice per loop turn, and the memory comes back."""
import time

import pytest

from conftest import TARGET


def wait_freed(c, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if int(c.info("memory")["lazyfree_pending_objects"]) == 0:
            return
        time.sleep(0.02)
    raise AssertionError("lazy freeing did not finish")


def fill(c):
    pipe = c.pipeline(transaction=False)
    for i in range(0, 60000, 1000):
        pipe.hset("big:hash", mapping={"f%d" % j: "v" for j in range(i, i + 1000)})
        pipe.rpush("big:list", *["e%d" % j for j in range(i, i + 1000)])
        pipe.sadd("big:set", *["m%d" % j for j in range(i, i + 1000)])
    pipe.execute()


def test_unlink_big_collections(server):
    c = server.client(decode_responses=True)
    fill(c)
    assert c.unlink("big:hash", "big:list", "big:set", "missing") == 3
    assert c.exists("big:hash", "big:list", "big:set") == 0
    wait_freed(c)
    if TARGET != "redis":
        info = c.info("memory")
        for t in ("hash", "list", "set"):
            assert info["mem_type_" + t]["bytes"] == 0, t
            assert info["mem_type_" + t]["keys"] == 0, t


@pytest.mark.parametrize("command", ["FLUSHALL", "FLUSHDB"])
def test_flush_async(server, command):
    c = server.client(decode_responses=True)
    pipe = c.pipeline(transaction=False)
    for i in range(50000):
        pipe.set("k%d" % i, "v" * 20)
    pipe.execute()
    fill(c)
    assert c.execute_command(command, "ASYNC") in (True, "OK")
    assert c.dbsize() == 0
    c.set("after", "1")  # usable at once
    assert c.get("after") == "1"
    wait_freed(c)
    if TARGET != "redis":
        info = c.info("memory")
        assert info["mem_type_string"]["keys"] == 1
        for t in ("hash", "list", "set"):
            assert info["mem_type_" + t]["bytes"] == 0, t


def test_lazy_user_del_config(server):
    c = server.client(decode_responses=True)
    c.config_set("lazyfree-lazy-user-del", "yes")
    try:
        fill(c)
        assert c.delete("big:hash", "big:list", "big:set") == 3
        wait_freed(c)
        assert c.exists("big:hash") == 0
    finally:
        c.config_set("lazyfree-lazy-user-del", "no")
