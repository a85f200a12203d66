#!/usr/bin/env bash
# A multipath lab on this machine: N nbdkit servers on 127.0.0.1 serving one file,
# i.e. N paths to one device, and a failure schedule acting on them (stall a path with
# SIGSTOP, kill it, restart it). Every server is tracked by its PID in the lab
# directory; `down` stops exactly those.
#
#   scripts/lab.sh up N [SIZE]          start N paths to one new SIZE file (default 256M)
#   scripts/lab.sh flags                print the ioscope flags for the paths
#   scripts/lab.sh stall I [SECS]       SIGSTOP path I (for SECS, then SIGCONT)
#   scripts/lab.sh resume I             SIGCONT path I
#   scripts/lab.sh kill I               SIGKILL path I (connections reset)
#   scripts/lab.sh restart I            start path I again on its port
#   scripts/lab.sh schedule EVENT...    run events at times from now, e.g.
#                                       4:stall:1 8:resume:1 12:kill:2 20:restart:2
#   scripts/lab.sh status               PIDs and states
#   scripts/lab.sh down                 stop every server of the lab
#
# LAB (default /tmp/ioscope-lab.$UID) holds the file, the PIDs and the logs;
# BASE_PORT (default 10900) is path 0's port, path I listens on BASE_PORT+I.
set -euo pipefail

LAB=${LAB:-/tmp/ioscope-lab.$(id -u)}
BASE_PORT=${BASE_PORT:-10900}

die() { echo "lab.sh: $*" >&2; exit 2; }
pidfile() { echo "$LAB/path$1.pid"; }
port_of() { echo $((BASE_PORT + $1)); }
npaths() { cat "$LAB/npaths" 2>/dev/null || echo 0; }

check_index() {
  [[ "$1" =~ ^[0-9]+$ ]] || die "path index '$1' is not a number"
  (($1 < $(npaths))) || die "no path $1 (the lab has $(npaths))"
}

start_path() {
  local i=$1 port
  port=$(port_of "$i")
  # nbdkit ends when the process that started it exits (seen here with
  # --foreground), so a subshell stays its parent and waits for it.
  (
    nbdkit --foreground -i 127.0.0.1 -p "$port" file "$LAB/lun.img" \
      >>"$LAB/path$i.log" 2>&1 </dev/null &
    echo $! >"$(pidfile "$i")"
    wait
  ) &
  sleep 0.1
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  die "path $i (nbdkit on port $port) did not start; see $LAB/path$i.log"
}

signal_path() {
  local i=$1 sig=$2 pid
  check_index "$i"
  pid=$(cat "$(pidfile "$i")" 2>/dev/null) || die "path $i is not running"
  kill "-$sig" "$pid" 2>/dev/null || die "path $i (PID $pid) is gone"
  echo "$(date +%T.%3N) path $i: SIG$sig"
}

cmd=${1:-}
shift || true
case "$cmd" in
  up)
    n=${1:?usage: lab.sh up N [SIZE]}
    size=${2:-256M}
    command -v nbdkit >/dev/null || die "nbdkit is not installed (Debian package nbdkit)"
    [[ -e "$LAB/npaths" ]] && die "a lab is already up in $LAB; run 'lab.sh down' first"
    mkdir -p "$LAB"
    truncate -s 0 "$LAB/lun.img"
    head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$LAB/lun.img"
    echo "$n" >"$LAB/npaths"
    for i in $(seq 0 $((n - 1))); do start_path "$i"; done
    "$0" flags
    ;;
  flags)
    n=$(npaths)
    ((n > 0)) || die "no lab is up"
    printf -- '-t nbd://127.0.0.1:%s' "$(port_of 0)"
    for i in $(seq 1 $((n - 1))); do printf -- ' --path nbd://127.0.0.1:%s' "$(port_of "$i")"; done
    echo
    ;;
  stall)
    signal_path "$1" STOP
    if [[ -n "${2:-}" ]]; then sleep "$2"; signal_path "$1" CONT; fi
    ;;
  resume) signal_path "$1" CONT ;;
  kill)
    signal_path "$1" KILL
    rm -f "$(pidfile "$1")"
    ;;
  restart)
    check_index "$1"
    [[ -e "$(pidfile "$1")" ]] && kill -0 "$(cat "$(pidfile "$1")")" 2>/dev/null &&
      die "path $1 is still running"
    start_path "$1"
    echo "$(date +%T.%3N) path $1: restarted"
    ;;
  schedule)
    t0=$(date +%s.%N)
    for ev in "$@"; do
      IFS=: read -r at action idx <<<"$ev"
      [[ -n "$idx" ]] || die "event '$ev': expected SECONDS:ACTION:PATH"
      now=$(date +%s.%N)
      wait_s=$(echo "$t0 + $at - $now" | bc)
      if (($(echo "$wait_s > 0" | bc))); then sleep "$wait_s"; fi
      "$0" "$action" "$idx"
    done
    ;;
  status)
    for i in $(seq 0 $(($(npaths) - 1))); do
      pid=$(cat "$(pidfile "$i")" 2>/dev/null || echo -)
      state=$(ps -o state= -p "$pid" 2>/dev/null || echo gone)
      echo "path $i port $(port_of "$i") pid $pid state $state"
    done
    ;;
  down)
    for i in $(seq 0 $(($(npaths) - 1))); do
      pid=$(cat "$(pidfile "$i")" 2>/dev/null) || continue
      kill -CONT "$pid" 2>/dev/null || true
      kill -TERM "$pid" 2>/dev/null || true
    done
    rm -rf "$LAB"
    ;;
  *) sed -n '2,22p' "$0"; exit 2 ;;
esac
