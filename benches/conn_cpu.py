#!/usr/bin/env python3
"""Client CPU per I/O per connection (issue 29): what predicts how far an NBD client
scales on a machine with more cores than this one.

On a 2-core machine a "4 connections against 1" throughput ratio measures how the
scheduler shares two cores between server and client, not the client. What carries
over to a bigger client is the CPU one connection's I/O costs the worker that drives
it: the result's `connections[].cpu_us_per_io` (the worker thread's CPU clock, split
over its connections by I/Os). This script runs one worker driving 1, 2 and 4
connections to `nbdkit memory` (server on CPU 1, client on CPU 0), ROUNDS times with
the order rotated each round, and prints per shape the medians of:
  - the connections' CPU per I/O (each run's mean over its connections),
  - the whole process's CPU per I/O (the result's `cpu.cpu_us_per_io`: collector
    and main thread included),
  - IOPS, with the round-to-round range.
If the per-connection figure stays flat as connections are added, one client core
drives 1e6 / that many I/Os a second, however they are spread over connections.

    python3 benches/conn_cpu.py [--rounds 5] [--seconds 5] [--binary PATH] [--rw randread]

Needs nbdkit and a release build. Loopback only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_fio  # noqa: E402  (nbdkit on a free loopback port)
from peers import CLIENT_CPU, SERVER_CPU, loadavg, pin_tree  # noqa: E402
from rounds import med_range  # noqa: E402

CONNECTIONS = (1, 2, 4)


def run_once(binary, uri, conns, rw, seconds, tmp):
    out = os.path.join(tmp, "r.json")
    cmd = ["taskset", "-c", str(CLIENT_CPU), binary, "run", "-q", "--target", uri,
           "--rw", rw, "--bs", "4k", "--qd", "16", "--streams", str(conns),
           "--connections", str(conns), "--workers", "1", "--duration", f"{seconds}s",
           "--warmup", "1s", "--json", out]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(out) as f:
        run = json.load(f)["runs"][0]
    per_conn = [c["cpu_us_per_io"] for c in run["connections"] if c.get("cpu_us_per_io")]
    if len(per_conn) != conns:
        raise SystemExit(f"{conns} connections, {len(per_conn)} with a CPU figure: "
                         f"{run['connections']}")
    return statistics.mean(per_conn), run["cpu"]["cpu_us_per_io"], run["totals"]["iops"]


def fmt(xs, spec):
    m, lo, hi = med_range(xs)
    return f"{m:{spec}} ({lo:{spec}}–{hi:{spec}})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rw", default="randread")
    ap.add_argument("--binary", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "target", "release", "ioscope"))
    o = ap.parse_args()
    server, uri = vs_fio.start_nbdkit()
    try:
        pin_tree(server.pid, SERVER_CPU)
        got = {c: [] for c in CONNECTIONS}
        print(f"# {o.binary}; nbdkit memory, 4k {o.rw}, QD 16 per connection, one worker;"
              f" {o.rounds} rounds x {o.seconds} s; load {loadavg()}")
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(o.rounds):
                order = CONNECTIONS[r % 3:] + CONNECTIONS[:r % 3]
                for c in order:
                    got[c].append(run_once(o.binary, uri, c, o.rw, o.seconds, tmp))
        print(f"# load at the end {loadavg()}")
        print("| connections | worker CPU per I/O per connection, µs (median; range) "
              "| process CPU per I/O, µs | IOPS (median; range) |")
        print("|---|---|---|---|")
        for c in CONNECTIONS:
            per, proc, iops = zip(*got[c])
            print(f"| {c} | {fmt(per, '.2f')} | {fmt(proc, '.2f')} | {fmt(iops, ',.0f')} |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
