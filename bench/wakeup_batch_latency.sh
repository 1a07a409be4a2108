#!/usr/bin/env bash
# Latency and CPU per request of wake-up batching (io-uring-wakeup-batch) under open-loop
# loads: strata-server with the default setting and with batching on, and redis-server,
# measured in turns in one run.
#
# Each server runs alone on SERVER_CPU (1 worker thread for strata, persistence off),
# preloaded with KEYS keys of 100 bytes (key:0 ..). strata-bench, pinned to CLIENT_CPU (1 thread),
# then runs each load in LOADS for LOAD_SECONDS: "CLIENTSxRATE" is CLIENTS connections each
# sending RATE requests a second on a schedule (--rate-limiting), whatever the replies'
# speed, so a server that holds requests shows it in the latency; "CLIENTSxmax" is
# closed-loop (each connection sends its next request when the reply arrives). Requests
# are SET:GET 1:10 of 100 bytes at pipeline 1. perf stat attached to the server counts
# its CPU (task-clock) over each load. ROUNDS rounds alternate the servers' order; each
# figure is the median over the rounds.
#
# Options (environment): STRATA_BIN (build/server/strata-server), BENCH_BIN
# (build/tools/strata-bench/strata-bench), REDIS_BIN (redis-server), BEFORE_BIN (unset: a
# previous strata-server binary, measured as "strata-before-batch" with the same
# batching settings), SERVER_CPU (0), CLIENT_CPU (1), KEYS (100000), LOAD_SECONDS (4),
# ROUNDS (2), WAKEUP_BATCH (8), WAKEUP_USEC (100), BUSY_POLL_USEC (100: io-uring-busy-poll-usec
# for "strata-busy-poll", measured only when SERVERS names it), LOADS ("50x100 50x400 10x2000 50x1000
# 50xmax"), SERVERS ("strata strata-batch redis", plus strata-before-batch when
# BEFORE_BIN is set), LABEL (wakeup-batch-latency).
# Results: a table on stdout, plus bench/results/<date>-<label>.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STRATA_BIN="${STRATA_BIN:-$ROOT/build/server/strata-server}"
BENCH_BIN="${BENCH_BIN:-$ROOT/build/tools/strata-bench/strata-bench}"
REDIS_BIN="${REDIS_BIN:-redis-server}"
BEFORE_BIN="${BEFORE_BIN:-}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
KEYS="${KEYS:-100000}"
SECONDS_PER_LOAD="${LOAD_SECONDS:-4}"
ROUNDS="${ROUNDS:-2}"
WAKEUP_BATCH="${WAKEUP_BATCH:-8}"
WAKEUP_USEC="${WAKEUP_USEC:-100}"
BUSY_POLL_USEC="${BUSY_POLL_USEC:-100}"
LOADS="${LOADS:-50x100 50x400 10x2000 50x1000 50xmax}"
LABEL="${LABEL:-wakeup-batch-latency}"
for tool in perf redis-cli taskset; do
  command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
[[ -x "$BENCH_BIN" ]] || { echo "strata-bench not built at $BENCH_BIN" >&2; exit 1; }

# WORK, PID, free_port, wait_for_ping, stop_server, round_order.
# shellcheck source=bench/lib/server_turns.sh
source "$ROOT/bench/lib/server_turns.sh"

# start NAME -> sets PORT and PID
start() {
  PORT="$(free_port)"
  case "$1" in
    strata | strata-batch | strata-before-batch | strata-busy-poll)
      local bin="$STRATA_BIN" extra=()
      [[ "$1" == strata-before-batch ]] && bin="$BEFORE_BIN"
      [[ "$1" == strata-batch || "$1" == strata-before-batch ]] &&
        extra=(--io-uring-wakeup-batch "$WAKEUP_BATCH" --io-uring-wakeup-batch-usec "$WAKEUP_USEC")
      [[ "$1" == strata-busy-poll ]] && extra=(--io-uring-busy-poll-usec "$BUSY_POLL_USEC")
      taskset -c "$SERVER_CPU" "$bin" --port "$PORT" --bind 127.0.0.1 --threads 1 \
        --save "" --dir "$WORK" --io-backend io_uring "${extra[@]}" >"$WORK/server.log" 2>&1 &
      ;;
    redis)
      taskset -c "$SERVER_CPU" "$REDIS_BIN" --port "$PORT" --bind 127.0.0.1 --save "" \
        --appendonly no --dir "$WORK" >"$WORK/server.log" 2>&1 &
      ;;
  esac
  PID=$!
  wait_for_ping "$PORT"
  taskset -c "$CLIENT_CPU" "$BENCH_BIN" -s 127.0.0.1 -p "$PORT" -t 1 -c 10 --pipeline 16 \
    --ratio 1:0 -n allkeys --key-pattern P:P -d 100 --key-minimum 0 \
    --key-maximum "$((KEYS - 1))" --key-prefix key: --hide-histogram >/dev/null 2>&1
}

