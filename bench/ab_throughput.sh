#!/usr/bin/env bash
# Interleaved throughput A/B of two strata-server binaries, driven by strata-bench.
#
# Both servers run at the same time on free loopback ports, persistence off, pinned to
# the same server core(s) (SERVER_CPUS), each preloaded with KEYS keys of VALUE_SIZE
# random printable bytes (memtier-0 ...). strata-bench, pinned to CLIENT_CPUS, then runs
# each test (set: SETs only, get: GETs only, mixed: SET:GET 1:10, mget10 and mset10:
# MGETs and MSETs of 10 keys, each counted as one operation) for SECONDS at each
# pipeline depth, with random keys over the whole keyspace, each connection its own
# sequence. Each round measures A and B once per test and depth, the order alternating
# from one measurement to the next, so drift of this shared machine falls on both. The
# report gives, per test and depth, the median over the rounds of each binary's ops/s and
# server CPU per request (utime+stime of all its threads, /proc/PID/stat), and B/A.
#
# strata-bench sends several times faster from one core than redis-benchmark, so the
# server, not the client, is what bounds a pipelined run (busy cores in the CSV).
#
# Options (environment):
#   A_BIN, B_BIN   the two strata-server binaries (required)
#   A_NAME, B_NAME their names in the report (A, B)
#   STRATA_BENCH_BIN  strata-bench (build/tools/strata-bench/strata-bench)
#   THREADS        strata worker threads (1)
#   SERVER_CPUS    taskset CPU list for both servers (0)
#   CLIENT_CPUS    taskset CPU list for strata-bench (1); one strata-bench thread per CPU
#   KEYS           keys preloaded and used (1000000)
#   VALUE_SIZE     bytes per value (100)
#   CLIENTS        connections in all (50)
#   PIPELINES      pipeline depths ("16")
#   TESTS          tests, from set get mixed mget10 mset10 ("get set")
#   SECONDS_EACH   seconds per measurement (3)
#   ROUNDS         rounds (5)
#   A_ARGS, B_ARGS extra server arguments (word-split)
#   LABEL          label in the result file names (ab)
#
# Results: a table on stdout, plus bench/results/<date>-<label>.csv (every measurement)
# and .md (the medians).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INVOCATION="$(printf '%q ' "$0" "$@")"
INVOCATION="${INVOCATION% }"

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi

A_BIN="${A_BIN:-}"
B_BIN="${B_BIN:-}"
A_NAME="${A_NAME:-A}"
B_NAME="${B_NAME:-B}"
STRATA_BENCH_BIN="${STRATA_BENCH_BIN:-$ROOT/build/tools/strata-bench/strata-bench}"
THREADS="${THREADS:-1}"
SERVER_CPUS="${SERVER_CPUS:-0}"
CLIENT_CPUS="${CLIENT_CPUS:-1}"
KEYS="${KEYS:-1000000}"
VALUE_SIZE="${VALUE_SIZE:-100}"
CLIENTS="${CLIENTS:-50}"
PIPELINES="${PIPELINES:-16}"
TESTS="${TESTS:-get set}"
SECONDS_EACH="${SECONDS_EACH:-3}"
ROUNDS="${ROUNDS:-5}"
A_ARGS="${A_ARGS:-}"
B_ARGS="${B_ARGS:-}"
LABEL="$(printf '%s' "${LABEL:-ab}" | tr -c 'A-Za-z0-9._-' '_')"

die() { echo "ab_throughput: $*" >&2; exit 1; }

[[ -x "$A_BIN" ]] || die "A_BIN must be a strata-server binary (got '$A_BIN')"
[[ -x "$B_BIN" ]] || die "B_BIN must be a strata-server binary (got '$B_BIN')"
[[ -x "$STRATA_BENCH_BIN" ]] || die "strata-bench not found at $STRATA_BENCH_BIN (scripts/build)"
for n in THREADS KEYS VALUE_SIZE CLIENTS SECONDS_EACH ROUNDS; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "$n must be a positive integer (got '${!n}')"
done
for t in $TESTS; do
  case "$t" in set | get | mixed | mget10 | mset10) ;; *) die "unknown test '$t' (set get mixed mget10 mset10)" ;; esac
done
for tool in taskset redis-cli getconf; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found (run scripts/deps)"
done
[[ -x /usr/bin/python3 ]] || die "/usr/bin/python3 is needed to read strata-bench's JSON"
CLK_TCK="$(getconf CLK_TCK)"

