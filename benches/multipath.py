#!/usr/bin/env python3
"""iSCSI multipath policies side by side: one tgtd LUN reached over two portals
(127.0.0.1 and 127.0.0.2, same port), 4 KiB random reads at QD 32, the round-robin
policy switching path every I/O (`rr:1`, ESXi iops=1) against every 1000 I/Os
(`rr:1000`, the ESXi default), alternating A/B in one invocation so that both see
the same machine. One path alone (`single`) is run in the same rounds for reference.

Prints per round the IOPS of each, the rr:1 / rr:1000 ratio and path 0's share of
the I/O, then the medians. CPU per I/O is ioscope's own (user+sys from wait4(2));
tgtd's CPU is counted for neither.

Usage: python3 benches/multipath.py [--rounds N] [--seconds S] [--qd N]
Needs: root, tgt (tgtd, tgtadm), a release build (cargo build --release). The LUN is
a 1 GiB file under /dev/shm, so the backing store is memory and the figures show the
paths and the protocol, not a disk.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_fio  # noqa: E402  (shared: release binary path, timed runs, tgtd start-up)


def add_portal(uri, host):
    """Adds a portal on `host` (same port) to the tgtd serving `uri`; the URI over it."""
    hostport = uri.split("/")[2]
    port = hostport.rsplit(":", 1)[1]
    control = str(1000 + int(port) % 30000)
    subprocess.run(["tgtadm", "-C", control, "--lld", "iscsi", "--op", "new", "--mode",
                    "portal", "--param", f"portal={host}:{port}"], check=True,
                   capture_output=True)
    return uri.replace(hostport, f"{host}:{port}")


def one(args, seconds, tmpdir):
    """One ioscope run: IOPS, p99, CPU us per I/O, path 0's share, device id."""
    res = os.path.join(tmpdir, "mp.json")
    cmd = [vs_fio.IOSCOPE, "run", "-q", "--duration", f"{seconds}s", "--json", res] + args
    _, cpu, _ = vs_fio.run_timed(cmd)
    with open(res) as f:
        run = json.load(f)["runs"][0]
    t = run["totals"]
    paths = run.get("paths", [])
    share = paths[0]["ios"] / max(sum(p["ios"] for p in paths), 1) if paths else 1.0
    return {"iops": t["iops"], "p99_us": t["latency_us"]["p99"],
            "cpu_us": 1e6 * cpu / max(t["ios"], 1), "share0": share,
            "device_id": paths[0].get("device_id") if paths else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--qd", type=int, default=32)
    a = ap.parse_args()
    if not os.path.exists(vs_fio.IOSCOPE):
        sys.exit(f"{vs_fio.IOSCOPE} missing: cargo build --release first")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        server, uri = vs_fio.start_tgtd(tmp)
        try:
            second = add_portal(uri, "127.0.0.2")
            base = ["--target", uri, "--rw", "randread", "--bs", "4k", "--qd", str(a.qd)]
            cases = {
                "single": base,
                "rr:1": base + ["--path", second, "--path-policy", "rr:1"],
                "rr:1000": base + ["--path", second, "--path-policy", "rr:1000"],
            }
            print(f"## iscsi-multipath: tgtd LUN (1 GiB in /dev/shm) over 127.0.0.1 and "
                  f"127.0.0.2, 4k randread, QD {a.qd}, {a.seconds} s per run")
            print(f"{'round':>5} {'single IOPS':>12} {'rr:1 IOPS':>10} {'rr:1000 IOPS':>13} "
                  f"{'rr:1/rr:1000':>13} {'p0 share rr:1':>14} {'p0 share rr:1000':>17}")
            rows = {k: [] for k in cases}
            ratios = []
            for n in range(1, a.rounds + 1):
                r = {k: one(args, a.seconds, tmp) for k, args in cases.items()}
                for k in cases:
                    rows[k].append(r[k])
                ratios.append(r["rr:1"]["iops"] / r["rr:1000"]["iops"])
                print(f"{n:>5} {r['single']['iops']:>12.0f} {r['rr:1']['iops']:>10.0f} "
                      f"{r['rr:1000']['iops']:>13.0f} {ratios[-1]:>13.2f} "
                      f"{r['rr:1']['share0']:>14.3f} {r['rr:1000']['share0']:>17.3f}")
            print(f"\nmedian rr:1 / rr:1000 = {statistics.median(ratios):.2f}")
            for k, v in rows.items():
                med = lambda f: statistics.median(x[f] for x in v)  # noqa: E731
                print(f"{k:>8}: median {med('iops'):.0f} IOPS, p99 {med('p99_us'):.0f} us, "
                      f"ioscope CPU {med('cpu_us'):.2f} us/IO")
            print(f"device_id (VPD 0x83) {rows['rr:1'][0]['device_id']}")
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
