#!/usr/bin/python3
"""Instructions per script call across shards against the same script on one shard,
counted with callgrind (user-space instructions of every server thread; kernel work such
as wake-ups is not counted, which is what the wall-clock figures of
bench/transactions_side_by_side.py are dominated by on a small VM).

strata-server runs under valgrind --tool=callgrind with --threads 2, epoll, and the
script hop waits set to sleep at once (--script-hop-spin-us 0 --script-hop-poll-us 0:
spinning would count instructions that only buy latency). The 3-key script of
bench/transactions_side_by_side.py (GET, SET, INCRBY, INCR) runs N times with its keys on
both shards, then N times with keys of one {hashtag}; MGET and MSET of 10 keys the same
way. Each load is cut out with callgrind_control -d (dump and zero); Ir per call = the
load's Ir / N. Commands are sent in pipelined batches of BATCH.

Usage: bench/scripts_across_shards_callgrind.py [--calls 3000] [--batch 50] [--out FILE]
Results: a table on stdout, and FILE (bench/results/<date>-scripts-across-shards-callgrind.md
by default).
"""
import argparse
import datetime
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import transactions_side_by_side as tx  # noqa: E402  (resp, spread_keys, SCRIPT3)

ROOT = os.path.dirname(HERE)
BIN = os.environ.get("STRATA_BIN", os.path.join(ROOT, "build", "server", "strata-server"))


def ir_of(path):
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
            if line.startswith("totals:") and total is None:
                total = int(line.split()[1])
    return total


def wait_file(path, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                if "totals:" in f.read():
                    return
        time.sleep(0.1)
    raise RuntimeError("callgrind did not write " + path)


def send_all(port, cmds, batch):
    """Sends cmds in pipelined batches, reading each batch's replies to the end."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(300)
        for i in range(0, len(cmds), batch):
            chunk = cmds[i:i + batch]
            s.sendall(b"".join(chunk))
            got = b""
            while tx_reply_count(got) < len(chunk):
                data = s.recv(1 << 16)
                if not data:
                    raise RuntimeError("server closed the connection")
                got += data
            if got.startswith(b"-"):
                raise RuntimeError(got[:200])


def tx_reply_count(buf):
    """Complete top-level RESP replies in buf (integers, statuses, errors, bulks, arrays
    of bulks)."""
    n, i = 0, 0
    while i < len(buf):
        end = buf.find(b"\r\n", i)
        if end < 0:
            return n
        t = buf[i:i + 1]
        if t in (b"+", b"-", b":"):
            i = end + 2
        elif t == b"$":
            ln = int(buf[i + 1:end])
            if ln < 0:
                i = end + 2
            else:
                if len(buf) < end + 2 + ln + 2:
                    return n
                i = end + 2 + ln + 2
        elif t == b"*":
            items = int(buf[i + 1:end])
            i = end + 2
            for _ in range(max(items, 0)):
                e2 = buf.find(b"\r\n", i)
                if e2 < 0:
                    return n
                if buf[i:i + 1] == b"$":
                    ln = int(buf[i + 1:e2])
                    if ln >= 0:
                        if len(buf) < e2 + 2 + ln + 2:
                            return n
                        i = e2 + 2 + ln + 2
                    else:
                        i = e2 + 2
                else:
                    i = e2 + 2
        else:
            return n
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--out")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="strata-cg-scripts-")
    port = tx.free_port()
    out_file = os.path.join(work, "cg.out")
    p = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out_file, BIN,
         "--port", str(port), "--threads", "2", "--io-backend", "epoll", "--save", "",
         "--dir", work, "--script-hop-spin-us", "0", "--script-hop-poll-us", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not start under valgrind")
                time.sleep(0.5)
        spread = tx.spread_keys(port, "x:", 3)
        tagged = ["{t}x:%d" % i for i in range(3)]
        spread10 = tx.spread_keys(port, "m:", 10)
        tagged10 = ["{t}m:%d" % i for i in range(10)]
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.settimeout(120)
            s.sendall(tx.resp("SCRIPT", "LOAD", tx.SCRIPT3))
            got = b""
            while tx_reply_count(got) < 1:
                got += s.recv(1024)
            sha = got.split(b"\r\n")[1].decode()
        loads = [
            ("EVALSHA of the 3-key script, keys on both shards",
             lambda: tx.resp("EVALSHA", sha, 3, *spread)),
            ("EVALSHA of the 3-key script, one shard",
             lambda: tx.resp("EVALSHA", sha, 3, *tagged)),
            ("MGET of 10, both shards", lambda: tx.resp("MGET", *spread10)),
            ("MGET of 10, one shard", lambda: tx.resp("MGET", *tagged10)),
            ("MSET of 10, both shards",
             lambda: tx.resp("MSET", *[x for k in spread10 for x in (k, "v")])),
            ("MSET of 10, one shard",
             lambda: tx.resp("MSET", *[x for k in tagged10 for x in (k, "v")])),
        ]
        # Warm up every load (the script's route is learnt on its first run).
        for _, make in loads:
            send_all(port, [make() for _ in range(20)], a.batch)
        part = 1
        subprocess.run(["callgrind_control", "-d", str(p.pid)], capture_output=True, timeout=120)
        wait_file(out_file + ".%d" % part)
        rows = []
        for name, make in loads:
            send_all(port, [make() for _ in range(a.calls)], a.batch)
            part += 1
            subprocess.run(["callgrind_control", "-d", str(p.pid)], capture_output=True,
                           timeout=120)
            wait_file(out_file + ".%d" % part)
            rows.append((name, ir_of(out_file + ".%d" % part) / a.calls))
    finally:
        p.terminate()
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
        shutil.rmtree(work, ignore_errors=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    lines = ["# Scripts across shards, instructions per call (callgrind)", "",
             "`%s`, %s" % (" ".join(["bench/scripts_across_shards_callgrind.py"] + sys.argv[1:]),
                           datetime.datetime.now().strftime("%Y-%m-%d %H:%M")), "",
             "strata --threads 2 under callgrind, hop waits sleeping at once; Ir of every "
             "thread per call.", "", "| load | Ir/call |", "|---|---|"]
    for name, v in rows:
        lines.append("| %s | %.0f |" % (name, v))
    lines += ["", "Across / one shard: EVALSHA %.2f, MGET %.2f, MSET %.2f" %
              (rows[0][1] / rows[1][1], rows[2][1] / rows[3][1], rows[4][1] / rows[5][1])]
    text = "\n".join(lines) + "\n"
    print(text)
    out = a.out or os.path.join(ROOT, "bench", "results",
                                "%s-scripts-across-shards-callgrind.md" % stamp)
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
