#!/usr/bin/env python3
"""ioscope side by side with fio (Debian's package), alternating A/B in one invocation.

Each case runs fio and ioscope in turn, ROUNDS times, and prints the median of the
per-round ratios (ioscope / fio). Ratios hold on a shared, noisy machine where absolute
figures drift. CPU is measured the same way for both tools: the child's user+sys time
from wait4(2), divided by the I/Os it reported.

Usage: python3 benches/vs_fio.py [--rounds N] [--seconds S] [--only CASE,...] [--rss] [--auto]

The tmpfs cases run ioscope with its defaults (no --engine, no --direct): what a user
who types the plain command gets. --auto adds the engine-choice acceptance table: no
--engine against each explicit engine on tmpfs and on an O_DIRECT disk file.
Needs: fio on PATH, a release build (cargo build --release), /dev/shm (tmpfs), and a
directory on a disk filesystem that supports O_DIRECT (BENCH_DIR, default /var/tmp).
The nbd-* cases start `nbdkit memory` on 127.0.0.1 (Debian: nbdkit, libnbd0) and stop
it at the end; the server's CPU is counted for neither tool. --iscsi starts tgtd with a
1 GiB file LUN and compares with `iscsi-perf -m 16 -b 8 -r` (libiscsi-bin), which runs
until SIGINT: it gets the same wall-clock window and its last whole-second average is
taken (its CPU per I/O is estimated from that average).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOSCOPE = os.path.join(ROOT, "target", "release", "ioscope")
LAST_WALL_S = 0.0


# The kernel's count of read system calls (/proc/PID/io `syscr`, every thread of the
# process) over a window both tools get alike: from WINDOW[0] to WINDOW[1] seconds
# after the process started. On a page-cache file with psync/sync every I/O is one
# pread, so this is an I/O rate that neither tool computes for itself. Left in
# LAST_KERNEL_RATE (None when the window was not reached).
WINDOW = None
LAST_KERNEL_RATE = None


def descendants(pid):
    """pid and every process below it (fio forks its jobs unless --thread)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def syscr(pid):
    """Read system calls of pid and its descendants (each process's /proc/PID/io
    counts all of its threads)."""
    total = None
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/io") as f:
                for line in f:
                    if line.startswith("syscr:"):
                        total = (total or 0) + int(line.split()[1])
        except OSError:
            pass
    return total


def sample_window(pid, t0, box):
    """Reads pid's read-syscall count at t0+WINDOW[0] and t0+WINDOW[1]."""
    marks = []
    for at in WINDOW:
        time.sleep(max(0.0, t0 + at - time.monotonic()))
        n = syscr(pid)
        marks.append((time.monotonic(), n))
    (ta, na), (tb, nb) = marks
    if na is not None and nb is not None and tb > ta:
        box.append((nb - na) / (tb - ta))


def run_timed(cmd):
    """Runs cmd, returns (stdout, user+sys CPU seconds, peak RSS KiB); the process's
    wall-clock seconds are left in LAST_WALL_S."""
    global LAST_WALL_S, LAST_KERNEL_RATE
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    box, sampler = [], None
    if WINDOW is not None:
        sampler = threading.Thread(target=sample_window, args=(p.pid, t0, box), daemon=True)
        sampler.start()
    # The pipes are drained while the child runs: fio's --status-interval reports
    # outgrow a pipe's buffer in a few seconds, and a child blocked on a full pipe
    # would never exit.
    bufs = {}
    readers = [threading.Thread(target=lambda k=k, f=f: bufs.__setitem__(k, f.read()))
               for k, f in (("out", p.stdout), ("err", p.stderr))]
    for r in readers:
        r.start()
    # wait4 gives the child's own rusage (fio's forked job processes included once reaped).
    _, status, ru = os.wait4(p.pid, 0)
    for r in readers:
        r.join()
    out, err = bufs["out"], bufs["err"]
    p.returncode = os.waitstatus_to_exitcode(status)
    LAST_WALL_S = time.monotonic() - t0
    if sampler is not None:
        sampler.join()
    LAST_KERNEL_RATE = box[0] if box else None
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{err.decode()}")
    return out.decode(), ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def json_docs(text):
    """Every JSON object in text, in order (fio prints one per --status-interval)."""
    dec, i, docs = json.JSONDecoder(), 0, []
    while (j := text.find("{", i)) >= 0:
        d, i = dec.raw_decode(text, j)
        docs.append(d)
    return docs


