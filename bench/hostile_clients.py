#!/usr/bin/env python3
"""Hostile and heavy clients, strata-server and redis-server side by side (same limits):

  slow-reader   a client sends GET of a 10 MB value 20 times a second and never reads,
                with client-output-buffer-limit "normal 64mb 32mb 10" on both servers:
                the server's RSS growth, whether and when the client is cut, and the worst
                PING latency of another client meanwhile (PING every 10 ms).
  pre-auth      with requirepass set, three connections each announce a 400 MB bulk and
                send as fast as they can until closed: RSS growth, and how many bytes each
                got in before the server closed it.
  idle          N connections (default 5000) each PING once, then stay idle: RSS per
                connection.

Usage (from the repository root, after scripts/build):
    /usr/bin/python3 bench/hostile_clients.py                  # all three
    /usr/bin/python3 bench/hostile_clients.py --cases idle --connections 2000

Results: a table on stdout, and bench/results/<date>-<label>.md with the command line.
"""
import argparse
import os
import resource
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "published"))
import benchlib  # noqa: E402
from benchlib import BenchError, log  # noqa: E402

OUTPUT_LIMIT = "normal 64mb 32mb 10"
PASSWORD = "sekret"


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise BenchError("no VmRSS for pid %d" % pid)


def enc(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RssSampler(threading.Thread):
    def __init__(self, pid, period=0.05):
        super().__init__(daemon=True)
        self.pid, self.period, self.peak, self.stop_flag = pid, period, 0, False

    def run(self):
        while not self.stop_flag:
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except (OSError, BenchError):
                return
            time.sleep(self.period)


def closed(sock):
    """True when the server closed sock (EOF or reset), without consuming queued data
    beyond one peek."""
    try:
        sock.setblocking(False)
        data = sock.recv(1, socket.MSG_PEEK)
        return data == b""
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    finally:
        sock.setblocking(True)


def slow_reader(server, seconds):
    c = server.client()
    c.cmd("SET", "big", b"x" * (10 * 1024 * 1024))
    c.close()
    pid = server.proc.pid
    base = rss_bytes(pid)
    sampler = RssSampler(pid)
    sampler.start()
    slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    slow.connect(("127.0.0.1", server.port))
    pinger = server.client(timeout=5)
    worst = 0.0
    cut_after = None
    start = time.monotonic()
    next_get = start
    try:
        while time.monotonic() - start < seconds:
            now = time.monotonic()
            if cut_after is None and now >= next_get:
                try:
                    slow.sendall(enc("GET", "big"))
                except (BrokenPipeError, ConnectionResetError):
                    cut_after = now - start
                next_get += 0.05  # 20 a second
            t = time.monotonic()
            if pinger.cmd("PING") != "PONG":
                raise BenchError("PING did not answer PONG")
            worst = max(worst, time.monotonic() - t)
            if cut_after is None and closed(slow):
                cut_after = time.monotonic() - start
            if cut_after is not None and time.monotonic() - start > cut_after + 1:
                break
            time.sleep(0.01)
    finally:
        sampler.stop_flag = True
        sampler.join(1)
        slow.close()
        pinger.close()
    return {"rss growth MB": (sampler.peak - base) / 1e6,
            "cut after s": "%.1f" % cut_after if cut_after is not None else "not cut",
            "worst PING ms": worst * 1e3}


def pre_auth(server):
    pid = server.proc.pid
    base = rss_bytes(pid)
    sampler = RssSampler(pid)
    sampler.start()
    header = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$419430400\r\n"
    chunk = b"x" * (1 << 20)
    sent = [0, 0, 0]

    def flood(i):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        try:
            s.sendall(header)
            sent[i] = len(header)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and sent[i] < 400 * (1 << 20):
                s.sendall(chunk)
                sent[i] += len(chunk)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass
        finally:
            s.close()

    threads = [threading.Thread(target=flood, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    time.sleep(0.5)
    sampler.stop_flag = True
    sampler.join(1)
    return {"rss growth MB": (sampler.peak - base) / 1e6,
            "MB sent before the close (max)": max(sent) / 1e6}


def idle(server, n):
    pid = server.proc.pid
    base = rss_bytes(pid)
    socks = []
    try:
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(b"PING\r\n")
            socks.append(s)
        for s in socks:
            if not s.recv(16).startswith(b"+PONG"):
                raise BenchError("an idle connection did not get PONG")
        time.sleep(1.0)
        after = rss_bytes(pid)
    finally:
        for s in socks:
            s.close()
    return {"KB per idle connection": (after - base) / n / 1024}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--strata-bin", default=os.path.join(benchlib.ROOT, "build", "server",
                                                        "strata-server"))
    p.add_argument("--redis-bin", default="redis-server")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cases", default="slow-reader,pre-auth,idle")
    p.add_argument("--seconds", type=float, default=15.0, help="slow-reader run, at most")
    p.add_argument("--connections", type=int, default=5000, help="idle connections")
    p.add_argument("--strata-cpus", default="0-1")
    p.add_argument("--redis-cpus", default="0")
    p.add_argument("--label", default="hostile-clients")
    a = p.parse_args()
    cases = a.cases.split(",")
    for c in cases:
        if c not in ("slow-reader", "pre-auth", "idle"):
            p.error("unknown case %r" % c)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.connections + 1000
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    strata_bin = benchlib.resolve_bin(a.strata_bin, "strata-server")
    redis_bin = benchlib.resolve_bin(a.redis_bin, "redis-server")
    benchlib.install_cleanup()
    scratch = tempfile.mkdtemp(prefix="strata-hostile-")
    rows = []
    for case in cases:
        extra = {"slow-reader": ["--client-output-buffer-limit", OUTPUT_LIMIT],
                 "pre-auth": ["--requirepass", PASSWORD], "idle": []}[case]
        results = {}
        for kind, binary, cpus in (("strata", strata_bin, a.strata_cpus),
                                   ("redis", redis_bin, a.redis_cpus)):
            srv = benchlib.Server(kind, binary, cpus, os.path.join(scratch, case),
                                  threads=a.threads, extra_args=extra)
            if case == "pre-auth":
                # The readiness PING gets -NOAUTH: wait for the port instead.
                srv.wait_ready = lambda timeout, s=srv: _wait_port(s, timeout)
            srv.start()
            try:
                if case == "slow-reader":
                    results[kind] = slow_reader(srv, a.seconds)
                elif case == "pre-auth":
                    results[kind] = pre_auth(srv)
                else:
                    results[kind] = idle(srv, a.connections)
                if not srv.alive():
                    raise BenchError("%s-server died during %s" % (kind, case))
            finally:
                srv.stop()
            log("%s %s: %s" % (case, kind, results[kind]))
        for metric in results["strata"]:
            rows.append([case, metric, benchlib.fmt(results["strata"][metric], 1),
                         benchlib.fmt(results["redis"][metric], 1)])
    table = benchlib.md_table(["case", "measure", "strata", "redis"], rows)
    print(table)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(benchlib.RESULTS_DIR, "%s-%s.md" % (stamp, a.label))
    info = benchlib.machine_info()
    with open(path, "w") as f:
        f.write("# Hostile and heavy clients (%s)\n\nCommand:\n\n```\n%s\n```\n\n" %
                (stamp, benchlib.command_line()))
        f.write("strata %d worker threads on CPUs %s, redis-server on CPU %s. slow-reader: "
                "client-output-buffer-limit \"%s\" on both; pre-auth: requirepass set; idle: "
                "%d connections.\n\n" % (a.threads, a.strata_cpus, a.redis_cpus, OUTPUT_LIMIT,
                                         a.connections))
        f.write(benchlib.md_table(["setting", "value"], [[k, v] for k, v in info.items()]))
        f.write("\n\n" + table + "\n")
    print("\nresults: %s" % os.path.relpath(path, benchlib.ROOT))
    return 0


def _wait_port(server, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise BenchError("exited with status %s" % server.proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith((b"+PONG", b"-NOAUTH")):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise BenchError("no answer within %.0fs" % timeout)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        log("hostile_clients: %s" % e)
        sys.exit(1)
