#!/usr/bin/env bash
# Side-by-side throughput benchmark: strata-server vs redis-server.
#
# Both servers run at the same time on free loopback ports, persistence off, each pinned
# with taskset to the same server core(s); the client is pinned to other core(s).
# Each server is preloaded with KEYS keys of VALUE_SIZE bytes, then SET and GET with
# random keys over the whole keyspace are measured at each pipeline depth.
#
# The client (CLIENT) is redis-benchmark by default: keys key:000000000000 ... (the names
# redis-benchmark -r uses). With CLIENT=strata-bench it is the project's memtier-style
# load generator instead (keys memtier-0 ..., random printable values, each connection
# its own random key sequence), which sends several times faster from one core than
# redis-benchmark: where redis-benchmark keeps the server below one busy core at
# pipeline 16, ops/s measure the client and not the server (server_busy_cores in the
# CSV says which it was).
#
# Drift bias: the order alternates per measurement (strata first for the first
# test/pipeline pair, redis first for the next, and so on). With RUNS=N (N > 1) every
# measurement is repeated N times, still alternating, and the run with the highest
# ops/s is kept for each server.
#
# Server CPU: around each client run the server's utime+stime (all its threads,
# from /proc/PID/stat) is read, giving server CPU microseconds per request and the
# server's average busy cores over the run. At pipeline 1 on a small machine the
# redis-benchmark client saturates its core first, so ops/s there mostly measures the
# client; CPU per request does not depend on that. It counts what the kernel charges to
# the server's threads (user time plus system time in their own context, e.g. syscalls),
# not softirq/network work the kernel accounts to other contexts.
#
# Options (flag or environment variable; flags win):
#   --strata-bin PATH   STRATA_BIN    strata-server binary (build/server/strata-server)
#   --redis-bin PATH    REDIS_BIN     redis-server binary (redis-server)
#   --threads N         THREADS       strata worker threads (1)
#   --server-cpus LIST  SERVER_CPUS   taskset CPU list for both servers (0)
#   --client-cpus LIST  CLIENT_CPUS   taskset CPU list for the client (1)
#   --client NAME       CLIENT        redis-benchmark or strata-bench (redis-benchmark)
#                       STRATA_BENCH_BIN  strata-bench binary
#                                     (build/tools/strata-bench/strata-bench)
#   --keys N            KEYS          keyspace size, preloaded and used for -r (1000000)
#   --clients N         CLIENTS       redis-benchmark connections, -c (50)
#   --requests N        REQUESTS      requests per pipelined test (1000000)
#   --requests-p1 N     REQUESTS_P1   requests per pipeline-1 test (REQUESTS / 5)
#   --value-size N      VALUE_SIZE    value size in bytes, -d (100)
#   --pipelines "A B"   PIPELINES     pipeline depths (1 16)
#   --tests "A B"       TESTS         redis-benchmark tests (set get)
#   --runs N            RUNS          repetitions per measurement, best kept (1)
#   --label NAME        LABEL         label in the result file names (threadsN)
#                       STRATA_ARGS   extra strata-server arguments (word-split)
#                       REDIS_ARGS    extra redis-server arguments (word-split)
#
# Results: a table on stdout, plus bench/results/<date>-<label>.csv and .md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INVOCATION="$(printf '%q ' "$0" "$@")"
INVOCATION="${INVOCATION% }"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

STRATA_BIN="${STRATA_BIN:-$ROOT/build/server/strata-server}"
REDIS_BIN="${REDIS_BIN:-redis-server}"
THREADS="${THREADS:-1}"
SERVER_CPUS="${SERVER_CPUS:-0}"
CLIENT_CPUS="${CLIENT_CPUS:-1}"
CLIENT="${CLIENT:-redis-benchmark}"
STRATA_BENCH_BIN="${STRATA_BENCH_BIN:-$ROOT/build/tools/strata-bench/strata-bench}"
KEYS="${KEYS:-1000000}"
CLIENTS="${CLIENTS:-50}"
REQUESTS="${REQUESTS:-1000000}"
REQUESTS_P1="${REQUESTS_P1:-}"
VALUE_SIZE="${VALUE_SIZE:-100}"
PIPELINES="${PIPELINES:-1 16}"
TESTS="${TESTS:-set get}"
RUNS="${RUNS:-1}"
LABEL="${LABEL:-}"
STRATA_ARGS="${STRATA_ARGS:-}"
REDIS_ARGS="${REDIS_ARGS:-}"

