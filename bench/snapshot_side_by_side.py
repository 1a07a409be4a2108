#!/usr/bin/python3
"""Snapshots under load: strata-server (fork-free) vs redis-server (fork + copy-on-write).

For each server in turn (strata first, then redis; each on its own free loopback port, in
a temporary directory that is removed at the end; servers are killed on exit, even on an
error or Ctrl-C) the script:

  1. loads KEYS keys of SIZE-byte random printable values (different per key) with
     pipelined SETs from Python, checks DBSIZE, reads INFO memory (used_memory_dataset,
     "D" below) and the process RSS;
  2. (strata only) incremental cost: BGSAVE (the first of the process: full), SETs new
     values on 1% of the keys (random), BGSAVE again (expected: incremental) and compares
     the delta's bytes and time (snapshot_last_bytes, the log line's seconds) with the
     full's; then CONFIG SET snapshot-incremental no, so that the next saves are full
     ones, as Redis's always are;
  3. times a blocking SAVE (the reply time);
  4. stops the server (SHUTDOWN NOSAVE), starts it again on the same directory and times
     the load: from the process start until PING answers PONG instead of -LOADING; also
     parses the "DB loaded from disk: X seconds" log line; checks DBSIZE and a sample of
     ~1000 key/value pairs;
  5. runs redis-benchmark SETs on random keys of the same key space (pipeline 16, 50
     clients, -r KEYS) and, within that one run, --rounds times: a window with no
     snapshot (max(--window, the previous save's length) seconds), then a BGSAVE. During
     each save the memory of the server and of any child (Redis's fork child) is sampled
     every ~20 ms: extra = (parent RSS - its RSS just before the first BGSAVE) + the
     children's Private_Clean + Private_Dirty (their copy-on-write copies), from
     /proc/PID/smaps_rollup. The peak is reported in bytes and as a ratio to D. Write
     rates come from INFO stats total_commands_processed: inside the save windows, and
     inside the interleaved windows without one (so both see the same conditions on a
     machine whose speed drifts); the table gives the ratio during/without.

Key names: "memtier-" followed by the 12-digit zero-padded index, because that is what
redis-benchmark's __rand_int__ expands to, so the write load (a custom
"SET memtier-__rand_int__ <SIZE random bytes>" command with -r KEYS) overwrites the loaded
keys instead of adding new ones.

Usage: bench/snapshot_side_by_side.py [--keys N] [--size B] [--threads T]
           [--cpus SERVER_CPUS CLIENT_CPUS] [--window S] [--rounds N]
           [--out FILE] [--skip-redis]
e.g.   bench/snapshot_side_by_side.py --keys 1000000 --cpus 0 1 --out bench/results/README.md
Environment: STRATA_BIN (build/server/strata-server), REDIS_BIN (redis-server). The strata
binary is copied to a temporary directory first (the tree may be rebuilt meanwhile); its
mtime and sha256 prefix are printed with the results.
"""
import argparse
import atexit
import datetime
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY_FMT = b"memtier-%012d"
# byte -> printable ASCII 33..126 (no space, so values are shell- and log-friendly)
PRINTABLE = bytes(33 + (b % 94) for b in range(256))
ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
ALNUM_TABLE = bytes(ALNUM[b % len(ALNUM)] for b in range(256))
SAMPLE_MS = 0.020

_procs = []      # every Popen we started (servers, redis-benchmark), killed on exit
_tmpdirs = []


# ----------------------------------------------------------------------------- cleanup

