# Helpers for bench scripts that run servers in turns on one machine (sourced, not run):
# a work directory removed on exit with the running server stopped, a free loopback port,
# waiting for PING, stopping a server, and the order of a round's servers.
#
# A script sets SERVERS (an array), starts a server with `... & PID=$!`, then calls
# wait_for_ping "$PORT" and, when done with it, stop_server "$PORT".
# Defines WORK (a fresh temporary directory) and PID (the server's, or empty).

WORK="$(mktemp -d)"
PID=""
turns_cleanup() {
  [[ -n "$PID" ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$WORK"
}
trap turns_cleanup EXIT

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_for_ping PORT: up to 5 s for the server to answer.
wait_for_ping() {
  for _ in $(seq 1 100); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "no PING answer on port $1 within 5 s" >&2
  return 1
}

# stop_server PORT: SHUTDOWN NOSAVE, then waits for PID.
stop_server() {
  redis-cli -p "$1" shutdown nosave >/dev/null 2>&1 || true
  wait "$PID" 2>/dev/null || true
  PID=""
}

# round_order ROUND: SERVERS in order on odd rounds, reversed on even ones (one per line),
# so that no server always runs first on a machine whose speed drifts.
round_order() {
  if (($1 % 2 == 1)); then
    printf '%s\n' "${SERVERS[@]}"
  else
    for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do echo "${SERVERS[$i]}"; done
  fi
}
