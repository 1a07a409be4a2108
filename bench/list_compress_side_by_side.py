#!/usr/bin/python3
"""list-compress-depth side by side with redis-server: bytes per element of one big list
of compressible text, with the inner nodes compressed (depth 1) and not (depth 0).

Each server (strata --threads 1) gets one list of ELEMENTS log-line-like elements
(`2026-12-03T10:00:05Z INFO req=<n> path=/api/v1/items/<n % 500> status=200 ms=<n % 97>`,
about 75 bytes), pushed with RPUSH of 100 elements per command, pipelined. The figure is
the growth of INFO's used_memory divided by the elements. list-max-listpack-size is the
default (-2: 8 KB nodes) on both; Redis compresses inner nodes with LZF, strata with LZ4.
Also timed: LRANGE of 100 elements from the middle (inflating an inner node), calls per
second of wall time.

Usage: bench/list_compress_side_by_side.py [--elements 10000000] [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transactions_side_by_side import resp, start, stop  # noqa: E402


def element(n):
    return "2026-12-03T10:00:%02dZ INFO req=%d path=/api/v1/items/%d status=200 ms=%d" % (
        n % 60, n, n % 500, n % 97)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def call(self, *args):
        self.s.sendall(resp(*args))
        return self.read()

    def read(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 20)
        line, _, rest = self.buf.partition(b"\r\n")
        self.buf = rest
        if line[:1] == b"$":
            n = int(line[1:])
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 20)
            out, self.buf = self.buf[:n], self.buf[n + 2:]
            return out
        if line[:1] == b"*":
            return [self.read() for _ in range(int(line[1:]))]
        return line


def used_memory(c):
    info = c.call("INFO", "memory").decode()
    for line in info.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory")


def run(kind, depth, elements):
    args = ["--threads", "1"] if kind == "strata" else []
    p, port = start(kind, args + ["--list-compress-depth", str(depth)], cpus="0")
    try:
        c = Conn(port)
        before = used_memory(c)
        batch, pending = [], 0
        for i in range(0, elements, 100):
            batch.append(resp("RPUSH", "log", *[element(n) for n in range(i, min(i + 100,
                                                                               elements))]))
            if len(batch) == 200:
                c.s.sendall(b"".join(batch))
                for _ in batch:
                    c.read()
                batch = []
        if batch:
            c.s.sendall(b"".join(batch))
            for _ in batch:
                c.read()
        assert int(c.call("LLEN", "log")[1:]) == elements
        per_element = (used_memory(c) - before) / elements
        mid = elements // 2
        assert c.call("LINDEX", "log", mid).decode() == element(mid)
        t0 = time.monotonic()
        calls = 2000
        for k in range(calls):
            at = (mid + k * 7919) % (elements - 100)
            got = c.call("LRANGE", "log", at, at + 99)
            assert len(got) == 100
        lrange = calls / (time.monotonic() - t0)
        return per_element, lrange
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=10000000)
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for depth in (0, 1):
        r = run("redis", depth, a.elements)
        s = run("strata", depth, a.elements)
        rows.append((depth, r, s))
    lines = ["# list-compress-depth side by side", "",
             "%s, bench/list_compress_side_by_side.py --elements %d" % (
                 time.strftime("%Y-%m-%d %H:%M"), a.elements), "",
             "| depth | redis bytes/element | strata bytes/element | strata / redis | "
             "redis LRANGE 100/s | strata LRANGE 100/s |",
             "|---|---|---|---|---|---|"]
    for depth, r, s in rows:
        lines.append("| %d | %.2f | %.2f | %.2fx | %.0f | %.0f |" % (depth, r[0], s[0], s[0] / r[0],
                                                                   r[1], s[1]))
    lines += ["", "Elements of about 75 bytes of log-like text; used_memory growth per element; "
              "each server alone on CPU 0."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