while [[ $# -gt 0 ]]; do
  opt="$1"
  case "$opt" in
    -h|--help) usage; exit 0 ;;
  esac
  if [[ $# -lt 2 ]]; then
    echo "side_by_side: $opt needs a value (see --help)" >&2
    exit 2
  fi
  case "$opt" in
    --strata-bin) STRATA_BIN="$2" ;;
    --redis-bin) REDIS_BIN="$2" ;;
    --threads) THREADS="$2" ;;
    --server-cpus) SERVER_CPUS="$2" ;;
    --client-cpus) CLIENT_CPUS="$2" ;;
    --client) CLIENT="$2" ;;
    --keys) KEYS="$2" ;;
    --clients) CLIENTS="$2" ;;
    --requests) REQUESTS="$2" ;;
    --requests-p1) REQUESTS_P1="$2" ;;
    --value-size) VALUE_SIZE="$2" ;;
    --pipelines) PIPELINES="$2" ;;
    --tests) TESTS="$2" ;;
    --runs) RUNS="$2" ;;
    --label) LABEL="$2" ;;
    *) echo "side_by_side: unknown option $opt (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done

REQUESTS_P1="${REQUESTS_P1:-$((REQUESTS / 5))}"
LABEL="${LABEL:-threads${THREADS}}"
LABEL="$(printf '%s' "$LABEL" | tr -c 'A-Za-z0-9._-' '_')"

die() { echo "side_by_side: $*" >&2; exit 1; }

for n in THREADS KEYS CLIENTS REQUESTS REQUESTS_P1 VALUE_SIZE RUNS; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "$n must be a positive integer (got '${!n}')"
done
for tool in taskset redis-cli redis-benchmark getconf; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found (run scripts/deps)"
done
case "$CLIENT" in
  redis-benchmark) ;;
  strata-bench)
    [[ -x "$STRATA_BENCH_BIN" ]] || die "strata-bench not found at $STRATA_BENCH_BIN (build with scripts/build)"
    [[ -x /usr/bin/python3 ]] || die "/usr/bin/python3 is needed to read strata-bench's JSON"
    ;;
  *) die "CLIENT must be redis-benchmark or strata-bench (got '$CLIENT')" ;;
esac
[[ -x "$STRATA_BIN" ]] || die "strata binary not found at $STRATA_BIN (build with scripts/build)"
command -v "$REDIS_BIN" >/dev/null 2>&1 || die "redis-server not found at $REDIS_BIN"
taskset -c "$SERVER_CPUS" true 2>/dev/null || die "invalid SERVER_CPUS '$SERVER_CPUS'"
taskset -c "$CLIENT_CPUS" true 2>/dev/null || die "invalid CLIENT_CPUS '$CLIENT_CPUS'"
CLK_TCK="$(getconf CLK_TCK)"
[[ "$CLK_TCK" =~ ^[1-9][0-9]*$ ]] || die "getconf CLK_TCK returned '$CLK_TCK'"
[[ -r /proc/self/stat ]] || die "/proc/PID/stat not readable (needed for server CPU time)"

# Number of CPUs in a taskset list such as "1", "2-3" or "1,4-5".
cpu_count() {
  local total=0 part lo hi
  local -a parts
  IFS=',' read -r -a parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ "$part" == *-* ]]; then
      lo="${part%-*}"; hi="${part#*-}"
      total=$((total + hi - lo + 1))
    else
      total=$((total + 1))
    fi
  done
  echo "$total"
}
BENCH_THREAD_ARGS=()
client_cpu_count="$(cpu_count "$CLIENT_CPUS")"
if [[ "$client_cpu_count" -gt 1 ]]; then
  BENCH_THREAD_ARGS=(--threads "$client_cpu_count")
fi
# strata-bench: one thread per client CPU, CLIENTS connections in all (at least one per
# thread), and its keys.
SB_THREADS="$client_cpu_count"
SB_CONNS=$(((CLIENTS + SB_THREADS - 1) / SB_THREADS))
SB_KEY_ARGS=(--key-prefix memtier- --key-minimum 0 --key-maximum $((KEYS - 1)) -d "$VALUE_SIZE")