def steady_rate(points):
    """I/Os per second between the second and the last of (unix_ms, cumulative I/Os)
    points: the first point still holds the start-up (job creation, first touches)."""
    if len(points) < 3:
        return None
    (t0, n0), (t1, n1) = points[1], points[-1]
    return (n1 - n0) / ((t1 - t0) / 1000) if t1 > t0 else None


def fio(args, seconds, status=True):
    # --status-interval makes fio print its cumulative group totals every second with
    # a wall-clock timestamp: I/Os between two of those reports over the time between
    # them is a window both tools can be measured on alike (see steady_rate).
    # status=False leaves them out (benches/peers.py: fio's CPU without that work).
    cmd = ["fio", "--output-format=json", "--time_based", f"--runtime={seconds}",
           "--group_reporting"] + (["--status-interval=1"] if status else []) + args
    out, cpu, rss = run_timed(cmd)
    # fio may print non-JSON lines before the objects; the last object is the final one.
    docs = json_docs(out)
    doc = docs[-1]
    points = [(d["timestamp_ms"], d["jobs"][0]["read"]["total_ios"] + d["jobs"][0]["write"]["total_ios"])
              for d in docs[:-1]]
    job = doc["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    iops = job["read"]["iops"] + job["write"]["iops"]
    return {"iops": iops, "ios": ios, "cpu_s": cpu, "rss_kib": rss, "wall_s": LAST_WALL_S,
            "steady_iops": steady_rate(points), "kernel_rate": LAST_KERNEL_RATE,
            "p99_us": job["read"]["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1000,
            "read_share": job["read"]["total_ios"] / max(ios, 1)}


def ioscope(args, seconds, tmpdir, fio_args=None):
    res = os.path.join(tmpdir, "r.json")
    if fio_args is not None:
        # The fio options themselves, translated by ioscope's fio front end.
        cmd = [IOSCOPE, "fio"] + fio_args + ["--time_based", f"--runtime={seconds}",
                                             "--json", res]
    else:
        cmd = [IOSCOPE, "run", "-q", "--duration", f"{seconds}s", "--json", res] + args
    _, cpu, rss = run_timed(cmd)
    with open(res) as f:
        doc = json.load(f)
    t = doc["runs"][0]["totals"]
    points, n = [], 0
    for iv in doc["runs"][0]["intervals"]:
        n += iv["ios"]
        points.append((1000 * iv["unix_s"], n))  # unix_s is the interval's end
    # The same measure as fio's: I/Os from the end of the first interval to the end of
    # the last one, over that wall-clock time.
    points.insert(0, (0, 0))
    return {"iops": t["iops"], "ios": t["ios"], "cpu_s": cpu, "rss_kib": rss,
            "wall_s": LAST_WALL_S, "steady_iops": steady_rate(points),
            "kernel_rate": LAST_KERNEL_RATE, "p99_us": t["latency_us"]["p99"], "read_share": t["read"]["ios"] / max(t["ios"], 1)}


def make_file(path, size_mib):
    if not os.path.exists(path) or os.path.getsize(path) != size_mib << 20:
        with open(path, "wb") as f:
            chunk = os.urandom(1 << 20)
            for _ in range(size_mib):
                f.write(chunk)


def start_nbdkit(own_session=True):
    """nbdkit's memory plugin on 127.0.0.1 with a free port: (process, URI).
    `own_session=False` runs it in the caller's session (benches/nbd_server_cost.py
    --same-session shows what that costs)."""
    import socket
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    p = subprocess.Popen(["nbdkit", "--foreground", "--exit-with-parent", "-i", "127.0.0.1",
                          "-p", str(port), "memory", "1G"],
                         # Its own session, as a daemon would run (nbdkit without
                         # --foreground calls setsid itself): with autogroup scheduling
                         # a server in the clients' session shares ioscope's scheduling
                         # group, so its threads' wakeups preempt ioscope's worker,
                         # while fio's job processes call setsid and escape that
                         # (docs/benchmarks.md, Session 6).
                         start_new_session=own_session)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return p, f"nbd://127.0.0.1:{port}"


def nbd_cases(uri):
    """4k at QD 16 over one and four connections to nbdkit memory, both through libnbd."""
    out = {}
    for rw in ("randread", "randwrite"):
        out[f"nbd-qd16-{rw}"] = (
            f"nbdkit memory on 127.0.0.1, 4k {rw}, QD 16, one connection",
            ["--name=n", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", "--bs=4k",
             "--iodepth=16"],
            ["--target", uri, "--rw", rw, "--bs", "4k", "--qd", "16"],
        )
    # Four connections each (nbdkit memory advertises multi-conn): fio as 4 jobs, each
    # with its own connection and QD 16; ioscope as 4 streams of QD 16 over
    # --connections 4 with its default workers (one per connection up to one per CPU).
    # Compare with nbd-qd16-randread for 4 vs 1.
    for rw in ("randread", "randwrite"):
        out[f"nbd-qd16-4conn-{rw}"] = (
            f"nbdkit memory on 127.0.0.1, 4k {rw}, QD 16 per connection, 4 connections",
            ["--name=n", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", "--bs=4k",
             "--iodepth=16", "--numjobs=4"],
            ["--target", uri, "--rw", rw, "--bs", "4k", "--qd", "16", "--streams", "4",
             "--connections", "4"],
        )
    out["translate-nbd"] = (
        "the same fio job through fio and `ioscope fio`: ioengine=nbd, 4k randread, QD 16",
        ["--name=t", "--ioengine=nbd", f"--uri={uri}", "--rw=randread", "--bs=4k",
         "--iodepth=16"],
        None,
    )
    return out


def start_tgtd(tmpdir):
    """tgtd on 127.0.0.1 (free port) with one 1 GiB LUN in a file: (process, URI)."""
    import socket
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    lun = os.path.join(tmpdir, "lun.img")
    with open(lun, "wb") as f:
        f.truncate(1 << 30)
    control = str(1000 + port % 30000)
    p = subprocess.Popen(["tgtd", "-f", "-C", control, "--iscsi", f"portal=127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    iqn = "iqn.2026-11.io.ioscope:bench"
    adm = ["tgtadm", "-C", control, "--lld", "iscsi"]
    for _ in range(100):
        if subprocess.run(adm + ["--op", "show", "--mode", "target"],
                          capture_output=True).returncode == 0:
            break
        time.sleep(0.05)
    for args in (["--op", "new", "--mode", "target", "--tid", "1", "-T", iqn],
                 ["--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1", "-b", lun],
                 ["--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL"]):
        subprocess.run(adm + args, check=True, capture_output=True)
    return p, f"iscsi://127.0.0.1:{port}/{iqn}/1"


def iscsi_perf(uri, seconds):
    """libiscsi's own benchmark, 4k random reads at 16 in flight. It runs until SIGINT
    and prints, once a second, the average since it started: it is stopped just after
    its `seconds`-th report, so that average over `seconds` whole seconds is its I/O
    count (no untallied tail whose CPU would be counted against it)."""
    import re
    import signal
    p = subprocess.Popen(["iscsi-perf", "-m", "16", "-b", "8", "-r", uri],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text, avgs = b"", []
    while len(avgs) < seconds:
        c = p.stdout.read1(4096)
        if not c:
            break
        text += c
        avgs = re.findall(rb"iops average (\d+)", text)
    p.send_signal(signal.SIGINT)
    text += p.stdout.read()
    _, _, ru = os.wait4(p.pid, 0)
    if not avgs:
        sys.exit(f"iscsi-perf printed no figures:\n{text.decode(errors='replace')}")
    iops = float(avgs[-1])
    return {"iops": iops, "ios": iops * len(avgs), "cpu_s": ru.ru_utime + ru.ru_stime}


def stop_tgtd(server, uri):
    """Stops tgtd started by start_tgtd: `tgtadm --op delete --mode system` on its
    control port, then SIGKILL by PID if it has not exited within 5 s."""
    port = int(uri.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    subprocess.run(["tgtadm", "-C", str(1000 + port % 30000), "--op", "delete", "--mode",
                    "system"], capture_output=True)
    try:
        server.wait(5)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def iscsi_vs_perf(seconds, rounds, tmpdir):
    """ioscope's iscsi engine against iscsi-perf, alternating, on one tgtd LUN."""
    server, uri = start_tgtd(tmpdir)
    try:
        print(f"\n## iscsi-qd16-randread: tgtd LUN on 127.0.0.1, 4k randread, QD 16, one session")
        print(f"{'round':>5} {'iscsi-perf IOPS':>16} {'ioscope IOPS':>13} {'ratio':>6} "
              f"{'perf CPU us/IO':>15} {'ioscope CPU us/IO':>18}")
        ratios, cpu_ratios = [], []
        for n in range(1, rounds + 1):
            f = iscsi_perf(uri, seconds)
            i = ioscope(["--target", uri, "--rw", "randread", "--bs", "4k", "--qd", "16"],
                        seconds, tmpdir)
            ratios.append(i["iops"] / f["iops"])
            fc, ic = f["cpu_s"] / max(f["ios"], 1), i["cpu_s"] / max(i["ios"], 1)
            cpu_ratios.append(ic / fc)
            print(f"{n:>5} {f['iops']:>16.0f} {i['iops']:>13.0f} {ratios[-1]:>6.2f} "
                  f"{1e6*fc:>15.3f} {1e6*ic:>18.3f}")
        print(f"median IOPS ratio ioscope/iscsi-perf: {statistics.median(ratios):.2f}; "
              f"median CPU-per-I/O ratio: {statistics.median(cpu_ratios):.2f}")
    finally:
        stop_tgtd(server, uri)


def cases(shm_file, disk_file):
    return {
        "null-qd32": (
            "null engine, 4k randread, QD 32, 1 stream, pinned to CPU 0",
            ["--name=n", "--ioengine=null", "--rw=randread", "--bs=4k", "--iodepth=32",
             "--size=1g", "--cpus_allowed=0"],
            ["--target", "null:1g", "--engine", "null", "--rw", "randread", "--bs", "4k",
             "--qd", "32", "--cpus", "0"],
        ),
        "tmpfs-qd1": (
            "tmpfs file, 4k randread, QD 1, pinned to CPU 0 (fio psync; ioscope's defaults)",
            ["--name=s", "--ioengine=psync", "--rw=randread", "--bs=4k", "--iodepth=1",
             f"--filename={shm_file}", "--invalidate=0", "--cpus_allowed=0"],
            ["--target", shm_file, "--rw", "randread", "--bs", "4k", "--qd", "1", "--cpus", "0"],
        ),
        "ext4-direct-uring-qd32": (
            "ext4 file, 4k randread, O_DIRECT, io_uring, QD 32",
            ["--name=u", "--ioengine=io_uring", "--rw=randread", "--bs=4k", "--iodepth=32",
             f"--filename={disk_file}", "--direct=1"],
            ["--target", disk_file, "--engine", "uring", "--direct", "true", "--rw",
             "randread", "--bs", "4k", "--qd", "32"],
        ),
        "translate-randrw": (
            "the same fio job through fio and through `ioscope fio`: 70/30 randrw, psync, 4 jobs, tmpfs",
            ["--name=t", "--ioengine=psync", "--rw=randrw", "--rwmixread=70", "--bs=4k",
             f"--filename={shm_file}", "--invalidate=0", "--numjobs=4", "--thread"],
            None,
        ),
        "translate-rated": (
            "the same fio job through fio and `ioscope fio`: randread, psync, 4 jobs x rate_iops=20000, tmpfs",
            ["--name=t", "--ioengine=psync", "--rw=randread", "--bs=4k",
             f"--filename={shm_file}", "--invalidate=0", "--numjobs=4", "--thread",
             "--rate_iops=20000"],
            None,
        ),
        "tmpfs-500x1": (
            "500 streams x QD 1, 4k randread, tmpfs file (the fio-xfs-500jobs shape); fio "
            "without ramp_time, ioscope's defaults",
            ["--name=iops", "--ioengine=psync", "--rw=randread", "--bs=4k", "--iodepth=1",
             f"--filename={shm_file}", "--invalidate=0", "--numjobs=500", "--thread"],
            ["--target", shm_file, "--rw", "randread", "--bs", "4k", "--qd", "1",
             "--streams", "500"],
        ),
    }


# The acceptance shapes for `--engine auto` (issue 10): (name, qd, streams).
AUTO_SHAPES = [("qd1x1", 1, 1), ("qd32x1", 32, 1), ("qd1x500", 1, 500)]


def auto_vs_explicit(shm_file, disk_file, seconds, rounds, tmpdir):
    """ioscope with no --engine against each explicit engine, same target and shape.

    Rounds alternate the order of the three runs. Prints, per case, the median IOPS
    of each and the ratio auto / best explicit (acceptance: >= 0.95), with the
    engine and reason auto gave.
    """
    targets = [("tmpfs", shm_file, []), ("ext4-direct", disk_file, ["--direct", "true"])]
    print("\n## auto-vs-explicit: 4k randread, no --engine against --engine sync and uring")
    print(f"{'case':<22} {'auto IOPS':>11} {'sync IOPS':>11} {'uring IOPS':>11} {'auto/best':>9} "
          f"{'CPU us/IO auto/sync/uring':>26} {'RSS MiB':>8}  auto's choice")
    for tname, path, extra in targets:
        for sname, qd, streams in AUTO_SHAPES:
            base = ["--target", path, "--rw", "randread", "--bs", "4k", "--qd", str(qd),
                    "--streams", str(streams)] + extra
            runs = {"auto": [], "sync": [], "uring": []}
            # CPU per I/O of the whole process (io_uring's kernel workers included):
            # unlike IOPS it barely moves when other work shares the CPUs.
            cpu = {"auto": [], "sync": [], "uring": []}
            rss = 0
            choice = ""
            order = list(runs)
            for r in range(rounds):
                for key in order[r % 3:] + order[:r % 3]:
                    args = base + ([] if key == "auto" else ["--engine", key])
                    res = os.path.join(tmpdir, "r.json")
                    cmd = [IOSCOPE, "run", "-q", "--duration", f"{seconds}s", "--json", res] + args
                    _, _, kib = run_timed(cmd)
                    with open(res) as f:
                        run = json.load(f)["runs"][0]
                    runs[key].append(run["totals"]["iops"])
                    cpu[key].append(run["cpu"]["cpu_us_per_io"])
                    if key == "auto":
                        rss = max(rss, kib)
                        choice = f"{run['engine']}: {run.get('engine_reason', '')}"
            med = {k: statistics.median(v) for k, v in runs.items()}
            best = max(med["sync"], med["uring"])
            c = "/".join(f"{statistics.median(cpu[k]):.2f}" for k in ("auto", "sync", "uring"))
            print(f"{tname + ' ' + sname:<22} {med['auto']:>11.0f} {med['sync']:>11.0f} "
                  f"{med['uring']:>11.0f} {med['auto'] / best:>9.2f} {c:>26} {rss / 1024:>8.1f}  "
                  f"{choice}")


def rss_growth(shm_file):
    """RSS of a 65 s ioscope run at 10 s and at 60 s."""
    cmd = [IOSCOPE, "run", "-q", "--duration", "65s", "--target", shm_file, "--direct",
           "false", "--rw", "randread", "--streams", "64", "--qd", "4"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)

    def rss():
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    time.sleep(10)
    at10 = rss()
    time.sleep(50)
    at60 = rss()
    p.wait()
    return at10, at60


def extras(tmpdir, seconds):
    """ioscope-only figures: issue jitter and verification cost."""
    def one(args):
        return ioscope(args, seconds, tmpdir)
    # Open-loop CPU cost per pacing mode: benches/pacing.py.
    res = os.path.join(tmpdir, "j.json")
    subprocess.run([IOSCOPE, "run", "-q", "--target", "null:1g", "--cpus", "1", "--rate", "100000",
                    "--arrival", "uniform", "--duration", f"{seconds}s", "--json", res], check=True,
                   stdout=subprocess.DEVNULL)
    with open(res) as f:
        lag = json.load(f)["runs"][0]["schedule"]["lag_us"]
    print(f"\n## jitter: issue lag against the schedule at 100k IOPS, pinned: p50 {lag['p50']:.2f} us, "
          f"p99 {lag['p99']:.2f} us, max {lag['max']:.1f} us")
    base = one(["--target", "mem:256m", "--rw", "randrw", "--qd", "32", "--cpus", "0"])
    ver = one(["--target", "mem:256m", "--rw", "randrw", "--qd", "32", "--cpus", "0", "--verify"])
    print(f"\n## verify-cost: mem engine 4k randrw QD 32, one CPU: {base['iops']:.0f} IOPS without, "
          f"{ver['iops']:.0f} with --verify ({100*ver['iops']/base['iops']:.0f}%)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--rss", action="store_true", help="also run the 65 s RSS-growth check")
    ap.add_argument("--extra", action="store_true",
                    help="also run the ioscope-only checks (jitter, verify cost)")
    ap.add_argument("--auto", action="store_true",
                    help="also compare --engine auto with each explicit engine (issue 10)")
    ap.add_argument("--iscsi", action="store_true",
                    help="also compare with iscsi-perf on a tgtd LUN (needs root, tgt, libiscsi-bin)")
    ap.add_argument("--window", default="",
                    help="A,B: also count each process's read system calls from A to B "
                         "seconds after its start (default: SECONDS/3 to SECONDS-1)")
    a = ap.parse_args()
    global WINDOW
    if a.window:
        WINDOW = tuple(float(x) for x in a.window.split(","))
    elif a.seconds >= 3:
        # From a third of the run (hundreds of fio threads take a while to all start)
        # to a second before its end.
        WINDOW = (a.seconds / 3, a.seconds - 1.0)
    if not os.path.exists(IOSCOPE):
        sys.exit("build first: cargo build --release")
    bench_dir = os.environ.get("BENCH_DIR", "/var/tmp")
    shm_file = "/dev/shm/ioscope-bench.dat"
    disk_file = os.path.join(bench_dir, "ioscope-bench.dat")
    make_file(shm_file, 1024)
    make_file(disk_file, 2048)
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# ioscope vs {fio_ver}; {os.cpu_count()} CPUs; {a.rounds} rounds x {a.seconds} s; "
          f"kernel {os.uname().release}")
    only = set(filter(None, a.only.split(",")))
    tmpdir = tempfile.mkdtemp(prefix="ioscope-bench")
    all_cases = cases(shm_file, disk_file)
    nbd_server = None
    if not only or any(k.startswith("nbd-") or k == "translate-nbd" for k in only):
        nbd_server, uri = start_nbdkit()
        all_cases.update(nbd_cases(uri))
    try:
        for key, (title, fargs, iargs) in all_cases.items():
            if only and key not in only:
                continue
            ratios, cpu_ratios, rows, wall_ratios, steady_ratios = [], [], [], [], []
            kernel_ratios = []
            for _ in range(a.rounds):
                f = fio(fargs, a.seconds)
                i = ioscope(iargs, a.seconds, tmpdir, fargs if iargs is None else None)
                ratios.append(i["iops"] / f["iops"])
                # Total I/Os over each process's whole wall-clock time: a figure neither
                # tool computes for itself, immune to how each defines its own window
                # (fio's per-job runtimes overlap imperfectly with hundreds of jobs).
                wall_ratios.append((i["ios"] / i["wall_s"]) / (f["ios"] / f["wall_s"]))
                if f["steady_iops"] and i["steady_iops"]:
                    steady_ratios.append(i["steady_iops"] / f["steady_iops"])
                if f["kernel_rate"] and i["kernel_rate"]:
                    kernel_ratios.append(i["kernel_rate"] / f["kernel_rate"])
                cpu_ratios.append((i["cpu_s"] / max(i["ios"], 1)) / (f["cpu_s"] / max(f["ios"], 1)))
                rows.append((f, i))
            print(f"\n## {key}: {title}")
            print(f"{'round':>5} {'fio IOPS':>12} {'ioscope IOPS':>13} {'ratio':>6} "
                  f"{'fio CPU us/IO':>14} {'ioscope CPU us/IO':>18} {'fio RSS MiB':>12} {'ioscope RSS MiB':>16}")
            for n, (f, i) in enumerate(rows, 1):
                print(f"{n:>5} {f['iops']:>12.0f} {i['iops']:>13.0f} {i['iops']/f['iops']:>6.2f} "
                      f"{1e6*f['cpu_s']/max(f['ios'],1):>14.3f} {1e6*i['cpu_s']/max(i['ios'],1):>18.3f} "
                      f"{f['rss_kib']/1024:>12.1f} {i['rss_kib']/1024:>16.1f}")
            if iargs is None:
                shares = [(f["read_share"], i["read_share"]) for f, i in rows]
                print("read share fio vs ioscope: " + ", ".join(f"{a*100:.1f}% vs {b*100:.1f}%" for a, b in shares))
            print(f"median IOPS ratio ioscope/fio: {statistics.median(ratios):.2f} "
                  f"(by I/Os over each process's wall-clock time: {statistics.median(wall_ratios):.2f}; "
                  f"steady window, 2nd to last 1 s report: "
                  f"{statistics.median(steady_ratios) if steady_ratios else float('nan'):.2f}); "
                  + (f"kernel-counted preads/s in the same window "
                     f"({WINDOW[0]:g}-{WINDOW[1]:g} s after start), per round: "
                     + ", ".join(f"{i['kernel_rate']:.0f} vs fio {f['kernel_rate']:.0f}"
                                 for f, i in rows if f["kernel_rate"] and i["kernel_rate"])
                     + f" -> median ratio {statistics.median(kernel_ratios):.2f}; "
                     if kernel_ratios and key.startswith("tmpfs") else "")
                  + f"median CPU-per-I/O ratio ioscope/fio: {statistics.median(cpu_ratios):.2f}; "
                  f"ioscope peak RSS {max(i['rss_kib'] for _, i in rows)/1024:.1f} MiB")
        if a.iscsi:
            iscsi_vs_perf(a.seconds, a.rounds, tmpdir)
        if a.auto:
            auto_vs_explicit(shm_file, disk_file, a.seconds, a.rounds, tmpdir)
        if a.extra:
            extras(tmpdir, a.seconds)
        if a.rss:
            at10, at60 = rss_growth(shm_file)
            print(f"\n## rss-growth: ioscope RSS at 10 s {at10/1024:.1f} MiB, at 60 s {at60/1024:.1f} MiB "
                  f"({100*(at60-at10)/at10:+.1f}%)")
    finally:
        if nbd_server is not None:
            nbd_server.terminate()
            nbd_server.wait()
        import shutil
        shutil.rmtree(tmpdir, ignore_errors=True)


if __name__ == "__main__":
    main()
