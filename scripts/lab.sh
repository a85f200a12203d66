#!/usr/bin/env bash
# A multipath lab on this machine: N nbdkit servers serving one file, i.e. N paths to
# one device, and a failure schedule acting on them (stall a path with SIGSTOP, kill
# it, restart it, cut its link). Every server is tracked by its PID in the lab
# directory; `down` stops exactly those.
#
# Two kinds of lab:
# - `up`: the servers listen on 127.0.0.1 (ports BASE_PORT+I). Paths can be stalled,
#   killed and restarted; the machine's CPU limits what they carry.
# - `up-links`: N links, like the cables of a host with N NICs to one storage
#   server. Two network namespaces of the lab's own, NETNS-c (the client) and
#   NETNS-s (the servers), joined by N veth pairs: link I is 10.253.I.1 (client) —
#   10.253.I.2 (server), and path I's nbdkit listens on 10.253.I.2 in NETNS-s. The
#   addresses exist only inside the namespaces, so ioscope runs in NETNS-c (`exec`).
#   With a RATE (tc syntax, default 200mbit; `none` for none) each link's server end
#   sends no faster (a token bucket on its egress, the direction reads flow), so the
#   links, not the CPU, limit the total. A link can also be cut: `ip link set down`
#   on its server end, packets vanish and nothing is reset, like a pulled cable.
#   Needs root.
#
#   scripts/lab.sh up N [SIZE]          start N paths on 127.0.0.1 to one new SIZE file
#                                       (default 256M)
#   scripts/lab.sh up-links N [SIZE] [RATE]
#                                       N links in namespaces, one path over each
#   scripts/lab.sh flags                print the ioscope flags for the paths
#   scripts/lab.sh exec CMD...          run CMD where the paths are reachable (in NETNS-c
#                                       for a links lab, here otherwise)
#   scripts/lab.sh stall I [SECS]       SIGSTOP path I (for SECS, then SIGCONT)
#   scripts/lab.sh resume I             SIGCONT path I
#   scripts/lab.sh kill I               SIGKILL path I (connections reset)
#   scripts/lab.sh restart I            start path I again on its port
#   scripts/lab.sh cut I [SECS]         take link I down (for SECS, then up): links lab
#   scripts/lab.sh uncut I              bring link I up again; a server that ended when
#                                       its link returned is restarted (see below)
#   scripts/lab.sh schedule EVENT...    run events at times from now, e.g.
#                                       4:stall:1 8:resume:1 12:kill:2 20:restart:2
#                                       15:cut:2 45:uncut:2
#   scripts/lab.sh status               PIDs and states (and links)
#   scripts/lab.sh down                 stop every server of the lab (and delete its
#                                       namespaces)
#
# LAB (default /tmp/ioscope-lab.$UID) holds the file, the PIDs and the logs;
# BASE_PORT (default 10900) is path 0's port; on 127.0.0.1 path I listens on
# BASE_PORT+I, over links every path on BASE_PORT of its own address. NETNS (default
# ioscope-lab) names the namespaces of a links lab.
#
# nbdkit 1.32 sometimes aborts (`raw_send_socket: Assertion sock >= 0`) when a
# connection whose client has gone is reset under its queued replies — after a
# resume, or when a cut link returns and the client's kernel answers the server's
# retransmissions with RST (which may be tens of seconds later: TCP's backoff).
# `uncut` therefore watches the server for REVIVE_S seconds (default 60) after the
# link is back and restarts it (saying so) if it ends.
set -euo pipefail

LAB=${LAB:-/tmp/ioscope-lab.$(id -u)}
BASE_PORT=${BASE_PORT:-10900}
NETNS=${NETNS:-ioscope-lab}

die() { echo "lab.sh: $*" >&2; exit 2; }
pidfile() { echo "$LAB/path$1.pid"; }
npaths() { cat "$LAB/npaths" 2>/dev/null || echo 0; }
# The namespace prefix of a links lab; empty for a lab on 127.0.0.1.
links_ns() { cat "$LAB/netns" 2>/dev/null || true; }
port_of() { if [[ -n "$(links_ns)" ]]; then echo "$BASE_PORT"; else echo $((BASE_PORT + $1)); fi; }
host_of() { if [[ -n "$(links_ns)" ]]; then echo "10.253.$1.2"; else echo 127.0.0.1; fi; }
server_dev() { echo "labs$1"; }
# Runs "$@" where the paths are: in the client namespace of a links lab.
in_client() {
  local ns
  ns=$(links_ns)
  if [[ -n "$ns" ]]; then ip netns exec "$ns-c" "$@"; else "$@"; fi
}

check_index() {
  [[ "$1" =~ ^[0-9]+$ ]] || die "path index '$1' is not a number"
  (($1 < $(npaths))) || die "no path $1 (the lab has $(npaths))"
}

start_path() {
  local i=$1 port host ns
  port=$(port_of "$i")
  host=$(host_of "$i")
  ns=$(links_ns)
  # nbdkit ends when the process that started it exits (seen here with
  # --foreground), so a subshell stays its parent and waits for it. `ip netns exec`
  # execs nbdkit: $! is the server's own PID.
  (
    if [[ -n "$ns" ]]; then set -- ip netns exec "$ns-s"; else set --; fi
    "$@" nbdkit --foreground -i "$host" -p "$port" file "$LAB/lun.img" \
      >>"$LAB/path$i.log" 2>&1 </dev/null &
    echo $! >"$(pidfile "$i")"
    wait
  ) &
  sleep 0.1
  for _ in $(seq 100); do
    if in_client bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  die "path $i (nbdkit on $host:$port) did not start; see $LAB/path$i.log"
}

