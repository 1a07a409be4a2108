"""cluster-enabled yes: a node with its own slots, nodes.conf and redirections.

Each test starts its own node. Against STRATA_TEST_TARGET=redis the same tests run on a
redis-server with cluster-enabled yes (its nodes.conf in the test's dir), so the replies,
errors and redirections are Redis's; the parts that differ on purpose (keys of several
slots served by one node, strata's start-up checks) are strata's only.

Nodes are started with cluster-announce-ip 127.0.0.1: Redis lists a node that never met
another with an empty address."""
import os
import shutil
import tempfile
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import Server, TARGET, free_port
from helpers import wait_for

IS_REDIS = TARGET == "redis"
strata_only = pytest.mark.skipif(IS_REDIS, reason="strata's own behaviour")


@pytest.fixture
def data_dir():
    d = tempfile.mkdtemp(prefix="strata-cluster-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def nodes(data_dir):
    started = []

    def start(extra=(), threads=None, expect_fail=False):
        # The bus port is given: the default, port + 10000, is out of range for high ports.
        s = Server(extra_args=["--cluster-enabled", "yes", "--cluster-announce-ip", "127.0.0.1",
                               "--cluster-port", str(low_free_port())] + list(extra),
                   data_dir=data_dir, threads=threads, expect_fail=expect_fail)
        s.bus_port = int(s.cmd[s.cmd.index("--cluster-port") + 1])
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def low_free_port():
    """A free port whose port + 10000 is a valid port too (a node's default bus port)."""
    while True:
        p = free_port()
        if p <= 55535:
            return p


def info(c):
    text = c.execute_command("CLUSTER", "INFO")
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def wait_state(c, state):
    # Redis keeps a new master down for 2 s after its start before it turns ok.
    wait_for(lambda: info(c)["cluster_state"] == state, 10, "cluster_state:" + state)


def key_in(lo, hi, prefix="key"):
    """A key whose slot is in [lo, hi]."""
    i = 0
    while True:
        k = "%s%d" % (prefix, i)
        # CRC16 is the server's to say: ask a local table built once.
        if lo <= SLOTS.slot(k) <= hi:
            return k
        i += 1


class _Slots:
    """CRC16/XMODEM of the hash tag, as Redis Cluster hashes keys (to pick test keys)."""

    def __init__(self):
        self.table = []
        for i in range(256):
            crc = i << 8
            for _ in range(8):
                crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            self.table.append(crc & 0xFFFF)

    def slot(self, key):
        b = key.encode()
        s = b.find(b"{")
        if s != -1:
            e = b.find(b"}", s + 1)
            if e != -1 and e != s + 1:
                b = b[s + 1:e]
        crc = 0
        for ch in b:
            crc = ((crc << 8) & 0xFFFF) ^ self.table[((crc >> 8) ^ ch) & 0xFF]
        return crc & 16383


SLOTS = _Slots()


def test_a_new_node_serves_no_slot(nodes):
    s = nodes()
    c = s.client(decode_responses=True)
    i = info(c)
    assert i["cluster_state"] == "fail"
    assert i["cluster_slots_assigned"] == "0"
    assert i["cluster_known_nodes"] == "1"
    if not IS_REDIS:
        # Redis says 1 for its first 2 s (a count not yet made), 0 after.
        assert i["cluster_size"] == "0"
    myid = c.execute_command("CLUSTER", "MYID")
    assert c.execute_command("CLUSTER", "NODES") == \
        "%s 127.0.0.1:%d@%d myself,master - 0 0 0 connected\n" % (myid, s.port, s.bus_port)
    assert c.execute_command("CLUSTER", "SLOTS") == []
    for args in (("GET", "k"), ("SET", "k", "v"), ("MGET", "{t}1", "{t}2")):
        with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN Hash slot not served$"):
            c.execute_command(*args)
    # Commands without keys are not redirected.
    assert c.ping() is True
    assert c.dbsize() == 0
    with pytest.raises(redis.ResponseError, match=r"^REPLICAOF not allowed in cluster mode\.$"):
        c.execute_command("REPLICAOF", "127.0.0.1", 1)


def test_a_redirection_is_answered_during_client_pause(nodes):
    """Redis redirects before it looks at a pause: a write for a slot this node does not
    serve gets its error at once."""
    s = nodes()
    c = s.client(decode_responses=True)
    other = s.client(decode_responses=True)
    assert c.execute_command("CLIENT", "PAUSE", 2500, "WRITE") == "OK"
    t0 = time.monotonic()
    with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN Hash slot not served$"):
        other.set("k", "v")
    assert time.monotonic() - t0 < 1.5
    c.execute_command("CLIENT", "UNPAUSE")


def test_assigned_slots_are_served_and_the_state_follows_coverage(nodes):
    s = nodes()
    c = s.client(decode_responses=True)
    myid = c.execute_command("CLUSTER", "MYID")
    assert c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383) in (True, "OK")
    wait_state(c, "ok")
    assert c.execute_command("CLUSTER", "SLOTS") == [
        [0, 16383, ["127.0.0.1", s.port, myid, []]]]
    c.set("k", "v")
    assert c.get("k") == "v"
    assert c.execute_command("MSET", "{t}1", "a", "{t}2", "b") in (True, "OK")
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", SLOTS.slot("{t}")) == 2

    # Without slot 0 the cluster is down: slot 0's keys are not served, the rest wait.
    k0 = key_in(0, 0)
    other = key_in(100, 16383)
    assert c.execute_command("CLUSTER", "DELSLOTS", 0) in (True, "OK")
    wait_state(c, "fail")
    with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN Hash slot not served$"):
        c.get(k0)
    with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN The cluster is down$"):
        c.get(other)
    # Reads when down, if allowed.
    c.config_set("cluster-allow-reads-when-down", "yes")
    wait_for(lambda: _served(c, other), 10, "reads while down")
    with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN The cluster is down and only "
                                                  "accepts read commands$"):
        c.set(other, "v")
    # Without full coverage required, the node is up with the slots it has.
    c.config_set("cluster-require-full-coverage", "no")
    wait_state(c, "ok")
    wait_for(lambda: _writable(c, other), 10, "writes with partial coverage")
    with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN Hash slot not served$"):
        c.get(k0)


