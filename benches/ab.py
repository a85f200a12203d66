#!/usr/bin/env python3
"""Two ioscope builds side by side: the same cases, alternating A and B each round,
so host noise hits both alike. Prints IOPS and CPU per I/O per round and the median
ratio B/A. Used to check that a change costs nothing on the hot path (issue 11: the
run core split must not regress against the build before it).

    python3 benches/ab.py OLD_BINARY NEW_BINARY [--rounds 3] [--seconds 4]

Needs /dev/shm (tmpfs). Each case names a target and flags that both builds accept.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

SHM_FILE = "/dev/shm/ioscope-ab.dat"

CASES = {
    "null-qd32": ["--target", "null:1g", "--qd", "32", "--cpus", "0"],
    # The write path: what each completed write costs (the flush schedule's checks).
    "null-qd32-randwrite": ["--target", "null:1g", "--qd", "32", "--rw", "randwrite", "--cpus", "0"],
    # fio's norandommap=0: every block once per pass (the map's step per I/O).
    "null-qd32-randmap": ["--target", "null:1g", "--qd", "32", "--cpus", "0", "--random-map"],
    "tmpfs-sync-qd1": [
        "--target", SHM_FILE, "--size", "256m", "--rw", "randread", "--bs", "4k",
        "--qd", "1", "--engine", "sync", "--direct", "false", "--cpus", "0",
    ],
    "tmpfs-sync-500x1": [
        "--target", SHM_FILE, "--size", "256m", "--rw", "randread", "--bs", "4k",
        "--qd", "1", "--streams", "500", "--engine", "sync", "--direct", "false",
    ],
    "open-loop-100k": [
        "--target", "null:1g", "--qd", "32", "--rate", "100000", "--cpus", "0",
    ],
}


def run_once(binary, args, seconds):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [binary, "run", *args, "--duration", f"{seconds}s", "--warmup", "1s",
               "--json", out, "--quiet"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr}")
        with open(out) as f:
            r = json.load(f)["runs"][0]
        return r["totals"]["iops"], r["cpu"]["cpu_us_per_io"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--only", default="")
    o = ap.parse_args()
    only = [c for c in o.only.split(",") if c]
    print(f"# A = {o.a}\n# B = {o.b}\n# {o.rounds} rounds x {o.seconds} s, alternating")
    for name, args in CASES.items():
        if only and name not in only:
            continue
        print(f"\n## {name}: {' '.join(args)}")
        print(f"{'round':>5} {'A IOPS':>12} {'B IOPS':>12} {'B/A':>6} {'A us/IO':>8} {'B us/IO':>8}")
        ratios, cpu_ratios = [], []
        for i in range(o.rounds):
            a, b = (run_once(o.a, args, o.seconds), run_once(o.b, args, o.seconds)) if i % 2 == 0 \
                else tuple(reversed((run_once(o.b, args, o.seconds), run_once(o.a, args, o.seconds))))
            ratios.append(b[0] / a[0])
            cpu_ratios.append(b[1] / a[1] if a[1] else float("nan"))
            print(f"{i + 1:>5} {a[0]:>12.0f} {b[0]:>12.0f} {ratios[-1]:>6.2f} {a[1]:>8.3f} {b[1]:>8.3f}")
        print(f"median IOPS ratio B/A: {statistics.median(ratios):.2f}; "
              f"median CPU-per-I/O ratio B/A: {statistics.median(cpu_ratios):.2f}")
    if os.path.exists(SHM_FILE):
        os.remove(SHM_FILE)


if __name__ == "__main__":
    main()
