#!/usr/bin/env bash
# Instructions per request: strata-server vs redis-server, counted with callgrind.
#
# Each server runs alone under valgrind --tool=callgrind (strata with --threads THREADS),
# persistence off. It is preloaded with KEYS keys, then driven by the same pipelined
# redis-benchmark load for each test (GET, then SET over the preloaded keys). The
# server's instruction count (Ir, all threads) is split into parts with
# callgrind_control -d, which dumps and zeroes the counters:
#
#   part 1  start-up + preload          (baseline, reported, not used per request)
#   part 2  IDLE_S seconds of idle      (background work, e.g. timers; Ir per second)
#   part 3+ one part per load           (Ir of exactly that load)
#
# Ir/request = load Ir / requests. "net" additionally subtracts the idle rate times the
# load's wall time. If callgrind_control cannot reach the server (METHOD=auto falls
# back; METHOD=diff forces it), each test is instead run twice with N and 2N requests
# in fresh servers and Ir/request = (Ir(2N) - Ir(N)) / N, which cancels start-up,
# preload and shutdown.
#
# Options (environment):
#   STRATA_BIN   strata-server binary (build/server/strata-server)
#   REDIS_BIN    redis-server binary (redis-server)
#   SERVERS      which servers to measure ("strata redis")
#   KEYS         keys preloaded and used for -r (100000)
#   REQUESTS     requests per load (200000)
#   PIPELINE     pipeline depth, -P (16)
#   CLIENTS      redis-benchmark connections, -c (50)
#   VALUE_SIZE   value size in bytes, -d (100)
#   TESTS        loads, in order ("get set")
#   IDLE_S       idle window in seconds (2)
#   IO_BACKEND   strata --io-backend under valgrind (epoll; valgrind models epoll best)
#   STRATA_ARGS  extra strata-server arguments (word-split)
#   REDIS_ARGS   extra redis-server arguments (word-split)
#   SERVER_CPUS  taskset CPU list for the server (0)
#   CLIENT_CPUS  taskset CPU list for redis-benchmark (1)
#   METHOD       auto | control | diff (auto)
#   THREADS      strata worker threads (1); with more than one, the keys of the load are
#                spread over the shards, and Ir/request counts every worker's share
#   VALGRIND_ARGS  extra valgrind options (word-split), e.g. --separate-threads=yes
#   LABEL        label in the result file names (callgrind)
#   KEEP         1 keeps the profiles (cg.out.*, for callgrind_annotate) and logs in
#                bench/results/tmp/ (0)
#
# Results: a table on stdout, plus bench/results/<date>-<label>.csv and .md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INVOCATION="$(printf '%q ' "$0" "$@")"
INVOCATION="${INVOCATION% }"

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi

STRATA_BIN="${STRATA_BIN:-$ROOT/build/server/strata-server}"
REDIS_BIN="${REDIS_BIN:-redis-server}"
SERVERS="${SERVERS:-strata redis}"
KEYS="${KEYS:-100000}"
REQUESTS="${REQUESTS:-200000}"
PIPELINE="${PIPELINE:-16}"
CLIENTS="${CLIENTS:-50}"
VALUE_SIZE="${VALUE_SIZE:-100}"
TESTS="${TESTS:-get set}"
IDLE_S="${IDLE_S:-2}"
IO_BACKEND="${IO_BACKEND:-epoll}"
THREADS="${THREADS:-1}"
STRATA_ARGS="${STRATA_ARGS:-}"
REDIS_ARGS="${REDIS_ARGS:-}"
SERVER_CPUS="${SERVER_CPUS:-0}"
CLIENT_CPUS="${CLIENT_CPUS:-1}"
METHOD="${METHOD:-auto}"
VALGRIND_ARGS="${VALGRIND_ARGS:-}"
LABEL="${LABEL:-callgrind}"
LABEL="$(printf '%s' "$LABEL" | tr -c 'A-Za-z0-9._-' '_')"
READY_TIMEOUT_S=60

die() { echo "callgrind: $*" >&2; exit 1; }

for n in KEYS REQUESTS PIPELINE CLIENTS VALUE_SIZE IDLE_S THREADS; do
  [[ "${!n}" =~ ^[0-9]+$ && "${!n}" -gt 0 ]] || die "$n must be a positive integer (got '${!n}')"
done
case "$METHOD" in auto|control|diff) ;; *) die "METHOD must be auto, control or diff" ;; esac
for tool in valgrind callgrind_control taskset redis-cli redis-benchmark; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found (run scripts/deps)"
done
for name in $SERVERS; do
  case "$name" in
    strata) [[ -x "$STRATA_BIN" ]] || die "strata binary not found at $STRATA_BIN" ;;
    redis) command -v "$REDIS_BIN" >/dev/null 2>&1 || die "redis-server not found at $REDIS_BIN" ;;
    *) die "unknown server '$name' in SERVERS" ;;
  esac
