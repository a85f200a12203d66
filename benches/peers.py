#!/usr/bin/env python3
"""ioscope against the peer tool of each protocol, the lead figure being the one host
noise cannot hide: the client's CPU per unit of work (issue 29).

Each shape runs ioscope and its peer in turn, ROUNDS times, the order swapped every
round (ioscope, peer; peer, ioscope; ...). The servers run on CPU 1 (every thread of
theirs, set by PID; their later threads and forked children inherit it), the clients
on CPU 0 (this script pins itself there, so every client it starts is too). Printed
per shape:
  - client CPU per unit: user+sys of the client process from wait4(2) (fio's forked
    job processes included once reaped), start-up included for both tools, over the
    I/Os (MiB, GB) it reported; the medians and the median of per-round ratios
    ioscope/peer (below 1: ioscope spends less);
  - throughput: the medians with the round-to-round range (min-max), and the median
    of per-round ratios ioscope/peer (above 1: ioscope moves more);
  - with --callgrind, instructions per I/O of the whole client under callgrind (all
    threads, fio's children too) for the I/O shapes whose peer valgrind can run: the
    difference between a long and a short run over the difference in I/Os, so the
    start-up of either tool cancels out.
The load average is printed at the start and the end of every shape: CPU per I/O holds
on a shared machine where throughput drifts. The script runs in a session of its own
(it starts itself again under setsid(1)), so with autogroup scheduling its clients
form one scheduling group, as each fio job does (fio calls setsid), rather than
sharing the group of the shell that started it.

Shapes (each selectable by flag; none: all of them):
  --nbd     4 KiB randread and randwrite, QD 16, one connection to `nbdkit memory`,
            against fio ioengine=nbd
  --iscsi   4 KiB randread, QD 16, one session to a tgtd file LUN, against iscsi-perf
  --smb     1 MiB sequential read, QD 4, one pass over a 1 GiB file on a private
            smbd (127.0.0.1, its own port), against `smbclient get` (CPU per MiB)
  --net     `ioscope net` 1 and 4 streams against iperf3 on loopback (CPU per GB:
            the client alone; client+server printed too)
  --tmpfs   4 KiB randread QD 1 on a tmpfs file against fio psync
  --null    the null engine, QD 32, against fio's null engine

Usage: python3 benches/peers.py [--nbd] [--iscsi] ... [--rounds 5] [--seconds 5]
       [--quick] [--callgrind] [--binary PATH]
--quick: one round of 2 s (a smoke test of the script and the servers).
Needs root (tgtd, smbd), fio, nbdkit, tgt, libiscsi-bin, samba, smbclient, iperf3,
valgrind for --callgrind, and a release build with the smb feature. Loopback only.
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_vs_iperf3  # noqa: E402  (iperf3 and `ioscope net` runs, one-shot servers)
import smb_vs_smbclient as smb  # noqa: E402  (private smbd, smbclient and smb:// runs)
import vs_fio  # noqa: E402  (timed runs, fio, nbdkit and tgtd, iscsi-perf)
from rounds import alternate, callgrind_files, med_range  # noqa: E402

CLIENT_CPU, SERVER_CPU = 0, 1
SHM_FILE = "/dev/shm/ioscope-peers.dat"


def pin_tree(pid, cpu):
    """Every thread of pid and of its descendants onto `cpu`."""
    for p in vs_fio.descendants(pid):
        for t in os.listdir(f"/proc/{p}/task"):
            try:
                os.sched_setaffinity(int(t), {cpu})
            except OSError:
                pass  # the thread exited meanwhile


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def ioscope_io(args, seconds, tmp):
    """ioscope run on an I/O shape: (IOPS, I/Os, client CPU s)."""
    r = vs_fio.ioscope(args + ["--warmup", "0s"], seconds, tmp)
    return r["iops"], r["ios"], r["cpu_s"]


def fio_io(args, seconds, _tmp):
    r = vs_fio.fio(args, seconds, status=False)
    return r["iops"], r["ios"], r["cpu_s"]


class Shape:
    """One row: how to run each tool once, returning (rate, work, client CPU s)."""

    def __init__(self, name, peer, rate_unit, work_unit, ours, theirs, callgrind=None,
                 cpu_unit=("us", 1e6)):
        self.name, self.peer = name, peer
        # CPU per unit of work is printed in cpu_unit[0], CPU seconds x cpu_unit[1]
        self.cpu_unit = cpu_unit
        self.rate_unit, self.work_unit = rate_unit, work_unit
        self.ours, self.theirs = ours, theirs
        # (ioscope argv, peer argv) without the duration, for --callgrind
        self.callgrind = callgrind


def nbd_shapes(ctx):
    server, uri = vs_fio.start_nbdkit()
    ctx.servers.append(("nbdkit", server, lambda: (server.terminate(), server.wait())))
    pin_tree(server.pid, SERVER_CPU)
    out = []
    for rw in ("randread", "randwrite"):
        fargs = ["--name=n", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", "--bs=4k",
                 "--iodepth=16"]
        iargs = ["--target", uri, "--rw", rw, "--bs", "4k", "--qd", "16"]
        out.append(Shape(f"nbd 4k {rw} QD16", "fio nbd", "IOPS", "IO",
                         lambda s, t, a=iargs: ioscope_io(a, s, t),
                         lambda s, t, a=fargs: fio_io(a, s, t),
                         callgrind=(iargs, fargs)))
    return out


def iscsi_shapes(ctx):
    server, uri = vs_fio.start_tgtd(ctx.tmp)
    ctx.servers.append(("tgtd", server, lambda: vs_fio.stop_tgtd(server, uri)))
    pin_tree(server.pid, SERVER_CPU)
    iargs = ["--target", uri, "--rw", "randread", "--bs", "4k", "--qd", "16"]

    def perf(seconds, _tmp):
        r = vs_fio.iscsi_perf(uri, seconds)
        return r["iops"], r["ios"], r["cpu_s"]
    return [Shape("iscsi 4k randread QD16", "iscsi-perf", "IOPS", "IO",
                  lambda s, t: ioscope_io(iargs, s, t), perf)]


def smb_shapes(ctx):
    d = os.path.join(ctx.tmp, "smb")
    os.mkdir(d)
    # 1 GiB: a 256 MiB file is read in about 0.2 s, where start-up and the first
    # requests dominated both tools' windows and the rate swung with them.
    size_mib = 1024
    smbd, port, name, authfile = smb.prepare(d, size_mib)
    ctx.servers.append(("smbd", smbd, lambda: smb.stop(smbd)))
    pin_tree(smbd.pid, SERVER_CPU)

    def ours(_s, _t):
        run, cpu = smb.ioscope(port, name, ["--rw", "read", "--bs", "1m", "--qd", "4",
                                            "--passes", "1", "--warmup", "0s"], d)
        return run["totals"]["mibps"], run["totals"]["bytes"] / (1 << 20), cpu

    def theirs(_s, _t):
        mbps, cpu = smb.smbclient(port, authfile, name)
        return mbps * 1e6 / (1 << 20), size_mib, cpu
    return [Shape("smb 1m read QD4", "smbclient get", "MiB/s", "MiB", ours, theirs,
                  cpu_unit=("ms", 1e3))]


def net_shapes(ctx):
    # The one-shot servers start per run, on CPU 1 through taskset.
    net_vs_iperf3.NS["server"] = ["taskset", "-c", str(SERVER_CPU)]
    port = [46000 + os.getpid() % 1000]
    out = []
    for streams in (1, 4):
        def run(tool, seconds, tmp, streams=streams):
            port[0] += 1
            r = (net_vs_iperf3.iperf3(port[0], streams, seconds, False) if tool == "iperf3"
                 else net_vs_iperf3.ioscope(port[0], streams, seconds, False, tmp))
            ctx.extra.setdefault(f"net {streams} stream(s)", []).append(
                (tool, r["cpu_s"] / r["bytes"] * 1e9))
            return r["gbps"], r["bytes"] / 1e9, r["client_cpu_s"]
        out.append(Shape(f"net {streams} stream(s)", "iperf3", "Gbit/s", "GB",
                         lambda s, t, run=run: run("ioscope", s, t),
                         lambda s, t, run=run: run("iperf3", s, t), cpu_unit=("ms", 1e3)))
    return out


def tmpfs_shapes(ctx):
    vs_fio.make_file(SHM_FILE, 1024)
    ctx.cleanup.append(lambda: os.path.exists(SHM_FILE) and os.remove(SHM_FILE))
    fargs = ["--name=s", "--ioengine=psync", "--rw=randread", "--bs=4k", "--iodepth=1",
             f"--filename={SHM_FILE}", "--invalidate=0"]
    iargs = ["--target", SHM_FILE, "--rw", "randread", "--bs", "4k", "--qd", "1"]
    return [Shape("tmpfs 4k randread QD1", "fio psync", "IOPS", "IO",
                  lambda s, t: ioscope_io(iargs, s, t), lambda s, t: fio_io(fargs, s, t),
                  callgrind=(iargs, fargs))]


def null_shapes(_ctx):
    fargs = ["--name=n", "--ioengine=null", "--rw=randread", "--bs=4k", "--iodepth=32",
             "--size=1g"]
    iargs = ["--target", "null:1g", "--engine", "null", "--rw", "randread", "--bs", "4k",
             "--qd", "32"]
    return [Shape("null 4k randread QD32", "fio null", "IOPS", "IO",
                  lambda s, t: ioscope_io(iargs, s, t), lambda s, t: fio_io(fargs, s, t),
                  callgrind=(iargs, fargs))]


GROUPS = {"nbd": nbd_shapes, "iscsi": iscsi_shapes, "smb": smb_shapes, "net": net_shapes,
          "tmpfs": tmpfs_shapes, "null": null_shapes}


class Ctx:
    """Servers (name, process, stop) and clean-ups to undo, scratch directory."""

    def __init__(self, tmp):
        self.tmp, self.servers, self.cleanup, self.extra = tmp, [], [], {}

    def close(self):
        for name, p, stop in reversed(self.servers):
            if p.poll() is None:
                stop()
            if p.poll() is None:
                sys.stderr.write(f"{name} (PID {p.pid}) did not stop; killing it\n")
                p.kill()
                p.wait()
        for f in self.cleanup:
            f()


def measure(shape, rounds, seconds, tmp):
    """Alternating rounds; per tool the (rate, work, cpu) of each round."""
    done = {}

    def one(who, _r):
        return (shape.ours if who == "ioscope" else shape.theirs)(seconds, tmp)

    def report(who, r, v):
        done[who] = v
        if len(done) < 2:
            return
        i, p = done.pop("ioscope"), done.pop("peer")
        u, k = shape.cpu_unit
        print(f"  {shape.name} round {r + 1}: ioscope {i[0]:,.1f} {shape.rate_unit} "
              f"{k * i[2] / i[1]:.3f} {u}/{shape.work_unit} | {shape.peer} {p[0]:,.1f} "
              f"{shape.rate_unit} {k * p[2] / p[1]:.3f} {u}/{shape.work_unit} "
              f"(load {loadavg()})", flush=True)

    return alternate(rounds, ["ioscope", "peer"], one, report)


def summarize(shape, got):
    """One table row: medians, ranges and the medians of per-round ratios."""
    i, p = got["ioscope"], got["peer"]
    u, k = shape.cpu_unit
    cpu_i = [k * c / w for _, w, c in i]
    cpu_p = [k * c / w for _, w, c in p]
    rate_ratio = statistics.median(a[0] / b[0] for a, b in zip(i, p))
    cpu_ratio = statistics.median(a / b for a, b in zip(cpu_i, cpu_p))
    fmt = lambda xs: "{:,.0f} ({:,.0f}-{:,.0f})".format(*med_range(xs)) if xs[0] > 100 \
        else "{:.2f} ({:.2f}-{:.2f})".format(*med_range(xs))
    return (shape.name, shape.peer, f"{u}/{shape.work_unit}",
            f"{statistics.median(cpu_i):.3f}", f"{statistics.median(cpu_p):.3f}",
            f"{cpu_ratio:.2f}", shape.rate_unit, fmt([x[0] for x in i]),
            fmt([x[0] for x in p]), f"{rate_ratio:.2f}")


def callgrind_ir(cmd, tmp):
    """Instructions of every thread and child process of cmd under callgrind."""
    cg = os.path.join(tmp, "cg")
    for f in glob.glob(cg + "*"):
        os.remove(f)
    full = ["valgrind", "--tool=callgrind", "--trace-children=yes",
            f"--callgrind-out-file={cg}.%p"] + cmd
    p = subprocess.run(full, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(full)} failed ({p.returncode}): {p.stderr[-1500:]}")
    return sum(n for n, _ in callgrind_files(cg + ".")), p.stdout


def ir_per_io(shape, tmp, short_s=2, long_s=6):
    """(ioscope Ir/IO, peer Ir/IO): (Ir(long) - Ir(short)) / (I/Os(long) - I/Os(short))."""
    iargs, fargs = shape.callgrind
    # Not named cg*: callgrind_files reads and removes every file starting "cg.".
    res = os.path.join(tmp, "result.json")
    out = []
    for tool in ("ioscope", "fio"):
        marks = []
        for s in (short_s, long_s):
            if tool == "ioscope":
                cmd = [vs_fio.IOSCOPE, "run", "-q", "--duration", f"{s}s", "--warmup", "0s",
                       "--json", res] + iargs
                ir, _ = callgrind_ir(cmd, tmp)
                ios = json.load(open(res))["runs"][0]["totals"]["ios"]
            else:
                cmd = ["fio", "--output-format=json", "--time_based", f"--runtime={s}",
                       "--group_reporting"] + fargs
                ir, text = callgrind_ir(cmd, tmp)
                job = vs_fio.json_docs(text)[-1]["jobs"][0]
                ios = job["read"]["total_ios"] + job["write"]["total_ios"]
            marks.append((ir, ios))
        (ir0, n0), (ir1, n1) = marks
        out.append((ir1 - ir0) / max(n1 - n0, 1))
    return out


def print_table(rows, header):
    cols = list(zip(header, *rows))
    widths = [max(len(str(x)) for x in c) for c in cols]
    for r in [header] + rows:
        print("| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths)) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for g in GROUPS:
        ap.add_argument(f"--{g}", action="store_true", help=f"run the {g} shape(s)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="1 round of 2 s: a smoke test")
    ap.add_argument("--callgrind", action="store_true",
                    help="also instructions per I/O under callgrind (nbd, tmpfs, null)")
    ap.add_argument("--binary", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(vs_fio.ROOT, "target")),
        "release", "ioscope"))
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.seconds = 1, 2
    if not os.path.exists(a.binary):
        sys.exit(f"{a.binary}: build first (cargo build --release --features smb)")
    vs_fio.IOSCOPE = net_vs_iperf3.IOSCOPE = smb.IOSCOPE = a.binary
    if os.geteuid() != 0 and (a.iscsi or a.smb):
        sys.exit("--iscsi and --smb need root (tgtd, smbd)")
    if os.getsid(0) != os.getpid():
        # A session of its own, hence (with autogroup scheduling) a scheduling group
        # of its own, as fio's job processes make for themselves with setsid: the
        # clients then compete with the rest of the machine on the same footing, not
        # inside the group of whatever started the script (a shell running a build).
        os.execvp("setsid", ["setsid", "--wait", sys.executable] + sys.argv)
    os.sched_setaffinity(0, {CLIENT_CPU})
    chosen = [g for g in GROUPS if getattr(a, g)] or list(GROUPS)
    print(f"# ioscope {a.binary} against its peers; {os.cpu_count()} CPUs, clients on CPU "
          f"{CLIENT_CPU}, servers on CPU {SERVER_CPU}; {a.rounds} alternating round(s) x "
          f"{a.seconds} s; kernel {os.uname().release}; load average {loadavg()}", flush=True)
    rows, cg_rows = [], []
    tmp = tempfile.mkdtemp(prefix="ioscope-peers")
    for g in chosen:
        ctx = Ctx(tmp)
        try:
            for shape in GROUPS[g](ctx):
                print(f"## {shape.name} against {shape.peer} (load {loadavg()})", flush=True)
                rows.append(summarize(shape, measure(shape, a.rounds, a.seconds, tmp)))
                if a.callgrind and shape.callgrind:
                    i, p = ir_per_io(shape, tmp)
                    cg_rows.append((shape.name, shape.peer, f"{i:,.0f}", f"{p:,.0f}",
                                    f"{i / p:.2f}"))
            for name, per in ctx.extra.items():
                both = {t: statistics.median(x for tt, x in per if tt == t) for t, _ in per}
                print(f"  {name}: client+server CPU-s/GB, medians: "
                      + ", ".join(f"{t} {v:.3f}" for t, v in both.items()))
        finally:
            ctx.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n# load average at the end {loadavg()}; ratios are medians of per-round "
          f"ratios ioscope/peer; ranges are min-max over the rounds")
    print_table(rows, ("shape", "peer", "CPU unit", "ioscope CPU", "peer CPU", "CPU ratio",
                       "rate unit", "ioscope rate median (range)", "peer rate median (range)",
                       "rate ratio"))
    if cg_rows:
        print("\n# instructions per I/O under callgrind, whole client (all threads and "
              "children), (long run - short run) / (their I/O difference)")
        print_table(cg_rows, ("shape", "peer", "ioscope Ir/IO", "peer Ir/IO", "ratio"))


if __name__ == "__main__":
    main()
