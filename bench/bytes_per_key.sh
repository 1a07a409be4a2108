#!/usr/bin/env bash
# Bytes per key: strata-server vs redis-server, measured by `strata-mem bench`.
#
# Starts a fresh strata-server and a fresh redis-server on free loopback ports, both with
# persistence off (--save "" --appendonly no) and no memory limit, then runs
#   strata-mem bench --server STRATA --server REDIS --keys KEYS --data-size SIZE --yes
#                    --format csv [--type TYPE --fields FIELDS]
# which fills each server in turn with memtier-style keys (memtier-1 .. memtier-KEYS,
# random printable values) and reports (INFO memory after - before) / KEYS by
# used_memory and by used_memory_rss. Fresh servers matter for the RSS figure: RSS only
# shrinks when the allocator hands pages back. Both servers are stopped on exit.
#
# Options (flag or environment variable; flags win):
#   --strata-bin PATH   STRATA_BIN   strata-server binary (build/server/strata-server)
#   --redis-bin PATH    REDIS_BIN    redis-server binary (redis-server)
#   --mem-bin PATH      MEM_BIN      strata-mem binary (build/tools/strata-mem/strata-mem)
#   --threads N         THREADS      strata worker threads (1)
#   --keys N            KEYS         keys written (1000000)
#   --size N            SIZE         value size in bytes (100)
#   --type T            TYPE         string | hash | set | zset | list (string)
#   --fields N          FIELDS       fields/members/elements per key for non-string types (10)
#   --label NAME        LABEL        label in the result file names (<date>-threadsN-TYPE-SIZE)
#                       STRATA_ARGS  extra strata-server arguments (word-split)
#                       REDIS_ARGS   extra redis-server arguments (word-split)
#
# Results: the CSV on stdout, plus bench/results/bytes_per_key-<label>.csv and .md (the
# .md holds the exact command, the settings and the machine).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INVOCATION="$(printf '%q ' "$0" "$@")"
INVOCATION="${INVOCATION% }"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

STRATA_BIN="${STRATA_BIN:-$ROOT/build/server/strata-server}"
REDIS_BIN="${REDIS_BIN:-redis-server}"
MEM_BIN="${MEM_BIN:-$ROOT/build/tools/strata-mem/strata-mem}"
THREADS="${THREADS:-1}"
KEYS="${KEYS:-1000000}"
SIZE="${SIZE:-100}"
TYPE="${TYPE:-string}"
FIELDS="${FIELDS:-10}"
LABEL="${LABEL:-}"
STRATA_ARGS="${STRATA_ARGS:-}"
REDIS_ARGS="${REDIS_ARGS:-}"

while [[ $# -gt 0 ]]; do
  opt="$1"
  case "$opt" in
    -h|--help) usage; exit 0 ;;
  esac
  if [[ $# -lt 2 ]]; then
    echo "bytes_per_key: $opt needs a value (see --help)" >&2
    exit 2
  fi
  case "$opt" in
    --strata-bin) STRATA_BIN="$2" ;;
    --redis-bin) REDIS_BIN="$2" ;;
    --mem-bin) MEM_BIN="$2" ;;
    --threads) THREADS="$2" ;;
    --keys) KEYS="$2" ;;
    --size) SIZE="$2" ;;
    --type) TYPE="$2" ;;
    --fields) FIELDS="$2" ;;
    --label) LABEL="$2" ;;
    *) echo "bytes_per_key: unknown option $opt (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done

die() { echo "bytes_per_key: $*" >&2; exit 1; }

for n in THREADS KEYS SIZE FIELDS; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "$n must be a positive integer (got '${!n}')"
done
case "$TYPE" in
  string|hash|set|zset|list) ;;
  *) die "TYPE must be string, hash, set, zset or list (got '$TYPE')" ;;
esac
[[ -x "$STRATA_BIN" ]] || die "strata binary not found at $STRATA_BIN (build with scripts/build)"
[[ -x "$MEM_BIN" ]] || die "strata-mem binary not found at $MEM_BIN (build with scripts/build)"
command -v "$REDIS_BIN" >/dev/null 2>&1 || die "redis-server not found at $REDIS_BIN"

STAMP="$(date +%Y%m%d-%H%M%S)"
LABEL="${LABEL:-$STAMP-threads$THREADS-$TYPE-${SIZE}B}"
LABEL="$(printf '%s' "$LABEL" | tr -c 'A-Za-z0-9._-' '_')"
RESULTS_DIR="$ROOT/bench/results"
WORK="$RESULTS_DIR/tmp/bytes_per_key-$STAMP-$$"
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
    echo "bytes_per_key: logs kept in $WORK" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_ready NAME PID PORT: the server answers PING (strata-mem has no ping, so this
# uses bash's /dev/tcp and reads the reply).
wait_ready() {
  local name="$1" pid="$2" port="$3" i reply
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || {
      echo "bytes_per_key: $name exited during start-up; log:" >&2
      tail -n 20 "$WORK/$name/server.log" >&2 || true
      return 1
    }
    reply="$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && printf 'PING\r\n' >&3 \
      && head -c 5 <&3" 2>/dev/null || true)"
    [[ "$reply" == "+PONG" ]] && return 0
    sleep 0.1
  done
  echo "bytes_per_key: $name did not answer PING on port $port within 10s" >&2
  return 1
}