# N links between two new namespaces, each shaped to RATE on its server end.
make_links() {
  local n=$1 rate=$2 c="$NETNS-c" s="$NETNS-s" i
  echo "$NETNS" >"$LAB/netns" # first: `down` then deletes whatever was made
  for ns in "$c" "$s"; do
    ip netns add "$ns" || die "cannot create namespace $ns (a lab already up? root?)"
    ip -n "$ns" link set lo up
  done
  for i in $(seq 0 $((n - 1))); do
    ip -n "$c" link add "labc$i" mtu 9000 type veth peer name "$(server_dev "$i")" netns "$s" mtu 9000
    ip -n "$c" addr add "10.253.$i.1/24" dev "labc$i"
    ip -n "$s" addr add "10.253.$i.2/24" dev "$(server_dev "$i")"
    ip -n "$c" link set "labc$i" up
    ip -n "$s" link set "$(server_dev "$i")" up
    if [[ "$rate" != none ]]; then
      ip netns exec "$s" tc qdisc add dev "$(server_dev "$i")" root tbf \
        rate "$rate" burst 128kb latency 50ms
    fi
  done
}

set_link() {
  local i=$1 state=$2 ns
  ns=$(links_ns)
  [[ -n "$ns" ]] || die "'cut' and 'uncut' need a links lab (lab.sh up-links)"
  check_index "$i"
  ip -n "$ns-s" link set "$(server_dev "$i")" "$state"
  echo "$(date +%T.%3N) link $i: $state"
}

# Watches path I's server for REVIVE_S seconds (default 60) after its link returned
# and restarts it if it ends (see the nbdkit note at the top). Runs in the background,
# its PID in the lab directory (`down` ends it).
revive_path() {
  local i=$1
  (
    end=$((SECONDS + ${REVIVE_S:-60}))
    while ((SECONDS < end)); do
      pid=$(cat "$(pidfile "$i")" 2>/dev/null || true)
      if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
        echo "$(date +%T.%3N) path $i: nbdkit ended after its link returned; restarting it"
        start_path "$i"
      fi
      sleep 0.2
    done
  ) </dev/null &
  echo $! >"$LAB/revive$i.pid"
}

new_lab() {
  local n=$1 size=$2
  command -v nbdkit >/dev/null || die "nbdkit is not installed (Debian package nbdkit)"
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "N '$n' is not a number of paths"
  [[ -e "$LAB/npaths" ]] && die "a lab is already up in $LAB; run 'lab.sh down' first"
  mkdir -p "$LAB"
  truncate -s 0 "$LAB/lun.img"
  head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$LAB/lun.img"
  echo "$n" >"$LAB/npaths"
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
    new_lab "$n" "${2:-256M}"
    for i in $(seq 0 $((n - 1))); do start_path "$i"; done
    "$0" flags
    ;;
  up-links)
    n=${1:?usage: lab.sh up-links N [SIZE] [RATE]}
    (($(id -u) == 0)) || die "a links lab needs root (network namespaces)"
    new_lab "$n" "${2:-256M}"
    make_links "$n" "${3:-200mbit}"
    for i in $(seq 0 $((n - 1))); do start_path "$i"; done
    "$0" flags
    ;;
  flags)
    n=$(npaths)
    ((n > 0)) || die "no lab is up"
    printf -- '-t nbd://%s:%s' "$(host_of 0)" "$(port_of 0)"
    for i in $(seq 1 $((n - 1))); do printf -- ' --path nbd://%s:%s' "$(host_of "$i")" "$(port_of "$i")"; done
    echo
    ;;
  exec)
    (($(npaths) > 0)) || die "no lab is up"
    (($# > 0)) || die "usage: lab.sh exec CMD..."
    in_client "$@"
    ;;
  cut)
    set_link "$1" down
    if [[ -n "${2:-}" ]]; then sleep "$2"; "$0" uncut "$1"; fi
    ;;
  uncut)
    set_link "$1" up
    revive_path "$1"
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
    ns=$(links_ns)
    for i in $(seq 0 $(($(npaths) - 1))); do
      pid=$(cat "$(pidfile "$i")" 2>/dev/null || echo -)
      state=$(ps -o state= -p "$pid" 2>/dev/null || echo gone)
      link=
      if [[ -n "$ns" ]]; then
        link=" link $(ip -n "$ns-s" -br link show "$(server_dev "$i")" | awk '{print $2}')"
      fi
      echo "path $i $(host_of "$i"):$(port_of "$i") pid $pid state $state$link"
    done
    ;;
  down)
    for i in $(seq 0 $(($(npaths) - 1))); do
      pid=$(cat "$LAB/revive$i.pid" 2>/dev/null) && kill -TERM "$pid" 2>/dev/null || true
      pid=$(cat "$(pidfile "$i")" 2>/dev/null) || continue
      kill -CONT "$pid" 2>/dev/null || true
      kill -TERM "$pid" 2>/dev/null || true
    done
    ns=$(links_ns)
    if [[ -n "$ns" ]]; then
      # Deleting a namespace deletes the veth ends inside it (and so their peers).
      ip netns del "$ns-c" 2>/dev/null || true
      ip netns del "$ns-s" 2>/dev/null || true
    fi
    rm -rf "$LAB"
    ;;
  *) sed -n '2,52p' "$0"; exit 2 ;;
esac