client_threads="$(/usr/bin/python3 -c '
import sys
n = 0
for part in sys.argv[1].split(","):
    lo, _, hi = part.partition("-")
    n += int(hi or lo) - int(lo) + 1
print(n)' "$CLIENT_CPUS")" || die "invalid CLIENT_CPUS '$CLIENT_CPUS'"
conns=$(((CLIENTS + client_threads - 1) / client_threads))
KEY_ARGS=(--key-prefix memtier- --key-minimum 0 --key-maximum $((KEYS - 1)) -d "$VALUE_SIZE")

RESULTS_DIR="$ROOT/bench/results"
STAMP="$(date +%Y%m%d-%H%M%S)"
WORK="$RESULTS_DIR/tmp/ab_throughput-$STAMP-$$"
mkdir -p "$WORK/A" "$WORK/B"

declare -A PID PORT
KEEP_WORK=1
cleanup() {
  local p
  for p in "${PID[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [[ "$KEEP_WORK" -eq 0 ]]; then rm -rf "$WORK"; else echo "ab_throughput: logs in $WORK" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cpu_ticks() {
  local stat
  local -a f
  stat="$(<"/proc/$1/stat")" || return 1
  read -r -a f <<<"${stat##*) }"
  echo $((f[11] + f[12]))
}

start() {
  local side="$1" bin="$2" args="$3" i
  local -a extra
  read -r -a extra <<<"$args"
  PORT[$side]="$(free_port)"
  while [[ "$side" == B && "${PORT[B]}" == "${PORT[A]}" ]]; do PORT[B]="$(free_port)"; done
  taskset -c "$SERVER_CPUS" "$bin" --port "${PORT[$side]}" --bind 127.0.0.1 --dir "$WORK/$side" \
    --save "" --appendonly no --maxmemory 0 --threads "$THREADS" "${extra[@]}" \
    >"$WORK/$side/server.log" 2>&1 </dev/null &
  PID[$side]=$!
  for ((i = 0; i < 100; i++)); do
    [[ "$(timeout 2 redis-cli -p "${PORT[$side]}" PING 2>/dev/null)" == PONG ]] && break
    kill -0 "${PID[$side]}" 2>/dev/null || die "$side exited at start; see $WORK/$side/server.log"
    sleep 0.1
  done
  ((i < 100)) || die "$side did not answer PING"
  echo "preloading $side ($bin) with $KEYS keys..." >&2
  taskset -c "$CLIENT_CPUS" "$STRATA_BENCH_BIN" -p "${PORT[$side]}" -t "$client_threads" \
    -c "$conns" --pipeline 64 --ratio 1:0 --key-pattern P:P -n allkeys -R --hide-histogram \
    "${KEY_ARGS[@]}" >"$WORK/$side/preload.log" 2>&1 || die "preload of $side failed"
  [[ "$(redis-cli -p "${PORT[$side]}" DBSIZE)" == "$KEYS" ]] || die "$side: DBSIZE is not $KEYS"
}

start A "$A_BIN" "$A_ARGS"
start B "$B_BIN" "$B_ARGS"

# measure SIDE TEST PIPELINE -> "ops,cpu_us_per_op,busy_cores"
measure() {
  local side="$1" test="$2" pipeline="$3" ratio out t0 t1 w0 w1 ops
  local -a multi=()
  case "$test" in
    set) ratio=1:0 ;;
    get) ratio=0:1 ;;
    mixed) ratio=1:10 ;;
    mget10) ratio=0:1 multi=(--multi-key-get 10) ;;
    mset10) ratio=1:0 multi=(--multi-key-set 10) ;;
  esac
  out="$WORK/$side/$test-P$pipeline.json"
  t0="$(cpu_ticks "${PID[$side]}")"
  w0="${EPOCHREALTIME//[!0-9]/}"
  taskset -c "$CLIENT_CPUS" "$STRATA_BENCH_BIN" -p "${PORT[$side]}" -t "$client_threads" \
    -c "$conns" --pipeline "$pipeline" --ratio "$ratio" "${multi[@]}" --test-time "$SECONDS_EACH" -R \
    --distinct-client-seed --randomize --hide-histogram --json-out-file "$out" "${KEY_ARGS[@]}" \
    >"$out.log" 2>&1 || die "strata-bench failed on $side; see $out.log"
  w1="${EPOCHREALTIME//[!0-9]/}"
  t1="$(cpu_ticks "${PID[$side]}")"
  ops="$(/usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["ALL STATS"]["Totals"]
