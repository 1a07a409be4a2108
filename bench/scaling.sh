#!/usr/bin/env bash
# Scaling across cores: strata-server at 1, 2, 4, 8 ... worker threads, with strata-bench
# driving it from other cores, and redis-server on one core as the reference.
#
# For each thread count T the server runs with --threads T --thread-affinity yes, pinned
# (taskset) to the first T CPUs of SERVER_CPUS; strata-bench runs pinned to CLIENT_CPUS,
# one client thread per CPU there. A fresh server is started for each T and preloaded
# with KEYS keys of VALUE_SIZE bytes (memtier's names, key prefix "memtier-"). Then each
# workload runs for TEST_TIME seconds with uniformly random keys over the whole keyspace:
#   getset-p1    SET:GET 1:10, pipeline 1
#   getset-p16   SET:GET 1:10, pipeline 16
#   mget10       MGET of 10 keys, pipeline MULTI_PIPELINE
#   mset10       MSET of 10 keys, pipeline MULTI_PIPELINE
# An MGET or MSET counts as one operation (10 keys). The efficiency of T threads is
# ops(T) / (T x ops(1)): 100% is linear. The server's CPU time over each run (utime +
# stime of all its threads, from /proc/PID/stat) gives its busy cores, so a run that the
# client could not saturate shows as busy cores well under T.
#
# Options (environment variables):
#   STRATA_BIN      strata-server (build/server/strata-server)
#   BENCH_BIN       strata-bench (build/tools/strata-bench/strata-bench)
#   REDIS_BIN       redis-server for the reference row, on the first server CPU
#                   (redis-server; REDIS_BIN=none skips it)
#   REDIS_CLI       redis-cli, used to wait for PING and to check DBSIZE (redis-cli)
#   SERVER_CPUS     taskset list for the server (the first half of this process's CPUs)
#   CLIENT_CPUS     taskset list for strata-bench (the other half)
#   THREAD_LIST     thread counts (1, 2, 4, ... up to the number of SERVER_CPUS, and that
#                   number itself)
#   KEYS            keyspace size (1000000)
#   VALUE_SIZE      value size in bytes (100)
#   TEST_TIME       seconds per workload (10)
#   CONNS           connections per client thread (50)
#   MULTI_PIPELINE  pipeline depth of the MGET and MSET workloads (16)
#   WORKLOADS       which workloads (getset-p1 getset-p16 mget10 mset10)
#   LABEL           label in the result file names (scaling)
#   RESULTS_DIR     where the .md and .csv go (bench/results)
#   STRATA_ARGS     extra strata-server arguments (word-split)
#
# Results: a table on stdout, plus RESULTS_DIR/<date>-<label>.csv and .md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

STRATA_BIN="${STRATA_BIN:-$ROOT/build/server/strata-server}"
BENCH_BIN="${BENCH_BIN:-$ROOT/build/tools/strata-bench/strata-bench}"
REDIS_BIN="${REDIS_BIN:-redis-server}"
REDIS_CLI="${REDIS_CLI:-redis-cli}"
KEYS="${KEYS:-1000000}"
VALUE_SIZE="${VALUE_SIZE:-100}"
TEST_TIME="${TEST_TIME:-10}"
CONNS="${CONNS:-50}"
MULTI_PIPELINE="${MULTI_PIPELINE:-16}"
WORKLOADS="${WORKLOADS:-getset-p1 getset-p16 mget10 mset10}"
LABEL="${LABEL:-scaling}"
RESULTS_DIR="${RESULTS_DIR:-$ROOT/bench/results}"
STRATA_ARGS="${STRATA_ARGS:-}"

die() { echo "scaling: $*" >&2; exit 1; }

[[ "${1:-}" == "-h" || "${1:-}" == "--help" ]] && {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
}
[[ $# -eq 0 ]] || die "takes no arguments; settings are environment variables (see --help)"

# Expands a taskset list ("0-3,8") into one CPU number per line.
expand_cpus() {
  local part lo hi i
  local -a parts
  IFS=',' read -r -a parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ "$part" == *-* ]]; then
      lo="${part%-*}"; hi="${part#*-}"
    else
      lo="$part"; hi="$part"
    fi
    [[ "$lo" =~ ^[0-9]+$ && "$hi" =~ ^[0-9]+$ && "$lo" -le "$hi" ]] || die "bad CPU list '$1'"
    for ((i = lo; i <= hi; i++)); do echo "$i"; done
  done
}

