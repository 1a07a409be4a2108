"""Redis Cluster over the real cluster bus: nodes that meet, gossip, agree on the slots,
find a dead master and take it back (cluster_gossip.h, cluster_bus.h).

Clusters are made the way users make them, with `redis-cli --cluster create`, and
checked with `redis-cli --cluster check` and a cluster client (redis-py's RedisCluster).
A mixed cluster has a real redis-server 7 node beside strata nodes.

Every node runs on loopback, on free ports, with one or two threads; its bus port is
given (a free port's port + 10000 may be out of range)."""
import os
import shutil
import subprocess
import tempfile
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import Server, TARGET, free_port
from helpers import start_redis_server, wait_for

pytestmark = [
    pytest.mark.skipif(TARGET == "redis", reason="strata nodes (redis nodes are started beside)"),
    pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed"),
]

SLOW = 3 if os.environ.get("STRATA_SANITIZED") == "1" else 1
NODE_TIMEOUT_MS = 1500


class Cluster:
    """Nodes of one test: strata nodes, and redis-server nodes where asked for."""

    def __init__(self):
        self.nodes = []
        self.dirs = []

    def strata(self, data_dir=None, port=None, bus_port=None):
        d = data_dir or self._dir()
        bus_port = bus_port or free_port()
        s = Server(extra_args=["--cluster-enabled", "yes", "--cluster-port", str(bus_port),
                               "--cluster-node-timeout", str(NODE_TIMEOUT_MS * SLOW)],
                   data_dir=d, threads=2, port=port)
        s.bus_port, s.kind = bus_port, "strata"
        self.nodes.append(s)
        return s

    def redis(self):
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        bus_port = free_port()
        s = start_redis_server(extra_args=["--cluster-enabled", "yes",
                                           "--cluster-port", str(bus_port),
                                           "--cluster-node-timeout",
                                           str(NODE_TIMEOUT_MS * SLOW)],
                               data_dir=self._dir())
        s.bus_port, s.kind = bus_port, "redis"
        self.nodes.append(s)
        return s

    def _dir(self):
        d = tempfile.mkdtemp(prefix="strata-cluster-bus-")
        self.dirs.append(d)
        return d

    def stop(self):
        for s in self.nodes:
            s.stop()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def cluster():
    c = Cluster()
    yield c
    c.stop()


def cli(*args, timeout=60):
    p = subprocess.run(["redis-cli"] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, input=b"yes\n", timeout=timeout * SLOW)
    return p.returncode, p.stdout.decode(errors="replace")


def create(nodes):
    rc, out = cli("--cluster", "create", *["127.0.0.1:%d" % n.port for n in nodes],
                  "--cluster-yes")
    assert rc == 0, out
    assert "[OK] All 16384 slots covered." in out, out
    return out


def check(node):
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % node.port)
    return rc == 0 and "[OK] All nodes agree about slots configuration." in out and \
        "[OK] All 16384 slots covered." in out, out


def info(node):
    text = node.client(decode_responses=True).execute_command("CLUSTER", "INFO")
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def nodes_of(node):
    """CLUSTER NODES of a node: id -> (address, flags, link state, slots)."""
    out = {}
    text = node.client(decode_responses=True).execute_command("CLUSTER", "NODES")
    for line in text.splitlines():
        f = line.split()
        out[f[0]] = (f[1], set(f[2].split(",")), f[7], f[8:])
    return out


def myid(node):
    return node.client(decode_responses=True).execute_command("CLUSTER", "MYID")


def all_ok(nodes):
    try:
        return all(info(n)["cluster_state"] == "ok" and info(n)["cluster_known_nodes"] ==
                   str(len(nodes)) for n in nodes)
    except redis.exceptions.BusyLoadingError:
        return False  # a replica loading its first sync


def epochs_settled(nodes):
    """Every node sees the same, distinct config epoch for each master. Masters met with
    CLUSTER MEET all start at epoch 0, and the collisions are settled over a few pings
    after the cluster is already ok: until then a master can still bump its epoch past
    one taken by hand (SETSLOT NODE after a migration), and take the slot back."""
    try:
        views = []
        for n in nodes:
            text = n.client(decode_responses=True).execute_command("CLUSTER", "NODES")
            view = {}
            for line in text.splitlines():
                f = line.split()
                if "master" in f[2].split(","):
                    view[f[0]] = f[6]
            views.append(view)
    except redis.exceptions.BusyLoadingError:
        return False
    first = views[0]
    return len(set(first.values())) == len(first) and all(v == first for v in views)


