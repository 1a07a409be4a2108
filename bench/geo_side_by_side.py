#!/usr/bin/python3
"""Geo side by side with redis-server: GEOSEARCH BYRADIUS over 100k members, per core.

Each server runs alone on CPU 0 (strata --threads 1); a pipelined raw-socket client on
CPU 1 sends batches of BATCH requests (each batch is written, then its replies read).
The server's CPU time (utime + stime from /proc) per operation gives operations per
CPU-second. The key holds MEMBERS points spread evenly over 2 x 2 degrees around
(12.5, 41.9) (about 2.7 per km2); each search starts from a random point in there.

  1. GEOADD of one member, MEMBERS times (building the key).
  2. GEOSEARCH FROMLONLAT BYRADIUS 1 km (about 9 results). Target: strata >= 1.3x redis.
  3. GEOSEARCH FROMLONLAT BYRADIUS 5 km ASC COUNT 10 WITHDIST (the nearest ten of ~200).
     Target: >= 1.3x.
  4. GEOSEARCH FROMLONLAT BYRADIUS 5 km (about 210 results, unsorted). Target: >= 1.3x.

Usage: bench/geo_side_by_side.py [--members 100000] [--searches 20000] [--batch 50] [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transactions_side_by_side import (blast, in_batches, ratio_report, resp, start,  # noqa: E402
                                      stop)


def points(n, seed):
    rnd = random.Random(seed)
    return [("%.6f" % rnd.uniform(11.5, 13.5), "%.6f" % rnd.uniform(40.9, 42.9))
            for _ in range(n)]


def run(kind, members, searches, batch):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port = start(kind, args, cpus="0")
    try:
        pts = points(members, 1)
        cpu, _ = blast(port, in_batches((resp("GEOADD", "g", lon, lat, "m%d" % i)
                                         for i, (lon, lat) in enumerate(pts)), batch), p.pid)
        add = members / cpu if cpu > 0 else float("inf")
        centres = points(searches, 2)
        out = [add]
        for tail in (["BYRADIUS", "1", "km"],
                     ["BYRADIUS", "5", "km", "ASC", "COUNT", "10", "WITHDIST"],
                     ["BYRADIUS", "5", "km"]):
            reqs = (resp("GEOSEARCH", "g", "FROMLONLAT", lon, lat, *tail) for lon, lat in centres)
            cpu, _ = blast(port, in_batches(reqs, batch), p.pid)
            out.append(searches / cpu if cpu > 0 else float("inf"))
        return tuple(out)
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--members", type=int, default=100000)
    ap.add_argument("--searches", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--out")
    a = ap.parse_args()
    r = run("redis", a.members, a.searches, a.batch)
    s = run("strata", a.members, a.searches, a.batch)
    cmd = "bench/geo_side_by_side.py --members %d --searches %d --batch %d" % (
        a.members, a.searches, a.batch)
    rows = [("GEOADD of one member, calls per CPU-second", ""),
            ("GEOSEARCH BYRADIUS 1 km (~9 results), calls per CPU-second", ">= 1.3x"),
            ("GEOSEARCH BYRADIUS 5 km ASC COUNT 10 WITHDIST, calls per CPU-second", ">= 1.3x"),
            ("GEOSEARCH BYRADIUS 5 km (~210 results), calls per CPU-second", ">= 1.3x")]
    ratio_report("Geo side by side", cmd, rows, r, s, a.out)


if __name__ == "__main__":
    main()