mapfile -t ALLOWED < <(expand_cpus "$(taskset -pc $$ | sed 's/.*: //')")
if [[ -z "${SERVER_CPUS:-}" || -z "${CLIENT_CPUS:-}" ]]; then
  [[ "${#ALLOWED[@]}" -ge 2 ]] || die "needs at least 2 CPUs (server and client apart)"
  half=$(((${#ALLOWED[@]} + 1) / 2))
  SERVER_CPUS="${SERVER_CPUS:-$(IFS=,; echo "${ALLOWED[*]:0:half}")}"
  CLIENT_CPUS="${CLIENT_CPUS:-$(IFS=,; echo "${ALLOWED[*]:half}")}"
fi
mapfile -t SERVER_LIST < <(expand_cpus "$SERVER_CPUS")
mapfile -t CLIENT_LIST < <(expand_cpus "$CLIENT_CPUS")
for c in "${SERVER_LIST[@]}"; do
  for d in "${CLIENT_LIST[@]}"; do [[ "$c" != "$d" ]] || die "CPU $c is in both lists"; done
done
if [[ -z "${THREAD_LIST:-}" ]]; then
  THREAD_LIST=""
  for ((t = 1; t < ${#SERVER_LIST[@]}; t *= 2)); do THREAD_LIST+="$t "; done
  THREAD_LIST+="${#SERVER_LIST[@]}"
fi
for t in $THREAD_LIST; do
  [[ "$t" =~ ^[1-9][0-9]*$ && "$t" -le "${#SERVER_LIST[@]}" ]] ||
    die "thread count $t is not between 1 and the ${#SERVER_LIST[@]} SERVER_CPUS"
done
for n in KEYS VALUE_SIZE TEST_TIME CONNS MULTI_PIPELINE; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "$n must be a positive integer (got '${!n}')"
done
for w in $WORKLOADS; do
  case "$w" in getset-p1|getset-p16|mget10|mset10) ;; *) die "unknown workload $w" ;; esac
done
[[ -x "$STRATA_BIN" ]] || die "strata-server not found at $STRATA_BIN"
[[ -x "$BENCH_BIN" ]] || die "strata-bench not found at $BENCH_BIN"
command -v "$REDIS_CLI" >/dev/null || die "redis-cli not found ($REDIS_CLI)"
if [[ "$REDIS_BIN" != none ]]; then
  command -v "$REDIS_BIN" >/dev/null || die "redis-server not found ($REDIS_BIN; none skips it)"
fi
CLK_TCK="$(getconf CLK_TCK)"
CLIENT_THREADS="${#CLIENT_LIST[@]}"

mkdir -p "$RESULTS_DIR"
STAMP="$(date +%Y%m%d-%H%M%S)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/scaling.XXXXXX")"
SERVER_PID=""

stop_server() {
  local i
  [[ -n "$SERVER_PID" ]] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
cleanup() { stop_server; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port below the kernel's ephemeral range (32768 up by default), so that strata-bench's
# own outgoing connections cannot hold it.
free_port() {
  local p
  for ((p = 10000 + RANDOM % 20000; ; p++)); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}

# start_server NAME THREADS: starts strata (THREADS workers) or redis on the first THREADS
# server CPUs and waits for PING (30 s at most); a port taken meanwhile is tried again.
start_server() {
  local attempt
  for ((attempt = 1; attempt <= 5; attempt++)); do
    start_server_once "$@" && return 0
    grep -q "Address already in use" "$WORK/$1-$2/log" || break
  done
  tail -n 20 "$WORK/$1-$2/log" >&2
  die "$1 exited at start"
}

start_server_once() {
  local name="$1" threads="$2" cpus i
  local -a extra
  cpus="$(IFS=,; echo "${SERVER_LIST[*]:0:threads}")"
  PORT="$(free_port)"
  mkdir -p "$WORK/$name-$threads"
  if [[ "$name" == strata ]]; then
    read -r -a extra <<<"$STRATA_ARGS"
    taskset -c "$cpus" "$STRATA_BIN" --port "$PORT" --bind 127.0.0.1 --dir "$WORK/$name-$threads" \
      --save "" --appendonly no --threads "$threads" --thread-affinity yes "${extra[@]}" \
      >"$WORK/$name-$threads/log" 2>&1 </dev/null &
  else
    taskset -c "$cpus" "$REDIS_BIN" --port "$PORT" --bind 127.0.0.1 --dir "$WORK/$name-$threads" \
      --save "" --appendonly no --daemonize no --logfile "" \
      >"$WORK/$name-$threads/log" 2>&1 </dev/null &
  fi
  SERVER_PID=$!
  for ((i = 0; i < 300; i++)); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      wait "$SERVER_PID" 2>/dev/null || true
      SERVER_PID=""
      return 1
    fi
    [[ "$(timeout 2 "$REDIS_CLI" -p "$PORT" PING 2>/dev/null)" == PONG ]] && return 0
    sleep 0.1
  done
  die "$name did not answer PING on port $PORT in 30 s"
}

cpu_ticks() {
  local stat
  local -a f
  stat="$(<"/proc/$1/stat")"
  read -r -a f <<<"${stat##*) }"
  echo $((f[11] + f[12]))
}

bench_args() {
  echo -s 127.0.0.1 -p "$PORT" -t "$CLIENT_THREADS" -c "$CONNS" -d "$VALUE_SIZE" \
    --key-minimum 0 --key-maximum $((KEYS - 1)) --hide-histogram
}

preload() {
  # shellcheck disable=SC2046
  taskset -c "$CLIENT_CPUS" "$BENCH_BIN" $(bench_args) --ratio 1:0 --key-pattern P:P \
    --pipeline 64 -n allkeys >"$WORK/preload.txt" 2>&1 || { tail "$WORK/preload.txt" >&2; die "preload failed"; }
  local n
  n="$(timeout 30 "$REDIS_CLI" -p "$PORT" DBSIZE | tr -d '\r')"
  [[ "$n" =~ ^[0-9]+$ && "$n" -ge $((KEYS * 99 / 100)) ]] || die "DBSIZE is '$n' after preload of $KEYS"
}

# run_workload NAME -> "ops_per_sec,p50_ms,p99_ms,busy_cores"
run_workload() {
  local w="$1" json="$WORK/run.json" t0 t1 w0 w1
  local -a args
  case "$w" in
    getset-p1) args=(--ratio 1:10 --pipeline 1) ;;
    getset-p16) args=(--ratio 1:10 --pipeline 16) ;;
    mget10) args=(--ratio 0:1 --multi-key-get 10 --pipeline "$MULTI_PIPELINE") ;;
    mset10) args=(--ratio 1:0 --multi-key-set 10 --pipeline "$MULTI_PIPELINE") ;;
  esac
  t0="$(cpu_ticks "$SERVER_PID")"
  w0="$(date +%s%N)"
  # shellcheck disable=SC2046
  taskset -c "$CLIENT_CPUS" "$BENCH_BIN" $(bench_args) "${args[@]}" --key-pattern R:R \
    --distinct-client-seed --test-time "$TEST_TIME" --print-percentiles 50,99 \
    --json-out-file "$json" >"$WORK/run.txt" 2>&1 || { tail "$WORK/run.txt" >&2; die "$w failed"; }
  w1="$(date +%s%N)"
  t1="$(cpu_ticks "$SERVER_PID")"
  # "Totals": {"Count": N, "Ops/sec": X, ... "Errors": E, "Percentile Latencies": {"p50.00": A, "p99.00": B}
  local totals ops p50 p99 errors
  totals="$(tr -d '\n' <"$json" | sed 's/.*"Totals": {//')"
  ops="$(sed -n 's/.*"Ops\/sec": \([0-9.]*\).*/\1/p' <<<"${totals%%, \"Hits*}")"
  errors="$(sed -n 's/.*"Errors": \([0-9]*\).*/\1/p' <<<"${totals%%, \"Percentile*}")"
  p50="$(sed -n 's/.*"p50.00": \([0-9.]*\).*/\1/p' <<<"$totals")"
  p99="$(sed -n 's/.*"p99.00": \([0-9.]*\).*/\1/p' <<<"$totals")"
  [[ -n "$ops" && -n "$p50" && -n "$p99" ]] || die "cannot read $json"
  [[ "$errors" == 0 ]] || die "$w: $errors error replies"
  awk -v o="$ops" -v a="$p50" -v b="$p99" -v dt=$((t1 - t0)) -v hz="$CLK_TCK" \
    -v wall=$((w1 - w0)) 'BEGIN { printf "%.0f,%.3f,%.3f,%.2f", o, a, b, (dt / hz) / (wall / 1e9) }'
}

declare -A R
measure() {
  local name="$1" threads="$2" w
  start_server "$name" "$threads"
  echo "$name threads=$threads: preloading $KEYS keys" >&2
  preload
  for w in $WORKLOADS; do
    R["$name,$threads,$w"]="$(run_workload "$w")"
    echo "  $w: ${R["$name,$threads,$w"]} (ops/s,p50 ms,p99 ms,server busy cores)" >&2
  done
  stop_server
}

for t in $THREAD_LIST; do measure strata "$t"; done
[[ "$REDIS_BIN" == none ]] || measure redis 1

# ---- report ----------------------------------------------------------------------------
CPU_MODEL="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
GIT_REV="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
SETTINGS="SERVER_CPUS=$SERVER_CPUS CLIENT_CPUS=$CLIENT_CPUS THREAD_LIST=\"$THREAD_LIST\" KEYS=$KEYS"
SETTINGS+=" VALUE_SIZE=$VALUE_SIZE TEST_TIME=$TEST_TIME CONNS=$CONNS MULTI_PIPELINE=$MULTI_PIPELINE"
SETTINGS+=" WORKLOADS=\"$WORKLOADS\" bench/scaling.sh"
CSV="$RESULTS_DIR/$STAMP-$LABEL.csv"
MD="$RESULTS_DIR/$STAMP-$LABEL.md"
field() { cut -d, -f"$2" <<<"$1"; }

{
  echo "server,threads,workload,ops_per_sec,p50_ms,p99_ms,server_busy_cores,efficiency"
  for w in $WORKLOADS; do
    base="$(field "${R["strata,${THREAD_LIST%% *},$w"]}" 1)"
    first="${THREAD_LIST%% *}"
    for t in $THREAD_LIST; do
      row="${R["strata,$t,$w"]}"
      eff="$(awk -v o="$(field "$row" 1)" -v b="$base" -v t="$t" -v f="$first" \
        'BEGIN { printf "%.3f", o * f / (b * t) }')"
      echo "strata,$t,$w,$row,$eff"
    done
    [[ "$REDIS_BIN" == none ]] || echo "redis,1,$w,${R["redis,1,$w"]},"
  done
} >"$CSV"

{
  echo "# Scaling across cores"
  echo
  echo "$(date -Iseconds), git $GIT_REV, $(nproc) CPUs ($CPU_MODEL), kernel $(uname -r)."
  echo
  echo "Command: \`$SETTINGS\`"
  echo
  echo "strata-server pinned to the first T of CPUs $SERVER_CPUS (--threads T"
  echo "--thread-affinity yes); strata-bench on CPUs $CLIENT_CPUS, $CLIENT_THREADS threads x $CONNS"
  echo "connections; $KEYS keys of $VALUE_SIZE B, uniformly random keys; $TEST_TIME s per run."
  [[ "$REDIS_BIN" == none ]] || echo "redis-server ($("$REDIS_BIN" --version | cut -d' ' -f3)) on CPU ${SERVER_LIST[0]} alone, same client."
  echo "Efficiency is ops(T) / (T x ops(1)); busy cores is the server's CPU time over the run's wall time."
  for w in $WORKLOADS; do
    echo
    echo "## $w"
    echo
    echo "| server | threads | ops/s | x redis | efficiency | p50 ms | p99 ms | busy cores |"
    echo "|---|---|---|---|---|---|---|---|"
    redis_ops=""
    [[ "$REDIS_BIN" == none ]] || redis_ops="$(field "${R["redis,1,$w"]}" 1)"
    grep ",$w," "$CSV" | while IFS=, read -r s t _ ops p50 p99 busy eff; do
      x="-"
      [[ -z "$redis_ops" ]] || x="$(awk -v a="$ops" -v b="$redis_ops" 'BEGIN { printf "%.2f", a / b }')"
      e="-"
      [[ -z "$eff" ]] || e="$(awk -v e="$eff" 'BEGIN { printf "%.0f%%", e * 100 }')"
      echo "| $s | $t | $ops | $x | $e | $p50 | $p99 | $busy |"
    done
  done
} >"$MD"

cat "$MD"
echo
echo "wrote $MD and $CSV" >&2
