#!/usr/bin/python3
"""Streams side by side with redis-server: XADD and XREADGROUP per core, and memory.

Each server runs alone on CPU 0 (strata --threads 1); a pipelined raw-socket client on
CPU 1 sends batches of BATCH requests (each batch is written, then its replies read).
The server's CPU time (utime + stime from /proc) per operation gives operations per
CPU-second.

  1. XADD s * f1 v1 ... f5 v5 (10-byte random printable values, different for every
     entry), OPS times. Target: strata >= 1.3x redis.
  2. XREADGROUP GROUP g c COUNT 10 STREAMS s > over that stream (a group created at 0),
     until every entry was delivered once. Target: strata >= 1.3x redis.
  3. Memory: ENTRIES entries of the same shape in a fresh server; used_memory after the
     load less before, per entry. Target: strata <= 0.8x redis.

Usage: bench/streams_side_by_side.py [--ops 200000] [--entries 1000000] [--batch 100]
           [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import datetime
import os
import random
import socket
import string
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transactions_side_by_side import blast, in_batches, resp, start, stop  # noqa: E402

ALPHABET = (string.ascii_letters + string.digits).encode()


def xadd_requests(n, seed):
    rnd = random.Random(seed)
    for _ in range(n):
        parts = ["XADD", "s", "*"]
        for f in range(5):
            parts.append("f%d" % (f + 1))
            parts.append(bytes(rnd.choice(ALPHABET) for _ in range(10)))
        yield resp(*parts)


def used_memory(port):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(resp("INFO", "memory"))
        data = b""
        while b"used_memory:" not in data or not data.endswith(b"\r\n"):
            data += s.recv(1 << 16)
        for line in data.split(b"\r\n"):
            if line.startswith(b"used_memory:"):
                return int(line.split(b":")[1])
    raise RuntimeError("no used_memory")


def run_ops(kind, ops, batch):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port = start(kind, args, cpus="0")
    try:
        cpu, _ = blast(port, in_batches(xadd_requests(ops, 1), batch), p.pid)
        xadd = ops / cpu if cpu > 0 else float("inf")
        blast(port, [resp("XGROUP", "CREATE", "s", "g", "0")], p.pid)
        reads = ops // 10
        req = resp("XREADGROUP", "GROUP", "g", "c", "COUNT", 10, "STREAMS", "s", ">")
        cpu, _ = blast(port, in_batches((req for _ in range(reads)), batch), p.pid)
        xreadgroup = reads / cpu if cpu > 0 else float("inf")
        return xadd, xreadgroup
    finally:
        stop(p)


def run_memory(kind, entries, batch):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port = start(kind, args, cpus="0")
    try:
        before = used_memory(port)
        blast(port, in_batches(xadd_requests(entries, 2), batch), p.pid)
        return (used_memory(port) - before) / entries
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=200000)
    ap.add_argument("--entries", type=int, default=1000000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--out")
    a = ap.parse_args()
    r_add, r_read = run_ops("redis", a.ops, a.batch)
    s_add, s_read = run_ops("strata", a.ops, a.batch)
    r_mem = run_memory("redis", a.entries, a.batch)
    s_mem = run_memory("strata", a.entries, a.batch)
    cmd = "bench/streams_side_by_side.py --ops %d --entries %d --batch %d" % (
        a.ops, a.entries, a.batch)
    lines = ["# Streams side by side", "",
             "%s, %s" % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cmd), "",
             "| measure | redis-server | strata --threads 1 | strata / redis | target |",
             "|---|---|---|---|---|",
             "| XADD of 5 fields, ops per CPU-second | %.0f | %.0f | %.2fx | >= 1.3x |" % (
                 r_add, s_add, s_add / r_add),
             "| XREADGROUP COUNT 10, calls per CPU-second | %.0f | %.0f | %.2fx | >= 1.3x |" % (
                 r_read, s_read, s_read / r_read),
             "| bytes per entry (5 fields of 10 B, %d entries) | %.1f | %.1f | %.2fx | <= 0.8x |"
             % (a.entries, r_mem, s_mem, s_mem / r_mem),
             "",
             "CPU = the server's utime + stime, each server alone on CPU 0, the client on CPU 1.",
             "Bytes per entry = (used_memory after the load - before) / entries."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
