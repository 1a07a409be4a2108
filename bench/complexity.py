#!/usr/bin/env python3
"""How the cost of each variadic command and each big-collection operation grows with its
input, strata-server and redis-server side by side.

For each case and each size N (growing by 10x), one request with N arguments (or over a
collection of N elements) is timed from its first byte sent to its whole reply read, a
few times, median kept; the setup a case needs (keys to delete, a hash to read) is built
beforehand in chunks that are themselves small. Printed per case and size: the time on
each server, the ratio strata/redis, and the growth exponent log10(t(10N) / t(N)) per
server (1 is linear, 2 quadratic). A case slower than --max-ratio x Redis at its largest
size, or growing with an exponent above --max-exponent, is flagged; --check makes that
an exit status of 1.

Usage (from the repository root, after scripts/build):
    /usr/bin/python3 bench/complexity.py                         # every case, 2k..200k
    /usr/bin/python3 bench/complexity.py --sizes 1000,10000 --cases mset,hset
    /usr/bin/python3 bench/complexity.py --big                   # also the 2M-argument request

Results: a table on stdout, and bench/results/<date>-<label>.csv and .md with the command
line and the machine.
"""
import argparse
import math
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "published"))
import benchlib  # noqa: E402
from benchlib import BenchError, Resp, RespError, log  # noqa: E402

CHUNK = 5000  # arguments per setup request