def write_and_read(entry, count):
    rc = RedisCluster(host="127.0.0.1", port=entry.port, decode_responses=True)
    try:
        for i in range(count):
            assert rc.set("key:%d" % i, "value:%d" % i)
        for i in range(count):
            assert rc.get("key:%d" % i) == "value:%d" % i
    finally:
        rc.close()


def test_redis_cli_creates_a_strata_cluster_that_a_cluster_client_uses(cluster):
    nodes = [cluster.strata() for _ in range(3)]
    create(nodes)
    wait_for(lambda: all_ok(nodes), 20 * SLOW, "every node to see the cluster ok")
    ok, out = check(nodes[1])
    assert ok, out
    # Each node lists the others as connected masters, with the slots create gave them.
    ids = [myid(n) for n in nodes]
    for n in nodes:
        seen = nodes_of(n)
        assert set(seen) == set(ids)
        for i, nid in enumerate(ids):
            assert "master" in seen[nid][1] and seen[nid][2] == "connected", seen
        assert seen[ids[0]][3] == ["0-5460"]
        assert seen[ids[2]][3] == ["10923-16383"]
        i = info(n)
        assert i["cluster_size"] == "3" and int(i["cluster_stats_messages_pong_received"]) > 0
    write_and_read(nodes[0], 600)
    sizes = [n.client().dbsize() for n in nodes]
    assert sum(sizes) == 600 and min(sizes) > 100, sizes
    # CLUSTER LINKS lists a link to each other node.
    links = nodes[0].client(decode_responses=True).execute_command("CLUSTER", "LINKS")
    to = sorted(dict(zip(l[::2], l[1::2]))["node"] for l in links
                if dict(zip(l[::2], l[1::2]))["direction"] == "to")
    assert to == sorted(ids[1:]), links
    # INFO clients counts the bus's links, as Redis's cluster_connections does.
    assert nodes[0].client().info("clients")["cluster_connections"] == len(links)


def test_a_killed_master_is_failed_by_the_others_and_cleared_when_it_returns(cluster):
    nodes = [cluster.strata() for _ in range(3)]
    create(nodes)
    wait_for(lambda: all_ok(nodes), 20 * SLOW, "every node to see the cluster ok")
    victim = nodes[2]
    vid = myid(victim)
    victim.proc.kill()
    victim.proc.wait(10)
    started = time.monotonic()
    for n in nodes[:2]:
        wait_for(lambda: "fail" in nodes_of(n)[vid][1], (NODE_TIMEOUT_MS / 1000 + 10) * SLOW,
                 "the dead master to be marked fail")
        wait_for(lambda: info(n)["cluster_state"] == "fail", 5 * SLOW, "cluster_state:fail")
    took = time.monotonic() - started
    assert took < (NODE_TIMEOUT_MS / 1000) * SLOW + 10, took
    with pytest.raises(redis.exceptions.ResponseError, match="^CLUSTERDOWN"):
        nodes[0].client().get("anything")
    # Back on its ports, from its nodes.conf: the others clear FAIL (a master with slots
    # after twice the node timeout) and the cluster is ok again, with no new MEET.
    back = cluster.strata(data_dir=victim.data_dir, port=victim.port, bus_port=victim.bus_port)
    assert myid(back) == vid
    live = [nodes[0], nodes[1], back]
    wait_for(lambda: all_ok(live), (4 * NODE_TIMEOUT_MS / 1000 + 15) * SLOW,
             "the cluster to be ok again")
    for n in nodes[:2]:
        assert not nodes_of(n)[vid][1] & {"fail", "fail?"}
    write_and_read(nodes[0], 100)


def test_a_mixed_cluster_of_strata_and_redis_server_nodes(cluster):
    """redis-cli builds one cluster of two strata nodes and a redis-server 7 node; each
    side lists the others with their slots, clients are sent across, and each side finds
    the other's dead node failing."""
    s1, r, s2 = cluster.strata(), cluster.redis(), cluster.strata()
    nodes = [s1, r, s2]
    create(nodes)
    wait_for(lambda: all_ok(nodes), 20 * SLOW, "every node to see the cluster ok")
    for n in nodes:
        ok, out = check(n)
        assert ok, out
    write_and_read(r, 300)
    write_and_read(s1, 300)
    assert r.client().dbsize() > 50 and s1.client().dbsize() > 50
    # The redis node dies: the strata nodes (a majority) mark it fail.
    rid = myid(r)
    r.proc.kill()
    r.proc.wait(10)
    for n in (s1, s2):
        wait_for(lambda: "fail" in nodes_of(n)[rid][1], (NODE_TIMEOUT_MS / 1000 + 10) * SLOW,
                 "strata to mark the redis node fail")