def _served(c, key):
    try:
        c.get(key)
        return True
    except redis.ResponseError:
        return False


def _writable(c, key):
    try:
        c.set(key, "v")
        return True
    except redis.ResponseError:
        return False


def test_layout_errors_are_redis_s(nodes):
    c = nodes().client(decode_responses=True)
    assert c.execute_command("CLUSTER", "ADDSLOTS", 1, 2) in (True, "OK")
    cases = [
        (("ADDSLOTS", 1), "^Slot 1 is already busy$"),
        (("ADDSLOTS", 3, 3), "^Slot 3 specified multiple times$"),
        (("ADDSLOTS", 16384), "^Invalid or out of range slot$"),
        (("ADDSLOTS", "x"), "^Invalid or out of range slot$"),
        (("ADDSLOTSRANGE", 5, 3), "^start slot number 5 is greater than end slot number 3$"),
        (("ADDSLOTSRANGE", 5), r"^wrong number of arguments for 'cluster\|addslotsrange' "
                               "command$"),
        (("DELSLOTS", 7), "^Slot 7 is already unassigned$"),
        (("DELSLOTSRANGE", 1, 3), "^Slot 3 is already unassigned$"),
        (("ADDSLOTSRANGE", 10, 20, 15, 30), "^Slot 15 specified multiple times$"),
        (("ADDSLOTS", 5, 1, "x"), "^Invalid or out of range slot$"),
        (("ADDSLOTSRANGE", 1, 3, 40, "x"), "^Slot 1 is already busy$"),
        (("RESET", "foo"), "^syntax error$"),
        (("FORGET", "abc"), "^Unknown node abc$"),
        (("COUNT-FAILURE-REPORTS", "abc"), "^Unknown node abc$"),
        (("REPLICAS", "abc"), "^Unknown node abc$"),
        (("SET-CONFIG-EPOCH", -1), "^Invalid config epoch specified: -1$"),
    ]
    for args, msg in cases:
        with pytest.raises(redis.ResponseError, match=msg):
            c.execute_command("CLUSTER", *args)
    myid = c.execute_command("CLUSTER", "MYID")
    with pytest.raises(redis.ResponseError, match="^I tried hard but I can't forget myself...$"):
        c.execute_command("CLUSTER", "FORGET", myid)
    assert c.execute_command("CLUSTER", "REPLICAS", myid) == []
    assert c.execute_command("CLUSTER", "COUNT-FAILURE-REPORTS", myid) == 0
    assert c.execute_command("CLUSTER", "LINKS") == []
    # The epochs: BUMPEPOCH takes a new one unless this node has the largest already.
    assert c.execute_command("CLUSTER", "BUMPEPOCH") == "BUMPED 1"
    assert c.execute_command("CLUSTER", "BUMPEPOCH") == "STILL 1"
    with pytest.raises(redis.ResponseError, match="^Node config epoch is already non-zero$"):
        c.execute_command("CLUSTER", "SET-CONFIG-EPOCH", 5)
    assert info(c)["cluster_current_epoch"] == "1"
    assert info(c)["cluster_my_epoch"] == "1"
    # FLUSHSLOTS and RESET refuse a node that holds keys.
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 0, 3, 16383)
    wait_state(c, "ok")
    c.set("k", "v")
    with pytest.raises(redis.ResponseError,
                       match=r"^DB must be empty to perform CLUSTER FLUSHSLOTS\.$"):
        c.execute_command("CLUSTER", "FLUSHSLOTS")
    with pytest.raises(redis.ResponseError, match="^CLUSTER RESET can't be called with master "
                                                  "nodes containing keys$"):
        c.execute_command("CLUSTER", "RESET")
    c.flushall()
    assert c.execute_command("CLUSTER", "FLUSHSLOTS") in (True, "OK")
    assert info(c)["cluster_slots_assigned"] == "0"
    assert c.execute_command("CLUSTER", "RESET", "HARD") in (True, "OK")
    assert c.execute_command("CLUSTER", "MYID") != myid
    assert info(c)["cluster_current_epoch"] == "0"


