#!/usr/bin/env python3
"""What `--metrics` costs: the same run with and without it, alternating in one
invocation so host noise hits both alike, with a scraper fetching /metrics every
second (as Prometheus would) during the runs with it. Prints IOPS per round and the
median ratio with/without per case. Issue 26's bound: under 2 % IOPS.

    python3 benches/metrics_overhead.py [--binary target/release/ioscope]
        [--rounds 5] [--seconds 5]

Cases: the null engine at QD 32 and a tmpfs file at QD 1 (sync), both pinned to
CPU 0, the scraper left to the other CPU. Needs /dev/shm and a free loopback port.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

SHM_FILE = "/dev/shm/ioscope-metrics-bench.dat"

CASES = {
    "null-qd32": ["--target", "null:1g", "--qd", "32", "--cpus", "0"],
    "tmpfs-sync-qd1": [
        "--target", SHM_FILE, "--size", "256m", "--rw", "randread", "--bs", "4k",
        "--qd", "1", "--engine", "sync", "--direct", "false", "--cpus", "0",
    ],
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def thread_cpu_ns(pid, comm):
    """CPU time (ns, from schedstat) of the process's threads named `comm`."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            base = f"/proc/{pid}/task/{tid}"
            with open(f"{base}/comm") as f:
                if f.read().strip() != comm:
                    continue
            with open(f"{base}/schedstat") as f:
                total += int(f.read().split()[0])
    except OSError:
        pass
    return total


def scrape_every_second(port, pid, stop, counts):
    """Fetches /metrics once a second until `stop` is set (bounded by the run), and
    follows the CPU time of the thread that answers."""
    while not stop.wait(1.0):
        try:
            t0 = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                counts["bytes"] += len(r.read())
                counts["scrapes"] += 1
            counts["wall_s"] += time.perf_counter() - t0
            counts["thread_ns"] = max(counts["thread_ns"], thread_cpu_ns(pid, "ioscope-metrics"))
        except OSError:
            counts["failed"] += 1


def one_run(binary, case_args, seconds, metrics):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [binary, "run", *case_args, "--duration", f"{seconds}s", "--warmup", "1s",
               "--interval", "1s", "--json", out, "--quiet"]
        counts = {"bytes": 0, "scrapes": 0, "failed": 0, "wall_s": 0.0, "thread_ns": 0}
        stop = threading.Event()
        scraper = None
        port = free_port()
        if metrics:
            cmd += ["--metrics", str(port)]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if metrics:
            scraper = threading.Thread(target=scrape_every_second,
                                       args=(port, p.pid, stop, counts))
            scraper.start()
        _, err = p.communicate(timeout=seconds + 120)
        stop.set()
        if scraper:
            scraper.join()
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {err.decode()}")
        with open(out) as f:
            doc = json.load(f)
        return doc["runs"][0]["totals"]["iops"], counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/ioscope")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    a = ap.parse_args()
    try:
        for name, args in CASES.items():
            ratios = []
            for r in range(a.rounds):
                # Alternate which goes first, so a drift in the host favours neither.
                order = [False, True] if r % 2 == 0 else [True, False]
                iops = {}
                for m in order:
                    iops[m], counts = one_run(a.binary, args, a.seconds, m)
                    if m:
                        scraped = counts
                ratio = iops[True] / iops[False]
                ratios.append(ratio)
                n = max(scraped["scrapes"], 1)
                print(f"{name} round {r + 1}: without {iops[False]:,.0f} IOPS, with "
                      f"{iops[True]:,.0f} IOPS ({scraped['scrapes']} scrapes of "
                      f"{scraped['bytes'] // n:,} bytes, {scraped['failed']} failed, "
                      f"{scraped['wall_s'] / n * 1e3:.1f} ms each, endpoint thread "
                      f"{scraped['thread_ns'] / n / 1e6:.2f} ms CPU per scrape): "
                      f"{ratio:.3f}", flush=True)
            med = statistics.median(ratios)
            print(f"{name}: median with/without {med:.3f} ({(1 - med) * 100:+.1f} % cost), "
                  f"rounds {min(ratios):.3f}-{max(ratios):.3f}", flush=True)
    finally:
        if os.path.exists(SHM_FILE):
            os.remove(SHM_FILE)


if __name__ == "__main__":
    main()
