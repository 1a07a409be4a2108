#!/usr/bin/python3
"""How many requests one strata-bench thread sends, next to one redis-benchmark thread.

Both clients drive the same strata-server (one worker thread) with the same workload:
--clients connections, pipeline --pipeline, random keys over --keys keys that all exist
(populated under both tools' key names: strata-bench's `key:<n>` and redis-benchmark's
`key:<12-digit n>`), so every GET hits for both. The server is pinned to --server-cpus and
the client to --client-cpus; the runs alternate between the tools, --rounds times, and
the median of each is reported.

Two figures per tool:
  ops/s            requests answered per second of wall time (against this server);
  ops per CPU-s    requests per second of the client's own CPU time (user + system, from
                   wait4), i.e. what one client thread could send if the server were not
                   the limit. On a 2-core machine the single-threaded server saturates
                   first, so this is the fair measure of the client itself.

With --client-cpu-quota F (root, cgroup v1 cpu controller) each client run is held to
F of one CPU by a CFS quota (cpu.cfs_quota_us), the same budget for both tools. With
F = 0.5 the one-core server keeps headroom, so the wall-clock ops/s of each tool is what
it sends from half a core: the ratio then measures the clients directly, not the
server's ceiling.

Usage:
  bench/published/client_throughput.py                       # defaults below
  bench/published/client_throughput.py --client-cpu-quota 0.5 --label quota50
  bench/published/client_throughput.py --requests 500000 --rounds 1   # quick
Results: a table on stdout and bench/results/<date>-strata-bench-client[-<label>].md.
"""
import argparse
import datetime
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

ROOT = bl.ROOT


