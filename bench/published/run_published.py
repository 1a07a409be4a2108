#!/usr/bin/python3
"""Published memtier_benchmark workloads, strata-server vs redis-server, side by side.

Reproduces the usual published memtier comparison (random keys over a fully populated key
space, SET:GET 1:10 and 1:1, 100 B and 1 KiB values, pipeline 1 and 16) with strata-bench
(tools/strata-bench, memtier-compatible) against strata-server and redis-server on the
same machine.

Flow:
  1. Copies the strata-server and strata-bench binaries to the scratch folder (the tree
     may be rebuilt during a long run), starts strata-server (--threads SERVER_THREADS)
     and redis-server (--io-threads 1), both with --save "" --appendonly no, on free
     loopback ports, pinned with taskset to --server-cpus, and waits for PING (bounded).
  2. For each data size: FLUSHALL both servers, populate each with strata-bench
     (--ratio 1:0 --key-pattern P:P -n allkeys --key-minimum 1 --key-maximum KEYS -d SIZE:
     every key written exactly once), check DBSIZE == KEYS on both.
  3. For each ratio and pipeline: run strata-bench (pinned to --client-cpus) against
     each server in turn, alternating which server goes first from one configuration to
     the next (to even out drift), with --key-pattern R:R --distinct-client-seed
     --test-time T over the same key range. Gets must all hit (Misses/sec == 0, hit rate
     1.0); a miss is reported and makes the run fail (exit 1) after all measurements.
     Around each run the script also reads the server's INFO stats (commands processed,
     keyspace hits/misses) and its CPU time from /proc, as a cross-check of the
     client's counts and a client-independent cost figure (server CPU us per op).
  4. Stops both servers (also on an error, Ctrl-C or SIGTERM) and writes
       bench/results/<YYYYmmdd-HHMMSS>-published-<label>.csv   one row per server x config
       bench/results/<YYYYmmdd-HHMMSS>-published-<label>.md    command line, machine,
                                                               versions, tables, ratios
       bench/results/<YYYYmmdd-HHMMSS>-published-<label>.png   ops/s and p99 per config
     Scratch files (server logs, strata-bench output) live in bench/results/tmp/ and are
     removed after a successful run (kept, and named, on failure).
  gnuplot draws the PNG; without gnuplot the CSV and MD are still written and the run
  only fails if --require-plot was given.

Examples:
  bench/published/run_published.py                               # full run (~5 min)
  bench/published/run_published.py --keys 20000 --test-time 2 --label smoke
  bench/published/run_published.py --server-threads 2 --server-cpus 0-1 \\
      --client-cpus 2-3 --bench-threads 2 --label t2

Exit status: 0 success, 1 a failed step or check (misses, DBSIZE, strata-bench error),
2 bad arguments, 130 interrupted.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CSV_FIELDS = ["server", "server_threads", "ratio", "data_size", "pipeline", "ops_sec",
              "sets_sec", "gets_sec", "hit_rate", "avg_ms", "p50_ms", "p99_ms", "p99_9_ms",
              "kb_sec",
              # cross-checks, not in memtier's output:
              "errors", "server_cmds_per_op", "server_misses", "server_cpu_us_per_op",
              "server_busy_cores"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Published memtier workloads (ratio x data size x pipeline), strata-server "
                    "vs redis-server, measured with strata-bench. Writes "
                    "bench/results/<date>-published-<label>.csv/.md/.png.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--strata-bin", default="build/server/strata-server",
                   help="strata-server binary (path relative to the repo root, or in PATH)")
    p.add_argument("--redis-bin", default="redis-server", help="redis-server binary")
    p.add_argument("--bench-bin", default="build/tools/strata-bench/strata-bench",
                   help="strata-bench binary")
    p.add_argument("--server-threads", type=int, default=1,
                   help="strata-server --threads (redis-server always runs --io-threads 1)")
    p.add_argument("--server-cpus", default="0", help="taskset -c list for both servers")
    p.add_argument("--client-cpus", default="1", help="taskset -c list for strata-bench")
    p.add_argument("--bench-threads", type=int, default=1, help="strata-bench -t")
    p.add_argument("--clients", type=int, default=50, help="strata-bench -c (per thread)")
    p.add_argument("--test-time", type=int, default=10, help="seconds per measurement")
    p.add_argument("--keys", type=int, default=1000000,
                   help="key space: keys 1..KEYS, all populated before measuring")
    p.add_argument("--ratios", default="1:10 1:1", help="SET:GET ratios (space-separated)")
    p.add_argument("--data-sizes", default="100 1024", help="value sizes in bytes")
    p.add_argument("--pipelines", default="1 16", help="pipeline depths")
    p.add_argument("--random-data", action="store_true",
                   help="pass -R (random values) to strata-bench for populate and runs")
    p.add_argument("--populate-pipeline", type=int, default=16,
                   help="strata-bench --pipeline while populating (1 = no pipelining)")
    p.add_argument("--populate-timeout", type=int, default=900,
                   help="seconds allowed for one populate of one server")
    p.add_argument("--label", default=None,
                   help="name suffix of the result files (default: threads<N>)")
    p.add_argument("--out-dir", default="bench/results", help="where results go")
    p.add_argument("--require-plot", action="store_true",
                   help="exit non-zero when the PNG cannot be drawn (gnuplot missing/failing)")
    p.add_argument("--strata-args", default="",
                   help="extra strata-server arguments, e.g. '--io-backend epoll'")
    p.add_argument("--redis-args", default="", help="extra redis-server arguments")
    a = p.parse_args(argv)
    try:
        a.ratio_list = a.ratios.split()
        a.size_list = [int(x) for x in a.data_sizes.split()]
        a.pipeline_list = [int(x) for x in a.pipelines.split()]
    except ValueError as e:
        p.error("bad list: %s" % e)
    for r in a.ratio_list:
        s, _, g = r.partition(":")
        if not (s.isdigit() and g.isdigit()) or int(s) + int(g) == 0:
            p.error("bad ratio %r (want SET:GET, e.g. 1:10)" % r)
    if not a.ratio_list or not a.size_list or not a.pipeline_list:
        p.error("--ratios, --data-sizes and --pipelines need at least one value each")
    for name in ("server_threads", "bench_threads", "clients", "test_time", "keys",
                 "populate_pipeline", "populate_timeout"):
        if getattr(a, name) < 1:
            p.error("--%s must be >= 1" % name.replace("_", "-"))
    if any(x < 1 for x in a.size_list + a.pipeline_list):
        p.error("data sizes and pipelines must be >= 1")
    if a.label is None:
        a.label = "threads%d" % a.server_threads
    bl.check_label_and_cpus(p, a)
    return a


# ----------------------------------------------------------------------------- steps

def bench_common(a, port):
    return ["-s", "127.0.0.1", "-p", str(port), "-t", str(a.bench_threads),
            "-c", str(a.clients), "--hide-histogram"] + (["-R"] if a.random_data else [])


def populate(a, srv, size, scratch):
    """FLUSHALL, write keys 1..KEYS once each, check DBSIZE."""
    srv.cmd("FLUSHALL", timeout=120)
    out = os.path.join(scratch, "populate-%s-d%d.txt" % (srv.kind, size))
    cmd = [a.bench_copy] + bench_common(a, srv.port) + [
        "--ratio", "1:0", "--key-pattern", "P:P", "-n", "allkeys",
        "--key-minimum", "1", "--key-maximum", str(a.keys), "-d", str(size),
        "--pipeline", str(a.populate_pipeline),
        "--json-out-file", out + ".json"]
    t0 = time.monotonic()
    bl.run_cmd(cmd, a.populate_timeout, stdout_path=out, cpus=a.client_cpus,
               what="strata-bench populate (%s, %d B)" % (srv.kind, size))
    n = srv.cmd("DBSIZE")
    log_ok = n == a.keys
    bl.log("populated %s-server: %d keys of %d B in %.1fs (DBSIZE %s)"
           % (srv.kind, a.keys, size, time.monotonic() - t0, n))
    if not log_ok:
        raise bl.BenchError("%s-server DBSIZE is %s after populate, expected %d (output: %s)"
                            % (srv.kind, n, a.keys, out))


def server_counters(srv):
    st = srv.info("stats")
    return {"cmds": int(st.get("total_commands_processed", 0) or 0),
            "misses": int(st.get("keyspace_misses", 0) or 0),
            "ticks": bl.cpu_ticks(srv.proc.pid), "t": time.monotonic()}


def measure(a, srv, ratio, size, pipeline, scratch):
    """One strata-bench run against srv; returns a CSV row dict (plus 'problems')."""
    tag = "%s-r%s-d%d-p%d" % (srv.kind, ratio.replace(":", "_"), size, pipeline)
    out = os.path.join(scratch, tag + ".txt")
    js = os.path.join(scratch, tag + ".json")
    cmd = [a.bench_copy] + bench_common(a, srv.port) + [
        "--ratio", ratio, "--pipeline", str(pipeline), "-d", str(size),
        "--key-minimum", "1", "--key-maximum", str(a.keys), "--key-pattern", "R:R",
        "--distinct-client-seed", "--test-time", str(a.test_time),
        "--print-percentiles", "50,99,99.9", "--json-out-file", js]
    before = server_counters(srv)
    rc, _, _ = bl.run_cmd(cmd, a.test_time * 3 + 60, stdout_path=out, cpus=a.client_cpus,
                          check=False, what="strata-bench (%s)" % tag)
    after = server_counters(srv)
    problems = []
    if rc != 0:
        problems.append("strata-bench exit status %d (see %s)" % (rc, out))
    if not srv.alive():
        raise bl.BenchError("%s-server died during %s (log: %s)" % (srv.kind, tag, srv.logfile))
    if not os.path.exists(js):
        raise bl.BenchError("strata-bench wrote no JSON for %s (exit %d, output %s)" % (tag, rc, out))
    st = bl.bench_stats(js)
    sets, gets, tot = st["Sets"], st["Gets"], st["Totals"]
    hits, misses = float(gets.get("Hits/sec", 0)), float(gets.get("Misses/sec", 0))
    hit_rate = hits / (hits + misses) if hits + misses > 0 else None
    if misses != 0:
        problems.append("Gets Misses/sec = %.3f (hit rate %.6f), expected 0" % (misses, hit_rate))
    ratio_gets = int(ratio.split(":")[1])
    if ratio_gets > 0 and float(gets.get("Ops/sec", 0)) > 0 and hits == 0:
        problems.append("Gets Hits/sec is 0 although GETs ran")
    errors = int(tot.get("Errors", 0) or 0) + int(tot.get("Error Replies", 0) or 0) \
        + int(tot.get("Connection Errors", 0) or 0)
    if errors:
        problems.append("%d errors (Totals Errors/Error Replies/Connection Errors)" % errors)
    count = int(tot.get("Count", 0) or 0)
    cmds = after["cmds"] - before["cmds"] - 1   # minus the INFO of `after`
    srv_misses = after["misses"] - before["misses"]
    if srv_misses:
        problems.append("server counted %d keyspace misses" % srv_misses)
    cpu_us = busy = None
    if before["ticks"] is not None and after["ticks"] is not None and count:
        secs = (after["ticks"] - before["ticks"]) / os.sysconf("SC_CLK_TCK")
        cpu_us = secs * 1e6 / count
        busy = secs / (after["t"] - before["t"])
    row = {
        "server": srv.kind, "server_threads": a.server_threads if srv.kind == "strata" else 1,
        "ratio": ratio, "data_size": size, "pipeline": pipeline,
        "ops_sec": float(tot["Ops/sec"]), "sets_sec": float(sets.get("Ops/sec", 0)),
        "gets_sec": float(gets.get("Ops/sec", 0)), "hit_rate": hit_rate,
        "avg_ms": bl.avg_latency(tot), "p50_ms": bl.pct(tot, "p50.00"),
        "p99_ms": bl.pct(tot, "p99.00"), "p99_9_ms": bl.pct(tot, "p99.90"),
        "kb_sec": float(tot.get("KB/sec", 0)), "errors": errors,
        "server_cmds_per_op": cmds / count if count else None,
        "server_misses": srv_misses, "server_cpu_us_per_op": cpu_us, "server_busy_cores": busy,
        "count": count, "problems": problems,
    }
    bl.log("%-6s ratio %-5s d %-5d P%-3d %10.0f ops/s  avg %.3f p50 %s p99 %s ms  hit %s%s" % (
        srv.kind, ratio, size, pipeline, row["ops_sec"], row["avg_ms"] or 0,
        bl.fmt(row["p50_ms"]), bl.fmt(row["p99_ms"]), bl.fmt(hit_rate, 4),
        ("  PROBLEM: " + "; ".join(problems)) if problems else ""))
    return row


# ----------------------------------------------------------------------------- output

def config_label(r):
    return "%s %sB P%s" % (r["ratio"], r["data_size"], r["pipeline"])


def paired(rows):
    """[(config key, strata row, redis row)] in measurement order."""
    by = {}
    order = []
    for r in rows:
        k = (r["ratio"], r["data_size"], r["pipeline"])
        if k not in by:
            by[k] = {}
            order.append(k)
        by[k][r["server"]] = r
    return [(k, by[k].get("strata"), by[k].get("redis")) for k in order]


def ratio_of(s, r, field):
    if not s or not r or s.get(field) is None or not r.get(field):
        return None
    return s[field] / r[field]


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in rows:
            w.writerow([bl.fmt(r[k], 6 if k == "hit_rate" else 3) if isinstance(r[k], float)
                        else r[k] for k in CSV_FIELDS])


def write_plot(path, rows, title, scratch):
    """Two panels: ops/s (grouped bars) and p99 latency per configuration. Returns None on
    success, else a reason."""
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot not found in PATH (install gnuplot-nox); no PNG written"
    pairs = [(k, s, r) for k, s, r in paired(rows) if s and r]
    if not pairs:
        return "no complete strata/redis pair to plot"
    data = []
    for k, s, r in pairs:
        data.append('"%s",%.1f,%.1f,%.4f,%.4f' % (
            config_label(s), s["ops_sec"], r["ops_sec"], s["p99_ms"] or 0, r["p99_ms"] or 0))
    terms = subprocess.run([gp, "-e", "set terminal"], capture_output=True, text=True,
                           timeout=30).stdout + ""
    term = "pngcairo size 1400,1000 font ',10'" if "pngcairo" in terms else "png size 1400,1000"
    script = "\n".join([
        "set terminal %s" % term,
        "set output '%s'" % path.replace("'", "''"),
        "set datafile separator ','",
        "$D << EOD", *data, "EOD",
        "set multiplot layout 2,1 title '%s'" % title.replace("'", "''"),
        "set style data histograms",
        "set style histogram clustered gap 1",
        "set style fill solid 0.85 border -1",
        "set boxwidth 0.9",
        "set lmargin 12",
        "set grid ytics",
        "set key top right horizontal",
        "set offsets 0, 0, graph 0.12, 0",
        "set xtics rotate by -25 offset -1,0 nomirror",
        "set yrange [0:*]",
        "set ylabel 'thousand ops/s'",
        "set title 'Throughput (strata-bench Totals Ops/sec; higher is better)'",
        "plot $D using ($2/1000):xtic(1) title 'strata' lc rgb '#1f77b4', "
        "'' using ($3/1000) title 'redis' lc rgb '#d62728'",
        "set ylabel 'p99 latency (ms)'",
        "set title 'p99 latency (strata-bench Totals; lower is better)'",
        "plot $D using 4:xtic(1) title 'strata' lc rgb '#1f77b4', "
        "'' using 5 title 'redis' lc rgb '#d62728'",
        "unset multiplot", ""])
    gp_file = os.path.join(scratch, "plot.gp")
    with open(gp_file, "w") as f:
        f.write(script)
    try:
        r = subprocess.run([gp, gp_file], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "gnuplot timed out"
    if r.returncode != 0 or not os.path.exists(path) or os.path.getsize(path) == 0:
        return "gnuplot failed (status %d): %s" % (r.returncode, r.stderr.strip()[-500:])
    return None


def write_md(path, a, rows, info, versions, status, plot_note, csv_name, png_name):
    lines = ["# Published memtier workloads: strata vs redis, %s (%s)" % (a.label, a.stamp), ""]
    lines += ["Status: **%s**" % status, "", "Command:", "", "```",
              bl.command_line(), "```", ""]
    settings = [
        ("date", info["date"]), ("kernel (uname -r)", info["kernel"]),
        ("nproc", info["nproc"]), ("CPU", info["cpu"]), ("git", info["git"]),
        ("strata-server", versions["strata"]), ("redis-server", versions["redis"]),
        ("strata-bench", versions["bench"]),
        ("strata threads / redis io-threads", "%d / 1" % a.server_threads),
        ("server CPUs (taskset)", a.server_cpus), ("client CPUs (taskset)", a.client_cpus),
        ("strata-bench threads x clients", "%d x %d" % (a.bench_threads, a.clients)),
        ("keys (populated, then R:R over 1..KEYS)", a.keys),
        ("test time per measurement", "%d s" % a.test_time),
        ("values", "random (-R)" if a.random_data else "strata-bench default (not random)"),
        ("strata args / redis args", "`%s` / `%s`" % (a.strata_args, a.redis_args)),
    ]
    lines += [bl.md_table(["setting", "value"], settings), ""]
    lines += ["Files: `%s` (one row per server and configuration)%s." % (
        csv_name, ", `%s` (plot)" % png_name if not plot_note else ""), ""]
    if plot_note:
        lines += ["Plot: %s." % plot_note, ""]

    lines += ["## strata / redis", "",
              "Ratios of strata-server's figure to redis-server's for the same configuration: "
              "ops above 1 favour strata, latency below 1 favours strata. "
              "`cpu/op` is server CPU time per request (from /proc, includes the kernel "
              "work done in the server's context), a figure that does not depend on "
              "whether the client or the server is the bottleneck.", ""]
    hdr = ["ratio", "size", "pipeline", "strata ops/s", "redis ops/s", "ops ratio",
           "avg ratio", "p50 ratio", "p99 ratio", "p99.9 ratio", "cpu/op ratio"]
    trows = []
    for k, s, r in paired(rows):
        trows.append([k[0], k[1], k[2], bl.fmt(s and s["ops_sec"], 0), bl.fmt(r and r["ops_sec"], 0)]
                     + [bl.fmt(ratio_of(s, r, f), 2) for f in
                        ("ops_sec", "avg_ms", "p50_ms", "p99_ms", "p99_9_ms",
                         "server_cpu_us_per_op")])
    lines += [bl.md_table(hdr, trows), ""]

    lines += ["## All measurements", "",
              "Latencies in ms, from strata-bench's Totals row (all requests). "
              "`srv cmds/op`: commands the server counted (INFO total_commands_processed) per "
              "request strata-bench counted; ~1.0 when both agree (MSET/MGET would differ). "
              "`srv misses`: keyspace misses the server counted during the run (must be 0). "
              "`busy`: server CPU seconds per wall second.", ""]
    hdr = ["server", "ratio", "size", "P", "ops/s", "sets/s", "gets/s", "hit rate", "avg",
           "p50", "p99", "p99.9", "KB/s", "srv cmds/op", "srv misses", "cpu us/op", "busy"]
    trows = [[r["server"], r["ratio"], r["data_size"], r["pipeline"], bl.fmt(r["ops_sec"], 0),
              bl.fmt(r["sets_sec"], 0), bl.fmt(r["gets_sec"], 0), bl.fmt(r["hit_rate"], 4),
              bl.fmt(r["avg_ms"]), bl.fmt(r["p50_ms"]), bl.fmt(r["p99_ms"]), bl.fmt(r["p99_9_ms"]),
              bl.fmt(r["kb_sec"], 0), bl.fmt(r["server_cmds_per_op"], 3), r["server_misses"],
              bl.fmt(r["server_cpu_us_per_op"], 2), bl.fmt(r["server_busy_cores"], 2)]
             for r in rows]
    lines += [bl.md_table(hdr, trows), ""]
    probs = [(r, p) for r in rows for p in r["problems"]]
    if probs:
        lines += ["## Problems", ""]
        lines += ["- %s %s: %s" % (r["server"], config_label(r), p) for r, p in probs]
        lines += [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


# ----------------------------------------------------------------------------- main

def main(argv=None):
    a = parse_args(argv)
    bl.install_cleanup()
    out_dir, scratch, base = bl.run_paths(a, "published", "published-" + a.label)
    rows, status, ok, rc = [], "incomplete", False, 1
    versions = {"strata": "?", "redis": "?", "bench": "?"}
    try:
        if set(bl.parse_cpu_list(a.server_cpus)) & set(bl.parse_cpu_list(a.client_cpus)):
            bl.log("warning: --server-cpus and --client-cpus overlap; client and server "
                   "will compete for CPU")
        strata_bin = bl.resolve_bin(a.strata_bin, "--strata-bin")
        redis_bin = bl.resolve_bin(a.redis_bin, "--redis-bin")
        bench_bin = bl.resolve_bin(a.bench_bin, "--bench-bin")
        os.makedirs(scratch)
        os.makedirs(out_dir, exist_ok=True)
        strata_copy, strata_version = bl.staged_binary(strata_bin, a.strata_bin, "--strata-bin",
                                                       scratch)
        a.bench_copy, bench_version = bl.staged_binary(bench_bin, a.bench_bin, "--bench-bin",
                                                       scratch)
        versions = {"strata": strata_version,
                    "redis": bl.version_of(redis_bin) + " (%s)" % redis_bin,
                    "bench": bench_version}
        info = bl.machine_info()

        strata = bl.Server("strata", strata_copy, a.server_cpus, scratch,
                           threads=a.server_threads, extra_args=a.strata_args.split()).start()
        redis = bl.Server("redis", redis_bin, a.server_cpus, scratch,
                          extra_args=a.redis_args.split()).start()
        n_cfg = 0
        for size in a.size_list:
            for srv in (strata, redis):
                populate(a, srv, size, scratch)
            for ratio in a.ratio_list:
                for pipeline in a.pipeline_list:
                    order = (strata, redis) if n_cfg % 2 == 0 else (redis, strata)
                    n_cfg += 1
                    for srv in order:
                        rows.append(measure(a, srv, ratio, size, pipeline, scratch))
            # The runs SET only keys that exist, so the key count must not have moved.
            for srv in (strata, redis):
                n = srv.cmd("DBSIZE")
                if n != a.keys:
                    raise bl.BenchError("%s-server DBSIZE %s after the %d B runs, expected %d"
                                        % (srv.kind, n, size, a.keys))
        bad = sum(1 for r in rows if r["problems"])
        status = "OK" if not bad else "FAILED: %d measurement(s) with problems (see Problems)" % bad
        ok = not bad
        rc = 0 if ok else 1
    except bl.BenchError as e:
        bl.log("error: %s" % e)
        status = "FAILED: %s" % str(e).splitlines()[0]
    except (KeyboardInterrupt, SystemExit) as e:
        rc = e.code if isinstance(e, SystemExit) and isinstance(e.code, int) else 130
        bl.log("interrupted (exit status %d)" % rc)
        status = "INTERRUPTED"
    finally:
        bl.cleanup()

    if rows:
        info = bl.machine_info()
        write_csv(base + ".csv", rows)
        plot_note = write_plot(base + ".png", rows,
                               "strata (threads %d) vs redis, %s" % (a.server_threads, a.label),
                               scratch)
        if plot_note:
            bl.log("plot: %s" % plot_note)
            if a.require_plot and rc == 0:
                rc = 1
                ok = False
                status = "FAILED: --require-plot: " + plot_note
        write_md(base + ".md", a, rows, info, versions, status, plot_note,
                 os.path.basename(base) + ".csv", os.path.basename(base) + ".png")
        bl.log("wrote %s.csv, %s.md%s" % (base, base, "" if plot_note else ", %s.png" % base))
    if ok:
        shutil.rmtree(scratch, ignore_errors=True)
    elif os.path.isdir(scratch):
        bl.log("scratch files kept in %s" % scratch)
    bl.log("status: %s" % status)
    return rc


if __name__ == "__main__":
    sys.exit(main())
