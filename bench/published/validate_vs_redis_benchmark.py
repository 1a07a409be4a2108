#!/usr/bin/python3
"""Cross-check strata-bench against redis-benchmark on the same redis-server.

Both tools drive the same workload against one redis-server (pinned to --server-cpus; the
tools pinned to --client-cpus, one client thread each), so that any difference in the
reported figures comes from the tools, not from the server:

  GET only:  redis-benchmark -t get -c C -P P -d D -r KEYS -n N --csv
             strata-bench -t 1 -c C --pipeline P -d D --ratio 0:1 --key-pattern R:R
                 --key-minimum 0 --key-maximum KEYS-1 --key-prefix key: -n N/C
                 --distinct-client-seed
  SET only:  the same with -t set / --ratio 1:0

Key names differ between the tools: redis-benchmark -r KEYS names keys "key:" plus the
12-digit zero-padded number (key:000000000042), strata-bench "key:" plus the plain decimal
(key:42). The script therefore populates both name schemes before measuring, keys
0..KEYS-1 with D-byte values each: strata-bench's with strata-bench itself (--ratio 1:0
--key-pattern P:P -n allkeys) and redis-benchmark's with pipelined SETs from this script
(every name, exactly once; a random `redis-benchmark -t set -r KEYS` fill would leave
misses). It checks DBSIZE == 2 * KEYS, so every GET of either tool hits. The hit rate of
each run is measured on the server (INFO stats keyspace_hits / keyspace_misses before and
after) and reported for both tools; the GET comparison is only like for like when both
hit rates are 1.0.

Each tool runs --rounds times per (test, pipeline), interleaved and alternating which tool
goes first, and the medians are compared: ratio = strata-bench / redis-benchmark for
ops/s, average, p50 and p99 latency. A row passes when |ratio - 1| <= --tolerance (10%)
for ops/s, average and p50; p99 is reported but not judged (it is noisy on a shared
machine and both tools bucket latencies differently). The server's CPU time per request
is also reported for each tool: it should be about the same when both tools send the same
load.

Output: bench/results/<YYYYmmdd-HHMMSS>-validate-redis-benchmark[-<label>].md and .csv
(the CSV has one row per tool, test, pipeline and round, plus one "median" row per tool,
test and pipeline). Scratch files (raw tool output) go to bench/results/tmp/; they are
removed when every step ran without a problem, whatever the PASS/FAIL verdict, and kept
when a step or a run failed.

Examples:
  bench/published/validate_vs_redis_benchmark.py
  bench/published/validate_vs_redis_benchmark.py --keys 20000 --requests 50000 \\
      --requests-pipelined 200000 --rounds 1 --label smoke

Exit status: 0 every row passes, 1 a row fails or a step failed, 2 bad arguments,
130 interrupted.
"""
import argparse
import csv
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

TOOLS = ("redis-benchmark", "strata-bench")
METRICS = ("ops_sec", "avg_ms", "p50_ms", "p99_ms")
JUDGED = ("ops_sec", "avg_ms", "p50_ms")
EXTRA = ("server_hit_rate", "tool_hit_rate", "server_cmds_per_op", "server_cpu_us_per_op",
         "server_busy_cores", "wall_ops_sec", "in_flight_fraction")