class CpuQuota:
    """A cgroup v1 cpu group holding its processes to `fraction` of one CPU."""

    ROOT = "/sys/fs/cgroup/cpu"
    PERIOD_US = 20000

    def __init__(self, fraction):
        if not 0.05 <= fraction <= 1.0:
            raise SystemExit("--client-cpu-quota: expected a fraction in [0.05, 1]")
        if os.geteuid() != 0 or not os.path.exists(os.path.join(self.ROOT, "cpu.cfs_quota_us")):
            raise SystemExit("--client-cpu-quota needs root and the cgroup v1 cpu controller "
                             "at %s" % self.ROOT)
        self.path = os.path.join(self.ROOT, "strata-bench-client-%d" % os.getpid())
        os.mkdir(self.path)
        with open(os.path.join(self.path, "cpu.cfs_period_us"), "w") as f:
            f.write(str(self.PERIOD_US))
        with open(os.path.join(self.path, "cpu.cfs_quota_us"), "w") as f:
            f.write(str(int(self.PERIOD_US * fraction)))

    def wrap(self, cmd):
        """cmd, started inside the group (the shell joins it, then execs cmd)."""
        procs = os.path.join(self.path, "cgroup.procs")
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs] + cmd

    def remove(self):
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def run_measured(cmd, timeout):
    """Runs cmd; returns (stdout, client CPU seconds, wall seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid != 0:
            break
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("timed out: %s" % " ".join(cmd))
        time.sleep(0.01)
    wall = time.monotonic() - start
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s\n%s" % (cmd[0], proc.returncode, out, err))
    return out, usage.ru_utime + usage.ru_stime, wall


def populate(server, keys, value_size, bench_bin):
    """Writes key:<n> (strata-bench) and key:<%012d> (redis-benchmark) for n < keys."""
    subprocess.run([bench_bin, "-p", str(server.port), "-t", "1", "-c", "8", "--ratio", "1:0",
                    "--key-pattern", "P:P", "-n", "allkeys", "--key-minimum", "0",
                    "--key-maximum", str(keys - 1), "--key-prefix", "key:", "-d",
                    str(value_size), "--pipeline", "64", "--hide-histogram"],
                   check=True, capture_output=True, timeout=600)
    value = b"x" * value_size
    c = server.client()
    try:
        c.pipeline_set((b"key:%012d" % i, value) for i in range(keys))
    finally:
        c.close()
    size = server.cmd("DBSIZE")
    if size != 2 * keys:
        raise RuntimeError("populate: DBSIZE %s, expected %d" % (size, 2 * keys))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strata-bin", default=os.path.join(ROOT, "build/server/strata-server"))
    ap.add_argument("--bench-bin", default=os.path.join(ROOT, "build/tools/strata-bench/strata-bench"))
    ap.add_argument("--server-cpus", default="0")
    ap.add_argument("--client-cpus", default="1")
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--requests", type=int, default=4000000, help="per run, both tools")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tests", default="get set")
    ap.add_argument("--client-cpu-quota", type=float, default=0,
                    help="hold each client run to this fraction of one CPU (cgroup v1)")
    ap.add_argument("--label", default="", help="suffix of the result file name")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench/results"))
    args = ap.parse_args()
    invocation = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])

    bl.install_cleanup()
    tmp_root = os.path.join(bl.RESULTS_DIR, "tmp")
    os.makedirs(tmp_root, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="client-throughput-", dir=tmp_root)
    server = bl.Server("strata", args.strata_bin, args.server_cpus, scratch).start()
    port = server.port
    results = {}  # (tool, test) -> list of (ops_s, cpu_s, requests)
    quota = None
    try:
        if args.client_cpu_quota > 0:
            quota = CpuQuota(args.client_cpu_quota)
        populate(server, args.keys, args.value_size, args.bench_bin)
        per_client = max(1, args.requests // args.clients)
        total = per_client * args.clients
        for rnd in range(args.rounds):
            for test in args.tests.split():
                order = ["redis-benchmark", "strata-bench"]
                if (rnd + len(test)) % 2:
                    order.reverse()
                for tool in order:
                    if tool == "redis-benchmark":
                        cmd = ["taskset", "-c", args.client_cpus, "redis-benchmark", "-p",
                               str(port), "-t", test, "-n", str(total), "-r", str(args.keys),
                               "-P", str(args.pipeline), "-c", str(args.clients), "-d",
                               str(args.value_size), "--csv"]
                    else:
                        cmd = ["taskset", "-c", args.client_cpus, args.bench_bin, "-p",
                               str(port), "-t", "1", "-c", str(args.clients), "--pipeline",
                               str(args.pipeline), "--ratio", "0:1" if test == "get" else "1:0",
                               "-n", str(per_client), "--key-prefix", "key:", "--key-minimum",
                               "0", "--key-maximum", str(args.keys - 1), "-d",
                               str(args.value_size), "--distinct-client-seed",
                               "--hide-histogram"]
                    if quota is not None:
                        cmd = quota.wrap(cmd)
                    out, cpu, wall = run_measured(cmd, timeout=600)
                    if tool == "redis-benchmark":
                        line = [l for l in out.splitlines() if l.startswith('"%s"' % test.upper())]
                        ops = float(line[0].split(",")[1].strip('"'))
                    else:
                        row = [l for l in out.splitlines() if l.startswith("Totals")][0].split()
                        ops = float(row[1])
                        if test == "get" and float(row[3]) != 0:
                            raise RuntimeError("strata-bench GETs missed: %s" % row)
                    results.setdefault((tool, test), []).append((ops, cpu, total))
                    print("round %d %-15s %s: %10.0f ops/s, client CPU %.2f s for %d requests"
                          % (rnd + 1, tool, test.upper(), ops, cpu, total), flush=True)
    finally:
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
        if quota is not None:
            quota.remove()

    lines = []
    lines.append("| test | tool | ops/s (median) | client CPU µs per request | ops per client CPU-second |")
    lines.append("|---|---|---:|---:|---:|")
    summary = []
    for test in args.tests.split():
        figures = {}
        for tool in ("redis-benchmark", "strata-bench"):
            runs = results[(tool, test)]
            ops = statistics.median(r[0] for r in runs)
            per_cpu = statistics.median(r[2] / r[1] for r in runs)
            figures[tool] = (ops, per_cpu)
            lines.append("| %s | %s | %.0f | %.3f | %.0f |" % (test.upper(), tool, ops,
                                                              1e6 / per_cpu, per_cpu))
        summary.append("%s: strata-bench / redis-benchmark = %.2fx ops/s against the same "
                       "server, %.2fx requests per client CPU-second"
                       % (test.upper(), figures["strata-bench"][0] / figures["redis-benchmark"][0],
                          figures["strata-bench"][1] / figures["redis-benchmark"][1]))
    table = "\n".join(lines)
    print("\n" + table + "\n\n" + "\n".join(summary))

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "%s-strata-bench-client%s.md"
                        % (stamp, "-" + args.label if args.label else ""))
    rb_version = subprocess.run(["redis-benchmark", "--version"], capture_output=True,
                                text=True).stdout.strip()
    with open(path, "w") as f:
        f.write("# One strata-bench thread vs one redis-benchmark thread\n\n")
        f.write("Command: `%s`\n\n" % invocation)
        f.write("Machine: %s, %d CPUs, kernel %s; %s\n\n" % (platform.machine(), os.cpu_count(),
                                                          platform.release(), rb_version))
        f.write("Server: strata-server --threads 1 pinned to CPU %s; client pinned to CPU %s; "
                "%d connections, pipeline %d, %d-byte values, %d keys (all GETs hit), %d "
                "requests per run, median of %d alternating rounds%s.\n\n"
                % (args.server_cpus, args.client_cpus, args.clients, args.pipeline,
                   args.value_size, args.keys, per_client * args.clients, args.rounds,
                   "; each client run held to %.0f%% of one CPU by a CFS quota"
                   % (100 * args.client_cpu_quota) if quota is not None else ""))
        f.write(table + "\n\n")
        for s in summary:
            f.write("- " + s + "\n")
    print("\nwrote %s" % os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