RESULTS_DIR="$ROOT/bench/results"
STAMP="$(date +%Y%m%d-%H%M%S)"
WORK="$RESULTS_DIR/tmp/side_by_side-$STAMP-$$"
mkdir -p "$WORK/strata" "$WORK/redis"

STRATA_PID=""
REDIS_PID=""
KEEP_WORK=1

stop_pid() {
  local pid="$1" i
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  stop_pid "$STRATA_PID"
  stop_pid "$REDIS_PID"
  if [[ "$KEEP_WORK" -eq 0 ]]; then
    rm -rf "$WORK"
  else
    echo "side_by_side: logs kept in $WORK" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  if [[ -x /usr/bin/python3 ]]; then
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    return
  fi
  local p
  for ((p = 20000 + RANDOM % 20000; ; p++)); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}

# wait_ready NAME PID PORT TIMEOUT_S
wait_ready() {
  local name="$1" pid="$2" port="$3" timeout_s="$4" i
  for ((i = 0; i < timeout_s * 10; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "side_by_side: $name exited during start-up; log:" >&2
      tail -n 20 "$WORK/$name/server.log" >&2 || true
      return 1
    fi
    if [[ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null)" == "PONG" ]]; then
      return 0
    fi
    sleep 0.1
  done
  echo "side_by_side: $name did not answer PING on port $port within ${timeout_s}s" >&2
  return 1
}

# check_server_pid NAME PID BIN: the PID must be the server itself (taskset execs it, so
# $! ends up being the server), not a wrapper; its CPU time is read from /proc/PID/stat.
check_server_pid() {
  local name="$1" pid="$2" bin="$3" comm exe want_exe want_comm
  comm="$(cat "/proc/$pid/comm" 2>/dev/null)" || die "$name: /proc/$pid/comm not readable"
  exe="$(readlink -f "/proc/$pid/exe" 2>/dev/null || true)"
  want_exe="$(readlink -f "$(command -v "$bin")" 2>/dev/null || true)"
  want_comm="$(basename "$bin")"
  want_comm="${want_comm:0:15}"
  if [[ "$comm" != "$want_comm" && ( -z "$exe" || "$exe" != "$want_exe" ) ]]; then
    die "$name: PID $pid is '$comm' ($exe), not the server $bin; CPU figures would be wrong"
  fi
  echo "  $name PID $pid ($comm)" >&2
}

STRATA_PORT="$(free_port)"
read -r -a strata_extra <<<"$STRATA_ARGS"
STRATA_CMD=(taskset -c "$SERVER_CPUS" "$STRATA_BIN" --port "$STRATA_PORT" --bind 127.0.0.1
  --dir "$WORK/strata" --save "" --appendonly no --maxmemory 0 --threads "$THREADS"
  "${strata_extra[@]}")
"${STRATA_CMD[@]}" >"$WORK/strata/server.log" 2>&1 </dev/null &
STRATA_PID=$!
wait_ready strata "$STRATA_PID" "$STRATA_PORT" 10
check_server_pid strata "$STRATA_PID" "$STRATA_BIN"

REDIS_PORT="$(free_port)"
while [[ "$REDIS_PORT" == "$STRATA_PORT" ]]; do REDIS_PORT="$(free_port)"; done
read -r -a redis_extra <<<"$REDIS_ARGS"
REDIS_CMD=(taskset -c "$SERVER_CPUS" "$REDIS_BIN" --port "$REDIS_PORT" --bind 127.0.0.1
  --dir "$WORK/redis" --save "" --appendonly no --io-threads 1 --maxmemory 0
  --daemonize no --logfile "" "${redis_extra[@]}")
"${REDIS_CMD[@]}" >"$WORK/redis/server.log" 2>&1 </dev/null &
REDIS_PID=$!
wait_ready redis "$REDIS_PID" "$REDIS_PORT" 10
check_server_pid redis "$REDIS_PID" "$REDIS_BIN"

port_of() { if [[ "$1" == strata ]]; then echo "$STRATA_PORT"; else echo "$REDIS_PORT"; fi; }
pid_of() { if [[ "$1" == strata ]]; then echo "$STRATA_PID"; else echo "$REDIS_PID"; fi; }

# cpu_ticks PID -> utime + stime of the whole process (all threads) in clock ticks:
# fields 14 and 15 of /proc/PID/stat, counted after the ")" that closes field 2 (comm).
cpu_ticks() {
  local stat
  local -a f
  stat="$(<"/proc/$1/stat")" || return 1
  read -r -a f <<<"${stat##*) }"
  [[ "${f[11]:-}" =~ ^[0-9]+$ && "${f[12]:-}" =~ ^[0-9]+$ ]] || return 1
  echo $((f[11] + f[12]))
}

# Wall clock in microseconds.
now_us() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    echo "${EPOCHREALTIME//[!0-9]/}"
  else
    echo $(($(date +%s%N) / 1000))
  fi
}

dbsize() {
  timeout 30 redis-cli -h 127.0.0.1 -p "$1" DBSIZE 2>/dev/null | tr -d '\r' || true
}

# Writes SET commands for key:000000000000 .. key:<KEYS-1> as RESP to stdout.
resp_stream() {
  awk -v n="$KEYS" -v d="$VALUE_SIZE" 'BEGIN {
    v = ""; for (i = 0; i < d; i++) v = v "x"
    for (i = 0; i < n; i++) {
      k = sprintf("key:%012d", i)
      printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, d, v
    }
  }'
}

# preload NAME: fills the keyspace and checks DBSIZE.
preload() {
  local name="$1" port count want round
  port="$(port_of "$name")"
  want=$((KEYS * 99 / 100))
  echo "preloading $name with $KEYS keys of $VALUE_SIZE bytes..." >&2
  if [[ "$CLIENT" == strata-bench ]]; then
    # Every key once, each connection its own slice.
    taskset -c "$CLIENT_CPUS" "$STRATA_BENCH_BIN" -s 127.0.0.1 -p "$port" -t "$SB_THREADS" \
      -c "$SB_CONNS" --pipeline 64 --ratio 1:0 --key-pattern P:P -n allkeys -R \
      --hide-histogram "${SB_KEY_ARGS[@]}" >"$WORK/$name/preload.log" 2>&1 ||
      die "strata-bench could not preload $name; see $WORK/$name/preload.log"
    count="$(dbsize "$port")"
    [[ "$count" == "$KEYS" ]] || die "$name holds '$count' keys after preload (wanted $KEYS)"
    echo "  $name DBSIZE = $count" >&2
    return
  fi
  if ! resp_stream | taskset -c "$CLIENT_CPUS" redis-cli -h 127.0.0.1 -p "$port" --pipe \
      >"$WORK/$name/preload.log" 2>&1; then
    echo "side_by_side: redis-cli --pipe failed for $name; falling back to redis-benchmark" >&2
  fi
  count="$(dbsize "$port")"
  round=0
  # Random SETs over the keyspace until it is (nearly) full, should --pipe fall short.
  while [[ "$count" =~ ^[0-9]+$ && "$count" -lt "$want" && "$round" -lt 8 ]]; do
    taskset -c "$CLIENT_CPUS" redis-benchmark -h 127.0.0.1 -p "$port" -t set -n "$KEYS" \
      -r "$KEYS" -d "$VALUE_SIZE" -P 64 -c "$CLIENTS" -q "${BENCH_THREAD_ARGS[@]}" \
      >>"$WORK/$name/preload.log" 2>&1
    count="$(dbsize "$port")"
    round=$((round + 1))
  done
  if [[ ! "$count" =~ ^[0-9]+$ ]]; then
    echo "side_by_side: warning: DBSIZE on $name returned '$count'; keyspace size unchecked" >&2
  elif [[ "$count" -lt "$want" ]]; then
    die "$name holds only $count keys after preload (wanted ~$KEYS)"
  else
    echo "  $name DBSIZE = $count" >&2
  fi
}

preload strata
preload redis

# bench NAME TEST PIPELINE N -> "rps,avg,min,p50,p95,p99,max,cpu_us_per_op,busy_cores"
# (the last two: server CPU time per request in microseconds, and server CPU seconds per
# wall second over the client run)
bench() {
  local name="$1" test="$2" pipeline="$3" n="$4" port pid out row t0 t1 w0 w1 cpu
  port="$(port_of "$name")"
  pid="$(pid_of "$name")"
  out="$WORK/$name/bench-$test-P$pipeline.csv"
  if [[ "$CLIENT" == strata-bench ]]; then
    sb_bench "$@"
    return
  fi
  t0="$(cpu_ticks "$pid")" || die "cannot read /proc/$pid/stat for $name"
  w0="$(now_us)"
  if ! taskset -c "$CLIENT_CPUS" redis-benchmark -h 127.0.0.1 -p "$port" -t "$test" \
      -n "$n" -r "$KEYS" -d "$VALUE_SIZE" -P "$pipeline" -c "$CLIENTS" --csv \
      "${BENCH_THREAD_ARGS[@]}" >"$out" 2>"$out.err"; then
    die "redis-benchmark failed against $name ($test, P$pipeline); see $out.err"
  fi
  w1="$(now_us)"
  t1="$(cpu_ticks "$pid")" || die "cannot read /proc/$pid/stat for $name"
  row="$(tr -d '\r' <"$out" | grep -i "^\"$test\"," | tail -n 1 | tr -d '"' | cut -d, -f2-8)"
  [[ "$row" =~ ^[0-9.]+(,[0-9.]+){6}$ ]] || die "could not parse redis-benchmark output for $name: $out"
  echo "$row,$(cpu_fields "$t0" "$t1" "$w0" "$w1" "$n")"
}

