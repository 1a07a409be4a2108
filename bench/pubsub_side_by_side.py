#!/usr/bin/python3
"""Pub/Sub side by side: PUBLISH to a channel with SUBS subscribers, against redis-server.

Each server runs alone on CPU 0 (strata --threads 1), with
client-output-buffer-limit pubsub 0 0 0 so that no subscriber is cut. SUBS subscriber
connections (one reader thread draining them all) subscribe to one channel; a publisher
connection sends MSGS pipelined PUBLISH of a SIZE-byte message, in batches of BATCH
(each batch is written, then its replies read to the end), and the run ends when every
subscriber has read every message. The server's CPU time (utime + stime from /proc)
gives messages delivered (MSGS x SUBS) per CPU-second. Target: strata >= 1.3x redis.

The same figure is reported for strata --threads 2 on CPUs 0-1: the subscribers are
spread over both workers, so half the deliveries cross to the other worker (one copy of
each message per destination worker, one task per batch).

Usage: bench/pubsub_side_by_side.py [--msgs 200000] [--subs 10] [--size 32] [--batch 100]
           [--out FILE]
Environment: STRATA_BIN, REDIS_BIN.
"""
import argparse
import datetime
import os
import select
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transactions_side_by_side import blast, cpu_seconds, in_batches, resp, start, stop  # noqa: E402

CHANNEL = "bench:ch"


def message_bytes(size):
    payload = b"m" * size
    return len(b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(CHANNEL), CHANNEL.encode(), size, payload))


def subscribe(port, n):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(resp("SUBSCRIBE", CHANNEL))
        got = b""
        while not got.endswith(b":1\r\n"):
            got += s.recv(4096)
        s.setblocking(False)
        socks.append(s)
    return socks


def drain(socks, want_each, done):
    """Reads every socket until each has want_each bytes; sets done."""
    left = {s: want_each for s in socks}
    while left:
        ready, _, _ = select.select(list(left), [], [], 30)
        if not ready:
            raise RuntimeError("subscribers stalled with %d bytes left" % sum(left.values()))
        for s in ready:
            try:
                n = len(s.recv(1 << 20))
            except BlockingIOError:
                continue
            left[s] -= n
            if left[s] <= 0:
                del left[s]
    done.set()


def run(kind, args, cpus, msgs, subs, size, batch):
    p, port = start(kind, args, cpus=cpus)
    try:
        socks = subscribe(port, subs)
        payload = "m" * size
        publishes = in_batches((resp("PUBLISH", CHANNEL, payload) for _ in range(msgs)), batch)
        warm = in_batches((resp("PUBLISH", CHANNEL, payload) for _ in range(2000)), batch)
        per_msg = message_bytes(size)
        for batches, count in ((warm, 2000), (publishes, msgs)):
            done = threading.Event()
            t = threading.Thread(target=drain, args=(socks, count * per_msg, done), daemon=True)
            t.start()
            c0 = cpu_seconds(p.pid)
            w0 = time.monotonic()
            blast(port, batches, p.pid)
            if not done.wait(300):
                raise RuntimeError("subscribers did not receive every message")
            cpu = cpu_seconds(p.pid) - c0
            wall = time.monotonic() - w0
        for s in socks:
            s.close()
        delivered = msgs * subs
        return delivered / cpu if cpu > 0 else float("inf"), delivered / wall
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--msgs", type=int, default=200000)
    ap.add_argument("--subs", type=int, default=10)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--out")
    a = ap.parse_args()
    limit = ["--client-output-buffer-limit", "pubsub 0 0 0"]
    rows = []
    redis_cpu, redis_wall = run("redis", limit, "0", a.msgs, a.subs, a.size, a.batch)
    rows.append(("redis-server", redis_cpu, redis_wall))
    s1_cpu, s1_wall = run("strata", ["--threads", "1"] + limit, "0", a.msgs, a.subs, a.size,
                          a.batch)
    rows.append(("strata --threads 1", s1_cpu, s1_wall))
    s2_cpu, s2_wall = run("strata", ["--threads", "2"] + limit, "0-1", a.msgs, a.subs, a.size,
                          a.batch)
    rows.append(("strata --threads 2", s2_cpu, s2_wall))
    cmd = "bench/pubsub_side_by_side.py --msgs %d --subs %d --size %d --batch %d" % (
        a.msgs, a.subs, a.size, a.batch)
    lines = ["# PUBLISH to %d subscribers, side by side" % a.subs, "",
             "%s, %s" % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cmd), "",
             "| server | deliveries per CPU-second | vs redis | deliveries per second (wall) |",
             "|---|---|---|---|"]
    for name, cpu, wall in rows:
        lines.append("| %s | %.0f | %.2fx | %.0f |" % (name, cpu, cpu / redis_cpu, wall))
    lines += ["", "Deliveries = PUBLISH calls x subscribers; CPU = the server's utime + stime.",
              "Target: strata --threads 1 >= 1.3x redis-server per core."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