def _children(pid):
    """PIDs whose parent is pid (no /proc/PID/task/*/children on every kernel)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d))
    return out


def _kill(p):
    if p.poll() is not None:
        return
    kids = _children(p.pid)
    try:
        os.killpg(p.pid, signal.SIGKILL)   # started with start_new_session: pgid == pid
    except OSError:
        pass
    for k in kids:                          # a fork child that left the group, if any
        try:
            os.kill(k, signal.SIGKILL)
        except OSError:
            pass
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        pass


def cleanup():
    for p in _procs:
        _kill(p)
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


def _on_signal(signum, _frame):
    raise SystemExit("snapshot_side_by_side: signal %d, stopping" % signum)


def spawn(cmd, **kw):
    p = subprocess.Popen(cmd, start_new_session=True, **kw)
    _procs.append(p)
    return p


# ------------------------------------------------------------------------------ helpers

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rollup(pid):
    """smaps_rollup fields of pid in bytes ({} if the process is gone)."""
    d = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    d[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except OSError:
        pass
    return d


def mem_sample(pid):
    """(parent RSS, sum over children of Private_Clean + Private_Dirty), bytes."""
    rss = rollup(pid).get("Rss", 0)
    priv = 0
    for c in _children(pid):
        r = rollup(c)
        priv += r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)
    return rss, priv


def mb(x):
    return "%.1f MB" % (x / 1e6) if x is not None else "-"


def fmt_s(x):
    return "-" if x is None else ("%.3f s" % x)


def log_lines(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def make_values(n, size, table=PRINTABLE):
    return os.urandom(n * size).translate(table)


def bulk_set(port, indices, size, batch=20000, sample_every=0, timeout=120.0):
    """SET KEY_FMT % i to a fresh random printable value for every i in indices, pipelined
    over one raw connection (a reader thread drains the +OK replies). Returns
    ({index: value} for every sample_every-th position, seconds)."""
    n = len(indices)
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    state = {"got": 0, "err": None}
    want = 5 * n  # len(b"+OK\r\n") per reply

    def reader():
        tail = b""
        try:
            while state["got"] < want:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    state["err"] = "connection closed after %d of %d replies" % (
                        state["got"] // 5, n)
                    return
                if b"-" in chunk:
                    i = chunk.index(b"-")
                    state["err"] = "error reply: %r" % (tail + chunk[i:i + 200])
                    return
                state["got"] += len(chunk)
                tail = chunk[-8:]
        except OSError as e:
            state["err"] = "reader: %s" % e

    th = threading.Thread(target=reader, daemon=True)
    t0 = time.time()
    th.start()
    samples = {}
    vhdr = b"$%d\r\n" % size
    try:
        for b0 in range(0, n, batch):
            idx = indices[b0:b0 + batch]
            vals = make_values(len(idx), size)
            parts = []
            for j, i in enumerate(idx):
                k = KEY_FMT % i
                v = vals[j * size:(j + 1) * size]
                parts.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n%s%s\r\n" % (len(k), k, vhdr, v))
                if sample_every and (b0 + j) % sample_every == 0:
                    samples[i] = v
            sock.sendall(b"".join(parts))
            if state["err"]:
                break
        th.join(timeout)
    finally:
        sock.close()
    if th.is_alive():
        raise RuntimeError("bulk SET: replies did not arrive within %.0f s (%d of %d)"
                           % (timeout, state["got"] // 5, n))
    if state["err"]:
        raise RuntimeError("bulk SET: %s" % state["err"])
    return samples, time.time() - t0


# ------------------------------------------------------------------------------- server

class Server:
    def __init__(self, kind, binary, threads, server_cpus, client_cpus, size, keys):
        self.kind = kind
        self.binary = binary
        self.threads = threads
        self.server_cpus = server_cpus
        self.client_cpus = client_cpus
        self.size = size
        self.keys = keys
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="snap-sbs-%s-" % kind)
        _tmpdirs.append(self.dir)
        self.log = os.path.join(self.dir, "log")
        self.proc = None
        self.r = None

    def cmd(self):
        if self.kind == "strata":
            c = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--threads", str(self.threads), "--dir", self.dir,
                 "--save", "3600 1000000000", "--snapshot-incremental", "yes",
                 "--logfile", self.log]
        else:
            c = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", self.dir, "--dbfilename", "dump.rdb",
                 "--daemonize", "no", "--logfile", self.log]
        if self.server_cpus:
            c = ["taskset", "-c", self.server_cpus] + c
        return c

    def start(self, timeout=600.0):
        """Starts the process; returns seconds from the start until PING answers PONG."""
        t0 = time.time()
        self.proc = spawn(self.cmd(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = t0 + timeout
        loading_seen = False
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s during start-up; log tail:\n%s" % (
                    self.kind, self.proc.returncode, "\n".join(log_lines(self.log)[-15:])))
            if time.time() > deadline:
                raise RuntimeError("%s: no PONG within %.0f s" % (self.kind, timeout))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                    s.sendall(b"PING\r\n")
                    rep = s.recv(256)
                if rep.startswith(b"+PONG"):
                    break
                if rep.startswith(b"-LOADING"):
                    loading_seen = True
            except OSError:
                pass
            time.sleep(0.005)
        dt = time.time() - t0
        self.r = redis.Redis(port=self.port, socket_timeout=600, decode_responses=True)
        self.loading_seen = loading_seen
        return dt

    def stop(self, timeout=30.0):
        """SHUTDOWN NOSAVE, then wait (bounded) for the process; SIGKILL if it lingers."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            redis.Redis(port=self.port, socket_timeout=5).execute_command("SHUTDOWN", "NOSAVE")
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            print("  WARNING: %s did not exit within %.0f s of SHUTDOWN NOSAVE; killed"
                  % (self.kind, timeout))
            _kill(self.proc)
        self.r = None

    @property
    def pid(self):
        return self.proc.pid

    def info(self, section):
        return self.r.info(section)

    def commands(self):
        return int(self.info("stats")["total_commands_processed"])

    def bench_cmd(self):
        value = make_values(1, self.size, ALNUM_TABLE).decode()
        c = ["redis-benchmark", "-p", str(self.port), "-P", "16", "-c", "50",
             "-n", "2000000000", "-r", str(self.keys), "-q",
             "SET", "memtier-__rand_int__", value]
        if self.client_cpus:
            c = ["taskset", "-c", self.client_cpus] + c
        return c

    def start_load(self, name):
        errf = open(os.path.join(self.dir, "bench-%s.err" % name), "w")
        p = spawn(self.bench_cmd(), stdout=subprocess.DEVNULL, stderr=errf)
        errf.close()
        return p

    def stop_load(self, p, name):
        _kill(p)
        err = open(os.path.join(self.dir, "bench-%s.err" % name), errors="replace").read()
        bad = [l for l in err.splitlines() if "ERR" in l or "rror" in l]
        if bad:
            print("  WARNING: redis-benchmark (%s, %s) reported: %s" % (self.kind, name,
                                                                        bad[:3]))
        return bad

    def wait_bgsave(self, saves_before, timeout, sample_pid=None):
        """Polls INFO persistence every ~20 ms until the save that BGSAVE started is over.
        Returns (seconds, last persistence info, memory samples, max snapshot_buffer)."""
        t0 = time.time()
        samples = []
        buf_max = 0
        seen_running = False
        while True:
            if sample_pid:
                samples.append((time.time() - t0,) + mem_sample(sample_pid))
            p = self.info("persistence")
            buf_max = max(buf_max, int(p.get("snapshot_buffer_bytes", 0) or 0))
            running = int(p["rdb_bgsave_in_progress"])
            seen_running = seen_running or running
            saves = p.get("rdb_saves")
            done = not running and (int(saves) > saves_before if saves is not None
                                    else seen_running)
            if done:
                dt = time.time() - t0
                if sample_pid:
                    samples.append((dt,) + mem_sample(sample_pid))
                return dt, p, samples, buf_max
            if time.time() - t0 > timeout:
                raise RuntimeError("%s: BGSAVE still running after %.0f s" % (self.kind,
                                                                              timeout))
            if self.proc.poll() is not None:
                raise RuntimeError("%s died during BGSAVE; log tail:\n%s" % (
                    self.kind, "\n".join(log_lines(self.log)[-15:])))
            time.sleep(SAMPLE_MS)

    def bgsave(self, timeout, sample_pid=None):
        saves_before = int(self.info("persistence").get("rdb_saves", 0))
        n_log = len(log_lines(self.log))
        reply = self.r.bgsave()
        dt, p, samples, buf_max = self.wait_bgsave(saves_before, timeout, sample_pid)
        if p.get("rdb_last_bgsave_status") != "ok":
            print("  WARNING: %s rdb_last_bgsave_status=%s snapshot_last_error=%s" % (
                self.kind, p.get("rdb_last_bgsave_status"), p.get("snapshot_last_error")))
        return {"wall": dt, "info": p, "samples": samples, "buf_max": buf_max,
                "reply": reply, "log": self.saved_log(n_log)}

    def saved_log(self, n_log):
        """The strata 'Snapshot N (kind) saved: ...' line after line n_log, parsed."""
        for line in log_lines(self.log)[n_log:]:
            m = re.search(r"Snapshot (\d+) \((\w+)\) saved: (\d+) keys, (\d+) bytes, "
                          r"([\d.]+) seconds, cut pause (\d+) us", line)
            if m:
                return {"seq": int(m.group(1)), "kind": m.group(2), "keys": int(m.group(3)),
                        "bytes": int(m.group(4)), "seconds": float(m.group(5)),
                        "pause_us": int(m.group(6))}
        return None

    def loaded_log(self):
        for line in log_lines(self.log):
            m = re.search(r"DB loaded from disk: ([\d.]+) seconds", line)
            if m:
                return float(m.group(1)), line.strip()
        return None, None

    def file_bytes(self):
        total = 0
        for f in os.listdir(self.dir):
            if f == "dump.rdb" or f.startswith("dump.strata"):
                total += os.path.getsize(os.path.join(self.dir, f))
        return total


