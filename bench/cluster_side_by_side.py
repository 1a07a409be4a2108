#!/usr/bin/python3
"""Redis Cluster, strata against redis-server, side by side on this machine.

1. Throughput: a 3-master cluster of each (strata nodes with --threads 1, so both have one
   thread per node), made with `redis-cli --cluster create`, driven by
   `strata-bench --cluster-mode` (SET:GET 1:10, 100-byte values, pipeline 16). The two
   clusters run one after the other, alternately, --rounds times; the ratio of the
   medians is reported.
2. Failover: 3 masters and 3 replicas of each, the same cluster-node-timeout; a master
   with keys is killed with SIGKILL, and the time until its replica is a master and until
   every live node sees cluster_state:ok is measured, --drills times each.

Writes bench/results/<stamp>-cluster-side-by-side.md (with this command line).

Usage: bench/cluster_side_by_side.py [--rounds 3] [--seconds 10] [--drills 3]
       [--node-timeout-ms 2000]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRATA = os.environ.get("STRATA_SERVER_BIN", os.path.join(ROOT, "build/server/strata-server"))
BENCH = os.environ.get("STRATA_BENCH_BIN", os.path.join(ROOT, "build/tools/strata-bench/strata-bench"))


def free_port():
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            p = s.getsockname()[1]
        if p <= 55535:
            return p


class Node:
    def __init__(self, kind, node_timeout_ms):
        self.kind = kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="cluster-bench-")
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                "--cluster-node-timeout", str(node_timeout_ms), "--save", "",
                "--appendonly", "no", "--dir", self.dir]
        if kind == "strata":
            cmd = [STRATA] + args + ["--threads", "1"]
        else:
            cmd = ["redis-server"] + args
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.client().ping():
                    break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise RuntimeError("%s on %d did not start" % (kind, self.port))
                time.sleep(0.05)

    def client(self):
        return redis.Redis(port=self.port, decode_responses=True, socket_timeout=10)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def create(nodes, replicas):
    cmd = ["redis-cli", "--cluster", "create"] + ["127.0.0.1:%d" % n.port for n in nodes]
    cmd += ["--cluster-replicas", str(replicas), "--cluster-yes"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                         input=b"yes\n").stdout.decode()
    if "[OK] All 16384 slots covered." not in out:
        raise RuntimeError(out)
    deadline = time.monotonic() + 60
    while not all(cluster_ok(n) for n in nodes):
        if time.monotonic() > deadline:
            raise RuntimeError("the cluster did not come up")
        time.sleep(0.1)


def cluster_ok(n):
    try:
        text = n.client().execute_command("CLUSTER", "INFO")
        return "cluster_state:ok" in text
    except redis.RedisError:
        return False


def throughput(kind, seconds, node_timeout_ms):
    nodes = [Node(kind, node_timeout_ms) for _ in range(3)]
    try:
        create(nodes, 0)
        out = os.path.join(nodes[0].dir, "bench.json")
        cmd = [BENCH, "-p", str(nodes[0].port), "--cluster-mode", "-t", "1", "-c", "8",
               "--pipeline", "16", "--ratio", "1:10", "-d", "100", "--key-maximum", "100000",
               "--test-time", str(seconds), "--hide-histogram", "--json-out-file", out]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       timeout=seconds + 60)
        with open(out) as f:
            j = json.load(f)
        return j["ALL STATS"]["Totals"]["Ops/sec"], " ".join(os.path.basename(c) if i == 0 else c
                                                             for i, c in enumerate(cmd))
    finally:
        for n in nodes:
            n.stop()


def role(n):
    for line in n.client().execute_command("CLUSTER", "NODES").splitlines():
        f = line.split()
        if "myself" in f[2]:
            return f[2]
    return ""


def failover(kind, node_timeout_ms):
    nodes = [Node(kind, node_timeout_ms) for _ in range(6)]
    try:
        create(nodes, 1)
        ids = {n: n.client().execute_command("CLUSTER", "MYID") for n in nodes}
        victim = [n for n in nodes if "master" in role(n)][0]
        heir = None
        for n in nodes:
            for line in n.client().execute_command("CLUSTER", "NODES").splitlines():
                f = line.split()
                if "myself" in f[2] and "slave" in f[2] and f[3] == ids[victim]:
                    heir = n
        deadline = time.monotonic() + 30
        while heir.client().info("replication").get("master_link_status") != "up":
            if time.monotonic() > deadline:
                raise RuntimeError("the replica did not sync")
            time.sleep(0.05)
        # 1000 keys of the victim's slots (a hash tag that lands there).
        c = victim.client()
        mine = victim.client().execute_command("CLUSTER", "NODES")
        ranges = [r for line in mine.splitlines() if "myself" in line for r in line.split()[8:]]
        tag = next(t for t in ("t%d" % i for i in range(100000))
                   if any(int(r.split("-")[0]) <= c.execute_command("CLUSTER", "KEYSLOT", t)
                          <= int(r.split("-")[-1]) for r in ranges))
        for i in range(1000):
            c.set("{%s}%d" % (tag, i), "x" * 100)
        c.execute_command("WAIT", 1, 5000)
        live = [n for n in nodes if n is not victim]
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        t0 = time.monotonic()
        promoted = ok = None
        while time.monotonic() - t0 < 120:
            now = time.monotonic() - t0
            if promoted is None and "master" in role(heir):
                promoted = now
            if promoted is not None and all(cluster_ok(n) for n in live):
                ok = now
                break
            time.sleep(0.02)
        return promoted, ok
    finally:
        for n in nodes:
            n.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--drills", type=int, default=3)
    ap.add_argument("--node-timeout-ms", type=int, default=2000)
    a = ap.parse_args()
    ops = {"strata": [], "redis": []}
    bench_cmd = ""
    for r in range(a.rounds):
        for kind in (("strata", "redis") if r % 2 == 0 else ("redis", "strata")):
            v, bench_cmd = throughput(kind, a.seconds, a.node_timeout_ms)
            ops[kind].append(v)
            print("round %d %s: %.0f ops/s" % (r, kind, v), flush=True)
    drills = {"strata": [], "redis": []}
    for d in range(a.drills):
        for kind in ("strata", "redis"):
            p, ok = failover(kind, a.node_timeout_ms)
            drills[kind].append((p, ok))
            print("drill %d %s: promoted %.2f s, cluster ok %.2f s" % (d, kind, p, ok), flush=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(ROOT, "bench", "results", stamp + "-cluster-side-by-side.md")
    ms, mr = statistics.median(ops["strata"]), statistics.median(ops["redis"])
    with open(path, "w") as f:
        f.write("# Redis Cluster: strata against redis-server, side by side\n\n")
        f.write("Command: `bench/cluster_side_by_side.py %s`\n\n" % " ".join(sys.argv[1:]))
        f.write("Machine: %d CPUs (`nproc`), shared; each node has one thread (strata "
                "`--threads 1`); the clusters run one after the other.\n\n" % os.cpu_count())
        f.write("## Throughput: 3 masters, `redis-cli --cluster create`\n\n")
        f.write("Load: `%s`\n\n" % bench_cmd)
        f.write("| round | strata ops/s | redis ops/s |\n|---|---:|---:|\n")
        for i in range(a.rounds):
            f.write("| %d | %.0f | %.0f |\n" % (i, ops["strata"][i], ops["redis"][i]))
        f.write("| median | %.0f | %.0f |\n\n" % (ms, mr))
        f.write("strata / redis (medians): **%.2f**\n\n" % (ms / mr))
        f.write("## Failover: 3 masters + 3 replicas, cluster-node-timeout %d ms, kill -9 of a "
                "master with 1000 keys\n\n" % a.node_timeout_ms)
        f.write("Seconds from the kill until its replica is a master, and until every live "
                "node sees cluster_state:ok.\n\n")
        f.write("| drill | strata promoted | strata ok | redis promoted | redis ok |\n"
                "|---|---:|---:|---:|---:|\n")
        for i in range(a.drills):
            s, r = drills["strata"][i], drills["redis"][i]
            f.write("| %d | %.2f | %.2f | %.2f | %.2f |\n" % (i, s[0], s[1], r[0], r[1]))
        med = lambda k, j: statistics.median(x[j] for x in drills[k])
        f.write("| median | %.2f | %.2f | %.2f | %.2f |\n" % (med("strata", 0), med("strata", 1),
                                                            med("redis", 0), med("redis", 1)))
    print("wrote", path)


if __name__ == "__main__":
    main()