def test_nodes_conf_keeps_the_node_across_a_restart(nodes):
    s = nodes()
    c = s.client(decode_responses=True)
    myid = c.execute_command("CLUSTER", "MYID")
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 99, 200, 300)
    assert c.execute_command("CLUSTER", "BUMPEPOCH") == "BUMPED 1"
    c.close()
    s.stop()
    assert os.path.exists(os.path.join(s.data_dir, "nodes.conf"))
    s2 = nodes()
    c = s2.client(decode_responses=True)
    assert c.execute_command("CLUSTER", "MYID") == myid
    line = c.execute_command("CLUSTER", "NODES").strip()
    assert line.split()[2] == "myself,master"
    assert line.split()[6] == "1"  # config epoch
    assert line.split()[8:] == ["0-99", "200-300"]
    assert info(c)["cluster_current_epoch"] == "1"
    assert info(c)["cluster_slots_assigned"] == "201"


def _write_nodes_conf(data_dir, me_port, other_port):
    me = "a" * 40
    other = "b" * 40
    with open(os.path.join(data_dir, "nodes.conf"), "w") as f:
        f.write("%s 127.0.0.1:%d@%d myself,master - 0 0 1 connected 0-8191\n"
                % (me, me_port, me_port + 10000))
        f.write("%s 127.0.0.1:%d@%d master - 0 0 2 connected 8192-16383\n"
                % (other, other_port, other_port + 10000))
        f.write("vars currentEpoch 2 lastVoteEpoch 0\n")
    return me, other


