#!/usr/bin/python3
"""HyperLogLog side by side with redis-server: PFADD and PFCOUNT per core.

Each server runs alone on CPU 0 (strata --threads 1); a pipelined raw-socket client on
CPU 1 sends batches of BATCH requests (each batch is written, then its replies read).
The server's CPU time (utime + stime from /proc) per operation gives operations per
CPU-second.

  1. PFADD of one new element to one key, OPS times (the key turns dense early, as a
     real counter does). Target: strata >= 1.3x redis.
  2. PFADD of 10 elements to one of 1000 keys, OPS/10 times.
  3. PFCOUNT of two dense keys (their union: no cache, the registers are merged and
     counted every time), COUNTS times. Target: strata >= 1.3x redis.
  4. PFADD of 300 new elements to one of 50 dense keys, then PFCOUNT of it: 300 new
     elements always change a register, so every PFCOUNT recounts. Per pair.

Usage: bench/hll_side_by_side.py [--ops 300000] [--counts 20000] [--batch 100] [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transactions_side_by_side import (blast, in_batches, ratio_report, resp, start,  # noqa: E402
                                      stop)


def run(kind, ops, counts, batch):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port = start(kind, args, cpus="0")
    try:
        cpu, _ = blast(port, in_batches((resp("PFADD", "h", "e%d" % i) for i in range(ops)),
                                        batch), p.pid)
        add1 = ops / cpu if cpu > 0 else float("inf")
        reqs = (resp("PFADD", "k%d" % (i % 1000), *["x%d-%d" % (i, j) for j in range(10)])
                for i in range(ops // 10))
        cpu, _ = blast(port, in_batches(reqs, batch), p.pid)
        add10 = (ops // 10) / cpu if cpu > 0 else float("inf")

        blast(port, in_batches((resp("PFADD", "g", "g%d" % i) for i in range(100000)), batch),
              p.pid)
        cpu, _ = blast(port, in_batches((resp("PFCOUNT", "h", "g") for _ in range(counts)),
                                        batch), p.pid)
        union = counts / cpu if cpu > 0 else float("inf")
        # A new key each time: its register change always invalidates the cache.
        def pairs():
            for i in range(counts):
                yield resp("PFADD", "d%d" % (i % 50), *["p%d-%d" % (i, j) for j in range(300)])
                yield resp("PFCOUNT", "d%d" % (i % 50))
        cpu_pairs, _ = blast(port, in_batches(pairs(), batch), p.pid)
        recount = counts / cpu_pairs if cpu_pairs > 0 else float("inf")
        return add1, add10, union, recount
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=300000)
    ap.add_argument("--counts", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--out")
    a = ap.parse_args()
    r = run("redis", a.ops, a.counts, a.batch)
    s = run("strata", a.ops, a.counts, a.batch)
    cmd = "bench/hll_side_by_side.py --ops %d --counts %d --batch %d" % (a.ops, a.counts, a.batch)
    rows = [("PFADD of 1 element, ops per CPU-second", ">= 1.3x"),
            ("PFADD of 10 elements to 1000 keys, calls per CPU-second", ""),
            ("PFCOUNT of two dense keys (merged and counted), calls per CPU-second",
             ">= 1.3x"),
            ("PFADD of 300 + PFCOUNT (recounted) of a dense key, pairs per CPU-second",
             ">= 1.3x")]
    ratio_report("HyperLogLog side by side", cmd, rows, r, s, a.out)


if __name__ == "__main__":
    main()