# cpu_fields T0 T1 W0 W1 N -> "cpu_us_per_op,busy_cores"
cpu_fields() {
  awk -v dt=$(($2 - $1)) -v hz="$CLK_TCK" -v n="$5" -v wall=$(($4 - $3)) 'BEGIN {
    s = dt / hz
    printf "%.3f,%.3f", s * 1e6 / n, (wall > 0) ? s * 1e6 / wall : 0
  }'
}

# sb_bench NAME TEST PIPELINE N: bench's row, with strata-bench as the client. N is
# rounded down to whole requests per connection; CPU per request divides by the
# requests it actually sent.
sb_bench() {
  local name="$1" test="$2" pipeline="$3" n="$4" port pid out row t0 t1 w0 w1 per ratio sent
  port="$(port_of "$name")"
  pid="$(pid_of "$name")"
  out="$WORK/$name/bench-$test-P$pipeline.json"
  case "$test" in
    set) ratio=1:0 ;;
    get) ratio=0:1 ;;
    *) die "CLIENT=strata-bench runs only the set and get tests (got '$test')" ;;
  esac
  per=$((n / (SB_THREADS * SB_CONNS)))
  [[ "$per" -ge 1 ]] || per=1
  sent=$((per * SB_THREADS * SB_CONNS))
  t0="$(cpu_ticks "$pid")" || die "cannot read /proc/$pid/stat for $name"
  w0="$(now_us)"
  if ! taskset -c "$CLIENT_CPUS" "$STRATA_BENCH_BIN" -s 127.0.0.1 -p "$port" -t "$SB_THREADS" \
      -c "$SB_CONNS" --pipeline "$pipeline" --ratio "$ratio" -n "$per" -R \
      --distinct-client-seed --hide-histogram --print-percentiles 50,95,99 \
      --json-out-file "$out" "${SB_KEY_ARGS[@]}" >"$out.log" 2>&1; then
    die "strata-bench failed against $name ($test, P$pipeline); see $out.log"
  fi
  w1="$(now_us)"
  t1="$(cpu_ticks "$pid")" || die "cannot read /proc/$pid/stat for $name"
  # rps,avg,min,p50,p95,p99,max as redis-benchmark's CSV gives them.
  row="$(/usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["ALL STATS"]["Totals"]
