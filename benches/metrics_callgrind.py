#!/usr/bin/env python3
"""What `--metrics` costs, in the figure host noise does not move: instructions of
the whole process (every thread: workers, collector, the endpoint) under callgrind.
Three runs per case: without `--metrics` (Ir per I/O: A); with it and no scrape (B:
the instructions beyond A's, over the run's 1 s intervals, are the feed's cost per
interval, the endpoint's start included); with it and a scraper fetching /metrics
every `--scrape-ms` of wall time (C: the instructions beyond B's per I/O, divided by
the scrapes, are one scrape's cost). Under callgrind a process runs tens of times
slower, so its intervals hold far fewer I/Os and its scrapes come far more often
than natively: the script scales instead. A native run without metrics gives the
case's I/Os per second, and the share of a second's instructions at one interval
and one scrape a second is (feed per interval + Ir per scrape) / (A x IOPS). Issue
26's bound is 2 %.

    python3 benches/metrics_callgrind.py [--binary target/release/ioscope]
        [--seconds 2] [--scrape-ms 200]

Cases: benches/metrics_overhead.py's (null engine QD 32, tmpfs sync QD 1).
Needs valgrind, /dev/shm and a free loopback port.
"""

import argparse
import json
import os
import subprocess
import tempfile
import threading
import urllib.request

from metrics_overhead import CASES, SHM_FILE, free_port
from rounds import callgrind_files


def scrape_until(port, stop, every_s, count):
    while not stop.is_set():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                r.read()
                count[0] += 1
        except OSError:
            pass
        stop.wait(every_s)


def ir_per_io(binary, args, seconds, metrics_port=None, scrape_s=0.05):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cg = os.path.join(d, "cg.out")
        extra = ["--metrics", str(metrics_port)] if metrics_port else []
        cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
               f"--callgrind-out-file={cg}", binary, "run", *args, *extra,
               "--duration", f"{seconds}s", "--warmup", "0s", "--json", out, "--quiet"]
        stop, count = threading.Event(), [0]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        t = None
        if metrics_port and scrape_s > 0:
            t = threading.Thread(target=scrape_until, args=(metrics_port, stop, scrape_s, count))
            t.start()
        _, err = p.communicate()
        stop.set()
        if t:
            t.join()
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err[-2000:]}")
        ir = sum(n for n, _ in callgrind_files(cg + "-"))
        with open(out) as f:
            ios = json.load(f)["runs"][0]["totals"]["ios"]
        return ir / max(ios, 1), ios, count[0]


def native_iops(binary, args, seconds):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        subprocess.run([binary, "run", *args, "--duration", f"{seconds}s", "--warmup", "0s",
                        "--json", out, "--quiet"], capture_output=True, check=True)
        with open(out) as f:
            return json.load(f)["runs"][0]["totals"]["iops"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/ioscope")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--scrape-ms", type=int, default=200)
    ap.add_argument("--only", default="", help="CASE,… (default: all)")
    o = ap.parse_args()
    print(f"# {o.binary}: callgrind, {o.seconds} s each, all threads' instructions")
    print(f"{'case':<16} {'A Ir/IO':>8} {'B Ir/IO':>8} {'feed/s':>7} {'Ir/scrape':>10} "
          f"{'IOPS':>9} {'scrape/s':>8} {'total':>7}")
    for name, args in CASES.items():
        if o.only and name not in o.only.split(","):
            continue
        subprocess.run([o.binary, "run", *args, "--duration", "1s", "--quiet"],
                       capture_output=True, check=True)
        a, _, _ = ir_per_io(o.binary, args, o.seconds)
        b, nb, _ = ir_per_io(o.binary, args, o.seconds, free_port(), 0)
        c, nc, scrapes = ir_per_io(o.binary, args, o.seconds, free_port(), o.scrape_ms / 1000)
        per_scrape = (c - b) * nc / max(scrapes, 1)
        iops = native_iops(o.binary, args, o.seconds)
        feed = (b - a) * nb / o.seconds / (a * iops)
        scrape_share = per_scrape / (a * iops)
        print(f"{name:<16} {a:8.1f} {b:8.1f} {feed * 100:6.2f}% {per_scrape:10.0f} "
              f"{iops:9.0f} {scrape_share * 100:7.2f}% {(feed + scrape_share) * 100:6.2f}%")
    if os.path.exists(SHM_FILE):
        os.remove(SHM_FILE)


if __name__ == "__main__":
    main()
