#!/usr/bin/python3
"""RDB interop side by side: strata-server and strata-dump against redis-server and
redis-cli, on the same data in one run.

  1. Writes a RESP file of KEYS `SET key:N <SIZE random printable bytes>` commands and
     times `redis-cli --pipe` of it into an empty redis-server (the restore baseline),
     then SAVEs: that dump.rdb, written by redis-server, is the file for what follows.
  2. Loading: times from process start until PING answers (not -LOADING) for
     redis-server on that dump.rdb and for strata-server --import-rdb (--threads
     THREADS), checking DBSIZE. Target: strata <= 0.5x redis.
  3. Restoring: times `strata-dump restore` of the file into an empty strata-server, and
     into an empty redis-server (reported too). Target: into strata <= 0.5x the
     redis-cli --pipe time.
  4. Dumping: times `strata-dump dump --from` the loaded redis-server against
     `redis-cli --rdb` of the same server. Target: <= 1.2x.
  5. DUMP and RESTORE per core: each server alone on CPU 0 (strata --threads 1), a
     pipelined raw-socket client on CPU 1 sends DUMP key:N for keys of the set, then
     RESTORE key:N 0 <its own payload> REPLACE, in batches of BATCH; the server's CPU time
     (utime + stime from /proc) per command gives ops per CPU-second. Target: strata >=
     1.3x redis for each.

Usage: bench/rdb_side_by_side.py [--keys 5000000] [--size 100] [--threads 2]
           [--ops 2000000] [--out FILE]
Environment: STRATA_BIN, STRATA_DUMP_BIN, REDIS_BIN, REDIS_CLI_BIN.
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

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRATA_BIN = os.environ.get("STRATA_BIN", os.path.join(ROOT, "build/server/strata-server"))
DUMP_BIN = os.environ.get("STRATA_DUMP_BIN",
                          os.path.join(ROOT, "build/tools/strata-dump/strata-dump"))
REDIS_BIN = os.environ.get("REDIS_BIN", "redis-server")
REDIS_CLI = os.environ.get("REDIS_CLI_BIN", "redis-cli")
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


def wait_ready(port, proc, timeout=600):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError("server exited: %s" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.005)
    raise RuntimeError("server not ready")


def start(kind, dir_, args=(), cpus=None):
    port = free_port()
    if kind == "redis":
        cmd = [REDIS_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", dir_] + list(args)
    else:
        cmd = [STRATA_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--dir", dir_] + list(args)
    if cpus:
        cmd = ["taskset", "-c", cpus] + cmd
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _procs.append(p)
    wait_ready(port, p)
    return p, port, time.monotonic() - t0


def stop(p):
    p.terminate()
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def timed(cmd, stdin=None):
    t0 = time.monotonic()
    subprocess.run(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.monotonic() - t0


def write_pipe_file(path, keys, size):
    rnd = random.Random(1)
    table = bytes(33 + (b % 94) for b in range(256))
    with open(path, "wb") as f:
        chunk = []
        for i in range(keys):
            k = b"key:%d" % i
            v = rnd.randbytes(size).translate(table)
            chunk.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, size, v))
            if len(chunk) == 10000:
                f.write(b"".join(chunk))
                chunk = []
        f.write(b"".join(chunk))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def blast(port, batches, pid):
    """Sends each pre-encoded batch followed by PING and waits for the PONG; returns
    (server cpu seconds, wall seconds)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c0, t0 = cpu_seconds(pid), time.monotonic()
    for b in batches:
        s.sendall(b + b"*1\r\n$4\r\nPING\r\n")
        buf = b""
        while not buf.endswith(b"+PONG\r\n"):
            buf = buf[-16:] + s.recv(1 << 20)
    c1, t1 = cpu_seconds(pid), time.monotonic()
    s.close()
    return c1 - c0, t1 - t0


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def per_core(kind, dir_, keys, ops, batch):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port, _ = start(kind, dir_, args, cpus="0")
    c = redis.Redis(port=port)
    n = min(keys, 100000)
    pl = c.pipeline(transaction=False)
    rnd = random.Random(2)
    for i in range(n):
        pl.set("key:%d" % i, rnd.randbytes(50).hex())
        if i % 10000 == 9999:
            pl.execute()
    pl.execute()
    payloads = [c.dump("key:%d" % i) for i in range(0, n, max(1, n // 1000))]
    dump_batches, restore_batches = [], []
    rounds = max(1, ops // batch)
    for r in range(rounds):
        base = (r * batch) % n
        dump_batches.append(b"".join(resp("DUMP", "key:%d" % ((base + j) % n))
                                     for j in range(batch)))
        restore_batches.append(b"".join(
            resp("RESTORE", "key:%d" % ((base + j) % n), 0, payloads[j % len(payloads)],
                 "REPLACE") for j in range(batch)))
    result = {}
    for name, batches in (("DUMP", dump_batches), ("RESTORE", restore_batches)):
        cpu, wall = blast(port, batches, p.pid)
        total = len(batches) * batch
        result[name] = (total / cpu if cpu > 0 else 0, total / wall)
    stop(p)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=5000000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ops", type=int, default=2000000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--out")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rdb-bench-")
    _tmp.append(work)
    rows = []

    def row(what, strata, redis_, target, note=""):
        ratio = strata / redis_ if redis_ else 0
        rows.append((what, strata, redis_, ratio, target, note))
        print("%-40s strata %9.3f  redis %9.3f  ratio %.2f  (target %s) %s" %
              (what, strata, redis_, ratio, target, note), flush=True)

    pipe = os.path.join(work, "pipe.resp")
    write_pipe_file(pipe, a.keys, a.size)
    rdir = os.path.join(work, "redis")
    os.makedirs(rdir)
    rp, rport, _ = start("redis", rdir)
    with open(pipe, "rb") as f:
        t_pipe = timed([REDIS_CLI, "-p", str(rport), "--pipe"], stdin=f)
    redis.Redis(port=rport).save()
    stop(rp)
    rdb = os.path.join(rdir, "dump.rdb")
    print("RDB written by redis-server: %d keys, %.1f MB" % (a.keys, os.path.getsize(rdb) / 1e6))

    # 2. loading
    rp, rport, t_load_redis = start("redis", rdir)
    sdir = os.path.join(work, "strata")
    os.makedirs(sdir)
    sp, sport, t_load_strata = start("strata", sdir,
                                     ["--threads", str(a.threads), "--import-rdb", rdb])
    assert redis.Redis(port=sport).dbsize() == a.keys
    assert redis.Redis(port=rport).dbsize() == a.keys
    stop(sp)
    row("load the RDB at startup (s)", t_load_strata, t_load_redis, "<= 0.5")

    # 4. dumping (redis is loaded)
    out1, out2 = os.path.join(work, "cli.rdb"), os.path.join(work, "tool.rdb")
    t_cli = timed([REDIS_CLI, "-p", str(rport), "--rdb", out1])
    t_tool = timed([DUMP_BIN, "dump", "--from", "127.0.0.1:%d" % rport, "-o", out2,
                    "--no-progress"])
    row("dump a live redis-server (s)", t_tool, t_cli, "<= 1.2", "(strata-dump / redis-cli --rdb)")
    stop(rp)

    # 3. restoring
    sdir2 = os.path.join(work, "strata2")
    os.makedirs(sdir2)
    sp, sport, _ = start("strata", sdir2, ["--threads", str(a.threads)])
    t_restore = timed([DUMP_BIN, "restore", rdb, "--to", "127.0.0.1:%d" % sport, "--no-progress"])
    assert redis.Redis(port=sport).dbsize() == a.keys
    stop(sp)
    row("restore the RDB into a server (s)", t_restore, t_pipe, "<= 0.5",
        "(strata-dump into strata / redis-cli --pipe into redis)")
    rdir2 = os.path.join(work, "redis2")
    os.makedirs(rdir2)
    rp, rport, _ = start("redis", rdir2)
    t_restore_r = timed([DUMP_BIN, "restore", rdb, "--to", "127.0.0.1:%d" % rport,
                         "--no-progress"])
    stop(rp)
    row("strata-dump restore into redis (s)", t_restore_r, t_pipe, "report",
        "(into redis-server / redis-cli --pipe)")

    # 5. per core
    for d in ("pc-s", "pc-r"):
        os.makedirs(os.path.join(work, d))
    s = per_core("strata", os.path.join(work, "pc-s"), a.keys, a.ops, a.batch)
    r = per_core("redis", os.path.join(work, "pc-r"), a.keys, a.ops, a.batch)
    for cmd in ("DUMP", "RESTORE"):
        rows.append(("%s ops per server CPU-second" % cmd, s[cmd][0], r[cmd][0],
                     s[cmd][0] / r[cmd][0], ">= 1.3", "wall ops/s %.0f / %.0f" % (s[cmd][1], r[cmd][1])))
        print("%-40s strata %9.0f  redis %9.0f  ratio %.2f  (target >= 1.3) wall %.0f / %.0f" %
              (cmd + " per CPU-second", s[cmd][0], r[cmd][0], s[cmd][0] / r[cmd][0],
               s[cmd][1], r[cmd][1]), flush=True)

    if a.out:
        with open(a.out, "a") as f:
            f.write("\n### RDB interop side by side (%s)\n\n" %
                    datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))
            f.write("`%s`, %d keys of %d B, strata --threads %d (per-core rows: one pinned "
                    "core each, --threads 1)\n\n" % (" ".join(sys.argv), a.keys, a.size, a.threads))
            f.write("| measure | strata | redis | ratio | target | |\n|---|---|---|---|---|---|\n")
            for what, sv, rv, ratio, target, note in rows:
                f.write("| %s | %.3f | %.3f | %.2f | %s | %s |\n" % (what, sv, rv, ratio, target, note))


if __name__ == "__main__":
    main()
