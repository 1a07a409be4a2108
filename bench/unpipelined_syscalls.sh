#!/usr/bin/env bash
# System calls and CPU per request on the unpipelined path: strata-server with each
# io-uring-batched-sends setting, and redis-server, measured in turns in one run.
#
# Each server runs alone on SERVER_CPU (1 worker thread for strata, persistence off) and
# is preloaded with KEYS keys of 100 bytes; redis-benchmark, pinned to CLIENT_CPU, then
# sends REQUESTS GETs and REQUESTS SETs over CLIENTS connections at pipeline 1. perf stat
# attached to the server counts, in two passes per test (a tracepoint slows what it
# counts, so the CPU pass counts nothing else):
#   - system calls per request (raw_syscalls:sys_enter, all of the server's threads);
#   - server CPU per request (task-clock), in microseconds.
# ROUNDS rounds alternate the servers' order; each figure is the median over the rounds.
# perf must be allowed to attach (root, or kernel.perf_event_paranoid <= 1).
#
# Options (environment): STRATA_BIN (build/server/strata-server), REDIS_BIN
# (redis-server), SERVER_CPU (0), CLIENT_CPU (1), KEYS (100000), REQUESTS (200000),
# CLIENTS (50), ROUNDS (3), LABEL (unpipelined-syscalls), BEFORE_BIN (unset: a previous
# strata-server binary, measured as "strata-before" with batched sends, for an A/B in
# the same rounds), WAKEUP_BATCH (8: io-uring-wakeup-batch for "strata-wakeup-batch"),
# WAKEUP_USEC (unset: the server's default io-uring-wakeup-batch-usec), BUSY_POLL_USEC
# (100: io-uring-busy-poll-usec for "strata-busy-poll", measured only when SERVERS names it),
# SERVERS (the list measured, in this order on odd rounds and reversed on even ones;
# default strata-batched strata-wakeup-batch strata-direct redis, plus strata-before
# after strata-batched when BEFORE_BIN is set).
# Results: a table on stdout, plus bench/results/<date>-<label>.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STRATA_BIN="${STRATA_BIN:-$ROOT/build/server/strata-server}"
BEFORE_BIN="${BEFORE_BIN:-}"
WAKEUP_BATCH="${WAKEUP_BATCH:-8}"
WAKEUP_USEC="${WAKEUP_USEC:-}"
BUSY_POLL_USEC="${BUSY_POLL_USEC:-100}"
REDIS_BIN="${REDIS_BIN:-redis-server}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
KEYS="${KEYS:-100000}"
REQUESTS="${REQUESTS:-200000}"
CLIENTS="${CLIENTS:-50}"
ROUNDS="${ROUNDS:-3}"
LABEL="${LABEL:-unpipelined-syscalls}"
for tool in perf redis-benchmark redis-cli taskset; do
  command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done

# WORK, PID, free_port, wait_for_ping, stop_server, round_order.
# shellcheck source=bench/lib/server_turns.sh
source "$ROOT/bench/lib/server_turns.sh"

# start NAME -> sets PORT and PID
start() {
  PORT="$(free_port)"
  case "$1" in
    strata-batched | strata-direct | strata-before | strata-wakeup-batch | strata-busy-poll)
      local batched=yes bin="$STRATA_BIN" extra=()
      [[ "$1" == strata-direct ]] && batched=no
      [[ "$1" == strata-before ]] && bin="$BEFORE_BIN"
      [[ "$1" == strata-wakeup-batch ]] && extra=(--io-uring-wakeup-batch "$WAKEUP_BATCH")
      [[ "$1" == strata-wakeup-batch && -n "$WAKEUP_USEC" ]] &&
        extra+=(--io-uring-wakeup-batch-usec "$WAKEUP_USEC")
      [[ "$1" == strata-busy-poll ]] && extra=(--io-uring-busy-poll-usec "$BUSY_POLL_USEC")
      taskset -c "$SERVER_CPU" "$bin" --port "$PORT" --bind 127.0.0.1 --threads 1 \
        --save "" --dir "$WORK" --io-backend io_uring --io-uring-batched-sends "$batched" \
        "${extra[@]}" >"$WORK/server.log" 2>&1 &
      ;;
    redis)
      taskset -c "$SERVER_CPU" "$REDIS_BIN" --port "$PORT" --bind 127.0.0.1 --save "" \
        --appendonly no --dir "$WORK" >"$WORK/server.log" 2>&1 &
      ;;
  esac
  PID=$!
  wait_for_ping "$PORT"
  taskset -c "$CLIENT_CPU" redis-benchmark -p "$PORT" -t set -n "$KEYS" -r "$KEYS" -d 100 \
    -P 16 -q >/dev/null 2>&1
}