p = t["Percentile Latencies"]
if t["Errors"] or t["Error Replies"] or t["Lost Requests"] or t["Connection Errors"]:
    sys.exit("errors in the run")
print("%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f" % (t["Ops/sec"], t["Average Latency"],
      t["Min Latency"], p["p50.00"], p["p95.00"], p["p99.00"], t["Max Latency"]))
' "$out" 2>>"$out.log")" || die "could not read strata-bench's results for $name: $out, $out.log"
  echo "$row,$(cpu_fields "$t0" "$t1" "$w0" "$w1" "$sent")"
}

# Keeps whichever of two "rps,..." rows has the higher rps (whole row, CPU figures too).
best_of() {
  if [[ -z "$1" ]]; then echo "$2"; return; fi
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, ","); split(b, y, ","); print (y[1] + 0 > x[1] + 0) ? b : a }'
}

declare -A RESULT
order_index=0
echo "measuring (order alternates per measurement; runs per measurement: $RUNS)..." >&2
for pipeline in $PIPELINES; do
  if [[ "$pipeline" -eq 1 ]]; then n="$REQUESTS_P1"; else n="$REQUESTS"; fi
  for test in $TESTS; do
    test="${test,,}"
    for ((run = 0; run < RUNS; run++)); do
      if ((order_index % 2 == 0)); then order=(strata redis); else order=(redis strata); fi
      order_index=$((order_index + 1))
      for name in "${order[@]}"; do
        echo "  $test P$pipeline n=$n: $name" >&2
        row="$(bench "$name" "$test" "$pipeline" "$n")"
        RESULT["$name,$test,$pipeline"]="$(best_of "${RESULT["$name,$test,$pipeline"]:-}" "$row")"
      done
    done
  done
