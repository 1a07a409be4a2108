#!/usr/bin/env python3
"""Spill throughput: strata-server with every value in RAM against strata-server with
spill on and a tenth of the dataset's RAM.

The same binary runs twice, one server at a time:
  A  everything in RAM (no maxmemory, no spill-dir);
  B  --spill-dir on, --maxmemory = the dataset's value bytes / 10 (noeviction: nothing
     may be lost, so every key stays readable).
Each is loaded with KEYS keys of VALUE_SIZE random (incompressible) bytes, in key order;
B is then left to settle (spilling done, used_memory under maxmemory). Then, for
SECONDS each, two read loads from CONNECTIONS client processes (processes, not threads:
one Python process would be the bottleneck), each sending batches of PIPELINE commands
and waiting for the batch's replies:
  gaussian  key index ~ Normal(keys/2, keys/20), clipped to the key range (memtier's
            G:G pattern: a small hot set, the rest cold);
  uniform   key index uniform over every key (mostly cold in B).
One command in 11 is a SET (of another value of the pool), the rest GETs; every GET
reply is checked (nil or other bytes count as wrong). Reported per server and load:
ops/s, p50 / p99 latency of a batch, the server's CPU time per command, wrong replies
and error replies, the INFO tiered counters over the run (disk reads, block cache hit
rate, values brought back to RAM), and the server's RSS (VmRSS sampled every 50 ms
during the run, and VmHWM, the peak over its life, from /proc/PID/status), which for B
is held against 1.15 x maxmemory. Then the disk test in B: tiered_disk_bytes before
deleting every other key, and how far it falls within --compact-timeout seconds as the
server compacts on its own (target: after / before <= 0.6).

Usage (from the repository root, after scripts/build):
    /usr/bin/python3 bench/spill_throughput.py
    /usr/bin/python3 bench/spill_throughput.py --keys 50000 --seconds 5     # quick check
    /usr/bin/python3 bench/spill_throughput.py --threads 2 --cpus 0-1 --client-cpus 2-3

Results: a table on stdout, and bench/results/<date>-spill-throughput.md with the
command line and the machine. Scratch files (logs, snapshots, the spill store) go to
bench/results/tmp/ (on the repository's disk, not /tmp, which may be RAM), removed
after a successful run.
"""
import argparse
import multiprocessing
import os
import random
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "published"))
import benchlib  # noqa: E402
from benchlib import BenchError, Resp, RespError, log  # noqa: E402

LOAD_BATCH = 500
POOL = 4096            # distinct values; key i holds pool[i % POOL] after loading
SET_EVERY = 11         # one SET per 10 GETs
RSS_TARGET = 1.15      # B's RSS against maxmemory
DISK_TARGET = 0.6      # B's disk bytes after deleting half the keys, against before
MB = 1024 * 1024


def key(i):
    return b"key:%d" % i


def values_pool(n, size, seed):
    rnd = random.Random(seed)
    return [rnd.randbytes(size) for _ in range(n)]


