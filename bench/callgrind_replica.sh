#!/usr/bin/env bash
# What one replica costs its master, in instructions per SET (callgrind; repeatable on a
# shared machine where CPU-time figures drift by tens of percent).
#
# For each server (strata --threads 1 --io-backend epoll, and redis-server), twice -
# without a replica and with one redis-server replica attached and in sync - the master
# runs under valgrind --tool=callgrind on CPU 0; redis-benchmark on CPU 1 sends SET of
# VALUE_SIZE bytes over KEYS keys at pipeline 16 from 50 connections: WARM requests, a
# dump (callgrind_control -d), then REQUESTS requests and a second dump. Ir/SET = the
# second part's instructions / REQUESTS (the replica's ACKs and the stream are in it).
#
# Usage: bench/callgrind_replica.sh   (environment: STRATA_BIN, REDIS_BIN, REQUESTS, WARM,
#        KEYS, VALUE_SIZE, OUT, THREADS: strata's --threads, default 1; with more, the
#        instructions of every thread count, and most SETs run on another thread than
#        their connection's; SERVERS: "strata redis" by default)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STRATA_BIN="${STRATA_BIN:-$ROOT/build/server/strata-server}"
REDIS_BIN="${REDIS_BIN:-redis-server}"
REQUESTS="${REQUESTS:-200000}"
WARM="${WARM:-100000}"
KEYS="${KEYS:-100000}"
VALUE_SIZE="${VALUE_SIZE:-100}"
THREADS="${THREADS:-1}"
SERVERS="${SERVERS:-strata redis}"
OUT="${OUT:-$ROOT/bench/results/$(date +%Y%m%d-%H%M%S)-callgrind-replica.md}"
PORT=$((20000 + RANDOM % 20000))
RPORT=$((PORT + 1))

run() {  # run KIND WITH_REPLICA -> prints Ir per SET
  local kind="$1" with="$2" dir
  dir="$(mktemp -d)"
  mkdir -p "$dir/m" "$dir/r"
  local cmd
  if [[ "$kind" == strata ]]; then
    cmd=("$STRATA_BIN" --port "$PORT" --bind 127.0.0.1 --dir "$dir/m" --threads "$THREADS" --save ""
         --io-backend epoll)
  else
    cmd=("$REDIS_BIN" --port "$PORT" --bind 127.0.0.1 --dir "$dir/m" --save "" --appendonly no)
  fi
  taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "${cmd[@]}" \
    >"$dir/m.log" 2>&1 &
  local vp=$! rp=""
  for _ in $(seq 1 200); do
    timeout 1 redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && break
    sleep 0.3
  done
  if [[ "$with" == 1 ]]; then
    "$REDIS_BIN" --port "$RPORT" --bind 127.0.0.1 --dir "$dir/r" --save "" \
      --replicaof "127.0.0.1 $PORT" >"$dir/r.log" 2>&1 &
    rp=$!
    for _ in $(seq 1 200); do
      timeout 1 redis-cli -p "$RPORT" info replication 2>/dev/null | grep -q "link_status:up" && break
      sleep 0.3
    done
  fi
  timeout 300 taskset -c 1 redis-benchmark -p "$PORT" -t set -n "$WARM" -P 16 -c 50 -r "$KEYS" \
    -d "$VALUE_SIZE" -q >/dev/null
  timeout 60 callgrind_control -d "$vp" >/dev/null
  timeout 600 taskset -c 1 redis-benchmark -p "$PORT" -t set -n "$REQUESTS" -P 16 -c 50 \
    -r "$KEYS" -d "$VALUE_SIZE" -q >/dev/null
  timeout 60 callgrind_control -d "$vp" >/dev/null
  [[ -n "$rp" ]] && kill "$rp"
  kill "$vp"
  wait "$vp" 2>/dev/null || true
  [[ -n "$rp" ]] && { wait "$rp" 2>/dev/null || true; }
  local ir
  ir="$(awk '/^summary:/ {print $2}' "$dir/cg.out.2")"
  rm -rf "$dir"
  awk -v ir="$ir" -v n="$REQUESTS" 'BEGIN { printf "%.1f", ir / n }'
}

declare -A R
for kind in $SERVERS; do
  for with in 0 1; do
    R[$kind$with]="$(run "$kind" "$with")"
    echo "$kind replica=$with: ${R[$kind$with]} Ir/SET" >&2
  done
done
{
  echo "# Instructions per SET with and without one replica"
  echo
  echo "$(date '+%Y-%m-%d %H:%M'), \`bench/callgrind_replica.sh\` (REQUESTS=$REQUESTS, pipeline 16, 50 connections, $VALUE_SIZE B values over $KEYS keys)"
  echo
  echo "| server | Ir/SET alone | Ir/SET with a replica | added | kept (alone / with) |"
  echo "|---|---|---|---|---|"
  for kind in redis strata; do
    [[ -n "${R[${kind}0]:-}" ]] || continue
    awk -v k="$kind" -v a="${R[${kind}0]}" -v w="${R[${kind}1]}" \
      'BEGIN { printf "| %s | %.1f | %.1f | %+.1f | %.1f%% |\n", k, a, w, w - a, 100 * a / w }'
  done
  echo
  echo "The replica is a redis-server in both rows. strata's master: --threads $THREADS, epoll (valgrind models epoll best)."
} | tee "$OUT"
