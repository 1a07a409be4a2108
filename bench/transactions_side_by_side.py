#!/usr/bin/python3
"""Transactions side by side: MULTI/EXEC per core against redis-server, and the cost of a
transaction whose keys sit on different shards.

  1. Per core: each server alone on CPU 0 (strata --threads 1), a pipelined raw-socket
     client on CPU 1 sends TXNS transactions of 5 commands
        MULTI; SET k:A v; INCR c:B; GET k:C; LPUSH l:D x; LTRIM l:D 0 9; EXEC
     over KEYS random keys, in batches of BATCH transactions (each batch is written, then
     its replies read to the end). The server's CPU time (utime + stime from /proc) per
     transaction gives transactions per CPU-second. The same 5 commands without
     MULTI/EXEC are measured too, as the floor; and EVALSHA of a 3-key script that reads
     and writes (GET, SET, INCRBY, INCR over keys of one {hashtag}). Target: strata >= 1.3x
     redis for MULTI/EXEC and for the script.
  2. Across shards (strata --threads 2, both workers on CPUs 0-1, the client sharing
     them): MULTI; INCR a; INCR b; INCR c; EXEC where the three keys hash to different
     shards, against the same with a {hashtag} that puts all three on one shard; and
     MGET / MSET of 10 keys spread over the shards against 10 keys of one hashtag, and
     the 3-key EVALSHA with its keys on both shards against the same on one shard.
     Reported as server CPU per operation, cross-shard / one shard.

Usage: bench/transactions_side_by_side.py [--txns 200000] [--keys 100000] [--batch 200]
           [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import atexit
import datetime
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRATA_BIN = os.environ.get("STRATA_BIN", os.path.join(ROOT, "build/server/strata-server"))
REDIS_BIN = os.environ.get("REDIS_BIN", "redis-server")
_procs = []
_tmp = []


def cleanup():
    for p in _procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    for d in _tmp:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(cleanup)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(kind, args=(), cpus=None):
    d = tempfile.mkdtemp(prefix="txn-bench-")
    _tmp.append(d)
    port = free_port()
    if kind == "redis":
        cmd = [REDIS_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", d] + list(args)
    else:
        cmd = [STRATA_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--dir", d] + list(args)
    if cpus:
        cmd = ["taskset", "-c", cpus] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _procs.append(p)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return p, port
        except OSError:
            pass
        time.sleep(0.01)
    raise RuntimeError("%s did not start" % kind)


def stop(p):
    p.terminate()
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resp(*parts):
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        p = p if isinstance(p, bytes) else str(p).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(p), p))
    return b"".join(out)


def blast(port, batches, pid):
    """Sends each pre-encoded batch followed by PING and reads up to its PONG; returns
    (server cpu seconds, wall seconds)."""
    ping = resp("PING")
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c0 = cpu_seconds(pid)
        t0 = time.monotonic()
        for b in batches:
            s.sendall(b + ping)
            tail = b""
            while not tail.endswith(b"+PONG\r\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    raise RuntimeError("connection closed")
                tail = (tail + chunk)[-16:]
        wall = time.monotonic() - t0
        return cpu_seconds(pid) - c0, wall


def in_batches(requests, batch):
    """The requests joined into pipelined batches of `batch` each."""
    requests = list(requests)
    return [b"".join(requests[i:i + batch]) for i in range(0, len(requests), batch)]


def ratio_report(title, cmd, rows, redis_vals, strata_vals, out=None):
    """A side-by-side table (one row per (measure, target) in rows, with redis-server's
    and strata's figures), printed and, with out, written there."""
    lines = ["# " + title, "",
             "%s, %s" % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cmd), "",
             "| measure | redis-server | strata --threads 1 | strata / redis | target |",
             "|---|---|---|---|---|"]
    for (name, target), rv, sv in zip(rows, redis_vals, strata_vals):
        lines.append("| %s | %.0f | %.0f | %.2fx | %s |" % (name, rv, sv, sv / rv, target))
    lines += ["", "CPU = the server's utime + stime, each server alone on CPU 0, the client on "
              "CPU 1."]
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


def txn5_batches(n, keys, batch, wrap):
    rnd = random.Random(7)

    def one():
        a, b, c, d = (rnd.randrange(keys) for _ in range(4))
        cmds = [resp("SET", "k:%d" % a, "v" * 16), resp("INCR", "c:%d" % b),
                resp("GET", "k:%d" % c), resp("LPUSH", "l:%d" % d, "x"),
                resp("LTRIM", "l:%d" % d, 0, 9)]
        if wrap:
            cmds = [resp("MULTI")] + cmds + [resp("EXEC")]
        return b"".join(cmds)

    return in_batches((one() for _ in range(n)), batch)


# A 3-key script that reads and writes: moves an amount between two counters and bumps a
# third (a rate limiter's or a transfer's shape).
SCRIPT3 = ("local a = tonumber(redis.call('GET', KEYS[1]) or '0') "
           "redis.call('SET', KEYS[1], a - 1) "
           "redis.call('INCRBY', KEYS[2], 1) "
           "return redis.call('INCR', KEYS[3])")


def script3_batches(n, keys, batch, sha):
    rnd = random.Random(11)

    def one():
        # Three keys of one {hashtag}: one shard, as a cluster would require too.
        t = rnd.randrange(keys)
        return resp("EVALSHA", sha, 3, "{a%d}x" % t, "{a%d}y" % t, "{a%d}z" % t)

    return in_batches((one() for _ in range(n)), batch)


