#!/usr/bin/python3
"""Start-up time and idle memory: strata-server vs redis-server.

Starts each server REPEAT times on a free loopback port, measures the time from exec to
the first +PONG, then the resident set size (VmRSS) after IDLE_S seconds of idleness.
Prints a table and writes bench/results/<stamp>-idle-footprint.md.

  bench/idle_footprint.py [--threads 2] [--repeat 5] [--idle 1.0]
"""
import argparse
import datetime
import os
import socket
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(cmd_for_port, idle_s):
    port = free_port()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd_for_port(port), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, cwd="/tmp")
    try:
        deadline = t0 + 10
        while True:
            if time.monotonic() > deadline:
                raise RuntimeError("server did not answer PING within 10 s")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                time.sleep(0.001)
        ready_ms = (time.monotonic() - t0) * 1000
        time.sleep(idle_s)
        with open("/proc/%d/status" % p.pid) as f:
            rss_kb = int(f.read().split("VmRSS:")[1].split()[0])
        return ready_ms, rss_kb
    finally:
        p.terminate()
        p.wait(10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--idle", type=float, default=1.0)
    ap.add_argument("--strata-bin", default=os.path.join(ROOT, "build/server/strata-server"))
    a = ap.parse_args()
    servers = {
        "strata": lambda port: [a.strata_bin, "--port", str(port), "--threads", str(a.threads),
                                "--save", "", "--dir", "/tmp"],
        "redis": lambda port: ["redis-server", "--port", str(port), "--save", "",
                               "--appendonly", "no", "--dir", "/tmp"],
    }
    rows = []
    for name, cmd in servers.items():
        runs = [measure(cmd, a.idle) for _ in range(a.repeat)]
        ready = statistics.median(r[0] for r in runs)
        rss = statistics.median(r[1] for r in runs)
        rows.append((name, ready, rss))
    lines = ["| server | ready (median ms) | idle RSS (median MB) |", "|---|---|---|"]
    for name, ready, rss in rows:
        lines.append("| %s | %.1f | %.1f |" % (name, ready, rss / 1024))
    table = "\n".join(lines)
    print(table)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.join(ROOT, "bench", "results", "%s-idle-footprint.md" % stamp)
    with open(out, "w") as f:
        f.write("# Idle footprint and start-up time\n\n")
        f.write("command: `bench/idle_footprint.py --threads %d --repeat %d --idle %s`\n\n"
                % (a.threads, a.repeat, a.idle))
        f.write("strata threads: %d; kernel %s; nproc %d\n\n" % (a.threads, os.uname().release,
                                                            os.cpu_count()))
        f.write(table + "\n\n")
        f.write("ready = exec to the first +PONG on a fresh connection; RSS = VmRSS after "
                "%.1f s idle.\n" % a.idle)
    print("results:", os.path.relpath(out, ROOT))


if __name__ == "__main__":
    main()
