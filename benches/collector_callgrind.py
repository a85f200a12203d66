#!/usr/bin/env python3
"""Instructions the reporting side of a run costs per interval, for two builds
(issue 29: the per-interval summaries built an hdrhistogram for every percentile).

Runs each binary under callgrind (--separate-threads) on the null engine at a fixed
rate (Poisson arrivals, sleeping between them, so the I/O count is the rate's and
the worker does not spin), alternating the builds, and prints per build the
instructions of every thread other than the worker: the collector
that closes and summarises each interval, the main thread's start-up and result.
The run-length difference (LONG − SHORT seconds) cancels start-up and the final
result, leaving the cost of the intervals in between; divided by their number it
is Ir per interval, and by the I/Os in them, Ir per I/O at that rate.

Usage: python3 benches/collector_callgrind.py OLD NEW [--rate 10000] [--rounds 2]
Needs valgrind. Writes nothing but temporary files.
"""
import argparse, os, subprocess, tempfile

from rounds import alternate, callgrind_files, med_range


def not_worker_ir(prefix):
    """Ir of every thread but the worker (the one running `run::worker::Worker`)."""
    return sum(ir for ir, text in callgrind_files(prefix + ".")
               if "run::worker::Worker" not in text)


def run(binary, rate, seconds, tmp, tag):
    prefix = os.path.join(tmp, f"cg.{tag}")
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                    f"--callgrind-out-file={prefix}.%p", binary, "run", "--target", "null:1g", "--rw", "randread", "--bs", "4k", "--qd", "1",
                    "--rate", str(rate), "--pacing", "sleep", "--duration", f"{seconds}s",
                    "--warmup", "0s", "-q"], check=True, capture_output=True)
    return not_worker_ir(prefix)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new")
    ap.add_argument("--rate", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--short", type=int, default=2)
    ap.add_argument("--long", type=int, default=6)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="collector.")

    def one(tag, r):
        b = getattr(a, tag)
        short = run(b, a.rate, a.short, tmp, f"{tag}s{r}")
        long_ = run(b, a.rate, a.long, tmp, f"{tag}l{r}")
        return (long_ - short) / (a.long - a.short)

    per = alternate(a.rounds, ["old", "new"], one, lambda tag, r, ir: print(
        f"round {r} {tag}: {ir:,.0f} Ir per interval, "
        f"{ir / a.rate:.0f} Ir per I/O at {a.rate} IOPS", flush=True))
    for tag in ("old", "new"):
        print("{}: median {:,.0f} Ir per interval (rounds {:,.0f}-{:,.0f})".format(
            tag, *med_range(per[tag])))


if __name__ == "__main__":
    main()