def test_a_strata_node_joins_a_redis_cluster_with_cluster_meet(cluster):
    r1, r2 = cluster.redis(), cluster.redis()
    create_two = [r1, r2]
    c1 = r1.client(decode_responses=True)
    c1.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
    r2.client().execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
    c1.execute_command("CLUSTER", "MEET", "127.0.0.1", r2.port, r2.bus_port)
    wait_for(lambda: all_ok(create_two), 20 * SLOW, "the redis cluster to be ok")
    s = cluster.strata()
    sc = s.client(decode_responses=True)
    assert sc.execute_command("CLUSTER", "MEET", "127.0.0.1", r1.port, r1.bus_port) == "OK"
    nodes = [r1, r2, s]
    wait_for(lambda: all_ok(nodes), 20 * SLOW, "the three nodes to agree")
    # strata learned r2 from r1's gossip, and both redis nodes' slots.
    seen = nodes_of(s)
    assert seen[myid(r2)][3] == ["8192-16383"] and seen[myid(r1)][3] == ["0-8191"]
    with pytest.raises(redis.exceptions.ResponseError, match="^MOVED "):
        sc.get("foo")
    # nodes.conf keeps what strata learned.
    s.stop()
    back = cluster.strata(data_dir=s.data_dir, port=s.port, bus_port=s.bus_port)
    assert len(nodes_of(back)) == 3
    wait_for(lambda: all_ok([r1, r2, back]), 20 * SLOW, "the cluster ok after the restart")


def test_cluster_meet_refuses_bad_addresses(cluster):
    s = cluster.strata()
    c = s.client()
    for args, msg in [
        (("not-an-ip", 7000), "Invalid node address specified: not-an-ip:7000"),
        (("127.0.0.1", 0), "Invalid node address specified: 127.0.0.1:0"),
        (("127.0.0.1", 70000), "Invalid node address specified: 127.0.0.1:70000"),
        (("127.0.0.1", "x"), "Invalid TCP base port specified: x"),
        (("127.0.0.1", 7000, "y"), "Invalid TCP bus port specified: y"),
    ]:
        with pytest.raises(redis.exceptions.ResponseError, match="^" + msg + "$"):
            c.execute_command("CLUSTER", "MEET", *args)
    with pytest.raises(redis.exceptions.ResponseError, match="wrong number of arguments"):
        c.execute_command("CLUSTER", "MEET", "127.0.0.1")
    # A node that never answers: the handshake shows in CLUSTER NODES, then goes.
    dead = free_port()
    assert c.execute_command("CLUSTER", "MEET", "127.0.0.1", dead, dead) == b"OK"
    assert any(b"handshake" in line for line in c.execute_command("CLUSTER", "NODES").splitlines())
    wait_for(lambda: len(nodes_of(s)) == 1, (NODE_TIMEOUT_MS / 1000 + 5) * SLOW,
             "the handshake to time out")
    assert s.proc.poll() is None


def test_garbage_on_the_bus_is_dropped_and_the_cluster_goes_on(cluster):
    import socket
    nodes = [cluster.strata() for _ in range(3)]
    create(nodes)
    wait_for(lambda: all_ok(nodes), 20 * SLOW, "every node to see the cluster ok")
    victim = nodes[1]
    payloads = [b"GET / HTTP/1.0\r\n\r\n", b"RCmb" + b"\xff" * 100, b"RCmb\x00\x00\x08\xd0" +
                b"\x00\x01" + b"\x00" * 500, os.urandom(5000)]
    for p in payloads:
        with socket.create_connection(("127.0.0.1", victim.bus_port), timeout=5) as sock:
            sock.sendall(p)
            time.sleep(0.05)
    assert victim.proc.poll() is None
    wait_for(lambda: all_ok(nodes), 10 * SLOW, "the cluster to stay ok")
    ok, out = check(nodes[0])
    assert ok, out