# ------------------------------------------------------------------------------ phases

def run_server(srv, opts, res):
    keys, size = opts.keys, opts.size
    print("\n== %s (port %d, dir %s)" % (srv.kind, srv.port, srv.dir), flush=True)
    srv.start(timeout=30)
    info = srv.info("server")
    res["version"] = str(info.get("strata_version", info.get("redis_version", "?")))

    # 1. load
    sample_every = max(1, keys // 1000)
    samples, dt = bulk_set(srv.port, list(range(keys)), size, sample_every=sample_every,
                           timeout=max(120.0, keys / 20000.0))
    res["load_py_s"] = dt
    res["dbsize"] = srv.r.dbsize()
    m = srv.info("memory")
    res["used_memory"] = int(m["used_memory"])
    res["dataset"] = int(m.get("used_memory_dataset", m["used_memory"]))
    res["rss_loaded"] = rollup(srv.pid).get("Rss", 0)
    print("  loaded %d keys in %.1f s (%.0f/s); dbsize %d, used_memory %s, dataset %s, "
          "RSS %s" % (keys, dt, keys / dt, res["dbsize"], mb(res["used_memory"]),
                      mb(res["dataset"]), mb(res["rss_loaded"])), flush=True)
    if res["dbsize"] != keys:
        print("  WARNING: %s DBSIZE %d != %d keys loaded" % (srv.kind, res["dbsize"], keys))

    # 2. incremental (strata): the first BGSAVE of the process is full, the next
    # one a delta. (After a restart the chain loaded from disk continues; a full taken
    # with snapshot-incremental no does not start a chain that a later delta extends.)
    if srv.kind == "strata":
        full = srv.bgsave(timeout=600)
        res["inc_full"] = full
        print("  BGSAVE #1: %.3f s wall, kind %s, bytes %s, log %s" % (
            full["wall"], full["info"].get("snapshot_last_kind"),
            full["info"].get("snapshot_last_bytes"), full["log"]), flush=True)
        if full["info"].get("snapshot_last_kind") != "full":
            print("  NOTE: the first BGSAVE was %s, not full"
                  % full["info"].get("snapshot_last_kind"))
        changed = random.sample(range(keys), max(1, keys // 100))
        res["inc_changed"] = len(changed)
        bulk_set(srv.port, changed, size)
        for i in changed:
            samples.pop(i, None)
        delta = srv.bgsave(timeout=600)
        res["inc_delta"] = delta
        kind = delta["info"].get("snapshot_last_kind")
        print("  1%% changed (%d keys); BGSAVE #2: %.3f s wall, kind %s, bytes %s, log %s" % (
            len(changed), delta["wall"], kind, delta["info"].get("snapshot_last_bytes"),
            delta["log"]), flush=True)
        if kind != "incremental":
            print("  WARNING: the second BGSAVE was %s, expected incremental" % kind)
        # the SAVE below is to be a full one, as Redis's
        srv.r.config_set("snapshot-incremental", "no")

    # 3. SAVE
    n_log = len(log_lines(srv.log))
    t0 = time.time()
    srv.r.save()
    res["save_s"] = time.time() - t0
    res["save_log"] = srv.saved_log(n_log)
    res["save_file_bytes"] = srv.file_bytes()
    p = srv.info("persistence")
    res["save_kind"] = p.get("snapshot_last_kind")
    if srv.kind == "strata" and res["save_kind"] != "full":
        print("  WARNING: SAVE with snapshot-incremental no was %s, not full"
              % res["save_kind"])
    print("  SAVE: %.3f s, files %s%s" % (
        res["save_s"], mb(res["save_file_bytes"]),
        (", log: %s" % res["save_log"]) if res["save_log"] else ""), flush=True)

    # 4. restart and load
    srv.stop()
    os.rename(srv.log, srv.log + ".1")
    res["restart_s"] = srv.start(timeout=max(120.0, keys / 5000.0))
    res["loaded_log_s"], line = srv.loaded_log()
    res["loading_seen"] = srv.loading_seen
    res["dbsize_reloaded"] = srv.r.dbsize()
    mismatched = 0
    pipe = srv.r.pipeline(transaction=False)
    order = list(samples)
    for i in order:
        pipe.get(KEY_FMT.decode() % i)
    got = pipe.execute()
    for i, v in zip(order, got):
        if v is None or v.encode() != samples[i]:
            mismatched += 1
    res["verify"] = "%d/%d ok" % (len(order) - mismatched, len(order))
    print("  restart: PONG after %.3f s (-LOADING seen: %s); log: %s; dbsize %d; sample %s"
          % (res["restart_s"], srv.loading_seen, line, res["dbsize_reloaded"],
             res["verify"]), flush=True)
    if res["dbsize_reloaded"] != res["dbsize"] or mismatched:
        print("  WARNING: %s data after restart differs from before" % srv.kind)

    # 5. BGSAVE under write load, interleaved with windows of the same load and no
    # snapshot: one continuous redis-benchmark run, then --rounds times a window with no
    # snapshot (as long as the previous save, at least --window s) followed by a BGSAVE,
    # so that both rates are measured under the same conditions (this machine drifts).
    if srv.kind == "strata":
        srv.r.config_set("snapshot-incremental", "no")
    load = srv.start_load("during")
    saves = []
    cmds = 0
    cmds_without = 0
    secs_without = 0.0
    try:
        time.sleep(1.0)
        rss0, _ = mem_sample(srv.pid)
        last_save = opts.window
        for _ in range(opts.rounds):
            c0 = srv.commands()
            t0 = time.time()
            # The same polling as during a save (INFO and /proc every ~20 ms), so that
            # both windows carry the measurement's own cost.
            while time.time() - t0 < max(opts.window, last_save):
                mem_sample(srv.pid)
                srv.info("persistence")
                time.sleep(SAMPLE_MS)
            cmds_without += srv.commands() - c0
            secs_without += time.time() - t0
            c0 = srv.commands()
            save = srv.bgsave(timeout=max(600.0, keys / 2000.0), sample_pid=srv.pid)
            cmds += srv.commands() - c0
            saves.append(save)
            last_save = save["wall"]
    finally:
        res["bench_err_during"] = srv.stop_load(load, "during")
        res["bench_err_without"] = []
    if srv.kind == "strata":
        srv.r.config_set("snapshot-incremental", "yes")
    total = sum(x["wall"] for x in saves)
    res["n_saves"] = len(saves)
    res["save_window_s"] = total
    res["bg_time"] = total / len(saves)
    res["rate_during"] = cmds / total
    res["bg"] = saves[-1]
    kinds = sorted({str(x["info"].get("snapshot_last_kind", "full (fork)")) for x in saves})
    res["bg_kind"] = ",".join(kinds)
    allsamples = [x for sv in saves for x in sv["samples"]]
    res["peak_extra"] = max((x[1] - rss0) + x[2] for x in allsamples)
    res["peak_parent_growth"] = max(x[1] for x in allsamples) - rss0
    res["peak_child_private"] = max(x[2] for x in allsamples)
    res["n_samples"] = len(allsamples)
    res["rss_before_bg"] = rss0
    res["buf_max"] = max(x["buf_max"] for x in saves)
    res["cow_info"] = max(int(x["info"].get("rdb_last_cow_size", 0) or 0) for x in saves)
    pauses = [x["log"]["pause_us"] for x in saves if x["log"]]
    res["cut_retries"] = saves[-1]["info"].get("snapshot_cut_retries")
    res["pause_max_us"] = max(pauses) if pauses else None
    print("  BGSAVE under load: %d save(s), %.3f s each on average, kind %s, %d samples, "
          "peak extra %s (parent +%s, child private %s), %.0f writes/s during the saves%s" % (
              len(saves), res["bg_time"], res["bg_kind"], res["n_samples"],
              mb(res["peak_extra"]), mb(res["peak_parent_growth"]),
              mb(res["peak_child_private"]), res["rate_during"],
              (", cut pauses %s us" % pauses) if pauses else ""), flush=True)

    # 6. the interleaved windows without a snapshot
    res["rate_without"] = cmds_without / secs_without
    res["window_without_s"] = secs_without
    print("  no snapshot: %.0f writes/s over %.1f s" % (res["rate_without"], secs_without),
          flush=True)

    # log lines worth a look
    # (strata: its warnings; redis: errors only, its start-up warnings are noise here)
    res["log_warnings"] = [
        l for l in log_lines(srv.log + ".1") + log_lines(srv.log)
        if (re.search(r"error|fail|can.t", l, re.I) and "overcommit" not in l)
        or (srv.kind == "strata" and " # " in l and "User requested shutdown" not in l)]
    srv.stop()


# ------------------------------------------------------------------------------ report

def binary_id(path):
    """The strata binary's mtime and sha256 prefix (the tree may be rebuilt meanwhile)."""
    import hashlib
    with open(path, "rb") as f:
        h = hashlib.sha256(f.read()).hexdigest()[:12]
    t = datetime.datetime.utcfromtimestamp(os.path.getmtime(path))
    return "strata binary built %s UTC, sha256 %s" % (t.strftime("%Y-%m-%d %H:%M:%S"), h)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def table(res, opts):
    s = res.get("strata", {})
    r = res.get("redis", {})
    rows = []

    def row(name, key=None, fmt=str, sval=None, rval=None, rat=False, target=""):
        sv = s.get(key) if key else sval
        rv = r.get(key) if key else rval
        q = ratio(sv, rv) if rat and isinstance(sv, (int, float)) and \
            isinstance(rv, (int, float)) else None
        rows.append((name, fmt(sv) if sv is not None else "-",
                     fmt(rv) if rv is not None else "-",
                     "%.2f" % q if q is not None else "", target))

    pct = lambda x: "%.1f%%" % (100 * x)
    row("keys x value bytes", sval="%d x %d" % (opts.keys, opts.size),
        rval="%d x %d" % (opts.keys, opts.size) if r else None)
    row("used_memory", "used_memory", mb, rat=True)
    row("used_memory_dataset (D)", "dataset", mb, rat=True)
    row("RSS after load", "rss_loaded", mb, rat=True)
    row("snapshot files after SAVE", "save_file_bytes", mb, rat=True)
    row("SAVE (blocking) reply time", "save_s", fmt_s, rat=True, target="<= 0.50")
    row("restart: start -> PONG", "restart_s", fmt_s, rat=True, target="<= 0.50")
    row("log 'DB loaded from disk'", "loaded_log_s", fmt_s, rat=True, target="<= 0.50")
    row("keys / sample after restart",
        sval="%s / %s" % (s.get("dbsize_reloaded"), s.get("verify")) if s else None,
        rval="%s / %s" % (r.get("dbsize_reloaded"), r.get("verify")) if r else None)
    row("BGSAVE under SET load: saves", "n_saves", str)
    row("  time per save", "bg_time", fmt_s, rat=True)
    row("  kind", "bg_kind", str)
    row("  peak extra memory", "peak_extra", mb, rat=True)
    row("  peak extra / D", sval=ratio(s.get("peak_extra"), s.get("dataset")),
        rval=ratio(r.get("peak_extra"), r.get("dataset")), fmt=pct, rat=True)
    row("  of which parent RSS growth", "peak_parent_growth", mb)
    row("  of which child Private_*", "peak_child_private", mb)
    row("  redis rdb_last_cow_size", sval=None, rval=r.get("cow_info") and
        int(r["cow_info"]), fmt=mb)
    row("  strata max snapshot_buffer_bytes", sval=s.get("buf_max"), fmt=lambda x: "%d" % x)
    row("  strata snapshot_cut_retries", sval=s.get("cut_retries"), fmt=str)
    row("  strata max cut pause", sval=s.get("pause_max_us"), fmt=lambda x: "%d us" % x)
    row("SET/s without snapshot", "rate_without", lambda x: "%.0f" % x, rat=True)
    row("SET/s during snapshot(s)", "rate_during", lambda x: "%.0f" % x, rat=True)
    row("  during / without", sval=ratio(s.get("rate_during"), s.get("rate_without")),
        rval=ratio(r.get("rate_during"), r.get("rate_without")),
        fmt=lambda x: "%.2f" % x, rat=True)
    if "inc_full" in s:
        f, d = s["inc_full"], s["inc_delta"]
        fb = int(f["info"].get("snapshot_last_bytes", 0))
        db = int(d["info"].get("snapshot_last_bytes", 0))
        ft = (f["log"] or {}).get("seconds", f["wall"])
        dtm = (d["log"] or {}).get("seconds", d["wall"])
        row("strata BGSAVE #1 (kind, bytes, time)", sval="%s, %s, %s" % (
            f["info"].get("snapshot_last_kind"), mb(fb), fmt_s(ft)))
        row("strata 1% changed -> BGSAVE #2", sval="%s, %s, %s" % (
            d["info"].get("snapshot_last_kind"), mb(db), fmt_s(dtm)))
        row("  delta bytes / full bytes", sval=ratio(db, fb), fmt=pct, target="<= 3%")
        row("  delta time / full time", sval=ratio(dtm, ft), fmt=pct, target="<= 10%")
        row("  (wall, polled: full / delta)", sval="%s / %s" % (fmt_s(f["wall"]),
                                                                fmt_s(d["wall"])))
    lines = ["| metric | strata | redis | strata/redis | target |",
             "|---|---:|---:|---:|---|"]
    for rw in rows:
        lines.append("| %s | %s | %s | %s | %s |" % rw)
    return lines


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        usage="%(prog)s [--keys N] [--size B] [--threads T] [--cpus SERVER CLIENT] "
              "[--window S] [--rounds N] [--out FILE] [--skip-redis]")
    ap.add_argument("--keys", type=int, default=5000000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2, help="strata --threads")
    ap.add_argument("--cpus", nargs=2, metavar=("SERVER", "CLIENT"),
                    help='taskset CPU lists for the servers and for the clients, e.g. 0 1')
    ap.add_argument("--window", type=float, default=2.0,
                    help="seconds of each no-snapshot throughput window (at least the "
                         "previous snapshot's duration)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="no-snapshot window + BGSAVE pairs under the write load")
    ap.add_argument("--out", help="append a markdown section with the results to FILE")
    ap.add_argument("--skip-redis", action="store_true")
    opts = ap.parse_args()

    strata_bin = os.environ.get("STRATA_BIN", os.path.join(ROOT, "build/server/strata-server"))
    redis_bin = os.environ.get("REDIS_BIN", "redis-server")
    if not os.access(strata_bin, os.X_OK):
        sys.exit("snapshot_side_by_side: no strata binary at %s" % strata_bin)
    atexit.register(cleanup)
    # A private copy: the tree's binary may be rebuilt while this runs.
    bindir = tempfile.mkdtemp(prefix="snap-sbs-bin-")
    _tmpdirs.append(bindir)
    shutil.copy2(strata_bin, os.path.join(bindir, "strata-server"))
    strata_id = binary_id(strata_bin)
    strata_bin = os.path.join(bindir, "strata-server")
    server_cpus, client_cpus = opts.cpus if opts.cpus else (None, None)
    if client_cpus:
        os.sched_setaffinity(0, {int(c) for part in client_cpus.split(",")
                                 for c in (range(int(part.split("-")[0]),
                                                 int(part.split("-")[-1]) + 1))})

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _on_signal)

    res = {}
    kinds = [("strata", strata_bin)] + ([] if opts.skip_redis else [("redis", redis_bin)])
    t_start = time.time()
    try:
        for kind, binary in kinds:
            res[kind] = {}
            srv = Server(kind, binary, opts.threads, server_cpus, client_cpus, opts.size,
                         opts.keys)
            try:
                run_server(srv, opts, res[kind])
            finally:
                if srv.proc is not None:
                    _kill(srv.proc)
    finally:
        cleanup()

    lines = table(res, opts)
    cmdline = shlex.join(["bench/snapshot_side_by_side.py"] + sys.argv[1:])
    print("\n" + "\n".join(lines))
    for kind in res:
        for l in res[kind].get("log_warnings", []):
            print("  %s log: %s" % (kind, l))
    print("total %.0f s; %s" % (time.time() - t_start, strata_id))
    if opts.out:
        git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True).stdout.strip()
        stamp = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S UTC")
        with open(opts.out, "a") as f:
            f.write("\n## Snapshots side by side, %s\n\n" % stamp)
            f.write("- command: `%s`\n" % cmdline)
            f.write("- keys %d x %d B, strata --threads %d, cpus %s, strata %s, redis %s\n"
                    % (opts.keys, opts.size, opts.threads,
                       "server %s client %s" % tuple(opts.cpus) if opts.cpus else "unpinned",
                       res.get("strata", {}).get("version", "-"),
                       res.get("redis", {}).get("version", "-")))
            f.write("- kernel %s, nproc %d, git %s, %s\n\n" % (
                os.uname().release, os.cpu_count(), git, strata_id))
            f.write("\n".join(lines) + "\n")
        print("appended to %s" % opts.out)


if __name__ == "__main__":
    main()
