"""cluster-enabled emulated: one strata answers the cluster commands as the one node of a
cluster that owns all 16384 slots, so cluster-only clients (redis-py's RedisCluster here)
use it unchanged.

Against STRATA_TEST_TARGET=redis the same tests run on a redis-server started with
cluster-enabled yes that has been given every slot (CLUSTER ADDSLOTSRANGE 0 16383): the
reply shapes, KEYSLOT, SELECT and the disabled-mode errors are Redis's. That node is
started with cluster-announce-ip 127.0.0.1: Redis lists a node that never met another with
an empty address, which clients cannot follow; strata gives the address the client
connected to."""
import os
import re
import socket
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import Server, TARGET
from helpers import wait_for
from test_node_clients import run_node_check

IS_REDIS = TARGET == "redis"


def start_cluster_node(extra=()):
    if IS_REDIS:
        # Redis gives a node that never met another an empty address unless one is
        # announced; clients cannot follow an empty one.
        s = Server(extra_args=["--cluster-enabled", "yes", "--cluster-config-file",
                               "nodes-%d.conf" % os.getpid(), "--cluster-announce-ip",
                               "127.0.0.1"] + list(extra))
        c = s.client(decode_responses=True)
        c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        wait_for(lambda: "cluster_state:ok" in c.execute_command("CLUSTER", "INFO"), 10,
                 "the one-node cluster to be ok")
        c.close()
        return s
    return Server(extra_args=["--cluster-enabled", "emulated"] + list(extra))


@pytest.fixture(scope="module")
def node():
    s = start_cluster_node()
    yield s
    s.stop()


@pytest.fixture
def c(node):
    cl = node.client(decode_responses=True)
    cl.flushall()
    yield cl
    cl.close()


def test_disabled_by_default(server):
    c = server.client(decode_responses=True)
    for args in (("CLUSTER", "INFO"), ("CLUSTER", "SLOTS"), ("CLUSTER", "KEYSLOT", "x"),
                 ("READONLY",), ("READWRITE",), ("ASKING",)):
        with pytest.raises(redis.ResponseError, match="^This instance has cluster support "
                                                      "disabled$"):
            c.execute_command(*args)
    assert c.info("cluster")["cluster_enabled"] == 0
    assert c.info("server")["redis_mode"] == "standalone"


def test_keyslot_hashes_as_redis_cluster(c):
    want = {"foo": 12182, "bar": 5061, "123456789": 12739, "{user1000}.following": 3443,
            "{user1000}.followers": 3443, "foo{}{bar}": 8363, "foo{{bar}}zap": 4015,
            "foo{bar}{zap}": 5061, "": 0}
    for key, slot in want.items():
        assert c.execute_command("CLUSTER", "KEYSLOT", key) == slot, key
    with pytest.raises(redis.ResponseError, match="wrong number of arguments|unknown subcommand"):
        c.execute_command("CLUSTER", "KEYSLOT")


def test_one_node_owns_every_slot(node, c):
    myid = c.execute_command("CLUSTER", "MYID")
    assert re.fullmatch("[0-9a-f]{40}", myid)
    ip = "127.0.0.1"
    slots = c.execute_command("CLUSTER", "SLOTS")
    assert slots == [[0, 16383, [ip, node.port, myid, []]]]

    nodes = c.execute_command("CLUSTER", "NODES")
    assert nodes.count("\n") == 1
    f = nodes.split()
    assert f[0] == myid and f[1] == "%s:%d@%d" % (ip, node.port, node.port + 10000)
    assert f[2] == "myself,master" and f[3] == "-" and f[7] == "connected"
    assert f[8] == "0-16383"

    shards = c.execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 1
    shard = dict(zip(shards[0][::2], shards[0][1::2]))
    assert shard["slots"] == [0, 16383]
    (n,) = shard["nodes"]
    n = dict(zip(n[::2], n[1::2]))
    assert n["id"] == myid and n["port"] == node.port and n["ip"] == ip
    assert n["endpoint"] == ip and n["role"] == "master" and n["health"] == "online"
    assert isinstance(n["replication-offset"], int)

    info = dict(line.split(":", 1) for line in
                c.execute_command("CLUSTER", "INFO").strip().splitlines())
    assert info["cluster_state"] == "ok"
    assert info["cluster_slots_assigned"] == info["cluster_slots_ok"] == "16384"
    assert info["cluster_known_nodes"] == info["cluster_size"] == "1"
    assert c.info("cluster")["cluster_enabled"] == 1
    assert c.info("server")["redis_mode"] == "cluster"


