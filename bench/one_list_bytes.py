#!/usr/bin/python3
"""Bytes per element of one big list: strata-server vs redis-server, side by side.

Starts both servers on free loopback ports (persistence off), RPUSHes ELEMENTS random
printable elements of SIZE bytes (different for each element) into one list, 1000 per
command, and reports the growth of used_memory and RSS divided by the element count.

Usage: bench/one_list_bytes.py [--elements N] [--size S] [--label L]
Environment: STRATA_BIN, REDIS_BIN, THREADS (1).
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

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRINTABLE = bytes(range(33, 127))
TABLE = bytes(PRINTABLE[i % len(PRINTABLE)] for i in range(256))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(port, elements, size):
    c = redis.Redis(port=port)
    for _ in range(100):
        try:
            c.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    time.sleep(0.3)
    before = c.info("memory")
    pipe = c.pipeline(transaction=False)
    batch = 1000
    for i in range(0, elements, batch):
        raw = os.urandom(batch * size).translate(TABLE)
        pipe.rpush("biglist", *[raw[j * size:(j + 1) * size] for j in range(batch)])
        if (i // batch) % 50 == 49:
            pipe.execute()
    pipe.execute()
    time.sleep(0.5)
    after = c.info("memory")
    assert c.llen("biglist") == elements
    enc = c.object("encoding", "biglist")
    return (after["used_memory"] - before["used_memory"],
            after["used_memory_rss"] - before["used_memory_rss"], enc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=10000000)
    ap.add_argument("--size", type=int, default=10)
    ap.add_argument("--label", default="one-list")
    opts = ap.parse_args()
    strata_bin = os.environ.get("STRATA_BIN", os.path.join(ROOT, "build/server/strata-server"))
    redis_bin = os.environ.get("REDIS_BIN", "redis-server")
    threads = os.environ.get("THREADS", "1")
    tmp = tempfile.mkdtemp(prefix="one-list-")
    rows = []
    for name, cmd in (("strata", [strata_bin, "--threads", threads]),
                      ("redis", [redis_bin, "--daemonize", "no"])):
        port = free_port()
        p = subprocess.Popen(cmd + ["--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                    "--appendonly", "no", "--dir", tmp],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            used, rss, enc = measure(port, opts.elements, opts.size)
        finally:
            p.terminate()
            p.wait(10)
        rows.append((name, used, rss, enc))
        print("%-6s used %12d (%.2f B/element)  rss %12d (%.2f B/element)  %s" % (
            name, used, used / opts.elements, rss, rss / opts.elements, enc), flush=True)
    s, r = rows[0], rows[1]
    stamp = datetime.datetime.utcnow().strftime("%Y%m%d-%H%M%S")
    base = os.path.join(ROOT, "bench/results", "%s-%s" % (stamp, opts.label))
    with open(base + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["server", "elements", "size", "used_delta", "used_per_element",
                    "rss_delta", "rss_per_element", "encoding"])
        for name, used, rss, enc in rows:
            w.writerow([name, opts.elements, opts.size, used, "%.2f" % (used / opts.elements),
                        rss, "%.2f" % (rss / opts.elements), enc])
    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip()
    with open(base + ".md", "w") as f:
        f.write("# One list of %d elements of %d bytes: %s\n\n" % (opts.elements, opts.size, stamp))
        f.write("- command: `%s`\n" % shlex.join(["bench/one_list_bytes.py"] + sys.argv[1:]))
        f.write("- THREADS=%s; kernel %s; nproc %d; git %s\n\n" % (threads, os.uname().release,
                                                                os.cpu_count(), git))
        f.write("| server | bytes/element (used_memory) | bytes/element (RSS) | encoding |\n")
        f.write("|---|---:|---:|---|\n")
        for name, used, rss, enc in rows:
            f.write("| %s | %.2f | %.2f | %s |\n" % (name, used / opts.elements,
                                                    rss / opts.elements, enc))
        f.write("\nstrata/redis: %.2f (used_memory), %.2f (RSS)\n" % (s[1] / r[1], s[2] / r[2]))
    print("strata/redis: %.2f (used_memory), %.2f (RSS)" % (s[1] / r[1], s[2] / r[2]))
    print("results: %s.csv %s.md" % (base, base))


if __name__ == "__main__":
    main()