def test_keys_of_another_node_are_redirected(nodes, data_dir):
    other_port = low_free_port()
    # The node's own port is the one Server picks: write the file for any port (the
    # node's address in it is replaced by the one it serves on).
    me, other = _write_nodes_conf(data_dir, 1, other_port)
    s = nodes()
    c = s.client(decode_responses=True)
    assert c.execute_command("CLUSTER", "MYID") == me
    wait_state(c, "ok")
    mine = key_in(0, 8191)
    theirs = key_in(8192, 16383)
    theirs2 = key_in(8192, 16383, prefix="other")
    c.set(mine, "v")
    assert c.get(mine) == "v"
    with pytest.raises(redis.ResponseError,
                       match="^MOVED %d 127.0.0.1:%d$" % (SLOTS.slot(theirs), other_port)):
        c.get(theirs)
    with pytest.raises(redis.ResponseError,
                       match="^MOVED %d 127.0.0.1:%d$" % (SLOTS.slot(theirs), other_port)):
        c.execute_command("MGET", "{%s}a" % theirs, "{%s}b" % theirs)
    for keys in ((mine, theirs), (theirs, theirs2) if SLOTS.slot(theirs) != SLOTS.slot(theirs2)
                 else (mine, theirs)):
        with pytest.raises(redis.ResponseError,
                           match="^CROSSSLOT Keys in request don't hash to the same slot$"):
            c.execute_command("MGET", *keys)
    # A transaction with a redirected command is refused whole.
    p = c.pipeline(transaction=True)
    p.set(mine, "w")
    p.get(theirs)
    with pytest.raises((redis.ResponseError, redis.exceptions.ExecAbortError)):
        p.execute()
    assert c.get(mine) == "v"
    slots = sorted(c.execute_command("CLUSTER", "SLOTS"))
    assert [r[:2] for r in slots] == [[0, 8191], [8192, 16383]]
    assert slots[1][2][:3] == ["127.0.0.1", other_port, other]
    # FORGET: the other node's slots have no owner any more.
    assert c.execute_command("CLUSTER", "FORGET", other) in (True, "OK")
    with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN"):
        c.get(theirs)


def test_a_cluster_client_uses_a_one_node_cluster(nodes):
    s = nodes()
    c = s.client(decode_responses=True)
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    wait_state(c, "ok")
    rc = RedisCluster(host="127.0.0.1", port=s.port, decode_responses=True)
    try:
        keys = ["key:%d" % i for i in range(500)]
        for k in keys:
            rc.set(k, k.upper())
        assert rc.mget_nonatomic(keys) == [k.upper() for k in keys]
        assert rc.dbsize() == 500
    finally:
        rc.close()


def test_exec_checks_the_queued_keys_again_and_a_redirect_discards_it(nodes):
    """The layout changed between queueing and EXEC: EXEC's reply is the redirection,
    nothing ran, and the transaction is gone (as Redis checks it at EXEC)."""
    s = nodes()
    c = s.client(decode_responses=True)
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    wait_state(c, "ok")
    key = key_in(0, 16383)
    conn = s.client(decode_responses=True).connection_pool.get_connection("MULTI")

    def call(*args):
        conn.send_command(*args)
        try:
            return conn.read_response()
        except redis.ResponseError as e:
            return e

    assert call("MULTI") == "OK"
    assert call("SET", key, "queued") == "QUEUED"
    c.execute_command("CLUSTER", "DELSLOTS", SLOTS.slot(key))
    assert str(call("EXEC")) == "CLUSTERDOWN Hash slot not served"
    assert str(call("EXEC")) == "EXEC without MULTI"  # redis-py drops "ERR "
    c.execute_command("CLUSTER", "ADDSLOTS", SLOTS.slot(key))
    wait_state(c, "ok")
    assert c.get(key) is None
    # Unchanged, it runs.
    assert call("MULTI") == "OK"
    assert call("SET", key, "ran") == "QUEUED"
    assert call("EXEC") == ["OK"]
    assert c.get(key) == "ran"
    conn.disconnect()


