#!/usr/bin/env python3
"""What `--metrics` costs, in the figure host noise does not move: instructions per
I/O of the whole process (every thread: workers, collector, the endpoint) under
callgrind, the same run without and with `--metrics`, with a scraper fetching
/metrics every 50 ms of wall time during the run with it (under callgrind the
process runs ~50x slower, so that is about one scrape per second of native
time). Prints Ir per I/O of each and the ratio; issue 26's bound is 2 %.

    python3 benches/metrics_callgrind.py [--binary target/release/ioscope]
        [--seconds 2] [--scrape-ms 50]

Cases: benches/metrics_overhead.py's (null engine QD 32, tmpfs sync QD 1).
Needs valgrind, /dev/shm and a free loopback port.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.request

from metrics_overhead import CASES, SHM_FILE, free_port


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
        if metrics_port:
            t = threading.Thread(target=scrape_until, args=(metrics_port, stop, scrape_s, count))
            t.start()
        _, err = p.communicate()
        stop.set()
        if t:
            t.join()
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err[-2000:]}")
        ir = 0
        for f in glob.glob(cg + "-*"):
            with open(f) as fh:
                m = re.search(r"^summary: (\d+)", fh.read(), re.M)
            ir += int(m.group(1)) if m else 0
        with open(out) as f:
            ios = json.load(f)["runs"][0]["totals"]["ios"]
        return ir / max(ios, 1), ios, count[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/ioscope")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--scrape-ms", type=int, default=50)
    o = ap.parse_args()
    print(f"# {o.binary}: callgrind, {o.seconds} s each, all threads' Ir per I/O")
    print(f"{'case':<16} {'without':>9} {'with':>9} {'ratio':>7}   (I/Os without, with; scrapes)")
    for name, args in CASES.items():
        subprocess.run([o.binary, "run", *args, "--duration", "1s", "--quiet"],
                       capture_output=True, check=True)
        a, na, _ = ir_per_io(o.binary, args, o.seconds)
        b, nb, scrapes = ir_per_io(o.binary, args, o.seconds, free_port(), o.scrape_ms / 1000)
        print(f"{name:<16} {a:9.1f} {b:9.1f} {b / a:7.4f}   ({na}, {nb}; {scrapes})")
    if os.path.exists(SHM_FILE):
        os.remove(SHM_FILE)


if __name__ == "__main__":
    time.sleep(0)
    main()