if t["Errors"] or t["Error Replies"] or t["Lost Requests"] or t["Connection Errors"]:
    sys.exit("errors in the run")
print("%d %.2f" % (t["Count"], t["Ops/sec"]))' "$out")" || die "bad results from $side: $out"
  awk -v c="${ops% *}" -v r="${ops#* }" -v dt=$((t1 - t0)) -v hz="$CLK_TCK" -v wall=$((w1 - w0)) \
    'BEGIN { s = dt / hz; printf "%.0f,%.3f,%.3f\n", r, s * 1e6 / c, s * 1e6 / wall }'
}

CSV="$RESULTS_DIR/$STAMP-$LABEL.csv"
MD="$RESULTS_DIR/$STAMP-$LABEL.md"
{
  echo "# command: $INVOCATION"
  echo "# settings: A_BIN=$A_BIN B_BIN=$B_BIN A_NAME=$A_NAME B_NAME=$B_NAME THREADS=$THREADS SERVER_CPUS=$SERVER_CPUS CLIENT_CPUS=$CLIENT_CPUS KEYS=$KEYS VALUE_SIZE=$VALUE_SIZE CLIENTS=$CLIENTS PIPELINES=\"$PIPELINES\" TESTS=\"$TESTS\" SECONDS_EACH=$SECONDS_EACH ROUNDS=$ROUNDS A_ARGS=\"$A_ARGS\" B_ARGS=\"$B_ARGS\" bench/ab_throughput.sh"
  echo "# date: $(date -Iseconds) kernel: $(uname -r) nproc: $(nproc) git: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "round,test,pipeline,side,name,ops_per_sec,server_cpu_us_per_op,server_busy_cores"
} >"$CSV"

k=0
for ((round = 1; round <= ROUNDS; round++)); do
  for pipeline in $PIPELINES; do
    for test in $TESTS; do
      if ((k % 2 == 0)); then order=(A B); else order=(B A); fi
      k=$((k + 1))
      for side in "${order[@]}"; do
        if [[ "$side" == A ]]; then name="$A_NAME"; else name="$B_NAME"; fi
        row="$(measure "$side" "$test" "$pipeline")"
        echo "$round,$test,$pipeline,$side,$name,$row" >>"$CSV"
        echo "  round $round $test P$pipeline $name: $row" >&2
      done
    done
  done
done

/usr/bin/python3 - "$CSV" "$MD" "$A_NAME" "$B_NAME" "$INVOCATION" <<'EOF'
import csv, statistics, sys
path, md, a_name, b_name, invocation = sys.argv[1:6]
lines = [l for l in open(path) if not l.startswith("#")]
rows = list(csv.DictReader(lines))
settings = [l[len("# settings: "):].strip() for l in open(path) if l.startswith("# settings: ")]
keys = []
for r in rows:
    k = (r["test"], r["pipeline"])
    if k not in keys:
        keys.append(k)
def med(test, pipeline, side, field):
    return statistics.median(float(r[field]) for r in rows
                             if (r["test"], r["pipeline"], r["side"]) == (test, pipeline, side))
out = ["| test | pipeline | %s ops/s | %s ops/s | %s/%s | %s cpu µs/op | %s cpu µs/op | cpu %s/%s |"
       % (a_name, b_name, b_name, a_name, a_name, b_name, b_name, a_name),
       "|---|---:|---:|---:|---:|---:|---:|---:|"]
for test, p in keys:
    ao, bo = med(test, p, "A", "ops_per_sec"), med(test, p, "B", "ops_per_sec")
    ac, bc = med(test, p, "A", "server_cpu_us_per_op"), med(test, p, "B", "server_cpu_us_per_op")
    out.append("| %s | %s | %.0f | %.0f | %.3f | %.3f | %.3f | %.3f |"
               % (test, p, ao, bo, bo / ao, ac, bc, bc / ac))
table = "\n".join(out)
print(table)
with open(md, "w") as f:
    f.write("# strata A/B: %s\n\nCommand:\n\n```\n%s\n```\n\nEffective settings:\n\n```\n%s\n```\n\n"
            % (md.rsplit("/", 1)[-1][:-3], invocation, settings[0] if settings else ""))
    f.write("Medians over the rounds (every measurement is in the CSV of the same name).\n\n")
    f.write(table + "\n")
EOF
echo "results: ${CSV#"$ROOT"/} ${MD#"$ROOT"/}"
KEEP_WORK=0
