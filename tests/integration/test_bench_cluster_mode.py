"""strata-bench --cluster-mode (tools/strata-bench/cluster_thread.h) driven as a black box:
against a real 3-node strata cluster made with `redis-cli --cluster create`, and against
fake cluster nodes that answer -MOVED and -ASK, or a CLUSTER SLOTS that cannot be used.

Environment (besides conftest.py's):
  STRATA_BENCH_BIN   path to strata-bench (default: build/tools/strata-bench/strata-bench)

Every server listens on loopback on a free port; every run and wait is bounded; the
fixtures stop what they start.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading

import pytest

from conftest import REPO, TARGET, Server, free_port
from helpers import wait_for

STRATA_BENCH_BIN = os.environ.get(
    "STRATA_BENCH_BIN", os.path.join(REPO, "build", "tools", "strata-bench", "strata-bench"))
RUN_TIMEOUT_S = 60
SLOW = 3 if os.environ.get("STRATA_SANITIZED") == "1" else 1

pytestmark = pytest.mark.skipif(
    not os.access(STRATA_BENCH_BIN, os.X_OK),
    reason="strata-bench not built at %s (set STRATA_BENCH_BIN)" % STRATA_BENCH_BIN)


def run_bench(port, *args, tmp_path=None, timeout=RUN_TIMEOUT_S):
    """Runs strata-bench --cluster-mode against 127.0.0.1:port; returns (proc, json)."""
    cmd = [STRATA_BENCH_BIN, "-s", "127.0.0.1", "-p", str(port), "--cluster-mode",
           "--hide-histogram", "--reply-timeout", "10"] + [str(a) for a in args]
    json_path = None
    if tmp_path is not None:
        json_path = str(tmp_path / "run.json")
        cmd += ["--json-out-file", json_path]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout * SLOW,
                          stdin=subprocess.DEVNULL)
    data = None
    if json_path is not None and os.path.exists(json_path):
        with open(json_path) as f:
            data = json.load(f)
    return proc, data


def crc16(data):
    """CRC-16/XMODEM, as Redis Cluster hashes keys."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def key_slot(key):
    """Redis's slot of a key (bytes), hash tags included."""
    start = key.find(b"{")
    if start != -1:
        end = key.find(b"}", start + 1)
        if end != -1 and end != start + 1:
            key = key[start + 1:end]
    return crc16(key) % 16384


def node_rows(stdout):
    """The CLUSTER NODES table of a text report: name -> its fields after the name."""
    rows, inside = {}, False
    for line in stdout.splitlines():
        if line.startswith("CLUSTER NODES"):
            inside = True
            continue
        if inside and line.startswith("Redirects:"):
            break
        parts = line.split()
        if inside and parts and parts[0].startswith("127.0.0.1:"):
            rows[parts[0]] = parts[1:]
    return rows


# --- a real cluster ---------------------------------------------------------------------


def cluster_info(node):
    c = node.client(decode_responses=True)
    try:
        text = c.execute_command("CLUSTER", "INFO")
    finally:
        c.close()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def cluster_slots(node):
    """CLUSTER SLOTS of a node: a list of (first, last, master port)."""
    c = node.client()
    try:
        reply = c.execute_command("CLUSTER", "SLOTS")
    finally:
        c.close()
    if isinstance(reply, dict):  # redis-py may shape it as {(first, last): {...}}
        return sorted((k[0], k[1], v["primary"][1]) for k, v in reply.items())
    return sorted((int(e[0]), int(e[1]), int(e[2][1])) for e in reply)


def stable(nodes):
    if not all(cluster_info(n).get("cluster_state") == "ok" for n in nodes):
        return False
    views = [cluster_slots(n) for n in nodes]
    return all(v == views[0] for v in views) and sum(l - f + 1 for f, l, _ in views[0]) == 16384


def command_calls(node):
    """INFO commandstats calls of SET and GET on a node."""
    c = node.client(decode_responses=True)
    try:
        stats = c.info("commandstats")
    finally:
        c.close()
    return tuple(int(stats.get("cmdstat_%s" % name, {}).get("calls", 0)) for name in ("set", "get"))


def dbsize(node):
    c = node.client()
    try:
        return c.dbsize()
    finally:
        c.close()


