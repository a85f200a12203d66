#!/usr/bin/env python3
"""Trace replay timing: ioscope against fio's own replay of the same trace.

A Poisson trace (default 20 000 IOPS, 10 s, 4 KiB, 70 % reads, random offsets in a
64 MiB file on tmpfs) is written as a fio version 3 I/O log, which both tools read.
Each round replays it once with ioscope (`ioscope replay --engine sync`) and once
with fio (`fio --read_iolog`, psync), alternating, each pinned to CPU --cpu (default
1). fio cannot write an I/O log while it replays one (its write_iolog is ignored
under read_iolog), so both tools' issue times are taken the same way from outside:
`perf record` of the pread64/pwrite64 syscall-entry tracepoints (1 µs resolution,
the same small cost for both). The script matches the 4 KiB calls to the trace I/O by
I/O and measures:

- issue lag: (issue time − trace time) of each I/O, less the smallest such
  difference of the run (the clocks' offset: the I/O issued closest to its time
  counts as on time), in µs, p50 / p99 / max;
- achieved against recorded rate per whole second of the trace: the largest
  |achieved − recorded| / recorded over the seconds;
- whether the sequence of (direction, offset, length) is the trace's.

ioscope's own figures (its result's replay[].lag_us, from its nanosecond clock) are
printed beside the traced ones. Medians over the rounds.

Usage: python3 benches/replay_vs_fio.py [--rounds 5] [--seconds 10] [--iops 20000]
Needs fio on PATH and a release build (cargo build --release).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
IOSCOPE = os.path.join(HERE, "..", "target", "release", "ioscope")
FILE_BYTES = 64 << 20


def write_trace(path, target, iops, seconds, seed=1):
    rng = random.Random(seed)
    t, lines = 0.0, []
    while True:
        t += rng.expovariate(iops)
        if t >= seconds:
            break
        op = "read" if rng.random() < 0.7 else "write"
        off = rng.randrange(FILE_BYTES // 4096) * 4096
        lines.append(f"{int(t * 1e6)} {target} {op} {off} 4096")
    with open(path, "w") as f:
        f.write("fio version 3 iolog\n")
        f.write(f"0 {target} add\n0 {target} open\n")
        f.write("\n".join(lines) + "\n")
        f.write(f"{int(seconds * 1e6)} {target} close\n")
    return len(lines)


def read_log(path):
    """(time_us, op, offset, len) of each I/O line of a fio v3 log."""
    out = []
    with open(path) as f:
        next(f)
        for line in f:
            p = line.split()
            if len(p) == 5 and p[2] in ("read", "write", "trim"):
                out.append((int(p[0]), p[2], int(p[3]), int(p[4])))
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def fidelity(trace, issued, seconds):
    same = [(o, a, n) for _, o, a, n in trace] == [(o, a, n) for _, o, a, n in issued]
    n = min(len(trace), len(issued))
    t0, i0 = trace[0][0], issued[0][0]
    diff = [issued[k][0] - trace[k][0] for k in range(n)]
    base = min(diff)
    lag = [x - base for x in diff]
    worst = 0.0
    for s in range(int(seconds)):
        lo, hi = t0 + s * 1e6, t0 + (s + 1) * 1e6
        want = sum(1 for x in trace if lo <= x[0] < hi)
        got = sum(1 for x in issued if lo - t0 + i0 <= x[0] < hi - t0 + i0)
        if want:
            worst = max(worst, abs(got - want) / want)
    return {
        "same_sequence": same and len(trace) == len(issued),
        "lag_p50_us": pct(lag, 50), "lag_p99_us": pct(lag, 99), "lag_max_us": max(lag),
        "worst_second_pct": 100 * worst,
    }


PERF = ["perf", "record", "-q", "-e", "syscalls:sys_enter_pread64",
        "-e", "syscalls:sys_enter_pwrite64"]


def traced(cmd, data):
    """Runs `cmd` under perf; the (time_us, op, offset, len) of its 4 KiB preads and
    pwrites, in issue order."""
    subprocess.run(PERF + ["-o", data, "--"] + cmd, check=True, capture_output=True)
    out = subprocess.run(["perf", "script", "-i", data], check=True,
                         capture_output=True, text=True).stdout
    ios = []
    for line in out.splitlines():
        if "count: 0x00001000" not in line:
            continue
        t = float(line.split(":")[0].split()[-1])
        op = "read" if "pread64" in line else "write"
        pos = int(line.rsplit("pos: ", 1)[1], 16)
        ios.append((int(round(t * 1e6)), op, pos, 4096))
    return ios


def run_ioscope(trace, target, data, cpu):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = ["taskset", "-c", str(cpu), IOSCOPE, "replay", trace, "--target", target,
               "--size", str(FILE_BYTES), "--engine", "sync", "--json", out, "--quiet"]
        ios = traced(cmd, data)
        with open(out) as f:
            r = json.load(f)["runs"][0]
    own = r["replay"][0]["lag_us"]
    return ios, {"own_lag_p99_us": own["p99"], "own_lag_max_us": own["max"]}


def run_fio(trace, data, cpu):
    cmd = ["taskset", "-c", str(cpu), "fio", "--name=replay", "--ioengine=psync",
           f"--read_iolog={trace}", "--output-format=json"]
    return traced(cmd, data), {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--iops", type=float, default=20000)
    ap.add_argument("--cpu", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        target = os.path.join(d, "target.dat")
        with open(target, "wb") as f:
            f.truncate(FILE_BYTES)
        trace_path = os.path.join(d, "trace.iolog")
        n = write_trace(trace_path, target, a.iops, a.seconds)
        trace = read_log(trace_path)
        print(f"trace: {n} I/Os over {a.seconds} s at {a.iops:.0f} IOPS (Poisson), "
              f"rounds {a.rounds}, pinned to CPU {a.cpu}")
        rows = {"ioscope": [], "fio": []}
        for r in range(a.rounds):
            for tool in ("ioscope", "fio") if r % 2 == 0 else ("fio", "ioscope"):
                data = os.path.join(d, f"{tool}.perf")
                ios, extra = (run_ioscope(trace_path, target, data, a.cpu)
                              if tool == "ioscope" else run_fio(trace_path, data, a.cpu))
                row = fidelity(trace, ios, a.seconds)
                row.update(extra)
                rows[tool].append(row)
                print(f"round {r + 1} {tool:7}: " + ", ".join(
                    f"{k} {v}" if not isinstance(v, float) else f"{k} {v:.2f}"
                    for k, v in row.items()))
        print("\nmedians over the rounds:")
        for tool, rs in rows.items():
            keys = [k for k in rs[0] if k != "same_sequence"]
            med = {k: statistics.median(x[k] for x in rs) for k in keys}
            same = all(x["same_sequence"] for x in rs)
            print(f"{tool:7}: same sequence {same}; " + ", ".join(
                f"{k} {v:.2f}" for k, v in med.items()))


if __name__ == "__main__":
    main()