# measure LOAD -> "ops/s p50 p99 p99.9 cpu_us_per_req"
measure() {
  local clients="${1%%x*}" rate="${1#*x}" pace=()
  [[ "$rate" != max ]] && pace=(--rate-limiting "$rate")
  perf stat -x, -e task-clock -p "$PID" -o "$WORK/perf.txt" -- \
    taskset -c "$CLIENT_CPU" "$BENCH_BIN" -s 127.0.0.1 -p "$PORT" -t 1 -c "$clients" \
    --test-time "$SECONDS_PER_LOAD" --ratio 1:10 -d 100 --key-minimum 0 \
    --key-maximum "$((KEYS - 1))" --key-prefix key: --pipeline 1 --distinct-client-seed \
    --hide-histogram "${pace[@]}" --json-out-file "$WORK/run.json" >/dev/null 2>&1
  /usr/bin/python3 - "$WORK/run.json" "$WORK/perf.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["ALL STATS"]["Totals"]
ms = None
for line in open(sys.argv[2]):
    f = line.split(",")
    if len(f) > 2 and "task-clock" in f[2]:
        ms = float(f[0])
p = t["Percentile Latencies"]
if ms is None: sys.exit("no task-clock in " + open(sys.argv[2]).read())
print("%.0f %.3f %.3f %.3f %.2f" % (t["Ops/sec"], p["p50.00"], p["p99.00"], p["p99.90"],
                                     ms * 1000 / max(1, t["Count"])))
PY
}

declare -A RES
if [[ -n "${SERVERS:-}" ]]; then
  read -r -a SERVERS <<<"$SERVERS"
elif [[ -n "$BEFORE_BIN" ]]; then
  SERVERS=(strata strata-batch strata-before-batch redis)
else
  SERVERS=(strata strata-batch redis)
fi
read -r -a LOAD_LIST <<<"$LOADS"
for round in $(seq 1 "$ROUNDS"); do
  mapfile -t order < <(round_order "$round")
  for s in "${order[@]}"; do
    start "$s"
    for l in "${LOAD_LIST[@]}"; do RES[$s,$l]+="$(measure "$l");"; done
    stop_server "$PORT"
    echo "  round $round: $s" >&2
  done
done

# median of field F (1-based) over the rounds of "a b c d e;a b c d e;..."
median() {
  tr ';' '\n' <<<"$1" | sed '/^$/d' | awk -v f="$2" '{print $f}' | sort -n |
    awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'
}

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/results/$STAMP-$LABEL.md"
{
  echo "# Wake-up batching: latency and CPU per request under open-loop loads"
  echo
  echo "Command: \`$(printf '%q ' "$0" "$@")\`; ROUNDS=$ROUNDS LOAD_SECONDS=$SECONDS_PER_LOAD KEYS=$KEYS"
  echo "LOADS=\"$LOADS\" (connections x requests/s each; max: closed loop), SET:GET 1:10, 100 B, pipeline 1"
  echo "strata-batch: --io-uring-wakeup-batch $WAKEUP_BATCH --io-uring-wakeup-batch-usec $WAKEUP_USEC"
  echo "Server on CPU $SERVER_CPU, strata-bench (1 thread) on CPU $CLIENT_CPU; $(date -u)."
  echo "strata: $("$STRATA_BIN" --version 2>/dev/null | head -1); redis: $("$REDIS_BIN" --version | head -1)"
  [[ -n "$BEFORE_BIN" ]] && echo "strata-before-batch: $(basename "$BEFORE_BIN") with the same settings"
  echo
  echo "Latencies in ms (medians over the rounds); CPU: server CPU us per request."
  echo
  echo "| load | server | ops/s | p50 | p99 | p99.9 | CPU us/req |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for l in "${LOAD_LIST[@]}"; do
    for s in "${SERVERS[@]}"; do
      echo "| $l | $s | $(median "${RES[$s,$l]}" 1) | $(median "${RES[$s,$l]}" 2) |" \
        "$(median "${RES[$s,$l]}" 3) | $(median "${RES[$s,$l]}" 4) | $(median "${RES[$s,$l]}" 5) |"
    done
  done
  echo
  echo "Every round (ops/s p50 p99 p99.9 cpu):"
  echo
  for l in "${LOAD_LIST[@]}"; do
    for s in "${SERVERS[@]}"; do echo "- $l $s: ${RES[$s,$l]}"; done
  done
} >"$OUT"
cat "$OUT"
echo "results: $OUT"
