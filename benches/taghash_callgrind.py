#!/usr/bin/env python3
"""Instructions per I/O that the iSCSI engine's in-flight tag table costs, for two
builds (issue 29: the table hashed with SipHash, then with Fx).

Runs each binary under callgrind (--separate-threads) against one tgtd file LUN,
4 KiB randread QD 16 for SECONDS, alternating the builds for ROUNDS rounds, and
prints per build: the worker thread's Ir per I/O, and the Ir per I/O spent inside
hashing functions (SipHash/FxHash write/finish, the hash-map probe of the tag
table). Instructions do not move with host load; the I/O count does (a starved
client finds more replies per wake-up), so the hash share, which is per lookup,
is the figure to compare.

Usage: python3 benches/taghash_callgrind.py OLD_BINARY NEW_BINARY [--rounds 2] [--seconds 4]
Needs root (tgtd), valgrind. Loopback only.
"""
import argparse, glob, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_fio  # noqa: E402  (tgtd set-up and tear-down)
from rounds import alternate, med_range  # noqa: E402

HASH = re.compile(r"sip::Hasher|hash_one|FxHasher|rustc_hash|hashbrown::")


def thread_ir(outfile):
    """(total Ir, Ir in hashing functions) of one callgrind thread file."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", outfile],
                         capture_output=True, text=True).stdout
    total, hashed = 0, 0
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \(.*?\)\s+(?:\*\s+)?(\S.*)$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        # "file.rs:function [binary]": match the function only
        fn = re.sub(r"\s*\[[^\]]*\]$", "", m.group(2)).split(".rs:", 1)[-1]
        if "PROGRAM TOTALS" in fn:
            total = ir
            continue
        if HASH.search(fn):
            hashed += ir
    return total, hashed


def one(binary, uri, seconds, tmp, tag):
    prefix = os.path.join(tmp, f"cg.{tag}")
    res = os.path.join(tmp, f"r.{tag}.json")
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                    f"--callgrind-out-file={prefix}.%p", binary, "run", "--target", uri,
                    "--rw", "randread", "--bs", "4k", "--qd", "16", "--duration",
                    f"{seconds}s", "--warmup", "0s", "--json", res, "-q"],
                   check=True, capture_output=True)
    ios = json.load(open(res))["runs"][0]["totals"]["ios"]
    best = (0, 0)
    for f in glob.glob(prefix + ".*-*"):
        t = thread_ir(f)
        if t[0] > best[0]:
            best = t  # the worker is the busiest thread
    for f in glob.glob(prefix + ".*"):
        os.unlink(f)
    return ios, best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=4)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="taghash.")
    server, uri = vs_fio.start_tgtd(tmp)
    try:
        def round_(tag, r):
            ios, (ir, hashed) = one(getattr(a, tag), uri, a.seconds, tmp, f"{tag}{r}")
            return ios, ir / ios, hashed / ios

        rows = alternate(a.rounds, ["old", "new"], round_, lambda tag, r, x: print(
            f"round {r} {tag}: {x[0]} I/Os, worker {x[1]:.0f} Ir/IO, "
            f"hashing {x[2]:.0f} Ir/IO", flush=True))
    finally:
        vs_fio.stop_tgtd(server, uri)
    for tag in ("old", "new"):
        print("{}: hashing {:.0f} Ir/IO (rounds {:.0f}-{:.0f}), ".format(
            tag, *med_range([x[2] for x in rows[tag]]))
            + "worker {:.0f} Ir/IO (rounds {:.0f}-{:.0f})".format(
            *med_range([x[1] for x in rows[tag]])))


if __name__ == "__main__":
    main()
