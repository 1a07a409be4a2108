#!/usr/bin/python3
"""Replication side by side with redis-server: what a replica costs its master, and how
long a full resync takes.

1. Cost to the master. The master runs alone on CPU 0 (strata --threads 1); a
   pipelined raw-socket client on CPU 1 sends SETs of VALUE bytes over KEYS keys in
   batches of 16 (pipeline 16). The master's CPU time per SET (utime + stime from /proc)
   gives SETs per CPU-second, first without a replica, then with one replica of the same
   kind attached and in sync (on CPU 1 too). Target: with a replica, strata keeps at
   least 85% of its throughput without one; Redis's figure is measured the same way.
2. Full resync. A master with SYNC_KEYS keys of VALUE bytes; a replica of the same kind
   is started with --replicaof while a writer keeps SETting on the master; the time from
   the replica's start until its link is up with every key loaded. strata runs with
   --threads SYNC_THREADS on both sides (default 2, for a two-core machine); redis-server
   is single threaded and forks, and its master runs with repl-diskless-sync-delay 0
   (by default it waits 5 s for more replicas before the transfer starts; results before
   2026-12-04 included that wait in Redis's time). Target: strata takes at most 0.5x Redis's time. Also reported:
   the master's extra memory during the resync as a share of the dataset (strata: its
   peak RSS over its RSS before; redis-server: the fork's copy-on-write bytes, INFO
   persistence's rdb_last_cow_size... of the sync, which Redis reports itself).

Usage: bench/replication_side_by_side.py [--sets 1000000] [--keys 100000]
       [--sync-keys 5000000] [--value 100] [--sync-threads 2] [--skip-cost] [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import datetime
import os
import random
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transactions_side_by_side import blast, in_batches, resp, start, stop  # noqa: E402


def info(port, section):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(resp("INFO", section))
        data = b""
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
            if data.startswith(b"$"):
                n = int(data[1:data.index(b"\r\n")])
                if len(data) >= data.index(b"\r\n") + 2 + n:
                    break
    out = {}
    for line in data.decode(errors="replace").splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def command(port, *args):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(resp(*args))
        return s.recv(1 << 16)


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def wait_synced(master_port, replica_port, timeout=600, keys=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            r = info(replica_port, "replication")
            if r.get("master_link_status") == "up" and r.get("master_sync_in_progress") == "0":
                if keys is None:
                    m = info(master_port, "replication")
                    if r.get("slave_repl_offset") == m.get("master_repl_offset"):
                        return
                else:
                    ks = info(replica_port, "keyspace").get("db0", "keys=0")
                    if int(ks.split(",")[0].split("=")[1]) >= keys:
                        return
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    raise RuntimeError("the replica did not sync in %d s" % timeout)


def set_batches(n, keys, value, batch=16, seed=1):
    rnd = random.Random(seed)
    v = b"x" * value
    return in_batches((resp("SET", "key:%d" % rnd.randrange(keys), v) for _ in range(n)), batch)


def master_cost(kind, sets, keys, value):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port = start(kind, args, cpus="0")
    try:
        batches = set_batches(sets, keys, value)
        blast(port, batches[: len(batches) // 4], p.pid)  # warm: every key exists
        cpu, _ = blast(port, batches, p.pid)
        alone = sets / cpu
        rargs = ["--replicaof", "127.0.0.1 %d" % port]
        if kind == "strata":
            rargs += ["--threads", "1"]
        r, rport = start(kind, rargs, cpus="1")
        try:
            wait_synced(port, rport, timeout=120)
            cpu, _ = blast(port, batches, p.pid)
            with_replica = sets / cpu
            wait_synced(port, rport, timeout=120)
        finally:
            stop(r)
        return alone, with_replica
    finally:
        stop(p)


def load(port, pid, n, value):
    v = b"x" * value
    step = 1000
    for first in range(0, n, 100000):
        reqs = (resp("SET", "key:%d" % i, v) for i in range(first, min(n, first + 100000)))
        blast(port, in_batches(reqs, step), pid)


def full_resync(kind, n, value, threads):
    # redis-server waits repl-diskless-sync-delay (5 s by default) for more replicas
    # before a diskless transfer starts; strata starts at once. The wait is not the
    # transfer's cost, so the reference runs without it.
    args = ["--threads", str(threads)] if kind == "strata" else [
        "--repl-diskless-sync-delay", "0"]
    p, port = start(kind, args)
    try:
        load(port, p.pid, n, value)
        used = int(info(port, "memory")["used_memory"])
        rss0 = rss_bytes(p.pid)
        stop_writer = threading.Event()
        peak = [rss0]

        def writer():
            v = b"y" * value
            rnd = random.Random(3)
            with socket.create_connection(("127.0.0.1", port)) as s:
                while not stop_writer.is_set():
                    batch = b"".join(resp("SET", "key:%d" % rnd.randrange(n), v)
                                     for _ in range(100))
                    s.sendall(batch)
                    got = 0
                    while got < 100:
                        got += s.recv(1 << 16).count(b"+OK")
                    peak[0] = max(peak[0], rss_bytes(p.pid))
                    time.sleep(0.002)

        t = threading.Thread(target=writer)
        t.start()
        rargs = ["--replicaof", "127.0.0.1 %d" % port]
        if kind == "strata":
            rargs += ["--threads", str(threads)]
        t0 = time.monotonic()
        r, rport = start(kind, rargs)
        try:
            wait_synced(port, rport, timeout=1200, keys=n)
            seconds = time.monotonic() - t0
        finally:
            stop_writer.set()
            t.join()
            stop(r)
        if kind == "redis":
            extra = int(info(port, "persistence").get("rdb_last_cow_size", "0"))
        else:
            extra = max(0, peak[0] - rss0)
        return seconds, extra, used
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=1000000)
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--sync-keys", type=int, default=5000000)
    ap.add_argument("--value", type=int, default=100)
    ap.add_argument("--sync-threads", type=int, default=2,
                    help="strata's --threads on the master and the replica of the full resync")
    ap.add_argument("--skip-cost", action="store_true",
                    help="measure the full resync only")
    ap.add_argument("--out")
    a = ap.parse_args()
    lines = ["# Replication side by side", "",
             "%s, `bench/replication_side_by_side.py --sets %d --keys %d --sync-keys %d "
             "--value %d --sync-threads %d%s`, %d CPUs" % (
                 datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), a.sets, a.keys, a.sync_keys,
                 a.value, a.sync_threads, " --skip-cost" if a.skip_cost else "",
                 os.cpu_count()), ""]
    if not a.skip_cost:
        lines += [
             "## Cost to the master (SET, pipeline 16, master alone on CPU 0)", "",
             "| server | SETs per CPU-second alone | with one replica | kept | target |",
             "|---|---|---|---|---|"]
    for kind in () if a.skip_cost else ("redis", "strata"):
        alone, with_r = master_cost(kind, a.sets, a.keys, a.value)
        lines.append("| %s | %.0f | %.0f | %.0f%% | %s |" % (
            kind, alone, with_r, 100 * with_r / alone, ">= 85%" if kind == "strata" else ""))
        print(lines[-1], flush=True)
    lines += ["", "## Full resync of %d keys x %d B, writes running (strata --threads %d)" % (
        a.sync_keys, a.value, a.sync_threads), "",
              "| server | seconds | master's extra memory | of the dataset |", "|---|---|---|---|"]
    res = {}
    for kind in ("redis", "strata"):
        seconds, extra, used = full_resync(kind, a.sync_keys, a.value, a.sync_threads)
        res[kind] = seconds
        lines.append("| %s | %.1f | %.1f MB | %.1f%% |" % (kind, seconds, extra / 1e6,
                                                            100.0 * extra / used))
        print(lines[-1], flush=True)
    lines += ["", "strata / redis time: %.2fx (target <= 0.5x)" % (res["strata"] / res["redis"]),
              "", "redis-server's extra memory is the fork's copy-on-write (INFO persistence "
              "rdb_last_cow_size); strata's is its peak RSS during the resync over its RSS "
              "before (no fork: the snapshot captures what writes are about to change)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