STRATA_PORT="$(free_port)"
read -r -a strata_extra <<<"$STRATA_ARGS"
STRATA_CMD=("$STRATA_BIN" --port "$STRATA_PORT" --bind 127.0.0.1 --dir "$WORK/strata"
  --save "" --appendonly no --maxmemory 0 --threads "$THREADS" "${strata_extra[@]}")
"${STRATA_CMD[@]}" >"$WORK/strata/server.log" 2>&1 </dev/null &
STRATA_PID=$!
wait_ready strata "$STRATA_PID" "$STRATA_PORT"

REDIS_PORT="$(free_port)"
while [[ "$REDIS_PORT" == "$STRATA_PORT" ]]; do REDIS_PORT="$(free_port)"; done
read -r -a redis_extra <<<"$REDIS_ARGS"
REDIS_CMD=("$REDIS_BIN" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK/redis"
  --save "" --appendonly no --maxmemory 0 --daemonize no --logfile "" "${redis_extra[@]}")
"${REDIS_CMD[@]}" >"$WORK/redis/server.log" 2>&1 </dev/null &
REDIS_PID=$!
wait_ready redis "$REDIS_PID" "$REDIS_PORT"

MEM_CMD=("$MEM_BIN" bench --server "127.0.0.1:$STRATA_PORT" --server "127.0.0.1:$REDIS_PORT"
  --keys "$KEYS" --data-size "$SIZE" --yes --format csv)
if [[ "$TYPE" != string ]]; then
  MEM_CMD+=(--type "$TYPE" --fields "$FIELDS")
fi
echo "bytes_per_key: ${MEM_CMD[*]#"$ROOT"/}" >&2
"${MEM_CMD[@]}" >"$WORK/result.csv" || die "strata-mem bench failed (see the message above)"

CSV="$RESULTS_DIR/bytes_per_key-$LABEL.csv"
MD="$RESULTS_DIR/bytes_per_key-$LABEL.md"
cp "$WORK/result.csv" "$CSV"
cat "$CSV"

KERNEL="$(uname -r)"
NPROC="$(nproc)"
CPU_MODEL="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
REDIS_VERSION="$("$REDIS_BIN" --version 2>/dev/null | head -n 1)"
GIT_REV="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
SETTINGS="STRATA_BIN=$(printf '%q' "${STRATA_BIN#"$ROOT"/}") REDIS_BIN=$(printf '%q' "$REDIS_BIN")"
SETTINGS+=" MEM_BIN=$(printf '%q' "${MEM_BIN#"$ROOT"/}") THREADS=$THREADS KEYS=$KEYS SIZE=$SIZE"
SETTINGS+=" TYPE=$TYPE FIELDS=$FIELDS LABEL=$LABEL STRATA_ARGS=$(printf '%q' "$STRATA_ARGS")"
SETTINGS+=" REDIS_ARGS=$(printf '%q' "$REDIS_ARGS") bench/bytes_per_key.sh"
# shown ARGS...: a command line, shell-quoted, with repo paths made relative.
shown() {
  local s
  s="$(printf '%q ' "$@")"
  s="${s% }"
  echo "${s//"$ROOT"\//}"
}

{
  echo "# bytes per key: $LABEL"
  echo
  echo "- command: \`${INVOCATION//"$ROOT"\//}\`"
  echo "- settings: \`$SETTINGS\`"
  echo "- strata-mem: \`$(shown "${MEM_CMD[@]}")\`"
  echo "- strata-server: \`$(shown "${STRATA_CMD[@]}")\`"
  echo "- redis-server: \`$(shown "${REDIS_CMD[@]}")\`"
  echo "- date: $(date -Iseconds); kernel: $KERNEL; nproc: $NPROC; cpu: $CPU_MODEL"
  echo "- git: $GIT_REV; redis: $REDIS_VERSION"
  echo
  echo "| server | software | keys | value bytes | used_memory delta | bytes/key (used_memory) | rss delta | bytes/key (rss) |"
  echo "|---|---|---|---|---|---|---|---|"
  /usr/bin/python3 - "$CSV" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print("| %s | %s %s | %s | %s | %s | %s | %s | %s |" % (
        r["server"], r["server_name"], r["version"], r["keys"], r["data_size"],
        r["used_memory_delta"], r["bytes_per_key_used_memory"], r["used_memory_rss_delta"],
        r["bytes_per_key_rss"]))
PY
  echo
  echo "Source data: \`bench/results/bytes_per_key-$LABEL.csv\`."
} >"$MD"

KEEP_WORK=0
echo "bytes_per_key: wrote ${CSV#"$ROOT"/} and ${MD#"$ROOT"/}" >&2
