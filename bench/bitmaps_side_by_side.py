#!/usr/bin/python3
"""Bitmaps side by side with redis-server: SETBIT and BITCOUNT per core over a 1 MB bitmap.

Each server runs alone on CPU 0 (strata --threads 1); a pipelined raw-socket client on
CPU 1 sends batches of BATCH requests (each batch is written, then its replies read).
The server's CPU time (utime + stime from /proc) per operation gives operations per
CPU-second.

  1. A 1 MB bitmap (SETBIT of its last bit), then SETBIT at OPS pseudo-random offsets
     inside it. Target: strata >= 1.3x redis.
  2. BITCOUNT of the whole bitmap, COUNTS times. Target: strata >= 1.3x redis.
  3. BITCOUNT over a 4 KB range of it (a page of flags), OPS times.

Usage: bench/bitmaps_side_by_side.py [--ops 300000] [--counts 3000] [--batch 100] [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transactions_side_by_side import (blast, in_batches, ratio_report, resp, start,  # noqa: E402
                                      stop)

BITS = 8 * 1024 * 1024  # 1 MB


def setbits(n):
    x = 12345
    for _ in range(n):
        x = (x * 1103515245 + 12345) % (1 << 31)
        yield resp("SETBIT", "bm", x % BITS, 1)


def ranges(n):
    for i in range(n):
        start = (i * 4096) % (1024 * 1024 - 4096)
        yield resp("BITCOUNT", "bm", start, start + 4095)


def run(kind, ops, counts, batch):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port = start(kind, args, cpus="0")
    try:
        blast(port, [resp("SETBIT", "bm", BITS - 1, 1)], p.pid)
        cpu, _ = blast(port, in_batches(setbits(ops), batch), p.pid)
        setbit = ops / cpu if cpu > 0 else float("inf")
        cpu, _ = blast(port, in_batches((resp("BITCOUNT", "bm") for _ in range(counts)), batch),
                       p.pid)
        bitcount = counts / cpu if cpu > 0 else float("inf")
        cpu, _ = blast(port, in_batches(ranges(ops), batch), p.pid)
        ranged = ops / cpu if cpu > 0 else float("inf")
        return setbit, bitcount, ranged
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=300000)
    ap.add_argument("--counts", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--out")
    a = ap.parse_args()
    r = run("redis", a.ops, a.counts, a.batch)
    s = run("strata", a.ops, a.counts, a.batch)
    cmd = "bench/bitmaps_side_by_side.py --ops %d --counts %d --batch %d" % (
        a.ops, a.counts, a.batch)
    rows = [("SETBIT in a 1 MB bitmap, ops per CPU-second", ">= 1.3x"),
            ("BITCOUNT of the whole 1 MB, calls per CPU-second", ">= 1.3x"),
            ("BITCOUNT of a 4 KB range, calls per CPU-second", "")]
    ratio_report("Bitmaps side by side", cmd, rows, r, s, a.out)


if __name__ == "__main__":
    main()