CSV_FIELDS = ["tool", "test", "pipeline", "round", "requests", "ops_sec", "avg_ms", "p50_ms",
              "p99_ms"] + list(EXTRA)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Run the same GET-only and SET-only workloads with redis-benchmark and "
                    "strata-bench against one redis-server and compare the medians. Writes "
                    "bench/results/<date>-validate-redis-benchmark[-label].md/.csv.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--redis-bin", default="redis-server", help="redis-server binary")
    p.add_argument("--redis-benchmark-bin", default="redis-benchmark",
                   help="redis-benchmark binary")
    p.add_argument("--bench-bin", default="build/tools/strata-bench/strata-bench",
                   help="strata-bench binary")
    p.add_argument("--server-cpus", default="0", help="taskset -c list for redis-server")
    p.add_argument("--client-cpus", default="1",
                   help="taskset -c list for the tools")
    p.add_argument("--clients", type=int, default=50,
                   help="connections in all (redis-benchmark -c; strata-bench -c CLIENTS/THREADS)")
    p.add_argument("--client-threads", type=int, default=1,
                   help="client threads of each tool (redis-benchmark --threads, strata-bench -t); "
                        "CLIENTS must be a multiple")
    p.add_argument("--keys", type=int, default=1000000,
                   help="key space (redis-benchmark -r KEYS; strata-bench keys 0..KEYS-1)")
    p.add_argument("--data-size", type=int, default=100, help="value size in bytes (-d)")
    p.add_argument("--pipelines", default="1 16", help="pipeline depths")
    p.add_argument("--tests", default="get set", help="tests: get and/or set")
    p.add_argument("--requests", type=int, default=200000,
                   help="requests per run at pipeline 1 (redis-benchmark -n; strata-bench "
                        "-n REQUESTS/CLIENTS per client)")
    p.add_argument("--requests-pipelined", type=int, default=1000000,
                   help="requests per run at pipeline > 1")
    p.add_argument("--rounds", type=int, default=3,
                   help="runs of each tool per test and pipeline (interleaved); medians compared")
    p.add_argument("--tolerance", type=float, default=0.10,
                   help="pass when |strata-bench/redis-benchmark - 1| <= this for ops/s, avg, p50")
    p.add_argument("--run-timeout", type=int, default=300, help="seconds allowed per run")
    p.add_argument("--label", default="", help="suffix of the result file names")
    p.add_argument("--out-dir", default="bench/results", help="where results go")
    a = p.parse_args(argv)
    try:
        a.pipeline_list = [int(x) for x in a.pipelines.split()]
    except ValueError as e:
        p.error("--pipelines: %s" % e)
    a.test_list = a.tests.lower().split()
    if not a.test_list or any(t not in ("get", "set") for t in a.test_list):
        p.error("--tests: get and/or set")
    if not a.pipeline_list or min(a.pipeline_list) < 1:
        p.error("--pipelines: one or more depths >= 1")
    for name in ("clients", "client_threads", "keys", "data_size", "requests", "requests_pipelined", "rounds",
                 "run_timeout"):
        if getattr(a, name) < 1:
            p.error("--%s must be >= 1" % name.replace("_", "-"))
    if a.clients % a.client_threads:
        p.error("--clients must be a multiple of --client-threads")
    bl.check_label_and_cpus(p, a)
    return a