done

# ---- report ----------------------------------------------------------------------------
KERNEL="$(uname -r)"
NPROC="$(nproc)"
CPU_MODEL="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
REDIS_VERSION="$("$REDIS_BIN" --version 2>/dev/null | head -n 1)"
GIT_REV="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
STRATA_BIN_SHOWN="${STRATA_BIN#"$ROOT"/}"
FULL_CMD="STRATA_BIN=$(printf '%q' "$STRATA_BIN_SHOWN") REDIS_BIN=$(printf '%q' "$REDIS_BIN")"
FULL_CMD+=" THREADS=$THREADS SERVER_CPUS=$SERVER_CPUS CLIENT_CPUS=$CLIENT_CPUS CLIENT=$CLIENT KEYS=$KEYS"
FULL_CMD+=" CLIENTS=$CLIENTS REQUESTS=$REQUESTS REQUESTS_P1=$REQUESTS_P1 VALUE_SIZE=$VALUE_SIZE"
FULL_CMD+=" PIPELINES=$(printf '%q' "$PIPELINES") TESTS=$(printf '%q' "$TESTS") RUNS=$RUNS"
FULL_CMD+=" LABEL=$LABEL STRATA_ARGS=$(printf '%q' "$STRATA_ARGS")"
FULL_CMD+=" REDIS_ARGS=$(printf '%q' "$REDIS_ARGS") bench/side_by_side.sh"

CSV="$RESULTS_DIR/$STAMP-$LABEL.csv"
MD="$RESULTS_DIR/$STAMP-$LABEL.md"

{
  echo "# command: $INVOCATION"
  echo "# settings: $FULL_CMD"
  echo "# date: $(date -Iseconds) kernel: $KERNEL nproc: $NPROC cpu: $CPU_MODEL"
  echo "# threads: $THREADS server_cpus: $SERVER_CPUS client_cpus: $CLIENT_CPUS git: $GIT_REV"
  echo "# redis: $REDIS_VERSION"
  echo "test,pipeline,requests,clients,keys,value_size,server,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms,server_cpu_us_per_op,server_busy_cores"
  for pipeline in $PIPELINES; do
    if [[ "$pipeline" -eq 1 ]]; then n="$REQUESTS_P1"; else n="$REQUESTS"; fi
    for test in $TESTS; do
      test="${test,,}"
      for name in strata redis; do
        echo "${test^^},$pipeline,$n,$CLIENTS,$KEYS,$VALUE_SIZE,$name,${RESULT["$name,$test,$pipeline"]}"
      done
    done
  done
} >"$CSV"

# One table row per test/pipeline: test pipeline strata_rps redis_rps ratio s_p50 s_p99 r_p50 r_p99
#   s_cpu r_cpu cpu_ratio (server CPU us per request; ratio strata/redis, lower favours strata)
table_rows() {
  local pipeline test s r
  for pipeline in $PIPELINES; do
    for test in $TESTS; do
      test="${test,,}"
      s="${RESULT["strata,$test,$pipeline"]}"
      r="${RESULT["redis,$test,$pipeline"]}"
      awk -v t="${test^^}" -v p="$pipeline" -v s="$s" -v r="$r" 'BEGIN {
        split(s, a, ","); split(r, b, ",")
        ratio = (b[1] > 0) ? sprintf("%.2f", a[1] / b[1]) : "n/a"
        cratio = (b[8] > 0) ? sprintf("%.2f", a[8] / b[8]) : "n/a"
        printf "%s %s %.0f %.0f %s %s %s %s %s %.2f %.2f %s\n", t, p, a[1], b[1], ratio, a[4], a[6],
          b[4], b[6], a[8], b[8], cratio
      }'
    done
  done
}