@strata_only
def test_keys_of_several_slots_served_here_run_together(nodes):
    """Beyond Redis: a multi-key command over slots all served by this node runs, across
    the node's worker threads, atomically as without cluster mode."""
    s = nodes(threads=3)
    c = s.client(decode_responses=True)
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    wait_state(c, "ok")
    keys = ["k%d" % i for i in range(100)]
    assert len({SLOTS.slot(k) for k in keys}) > 90
    c.mset({k: k for k in keys})
    assert c.mget(keys) == keys
    assert c.delete(*keys) == 100


@strata_only
def test_announced_settings_apply_at_runtime_and_are_checked(nodes):
    s = nodes()
    c = s.client(decode_responses=True)
    c.config_set("cluster-announce-hostname", "cache-7.example")
    c.config_set("cluster-announce-port", 7007)
    wait_for(lambda: c.execute_command("CLUSTER", "NODES").split()[1] ==
             "127.0.0.1:7007@%d,cache-7.example" % s.bus_port, 10, "the new address")
    # What would break nodes.conf's lines is refused.
    for name, value in (("cluster-announce-hostname", "a b"),
                        ("cluster-announce-hostname", "a,b"),
                        ("cluster-announce-ip", "10.0.0.1 x")):
        with pytest.raises(redis.ResponseError):
            c.config_set(name, value)
    c.close()
    s.stop()
    with open(os.path.join(s.data_dir, "nodes.conf")) as f:
        assert ",cache-7.example myself,master" in f.read()


@strata_only
def test_an_idle_bus_link_is_closed(nodes):
    import socket
    s = nodes(["--cluster-node-timeout", "300"])
    link = socket.create_connection(("127.0.0.1", s.bus_port), timeout=5)
    try:
        link.sendall(_bus_message(0)[:100])  # a message that never completes
        assert _closed(link, timeout=10)
    finally:
        link.close()
    assert s.client().ping()


@strata_only
def test_a_bad_nodes_conf_refuses_to_start(nodes, data_dir):
    with open(os.path.join(data_dir, "nodes.conf"), "w") as f:
        f.write("%s 127.0.0.1:1@2 myself,master - 0 0 0 connected 0-99999\n" % ("a" * 40))
    s = nodes(expect_fail=True)
    assert s.wait_exit(10) not in (None, 0)
    assert "nodes.conf is not valid (line 1: bad slot range '0-99999')" in s.read_log()


@strata_only
def test_two_nodes_cannot_share_one_nodes_conf(nodes, data_dir):
    path = os.path.join(data_dir, "shared-nodes.conf")
    first = nodes(["--cluster-config-file", path])
    second = nodes(["--cluster-config-file", path], expect_fail=True)
    assert second.wait_exit(10) not in (None, 0)
    assert "is already used by another cluster node" in second.read_log()
    assert first.client().ping()


@strata_only
def test_a_port_without_room_for_the_bus_port_refuses_to_start():
    # A free port above 55535 (a fixed one may be taken on a busy machine).
    port = free_port()
    while port <= 55535:
        port = free_port()
    s = Server(extra_args=["--cluster-enabled", "yes", "--port", str(port)], expect_fail=True)
    try:
        assert s.wait_exit(10) not in (None, 0)
        assert "port %d is too high for cluster-enabled yes" % port in s.read_log()
    finally:
        s.stop()


@strata_only
def test_an_unwritable_nodes_conf_dir_refuses_to_start(nodes):
    s = nodes(["--cluster-config-file", "/proc/strata-no-such-dir/nodes.conf"],
              expect_fail=True)
    assert s.wait_exit(10) not in (None, 0)
    assert "cluster config file" in s.read_log()


# The cluster bus (server/cluster/cluster_bus.h): what a peer sees of this node.