def requests_for(a, pipeline):
    """(total requests, per-client requests): a multiple of clients, so both tools send
    exactly the same number."""
    n = a.requests if pipeline == 1 else a.requests_pipelined
    per_client = max(1, n // a.clients)
    return per_client * a.clients, per_client


# ----------------------------------------------------------------------------- populate

def populate(a, srv, scratch):
    srv.cmd("FLUSHALL", timeout=120)
    t0 = time.monotonic()
    out = os.path.join(scratch, "populate-strata-bench.txt")
    bl.run_cmd([a.bench_copy, "-s", "127.0.0.1", "-p", str(srv.port), "-t", "1",
                "-c", str(a.clients), "--ratio", "1:0", "--key-pattern", "P:P", "-n", "allkeys",
                "--key-minimum", "0", "--key-maximum", str(a.keys - 1), "--key-prefix", "key:",
                "-d", str(a.data_size), "--pipeline", "16", "--hide-histogram",
                "--json-out-file", out + ".json"],
               max(600, a.keys // 2000), stdout_path=out, cpus=a.client_cpus,
               what="strata-bench populate")
    n1 = srv.cmd("DBSIZE")
    bl.log("strata-bench scheme (key:N): DBSIZE %s after %.1fs" % (n1, time.monotonic() - t0))
    if n1 != a.keys:
        raise bl.BenchError("DBSIZE %s after strata-bench populate of key:0..key:%d, expected %d"
                            % (n1, a.keys - 1, a.keys))
    # redis-benchmark's names, each once; values like redis-benchmark's ('x' * size).
    t0 = time.monotonic()
    value = b"x" * a.data_size
    c = srv.client(timeout=120)
    try:
        step = 20000
        for lo in range(0, a.keys, step):
            c.pipeline_set([(b"key:%012d" % i, value) for i in range(lo, min(lo + step, a.keys))])
    finally:
        c.close()
    n2 = srv.cmd("DBSIZE")
    bl.log("redis-benchmark scheme (key:%%012d): DBSIZE %s after %.1fs" % (n2, time.monotonic() - t0))
    if n2 != 2 * a.keys:
        raise bl.BenchError("DBSIZE %s after loading key:%%012d names, expected %d"
                            % (n2, 2 * a.keys))


# ----------------------------------------------------------------------------- runs

def server_counters(srv):
    st = srv.info("stats")
    return {"cmds": int(st.get("total_commands_processed", 0) or 0),
            "hits": int(st.get("keyspace_hits", 0) or 0),
            "misses": int(st.get("keyspace_misses", 0) or 0),
            "ticks": bl.cpu_ticks(srv.proc.pid), "t": time.monotonic()}


def parse_redis_benchmark_csv(text, test):
    """Finds the row of `test` in redis-benchmark --csv output; returns the metrics."""
    header = None
    for line in text.splitlines():
        cells = [c.strip().strip('"') for c in line.strip().split(",")]
        if not cells or not cells[0]:
            continue
        if cells[0] == "test":
            header = cells
            continue
        if header and cells[0].upper() == test.upper() and len(cells) == len(header):
            row = dict(zip(header, cells))
            try:
                return {"ops_sec": float(row["rps"]), "avg_ms": float(row["avg_latency_ms"]),
                        "p50_ms": float(row["p50_latency_ms"]),
                        "p99_ms": float(row["p99_latency_ms"]),
                        "p95_ms": float(row["p95_latency_ms"]),
                        "min_ms": float(row["min_latency_ms"]),
                        "max_ms": float(row["max_latency_ms"])}
            except (KeyError, ValueError) as e:
                raise bl.BenchError("redis-benchmark CSV row unreadable (%s): %r" % (e, line))
    raise bl.BenchError("no %s row in redis-benchmark output:\n%s" % (test.upper(), text[-1000:]))


def run_one(a, srv, tool, test, pipeline, rnd, scratch):
    total, per_client = requests_for(a, pipeline)
    tag = "%s-%s-p%d-r%d" % (tool, test, pipeline, rnd)
    out = os.path.join(scratch, tag + ".txt")
    if tool == "redis-benchmark":
        cmd = [a.rb_bin, "-h", "127.0.0.1", "-p", str(srv.port), "-t", test,
               "-c", str(a.clients), "-P", str(pipeline), "-d", str(a.data_size),
               "-r", str(a.keys), "-n", str(total), "--csv"]
        if a.client_threads > 1:
            cmd += ["--threads", str(a.client_threads)]
    else:
        js = out + ".json"
        cmd = [a.bench_copy, "-s", "127.0.0.1", "-p", str(srv.port),
               "-t", str(a.client_threads), "-c", str(a.clients // a.client_threads), "--pipeline", str(pipeline), "-d", str(a.data_size),
               "--ratio", "0:1" if test == "get" else "1:0", "--key-pattern", "R:R",
               "--key-minimum", "0", "--key-maximum", str(a.keys - 1), "--key-prefix", "key:",
               "-n", str(per_client), "--distinct-client-seed", "--hide-histogram",
               "--print-percentiles", "50,99,99.9", "--json-out-file", js]
    before = server_counters(srv)
    t0 = time.monotonic()
    rc, stdout, _ = bl.run_cmd(cmd, a.run_timeout, stdout_path=out, cpus=a.client_cpus,
                               check=False, what=tag)
    wall = time.monotonic() - t0
    after = server_counters(srv)
    if not srv.alive():
        raise bl.BenchError("redis-server died during %s" % tag)
    problems = []
    if rc != 0:
        problems.append("%s exit status %d (output %s)" % (tool, rc, out))
    if tool == "redis-benchmark":
        if rc != 0:
            raise bl.BenchError("; ".join(problems))
        m = parse_redis_benchmark_csv(stdout, test)
        m["tool_hit_rate"] = None
    else:
        if not os.path.exists(out + ".json"):
            raise bl.BenchError("strata-bench wrote no JSON for %s (exit %d, output %s)"
                                % (tag, rc, out))
        st = bl.bench_stats(out + ".json")
        row = st["Gets" if test == "get" else "Sets"]
        m = {"ops_sec": float(row["Ops/sec"]), "avg_ms": bl.avg_latency(row),
             "p50_ms": bl.pct(row, "p50.00"), "p99_ms": bl.pct(row, "p99.00")}
        if test == "get":
            h, mi = float(row.get("Hits/sec", 0)), float(row.get("Misses/sec", 0))
            m["tool_hit_rate"] = h / (h + mi) if h + mi else None
        else:
            m["tool_hit_rate"] = None
        cnt = int(st["Totals"].get("Count", 0) or 0)
        if cnt != total:
            problems.append("strata-bench Totals Count %d, expected %d (%d clients x %d)"
                            % (cnt, total, a.clients, per_client))
        errs = sum(int(st["Totals"].get(k, 0) or 0)
                   for k in ("Errors", "Error Replies", "Connection Errors"))
        if errs:
            problems.append("strata-bench reported %d errors" % errs)
    hits, misses = after["hits"] - before["hits"], after["misses"] - before["misses"]
    m["server_hit_rate"] = hits / (hits + misses) if test == "get" and hits + misses else None
    cmds = after["cmds"] - before["cmds"] - 1  # minus the INFO of `after`
    m["server_cmds_per_op"] = cmds / total
    m["server_cpu_us_per_op"] = m["server_busy_cores"] = None
    if before["ticks"] is not None and after["ticks"] is not None:
        cpu_s = (after["ticks"] - before["ticks"]) / os.sysconf("SC_CLK_TCK")
        m["server_cpu_us_per_op"] = cpu_s * 1e6 / total
        m["server_busy_cores"] = cpu_s / (after["t"] - before["t"])
    # Independent of the tool's own clock: requests over the tool process's lifetime
    # (includes its start-up and connection set-up, so a little below the tool's figure).
    m["wall_ops_sec"] = total / wall
    # Little's law: with CLIENTS x PIPELINE requests always in flight, avg latency x ops/s
    # equals CLIENTS x PIPELINE. The fraction below 1 is time a request slot sits idle in
    # the client (or latency the tool does not measure).
    m["in_flight_fraction"] = (m["avg_ms"] / 1000 * m["ops_sec"] / (a.clients * pipeline)
                               if m.get("avg_ms") else None)
    m.update({"tool": tool, "test": test, "pipeline": pipeline, "round": rnd,
              "requests": total, "problems": problems, "wall_s": wall})
    bl.log("%-15s %-3s P%-3d round %d: %10.0f ops/s avg %s p50 %s p99 %s ms, server hit %s%s" % (
        tool, test, pipeline, rnd, m["ops_sec"], bl.fmt(m["avg_ms"]), bl.fmt(m["p50_ms"]),
        bl.fmt(m["p99_ms"]), bl.fmt(m["server_hit_rate"], 4),
        ("  PROBLEM: " + "; ".join(problems)) if problems else ""))
    return m


def summarize(a, runs):
    """{(test, pipeline): {tool: median row}}"""
    out = {}
    for test in a.test_list:
        for p in a.pipeline_list:
            out[(test, p)] = {}
            for tool in TOOLS:
                rs = [r for r in runs if r["test"] == test and r["pipeline"] == p
                      and r["tool"] == tool]
                if not rs:
                    continue
                med = {"tool": tool, "test": test, "pipeline": p, "round": "median",
                       "requests": rs[0]["requests"], "problems": []}
                for k in METRICS + EXTRA:
                    med[k] = bl.median([r.get(k) for r in rs])
                out[(test, p)][tool] = med
    return out


def judge(a, summary):
    """[(test, pipeline, {metric: ratio}, pass?, notes)]"""
    rows = []
    for (test, p), by in summary.items():
        rb, sb = by.get("redis-benchmark"), by.get("strata-bench")
        if not rb or not sb:
            continue
        ratios = {}
        for k in METRICS + ("server_cpu_us_per_op",):
            ratios[k] = sb[k] / rb[k] if sb.get(k) is not None and rb.get(k) else None
        ok = all(ratios[k] is not None and abs(ratios[k] - 1) <= a.tolerance for k in JUDGED)
        notes = []
        if test == "get":
            hr = (rb["server_hit_rate"], sb["server_hit_rate"])
            if any(h is None or h < 0.999 for h in hr):
                notes.append("hit rates differ from 1.0 (redis-benchmark %s, strata-bench %s): "
                             "not like for like" % (bl.fmt(hr[0], 4), bl.fmt(hr[1], 4)))
        rows.append((test, p, ratios, ok, notes))
    return rows


# ----------------------------------------------------------------------------- output

def write_csv(path, runs, summary):
    rows = list(runs)
    for by in summary.values():
        rows += [by[t] for t in TOOLS if t in by]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in rows:
            w.writerow([bl.fmt(r.get(k), 4) if isinstance(r.get(k), float) else
                        ("" if r.get(k) is None else r.get(k)) for k in CSV_FIELDS])


def write_md(path, a, runs, summary, verdicts, info, versions, status, csv_name):
    L = ["# strata-bench vs redis-benchmark on redis-server (%s)" % a.stamp, "",
         "Status: **%s**" % status, "", "Command:", "", "```", bl.command_line(), "```", ""]
    tp = ", ".join("P%d: %d (%d per strata-bench connection)" % ((p,) + requests_for(a, p))
                   for p in a.pipeline_list)
    settings = [("date", info["date"]), ("kernel (uname -r)", info["kernel"]),
                ("nproc", info["nproc"]), ("CPU", info["cpu"]), ("git", info["git"]),
                ("redis-server", versions["redis"]), ("redis-benchmark", versions["rb"]),
                ("strata-bench", versions["bench"]),
                ("server CPUs / client CPUs (taskset)", "%s / %s" % (a.server_cpus, a.client_cpus)),
                ("connections / client threads per tool", "%d / %d" % (a.clients, a.client_threads)),
                ("keys / value size", "%d / %d B" % (a.keys, a.data_size)),
                ("requests per run", tp), ("rounds (medians compared)", a.rounds),
                ("tolerance", "%.0f%% on ops/s, avg, p50" % (a.tolerance * 100))]
    L += [bl.md_table(["setting", "value"], settings), ""]
    L += ["Key names: redis-benchmark uses `key:` + 12-digit zero-padded numbers "
          "(`key:000000000042`), strata-bench `key:` + plain decimal (`key:42`). Both schemes "
          "were populated (keys 0..%d each, DBSIZE %d), so GETs of both tools hit; the server-"
          "side hit rate of each run (INFO keyspace_hits/misses) is in the tables below. A GET "
          "comparison is only like for like when both are 1.0." % (a.keys - 1, 2 * a.keys), ""]
    L += ["## Comparison (medians; ratio = strata-bench / redis-benchmark)", "",
          "PASS when |ratio - 1| <= %.0f%% for ops/s, avg and p50; p99 is reported, not judged. "
          "`server cpu/op ratio` compares the server CPU time per request under each tool "
          "(about 1.0 when the tools send the same load)." % (a.tolerance * 100), ""]
    hdr = ["test", "P", "rb ops/s", "sb ops/s", "ops ratio", "rb avg", "sb avg", "avg ratio",
           "rb p50", "sb p50", "p50 ratio", "rb p99", "sb p99", "p99 ratio",
           "server hit rb / sb", "server busy rb / sb", "server cpu/op ratio", "result"]
    trows = []
    for test, p, ratios, ok, notes in verdicts:
        rb, sb = summary[(test, p)]["redis-benchmark"], summary[(test, p)]["strata-bench"]
        trows.append([test.upper(), p, bl.fmt(rb["ops_sec"], 0), bl.fmt(sb["ops_sec"], 0),
                      bl.fmt(ratios["ops_sec"]), bl.fmt(rb["avg_ms"]), bl.fmt(sb["avg_ms"]),
                      bl.fmt(ratios["avg_ms"]), bl.fmt(rb["p50_ms"]), bl.fmt(sb["p50_ms"]),
                      bl.fmt(ratios["p50_ms"]), bl.fmt(rb["p99_ms"]), bl.fmt(sb["p99_ms"]),
                      bl.fmt(ratios["p99_ms"]),
                      "%s / %s" % (bl.fmt(rb["server_hit_rate"], 4) or "-",
                                   bl.fmt(sb["server_hit_rate"], 4) or "-"),
                      "%s / %s" % (bl.fmt(rb["server_busy_cores"], 2), bl.fmt(sb["server_busy_cores"], 2)),
                      bl.fmt(ratios["server_cpu_us_per_op"]),
                      ("PASS" if ok else "FAIL") + (" (see notes)" if notes else "")])
    L += [bl.md_table(hdr, trows), ""]
    notes = [(t, p, n) for t, p, _, _, ns in verdicts for n in ns]
    if notes:
        L += ["Notes:", ""] + ["- %s P%d: %s" % (t.upper(), p, n) for t, p, n in notes] + [""]
    L += ["## Reading the comparison", "",
          "- **Pipelined latency is measured differently.** redis-benchmark takes one latency "
          "sample per batch (from writing the batch's first byte to reading the first bytes of "
          "the replies; `readHandler` computes it once, while `c->latency < 0`) and records it "
          "for every request of the batch. strata-bench, like memtier_benchmark, times each "
          "request until its own reply. At P > 1 strata-bench's avg/p50/p99 are therefore "
          "expected to be higher; a latency FAIL at P > 1 alone is that difference, not an error.",
          "- **Client-bound runs measure the client.** When `server busy` is well below 1 core, "
          "the server waited for the client and ops/s shows how fast each tool generates load "
          "on its core(s), not the server's capacity. The tools then legitimately differ.",
          "- **In flight** (`avg x ops/s / (connections x pipeline)`, Little's law): 1.0 when "
          "every connection always has PIPELINE requests outstanding and the tool times all of "
          "that. Below 1: time a connection's next request waits inside the client before it is "
          "written (not counted as latency by either tool), or, for redis-benchmark at P > 1, the "
          "untimed rest of each batch. A value above 1 would mean the tool's latencies or "
          "rates are inconsistent.",
          "- `wall ops/s`: requests / lifetime of the tool's process (start-up and connecting "
          "included), an independent check of the tool's own ops/s (slightly lower).",
          "- `server cpu us/op` falls when the load rises (more requests per wake-up), so it "
          "matches between the tools only when their rates match.", ""]
    L += ["## All runs", "", "Latencies in ms. `srv cmds/op`: commands the server counted per "
          "request sent (redis-benchmark adds a CONFIG GET or two per run).", ""]
    hdr = ["tool", "test", "P", "round", "requests", "ops/s", "wall ops/s", "avg", "p50", "p99",
           "in flight", "server hit", "tool hit", "srv cmds/op", "server cpu us/op", "server busy"]
    trows = [[r["tool"], r["test"].upper(), r["pipeline"], r["round"], r["requests"],
              bl.fmt(r["ops_sec"], 0), bl.fmt(r["wall_ops_sec"], 0), bl.fmt(r["avg_ms"]),
              bl.fmt(r["p50_ms"]), bl.fmt(r["p99_ms"]), bl.fmt(r["in_flight_fraction"], 2),
              bl.fmt(r["server_hit_rate"], 4), bl.fmt(r["tool_hit_rate"], 4),
              bl.fmt(r["server_cmds_per_op"], 4), bl.fmt(r["server_cpu_us_per_op"], 2),
              bl.fmt(r["server_busy_cores"], 2)]
             for r in runs]
    L += [bl.md_table(hdr, trows), ""]
    probs = [(r, p) for r in runs for p in r["problems"]]
    if probs:
        L += ["## Problems", ""] + ["- %s %s P%d round %d: %s" % (
            r["tool"], r["test"].upper(), r["pipeline"], r["round"], p) for r, p in probs] + [""]
    L += ["CSV: `%s` (one row per run, plus a `median` row per tool, test and pipeline)." % csv_name, ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


# ----------------------------------------------------------------------------- main

def main(argv=None):
    a = parse_args(argv)
    bl.install_cleanup()
    out_dir, scratch, base = bl.run_paths(
        a, "validate", "validate-redis-benchmark" + ("-" + a.label if a.label else ""))
    runs, status, ok, rc = [], "incomplete", False, 1
    keep_scratch = True   # removed when every step ran and no run had a problem
    versions = {"redis": "?", "rb": "?", "bench": "?"}
    info = bl.machine_info()
    try:
        redis_bin = bl.resolve_bin(a.redis_bin, "--redis-bin")
        a.rb_bin = bl.resolve_bin(a.redis_benchmark_bin, "--redis-benchmark-bin")
        bench_bin = bl.resolve_bin(a.bench_bin, "--bench-bin")
        os.makedirs(scratch)
        os.makedirs(out_dir, exist_ok=True)
        a.bench_copy, bench_version = bl.staged_binary(bench_bin, a.bench_bin, "--bench-bin",
                                                       scratch)
        versions = {"redis": "%s (%s)" % (bl.version_of(redis_bin), redis_bin),
                    "rb": "%s (%s)" % (bl.version_of(a.rb_bin), a.rb_bin),
                    "bench": bench_version}
        srv = bl.Server("redis", redis_bin, a.server_cpus, scratch).start()
        populate(a, srv, scratch)
        k = 0
        for rnd in range(1, a.rounds + 1):
            for p in a.pipeline_list:
                for test in a.test_list:
                    order = TOOLS if k % 2 == 0 else TOOLS[::-1]
                    k += 1
                    for tool in order:
                        runs.append(run_one(a, srv, tool, test, p, rnd, scratch))
        n = srv.cmd("DBSIZE")
        if n != 2 * a.keys:
            raise bl.BenchError("DBSIZE %s after the runs, expected %d (a tool wrote keys "
                                "outside the populated ranges)" % (n, 2 * a.keys))
        ok = True
    except bl.BenchError as e:
        bl.log("error: %s" % e)
        status = "FAILED: %s" % str(e).splitlines()[0]
    except (KeyboardInterrupt, SystemExit) as e:
        rc = e.code if isinstance(e, SystemExit) and isinstance(e.code, int) else 130
        bl.log("interrupted (exit status %d)" % rc)
        status = "INTERRUPTED"
    finally:
        bl.cleanup()

    if runs:
        summary = summarize(a, runs)
        verdicts = judge(a, summary)
        if ok:
            bad = [v for v in verdicts if not v[3]]
            probs = sum(1 for r in runs if r["problems"])
            keep_scratch = probs > 0
            if bad or probs:
                ok = False
                status = "FAIL: %d of %d rows outside the tolerance, %d run(s) with problems" % (
                    len(bad), len(verdicts), probs)
            else:
                status = "PASS: all %d rows within %.0f%%" % (len(verdicts), a.tolerance * 100)
            rc = 0 if ok else 1
        write_csv(base + ".csv", runs, summary)
        write_md(base + ".md", a, runs, summary, verdicts, info, versions, status,
                 os.path.basename(base) + ".csv")
        bl.log("wrote %s.md and %s.csv" % (base, base))
    if not keep_scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    elif os.path.isdir(scratch):
        bl.log("scratch files kept in %s" % scratch)
    bl.log("status: %s" % status)
    return rc


if __name__ == "__main__":
    sys.exit(main())
