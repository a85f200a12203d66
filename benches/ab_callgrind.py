#!/usr/bin/env python3
"""Instructions per I/O of two ioscope builds under callgrind: the figure host noise
does not move (the same binary, inputs and environment give the same count,
whatever else the machine is doing). For each case, each build runs once under
`valgrind --tool=callgrind --separate-threads=yes`; the worker thread's instruction
count (the thread with the most) is divided by the I/Os the result counted.

With `--marginal` (the default) each build also runs for twice the time, and the
figure is the difference of the two instruction counts over the difference of the
two I/O counts: the worker's fixed costs (start-up, the first touch of its buffers,
the final hand-over of its histograms) cancel, so the figure no longer depends on
how many I/Os a loaded machine let the run make. `--whole` gives the plain ratio.

    python3 benches/ab_callgrind.py OLD_BINARY NEW_BINARY [--seconds 2] [--only CASE,…] [--whole]

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


def instructions(binary, args, seconds):
    """The worker thread's instruction count and the I/Os the result counted."""
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
        return ir, ios


def instructions_per_io(binary, args, seconds):
    ir, ios = instructions(binary, args, seconds)
    return ir / max(ios, 1), ios


def marginal_per_io(binary, args, seconds):
    """Worker Ir per I/O from a run of `seconds` and one of twice that: the slope."""
    ir1, n1 = instructions(binary, args, seconds)
    ir2, n2 = instructions(binary, args, 2 * seconds)
    if n2 <= n1:
        raise SystemExit(f"{binary}: the longer run made no more I/Os ({n1} then {n2})")
    return (ir2 - ir1) / (n2 - n1), n2 - n1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--only", default="null-qd32,tmpfs-sync-qd1")
    ap.add_argument("--whole", action="store_true",
                    help="plain Ir / I/Os of one run instead of the two-run slope")
    o = ap.parse_args()
    only = [c for c in o.only.split(",") if c]
    per_io = instructions_per_io if o.whole else marginal_per_io
    how = "one run" if o.whole else f"slope between {o.seconds} s and {2 * o.seconds} s runs"
    print(f"# A = {o.a}\n# B = {o.b}\n# callgrind, worker thread Ir per I/O, {how}")
    print(f"{'case':<20} {'A Ir/IO':>9} {'B Ir/IO':>9} {'B/A':>6}   (I/Os A, B)")
    for name, args in CASES.items():
        if only and name not in only:
            continue
        # Lay the target out first, outside the measurement: the first run on a
        # fresh file fills it, and that work is not per I/O.
        subprocess.run([o.a, "run", *args, "--duration", "1s", "--quiet"],
                       capture_output=True, check=True)
        a, na = per_io(o.a, args, o.seconds)
        b, nb = per_io(o.b, args, o.seconds)
        print(f"{name:<20} {a:9.1f} {b:9.1f} {b / a:6.3f}   ({na}, {nb})")
    if os.path.exists(SHM_FILE):
        os.remove(SHM_FILE)


if __name__ == "__main__":
    main()