def test_resp3_shapes(node):
    """Over RESP3, HELLO says mode cluster and the node's metadata in CLUSTER SLOTS is a
    map (%0 when there is no hostname)."""
    with socket.create_connection(("127.0.0.1", node.port), timeout=5) as s:
        s.sendall(b"HELLO 3\r\nCLUSTER MYID\r\nCLUSTER SLOTS\r\n")
        data = b""
        deadline = time.monotonic() + 5
        while not data.endswith(b"%0\r\n") and time.monotonic() < deadline:
            data += s.recv(65536)
    assert b"$4\r\nmode\r\n$7\r\ncluster\r\n" in data
    myid = re.search(rb"\r\n\$40\r\n([0-9a-f]{40})\r\n", data).group(1)
    assert data.endswith(b"*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$%d\r\n%s\r\n:%d\r\n"
                         b"$40\r\n%s\r\n%%0\r\n"
                         % (9, b"127.0.0.1", node.port, myid))


def test_select_other_than_0_is_refused(c):
    assert c.execute_command("SELECT", 0) in (True, "OK")
    with pytest.raises(redis.ResponseError, match="^SELECT is not allowed in cluster mode$"):
        c.execute_command("SELECT", 1)


def test_readonly_readwrite_asking(c):
    for cmd in ("READONLY", "READWRITE", "ASKING"):
        assert c.execute_command(cmd) in (True, "OK")
    c.set("k", "v")
    assert c.get("k") == "v"


def test_a_cluster_client_reads_and_writes_every_slot(node, c):
    rc = RedisCluster(host="127.0.0.1", port=node.port, decode_responses=True)
    try:
        (n,) = rc.get_nodes()
        assert n.port == node.port
        keys = ["key:%d" % i for i in range(2000)]
        for k in keys:
            rc.set(k, k.upper())
        slots = {rc.keyslot(k) for k in keys}
        assert len(slots) > 1500
        assert rc.mget_nonatomic(keys) == [k.upper() for k in keys]
        p = rc.pipeline()
        for i in range(50):
            p.incr("counter:%d" % i)
        assert p.execute() == [1] * 50
        # Keys sharing a hash tag go in one call.
        rc.mset({"{user}.a": "1", "{user}.b": "2"})
        assert rc.mget("{user}.a", "{user}.b") == ["1", "2"]
        assert rc.dbsize() == 2000 + 50 + 2
    finally:
        rc.close()


def test_countkeysinslot_and_getkeysinslot(c):
    slot = c.execute_command("CLUSTER", "KEYSLOT", "{user7}")
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    assert c.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10) == []
    tagged = ["{user7}:%d" % i for i in range(25)]
    for k in tagged:
        c.set(k, "v")
    c.hset("{user7}:h", "f", "v")
    c.set("other", "v")
    tagged.append("{user7}:h")
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 26
    assert sorted(c.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100)) == sorted(tagged)
    some = c.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 7)
    assert len(some) == 7 and set(some) <= set(tagged)
    assert c.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 0) == []
    # Overwrites leave the count alone; deletes and expiry lower it.
    c.set("{user7}:0", "again")
    c.delete("{user7}:1", "{user7}:2")
    c.pexpire("{user7}:3", 1)
    time.sleep(0.05)
    assert c.get("{user7}:3") is None
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 23
    if not IS_REDIS:
        # A rename moves the key to the slot of its new name (Redis Cluster refuses a
        # rename across slots; a strata node holds every slot).
        c.rename("{user7}:4", "elsewhere")
        assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 22
        assert c.execute_command("CLUSTER", "GETKEYSINSLOT",
                                 c.execute_command("CLUSTER", "KEYSLOT", "elsewhere"), 10) \
            == ["elsewhere"]
    c.flushall()
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0


def test_countkeysinslot_and_getkeysinslot_errors(c):
    for args, msg in ((("COUNTKEYSINSLOT", 16384), "^Invalid slot$"),
                      (("COUNTKEYSINSLOT", -1), "^Invalid slot$"),
                      (("COUNTKEYSINSLOT", "x"), "^value is not an integer or out of range$"),
                      (("GETKEYSINSLOT", 16384, 1), "^Invalid slot or number of keys$"),
                      (("GETKEYSINSLOT", 1, -1), "^Invalid slot or number of keys$"),
                      (("GETKEYSINSLOT", 1, "x"), "^value is not an integer or out of range$"),
                      (("COUNTKEYSINSLOT",),
                       r"^wrong number of arguments for 'cluster\|countkeysinslot' command$"),
                      (("GETKEYSINSLOT", 1),
                       r"^wrong number of arguments for 'cluster\|getkeysinslot' command$"),
                      (("INFO", 1), r"^wrong number of arguments for 'cluster\|info' command$")):
        with pytest.raises(redis.ResponseError, match=msg):
            c.execute_command("CLUSTER", *args)