def enc(args):
    """One RESP request from a list of bytes/str/int arguments."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n" % len(a))
        out.append(a)
        out.append(b"\r\n")
    return b"".join(out)


def keys(n, prefix="k:"):
    return [("%s%d" % (prefix, i)).encode() for i in range(n)]


def fields(n, prefix="f:"):
    return [("%s%d" % (prefix, i)).encode() for i in range(n)]


def in_chunks(c, head, items, per=1):
    """Sends head + items in requests of at most CHUNK arguments (per = items per group)."""
    step = max(per, (CHUNK // per) * per)
    for i in range(0, len(items), step):
        r = c.cmd(*(head + items[i:i + step]))
        if isinstance(r, RespError):
            raise BenchError("setup %s: %s" % (head[0], r))


def pairs(ks, value=b"v"):
    out = []
    for k in ks:
        out += [k, value]
    return out


def scored(ms):
    out = []
    for i, m in enumerate(ms):
        out += [str(i).encode(), m]
    return out


# Each case: (name, setup(client, n) or None, request(n) -> list of arguments).
def _setup_strings(c, n):
    in_chunks(c, [b"MSET"], pairs(keys(n)), per=2)


def _setup_hash(c, n):
    in_chunks(c, [b"HSET", b"h"], pairs(fields(n)), per=2)


def _setup_set(c, n):
    in_chunks(c, [b"SADD", b"s"], fields(n))


def _setup_list(c, n):
    in_chunks(c, [b"RPUSH", b"l"], fields(n))


def _setup_zset(c, n):
    in_chunks(c, [b"ZADD", b"z"], scored(fields(n)), per=2)


def _setup_two_sets(c, n):
    in_chunks(c, [b"SADD", b"s1"], fields(n))
    in_chunks(c, [b"SADD", b"s2"], fields(n)[n // 2:] + fields(n // 2, "g:"))


def _setup_two_zsets(c, n):
    in_chunks(c, [b"ZADD", b"z1"], scored(fields(n)), per=2)
    in_chunks(c, [b"ZADD", b"z2"], scored(fields(n)[n // 2:] + fields(n // 2, "g:")), per=2)


def _setup_small_sets(c, n):
    for i in range(0, n, CHUNK):
        batch = b"".join(enc([b"SADD", k, b"a", b"b"]) for k in keys(n)[i:i + CHUNK])
        c.sock.sendall(batch)
        for _ in range(min(CHUNK, n - i)):
            c.read()


CASES = [
    # variadic commands: one request of N arguments (or N pairs)
    ("mset", None, lambda n: [b"MSET"] + pairs(keys(n))),
    ("msetnx", None, lambda n: [b"MSETNX"] + pairs(keys(n))),
    ("mget", _setup_strings, lambda n: [b"MGET"] + keys(n)),
    ("del", _setup_strings, lambda n: [b"DEL"] + keys(n)),
    ("unlink", _setup_strings, lambda n: [b"UNLINK"] + keys(n)),
    ("exists", _setup_strings, lambda n: [b"EXISTS"] + keys(n)),
    ("touch", _setup_strings, lambda n: [b"TOUCH"] + keys(n)),
    ("hset", None, lambda n: [b"HSET", b"h"] + pairs(fields(n))),
    ("hmget", _setup_hash, lambda n: [b"HMGET", b"h"] + fields(n)),
    ("hdel", _setup_hash, lambda n: [b"HDEL", b"h"] + fields(n)),
    ("sadd", None, lambda n: [b"SADD", b"s"] + fields(n)),
    ("srem", _setup_set, lambda n: [b"SREM", b"s"] + fields(n)),
    ("smismember", _setup_set, lambda n: [b"SMISMEMBER", b"s"] + fields(n)),
    ("rpush", None, lambda n: [b"RPUSH", b"l"] + fields(n)),
    ("lpush", None, lambda n: [b"LPUSH", b"l"] + fields(n)),
    ("zadd", None, lambda n: [b"ZADD", b"z"] + scored(fields(n))),
    ("zrem", _setup_zset, lambda n: [b"ZREM", b"z"] + fields(n)),
    ("zmscore", _setup_zset, lambda n: [b"ZMSCORE", b"z"] + fields(n)),
    ("sunion-keys", _setup_small_sets, lambda n: [b"SUNION"] + keys(n)),
    ("sunionstore-keys", _setup_small_sets, lambda n: [b"SUNIONSTORE", b"dst"] + keys(n)),
    # operations on one collection of N elements
    ("hgetall", _setup_hash, lambda n: [b"HGETALL", b"h"]),
    ("smembers", _setup_set, lambda n: [b"SMEMBERS", b"s"]),
    ("lrange", _setup_list, lambda n: [b"LRANGE", b"l", 0, -1]),
    ("lrem", _setup_list, lambda n: [b"LREM", b"l", 0, b"absent"]),
    ("lpos", _setup_list, lambda n: [b"LPOS", b"l", b"absent"]),
    ("lpop-count", _setup_list, lambda n: [b"LPOP", b"l", n]),
    ("zrange", _setup_zset, lambda n: [b"ZRANGE", b"z", 0, -1, b"WITHSCORES"]),
    ("zrangebyscore", _setup_zset, lambda n: [b"ZRANGEBYSCORE", b"z", b"-inf", b"+inf"]),
    ("zpopmin-count", _setup_zset, lambda n: [b"ZPOPMIN", b"z", n]),
    ("spop-count", _setup_set, lambda n: [b"SPOP", b"s", n]),
    ("sinter", _setup_two_sets, lambda n: [b"SINTER", b"s1", b"s2"]),
    ("sinterstore", _setup_two_sets, lambda n: [b"SINTERSTORE", b"d", b"s1", b"s2"]),
    ("sdiff", _setup_two_sets, lambda n: [b"SDIFF", b"s1", b"s2"]),
    ("zunionstore", _setup_two_zsets, lambda n: [b"ZUNIONSTORE", b"d", 2, b"z1", b"z2"]),
    ("zinterstore", _setup_two_zsets, lambda n: [b"ZINTERSTORE", b"d", 2, b"z1", b"z2"]),
    ("sort", _setup_list, lambda n: [b"SORT", b"l", b"ALPHA"]),
    ("del-hash", _setup_hash, lambda n: [b"DEL", b"h"]),
    ("del-zset", _setup_zset, lambda n: [b"DEL", b"z"]),
]
CASE_NAMES = [c[0] for c in CASES]

# The 2M-argument request: MSET of 1M pairs, and one RPUSH of 2M elements.
BIG_CASES = [
    ("mset-1M-pairs", None, lambda n: [b"MSET"] + pairs(keys(1000000))),
    ("rpush-2M", None, lambda n: [b"RPUSH", b"l"] + fields(2000000)),
]


class ReplyScanner:
    """Finds the end of one RESP reply as its bytes arrive, in time linear in its size
    (nothing is decoded; a reply of millions of elements costs the client little, so the
    timing is the server's)."""

    AGGREGATES = b"*%~>"

    def __init__(self):
        self.buf = bytearray()
        self.pos = 0
        self.pending = [1]  # elements still due at each nesting level
        self.first = None

    def feed(self, data):
        """Appends data; True once the whole reply is in."""
        self.buf += data
        buf = self.buf
        while self.pending:
            eol = buf.find(b"\r\n", self.pos)
            if eol < 0:
                return False
            kind = buf[self.pos:self.pos + 1]
            if self.first is None:
                self.first = bytes(buf[self.pos:eol])
            if kind in (b"$", b"=", b"!"):
                n = int(buf[self.pos + 1:eol])
                end = eol + 2 + (n + 2 if n >= 0 else 0)
                if end > len(buf):
                    return False
                self.pos = end
                self._done()
            elif kind and kind in self.AGGREGATES:
                n = int(buf[self.pos + 1:eol])
                self.pos = eol + 2
                if kind == b"%":
                    n *= 2
                if n > 0:
                    self.pending.append(n)
                else:
                    self._done()
            else:
                self.pos = eol + 2
                self._done()
        return True

    def _done(self):
        while self.pending:
            self.pending[-1] -= 1
            if self.pending[-1] > 0:
                return
            self.pending.pop()


def time_request(c, payload, timeout):
    """Seconds from the first byte of payload sent to its whole reply read."""
    c.sock.settimeout(timeout)
    scanner = ReplyScanner()
    t0 = time.perf_counter()
    c.sock.sendall(payload)
    done = scanner.feed(c.buf)
    c.buf = b""
    while not done:
        chunk = c.sock.recv(1 << 20)
        if not chunk:
            raise BenchError("the server closed the connection")
        done = scanner.feed(chunk)
    t = time.perf_counter() - t0
    if scanner.first.startswith(b"-"):
        raise BenchError("error reply: %s" % scanner.first.decode(errors="replace"))
    if scanner.pos != len(scanner.buf):
        raise BenchError("%d bytes after the reply" % (len(scanner.buf) - scanner.pos))
    return t


def measure(server, case, n, runs, timeout):
    name, setup, request = case
    payload = enc(request(n))
    times = []
    for _ in range(runs):
        c = server.client(timeout=timeout)
        try:
            c.cmd("FLUSHALL")
            if setup is not None:
                setup(c, n)
            times.append(time_request(c, payload, timeout))
        except (OSError, socket.timeout) as e:
            raise BenchError("%s n=%d on %s: %s" % (name, n, server.kind, e))
        finally:
            c.close()
    return benchlib.median(times)


def exponent(t_small, t_big, factor):
    if t_small <= 0 or t_big <= 0:
        return float("nan")
    return math.log(t_big / t_small) / math.log(factor)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--strata-bin", default=os.path.join(benchlib.ROOT, "build", "server",
                                                        "strata-server"))
    p.add_argument("--redis-bin", default="redis-server")
    p.add_argument("--threads", type=int, default=2, help="strata worker threads (2)")
    p.add_argument("--sizes", default="2000,20000,200000",
                   help="comma-separated N, each 10x the one before (2000,20000,200000)")
    p.add_argument("--cases", default="all", help="comma-separated case names, or all")
    p.add_argument("--big", action="store_true",
                   help="also time the 2M-argument requests (1M-pair MSET, 2M-element RPUSH)")
    p.add_argument("--runs", type=int, default=3, help="timings per case and size (median)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    p.add_argument("--max-ratio", type=float, default=3.0)
    p.add_argument("--max-exponent", type=float, default=1.5)
    p.add_argument("--check", action="store_true", help="exit 1 when a case is flagged")
    p.add_argument("--strata-cpus", default="0-1", help="taskset CPUs for strata (0-1)")
    p.add_argument("--redis-cpus", default="0", help="taskset CPUs for redis (0)")
    p.add_argument("--label", default="complexity")
    a = p.parse_args()

    sizes = [int(x) for x in a.sizes.split(",") if x]
    if not sizes or any(s <= 0 for s in sizes):
        p.error("--sizes must be positive integers")
    for i in range(1, len(sizes)):
        if sizes[i] != sizes[i - 1] * 10:
            p.error("--sizes must grow by 10x (got %s)" % a.sizes)
    cases = CASES if a.cases == "all" else []
    if a.cases != "all":
        for name in a.cases.split(","):
            found = [c for c in CASES + BIG_CASES if c[0] == name]
            if not found:
                p.error("unknown case %r (cases: %s)" % (name, ", ".join(CASE_NAMES)))
            cases += found
    benchlib.check_cpus("--strata-cpus", a.strata_cpus)
    benchlib.check_cpus("--redis-cpus", a.redis_cpus)
    strata_bin = benchlib.resolve_bin(a.strata_bin, "strata-server")
    redis_bin = benchlib.resolve_bin(a.redis_bin, "redis-server")
    benchlib.install_cleanup()

    scratch = tempfile.mkdtemp(prefix="strata-complexity-")
    servers = [
        benchlib.Server("strata", strata_bin, a.strata_cpus, scratch, threads=a.threads),
        benchlib.Server("redis", redis_bin, a.redis_cpus, scratch),
    ]
    rows = []
    flagged = []
    try:
        for s in servers:
            s.start()
        plan = [(c, [0] if c in BIG_CASES else sizes) for c in cases]
        if a.big:
            plan += [(c, [0]) for c in BIG_CASES if c not in cases]
        for case, case_sizes in plan:
            t = {}
            for n in case_sizes:
                for s in servers:
                    t[(s.kind, n)] = measure(s, case, n, a.runs, a.timeout)
                shown = n if n else len(case[2](0)) - 1
                row = {"case": case[0], "n": shown,
                       "strata_ms": t[("strata", n)] * 1e3, "redis_ms": t[("redis", n)] * 1e3}
                row["ratio"] = row["strata_ms"] / row["redis_ms"] if row["redis_ms"] else 0
                prev = n // 10
                if n > 0 and ("strata", prev) in t:
                    row["strata_exp"] = exponent(t[("strata", prev)], t[("strata", n)], 10)
                    row["redis_exp"] = exponent(t[("redis", prev)], t[("redis", n)], 10)
                rows.append(row)
                log("%-18s n=%-8d strata %9.2f ms  redis %9.2f ms  ratio %5.2f%s" % (
                    case[0], shown, row["strata_ms"], row["redis_ms"], row["ratio"],
                    "  exp %.2f/%.2f" % (row["strata_exp"], row["redis_exp"])
                    if "strata_exp" in row else ""))
            last = rows[-1]
            reasons = []
            if last["ratio"] > a.max_ratio:
                reasons.append("%.1fx redis" % last["ratio"])
            if last.get("strata_exp", 0) > a.max_exponent:
                reasons.append("exponent %.2f" % last["strata_exp"])
            if reasons:
                flagged.append("%s (n=%d): %s" % (case[0], last["n"], ", ".join(reasons)))
    finally:
        for s in servers:
            s.stop()

    header = ["case", "N", "strata ms", "redis ms", "strata/redis", "strata exponent",
              "redis exponent"]
    table = [[r["case"], r["n"], benchlib.fmt(r["strata_ms"], 2), benchlib.fmt(r["redis_ms"], 2),
              benchlib.fmt(r["ratio"], 2), benchlib.fmt(r.get("strata_exp"), 2),
              benchlib.fmt(r.get("redis_exp"), 2)] for r in rows]
    md_table = benchlib.md_table(header, table)
    print(md_table)
    if flagged:
        print("\nflagged (ratio > %.1f or exponent > %.2f):" % (a.max_ratio, a.max_exponent))
        for f in flagged:
            print("  " + f)

    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = os.path.join(benchlib.RESULTS_DIR, "%s-%s" % (stamp, a.label))
    with open(base + ".csv", "w") as f:
        f.write(",".join(header) + "\n")
        for r in table:
            f.write(",".join(str(x) for x in r) + "\n")
    info = benchlib.machine_info()
    with open(base + ".md", "w") as f:
        f.write("# Cost growth of variadic commands and big-collection operations (%s)\n\n" %
                stamp)
        f.write("Command:\n\n```\n%s\n```\n\n" % benchlib.command_line())
        f.write("strata %d worker threads on CPUs %s, redis-server on CPU %s; each request "
                "timed from its first byte sent to its whole reply, median of %d; exponent "
                "= log10(t(10N)/t(N)).\n\n" % (a.threads, a.strata_cpus, a.redis_cpus, a.runs))
        f.write(benchlib.md_table(["setting", "value"], [[k, v] for k, v in info.items()]))
        f.write("\n\n" + md_table + "\n")
        if flagged:
            f.write("\nFlagged (ratio > %.1f or exponent > %.2f at the largest N):\n\n" %
                    (a.max_ratio, a.max_exponent))
            for x in flagged:
                f.write("- %s\n" % x)
    print("\nresults: %s.csv %s.md" % (os.path.relpath(base, benchlib.ROOT),
                                        os.path.relpath(base, benchlib.ROOT)))
    return 1 if a.check and flagged else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        log("complexity: %s" % e)
        sys.exit(1)