# measure TEST EVENT -> the event's count per request
measure() {
  perf stat -x, -e "$2" -p "$PID" -o "$WORK/perf.txt" -- \
    taskset -c "$CLIENT_CPU" redis-benchmark -p "$PORT" -t "$1" -n "$REQUESTS" -r "$KEYS" \
    -d 100 -c "$CLIENTS" -q >/dev/null 2>&1
  awk -F, -v n="$REQUESTS" -v ev="$2" '$3 == ev || index($0, ev) { v = $1 }
    END { if (ev == "task-clock") printf "%.3f", v * 1000 / n; else printf "%.3f", v / n }' \
    "$WORK/perf.txt"
}

declare -A SYS CPU
if [[ -n "${SERVERS:-}" ]]; then
  read -r -a SERVERS <<<"$SERVERS"
elif [[ -n "$BEFORE_BIN" ]]; then
  SERVERS=(strata-batched strata-before strata-wakeup-batch strata-direct redis)
else
  SERVERS=(strata-batched strata-wakeup-batch strata-direct redis)
fi
for round in $(seq 1 "$ROUNDS"); do
  mapfile -t order < <(round_order "$round")
  for s in "${order[@]}"; do
    start "$s"
    for t in get set; do
      SYS[$s,$t]+="$(measure "$t" raw_syscalls:sys_enter) "
      CPU[$s,$t]+="$(measure "$t" task-clock) "
    done
    stop_server "$PORT"
    echo "  round $round: $s" >&2
  done
done

median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/results/$STAMP-$LABEL.md"
{
  echo "# System calls and CPU per request, pipeline 1"
  echo
  echo "Command: \`$(printf '%q ' "$0" "$@")\`; ROUNDS=$ROUNDS REQUESTS=$REQUESTS CLIENTS=$CLIENTS"
  echo "WAKEUP_BATCH=$WAKEUP_BATCH WAKEUP_USEC=${WAKEUP_USEC:-default} (strata-wakeup-batch: --io-uring-wakeup-batch $WAKEUP_BATCH${WAKEUP_USEC:+ --io-uring-wakeup-batch-usec $WAKEUP_USEC})"
  echo "BUSY_POLL_USEC=$BUSY_POLL_USEC (strata-busy-poll: --io-uring-busy-poll-usec $BUSY_POLL_USEC)"
  echo "KEYS=$KEYS; server on CPU $SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU; $(date -u)."
  echo "strata: $("$STRATA_BIN" --version 2>/dev/null | head -1); redis: $("$REDIS_BIN" --version | head -1)"
  [[ -n "$BEFORE_BIN" ]] && echo "strata-before: $(basename "$BEFORE_BIN")"
  echo
  echo "| server | GET syscalls/req | GET cpu us/req | SET syscalls/req | SET cpu us/req |"
  echo "|---|---:|---:|---:|---:|"
  for s in "${SERVERS[@]}"; do
    echo "| $s | $(median "${SYS[$s,get]}") | $(median "${CPU[$s,get]}") |" \
      "$(median "${SYS[$s,set]}") | $(median "${CPU[$s,set]}") |"
  done
  echo
  echo "Every round (syscalls/req; cpu us/req):"
  echo
  for s in "${SERVERS[@]}"; do
    for t in get set; do
      echo "- $s $t: ${SYS[$s,$t]}; ${CPU[$s,$t]}"
    done
  done
} >"$OUT"
cat "$OUT"
echo "results: $OUT"
