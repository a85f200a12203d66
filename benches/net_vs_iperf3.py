#!/usr/bin/env python3
"""ioscope net side by side with iperf3 (Debian's package) on loopback, alternating.

Each case (1 and 4 streams by default) runs iperf3 and ioscope in turn, ROUNDS times,
the order swapped every round, each round with a fresh one-shot server
(`iperf3 -s -1`, `ioscope net serve --once`) on its own port. Reported per round and
as the median of the per-round ratios (ioscope / iperf3):
  - throughput: what the receiver counted (iperf3 end.sum_received.bits_per_second,
    ioscope runs[0].totals.gbps);
  - CPU per byte: user+sys CPU of client and server processes together (wait4(2) on
    both children, so both tools are measured the same way, start-up included),
    divided by the payload bytes the receiver counted over the whole test.
Ratios hold on a shared, noisy machine where absolute figures drift; the absolute
figures are printed too.

With --netns (root), the same across a veth pair between two network namespaces the
script creates (10.252.0.1 and .2, MTU 1500, no qdisc) and deletes at the end: the
servers run in one, the clients in the other, so no traffic leaves them.

Usage: python3 benches/net_vs_iperf3.py [--rounds N] [--seconds S] [--streams 1,4]
       [--zerocopy] [--netns]
Needs: iperf3 on PATH and a release build (cargo build --release). Loopback (or the
script's own namespaces) only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOSCOPE = os.path.join(ROOT, "target", "release", "ioscope")


def wait_cpu(p):
    """Waits for p; returns (exit code, user+sys CPU seconds)."""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime


NS = {"server": [], "client": [], "host": "127.0.0.1"}


def netns_up():
    """Two namespaces joined by a veth pair; returns their names."""
    pid = os.getpid()
    c, s = f"ionb-c{pid}", f"ionb-s{pid}"
    cmds = [["netns", "add", c], ["netns", "add", s],
            ["-n", c, "link", "add", f"nbc{pid}", "type", "veth", "peer", "name",
             f"nbs{pid}", "netns", s],
            ["-n", c, "addr", "add", "10.252.0.1/24", "dev", f"nbc{pid}"],
            ["-n", s, "addr", "add", "10.252.0.2/24", "dev", f"nbs{pid}"],
            ["-n", c, "link", "set", f"nbc{pid}", "up"], ["-n", s, "link", "set", f"nbs{pid}", "up"],
            ["-n", c, "link", "set", "lo", "up"], ["-n", s, "link", "set", "lo", "up"]]
    for a in cmds:
        subprocess.run(["ip"] + a, check=True)
    NS.update(server=["ip", "netns", "exec", s], client=["ip", "netns", "exec", c],
              host="10.252.0.2")
    return c, s


# Write size for both tools (iperf3 -l, ioscope --bs); None: each tool's default.
LEN = [None]


def iperf3(port, streams, seconds, zerocopy):
    srv = subprocess.Popen(NS["server"] + ["iperf3", "-s", "-1", "-p", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # iperf3 -s has no ready signal; a probe connection would be taken as the one test,
    # so give it a moment to bind.
    time.sleep(0.3)
    cmd = NS["client"] + ["iperf3", "-c", NS["host"], "-p", str(port), "-t", str(seconds),
           "-P", str(streams), "-J"] + (["-Z"] if zerocopy else []) + (
               ["-l", LEN[0]] if LEN[0] else [])
    cli = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = cli.stdout.read()
    code, ccpu = wait_cpu(cli)
    _, scpu = wait_cpu(srv)
    if code != 0:
        sys.exit(f"iperf3 failed: {out[-500:]!r}")
    d = json.loads(out)
    rec = d["end"]["sum_received"]
    return {"gbps": rec["bits_per_second"] / 1e9, "bytes": rec["bytes"],
            "cpu_s": ccpu + scpu, "client_cpu_s": ccpu}


def ioscope(port, streams, seconds, zerocopy, tmp):
    srv = subprocess.Popen(NS["server"] + [IOSCOPE, "net", "serve", "--once", "-q", "--bind",
                                           f"{NS['host']}:{port}"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    srv.stdout.readline()  # "listening on …": bound and ready
    res = os.path.join(tmp, "r.json")
    cmd = NS["client"] + [IOSCOPE, "net", "run", f"{NS['host']}:{port}", "-q",
                          "--duration", f"{seconds}s",
           "--streams", str(streams), "--json", res] + (["--zerocopy"] if zerocopy else []) + (
               ["--bs", LEN[0]] if LEN[0] else [])
    cli = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    code, ccpu = wait_cpu(cli)
    _, scpu = wait_cpu(srv)
    if code != 0:
        sys.exit(f"ioscope failed: {cli.stderr.read()[-500:]!r}")
    run = json.load(open(res))["runs"][0]
    nbytes = sum(s["bytes_received"] for s in run["totals"]["streams"])
    return {"gbps": run["totals"]["gbps"], "bytes": nbytes, "cpu_s": ccpu + scpu,
            "client_cpu_s": ccpu}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--streams", default="1,4")
    ap.add_argument("--netns", action="store_true",
                    help="across a veth pair between two namespaces of the script's own")
    ap.add_argument("--zerocopy", action="store_true",
                    help="both tools send with zero copy (iperf3 -Z, ioscope --zerocopy)")
    ap.add_argument("--pin", action="store_true",
                    help="servers on CPU 1, clients on CPU 0 (taskset)")
    ap.add_argument("--len", help="the same write size for both (iperf3 -l, ioscope --bs), "
                    "e.g. 1M; default: each tool's own")
    ap.add_argument("--binary", help="the ioscope to run (default target/release/ioscope)")
    a = ap.parse_args()
    global IOSCOPE
    IOSCOPE = a.binary or IOSCOPE
    LEN[0] = a.len
    if a.pin:
        NS.update(server=["taskset", "-c", "1"], client=["taskset", "-c", "0"])
    if not os.path.exists(IOSCOPE):
        sys.exit("build first: cargo build --release")
    port = 46000 + os.getpid() % 1000
    tmp = tempfile.mkdtemp(prefix="ioscope-netbench")
    spaces = netns_up() if a.netns else ()
    try:
        cases(a, port, tmp)
    finally:
        for ns in spaces:
            subprocess.run(["ip", "netns", "del", ns])


def cases(a, port, tmp):
    print(f"{'veth between namespaces' if a.netns else 'loopback'}, {a.seconds} s per run, {a.rounds} alternating rounds"
          f"{', zero copy' if a.zerocopy else ''}{', pinned' if a.pin else ''}"
          f"{', writes of ' + a.len if a.len else ''}; load average {os.getloadavg()[0]:.1f}")
    for streams in [int(s) for s in a.streams.split(",")]:
        tput, cpub = [], []
        for r in range(a.rounds):
            order = ["iperf3", "ioscope"] if r % 2 == 0 else ["ioscope", "iperf3"]
            got = {}
            for tool in order:
                port += 1
                got[tool] = (iperf3(port, streams, a.seconds, a.zerocopy) if tool == "iperf3"
                             else ioscope(port, streams, a.seconds, a.zerocopy, tmp))
            i, o = got["iperf3"], got["ioscope"]
            ipb = i["cpu_s"] / i["bytes"] * 1e9
            opb = o["cpu_s"] / o["bytes"] * 1e9
            tput.append(o["gbps"] / i["gbps"])
            cpub.append(opb / ipb)
            print(f"  {streams} stream(s) round {r + 1}: iperf3 {i['gbps']:.2f} Gbit/s "
                  f"{ipb:.3f} CPU-s/GB | ioscope {o['gbps']:.2f} Gbit/s {opb:.3f} CPU-s/GB | "
                  f"throughput x{tput[-1]:.3f}, CPU/byte x{cpub[-1]:.3f}")
        print(f"{streams} stream(s): median throughput ratio {statistics.median(tput):.3f}, "
              f"median CPU-per-byte ratio {statistics.median(cpub):.3f} (ioscope / iperf3)")


if __name__ == "__main__":
    main()