def test_databases_other_than_0_cannot_be_reached(c):
    c.set("{k}1", "v")
    with pytest.raises(redis.ResponseError, match="^MOVE is not allowed in cluster mode$"):
        c.execute_command("MOVE", "{k}1", 1)
    with pytest.raises(redis.ResponseError, match="^SWAPDB is not allowed in cluster mode$"):
        c.execute_command("SWAPDB", 0, 1)
    with pytest.raises(redis.ResponseError,
                       match="^Copying to another database is not allowed in cluster mode$"):
        c.execute_command("COPY", "{k}1", "{k}2", "DB", 1)
    assert c.execute_command("COPY", "{k}1", "{k}2", "DB", 0) == 1
    assert c.get("{k}2") == "v"


@pytest.mark.skipif(IS_REDIS, reason="strata's threads and snapshots")
def test_slot_counts_across_threads_and_a_restart(tmp_path):
    """Every slot's keys are counted over all the worker threads, and keys loaded from a
    snapshot at start-up are indexed like keys written."""
    args = ["--cluster-enabled", "emulated"]
    s = Server(extra_args=args, threads=3, data_dir=str(tmp_path))
    try:
        c = s.client(decode_responses=True)
        keys = ["key:%d" % i for i in range(3000)]
        p = c.pipeline(transaction=False)
        for k in keys:
            p.set(k, "v")
        p.execute()
        by_slot = {}
        for k in keys:
            by_slot.setdefault(c.execute_command("CLUSTER", "KEYSLOT", k), []).append(k)

        def check(cl):
            total = 0
            for slot, ks in list(by_slot.items())[:300]:
                assert cl.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == len(ks)
                assert sorted(cl.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)) == \
                    sorted(ks)
            for slot in by_slot:
                total += cl.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot)
            assert total == len(keys)

        check(c)
        c.save()
        c.close()
        s.stop()
        s = Server(extra_args=args, threads=2, data_dir=str(tmp_path))
        c = s.client(decode_responses=True)
        assert c.dbsize() == len(keys)
        check(c)
        c.close()
    finally:
        s.stop()


@pytest.mark.skipif(IS_REDIS, reason="strata's emulated mode only")
def test_layout_subcommands_are_refused_with_the_reason(c):
    for args in (("ADDSLOTS", 1), ("MEET", "127.0.0.1", 1), ("SETSLOT", 1, "STABLE"),
                 ("RESET",)):
        with pytest.raises(redis.ResponseError,
                           match="not available with cluster-enabled emulated"):
            c.execute_command("CLUSTER", *args)
    with pytest.raises(redis.ResponseError, match="^unknown subcommand 'NOSUCH'"):
        c.execute_command("CLUSTER", "NOSUCH")
    assert len(c.execute_command("CLUSTER", "MYSHARDID")) == 40
    assert "KEYSLOT <key>" in c.execute_command("CLUSTER", "HELP")


@pytest.mark.skipif(IS_REDIS, reason="strata's emulated mode only")
def test_announced_address_port_and_hostname():
    s = start_cluster_node(["--cluster-announce-ip", "10.1.2.3", "--cluster-announce-port",
                            "7000", "--cluster-announce-hostname", "cache-1.example",
                            "--cluster-port", "17000"])
    try:
        c = s.client(decode_responses=True)
        myid = c.execute_command("CLUSTER", "MYID")
        assert c.execute_command("CLUSTER", "SLOTS") == [
            [0, 16383, ["10.1.2.3", 7000, myid, ["hostname", "cache-1.example"]]]]
        assert c.execute_command("CLUSTER", "NODES").split()[1] == \
            "10.1.2.3:7000@17000,cache-1.example"
        n = c.execute_command("CLUSTER", "SHARDS")[0][3][0]
        n = dict(zip(n[::2], n[1::2]))
        assert n["hostname"] == "cache-1.example" and n["ip"] == "10.1.2.3"
        c.close()
    finally:
        s.stop()


def test_node_cluster_clients(node, c):
    """ioredis's Cluster and node-redis's createCluster against the one-node cluster."""
    run_node_check("cluster_check.js", node.port, b"node cluster clients OK")
