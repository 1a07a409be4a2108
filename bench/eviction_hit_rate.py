#!/usr/bin/env python3
"""Eviction hit rate at equal RAM: strata-server and redis-server side by side.

Both servers get the same maxmemory and policy (default 32 MB, allkeys-lru). Each is
loaded with KEYS = 5 x maxmemory / 100 keys of 100-byte random printable values, in key
order, far more than fits, so the policy decides what stays. Then a cache-aside load
reads keys drawn from a Gaussian centred on the middle key with stddev KEYS/20
(memtier's --key-pattern G:G): a GET, and on a miss a SET of the value (the cache
refill that makes the policy's choices matter). Reported per server: the hit rate over
the whole read phase and over its second half (steady state), the keys held at the end,
used_memory and evicted_keys.

Usage (from the repository root, after scripts/build):
    /usr/bin/python3 bench/eviction_hit_rate.py
    /usr/bin/python3 bench/eviction_hit_rate.py --maxmemory-mb 64 --policy allkeys-lfu

Results: a table on stdout, and bench/results/<date>-eviction-hit-rate-<policy>.md with
the command line and the machine.
"""
import argparse
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "published"))
import benchlib  # noqa: E402
from benchlib import BenchError, Resp, log  # noqa: E402

VALUE_SIZE = 100
BATCH = 500


def values_pool(n, seed):
    rnd = random.Random(seed)
    alphabet = bytes(range(33, 127))
    return [bytes(rnd.choice(alphabet) for _ in range(VALUE_SIZE)) for _ in range(n)]


def key(i):
    return b"key:%d" % i


def load(c, keys, pool):
    for start in range(0, keys, BATCH):
        end = min(keys, start + BATCH)
        c.sock.sendall(b"".join(Resp.encode(b"SET", key(i), pool[i % len(pool)])
                                for i in range(start, end)))
        for _ in range(start, end):
            r = c.read()
            if isinstance(r, benchlib.RespError):
                raise BenchError("SET failed while loading: %s" % r)