def _next_message(pubsub, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if m is not None:
            return m
    return None


def test_publish_reaches_subscribers_on_every_node_redis_included(cluster):
    """PUBLISH on any node reaches the subscribers of every node, over the bus (Redis
    Cluster's PUBLISH message); the reply counts this node's own subscribers only."""
    s1, r, s2 = cluster.strata(), cluster.redis(), cluster.strata()
    nodes = [s1, r, s2]
    create(nodes)
    wait_for(lambda: all_ok(nodes), 20 * SLOW, "every node to see the cluster ok")
    subs = []
    for n in nodes:
        p = n.client(decode_responses=True).pubsub()
        p.subscribe("news")
        p.psubscribe("ne*")
        # Both confirmations read: the node has registered both before anything is
        # published (subscribe() only sends; under load a PUBLISH could come first).
        confirmed = set()
        deadline = time.time() + 5 * SLOW
        while confirmed != {"subscribe", "psubscribe"} and time.time() < deadline:
            m = p.get_message(timeout=0.1)
            if m is not None:
                confirmed.add(m["type"])
        assert confirmed == {"subscribe", "psubscribe"}, confirmed
        subs.append(p)
    for i, publisher in enumerate(nodes):
        got = publisher.client().publish("news", "from %d" % i)
        assert got == 2  # the channel and the pattern, on the publisher's node only
        for p in subs:
            seen = set()
            while len(seen) < 2:
                m = _next_message(p, 5 * SLOW)
                assert m is not None, "no message from node %d" % i
                assert m["data"] == "from %d" % i, m
                seen.add(m["type"])
            assert seen == {"message", "pmessage"}
    for p in subs:
        p.close()
    # A shard channel's message stays in its shard: with no replicas, on its node.
    import socket
    chan = "{shard}x"
    slot = s1.client().execute_command("CLUSTER", "KEYSLOT", chan)
    home = [n for n in nodes if any(a <= slot <= b for a, b in _ranges(n))][0]
    with socket.create_connection(("127.0.0.1", home.port), timeout=5 * SLOW) as sub:
        sub.sendall(b"SSUBSCRIBE %s\r\n" % chan.encode())
        assert b"ssubscribe" in sub.recv(4096)
        assert home.client().execute_command("SPUBLISH", chan, "hello") == 1
        got = b""
        while b"hello" not in got:
            got += sub.recv(4096)
        assert b"smessage" in got


def _ranges(node):
    """The slot ranges a node serves, from its own CLUSTER NODES line."""
    me = myid(node)
    out = []
    for r in nodes_of(node)[me][3]:
        if r.startswith("["):
            continue
        a, _, b = r.partition("-")
        out.append((int(a), int(b or a)))
    return out


def loaded(pred):
    """pred(), or False while the node loads (a replica's sync answers -LOADING)."""
    try:
        return pred()
    except redis.exceptions.BusyLoadingError:
        return False


def role_of(node):
    return nodes_of(node)[myid(node)][1]


def test_replicas_take_over_a_killed_master_which_rejoins_as_a_replica(cluster):
    """`redis-cli --cluster create --cluster-replicas 1` of six strata nodes; a master is
    killed; its replica wins the election within the node timeout and a bounded time,
    serves every acknowledged key, and the old master comes back as its replica."""
    nodes = [cluster.strata() for _ in range(6)]
    rc, out = cli("--cluster", "create", *["127.0.0.1:%d" % n.port for n in nodes],
                  "--cluster-replicas", 1, "--cluster-yes")
    assert rc == 0 and "[OK] All 16384 slots covered." in out, out
    wait_for(lambda: all_ok(nodes), 30 * SLOW, "every node to see the cluster ok")
    ok, out = check(nodes[0])
    assert ok, out
    # Replicas sync from their masters.
    for n in nodes:
        wait_for(lambda: n.client().info("replication").get("master_link_status", "up") == "up"
                 and n.client().info("persistence").get("loading") == 0, 20 * SLOW,
                 "the replicas' links")
    masters = [n for n in nodes if "master" in role_of(n)]
    replicas = [n for n in nodes if "slave" in role_of(n)]
    assert len(masters) == 3 and len(replicas) == 3
    write_and_read(masters[0], 300)
    for m in masters:
        assert m.client().execute_command("WAIT", 1, 10000) == 1
    victim = masters[0]
    vid = myid(victim)
    heir = [r for r in replicas if nodes_of(r)[myid(r)][1] and
            r.client(decode_responses=True).execute_command("CLUSTER", "NODES")
            .split(myid(r))[1].split()[2] == vid][0]
    # A replica serves reads of its master's slots to a READONLY client only.
    key = [k for k in ("key:%d" % i for i in range(300))
           if any(a <= heir.client().execute_command("CLUSTER", "KEYSLOT", k) <= b
                  for a, b in _ranges(victim))][0]
    conn = heir.client(decode_responses=True).connection_pool.get_connection("GET")
    conn.send_command("GET", key)
    with pytest.raises(redis.exceptions.ResponseError, match="^MOVED "):
        conn.read_response()
    conn.send_command("READONLY")
    assert conn.read_response() == "OK"
    conn.send_command("GET", key)
    assert conn.read_response() == "value:" + key.split(":")[1]
    conn.disconnect()
    # A PUBLISH on the master reaches its replica's subscribers once: over the bus, not
    # also through the replication stream (Redis does not replicate it in a cluster).
    sub = heir.client(decode_responses=True).pubsub()
    sub.subscribe("once")
    wait_for(lambda: sub.get_message(timeout=0.1) is not None, 5, "the subscription")
    victim.client().publish("once", "hello")
    got = []
    deadline = time.monotonic() + 1.5 * SLOW
    while time.monotonic() < deadline:
        m = sub.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if m is not None:
            got.append(m["data"])
    assert got == ["hello"], got
    sub.close()

    victim.proc.kill()
    victim.proc.wait(10)
    started = time.monotonic()
    wait_for(lambda: "master" in role_of(heir), (2 * NODE_TIMEOUT_MS / 1000 + 15) * SLOW,
             "the replica to take over")
    took = time.monotonic() - started
    live = [n for n in nodes if n is not victim]
    wait_for(lambda: all(info(n)["cluster_state"] == "ok" for n in live), 10 * SLOW,
             "the cluster to be ok after the failover")
    assert took < (2 * NODE_TIMEOUT_MS / 1000 + 15) * SLOW, took
    assert heir.client().info("replication")["role"] == "master"
    # Every acknowledged key is there, through a cluster client that follows the move.
    rcl = RedisCluster(host="127.0.0.1", port=nodes[1].port, decode_responses=True)
    try:
        for i in range(300):
            assert rcl.get("key:%d" % i) == "value:%d" % i, i
    finally:
        rcl.close()
    # The old master returns from its nodes.conf and follows the new one.
    back = cluster.strata(data_dir=victim.data_dir, port=victim.port, bus_port=victim.bus_port)
    wait_for(lambda: loaded(lambda: "slave" in role_of(back)), 20 * SLOW,
             "the old master to rejoin as replica")
    wait_for(lambda: loaded(lambda: back.client().info("replication")
                            .get("master_link_status") == "up"),
             20 * SLOW, "the old master to sync from the new one")
    assert nodes_of(back)[vid][1] >= {"myself", "slave"}
    assert back.client().info("replication")["master_port"] == heir.port
    ok, out = check(heir)
    assert ok, out


@pytest.mark.parametrize("kind", [
    "strata",
    # With redis-server replicas: interop, run by the release pass; the strata variant
    # covers the same strata code (the masters' side) under the sanitizers.
    pytest.param("redis", marks=pytest.mark.skipif(
        os.environ.get("STRATA_SANITIZED") == "1",
        reason="interop with redis-server replicas: run by the release pass")),
])
def test_a_replica_migrates_to_a_master_left_without_one(cluster, kind):
    """Replica migration (cluster-migration-barrier 1): master A has two replicas, B has
    one, C none. B's replica is killed; once it is FAIL and B has been orphaned for 5 s,
    the replica of A with the smaller id moves to B and syncs from it. C, which never had
    a replica, gets none. The replicas of A are strata nodes, or redis-server nodes that
    decide by what the strata masters tell them."""
    masters = [cluster.strata() for _ in range(3)]
    create(masters)
    a, b, c = masters
    spares = [cluster.strata() if kind == "strata" else cluster.redis() for _ in range(2)]
    lone = cluster.strata()
    nodes = masters + spares + [lone]
    for n in spares + [lone]:
        a.client().execute_command("CLUSTER", "MEET", "127.0.0.1", n.port, n.bus_port)
    wait_for(lambda: all_ok(nodes), 30 * SLOW, "every node to see the cluster ok")
    for replica, master in [(spares[0], a), (spares[1], a), (lone, b)]:
        assert replica.client().execute_command("CLUSTER", "REPLICATE", myid(master)) in \
            (b"OK", True)
    for replica in spares + [lone]:
        wait_for(lambda: loaded(lambda: replica.client().info("replication")
                                .get("master_link_status") == "up"), 20 * SLOW,
                 "the replicas' links")
    a_id, b_id, c_id = myid(a), myid(b), myid(c)
    wait_for(lambda: all(sum(1 for f in nodes_of(n).values() if "slave" in f[1]) == 3
                         for n in masters), 10 * SLOW, "every master to know the replicas")
    key = next(k for k in ("k%d" % i for i in range(1000))
               if any(lo <= b.client().execute_command("CLUSTER", "KEYSLOT", k) <= hi
                      for lo, hi in _ranges(b)))
    b.client().set(key, "on-b")

    def master_seen(viewer, node):
        """The master id of `node` in `viewer`'s CLUSTER NODES ("-" for a master)."""
        nid = myid(node)
        text = viewer.client(decode_responses=True).execute_command("CLUSTER", "NODES")
        return [ln.split()[3] for ln in text.splitlines() if ln.startswith(nid)][0]

    # Nobody moves while every master that had a replica still has one.
    time.sleep(1.5 * SLOW)
    assert [master_seen(r, r) for r in spares] == [a_id, a_id]
    lone.proc.kill()
    lone.proc.wait(10)
    mover = min(spares, key=myid)
    stayer = max(spares, key=myid)
    wait_for(lambda: loaded(lambda: master_seen(mover, mover) == b_id),
             (2 * NODE_TIMEOUT_MS / 1000 + 20) * SLOW, "a replica of A to move to B")
    wait_for(lambda: loaded(lambda: mover.client().info("replication")
                            .get("master_link_status") == "up"
                            and int(mover.client().info("replication")["master_port"]) == b.port),
             20 * SLOW, "the moved replica to sync from B")
    conn = mover.client(decode_responses=True).connection_pool.get_connection("GET")
    try:
        conn.send_command("READONLY")
        assert conn.read_response() == "OK"
        conn.send_command("GET", key)
        assert conn.read_response() == "on-b"
    finally:
        conn.disconnect()
    assert master_seen(stayer, stayer) == a_id
    # Every master sees the move; C, which never had a replica, still has none.
    wait_for(lambda: all(master_seen(m, mover) == b_id and master_seen(m, stayer) == a_id
                         for m in masters), 10 * SLOW, "the masters to see the move")
    assert c.client().execute_command("CLUSTER", "REPLICAS", c_id) == []


def test_cluster_replicate_errors(cluster):
    s = cluster.strata()
    c = s.client()
    me = myid(s)
    for args, msg in [((me,), "Can't replicate myself"),
                      (("f" * 40,), "Unknown node " + "f" * 40)]:
        with pytest.raises(redis.exceptions.ResponseError, match="^" + msg + "$"):
            c.execute_command("CLUSTER", "REPLICATE", *args)
    other = cluster.strata()
    c.execute_command("CLUSTER", "ADDSLOTS", 1)
    c.execute_command("CLUSTER", "MEET", "127.0.0.1", other.port, other.bus_port)
    wait_for(lambda: myid(other) in nodes_of(s) and me in nodes_of(other), 10 * SLOW,
             "the two nodes to know each other")
    with pytest.raises(redis.exceptions.ResponseError,
                       match="^To set a master the node must be empty and without assigned "
                             "slots.$"):
        c.execute_command("CLUSTER", "REPLICATE", myid(other))
    oc = other.client()
    assert oc.execute_command("CLUSTER", "REPLICATE", me) == b"OK"
    wait_for(lambda: oc.info("replication").get("master_link_status") == "up", 20 * SLOW,
             "the replica's link")
    oid = myid(other)
    wait_for(lambda: "slave" in nodes_of(s)[oid][1], 10 * SLOW, "the replica to be known")
    with pytest.raises(redis.exceptions.ResponseError,
                       match="^I can only replicate a master, not a replica.$"):
        c.execute_command("CLUSTER", "REPLICATE", oid)


@pytest.mark.parametrize("kind", ["strata", "redis"])
def test_cluster_reset_of_a_replica_leaves_an_empty_master(cluster, kind):
    """CLUSTER RESET on a replica stops replication and drops the copy of its master's
    data, as Redis does; the same test runs on a redis-server replica."""
    master = cluster.strata()
    mc = master.client()
    mc.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    for i in range(200):
        mc.set("{k}:%d" % i, "v%d" % i)
    replica = cluster.strata() if kind == "strata" else cluster.redis()
    rc = replica.client()
    mc.execute_command("CLUSTER", "MEET", "127.0.0.1", replica.port, replica.bus_port)
    wait_for(lambda: myid(master) in nodes_of(replica), 10 * SLOW, "the nodes to meet")
    assert rc.execute_command("CLUSTER", "REPLICATE", myid(master)) in (b"OK", True)
    wait_for(lambda: rc.info("replication").get("master_link_status") == "up", 20 * SLOW,
             "the replica's link")
    assert mc.execute_command("WAIT", 1, 10000) == 1
    wait_for(lambda: rc.dbsize() == 200, 10 * SLOW, "the replica's copy")
    assert rc.execute_command("CLUSTER", "RESET") in (b"OK", True)
    assert rc.info("replication")["role"] == "master"
    assert rc.dbsize() == 0
    assert list(nodes_of(replica)) == [myid(replica)]
    # The master keeps its data; the reset node is an empty master it may forget.
    assert mc.dbsize() == 200


@pytest.mark.parametrize("kind", [
    "strata",
    # redis-server nodes alone exercise no strata code: the release pass runs them.
    pytest.param("redis", marks=pytest.mark.skipif(
        os.environ.get("STRATA_SANITIZED") == "1",
        reason="redis-server nodes alone: run by the release pass")),
])
def test_a_plain_failover_under_a_users_pause(cluster, kind):
    """A master under a user's CLIENT PAUSE WRITE hands over to its replica with a plain
    CLUSTER FAILOVER. A write to the old master is then redirected at once (Redis
    redirects before it looks at a pause). The failover pauses and unpauses writes for
    its own purpose: on strata the user's pause still holds afterwards (a PUBLISH waits
    for it), as in Redis 7.2, which keeps pauses per purpose; redis-server 7.0 ends the
    user's pause with the failover's, so that part is strata's only here."""
    make = cluster.strata if kind == "strata" else cluster.redis
    master, replica = make(), make()
    mc, rc = master.client(), replica.client()
    mc.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    mc.execute_command("CLUSTER", "MEET", "127.0.0.1", replica.port, replica.bus_port)
    wait_for(lambda: myid(master) in nodes_of(replica), 10 * SLOW, "the nodes to meet")
    assert rc.execute_command("CLUSTER", "REPLICATE", myid(master)) in (b"OK", True)
    wait_for(lambda: loaded(lambda: rc.info("replication").get("master_link_status") == "up"),
             20 * SLOW, "the replica's link")
    wait_for(lambda: "slave" in nodes_of(master)[myid(replica)][1], 10 * SLOW,
             "the master to know its replica")
    pause_s = 6 * SLOW
    assert mc.execute_command("CLIENT", "PAUSE", pause_s * 1000, "WRITE") in (b"OK", True)
    t0 = time.monotonic()
    assert rc.execute_command("CLUSTER", "FAILOVER") in (b"OK", True)
    # The old master answers -LOADING while it syncs from the new one.
    wait_for(lambda: loaded(lambda: "slave" in role_of(master) and "master" in role_of(replica)),
             pause_s * 0.5, "the failover")
    t1 = time.monotonic()
    assert t1 - t0 < pause_s * 0.5
    other = master.client(socket_timeout=pause_s + 30)  # the PUBLISH waits out the pause
    with pytest.raises(redis.exceptions.ResponseError, match="^MOVED "):
        other.set("k", "v")
    assert time.monotonic() - t1 < pause_s * 0.3
    if kind == "strata":
        other.publish("ch", "x")  # held by the user's pause
        assert time.monotonic() - t0 >= pause_s - 0.5
    mc.execute_command("CLIENT", "UNPAUSE")


def test_cluster_failover_plain_force_and_takeover_swap_a_master_and_its_replica(cluster):
    nodes = [cluster.strata() for _ in range(6)]
    rc, out = cli("--cluster", "create", *["127.0.0.1:%d" % n.port for n in nodes],
                  "--cluster-replicas", 1, "--cluster-yes")
    assert rc == 0, out
    wait_for(lambda: all_ok(nodes), 30 * SLOW, "every node to see the cluster ok")
    for n in nodes:
        wait_for(lambda: n.client().info("replication").get("master_link_status", "up") == "up"
                 and n.client().info("persistence").get("loading") == 0, 20 * SLOW,
                 "the replicas' links")
    masters = [n for n in nodes if "master" in role_of(n)]
    replicas = [n for n in nodes if "slave" in role_of(n)]
    # Every node knows the replicas as replicas (the votes depend on it).
    wait_for(lambda: all(sum("slave" in v[1] for v in nodes_of(n).values()) == 3
                         for n in nodes), 10 * SLOW, "the roles to spread")
    with pytest.raises(redis.exceptions.ResponseError,
                       match="^You should send CLUSTER FAILOVER to a replica$"):
        masters[0].client().execute_command("CLUSTER", "FAILOVER")
    with pytest.raises(redis.exceptions.ResponseError, match="^syntax error$"):
        replicas[0].client().execute_command("CLUSTER", "FAILOVER", "SOON")
    ids = {myid(n): n for n in nodes}

    def old_slots(master):
        slots = set()
        for a, b in _ranges(master):
            slots.update(range(a, b + 1))
        return slots

    def master_of(replica):
        line = [l for l in replica.client(decode_responses=True)
                .execute_command("CLUSTER", "NODES").splitlines() if "myself" in l][0]
        return ids[line.split()[3]]

    for option, replica in (("FORCE", replicas[0]), ("TAKEOVER", replicas[1]), ("", replicas[2])):
        old = master_of(replica)
        # Writes the master acknowledged just before are on the promoted replica (the
        # plain form waits for the whole stream; the others race it, so only the plain
        # form is checked for them).
        entry = RedisCluster(host="127.0.0.1", port=old.port, decode_responses=True)
        mine = []
        slots = old_slots(old)
        for i in range(2000):
            k = "fo:%s:%d" % (option, i)
            if entry.cluster_keyslot(k) in slots:
                mine.append(k)
                entry.set(k, i)
        entry.close()
        args = ("CLUSTER", "FAILOVER") + ((option,) if option else ())
        assert replica.client().execute_command(*args) == b"OK"
        try:
            wait_for(lambda: loaded(lambda: "master" in role_of(replica)), 15 * SLOW,
                     "the replica to be promoted by " + option)
        except AssertionError:
            for n in nodes:
                print("--- node %d:\n%s" % (n.port, "\n".join(
                    l for l in n.read_log().splitlines()
                    if "ailover" in l or "lection" in l or "denied" in l or "FAIL" in l)))
            raise
        # The old master, up all along, follows its former replica.
        wait_for(lambda: loaded(lambda: "slave" in role_of(old) and master_of(old) is replica),
                 15 * SLOW, "the old master to follow")
        wait_for(lambda: all_ok(nodes), 20 * SLOW, "the cluster to be ok")
        ok, out = check(replica)
        assert ok, out
        if not option:
            assert mine
            c = replica.client(decode_responses=True)
            lost = [k for k in mine if c.get(k) is None]
            assert not lost, "writes the master acknowledged are lost: %r" % lost[:5]
            assert "Manual failover requested" in old.read_log()
            assert "manual failover can start" in replica.read_log()
    write_and_read(nodes[0], 100)


def test_a_plain_failover_hands_a_strata_master_to_a_redis_replica_and_back(cluster):
    """CLUSTER FAILOVER with no option between the two kinds of node, both ways: the
    replica sends MFSTART, the master pauses its writes and says where its stream
    stopped, the replica catches up and is elected; keys the master took are kept."""
    nodes = [cluster.strata() for _ in range(3)]
    create(nodes)
    wait_for(lambda: all_ok(nodes), 20 * SLOW, "the strata cluster to be ok")
    s1 = nodes[0]
    r = cluster.redis()
    rc, out = cli("--cluster", "add-node", "127.0.0.1:%d" % r.port, "127.0.0.1:%d" % s1.port,
                  "--cluster-slave", "--cluster-master-id", myid(s1))
    assert rc == 0, out
    everyone = nodes + [r]
    wait_for(lambda: all_ok(everyone), 30 * SLOW, "the redis replica to join")
    wait_for(lambda: loaded(lambda: "slave" in role_of(r) and r.client().info("replication")
                            .get("master_link_status") == "up"), 30 * SLOW,
             "the redis replica to sync from strata")
    wait_for(lambda: all(sum("slave" in v[1] for v in nodes_of(n).values()) == 1
                         for n in everyone), 10 * SLOW, "every node to know the replica")
    entry = RedisCluster(host="127.0.0.1", port=s1.port, decode_responses=True)
    s1_slots = set()
    for a, b in _ranges(s1):
        s1_slots.update(range(a, b + 1))
    keys = [k for k in ("mf:%d" % i for i in range(3000)) if entry.cluster_keyslot(k) in s1_slots]
    for k in keys:
        entry.set(k, k)
    entry.close()
    for replica, master in ((r, s1), (s1, r)):
        assert replica.client().execute_command("CLUSTER", "FAILOVER") == b"OK"
        try:
            wait_for(lambda: loaded(lambda: "master" in role_of(replica)), 20 * SLOW,
                     "the %s replica to be promoted" % replica.kind)
        except AssertionError:
            for n in (replica, master):
                print("--- %s node %d:\n%s" % (n.kind, n.port, "\n".join(
                    l for l in n.read_log().splitlines()
                    if "ailover" in l or "lection" in l or "offset" in l or "PAUSED" in l)))
            raise
        wait_for(lambda: loaded(lambda: "slave" in role_of(master)), 20 * SLOW,
                 "the old %s master to follow" % master.kind)
        wait_for(lambda: all_ok(everyone), 20 * SLOW, "the cluster to be ok")
        c = replica.client(decode_responses=True)
        lost = [k for k in keys if c.get(k) != k]
        assert not lost, "writes lost in the hand-over: %r" % lost[:5]
        wait_for(lambda: loaded(lambda: master.client().info("replication")
                                .get("master_link_status") == "up"), 30 * SLOW,
                 "the old master to sync from the new one")
        # Its new master must know it as its replica before it can ask it for the next
        # hand-over (a master ignores MFSTART from a node it does not know as its own).
        mid = myid(master)
        wait_for(lambda: all("slave" in nodes_of(n)[mid][1] for n in everyone), 10 * SLOW,
                 "every node to know the old master as a replica")
    # strata's side of each hand-over: the paused master, then the waiting replica.
    log = s1.read_log()
    assert "Manual failover requested by replica" in log
    assert "manual failover can start" in log
    ok, out = check(s1)
    assert ok, out
