#!/usr/bin/env python3
"""ioscope's smb engine side by side with Samba's smbclient on the same file, alternating.

Starts a private smbd on 127.0.0.1 (a free port, its own configuration, state and
tdbsam user in a temporary directory, SMB3 only, signing mandatory: the test suite's
server, tests/it/net_smb.rs), puts a file of pseudo-random bytes on the share (read
once locally, so the server reads it from the page cache), then runs ROUNDS rounds,
the order swapped every round:
  - smbclient -c 'get FILE /dev/null': its own figure ("getting file ... (N KiloBytes/sec)"),
    which counts the transfer only, not connecting and logging on;
  - ioscope run -t smb://... --rw read --bs BS --qd QD --passes 1: one pass over the
    file, runs[0].totals (bytes over the measured time: the transfer only as well).
CPU per byte: user+sys of each client process (wait4), start-up and logon included,
over the bytes read. Prints each round and the median of the per-round ratios
(ioscope / smbclient), with the load average at start and end: ratios hold on a
shared machine where absolute figures drift.

With --randread, instead: 8 KiB random reads at QD 32 for --seconds, IOPS and ioscope's
CPU per I/O (smbclient has no random-read mode).

Usage: python3 benches/smb_vs_smbclient.py [--rounds N] [--size-mib 256] [--bs 1m]
       [--qd 1,8] [--randread] [--seconds 10]
Needs: root, Debian's samba and smbclient, and a release build with the smb feature
(cargo build --release --features smb). Loopback only.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOSCOPE = os.environ.get("IOSCOPE_BIN", os.path.join(ROOT, "target", "release", "ioscope"))
USER = "root"
PASSWORD = "Ioscope-Smb-Bench-Pw-51c2"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_smbd(d):
    """smbd with a private configuration in d; returns (process, port)."""
    for sub in ["private", "lock", "state", "cache", "pid", "ncalrpc", "share", "log"]:
        os.mkdir(os.path.join(d, sub))
    port = free_port()
    conf = os.path.join(d, "smb.conf")
    p = lambda s: os.path.join(d, s)
    with open(conf, "w") as f:
        f.write(f"""[global]
  smb ports = {port}
  interfaces = 127.0.0.1
  bind interfaces only = yes
  private dir = {p('private')}
  lock directory = {p('lock')}
  state directory = {p('state')}
  cache directory = {p('cache')}
  pid directory = {p('pid')}
  ncalrpc dir = {p('ncalrpc')}
  log file = {p('log')}/log.%m
  passdb backend = tdbsam:{p('private')}/passdb.tdb
  server role = standalone server
  server min protocol = SMB3
  server signing = mandatory
  server multi channel support = yes
  disable netbios = yes
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  log level = 0
[share]
  path = {p('share')}
  read only = no