ROWS="$(table_rows)"

# The CPU headers are exactly as wide as their columns, so the multi-byte "µ" cannot
# throw the alignment off whether printf counts bytes or characters.
print_table() {
  local fmt='%-5s %8s %14s %14s %7s %11s %11s %11s %11s %16s %15s %9s\n'
  # shellcheck disable=SC2059 # the format is the local above
  printf "$fmt" test pipeline "strata ops/s" "redis ops/s" ratio "strata p50" "strata p99" \
    "redis p50" "redis p99" "strata cpu µs/op" "redis cpu µs/op" "cpu ratio"
  while read -r t p so ro ratio sp50 sp99 rp50 rp99 scpu rcpu cratio; do
    # shellcheck disable=SC2059
    printf "$fmt" "$t" "$p" "$so" "$ro" "$ratio" "${sp50}ms" "${sp99}ms" "${rp50}ms" \
      "${rp99}ms" "$scpu" "$rcpu" "$cratio"
  done <<<"$ROWS"
}

{
  echo "# strata vs redis: $LABEL ($STAMP)"
  echo
  echo "Command:"
  echo
  echo '```'
  echo "$INVOCATION"
  echo '```'
  echo
  echo "Effective settings:"
  echo
  echo '```'
  echo "$FULL_CMD"
  echo '```'
  echo
  echo "| setting | value |"
  echo "|---|---|"
  echo "| kernel (uname -r) | $KERNEL |"
  echo "| nproc | $NPROC |"
  echo "| CPU | $CPU_MODEL |"
  echo "| strata threads | $THREADS |"
  echo "| server CPUs (taskset) | $SERVER_CPUS |"
  echo "| client CPUs (taskset) | $CLIENT_CPUS |"
  echo "| client | $CLIENT |"
  echo "| keys / value size | $KEYS / $VALUE_SIZE B |"
  echo "| clients | $CLIENTS |"
  echo "| requests (P1 / pipelined) | $REQUESTS_P1 / $REQUESTS |"
  echo "| runs per measurement (best kept) | $RUNS |"
  echo "| redis | $REDIS_VERSION, --io-threads 1 |"
  echo "| strata binary | $STRATA_BIN_SHOWN |"
  echo "| git | $GIT_REV |"
  echo
  echo "Persistence off on both (--save \"\" --appendonly no, maxmemory 0). Order of the two"
  echo "servers alternates per measurement. Latencies are the client's ($CLIENT), in ms."
  echo
  echo "Server CPU µs/op is the server process's utime+stime (all threads, /proc/PID/stat)"
  echo "over the client's run, divided by the requests; cpu ratio is strata/redis"
  echo "(lower favours strata). It is reported because ops/s can be client-bound: at"
  echo "pipeline 1 with a single client core (e.g. on a 2-core machine) redis-benchmark"
  echo "saturates its core before either server does, so ops/s there mostly measures the"
  echo "client, while CPU per request does not depend on the client. It includes kernel time"
  echo "spent on the server's behalf in its own context (syscalls, socket send/receive), not"
  echo "softirq/network work the kernel accounts to other contexts. The CSV also gives each"
  echo "server's average busy cores over the run (server_busy_cores)."
  echo
  echo "| test | pipeline | strata ops/s | redis ops/s | strata/redis | strata p50 | strata p99 | redis p50 | redis p99 | strata cpu µs/op | redis cpu µs/op | cpu ratio |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  while read -r t p so ro ratio sp50 sp99 rp50 rp99 scpu rcpu cratio; do
    echo "| $t | $p | $so | $ro | $ratio | $sp50 | $sp99 | $rp50 | $rp99 | $scpu | $rcpu | $cratio |"
  done <<<"$ROWS"
} >"$MD"

echo
print_table
echo
echo "results: ${CSV#"$ROOT"/} ${MD#"$ROOT"/}"
KEEP_WORK=0