def per_core(kind, txns, keys, batch):
    p, port = start(kind, ["--threads", "1"] if kind == "strata" else [], cpus="0")
    try:
        blast(port, txn5_batches(2000, keys, batch, True), p.pid)  # warm up
        rows = {}
        for name, wrap in (("MULTI/EXEC of 5", True), ("the 5 commands alone", False)):
            cpu, wall = blast(port, txn5_batches(txns, keys, batch, wrap), p.pid)
            rows[name] = (txns / cpu if cpu > 0 else float("inf"), txns / wall)
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(resp("SCRIPT", "LOAD", SCRIPT3))
            sha = s.recv(1024).split(b"\r\n")[1].decode()
        blast(port, script3_batches(2000, keys, batch, sha), p.pid)
        cpu, wall = blast(port, script3_batches(txns, keys, batch, sha), p.pid)
        rows["EVALSHA of a 3-key script"] = (txns / cpu if cpu > 0 else float("inf"), txns / wall)
        return rows
    finally:
        stop(p)


def shard_of(port, key):
    """The shard strata keeps key on: set it and see which INFO memory mem_shard_N line
    gains a key (the script then needs no copy of the server's hash)."""
    import redis
    c = redis.Redis(port=port)
    def counts():
        info = c.info("memory")
        return {k: v["keys"] for k, v in info.items() if k.startswith("mem_shard_")}
    before = counts()
    c.set(key, 0)
    after = counts()
    c.delete(key)
    c.close()
    return [k for k in after if after[k] != before.get(k)][0]


def spread_keys(port, prefix, n):
    """n keys covering every shard as evenly as possible."""
    by_shard = {}
    i = 0
    while sum(len(v) for v in by_shard.values()) < n * 4:
        k = "%s%d" % (prefix, i)
        by_shard.setdefault(shard_of(port, k), []).append(k)
        i += 1
    out = []
    while len(out) < n:
        for v in by_shard.values():
            if v and len(out) < n:
                out.append(v.pop())
    return out


def cross_shard(txns, batch):
    p, port = start("strata", ["--threads", "2"], cpus="0,1")
    try:
        # Spread keys cover both shards (with 2 shards, 3 keys cannot all differ); the {t}
        # hashtag puts every key on one shard.
        spread = spread_keys(port, "x:", 3)
        tagged = ["{t}x:%d" % i for i in range(3)]
        spread10 = spread_keys(port, "m:", 10)
        tagged10 = ["{t}m:%d" % i for i in range(10)]
        rows = {}

        def run(name, make):
            cpu, wall = blast(port, in_batches((make() for _ in range(txns)), batch), p.pid)
            rows[name] = cpu / txns * 1e6

        multi = lambda ks: lambda: b"".join(  # noqa: E731
            [resp("MULTI")] + [resp("INCR", k) for k in ks] + [resp("EXEC")])
        run("MULTI/EXEC of 3 INCR, keys on several shards", multi(spread))
        run("MULTI/EXEC of 3 INCR, one shard", multi(tagged))
        run("MGET of 10, several shards", lambda: resp("MGET", *spread10))
        run("MGET of 10, one shard", lambda: resp("MGET", *tagged10))
        run("MSET of 10, several shards",
            lambda: resp("MSET", *[x for k in spread10 for x in (k, "v")]))
        run("MSET of 10, one shard", lambda: resp("MSET", *[x for k in tagged10 for x in (k, "v")]))
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(resp("SCRIPT", "LOAD", SCRIPT3))
            sha = s.recv(1024).split(b"\r\n")[1].decode()
        # The first spread call teaches the server that the script touches only its KEYS:
        # the one-shard calls then run as one step on their shard.
        run("EVALSHA of a 3-key script, keys on several shards",
            lambda: resp("EVALSHA", sha, 3, *spread))
        run("EVALSHA of a 3-key script, one shard", lambda: resp("EVALSHA", sha, 3, *tagged))
        return rows
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--txns", type=int, default=200000)
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--out")
    a = ap.parse_args()
    lines = ["# Transactions side by side", "",
             "`%s`, %s" % (" ".join(["bench/transactions_side_by_side.py"] + sys.argv[1:]),
                           datetime.datetime.now().strftime("%Y-%m-%d %H:%M")), "",
             "## Per core (server on CPU 0, --threads 1; client on CPU 1)", "",
             "| load | strata txn/cpu-s | redis txn/cpu-s | ratio | strata txn/s | redis txn/s |",
             "|---|---|---|---|---|---|"]
    # Alternate the order to spread drift.
    s1 = per_core("strata", a.txns, a.keys, a.batch)
    r1 = per_core("redis", a.txns, a.keys, a.batch)
    r2 = per_core("redis", a.txns, a.keys, a.batch)
    s2 = per_core("strata", a.txns, a.keys, a.batch)
    for name in s1:
        s = max(s1[name], s2[name])
        r = max(r1[name], r2[name])
        lines.append("| %s | %.0f | %.0f | %.2f | %.0f | %.0f |" %
                     (name, s[0], r[0], s[0] / r[0], s[1], r[1]))
    lines += ["", "## Across shards (strata --threads 2 on CPUs 0-1, client sharing them)", "",
              "| load | server cpu us/op |", "|---|---|"]
    rows = cross_shard(a.txns // 2, a.batch)
    for name, v in rows.items():
        lines.append("| %s | %.2f |" % (name, v))
    keys = list(rows)
    lines += ["", "Cross-shard / one shard: MULTI/EXEC %.2f, MGET %.2f, MSET %.2f, EVALSHA %.2f" %
              (rows[keys[0]] / rows[keys[1]], rows[keys[2]] / rows[keys[3]],
               rows[keys[4]] / rows[keys[5]], rows[keys[6]] / rows[keys[7]])]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
