#!/usr/bin/env python3
"""Instructions per I/O of two ioscope builds under callgrind: the figure host noise
does not move (the same binary, inputs and environment give the same count,
whatever else the machine is doing). For each case, each build runs once under
`valgrind --tool=callgrind --separate-threads=yes`; the worker thread's instruction
count (the thread with the most) is divided by the I/Os the result counted.

    python3 benches/ab_callgrind.py OLD_BINARY NEW_BINARY [--seconds 2] [--only CASE,…]

Uses benches/ab.py's cases (null engine QD 32, tmpfs sync QD 1, …); needs valgrind
and /dev/shm.
"""

import argparse
import json
import os
import subprocess
import tempfile

from ab import CASES, SHM_FILE
from rounds import callgrind_files


def instructions_per_io(binary, args, seconds):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cg = os.path.join(d, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
               f"--callgrind-out-file={cg}", binary, "run", *args,
               "--duration", f"{seconds}s", "--warmup", "0s", "--json", out, "--quiet"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
        ir = max((n for n, _ in callgrind_files(cg + "-")), default=0)
        with open(out) as f:
            ios = json.load(f)["runs"][0]["totals"]["ios"]
        return ir / max(ios, 1), ios


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--only", default="null-qd32,tmpfs-sync-qd1")
    o = ap.parse_args()
    only = [c for c in o.only.split(",") if c]
    print(f"# A = {o.a}\n# B = {o.b}\n# callgrind, {o.seconds} s each, worker thread Ir per I/O")
    print(f"{'case':<20} {'A Ir/IO':>9} {'B Ir/IO':>9} {'B/A':>6}   (I/Os A, B)")
    for name, args in CASES.items():
        if only and name not in only:
            continue
        # Lay the target out first, outside the measurement: the first run on a
        # fresh file fills it, and that work is not per I/O.
        subprocess.run([o.a, "run", *args, "--duration", "1s", "--quiet"],
                       capture_output=True, check=True)
        a, na = instructions_per_io(o.a, args, o.seconds)
        b, nb = instructions_per_io(o.b, args, o.seconds)
        print(f"{name:<20} {a:9.1f} {b:9.1f} {b / a:6.3f}   ({na}, {nb})")
    if os.path.exists(SHM_FILE):
        os.remove(SHM_FILE)


if __name__ == "__main__":
    main()