def set_value(pool, i):
    """The value a SET of the run writes to key i (another entry of the pool)."""
    return pool[(i + POOL // 2) % POOL]


def ints(info, *names):
    return {n: int(info.get(n, 0) or 0) for n in names}


TIERED = ("tiered_cold_keys", "tiered_hot_keys", "tiered_cold_value_bytes",
          "tiered_disk_bytes", "tiered_spills", "tiered_unspills", "tiered_disk_reads",
          "tiered_pending_reads", "tiered_pending_writes", "tiered_cache_hits",
          "tiered_cache_misses", "tiered_compaction_bytes", "tiered_dead_records",
          "tiered_dead_records_dropped", "tiered_gc_file_rewrites", "tiered_spill_errors")


# ----------------------------------------------------------------------------- /proc

def proc_status(pid):
    """VmRSS, VmHWM, RssAnon and RssFile of a process in bytes ({} once it is gone)."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                    name, value = line.split(":", 1)
                    out[name] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


class RssSampler:
    """Samples a process's VmRSS every `period` seconds on a thread; .peak is the most."""

    def __init__(self, pid, period=0.05):
        self.pid = pid
        self.period = period
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            rss = proc_status(self.pid).get("VmRSS", 0)
            self.peak = max(self.peak, rss)
            self.samples += 1
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)


# ----------------------------------------------------------------------------- load

def load(c, keys, pool, stall_s):
    """SETs key i = pool[i % POOL] for every i < keys, LOAD_BATCH per round trip. A SET
    refused with the OOM error (spilling has not caught up yet) is sent again after a
    pause; BenchError after stall_s seconds without one accepted. Returns the number of
    refusals met on the way."""
    nxt = 0
    retry = []
    refusals = 0
    last_progress = time.monotonic()
    while nxt < keys or retry:
        ids, retry = retry[:LOAD_BATCH], retry[LOAD_BATCH:]
        while len(ids) < LOAD_BATCH and nxt < keys:
            ids.append(nxt)
            nxt += 1
        c.sock.sendall(b"".join(Resp.encode(b"SET", key(i), pool[i % POOL]) for i in ids))
        refused = []
        for i in ids:
            r = c.read()
            if isinstance(r, RespError):
                if not str(r).startswith("OOM"):
                    raise BenchError("SET failed while loading: %s" % r)
                refused.append(i)
            else:
                last_progress = time.monotonic()
        if refused:
            refusals += len(refused)
            retry = refused + retry
            if time.monotonic() - last_progress > stall_s:
                info = c.info()
                raise BenchError(
                    "loading stalled: SETs refused with OOM for %ds (%d of %d keys in; "
                    "used_memory %s, maxmemory %s, %s): the keys' own RAM and the tier's "
                    "cache may not fit in maxmemory (raise --maxmemory-mb or lower --keys)" % (
                        stall_s, nxt - len(retry), keys, info.get("used_memory"),
                        info.get("maxmemory"),
                        ", ".join("%s %s" % (n, info.get(n)) for n in TIERED[:5])))
            time.sleep(0.02)
    return refusals


def settle(c, limit, timeout):
    """Waits until B is done spilling: used_memory <= maxmemory, no spill write pending,
    no compaction running or pending in the store, tiered_spills unchanged over a second.
    Returns (settled, seconds waited)."""
    t0 = time.monotonic()
    last = None
    while time.monotonic() - t0 < timeout:
        info = c.info()
        now = int(info.get("tiered_spills", 0))
        # Settled includes the store's compactions: what the load left to compact is not
        # charged to the read loads.
        if (int(info["used_memory"]) <= limit and int(info.get("tiered_pending_writes", 0)) == 0
                and int(info.get("tiered_compactions_running", 0)) == 0
                and int(info.get("tiered_compaction_pending_bytes", 0)) == 0
                and now == last):
            return True, time.monotonic() - t0
        last = now
        time.sleep(1.0)
    return False, time.monotonic() - t0


# ----------------------------------------------------------------------------- clients

def client_worker(port, wid, a, dist, pool, client_cpus, go, results):
    """One client connection (its own process): batches of a.pipeline commands for
    a.seconds once `go` is set; puts its counts and batch latencies on `results`."""
    out = {"wid": wid, "error": None}
    try:
        if client_cpus:
            os.sched_setaffinity(0, client_cpus)
        c = Resp(port, timeout=120)
        rnd = random.Random(a.seed * 1000 + wid * 7 + (dist == "uniform"))
        keys = a.keys
        mu, sigma = keys / 2.0, keys / 20.0
        lat = []
        gets = sets = wrong = errors = 0
        first_error = None
        n = 0
        if not go.wait(120):
            raise BenchError("no start signal")
        deadline = time.monotonic() + a.seconds
        while time.monotonic() < deadline:
            ids = []
            is_set = []
            parts = []
            for _ in range(a.pipeline):
                if dist == "gaussian":
                    i = min(max(int(rnd.gauss(mu, sigma)), 0), keys - 1)
                else:
                    i = rnd.randrange(keys)
                n += 1
                ids.append(i)
                if n % SET_EVERY == 0:
                    is_set.append(True)
                    parts.append(Resp.encode(b"SET", key(i), set_value(pool, i)))
                else:
                    is_set.append(False)
                    parts.append(Resp.encode(b"GET", key(i)))
            t0 = time.perf_counter()
            c.sock.sendall(b"".join(parts))
            replies = [c.read() for _ in ids]
            lat.append(time.perf_counter() - t0)
            for i, s, r in zip(ids, is_set, replies):
                if isinstance(r, RespError):
                    errors += 1
                    if first_error is None:
                        first_error = str(r)
                elif s:
                    sets += 1
                else:
                    gets += 1
                    if r != pool[i % POOL] and r != set_value(pool, i):
                        wrong += 1
        c.close()
        out.update(gets=gets, sets=sets, wrong=wrong, errors=errors, lat=lat,
                   first_error=first_error)
    except Exception as e:  # reported by the parent
        out["error"] = "%s: %s" % (type(e).__name__, e)
    results.put(out)


def run_load(srv, a, dist, pool, client_cpus):
    """Runs one read load against srv; returns its row of figures."""
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    results = ctx.Queue()
    procs = [ctx.Process(target=client_worker,
                         args=(srv.port, w, a, dist, pool, client_cpus, go, results),
                         daemon=True) for w in range(a.connections)]
    before = srv.info()
    ticks0 = benchlib.cpu_ticks(srv.proc.pid)
    for p in procs:
        p.start()
    time.sleep(0.5)  # the workers connect
    with RssSampler(srv.proc.pid) as rss:
        t0 = time.monotonic()
        go.set()
        outs = []
        try:
            for _ in procs:
                outs.append(results.get(timeout=a.seconds + 120))
        except Exception:
            raise BenchError("a client process did not report within %ds" % (a.seconds + 120))
        finally:
            for p in procs:
                p.join(10)
                if p.is_alive():
                    p.terminate()
        wall = time.monotonic() - t0
    ticks1 = benchlib.cpu_ticks(srv.proc.pid)
    failed = [o["error"] for o in outs if o["error"]]
    if failed:
        raise BenchError("client failed: %s" % failed[0])
    after = srv.info()
    lat = sorted(x for o in outs for x in o["lat"])
    ops = sum(o["gets"] + o["sets"] + o["errors"] for o in outs)
    d = {n: int(after.get(n, 0) or 0) - int(before.get(n, 0) or 0) for n in TIERED}
    lookups = d["tiered_cache_hits"] + d["tiered_cache_misses"]
    cpu_s = ((ticks1 - ticks0) / os.sysconf("SC_CLK_TCK")
             if ticks0 is not None and ticks1 is not None else None)
    return {
        "dist": dist,
        "ops": ops,
        "ops_s": ops / wall,
        "p50_ms": 1000 * lat[len(lat) // 2] if lat else None,
        "p99_ms": 1000 * lat[int(0.99 * (len(lat) - 1))] if lat else None,
        "cpu_us_op": 1e6 * cpu_s / ops if cpu_s is not None and ops else None,
        "wrong": sum(o["wrong"] for o in outs),
        "errors": sum(o["errors"] for o in outs),
        "first_error": next((o["first_error"] for o in outs if o.get("first_error")), None),
        "disk_reads": d["tiered_disk_reads"],
        "unspills": d["tiered_unspills"],
        "cache_hit_rate": d["tiered_cache_hits"] / lookups if lookups else None,
        "rss_peak": rss.peak,
    }


# ----------------------------------------------------------------------------- disk

def disk_test(srv, keys, timeout):
    """Deletes every other key and waits for tiered_disk_bytes to follow; returns
    (before, after, seconds, keys deleted)."""
    c = srv.client(timeout=120)
    try:
        before = int(c.info("tiered").get("tiered_disk_bytes", 0))
        deleted = 0
        for start in range(0, keys, 2 * LOAD_BATCH):
            batch = [key(i) for i in range(start, min(keys, start + 2 * LOAD_BATCH), 2)]
            deleted += int(c.cmd(b"DEL", *batch))
        t0 = time.monotonic()
        after = before
        while time.monotonic() - t0 < timeout:
            after = int(c.info("tiered").get("tiered_disk_bytes", 0))
            if before and after <= DISK_TARGET * before:
                break
            time.sleep(1.0)
        return before, after, time.monotonic() - t0, deleted
    finally:
        c.close()


# ----------------------------------------------------------------------------- main

def find_binary(path):
    """The server binary's absolute path (path relative to the current directory or the
    repository root, or a name in PATH); BenchError saying what to do when missing."""
    try:
        return benchlib.resolve_bin(path, "strata-server")
    except BenchError:
        raise BenchError("strata-server binary not found (or not executable) at %s: build "
                         "it first (scripts/build) or pass --strata-bin PATH" % path)


def run_server(mode, binary, a, scratch, pool, limit, client_cpus):
    """Starts one server, loads it, runs both loads; returns its summary."""
    workdir = os.path.join(scratch, mode)
    extra = []
    if mode == "spill":
        spill_dir = os.path.join(workdir, "spill")
        os.makedirs(spill_dir, exist_ok=True)
        extra = ["--maxmemory", str(limit), "--maxmemory-policy", "noeviction",
                 "--spill-dir", spill_dir]
        if a.spill_cache_size:
            extra += ["--spill-cache-size", a.spill_cache_size]
        if a.spill_blob_min_size:
            extra += ["--spill-blob-min-size", a.spill_blob_min_size]
    srv = benchlib.Server("strata", binary, a.cpus, workdir, threads=a.threads,
                          extra_args=extra)
    srv.start()
    try:
        c = srv.client(timeout=120)
        t = c.info("tiered")
        if mode == "spill" and t.get("tiered_enabled") != "1":
            raise BenchError("the server has no spill: INFO tiered says tiered_enabled:%s "
                             "(log: %s)" % (t.get("tiered_enabled"), srv.logfile))
        log("%s: loading %d keys of %d bytes" % (mode, a.keys, a.value_size))
        t0 = time.monotonic()
        with RssSampler(srv.proc.pid) as load_rss:
            refusals = load(c, a.keys, pool, a.stall_timeout)
            settled, settle_s = (settle(c, limit, a.settle_timeout) if mode == "spill"
                                 else (True, 0.0))
        load_s = time.monotonic() - t0
        if int(c.cmd("DBSIZE")) != a.keys:
            raise BenchError("%s: DBSIZE %s after loading %d keys" % (
                mode, c.cmd("DBSIZE"), a.keys))
        info = c.info()
        loaded = ints(info, "used_memory", "used_memory_tiered", *TIERED)
        log("%s: loaded in %.1fs (%d OOM refusals retried)%s; used_memory %d, cold keys %d" % (
            mode, load_s, refusals,
            "" if settled else ", NOT settled after %.0fs" % settle_s,
            loaded["used_memory"], loaded["tiered_cold_keys"]))
        c.close()
        rows = []
        for dist in ("gaussian", "uniform"):
            log("%s: %s load, %d connections x pipeline %d, %ds" % (
                mode, dist, a.connections, a.pipeline, a.seconds))
            row = run_load(srv, a, dist, pool, client_cpus)
            row["mode"] = mode
            rows.append(row)
            log("%s %s: %.0f ops/s, p50 %.2f ms, p99 %.2f ms, wrong %d, errors %d" % (
                mode, dist, row["ops_s"], row["p50_ms"] or 0, row["p99_ms"] or 0,
                row["wrong"], row["errors"]))
            if row["first_error"]:
                log("%s %s: first error reply: %s" % (mode, dist, row["first_error"]))
        info = srv.info()
        end = ints(info, "used_memory", "used_memory_tiered", *TIERED)
        end["tiered_last_error"] = info.get("tiered_last_error", "")
        status = proc_status(srv.proc.pid)
        hwm = status.get("VmHWM", 0)
        rss_split = (status.get("RssAnon", 0), status.get("RssFile", 0))
        disk = None
        if mode == "spill":
            log("spill: deleting every other key, then waiting up to %ds for the disk"
                % a.compact_timeout)
            disk = disk_test(srv, a.keys, a.compact_timeout)
        return {"mode": mode, "rows": rows, "load_s": load_s, "settled": settled,
                "settle_s": settle_s, "refusals": refusals, "loaded": loaded, "end": end,
                "hwm": hwm, "load_rss": load_rss.peak, "disk": disk, "rss_split": rss_split,
                "used_end": int(info.get("used_memory", 0))}
    finally:
        srv.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--strata-bin", default="build/server/strata-server")
    p.add_argument("--keys", type=int, default=200000)
    p.add_argument("--value-size", type=int, default=1024)
    p.add_argument("--maxmemory-mb", type=float, default=0,
                   help="B's maxmemory; 0 = the dataset's value bytes / 10")
    p.add_argument("--spill-blob-min-size", default="",
                   help="B's --spill-blob-min-size (default: the server's own)")
    p.add_argument("--spill-cache-size", default="",
                   help="B's --spill-cache-size (default: the server's own, auto)")
    p.add_argument("--seconds", type=int, default=20, help="length of each read load")
    p.add_argument("--threads", type=int, default=1, help="strata worker threads")
    p.add_argument("--connections", type=int, default=4, help="client processes")
    p.add_argument("--pipeline", type=int, default=16, help="commands per batch")
    p.add_argument("--cpus", default="0", help="CPUs for the server (taskset)")
    p.add_argument("--client-cpus", default="", help="CPUs for the clients (default: any)")
    p.add_argument("--settle-timeout", type=int, default=120,
                   help="seconds B may take to finish spilling after the load")
    p.add_argument("--stall-timeout", type=int, default=60,
                   help="seconds of refused SETs without progress before loading fails")
    p.add_argument("--compact-timeout", type=int, default=60,
                   help="seconds to wait for B's disk to shrink after the deletes")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--label", default="")
    a = p.parse_args()
    for name in ("keys", "value_size", "seconds", "threads", "connections", "pipeline"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    if a.label and not a.label.replace("-", "").replace("_", "").replace(".", "").isalnum():
        p.error("--label: letters, digits, '-', '_' and '.' only")
    benchlib.install_cleanup()
    binary = find_binary(a.strata_bin)
    benchlib.check_cpus("--cpus", a.cpus)
    client_cpus = benchlib.check_cpus("--client-cpus", a.client_cpus) if a.client_cpus else None
    dataset = a.keys * a.value_size
    limit = int(a.maxmemory_mb * MB) if a.maxmemory_mb > 0 else dataset // 10
    pool = values_pool(POOL, a.value_size, a.seed)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    scratch = os.path.join(benchlib.RESULTS_DIR, "tmp", "spill-%s-%d" % (stamp, os.getpid()))
    os.makedirs(scratch)
    log("dataset %d keys x %d bytes = %.1f MB; B's maxmemory %.1f MB; scratch %s" % (
        a.keys, a.value_size, dataset / MB, limit / MB, scratch))
    runs = []
    try:
        for mode in ("ram", "spill"):
            runs.append(run_server(mode, binary, a, scratch, pool, limit, client_cpus))
    except BaseException:
        log("servers' logs and data kept in %s" % scratch)
        raise
    ram, spill = runs

    def f(x, nd=2):
        return benchlib.fmt(x, nd) if x is not None else ""

    header = ["server", "load", "ops/s", "p50 ms", "p99 ms", "server CPU us/op",
              "wrong GETs", "error replies", "disk reads", "cache hit rate", "unspills",
              "RSS peak MB"]
    table_rows = []
    for run in runs:
        name = "A: all in RAM" if run["mode"] == "ram" else "B: spill, maxmemory %.1f MB" % (
            limit / MB)
        for r in run["rows"]:
            table_rows.append([name, r["dist"], "%.0f" % r["ops_s"], f(r["p50_ms"]),
                               f(r["p99_ms"]), f(r["cpu_us_op"]), str(r["wrong"]),
                               str(r["errors"]), str(r["disk_reads"]),
                               f(r["cache_hit_rate"], 3), str(r["unspills"]),
                               "%.1f" % (r["rss_peak"] / MB)])
    table = benchlib.md_table(header, table_rows)
    lines = []
    for ra, rb in zip(ram["rows"], spill["rows"]):
        lines.append("%s: B/A ops/s %.3f, p99 %.2f ms vs %.2f ms" % (
            ra["dist"], rb["ops_s"] / ra["ops_s"], rb["p99_ms"] or 0, ra["p99_ms"] or 0))
    rss_cap = RSS_TARGET * limit
    run_peak = max(r["rss_peak"] for r in spill["rows"])
    lines.append("B RSS: VmHWM %.1f MB (whole life, load included), peak sampled during the "
                 "reads %.1f MB, against %.2f x maxmemory = %.1f MB: %s" % (
                     spill["hwm"] / MB, run_peak / MB, RSS_TARGET, rss_cap / MB,
                     "ok" if spill["hwm"] <= rss_cap else
                     ("over (reads ok)" if run_peak <= rss_cap else "over")))
    lines.append("B RSS after the reads: %.1f MB anonymous + %.1f MB file-backed (mapped code "
                 "and libraries), used_memory %.1f MB" % (
                     spill["rss_split"][0] / MB, spill["rss_split"][1] / MB,
                     spill["used_end"] / MB))
    lines.append("A RSS: VmHWM %.1f MB" % (ram["hwm"] / MB))
    before, after, waited, deleted = spill["disk"]
    ratio = after / before if before else None
    lines.append("B disk: tiered_disk_bytes %d before deleting %d keys (every other one), "
                 "%d after %.0fs: after/before %s against %.2f: %s" % (
                     before, deleted, after, waited, f(ratio, 3), DISK_TARGET,
                     "ok" if ratio is not None and ratio <= DISK_TARGET else "over"))
    wrong = sum(r["wrong"] for run in runs for r in run["rows"])
    if wrong:
        lines.append("WRONG REPLIES: %d GETs returned nil or other bytes" % wrong)
    if not spill["settled"]:
        lines.append("B had not settled %.0fs after the load (spilling still going on)"
                     % spill["settle_s"])
    summary = "\n".join(lines)
    tiered_rows = [[n, str(spill["loaded"].get(n, "")), str(spill["end"].get(n, ""))]
                   for n in ("used_memory", "used_memory_tiered") + TIERED]
    tiered_rows.append(["tiered_last_error", "", spill["end"].get("tiered_last_error") or "(none)"])
    tiered_table = benchlib.md_table(["B", "after load and settle", "after both loads"],
                                     tiered_rows)
    print(table)
    print(summary)
    label = a.label or "spill-throughput"
    path = os.path.join(benchlib.RESULTS_DIR, "%s-%s.md" % (stamp, label))
    with open(path, "w") as out:
        out.write("# Spill throughput: all in RAM (A) against spill with maxmemory = "
                  "dataset / 10 (B)\n\n")
        out.write("Command: `%s`\n\n" % benchlib.command_line())
        out.write("%d keys of %d-byte random values (%.1f MB), loaded in key order; B with "
                  "--maxmemory %d (%.1f MB), noeviction, --spill-dir on the repository's "
                  "disk%s; loads of %ds each from %d client processes, pipeline %d, one SET "
                  "per %d GETs, keys Gaussian (mean keys/2, stddev keys/20, clipped) then "
                  "uniform; latency is per batch; strata with %d thread(s) on CPUs %s, "
                  "clients on %s. A loaded in %.1fs; B loaded and settled in %.1fs (%d "
                  "SETs refused with OOM and retried while spilling caught up).\n\n" % (
                      a.keys, a.value_size, dataset / MB, limit, limit / MB,
                      ", --spill-cache-size %s" % a.spill_cache_size
                      if a.spill_cache_size else "", a.seconds, a.connections, a.pipeline,
                      SET_EVERY - 1, a.threads, a.cpus, a.client_cpus or "any CPU",
                      ram["load_s"], spill["load_s"], spill["refusals"]))
        out.write(table + "\n\n" + summary.replace("\n", "\n\n") + "\n\n")
        out.write("INFO in B:\n\n" + tiered_table + "\n\n")
        out.write("Machine: %s\n" % benchlib.machine_info())
    print("results: %s" % path)
    shutil.rmtree(scratch, ignore_errors=True)
    if wrong:
        raise BenchError("%d GETs returned nil or other bytes (see %s)" % (wrong, path))


if __name__ == "__main__":
    try:
        main()
    except BenchError as e:
        print("spill_throughput: %s" % e, file=sys.stderr)
        sys.exit(1)