@pytest.fixture(scope="module")
def cluster():
    if TARGET == "redis":
        pytest.skip("strata nodes (the cluster is made of strata-server)")
    if shutil.which("redis-cli") is None:
        pytest.skip("redis-cli is not installed")
    nodes, dirs = [], []
    try:
        for _ in range(3):
            d = tempfile.mkdtemp(prefix="strata-bench-cluster-")
            dirs.append(d)
            nodes.append(Server(extra_args=["--cluster-enabled", "yes",
                                            "--cluster-port", str(free_port()),
                                            "--cluster-node-timeout", str(1500 * SLOW)],
                                data_dir=d, threads=2))
        p = subprocess.run(["redis-cli", "--cluster", "create"] +
                           ["127.0.0.1:%d" % n.port for n in nodes] + ["--cluster-yes"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, input=b"yes\n",
                           timeout=60 * SLOW)
        out = p.stdout.decode(errors="replace")
        assert p.returncode == 0 and "[OK] All 16384 slots covered." in out, out
        wait_for(lambda: stable(nodes), 20 * SLOW, "every node to agree on all 16384 slots")
        yield nodes
    finally:
        for n in nodes:
            n.stop()
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def test_requests_go_to_every_master_and_the_report_shows_each(cluster, tmp_path):
    for n in cluster:
        c = n.client()
        c.flushall()
        c.close()
    before = {n.port: command_calls(n) for n in cluster}
    # 2 threads x 2 clients x 300 requests, one SET per GET, over 10,000 keys: about a
    # third of the requests for each master.
    proc, j = run_bench(cluster[1].port, "-t", 2, "-c", 2, "-n", 300, "--ratio", "1:1",
                        "--key-maximum", 10000, "--pipeline", 4, "--distinct-client-seed",
                        tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stats = j["ALL STATS"]
    assert stats["Totals"]["Count"] == 1200
    assert stats["Sets"]["Count"] == 600 and stats["Gets"]["Count"] == 600
    assert stats["Totals"]["Error Replies"] == 0
    assert stats["Totals"]["Connection Errors"] == 0
    assert j["configuration"]["cluster_mode"] is True
    # A stable cluster redirects nothing: every key went to its slot's master at once.
    assert j["Cluster"]["MOVED"] == 0 and j["Cluster"]["ASK"] == 0, j["Cluster"]
    names = {"127.0.0.1:%d" % n.port for n in cluster}
    nodes = j["Cluster"]["Nodes"]
    assert set(nodes) == names, nodes
    assert sum(v["Count"] for v in nodes.values()) == 1200
    for name, v in nodes.items():
        assert v["Count"] > 150, (name, v)
        assert v["Errors"] == 0 and v["MOVED"] == 0 and v["ASK"] == 0
        p = v["Percentile Latencies"]
        assert 0 < p["p50.00"] <= p["p99.00"] <= p["p99.90"] <= v["Max Latency"]
    # Each node saw its share, and nothing more: the SET and GET calls it counted add up to
    # what strata-bench sent, and match what the report says it answered.
    grown = {}
    for n in cluster:
        assert dbsize(n) > 0, n.port
        after = command_calls(n)
        grown[n.port] = (after[0] - before[n.port][0], after[1] - before[n.port][1])
        assert grown[n.port][0] > 0 and grown[n.port][1] > 0, grown
        assert sum(grown[n.port]) == nodes["127.0.0.1:%d" % n.port]["Count"], (grown, nodes)
    assert sum(g[0] for g in grown.values()) == 600
    assert sum(g[1] for g in grown.values()) == 600
    # The text report lists every node in its own table, with its ops.
    rows = node_rows(proc.stdout)
    assert set(rows) == names, proc.stdout
    for name, fields in rows.items():
        assert int(fields[-4]) == nodes[name]["Count"], (name, fields)  # Ops
        assert fields[-2:] == ["0", "0"], (name, fields)  # MOVED, ASK
    assert "Redirects: 0 MOVED, 0 ASK" in proc.stdout


def test_a_hash_tag_sends_every_request_to_one_master(cluster, tmp_path):
    # Every key carries the tag {bench}: all of them live in that one slot.
    owner = [port for first, last, port in cluster_slots(cluster[0])
             if first <= key_slot(b"bench") <= last]
    assert len(owner) == 1
    proc, j = run_bench(cluster[0].port, "-t", 1, "-c", 2, "-n", 100, "--ratio", "1:1",
                        "--key-prefix", "{bench}-", "--key-maximum", 1000, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    nodes = j["Cluster"]["Nodes"]
    assert len(nodes) == 3
    for name, v in nodes.items():
        expected = 200 if name == "127.0.0.1:%d" % owner[0] else 0
        assert v["Count"] == expected, (name, nodes)
    assert j["Cluster"]["MOVED"] == 0


# --- fake nodes ---------------------------------------------------------------------------


class FakeNode:
    """A loopback RESP listener that answers each command with handler(node, args, state),
    args as bytes, state a dict per connection. Counts the commands it got by name."""

    def __init__(self, handler):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.handler = handler
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.counts = {}
        self.conns = []
        self.threads = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def count(self, name):
        with self.lock:
            return self.counts.get(name, 0)

    def _accept(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    def _serve(self, conn):
        conn.settimeout(0.2)
        buf = bytearray()
        state = {}

        def fill():
            while not self.stopping.is_set():
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    raise EOFError
                buf.extend(data)
                return
            raise EOFError

        def line():
            while b"\r\n" not in buf:
                fill()
            end = buf.index(b"\r\n")
            text = bytes(buf[:end])
            del buf[:end + 2]
            return text

        def bulk(n):
            while len(buf) < n + 2:
                fill()
            data = bytes(buf[:n])
            del buf[:n + 2]
            return data

        try:
            while True:
                header = line()
                assert header[:1] == b"*", header
                args = []
                for _ in range(int(header[1:])):
                    args.append(bulk(int(line()[1:])))
                name = args[0].upper().decode()
                if name == "CLUSTER":
                    name += " " + args[1].upper().decode()
                with self.lock:
                    self.counts[name] = self.counts.get(name, 0) + 1
                conn.sendall(self.handler(self, args, state))
        except (EOFError, OSError, AssertionError):
            pass
        finally:
            conn.close()

    def close(self):
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in self.threads:
            t.join(5)


def slots_reply(ranges):
    """CLUSTER SLOTS bytes for [(first, last, port)], every master on 127.0.0.1."""
    out = b"*%d\r\n" % len(ranges)
    for first, last, port in ranges:
        node_id = b"%040d" % port
        out += b"*3\r\n:%d\r\n:%d\r\n*3\r\n$9\r\n127.0.0.1\r\n:%d\r\n$40\r\n%s\r\n" % (
            first, last, port, node_id)
    return out


def serve_data(args):
    """SET -> +OK, GET -> nil; None for other commands."""
    name = args[0].upper()
    if name == b"SET":
        return b"+OK\r\n"
    if name == b"GET":
        return b"$-1\r\n"
    return None


@pytest.fixture
def fakes():
    started = []

    def make(handler):
        node = FakeNode(handler)
        started.append(node)
        return node

    yield make
    for node in started:
        node.close()


def redirect_node(kind, target):
    """A node that owns every slot by its CLUSTER SLOTS and redirects every key to target
    (a one-element list, filled in once target exists) with -<kind>."""
    def handler(node, args, state):
        name = args[0].upper()
        if name == b"PING":
            return b"+PONG\r\n"
        if name == b"CLUSTER" and args[1].upper() == b"SLOTS":
            return slots_reply([(0, 16383, node.port)])
        if name in (b"SET", b"GET"):
            return b"-%s %d 127.0.0.1:%d\r\n" % (kind, key_slot(args[1]), target[0])
        return b"-ERR unexpected command\r\n"
    return handler


def test_moved_is_followed_counted_and_refreshes_the_map(fakes, tmp_path):
    # Node A claims every slot but answers -MOVED to B for every key; B owns every slot
    # by its own CLUSTER SLOTS. After the first MOVED strata-bench asks B for the slots
    # and sends everything to B from then on.
    target = [0]
    a = fakes(redirect_node(b"MOVED", target))

    def b_handler(node, args, state):
        if args[0].upper() == b"CLUSTER" and args[1].upper() == b"SLOTS":
            return slots_reply([(0, 16383, node.port)])
        return serve_data(args) or b"+PONG\r\n"
    b = fakes(b_handler)
    target[0] = b.port
    proc, j = run_bench(a.port, "-t", 1, "-c", 2, "-n", 100, "--ratio", "1:1",
                        "--key-maximum", 1000, "--pipeline", 2, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stats = j["ALL STATS"]
    assert stats["Totals"]["Count"] == 200
    assert stats["Totals"]["Error Replies"] == 0 and stats["Totals"]["Connection Errors"] == 0
    cluster = j["Cluster"]
    nodes = cluster["Nodes"]
    name_a, name_b = "127.0.0.1:%d" % a.port, "127.0.0.1:%d" % b.port
    assert set(nodes) == {name_a, name_b}, nodes
    # Every request was answered by B; A only redirected, a few times before the refresh.
    assert nodes[name_b]["Count"] == 200 and nodes[name_a]["Count"] == 0, nodes
    # (without the refresh, about 150: one per slot the 200 keys hash to)
    # Until the refresh's reply is in, requests already sent to A come back MOVED (how
    # many depends on the machine's load); without the refresh about 150 of the 200 do.
    assert 1 <= nodes[name_a]["MOVED"] == cluster["MOVED"] <= 100, cluster
    assert cluster["ASK"] == 0
    assert cluster["Slot Map Refreshes"] >= 1, cluster
    assert b.count("CLUSTER SLOTS") == cluster["Slot Map Refreshes"] + \
        cluster["Slot Map Refresh Failures"]
    assert a.count("SET") + a.count("GET") == cluster["MOVED"]
    assert b.count("SET") + b.count("GET") == 200
    rows = node_rows(proc.stdout)
    assert rows[name_a][-2:] == [str(cluster["MOVED"]), "0"], proc.stdout
    assert "Redirects: %d MOVED, 0 ASK" % cluster["MOVED"] in proc.stdout


@pytest.mark.parametrize("prefix", ["memtier-", "{tag}memtier-"])
def test_moved_updates_the_slot_of_its_key(fakes, tmp_path, prefix):
    # B cannot give its slots, so only the MOVED replies update the map: one MOVED per
    # slot the keys hash to (CRC16 and hash tags as Redis has them), none after.
    target = [0]
    a = fakes(redirect_node(b"MOVED", target))
    b = fakes(lambda node, args, state:
              serve_data(args) or b"-ERR CLUSTER SLOTS is not for this test\r\n")
    target[0] = b.port
    proc, j = run_bench(a.port, "-t", 1, "-c", 1, "-n", 30, "--ratio", "0:1",
                        "--key-pattern", "S:S", "--key-minimum", 1, "--key-maximum", 3,
                        "--key-prefix", prefix, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    slots = {key_slot(b"%s%d" % (prefix.encode(), i)) for i in (1, 2, 3)}
    cluster = j["Cluster"]
    assert cluster["MOVED"] == len(slots), (cluster, slots)
    assert cluster["Slot Map Refreshes"] == 0 and cluster["Slot Map Refresh Failures"] >= 1
    assert j["ALL STATS"]["Totals"]["Count"] == 30
    assert cluster["Nodes"]["127.0.0.1:%d" % b.port]["Count"] == 30


def test_ask_is_resent_once_after_asking_and_leaves_the_map(fakes, tmp_path):
    # A answers -ASK to B for every key; B serves a key only right after ASKING. The map
    # keeps A as the owner, so every request goes to A first.
    target = [0]
    a = fakes(redirect_node(b"ASK", target))

    def b_handler(node, args, state):
        name = args[0].upper()
        asking, state["asking"] = state.get("asking", False), False
        if name == b"ASKING":
            state["asking"] = True
            return b"+OK\r\n"
        if name in (b"SET", b"GET"):
            return serve_data(args) if asking else b"-ERR sent without ASKING\r\n"
        if name == b"PING":
            return b"+PONG\r\n"
        return b"-ERR unexpected command\r\n"
    b = fakes(b_handler)
    target[0] = b.port
    proc, j = run_bench(a.port, "-t", 1, "-c", 2, "-n", 50, "--ratio", "1:1",
                        "--key-maximum", 1000, "--pipeline", 3, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cluster = j["Cluster"]
    name_a, name_b = "127.0.0.1:%d" % a.port, "127.0.0.1:%d" % b.port
    assert cluster["ASK"] == 100 and cluster["Nodes"][name_a]["ASK"] == 100, cluster
    assert cluster["MOVED"] == 0
    assert cluster["Nodes"][name_b]["Count"] == 100 and cluster["Nodes"][name_a]["Count"] == 0
    assert j["ALL STATS"]["Totals"]["Error Replies"] == 0
    assert b.count("ASKING") == 100 and b.count("SET") + b.count("GET") == 100
    assert b.count("CLUSTER SLOTS") == 0 and a.count("CLUSTER SLOTS") == 1


# --- clear errors -------------------------------------------------------------------------


def test_a_server_without_cluster_support_is_an_error_naming_it(server):
    proc, _ = run_bench(server.port, "-t", 1, "-c", 1, "-n", 10)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "127.0.0.1:%d" % server.port in proc.stderr, proc.stderr
    assert "CLUSTER SLOTS" in proc.stderr or "cluster" in proc.stderr.lower(), proc.stderr
    assert "ALL STATS" not in proc.stdout


def test_no_slots_is_an_error_naming_the_node(fakes):
    empty = fakes(lambda node, args, state:
                  b"*0\r\n" if args[0].upper() == b"CLUSTER" else b"+PONG\r\n")
    proc, _ = run_bench(empty.port, "-t", 1, "-c", 1, "-n", 10)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "127.0.0.1:%d" % empty.port in proc.stderr and "no slots" in proc.stderr, proc.stderr


def test_a_master_that_cannot_be_connected_is_an_error_naming_it(fakes):
    dead = free_port()  # nothing listens there
    seed = fakes(lambda node, args, state:
                 slots_reply([(0, 8191, node.port), (8192, 16383, dead)])
                 if args[0].upper() == b"CLUSTER" else b"+PONG\r\n")
    proc, _ = run_bench(seed.port, "-t", 1, "-c", 1, "-n", 10)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cluster node 127.0.0.1:%d" % dead in proc.stderr, proc.stderr
    assert "ALL STATS" not in proc.stdout
