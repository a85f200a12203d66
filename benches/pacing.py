#!/usr/bin/env python3
"""What open-loop scheduling costs: CPU per I/O with --rate against closed loop, per
pacing mode, with the issue jitter each mode buys, and fio's CPU per I/O at the same
rate for context. Null engine, worker pinned to CPU 0, rounds alternate so drift on a
shared host hits every case alike; medians are printed.

    cargo build --release && python3 benches/pacing.py [--rounds 3] [--seconds 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOSCOPE = os.path.join(ROOT, "target", "release", "ioscope")
RATES = [1000, 100000, 1000000]
MODES = ["spin", "hybrid", "sleep"]


def cpu_of(cmd):
    """Runs cmd; returns the child's user+sys CPU seconds."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    out = p.stdout.read().decode()
    err = p.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {' '.join(cmd)}\n{err}")
    return out, ru.ru_utime + ru.ru_stime


def ioscope(args, seconds, res):
    if "--target" not in args:
        args = ["--target", "null:1g"] + args
    _, cpu = cpu_of([IOSCOPE, "run", "-q", "--cpus", "0",
                     "--duration", f"{seconds}s", "--json", res] + args)
    with open(res) as f:
        r = json.load(f)["runs"][0]
    ios = r["totals"]["ios"]
    s = r.get("schedule") or {}
    p = s.get("pacing") or {}
    # The process's own CPU (wait4) per I/O: everything, startup included.
    out = {"iops": r["totals"]["iops"], "cpu_us": 1e6 * cpu / max(ios, 1),
           "run_cpu_us": r["cpu"]["cpu_us_per_io"]}
    if s:
        out.update(lag_p50=s["lag_us"]["p50"], lag_p99=s["lag_us"]["p99"],
                   lag_max=s["lag_us"]["max"], achieved_pct=s["achieved_pct"],
                   excl_spin_us=p.get("cpu_us_per_io_excl_spin", 0.0),
                   margin_us=p.get("margin_us", 0.0))
    return out


def fio(rate, seconds):
    out, cpu = cpu_of(["fio", "--output-format=json", "--name=r", "--ioengine=null",
                       "--size=1g", "--rw=randread", "--bs=4k", "--iodepth=32",
                       f"--rate_iops={rate}", "--rate_process=poisson", "--cpus_allowed=0",
                       "--time_based", f"--runtime={seconds}"])
    job = json.loads(out[out.index("{"):])["jobs"][0]
    ios = job["read"]["total_ios"]
    return {"iops": job["read"]["iops"], "cpu_us": 1e6 * cpu / max(ios, 1)}


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=2)
    a = ap.parse_args()
    if not os.path.exists(IOSCOPE):
        sys.exit("build first: cargo build --release")
    tmp = tempfile.mkdtemp(prefix="ioscope-pacing")
    res = os.path.join(tmp, "r.json")
    shm = "/dev/shm/ioscope-pacing.dat"
    with open(shm, "wb") as f:
        f.write(os.urandom(1 << 20) * 256)
    cases = {
        "closed QD32": ["--qd", "32"],
        "closed QD1": ["--qd", "1"],
        "saturated QD32": ["--qd", "32", "--rate", "1000000000"],
        "saturated QD1": ["--qd", "1", "--rate", "1000000000"],
        "tmpfs sync closed": ["--target", shm, "--engine", "sync", "--qd", "1"],
        "tmpfs sync saturated": ["--target", shm, "--engine", "sync", "--qd", "1",
                                 "--rate", "1000000000"],
        "tmpfs uring closed": ["--target", shm, "--qd", "32"],
        "tmpfs uring saturated": ["--target", shm, "--qd", "32", "--rate", "1000000000"],
    }
    for rate in RATES:
        for mode in MODES:
            cases[f"{rate} {mode}"] = ["--qd", "32", "--rate", str(rate), "--pacing", mode]
        cases[f"{rate} jitter"] = ["--qd", "32", "--rate", str(rate), "--arrival", "uniform"]
    got = {k: [] for k in cases}
    fio_got = {r: [] for r in RATES}
    for _ in range(a.rounds):
        for k, args in cases.items():
            got[k].append(ioscope(args, a.seconds, res))
        for rate in RATES:
            fio_got[rate].append(fio(rate, a.seconds))
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# open-loop cost: null engine, CPU 0, {a.rounds} rounds x {a.seconds} s, medians; "
          f"{fio_ver}; kernel {os.uname().release}")
    c32 = med(got["closed QD32"], "run_cpu_us")
    c1 = med(got["closed QD1"], "run_cpu_us")
    print("\n## scheduling work without waiting (rate far above capacity: always behind)")
    for qd, closed in (("32", c32), ("1", c1)):
        s = med(got[f"saturated QD{qd}"], "run_cpu_us")
        print(f"null, QD {qd}: closed loop {closed:.4f} us CPU/IO, open loop saturated {s:.4f} us "
              f"({s/closed:.2f}x)")
    for kind in ("tmpfs sync", "tmpfs uring"):
        c = med(got[f"{kind} closed"], "run_cpu_us")
        s = med(got[f"{kind} saturated"], "run_cpu_us")
        qd = "1" if "sync" in kind else "32"
        print(f"{kind}, QD {qd}: closed loop {c:.4f} us CPU/IO, open loop saturated {s:.4f} us "
              f"({s/c:.2f}x)")
    print("\n## at a rate: CPU per I/O over the measured time, per pacing mode (Poisson)")
    print(f"{'rate':>8} {'mode':>7} {'achieved%':>9} {'CPU us/IO':>10} {'x closed32':>10} "
          f"{'excl spin':>10} {'x closed1':>10} {'lag p50 us':>10} {'lag p99 us':>10} "
          f"{'margin us':>9}")
    for rate in RATES:
        for mode in MODES:
            rows = got[f"{rate} {mode}"]
            cpu = med(rows, "run_cpu_us")
            ex = med(rows, "excl_spin_us")
            print(f"{rate:>8} {mode:>7} {med(rows, 'achieved_pct'):>9.1f} {cpu:>10.3f} "
                  f"{cpu/c32:>10.1f} {ex:>10.3f} {ex/c1:>10.2f} {med(rows, 'lag_p50'):>10.2f} "
                  f"{med(rows, 'lag_p99'):>10.2f} {med(rows, 'margin_us'):>9.1f}")
        f = med(fio_got[rate], "cpu_us")
        h = med(got[f"{rate} spin"], "cpu_us")
        sl = med(got[f"{rate} sleep"], "cpu_us")
        print(f"{rate:>8} {'fio':>7} {100*med(fio_got[rate], 'iops')/rate:>9.1f} {f:>10.3f}   "
              f"(whole process; ioscope whole process: spin {h:.3f}, {h/f:.2f}x fio; "
              f"sleep {sl:.3f}, {sl/f:.2f}x fio)")
    print("\n## jitter: uniform arrivals, default pacing (spin), issue lag against the schedule")
    for rate in RATES:
        rows = got[f"{rate} jitter"]
        print(f"{rate:>8} IOPS: lag p50 {med(rows, 'lag_p50'):.2f} us, p99 {med(rows, 'lag_p99'):.2f} us, "
              f"max {med(rows, 'lag_max'):.1f} us")


if __name__ == "__main__":
    try:
        main()
    finally:
        if os.path.exists("/dev/shm/ioscope-pacing.dat"):
            os.remove("/dev/shm/ioscope-pacing.dat")
