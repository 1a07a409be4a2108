#!/usr/bin/python3
"""Throughput of the collection commands: strata-server vs redis-server, side by side.

Both servers run at the same time on free loopback ports with persistence off, pinned
with taskset to the same server CPU(s); redis-benchmark is pinned to the client CPU(s).
For each test the two servers are measured one after the other, the order alternating
per test and per run (RUNS > 1 keeps the best run of each server), at pipeline
PIPELINE with CLIENTS connections and random members over RANDOM distinct values
(redis-benchmark -r). Each test is one redis-benchmark invocation, either one of its
built-in tests (-t hset, -t lpush, ...) or a command line of its own; tests that read
(HGET, SISMEMBER, ZRANGE, LPOP) run after the test that fills the key they read.

Usage: bench/types_side_by_side.py [--runs N] [--requests N] [--pipeline N] [--label L]
Environment: STRATA_BIN, REDIS_BIN, THREADS (1), SERVER_CPUS (0), CLIENT_CPUS (1),
CLIENTS (50), RANDOM (100000), TESTS (names to run, e.g. "HSET HGET"; default all).

Server CPU: around each run the server's utime+stime (all threads, /proc/PID/stat) is
read, giving CPU microseconds per request. With one client core the client saturates
first on the lighter servers (replies of many elements cost the client more than the
server), so ops/s can measure the client; CPU per request does not depend on that.

Results: a table on stdout plus bench/results/<date>-<label>.csv and .md.
"""
import argparse
import csv
import datetime
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, redis-benchmark arguments after the common ones)
TESTS = [
    ("HSET", ["-t", "hset"]),
    ("HGET", ["hget", "myhash", "element:__rand_int__"]),
    ("LPUSH", ["-t", "lpush"]),
    ("LPOP", ["-t", "lpop"]),
    ("SADD", ["-t", "sadd"]),
    ("SISMEMBER", ["sismember", "myset", "element:__rand_int__"]),
    ("ZADD", ["-t", "zadd"]),
    ("ZRANGE", ["zrange", "myzset", "0", "9"]),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            out = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                                 text=True, timeout=2).stdout
            if "PONG" in out:
                return
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.05)
    raise RuntimeError("server on port %d did not start" % port)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_bench(port, args, common, client_cpus):
    cmd = ["taskset", "-c", client_cpus, "redis-benchmark", "-p", str(port), "--csv"] + common + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    rows = list(csv.reader(p.stdout.strip().splitlines()))
    if p.returncode != 0 or len(rows) < 2:
        raise RuntimeError("redis-benchmark failed: %s\n%s" % (shlex.join(cmd), p.stderr))
    return float(rows[-1][1])  # rps column of the last (only) test


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", "1")))
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--label", default="types-p16")
    opts = ap.parse_args()
    strata_bin = os.environ.get("STRATA_BIN", os.path.join(ROOT, "build/server/strata-server"))
    redis_bin = os.environ.get("REDIS_BIN", "redis-server")
    threads = os.environ.get("THREADS", "1")
    server_cpus = os.environ.get("SERVER_CPUS", "0")
    client_cpus = os.environ.get("CLIENT_CPUS", "1")
    clients = os.environ.get("CLIENTS", "50")
    rand = os.environ.get("RANDOM", "100000")
    only = os.environ.get("TESTS", "").upper().split()
    tests = [t for t in TESTS if not only or t[0] in only]
    if not os.access(strata_bin, os.X_OK):
        sys.exit("types_side_by_side: no strata binary at %s (scripts/build)" % strata_bin)
    tmp = tempfile.mkdtemp(prefix="types-bench-", dir=os.path.join(ROOT, "bench/results/tmp")
                           if os.path.isdir(os.path.join(ROOT, "bench/results/tmp")) else None)
    ports = {"strata": free_port(), "redis": free_port()}
    cmds = {
        "strata": ["taskset", "-c", server_cpus, strata_bin, "--port", str(ports["strata"]),
                   "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp,
                   "--threads", threads],
        "redis": ["taskset", "-c", server_cpus, redis_bin, "--port", str(ports["redis"]),
                  "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp,
                  "--daemonize", "no"],
    }
    procs = {k: subprocess.Popen(v, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for k, v in cmds.items()}
    try:
        for k in procs:
            wait_ready(ports[k])
        common = ["-P", str(opts.pipeline), "-c", clients, "-n", str(opts.requests), "-r", rand]
        best = {}
        cpu = {}
        for i, (name, args) in enumerate(tests):
            for run in range(opts.runs):
                order = ["strata", "redis"] if (i + run) % 2 == 0 else ["redis", "strata"]
                for server in order:
                    c0 = cpu_seconds(procs[server].pid)
                    rps = run_bench(ports[server], args, common, client_cpus)
                    us = (cpu_seconds(procs[server].pid) - c0) * 1e6 / opts.requests
                    if rps > best.get((name, server), 0.0):
                        best[(name, server)] = rps
                        cpu[(name, server)] = us
                    print("  %-10s %-6s %12.0f ops/s %7.2f cpu us/op" % (name, server, rps, us),
                          flush=True)
    finally:
        for p in procs.values():
            p.terminate()
        for p in procs.values():
            p.wait(10)
    stamp = datetime.datetime.utcnow().strftime("%Y%m%d-%H%M%S")
    base = os.path.join(ROOT, "bench/results", "%s-%s" % (stamp, opts.label))
    lines = ["| test | strata ops/s | redis ops/s | strata/redis | strata cpu us/op | "
             "redis cpu us/op | ops per server core, strata/redis |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    with open(base + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["test", "pipeline", "strata_ops", "redis_ops", "ratio", "strata_cpu_us_op",
                    "redis_cpu_us_op", "per_core_ratio"])
        for name, _ in tests:
            s, r = best[(name, "strata")], best[(name, "redis")]
            cs, cr = cpu[(name, "strata")], cpu[(name, "redis")]
            per_core = cr / cs if cs > 0 else float("nan")
            w.writerow([name, opts.pipeline, "%.0f" % s, "%.0f" % r, "%.2f" % (s / r),
                        "%.2f" % cs, "%.2f" % cr, "%.2f" % per_core])
            lines.append("| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |" % (
                name, s, r, s / r, cs, cr, per_core))
    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip()
    with open(base + ".md", "w") as f:
        f.write("# Collection throughput: %s-%s\n\n" % (stamp, opts.label))
        f.write("- command: `%s`\n" % shlex.join(["bench/types_side_by_side.py"] + sys.argv[1:]))
        f.write("- settings: THREADS=%s SERVER_CPUS=%s CLIENT_CPUS=%s CLIENTS=%s RANDOM=%s "
                "requests=%d pipeline=%d runs=%d\n" % (threads, server_cpus, client_cpus,
                                                       clients, rand, opts.requests,
                                                       opts.pipeline, opts.runs))
        f.write("- kernel %s, nproc %d, git %s\n\n" % (os.uname().release, os.cpu_count(), git))
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("results: %s.csv %s.md" % (base, base))


if __name__ == "__main__":
    main()