done
taskset -c "$SERVER_CPUS" true 2>/dev/null || die "invalid SERVER_CPUS '$SERVER_CPUS'"
taskset -c "$CLIENT_CPUS" true 2>/dev/null || die "invalid CLIENT_CPUS '$CLIENT_CPUS'"

RESULTS_DIR="$ROOT/bench/results"
STAMP="$(date +%Y%m%d-%H%M%S)"
WORK="$RESULTS_DIR/tmp/callgrind-$STAMP-$$"
mkdir -p "$WORK"

SERVER_PID=""
KEEP_WORK=1

stop_server() {
  local pid="$SERVER_PID" i
  SERVER_PID=""
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  # Valgrind writes the final profile on exit, which takes a while.
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  stop_server
  if [[ "$KEEP_WORK" -eq 0 ]]; then
    rm -rf "$WORK"
  else
    echo "callgrind: logs and profiles kept in $WORK" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME DIR: runs NAME under callgrind, profile DIR/cg.out, sets SERVER_PID/PORT.
start_server() {
  local name="$1" dir="$2" i
  local -a cmd extra vg_extra
  read -r -a vg_extra <<<"$VALGRIND_ARGS"
  mkdir -p "$dir"
  PORT="$(free_port)"
  if [[ "$name" == strata ]]; then
    read -r -a extra <<<"$STRATA_ARGS"
    cmd=("$STRATA_BIN" --port "$PORT" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no
      --maxmemory 0 --threads "$THREADS" --io-backend "$IO_BACKEND" "${extra[@]}")
  else
    read -r -a extra <<<"$REDIS_ARGS"
    cmd=("$REDIS_BIN" --port "$PORT" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no
      --io-threads 1 --maxmemory 0 --daemonize no --logfile "" "${extra[@]}")
  fi
  taskset -c "$SERVER_CPUS" valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
    --dump-instr=no --collect-jumps=no --separate-threads=no "${vg_extra[@]}" "${cmd[@]}" \
    >"$dir/server.log" 2>&1 </dev/null &
  SERVER_PID=$!
  for ((i = 0; i < READY_TIMEOUT_S * 4; i++)); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      tail -n 20 "$dir/server.log" >&2 || true
      die "$name exited during start-up under valgrind"
    fi
    if [[ "$(timeout 5 redis-cli -h 127.0.0.1 -p "$PORT" PING 2>/dev/null)" == "PONG" ]]; then
      return 0
    fi
    sleep 0.25
  done
  die "$name did not answer PING within ${READY_TIMEOUT_S}s under valgrind"
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

preload() {
  local name="$1" dir="$2" count
  resp_stream | taskset -c "$CLIENT_CPUS" redis-cli -h 127.0.0.1 -p "$PORT" --pipe \
    --pipe-timeout 120 >"$dir/preload.log" 2>&1 || die "preload of $name failed; see $dir/preload.log"
  count="$(timeout 60 redis-cli -h 127.0.0.1 -p "$PORT" DBSIZE 2>/dev/null | tr -d '\r' || true)"
  if [[ "$count" =~ ^[0-9]+$ ]]; then
    [[ "$count" -ge $((KEYS * 99 / 100)) ]] || die "$name holds $count keys after preload (wanted $KEYS)"
  else
    echo "callgrind: warning: DBSIZE on $name returned '$count'; keyspace size unchecked" >&2
  fi
}

# load NAME DIR TEST N: runs the redis-benchmark load, prints its wall time in seconds.
load() {
  local name="$1" dir="$2" test="$3" n="$4" t0 t1
  t0="$(date +%s.%N)"
  taskset -c "$CLIENT_CPUS" redis-benchmark -h 127.0.0.1 -p "$PORT" -t "$test" -n "$n" \
    -r "$KEYS" -d "$VALUE_SIZE" -P "$PIPELINE" -c "$CLIENTS" -q \
    >>"$dir/bench.log" 2>&1 || die "redis-benchmark failed against $name; see $dir/bench.log"
  t1="$(date +%s.%N)"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# Ir in one callgrind output file.
ir_of() {
  awk '/^summary:/ { print $2; found = 1; exit } /^totals:/ && !t { t = $2 }
       END { if (!found && t != "") print t }' "$1"
}

# dump DIR PART: dumps and zeroes the counters, prints the Ir of the new part.
dump() {
  local dir="$1" part="$2" file i
  file="$dir/cg.out.$part"
  timeout 60 callgrind_control -d "$SERVER_PID" >>"$dir/control.log" 2>&1 || return 1
  for ((i = 0; i < 300; i++)); do
    if [[ -s "$file" ]] && grep -q '^totals:' "$file"; then
      ir_of "$file"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

declare -A IR_PER_REQ NET_PER_REQ LOAD_IR BASELINE IDLE_RATE USED_METHOD

# measure_control NAME: one server, parts split with callgrind_control. Sets
# CONTROL_FAILED=1 if callgrind_control does not work here.
CONTROL_FAILED=0
measure_control() {
  local name="$1"
  local dir="$WORK/$name" part=1 ir idle secs test
  start_server "$name" "$dir"
  echo "  $name: preloading $KEYS keys under valgrind..." >&2
  preload "$name" "$dir"
  if ! ir="$(dump "$dir" "$part")"; then
    echo "callgrind: callgrind_control could not dump $name (see $dir/control.log)" >&2
    stop_server
    CONTROL_FAILED=1
    return 0
  fi
  BASELINE[$name]="$ir"
  part=$((part + 1))
  sleep "$IDLE_S"
  idle="$(dump "$dir" "$part")" || die "callgrind_control dump failed for $name"
  IDLE_RATE[$name]="$(awk -v i="$idle" -v s="$IDLE_S" 'BEGIN { printf "%.0f", i / s }')"
  for test in $TESTS; do
    part=$((part + 1))
    echo "  $name: $test x $REQUESTS (P$PIPELINE)..." >&2
    secs="$(load "$name" "$dir" "$test" "$REQUESTS")"
    ir="$(dump "$dir" "$part")" || die "callgrind_control dump failed for $name"
    LOAD_IR["$name,$test"]="$ir"
    IR_PER_REQ["$name,$test"]="$(awk -v i="$ir" -v n="$REQUESTS" 'BEGIN { printf "%.1f", i / n }')"
    NET_PER_REQ["$name,$test"]="$(awk -v i="$ir" -v n="$REQUESTS" -v r="${IDLE_RATE[$name]}" \
      -v s="$secs" 'BEGIN { printf "%.1f", (i - r * s) / n }')"
  done
  stop_server
  USED_METHOD[$name]="control"
}

# total_ir NAME TEST N: fresh server, preload, one load of N, shutdown; sets TOTAL_IR.
TOTAL_IR=0
total_ir() {
  local name="$1" test="$2" n="$3" dir f sum=0 ir secs
  dir="$WORK/$name-$test-$n"
  start_server "$name" "$dir"
  preload "$name" "$dir"
  secs="$(load "$name" "$dir" "$test" "$n")"
  echo "    $n requests took ${secs}s" >&2
  stop_server
  for f in "$dir"/cg.out*; do
    ir="$(ir_of "$f")"
    if [[ -n "$ir" ]]; then sum=$((sum + ir)); fi
  done
  TOTAL_IR="$sum"
}

measure_diff() {
  local name="$1" test t1 t2
  for test in $TESTS; do
    echo "  $name: $test, runs of $REQUESTS and $((2 * REQUESTS)) requests (difference method)..." >&2
    total_ir "$name" "$test" "$REQUESTS"
    t1="$TOTAL_IR"
    total_ir "$name" "$test" "$((2 * REQUESTS))"
    t2="$TOTAL_IR"
    LOAD_IR["$name,$test"]="$((t2 - t1))"
    if [[ "$t2" -le "$t1" ]]; then
      echo "callgrind: warning: $name $test: Ir did not grow with the load ($t1 -> $t2)" >&2
    fi
    IR_PER_REQ["$name,$test"]="$(awk -v a="$t1" -v b="$t2" -v n="$REQUESTS" 'BEGIN { printf "%.1f", (b - a) / n }')"
    NET_PER_REQ["$name,$test"]="${IR_PER_REQ["$name,$test"]}"
  done
  BASELINE[$name]="n/a"
  IDLE_RATE[$name]="n/a"
  USED_METHOD[$name]="diff"
}

for name in $SERVERS; do
  echo "measuring $name under callgrind..." >&2
  if [[ "$METHOD" == diff ]]; then
    measure_diff "$name"
    continue
  fi
  CONTROL_FAILED=0
  measure_control "$name"
  if [[ "$CONTROL_FAILED" -eq 1 ]]; then
    [[ "$METHOD" == auto ]] || die "callgrind_control failed and METHOD=control"
    echo "callgrind: falling back to the difference method for $name" >&2
    measure_diff "$name"
  fi
done

# ---- report ----------------------------------------------------------------------------
KERNEL="$(uname -r)"
NPROC="$(nproc)"
VALGRIND_VERSION="$(valgrind --version)"
REDIS_VERSION="$("$REDIS_BIN" --version 2>/dev/null | head -n 1 || true)"
GIT_REV="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
STRATA_BIN_SHOWN="${STRATA_BIN#"$ROOT"/}"
FULL_CMD="STRATA_BIN=$(printf '%q' "$STRATA_BIN_SHOWN") REDIS_BIN=$(printf '%q' "$REDIS_BIN")"
FULL_CMD+=" SERVERS=$(printf '%q' "$SERVERS") KEYS=$KEYS REQUESTS=$REQUESTS PIPELINE=$PIPELINE"
FULL_CMD+=" CLIENTS=$CLIENTS VALUE_SIZE=$VALUE_SIZE TESTS=$(printf '%q' "$TESTS") IDLE_S=$IDLE_S"
FULL_CMD+=" IO_BACKEND=$IO_BACKEND THREADS=$THREADS STRATA_ARGS=$(printf '%q' "$STRATA_ARGS")"
FULL_CMD+=" REDIS_ARGS=$(printf '%q' "$REDIS_ARGS") SERVER_CPUS=$SERVER_CPUS"
FULL_CMD+=" CLIENT_CPUS=$CLIENT_CPUS METHOD=$METHOD VALGRIND_ARGS=$(printf '%q' "$VALGRIND_ARGS")"
FULL_CMD+=" LABEL=$LABEL bench/callgrind.sh"

CSV="$RESULTS_DIR/$STAMP-$LABEL.csv"
MD="$RESULTS_DIR/$STAMP-$LABEL.md"

{
  echo "# command: $INVOCATION"
  echo "# settings: $FULL_CMD"
  echo "# date: $(date -Iseconds) kernel: $KERNEL nproc: $NPROC threads: $THREADS git: $GIT_REV"
  echo "# $VALGRIND_VERSION; redis: $REDIS_VERSION"
  echo "server,test,method,requests,pipeline,clients,keys,value_size,load_ir,ir_per_request,net_ir_per_request,baseline_ir,idle_ir_per_s"
  for name in $SERVERS; do
    for test in $TESTS; do
      echo "$name,${test^^},${USED_METHOD[$name]},$REQUESTS,$PIPELINE,$CLIENTS,$KEYS,$VALUE_SIZE,${LOAD_IR["$name,$test"]},${IR_PER_REQ["$name,$test"]},${NET_PER_REQ["$name,$test"]},${BASELINE[$name]},${IDLE_RATE[$name]}"
    done
  done
} >"$CSV"

# Rows: test strata_ir strata_net redis_ir redis_net ratio (ratio of net figures, strata/redis)
ROWS="$(
  for test in $TESTS; do
    s="${IR_PER_REQ["strata,$test"]:-n/a}"; sn="${NET_PER_REQ["strata,$test"]:-n/a}"
    r="${IR_PER_REQ["redis,$test"]:-n/a}"; rn="${NET_PER_REQ["redis,$test"]:-n/a}"
    ratio="$(awk -v a="$sn" -v b="$rn" 'BEGIN {
      if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }')"
    echo "${test^^} $s $sn $r $rn $ratio"
  done
)"

{
  echo "# Instructions per request: $LABEL ($STAMP)"
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
  echo "| strata threads | $THREADS (io backend $IO_BACKEND) |"
  echo "| load | redis-benchmark -n $REQUESTS -P $PIPELINE -c $CLIENTS -r $KEYS -d $VALUE_SIZE |"
  echo "| valgrind | $VALGRIND_VERSION |"
  echo "| redis | $REDIS_VERSION |"
  for name in $SERVERS; do
    echo "| $name | method ${USED_METHOD[$name]}, baseline (start-up + preload) ${BASELINE[$name]} Ir, idle ${IDLE_RATE[$name]} Ir/s |"
  done
  echo "| git | $GIT_REV |"
  echo
  echo "Ir counts every instruction the server process executes in user space (all threads),"
  echo "not kernel work. net = Ir/request after subtracting the idle rate over the load's wall time."
  echo
  echo "| test | strata Ir/req | strata net | redis Ir/req | redis net | strata/redis (net) |"
  echo "|---|---:|---:|---:|---:|---:|"
  while read -r t s sn r rn ratio; do
    echo "| $t | $s | $sn | $r | $rn | $ratio |"
  done <<<"$ROWS"
} >"$MD"

echo
printf '%-5s %14s %12s %14s %12s %14s\n' test "strata Ir/req" "strata net" "redis Ir/req" "redis net" "strata/redis"
while read -r t s sn r rn ratio; do
  printf '%-5s %14s %12s %14s %12s %14s\n' "$t" "$s" "$sn" "$r" "$rn" "$ratio"
done <<<"$ROWS"
echo
for name in $SERVERS; do
  echo "$name: method ${USED_METHOD[$name]}, baseline ${BASELINE[$name]} Ir, idle ${IDLE_RATE[$name]} Ir/s"
done
echo "results: ${CSV#"$ROOT"/} ${MD#"$ROOT"/}"
[[ "${KEEP:-0}" == "1" ]] || KEEP_WORK=0