def _bus_message(msg_type, sender="f" * 40, version=1, extra=b""):
    """A bus message with an empty body: the 2256-byte header of protocol version 1."""
    import struct
    h = bytearray(2256)
    h[0:4] = b"RCmb"
    struct.pack_into(">IHHHH", h, 4, 2256 + len(extra), version, 7000, msg_type, 0)
    h[40:80] = sender.encode()
    struct.pack_into(">HHH", h, 2248, 17000, 1, 0)  # bus port, flags master
    return bytes(h) + extra


def _read_message(sock):
    import struct
    head = b""
    while len(head) < 8:
        chunk = sock.recv(8 - len(head))
        if not chunk:
            return None
        head += chunk
    assert head[:4] == b"RCmb"
    (length,) = struct.unpack(">I", head[4:8])
    body = head
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        assert chunk, "the link closed mid-message"
        body += chunk
    return body


def _closed(sock, timeout=5):
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@strata_only
def test_the_bus_answers_a_ping_and_drops_what_does_not_hold_together(nodes):
    import socket
    import struct
    s = nodes()
    c = s.client(decode_responses=True)
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 99)
    myid = c.execute_command("CLUSTER", "MYID")
    assert c.execute_command("CLUSTER", "SETSLOT", 1, "STABLE") == "OK"
    link = socket.create_connection(("127.0.0.1", s.bus_port), timeout=5)
    try:
        # A message that does not hold together (version 2, a PING with trailing bytes)
        # is dropped; the link stays and the next PING is answered.
        link.sendall(_bus_message(0, version=2))
        link.sendall(_bus_message(0, extra=b"\0" * 8))
        link.sendall(_bus_message(0))
        pong = _read_message(link)
        assert struct.unpack(">H", pong[12:14])[0] == 1  # PONG
        assert pong[40:80].decode() == myid
        assert struct.unpack(">H", pong[10:12])[0] == s.port
        assert struct.unpack(">H", pong[2248:2250])[0] == s.bus_port
        slots = pong[80:80 + 2048]
        assert slots[0] == 0xFF and slots[12] == 0x0F and slots[13] == 0  # 0-99
        # Garbage closes the link.
        link.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert _closed(link)
    finally:
        link.close()
    # A link that sends half a message and goes away costs nothing.
    half = socket.create_connection(("127.0.0.1", s.bus_port), timeout=5)
    half.sendall(_bus_message(0)[:1000])
    half.close()
    assert c.ping()
    i = info(c)
    assert int(i["cluster_stats_messages_ping_received"]) == 1
    assert int(i["cluster_stats_messages_pong_sent"]) == 1
    log = s.read_log()
    assert "bad message length or signature" in log
    # The first bad message of a link is logged as a warning, later ones only verbosely.
    assert "Cluster bus: dropped protocol version 2 from" in log
    assert "dropped a ping message of length 2264" not in log