def read_phase(c, keys, requests, pool, seed):
    """Cache-aside Gaussian reads; returns (hits over all, hits over the second half)."""
    rnd = random.Random(seed)
    mu, sigma = keys / 2.0, keys / 20.0
    hits = hits_late = 0
    done = 0
    while done < requests:
        n = min(BATCH, requests - done)
        ids = []
        for _ in range(n):
            while True:
                x = int(rnd.gauss(mu, sigma))
                if 0 <= x < keys:
                    break
            ids.append(x)
        c.sock.sendall(b"".join(Resp.encode(b"GET", key(i)) for i in ids))
        misses = []
        for i in ids:
            r = c.read()
            if isinstance(r, benchlib.RespError):
                raise BenchError("GET failed: %s" % r)
            if r is None:
                misses.append(i)
        got = n - len(misses)
        hits += got
        if done >= requests // 2:
            hits_late += got
        if misses:
            c.sock.sendall(b"".join(Resp.encode(b"SET", key(i), pool[i % len(pool)])
                                    for i in misses))
            for _ in misses:
                r = c.read()
                if isinstance(r, benchlib.RespError):
                    raise BenchError("SET failed on refill: %s" % r)
        done += n
    return hits, hits_late


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--strata-bin", default="build/server/strata-server")
    p.add_argument("--redis-bin", default="redis-server")
    p.add_argument("--maxmemory-mb", type=int, default=32)
    p.add_argument("--policy", default="allkeys-lru")
    p.add_argument("--samples", type=int, default=5, help="maxmemory-samples (both)")
    p.add_argument("--load-factor", type=float, default=5.0,
                   help="bytes of values loaded, as a multiple of maxmemory")
    p.add_argument("--requests", type=int, default=400000)
    p.add_argument("--threads", type=int, default=1, help="strata worker threads")
    p.add_argument("--cpus", default="0", help="CPUs for the servers (taskset)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--label", default="")
    a = p.parse_args()
    benchlib.install_cleanup()
    limit = a.maxmemory_mb * 1024 * 1024
    keys = int(a.load_factor * limit / VALUE_SIZE)
    pool = values_pool(4096, a.seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="strata-hitrate-") as scratch:
        for kind, binary in (("strata", benchlib.resolve_bin(a.strata_bin, "strata-server")),
                             ("redis", benchlib.resolve_bin(a.redis_bin, "redis-server"))):
            extra = ["--maxmemory", str(limit), "--maxmemory-policy", a.policy,
                     "--maxmemory-samples", str(a.samples)]
            srv = benchlib.Server(kind, binary, a.cpus, os.path.join(scratch, kind),
                                  threads=a.threads, extra_args=extra)
            srv.start()
            try:
                c = srv.client(timeout=120)
                t0 = time.monotonic()
                load(c, keys, pool)
                load_s = time.monotonic() - t0
                after_load = int(c.cmd("DBSIZE"))
                t0 = time.monotonic()
                hits, hits_late = read_phase(c, keys, a.requests, pool, a.seed + 1)
                read_s = time.monotonic() - t0
                info = c.info()
                rows.append({
                    "server": kind,
                    "hit_rate": hits / a.requests,
                    "hit_rate_late": hits_late / (a.requests - a.requests // 2),
                    "keys_after_load": after_load,
                    "keys_end": int(c.cmd("DBSIZE")),
                    "used_memory": int(info["used_memory"]),
                    "evicted_keys": int(info["evicted_keys"]),
                    "load_s": load_s,
                    "read_s": read_s,
                })
                log("%s: hit rate %.4f (second half %.4f), %d keys" % (
                    kind, rows[-1]["hit_rate"], rows[-1]["hit_rate_late"], rows[-1]["keys_end"]))
                c.close()
            finally:
                srv.stop()
    s, r = rows
    table = benchlib.md_table(
        ["server", "hit rate", "hit rate, 2nd half", "keys after load", "keys at end",
         "used_memory", "evicted_keys", "load s", "reads s"],
        [[x["server"], "%.4f" % x["hit_rate"], "%.4f" % x["hit_rate_late"],
          str(x["keys_after_load"]), str(x["keys_end"]), str(x["used_memory"]),
          str(x["evicted_keys"]), "%.1f" % x["load_s"], "%.1f" % x["read_s"]] for x in rows])
    summary = ("strata/redis: hit rate %.3fx (second half %.3fx), keys held %.3fx" % (
        s["hit_rate"] / r["hit_rate"], s["hit_rate_late"] / r["hit_rate_late"],
        s["keys_end"] / r["keys_end"]))
    print(table)
    print(summary)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    label = a.label or "eviction-hit-rate-%s" % a.policy
    path = os.path.join("bench", "results", "%s-%s.md" % (stamp, label))
    with open(path, "w") as f:
        f.write("# Eviction hit rate at equal RAM (%s)\n\n" % a.policy)
        f.write("Command: `%s`\n\n" % benchlib.command_line())
        f.write("maxmemory %d MB on both, maxmemory-samples %d, %d keys of %d-byte random "
                "printable values loaded in key order (%.1fx maxmemory), then %d cache-aside "
                "reads (GET, SET on a miss) with Gaussian keys (mean keys/2, stddev "
                "keys/20); strata with %d thread(s); servers on CPUs %s.\n\n" % (
                    a.maxmemory_mb, a.samples, keys, VALUE_SIZE, a.load_factor, a.requests,
                    a.threads, a.cpus))
        f.write(table + "\n\n" + summary + "\n\n")
        f.write("Machine: %s\n" % benchlib.machine_info())
    print("results: %s" % path)


if __name__ == "__main__":
    try:
        main()
    except BenchError as e:
        print("eviction_hit_rate: %s" % e, file=sys.stderr)
        sys.exit(1)
