#!/usr/bin/env python3
"""What one NBD I/O costs the client AND the server, fio against ioscope.

`vs_fio.py` measures each client's own CPU; on this 2-CPU box the client and
`nbdkit` share the CPUs, so a client that makes the server work harder per I/O gets
fewer IOPS at the same CPU per I/O of its own. This script runs fio (`--ioengine=nbd`)
and ioscope alternately against one `nbdkit memory` on 127.0.0.1 and reports, per
round and tool, load-robust measures:

- client and nbdkit CPU per I/O (utime+stime from /proc/PID/stat, nbdkit's delta
  over the client's run, exited threads included);
- context switches per I/O (voluntary and not) of every thread of each process,
  sampled twice inside the run (per-thread counters vanish when a thread exits);
- with `--strace`, nbdkit's system calls per I/O (`strace -f -c` attached for one
  extra run per tool: slower, so only the counts per I/O mean anything).

    python3 benches/nbd_server_cost.py [--rw randread] [--conns 1] [--rounds 3]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import start_nbdkit  # noqa: E402  (one way to start the server)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOSCOPE = os.path.join(ROOT, "target", "release", "ioscope")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """utime+stime of a whole process (exited threads included), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ctxt(pid):
    """{tid: (voluntary, nonvoluntary)} of every live thread of pid (and children)."""
    out = {}
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(c) for c in f.read().split()]
    except OSError:
        pass
    for p in pids:
        for st in glob.glob(f"/proc/{p}/task/*/status"):
            v = n = 0
            try:
                with open(st) as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            v = int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches"):
                            n = int(line.split()[1])
            except OSError:
                continue
            out[st.split("/")[4]] = (v, n)
    return out


def ctxt_delta(a, b):
    v = sum(b[t][0] - a[t][0] for t in b if t in a)
    n = sum(b[t][1] - a[t][1] for t in b if t in a)
    return v, n, sum(1 for t in b if t in a)


def client_cmd(tool, uri, rw, conns, seconds, res):
    if tool == "fio":
        return ["fio", "--output-format=json", "--time_based", f"--runtime={int(seconds * 1000)}ms",
                "--group_reporting", "--name=n", "--ioengine=nbd", f"--uri={uri}",
                f"--rw={rw}", "--bs=4k", "--iodepth=16", f"--numjobs={conns}",
                f"--output={res}"]
    cmd = [IOSCOPE, "run", "-q", "--duration", f"{int(seconds * 1000)}ms", "--json", res,
           "--target", uri, "--rw", rw, "--bs", "4k", "--qd", "16"]
    if conns > 1:
        cmd += ["--streams", str(conns), "--connections", str(conns)]
    return cmd


def ios_of(tool, res):
    with open(res) as f:
        doc = json.load(f)
    if tool == "fio":
        j = doc["jobs"][0]
        return j["read"]["total_ios"] + j["write"]["total_ios"]
    return doc["runs"][0]["totals"]["ios"]


def window(seconds):
    """(settle, length) of the context-switch sampling window inside a run of
    `seconds`: 1.5 s settle and 1 s margin at the end when the run allows, else
    30 % and 20 % of it."""
    if seconds >= 5:
        return 1.5, seconds - 2.5
    return 0.3 * seconds, 0.5 * seconds


def one(tool, server, uri, a, tmp, strace=False):
    res = os.path.join(tmp, f"{tool}.json")
    srv0 = cpu_s(server.pid)
    st = None
    if strace:
        sc = os.path.join(tmp, "strace.txt")
        st = subprocess.Popen(["strace", "-f", "-c", "-o", sc, "-p", str(server.pid)],
                              stderr=subprocess.DEVNULL)
        time.sleep(0.5)
    t0 = time.monotonic()
    p = subprocess.Popen(client_cmd(tool, uri, a.rw, a.conns, a.seconds, res),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # The context-switch window: after start-up, ending before the run does. It
    # shrinks with short runs (a fixed 1.5 s + 1 s made --seconds < 2.5 sleep a
    # negative time).
    settle_s, window_s = window(a.seconds)
    time.sleep(settle_s)
    c0, s0 = ctxt(p.pid), ctxt(server.pid)
    time.sleep(window_s)
    c1, s1 = ctxt(p.pid), ctxt(server.pid)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{tool} failed: {p.stderr.read().decode()}")
    srv = cpu_s(server.pid) - srv0
    ios = ios_of(tool, res)
    # The window's I/Os, estimated from the run's average rate.
    win_ios = ios * window_s / a.seconds
    cv, cn, cth = ctxt_delta(c0, c1)
    sv, sn, sth = ctxt_delta(s0, s1)
    out = {"iops": ios / a.seconds, "cli_us": 1e6 * (ru.ru_utime + ru.ru_stime) / ios,
           "srv_us": 1e6 * srv / ios, "cli_cs": (cv + cn) / win_ios,
           "cli_ncs": cn / win_ios, "srv_cs": (sv + sn) / win_ios, "srv_ncs": sn / win_ios,
           "cli_threads": cth, "srv_threads": sth, "wall": wall}
    if st is not None:
        st.send_signal(2)
        st.wait()
        calls = {}
        with open(sc) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                    calls[parts[-1]] = int(parts[3])
        out["strace"] = {k: v / ios for k, v in sorted(calls.items(), key=lambda x: -x[1])}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rw", default="randread")
    ap.add_argument("--conns", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("--same-session", action="store_true",
                    help="start nbdkit in this script's session (the old setup)")
    a = ap.parse_args()
    server, uri = start_nbdkit(not a.same_session)
    cols = ["iops", "cli_us", "srv_us", "cli_cs", "cli_ncs", "srv_cs", "srv_ncs"]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"# {a.rw}, 4k, QD 16, {a.conns} connection(s), nbdkit in "
                  f"{'the same' if a.same_session else 'its own'} session; load {os.getloadavg()[0]:.1f}")
            print("round tool     " + " ".join(f"{c:>9}" for c in cols) + "  threads(c/s)")
            per = {"fio": [], "ioscope": []}
            for r in range(a.rounds):
                for tool in ("fio", "ioscope") if r % 2 == 0 else ("ioscope", "fio"):
                    m = one(tool, server, uri, a, tmp)
                    per[tool].append(m)
                    print(f"{r + 1:5} {tool:8} " + " ".join(
                        f"{m[c]:9.0f}" if c == "iops" else f"{m[c]:9.2f}" for c in cols)
                        + f"  {m['cli_threads']}/{m['srv_threads']}", flush=True)
            for c in cols:
                f = statistics.median(m[c] for m in per["fio"])
                i = statistics.median(m[c] for m in per["ioscope"])
                print(f"median {c:8}: fio {f:10.2f}  ioscope {i:10.2f}  ratio {i / f if f else 0:.2f}")
            print(f"# load at end {os.getloadavg()[0]:.1f}")
            if a.strace:
                for tool in ("fio", "ioscope"):
                    m = one(tool, server, uri, a, tmp, strace=True)
                    top = ", ".join(f"{k} {v:.2f}" for k, v in list(m["strace"].items())[:8])
                    print(f"nbdkit syscalls per I/O under {tool} ({m['iops']:.0f} IOPS traced): {top}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
