#!/usr/bin/env bash
# A soak campaign (issue 28, item 3; docs/methodology.md, "Soak campaigns"): four
# verified workloads against nbdkit (two paths), tgtd (two portals), NFS-Ganesha and
# smbd at once for --minutes N (default 60), under a fault schedule drawn from a
# printed --seed (server kill and restart, link cut and restore in a network
# namespace, nbdkit error bursts, delay spikes), then the checks: verify finds no
# lost or corrupted acknowledged write, every fault shows as events in the results
# and on the HTML timelines, errors per interval add up, RSS and open descriptors
# stay within 5 % of the first minute's. Prints each figure with PASS or FAIL and
# exits 1 on any FAIL. Everything it starts (servers by PID, namespaces, temporary
# directories) is torn down on exit, also on failure or Ctrl-C.
#
#   scripts/soak.sh [--minutes N] [--seed S] [--ioscope PATH] [--out DIR] [--keep]
#
# Needs root. The work is done by scripts/soak.py (see its docstring for the
# topology and the fault kinds); `--help` lists the options.
set -euo pipefail
exec python3 "$(dirname "$0")/soak.py" "$@"