@strata_only
def test_a_redis_node_that_meets_this_node_lists_it_and_redirects_to_it(nodes, data_dir):
    """A redis-server 7 node MEETs a strata node over the real bus: it completes the
    handshake, lists strata as a connected master with its slots, and sends clients of
    those slots to it."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    s = nodes()
    c = s.client(decode_responses=True)
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
    myid = c.execute_command("CLUSTER", "MYID")
    rdir = tempfile.mkdtemp(prefix="redis-cluster-")
    rport = low_free_port()
    import subprocess
    proc = subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1",
                             "--cluster-enabled", "yes", "--save", "", "--appendonly", "no",
                             "--dir", rdir, "--cluster-port", str(low_free_port())],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        rc = redis.Redis(port=rport, decode_responses=True)
        wait_for(lambda: _pings(rc), 10, "redis-server to start")
        rc.execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
        rc.execute_command("CLUSTER", "MEET", "127.0.0.1", s.port, s.bus_port)

        def strata_listed():
            for line in rc.execute_command("CLUSTER", "NODES").splitlines():
                f = line.split()
                if f[0] == myid:
                    return f[2] == "master" and f[7] == "connected" and f[8:] == ["0-8191"]
            return False

        wait_for(strata_listed, 20, "redis-server to list strata as a connected master")
        wait_for(lambda: info(rc)["cluster_state"] == "ok", 20, "the mixed cluster to be ok")
        key = key_in(0, 8191)
        with pytest.raises(redis.ResponseError,
                           match="^MOVED %d 127.0.0.1:%d$" % (SLOTS.slot(key), s.port)):
            rc.get(key)
        c.set(key, "from strata")
        assert c.get(key) == "from strata"
        # strata learned the address redis-server reached it at, and kept it.
        assert c.execute_command("CLUSTER", "NODES").split()[1].startswith("127.0.0.1:")
        assert int(info(c)["cluster_stats_messages_meet_received"]) == 1
        # And it learned the redis node and its slots from the bus: it sends clients there.
        wait_for(lambda: info(c)["cluster_state"] == "ok", 20, "strata to see the cluster ok")
        rid = rc.execute_command("CLUSTER", "MYID")
        other = key_in(8192, 16383)
        with pytest.raises(redis.ResponseError,
                           match="^MOVED %d 127.0.0.1:%d$" % (SLOTS.slot(other), rport)):
            c.get(other)
        assert rid in c.execute_command("CLUSTER", "NODES")
        rc.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(rdir, ignore_errors=True)


def _pings(client):
    try:
        return client.ping()
    except redis.ConnectionError:
        return False


@strata_only
def test_keys_outside_db_0_refuse_to_start_in_cluster_mode(data_dir):
    """As Redis: a dataset with keys in a database other than 0 cannot start a cluster
    node (SELECT is refused there, so they could not be reached)."""
    plain = Server(data_dir=data_dir)
    try:
        c = plain.client()
        c.set("in0", "a")
        c.execute_command("SELECT", 1)
        c.execute_command("SET", "in1", "b")
        c.execute_command("SAVE")
    finally:
        plain.stop()
    node = Server(extra_args=["--cluster-enabled", "yes", "--cluster-port", str(low_free_port())],
                  data_dir=data_dir, expect_fail=True)
    try:
        assert node.wait_exit(20) == 1
        assert "You can't have keys in a DB different than DB 0 when in Cluster mode" in \
            node.read_log()
    finally:
        node.stop()


def test_meet_replicate_and_failover_errors_are_redis_s(nodes):
    s = nodes()
    c = s.client()
    me = c.execute_command("CLUSTER", "MYID").decode()
    for args, msg in [
        (("MEET", "not-an-ip", 7000), "Invalid node address specified: not-an-ip:7000"),
        (("MEET", "127.0.0.1", 0), "Invalid node address specified: 127.0.0.1:0"),
        (("MEET", "127.0.0.1", 70000), "Invalid node address specified: 127.0.0.1:70000"),
        (("MEET", "127.0.0.1", "x"), "Invalid TCP base port specified: x"),
        (("MEET", "127.0.0.1", 7000, "y"), "Invalid TCP bus port specified: y"),
        (("MEET", "127.0.0.1"), "wrong number of arguments for 'cluster|meet' command"),
        (("REPLICATE", me), "Can't replicate myself"),
        (("REPLICATE", "f" * 40), "Unknown node " + "f" * 40),
        (("FAILOVER",), "You should send CLUSTER FAILOVER to a replica"),
        (("FAILOVER", "FORCE"), "You should send CLUSTER FAILOVER to a replica"),
        (("FAILOVER", "SOON"), "syntax error"),
    ]:
        with pytest.raises(redis.ResponseError, match="^" + msg + "$"):
            c.execute_command("CLUSTER", *args)
    # A MEET of a node that does not answer shows as a handshake in CLUSTER NODES.
    dead = low_free_port()
    assert c.execute_command("CLUSTER", "MEET", "127.0.0.1", dead, dead) == b"OK"
    assert b"handshake" in c.execute_command("CLUSTER", "NODES")