""")
    add = subprocess.run(["smbpasswd", "-c", conf, "-a", "-s", USER],
                         input=f"{PASSWORD}\n{PASSWORD}\n", text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if add.returncode != 0:
        sys.exit("smbpasswd -a failed")
    out = open(os.path.join(d, "smbd.out"), "w")
    smbd = subprocess.Popen(["smbd", "--foreground", "--no-process-group", "--debug-stdout",
                             "-s", conf], stdout=out, stderr=out, start_new_session=True)
    t0 = time.time()
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if smbd.poll() is not None or time.time() - t0 > 15:
                sys.exit("smbd did not start")
            time.sleep(0.05)
    return smbd, port


def wait_cpu(p):
    """Waits for p; returns (exit code, user+sys CPU seconds)."""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime


def smbclient(port, authfile, name):
    """(MB/s as smbclient counts it, CPU seconds)."""
    p = subprocess.Popen(["smbclient", f"//127.0.0.1/share", "-p", str(port), "-A", authfile,
                          "-m", "SMB3", "-c", f"get {name} /dev/null"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    code, cpu = wait_cpu(p)
    m = re.search(r"\(([\d.]+) KiloBytes/sec\)", out)
    if code != 0 or not m:
        sys.exit(f"smbclient failed ({code}): {out[-500:]}")
    return float(m.group(1)) * 1024 / 1e6, cpu


def ioscope(port, name, args, d):
    """(runs[0] of the result, CPU seconds)."""
    out = os.path.join(d, "r.json")
    env = dict(os.environ, IOSCOPE_SMB_PASSWORD=PASSWORD)
    uri = f"smb://{USER}@127.0.0.1:{port}/share/{name}"
    p = subprocess.Popen([IOSCOPE, "run", "-t", uri] + args + ["-q", "--json", out],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    code, cpu = wait_cpu(p)
    if code != 0:
        sys.exit(f"ioscope failed ({code}): {err[-800:]}")
    with open(out) as f:
        return json.load(f)["runs"][0], cpu


def size_bytes(s):
    m = re.fullmatch(r"(\d+)([kmg]?)", s.lower())
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2)]


def smbd_cpu(smbd):
    """CPU seconds of smbd so far: the main process and its reaped children (each
    connection is served by a child the main process forks and waits for)."""
    f = open(f"/proc/{smbd.pid}/stat").read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return sum(int(x) for x in f[11:15]) / tick


def server_cpu_of(smbd, run):
    """Runs run(); returns (its result, smbd's CPU seconds meanwhile). Waits until the
    connection's child has been reaped (its time lands in the parent's)."""
    children = lambda: set(open(f"/proc/{smbd.pid}/task/{smbd.pid}/children").read().split())
    idle = children()
    before = smbd_cpu(smbd)
    out = run()
    t0 = time.time()
    while children() - idle and time.time() - t0 < 10:
        time.sleep(0.05)
    return out, smbd_cpu(smbd) - before


def prepare(d, size_mib):
    """smbd in d with a file of size_mib MiB of pseudo-random bytes on its share, read
    once locally (so the server reads it from the page cache), and an smbclient
    authentication file: (smbd, port, file name, auth file)."""
    smbd, port = start_smbd(d)
    name = "bench.dat"
    path = os.path.join(d, "share", name)
    with open(path, "wb") as f:
        for _ in range(size_mib):
            f.write(os.urandom(1 << 20))
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
    authfile = os.path.join(d, "auth")
    fd = os.open(authfile, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, f"username = {USER}\npassword = {PASSWORD}\n".encode())
    os.close(fd)
    return smbd, port, name, authfile


def stop(smbd):
    """Stops smbd (by its PID, which the connections' children follow)."""
    smbd.terminate()
    try:
        smbd.wait(10)
    except subprocess.TimeoutExpired:
        smbd.kill()
        smbd.wait()


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--bs", default="1m")
    ap.add_argument("--qd", default="1,8", help="comma list of ioscope queue depths")
    ap.add_argument("--randread", action="store_true",
                    help="8 KiB random reads at QD 32 instead (ioscope alone)")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--serve", action="store_true",
                    help="only start the server and the file, print how to reach them, wait"
                         " for Ctrl-C (for profiling by hand)")
    a = ap.parse_args()
    # Stopped by a signal (also when started in the background, where SIGINT is
    # ignored): still stop smbd and remove the directory.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.geteuid() != 0:
        sys.exit("needs root (smbd switches to the session's user)")
    for tool in ["smbd", "smbclient", "smbpasswd"]:
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (Debian packages samba, smbclient)")
    if not os.path.exists(IOSCOPE):
        sys.exit("build first: cargo build --release --features smb")
    d = tempfile.mkdtemp(prefix="smbbench-")
    smbd = None
    try:
        smbd, port, name, authfile = prepare(d, a.size_mib)
        total = a.size_mib << 20
        print(f"# smbd {subprocess.run(['smbd', '--version'], capture_output=True, text=True).stdout.strip()}"
              f" on 127.0.0.1:{port}, {a.size_mib} MiB file, load average {loadavg()} at start")
        if a.serve:
            print(f"IOSCOPE_SMB_PASSWORD={PASSWORD} smb://{USER}@127.0.0.1:{port}/share/{name}"
                  f"  smbclient //127.0.0.1/share -p {port} -A {authfile}", flush=True)
            try:
                smbd.wait()
            except KeyboardInterrupt:
                pass
            return
        if a.randread:
            for r in range(a.rounds):
                run, cpu = ioscope(port, name, ["--rw", "randread", "--bs", "8k", "--qd", "32",
                                                "--duration", f"{a.seconds}s"], d)
                t = run["totals"]
                ios = t["read"]["ios"]
                print(f"round {r + 1}: {t['iops']:,.0f} IOPS, {cpu / ios * 1e6:.1f} µs CPU per I/O"
                      f" (start-up included), load {loadavg()}")
            return
        qds = [int(q) for q in a.qd.split(",")]
        ratios = {q: [] for q in qds}
        for r in range(a.rounds):
            line = []
            order = ["smbclient", "ioscope"] if r % 2 == 0 else ["ioscope", "smbclient"]
            got = {}
            for who in order:
                if who == "smbclient":
                    (mbps, cpu), srv = server_cpu_of(smbd, lambda: smbclient(port, authfile, name))
                    got[who] = (mbps, cpu, srv)
                else:
                    for q in qds:
                        args = ["--rw", "read", "--bs", a.bs, "--qd", str(q), "--passes", "1"]
                        (run, cpu), srv = server_cpu_of(smbd, lambda: ioscope(port, name, args, d))
                        if q == qds[0] and r == 0:
                            smb = run.get("smb", [{}])[0]
                            print("# ioscope negotiated: " + ", ".join(
                                f"{k} {smb.get(k)}" for k in ["dialect", "signing_algorithm",
                                                              "encryption_cipher", "credits_requested",
                                                              "credits_granted", "max_read_bytes"]))
                        got[q] = (run["totals"]["mbps"], cpu, srv)
            ms = lambda c: c / total * (1 << 20) * 1e3
            ref, ref_cpu, ref_srv = got["smbclient"]
            line.append(f"smbclient {ref:7.1f} MB/s (CPU/MiB ms: client {ms(ref_cpu):.2f}, smbd {ms(ref_srv):.2f})")
            for q in qds:
                mbps, cpu, srv = got[q]
                ratios[q].append(mbps / ref)
                line.append(f"ioscope QD {q} {mbps:7.1f} MB/s (client {ms(cpu):.2f}, smbd {ms(srv):.2f})"
                            f" = {mbps / ref:.2f}x")
            print(f"round {r + 1} (load {loadavg()}): " + "; ".join(line))
        for q in qds:
            rs = ratios[q]
            print(f"QD {q}: median ratio {statistics.median(rs):.2f}x (min {min(rs):.2f}, max {max(rs):.2f})")
        print(f"# load average {loadavg()} at end")
    finally:
        if smbd is not None:
            stop(smbd)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
