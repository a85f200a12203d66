#!/usr/bin/env python3
"""A soak campaign for ioscope's network initiators (issue 28, item 3; run by
scripts/soak.sh, documented in docs/methodology.md, "Soak campaigns").

For --minutes N (default 60) four verified workloads run at once, one per server
kind: NBD (nbdkit, two paths), iSCSI (tgtd, two portals), NFS (NFS-Ganesha) and SMB
(smbd). Each is 4 KiB random reads and writes, half and half, at an open-loop 300
IOPS and QD 8 on 64 MiB, with `verify = true`, a crash journal (--journal),
`--on-error continue` and a 2 s I/O timeout, so every lost connection must come back
by itself. Every server runs in a server network namespace of the script's own,
reached from a client namespace over one veth link per path (10.254.K.1 -
10.254.K.2): no traffic leaves the namespaces. The two iSCSI paths are two tgtd
processes serving the same LUN file as target 1 LUN 1, like the two controllers of
one array; the two NBD paths two nbdkit processes serving the same image.

A fault schedule drawn from --seed (printed; the same seed gives the same schedule)
injects four kinds of fault, each restored before the next begins:
- kill: a server killed with SIGKILL and started again where it was (nbdkit or tgtd
  of one path after 2-10 s; NFS-Ganesha and smbd at once);
- cut: a multipath link taken down for 5-15 s (packets vanish, nothing is reset,
  like a pulled cable), then up;
- errors: an nbdkit error burst of 2-6 s (while the error filter's error-file
  exists, 25 % of requests fail with EIO, on both paths);
- stall: a delay spike, the server stopped (SIGSTOP) for 3-8 s (2.5-3 s for the
  single-path NFS and SMB servers, whose client has 5 s from the loss to connect
  again), then resumed: every answer meanwhile comes late, past the I/O timeout.
  (This kernel has no netem qdisc, so the delay is made at the server, not on the
  link.)
The first minute is a shake-down: one fault on each workload, 10 s apart, so that
each has been through a loss and a reconnection (their one-time allocations: a
probe thread's stack, a new library context, 0.5-1.5 MiB) before the reference
sample of its RSS is taken. From 60-100 s on, a fault every 20-60 s, cycling
through the four kinds in a shuffled order; none is under way in the last QUIET_S.
A server that dies on its own (nbdkit 1.32 aborts now and then when a dead
client's connection is reset under its queued replies: docs/multipath.md) is
started again by a watchdog and reported, not counted as a failure.

At the end, each figure is printed with PASS or FAIL (exit 1 on any FAIL):
- verify: `ioscope verify --journal` finds 0 lost or corrupted acknowledged writes
  (0 mismatches of any kind) on every target, and the in-run verification 0 too;
- every fault appears in the result where it hit (the path of a multipath target,
  else the connection): a kill or a cut as a `down` and then an `up` event; a stall
  as `timeout` events (and, where the connection or path was dropped for it, the
  `down` and the `up` that followed; an SMB session is kept); an error burst as I/O
  errors in the intervals it spans. The same events are flagged, and the error
  intervals marked, on the HTML report's timeline;
- errors add up: each run ended by its duration, and its errors per interval sum to
  its total;
- RSS and open file descriptors of each ioscope process at the end (the last sample
  with no fault under way, 10 s or more before it ended) within 5 % of the first
  minute's (its last such sample); for RSS, no more than 5 % above it (a drop is
  the kernel reclaiming file-backed pages, printed).

Why four processes and not four workloads of one job file: ioscope runs one engine
per run (a workload with an engine of its own needs local targets) and a target with
several paths must be a run's only target (docs/job-file.md, docs/multipath.md), so
one process cannot hold NBD, iSCSI, NFS and SMB workloads at once, nor two multipath
targets. Each process gets a native TOML job file of its own (kept in the output).

usage: scripts/soak.sh [--minutes N] [--seed S] [--ioscope PATH] [--out DIR] [--keep]
Needs root (namespaces, tgtd, smbd) and nbdkit, tgt, nfs-ganesha (+ -vfs), rpcbind,
samba, iproute2; scripts/test.sh installs them.
"""
import argparse
import html
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# The links, one veth pair each: link K is 10.254.K.1 (client) - 10.254.K.2 (server).
LINKS = ["nbd-p0", "nbd-p1", "iscsi-p0", "iscsi-p1", "nfs", "smb"]
IQN = "iqn.2026-11.io.ioscope:soak"
SMB_USER = "root"
IO_TIMEOUT_S = 2.0
PATH_RETRY = "500ms"
RATE_IOPS = 300
QD = 8
SIZE = "64m"
SIZE_BYTES = 64 << 20
GAP_S = (20.0, 60.0)
# The shake-down minute: one fault per workload at these times (see plan_faults).
SHAKEDOWN_AT = (5.0, 15.0, 25.0, 35.0)
SERVERS = ["nbdkit p0", "nbdkit p1", "tgtd p0", "tgtd p1", "ganesha", "smbd"]
# Servers of a single-path workload: back at once after a kill, stalled for
# SINGLE_STALL_S. Their client has 5 s from the loss (at the I/O timeout, 2 s into
# the stall) to connect again: a 3.4 s stall left NFS-Ganesha, busy with what queued
# up meanwhile, too little of it on this loaded 2-core machine (the run ended).
SINGLE = ("ganesha", "smbd")
SINGLE_STALL_S = (2.5, 3.0)
# After a fault is restored, at least this long before the next begins.
SETTLE_S = 10.0
# No fault under way in the last QUIET_S seconds: the end samples are steady.
QUIET_S = 30.0
SAMPLE_EVERY_S = 5.0
# The workloads' interval: what a user watching a fault sets. A run spools its
# interval rows to disk (run::spool), so its memory does not grow with them.
INTERVAL_S = 1
DRIFT_LIMIT = 0.05
# nbdkit's error filter during a burst.
ERROR_RATE = "25%"


def log(msg):
    print(msg, flush=True)


def die(msg):
    print(f"soak: {msg}", file=sys.stderr, flush=True)
    sys.exit(2)


def server_addr(k):
    return f"10.254.{k}.2"


def client_addr(k):
    return f"10.254.{k}.1"


def run_cmd(argv, check=True, **kw):
    """Runs argv to completion; raises with its output when it fails and check."""
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def wait_for(what, cond, timeout_s, proc=None):
    """Polls cond() until true; fails naming `what` when proc exits or time is up."""
    t0 = time.time()
    while not cond():
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: exited at start (status {proc.returncode})")
        if time.time() - t0 > timeout_s:
            raise RuntimeError(f"{what}: not ready within {timeout_s:.0f} s")
        time.sleep(0.05)


class Netns:
    """A client and a server namespace joined by one veth pair per link, with
    permanent neighbour entries so a cut link drops packets silently however long
    it lasts (as tests/it/mod.rs `NetnsLinks` does)."""

    def __init__(self):
        pid = os.getpid()
        self.client = f"ioscope-soak-c{pid}"
        self.server = f"ioscope-soak-s{pid}"
        self.devs = [(f"sc{k}-{pid}", f"ss{k}-{pid}") for k in range(len(LINKS))]
        self.made = []

    def up(self):
        remove_stale()
        for ns in (self.client, self.server):
            run_cmd(["ip", "netns", "add", ns])
            self.made.append(ns)
            run_cmd(["ip", "-n", ns, "link", "set", "lo", "up"])
        for k, (vc, vs) in enumerate(self.devs):
            c, s = self.client, self.server
            run_cmd(["ip", "-n", c, "link", "add", vc, "type", "veth", "peer", "name", vs,
                     "netns", s])
            run_cmd(["ip", "-n", c, "addr", "add", f"{client_addr(k)}/24", "dev", vc])
            run_cmd(["ip", "-n", s, "addr", "add", f"{server_addr(k)}/24", "dev", vs])
            run_cmd(["ip", "-n", c, "link", "set", vc, "up"])
            run_cmd(["ip", "-n", s, "link", "set", vs, "up"])
            macs = {}
            for ns, dev in ((c, vc), (s, vs)):
                out = run_cmd(["ip", "-n", ns, "-br", "link", "show", "dev", dev]).stdout
                macs[dev] = out.split()[2]
            for ns, dev, peer, mac in ((c, vc, server_addr(k), macs[vs]),
                                       (s, vs, client_addr(k), macs[vc])):
                run_cmd(["ip", "-n", ns, "neigh", "replace", peer, "lladdr", mac, "dev",
                         dev, "nud", "permanent"])

    def set_link(self, k, up):
        run_cmd(["ip", "-n", self.server, "link", "set", self.devs[k][1],
                 "up" if up else "down"])

    def listening(self, addr, port):
        out = run_cmd(["ip", "netns", "exec", self.server, "ss", "-Hltn",
                       f"src {addr} and sport = :{port}"], check=False).stdout
        return out.strip() != ""

    def delete(self):
        # Deleting a namespace deletes the veth ends inside it (and so their peers).
        for ns in reversed(self.made):
            p = run_cmd(["ip", "netns", "del", ns], check=False)
            if p.returncode != 0:
                log(f"soak: could not delete namespace {ns}: {p.stderr.strip()}")
        self.made = []


def remove_stale():
    """Deletes the namespaces of soak runs whose process is gone (one killed with
    SIGKILL never ran its teardown), so they do not pile up on the machine."""
    out = run_cmd(["ip", "netns", "list"], check=False).stdout
    for ns in (line.split()[0] for line in out.splitlines() if line.strip()):
        m = re.fullmatch(r"ioscope-soak-[cs](\d+)", ns)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            log(f"soak: deleting namespace {ns} of a soak run that is gone")
            run_cmd(["ip", "netns", "del", ns], check=False)


def spawn(argv, logfile, **kw):
    """Starts argv in a process group of its own (a Ctrl-C at the terminal reaches
    only the script, which then stops everything by PID), output to logfile."""
    out = open(logfile, "ab")
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, process_group=0, **kw)
    finally:
        out.close()


def signal_pid(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


class Server:
    """A server process the schedule can kill, stall and start again by PID."""

    name = "server"

    def __init__(self, soak):
        self.soak = soak
        self.proc = None
        # Whether it should be running (false while a fault holds it killed).
        self.wanted = False
        self.stalled = False

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def logfile(self):
        return os.path.join(self.soak.logs, self.name.replace(" ", "-") + ".log")

    def start(self):
        self.wanted = True
        self.stalled = False
        self._start()

    def kill(self):
        self.wanted = False
        if self.alive():
            self._signal(signal.SIGKILL)
            self.proc.wait()

    def stall(self):
        self.stalled = True
        self._signal(signal.SIGSTOP)

    def resume(self):
        self._signal(signal.SIGCONT)
        self.stalled = False

    def _signal(self, sig):
        if self.alive():
            signal_pid(self.proc.pid, sig)

    def stop(self):
        """Teardown: resumed, asked to end, killed if it does not."""
        self.wanted = False
        if not self.alive():
            return
        self._signal(signal.SIGCONT)
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.proc.wait()


class Nbdkit(Server):
    """nbdkit serving the NBD image on link `k`, its error filter armed by the
    soak's error file (errors only while that file exists)."""

    def __init__(self, soak, path, link):
        super().__init__(soak)
        self.name = f"nbdkit p{path}"
        self.link = link
        self.pidfile = os.path.join(soak.work, f"nbdkit-p{path}.pid")

    def _start(self):
        try:
            os.unlink(self.pidfile)
        except FileNotFoundError:
            pass
        s = self.soak
        argv = ["ip", "netns", "exec", s.ns.server, "nbdkit", "--foreground",
                "--exit-with-parent", "-i", server_addr(self.link), "-p", "10809",
                "-P", self.pidfile, "--filter=error", "file", s.nbd_image,
                f"error-rate={ERROR_RATE}", f"error-file={s.error_file}"]
        self.proc = spawn(argv, self.logfile())

        def written():
            try:
                with open(self.pidfile) as f:
                    return f.read().endswith("\n")
            except FileNotFoundError:
                return False
        wait_for(self.name, written, 10, self.proc)


class Tgtd(Server):
    """tgtd with one portal on link `k`, serving the shared LUN file as target 1
    LUN 1: two of them are two controllers of one array (the same VPD 0x83 device
    identifier on both, the same bytes through the page cache)."""

    def __init__(self, soak, path, link, control):
        super().__init__(soak)
        self.name = f"tgtd p{path}"
        self.link = link
        self.control = str(control)

    def adm(self, *args):
        return run_cmd(["tgtadm", "-C", self.control, "--lld", "iscsi", *args],
                       check=False).returncode == 0

    def _start(self):
        s = self.soak
        argv = ["ip", "netns", "exec", s.ns.server, "tgtd", "-f", "-C", self.control,
                "--iscsi", f"portal={server_addr(self.link)}:3260"]
        self.proc = spawn(argv, self.logfile())
        wait_for(self.name, lambda: self.adm("--op", "show", "--mode", "target"), 10,
                 self.proc)
        ok = (self.adm("--op", "new", "--mode", "target", "--tid", "1", "-T", IQN)
              and self.adm("--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun",
                           "1", "-b", s.iscsi_lun)
              and self.adm("--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL"))
        if not ok:
            raise RuntimeError(f"{self.name}: tgtadm could not set up the target")

    def stop(self):
        self.wanted = False
        if self.alive():
            self._signal(signal.SIGCONT)
            # tgtd ignores SIGTERM; this is its own way down.
            self.adm("--op", "delete", "--mode", "system")
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait()
        for suffix in ("", ".lock"):
            try:
                os.unlink(f"/run/tgtd/socket.{self.control}{suffix}")
            except FileNotFoundError:
                pass


class Ganesha(Server):
    """NFS-Ganesha (NFSv3, VFS FSAL) on link `k`. NFSv3 needs a portmapper to
    register with: rpcbind runs beside it in a mount namespace of its own whose /run
    is a fresh tmpfs, so neither touches the host's rpcbind socket (the URIs name
    both ports, so clients never ask it)."""

    name = "ganesha"

    def __init__(self, soak, link):
        super().__init__(soak)
        self.link = link
        self.holder = None
        self.rpcbind = None
        self.starts = 0
        self.conf = os.path.join(soak.work, "ganesha.conf")

    def prepare(self):
        s = self.soak
        plugins = None
        for d in ["/usr/lib64/ganesha"] + [os.path.join("/usr/lib", x, "ganesha")
                                           for x in os.listdir("/usr/lib")]:
            if os.path.exists(os.path.join(d, "libfsalvfs.so")):
                plugins = d
                break
        if plugins is None:
            raise RuntimeError("the VFS FSAL of NFS-Ganesha is not installed "
                               "(Debian package nfs-ganesha-vfs)")
        recovery = os.path.join(s.work, "ganesha-recovery")
        os.makedirs(recovery)
        with open(self.conf, "w") as f:
            f.write(f"""NFS_CORE_PARAM {{
  NFS_Port = 2049;
  MNT_Port = 20048;
  Bind_addr = {server_addr(self.link)};
  Protocols = 3;
  Enable_NLM = false;
  Enable_RQUOTA = false;
  Enable_UDP = false;
  Plugins_Dir = "{plugins}";
  mount_path_pseudo = true;
}}
NFSv4 {{ Graceless = true; RecoveryRoot = "{recovery}"; }}
EXPORT {{
  Export_Id = 77;
  Path = "{s.nfs_export}";
  Pseudo = "/nfs";
  Access_Type = RW;
  Squash = No_Root_Squash;
  SecType = sys;
  Protocols = 3;
  Transports = TCP;
  FSAL {{ Name = VFS; }}
}}
""")
        marker = os.path.join(s.work, "ganesha-run-mounted")
        self.holder = spawn(["ip", "netns", "exec", s.ns.server, "unshare", "--mount",
                             "--propagation", "private", "--", "sh", "-c",
                             f"mount -t tmpfs ioscope-soak /run && touch {marker} && "
                             "exec sleep infinity"],
                            os.path.join(s.logs, "ganesha-holder.log"))
        wait_for("the mount namespace for rpcbind and ganesha",
                 lambda: os.path.exists(marker), 10, self.holder)
        self.rpcbind = spawn(self.enter(["rpcbind", "-f"]),
                             os.path.join(s.logs, "rpcbind.log"))
        wait_for("rpcbind", lambda: s.ns.listening("0.0.0.0", 111), 10, self.rpcbind)

    def enter(self, argv):
        """argv run in the holder's network and mount namespaces (nsenter execs it:
        the PID is the program's own)."""
        return ["nsenter", "-t", str(self.holder.pid), "-m", "-n", "--"] + argv

    def _start(self):
        self.starts += 1
        logf = os.path.join(self.soak.logs, f"ganesha-{self.starts}.log")
        argv = self.enter(["ganesha.nfsd", "-F", "-f", self.conf, "-L", logf, "-p",
                           os.path.join(self.soak.work, "ganesha.pid"), "-N",
                           "NIV_EVENT"])
        self.proc = spawn(argv, self.logfile())

        def initialized():
            try:
                with open(logf) as f:
                    return "NFS SERVER INITIALIZED" in f.read()
            except FileNotFoundError:
                return False
        wait_for(self.name, initialized, 30, self.proc)

    def stop(self):
        super().stop()
        for p in (self.rpcbind, self.holder):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


class Smbd(Server):
    """smbd on link `k` with a private configuration, state and user database, SMB3
    only, signing mandatory (as tests/it/net_smb.rs). It is killed and stalled as a
    process group: the process serving each session is its child."""

    name = "smbd"

    def __init__(self, soak, link):
        super().__init__(soak)
        self.link = link
        self.dir = os.path.join(soak.work, "smb")
        self.conf = os.path.join(self.dir, "smb.conf")

    def prepare(self):
        d = self.dir
        for sub in ("private", "lock", "state", "cache", "pid", "ncalrpc", "log"):
            os.makedirs(os.path.join(d, sub))
        p = lambda sub: os.path.join(d, sub)  # noqa: E731
        with open(self.conf, "w") as f:
            f.write(f"""[global]
  smb ports = 445
  interfaces = {server_addr(self.link)}
  bind interfaces only = yes
  private dir = {p("private")}
  lock directory = {p("lock")}
  state directory = {p("state")}
  cache directory = {p("cache")}
  pid directory = {p("pid")}
  ncalrpc dir = {p("ncalrpc")}
  log file = {p("log")}/log.%m
  passdb backend = tdbsam:{p("private")}/passdb.tdb
  server role = standalone server
  server min protocol = SMB3
  server signing = mandatory
  disable netbios = yes
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  log level = 1
[share]
  path = {self.soak.smb_share}
  read only = no
""")
        pw = self.soak.smb_password
        run_cmd(["smbpasswd", "-c", self.conf, "-a", "-s", SMB_USER],
                input=f"{pw}\n{pw}\n")

    def _signal(self, sig):
        if self.alive():
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def _start(self):
        argv = ["ip", "netns", "exec", self.soak.ns.server, "smbd", "--foreground",
                "--no-process-group", "--debug-stdout", "-s", self.conf]
        self.proc = spawn(argv, self.logfile())
        wait_for(self.name, lambda: self.soak.ns.listening(server_addr(self.link), 445),
                 15, self.proc)

    def kill(self):
        # The whole group: smbd and the processes serving the sessions.
        self.wanted = False
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


class Workload:
    """One ioscope process: a job file of its own, run in the client namespace."""

    def __init__(self, soak, name, uri, paths, env=None):
        self.soak = soak
        self.name = name
        self.uri = uri
        self.paths = paths
        self.env = env or {}
        d = soak.out
        self.job = os.path.join(d, f"{name}.toml")
        self.json = os.path.join(d, f"{name}.json")
        self.html = os.path.join(d, f"{name}.html")
        self.journal = os.path.join(d, f"{name}.journal")
        self.verify_json = os.path.join(d, f"{name}.verify.json")
        self.output = os.path.join(d, f"{name}.out")
        self.proc = None
        # (soak time s, RSS kB, fds, threads, anonymous kB, file-backed kB)
        self.samples = []
        self.exited = None  # soak time at which it was seen to have ended
        self.result = None

    def write_job(self, seconds, seed):
        extra = ""
        if self.paths:
            quoted = ", ".join(f'"{p}"' for p in self.paths)
            extra = f"paths = [{quoted}]\npath_retry = \"{PATH_RETRY}\"\n"
        # A file on NFS or SMB is created at the working-set size; an NBD export or
        # an iSCSI LUN is the server's size.
        size = "" if self.paths else f'size = "{SIZE}"\n'
        with open(self.job, "w") as f:
            f.write(f"""# ioscope soak (scripts/soak.py), seed {seed}: the {self.name} workload.
[defaults]
duration = "{seconds}s"
interval = "{INTERVAL_S}s"
io_timeout = "{IO_TIMEOUT_S:g}s"
seed = {seed}
pacing = "sleep"

[[target]]
name = "{self.name}"
path = "{self.uri}"
{extra}{size}
[[workload]]
name = "{self.name}"
target = "{self.name}"
rw = "randrw"
bs = "4k"
qd = {QD}
rate = {RATE_IOPS}
verify = true
""")

    def ioscope_argv(self, *args):
        s = self.soak
        return ["ip", "netns", "exec", s.ns.client, s.ioscope, *args]

    def start(self):
        argv = self.ioscope_argv("run", self.job, "--on-error", "continue", "--journal",
                                 self.journal, "--json", self.json, "--html", self.html,
                                 "-q")
        self.proc = spawn(argv, self.output, env={**os.environ, **self.env})

    def measuring(self):
        try:
            with open(self.json + ".intervals.jsonl") as f:
                return f.readline().endswith("\n")
        except FileNotFoundError:
            return False

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def sample(self, t):
        pid = self.proc.pid
        try:
            with open(f"/proc/{pid}/status") as f:
                status = f.read()
            fds = len(os.listdir(f"/proc/{pid}/fd"))
        except (FileNotFoundError, ProcessLookupError):
            return
        got = [re.search(rf"^{k}:\s+(\d+)", status, re.M)
               for k in ("VmRSS", "Threads", "RssAnon", "RssFile")]
        if None in got:
            return  # it has just exited (a zombie has no memory)
        rss, threads, anon, file = (int(m.group(1)) for m in got)
        self.samples.append((t, rss, fds, threads, anon, file))

    def stop(self):
        if self.alive():
            signal_pid(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                signal_pid(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


class Fault:
    """One injected fault: what, on which server or link, when and for how long."""

    def __init__(self, n, kind, target, workload, path, at, hold):
        self.n = n
        self.kind = kind
        self.target = target  # a server's name, or "link NAME"
        self.workload = workload
        self.path = path  # path index of a multipath workload, else None
        self.at = at
        self.hold = hold
        self.began = None  # Unix times
        self.ended = None
        self.note = ""

    def describe(self):
        what = {
            "kill": f"kill -9 {self.target}, started again after {self.hold:.1f} s",
            "cut": f"cut {self.target} for {self.hold:.1f} s",
            "errors": f"nbdkit error burst ({ERROR_RATE} EIO on both paths) "
                      f"for {self.hold:.1f} s",
            "stall": f"delay spike: {self.target} stopped for {self.hold:.1f} s",
        }[self.kind]
        if self.kind == "kill" and self.hold == 0:
            what = f"kill -9 {self.target}, started again at once"
        return what

    def to_json(self):
        return {"n": self.n, "kind": self.kind, "target": self.target,
                "workload": self.workload, "path": self.path, "at_s": self.at,
                "hold_s": self.hold, "began_unix": self.began,
                "ended_unix": self.ended, "note": self.note}


def plan_faults(seed, seconds):
    """The schedule. The first minute is a shake-down: one fault on each workload
    (in a shuffled order, of a kind drawn for it that drops its connection or a
    path), at SHAKEDOWN_AT. From 60-100 s on, a fault every 20-60 s from a shuffled
    cycle of the four kinds, each restored SETTLE_S before the next, none under way
    in the last QUIET_S."""
    rng = random.Random(seed)
    faults = []

    def add(kind, target, at, hold):
        workload, path = fault_scope(target)
        faults.append(Fault(len(faults) + 1, kind, target, workload, path,
                            round(at, 1), round(hold, 1)))
    order = ["nbd", "iscsi", "nfs", "smb"]
    rng.shuffle(order)
    for at, workload in zip(SHAKEDOWN_AT, order):
        kind, target, hold = shakedown_fault(rng, workload)
        add(kind, target, at, hold)
    bag = []
    t = 60.0 + rng.uniform(0, 40)
    while True:
        if not bag:
            bag = ["kill", "cut", "errors", "stall"]
            rng.shuffle(bag)
        kind = bag.pop()
        if kind == "kill":
            target = rng.choice(SERVERS)
            hold = 0.0 if target in SINGLE else rng.uniform(2, 10)
        elif kind == "cut":
            target = "link " + rng.choice(LINKS[:4])
            hold = rng.uniform(5, 15)
        elif kind == "errors":
            target = "nbdkit p0+p1"
            hold = rng.uniform(2, 6)
        else:
            target = rng.choice(SERVERS)
            hold = rng.uniform(*SINGLE_STALL_S) if target in SINGLE else rng.uniform(3, 8)
        if t + hold + QUIET_S > seconds:
            break
        add(kind, target, t, hold)
        t = max(t + rng.uniform(*GAP_S), t + hold + SETTLE_S)
    return faults


def shakedown_fault(rng, workload):
    """(kind, target, hold) of the shake-down fault on `workload`: short enough to
    be over within its 10 s slot, long enough to pass the I/O timeout."""
    if workload in ("nfs", "smb"):
        target = "ganesha" if workload == "nfs" else "smbd"
        kind = rng.choice(["kill", "stall"])
        return kind, target, (0.0 if kind == "kill" else rng.uniform(*SINGLE_STALL_S))
    path = rng.choice([0, 1])
    kind = rng.choice(["kill", "cut", "stall"])
    if kind == "cut":
        return kind, f"link {workload}-p{path}", rng.uniform(4, 5)
    server = "nbdkit" if workload == "nbd" else "tgtd"
    return kind, f"{server} p{path}", rng.uniform(2, 4) if kind == "kill" \
        else rng.uniform(3, 4.5)


def fault_scope(target):
    """The workload a fault on `target` hits, and its path (multipath) or None."""
    name = target.removeprefix("link ")
    for prefix, workload in (("nbd", "nbd"), ("tgtd", "iscsi"), ("iscsi", "iscsi"),
                             ("ganesha", "nfs"), ("nfs", "nfs"), ("smb", "smb")):
        if name.startswith(prefix):
            m = re.search(r"p(\d)$", name)
            return workload, (int(m.group(1)) if m else None)
    raise ValueError(target)


class Soak:
    def __init__(self, args):
        self.args = args
        self.seed = args.seed
        self.seconds = int(round(args.minutes * 60))
        self.ioscope = os.path.abspath(args.ioscope)
        self.work = tempfile.mkdtemp(prefix=f"ioscope-soak-{self.seed}-")
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs)
        self.out = os.path.abspath(args.out) if args.out else os.path.join(self.work,
                                                                           "out")
        os.makedirs(self.out, exist_ok=True)
        self.ns = Netns()
        self.nbd_image = os.path.join(self.work, "nbd.img")
        self.iscsi_lun = os.path.join(self.work, "iscsi-lun.img")
        self.nfs_export = os.path.join(self.work, "nfs-export")
        self.smb_share = os.path.join(self.work, "smb-share")
        self.error_file = os.path.join(self.work, "nbdkit-errors-on")
        self.smb_password = "Soak-" + secrets.token_hex(8)
        self.servers = {}
        self.workloads = {}
        self.faults = []
        self.notes = []  # (Unix time, text): servers that died on their own
        self.t0 = None
        self.passed = True

    # ---- set-up and teardown -------------------------------------------------

    def setup(self):
        for path in (self.nbd_image, self.iscsi_lun):
            with open(path, "wb") as f:
                f.truncate(SIZE_BYTES)
        os.makedirs(self.nfs_export)
        os.makedirs(self.smb_share)
        self.ns.up()
        s = self.servers
        s["nbdkit p0"] = Nbdkit(self, 0, 0)
        s["nbdkit p1"] = Nbdkit(self, 1, 1)
        control = free_tgtd_control()
        s["tgtd p0"] = Tgtd(self, 0, 2, control)
        s["tgtd p1"] = Tgtd(self, 1, 3, control + 1)
        s["ganesha"] = Ganesha(self, 4)
        s["smbd"] = Smbd(self, 5)
        s["ganesha"].prepare()
        s["smbd"].prepare()
        for srv in s.values():
            srv.start()
        nbd = [f"nbd://{server_addr(k)}:10809" for k in (0, 1)]
        iscsi = [f"iscsi://{server_addr(k)}:3260/{IQN}/1" for k in (2, 3)]
        w = self.workloads
        w["nbd"] = Workload(self, "nbd", nbd[0], nbd[1:])
        w["iscsi"] = Workload(self, "iscsi", iscsi[0], iscsi[1:])
        w["nfs"] = Workload(self, "nfs",
                            f"nfs://{server_addr(4)}:2049/nfs/soak.dat?mountport=20048", [])
        w["smb"] = Workload(self, "smb",
                            f"smb://{SMB_USER}@{server_addr(5)}:445/share/soak.dat", [],
                            {"IOSCOPE_SMB_PASSWORD": self.smb_password})

    def teardown(self):
        for w in self.workloads.values():
            w.stop()
        for srv in reversed(list(self.servers.values())):
            try:
                srv.stop()
            except Exception as e:  # keep tearing down the rest
                log(f"soak: stopping {srv.name}: {e}")
        self.ns.delete()
        if self.args.out:
            shutil.copytree(self.logs, os.path.join(self.out, "logs"), dirs_exist_ok=True)
        if self.args.keep or (not self.passed and not self.args.out):
            log(f"soak: kept {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    # ---- the run ---------------------------------------------------------------

    def now(self):
        return time.time() - self.t0

    def stamp(self, msg):
        log(f"  [{self.now():7.1f} s] {msg}")

    def run(self):
        self.faults = plan_faults(self.seed, self.seconds)
        log(f"soak: seed {self.seed}, {self.args.minutes:g} min, "
            f"{len(self.faults)} faults planned (scripts/soak.sh --minutes "
            f"{self.args.minutes:g} --seed {self.seed} repeats this schedule)")
        for f in self.faults:
            log(f"  fault {f.n:2}: at {f.at:7.1f} s  {f.describe()}")
        log(f"soak: work directory {self.work}, results in {self.out}")
        self.setup()
        log("soak: servers up: " + ", ".join(f"{n} (pid {s.pid})"
                                             for n, s in self.servers.items()))
        for w in self.workloads.values():
            w.write_job(self.seconds, self.seed)
            w.start()
        t_start = time.time()
        while not all(w.measuring() for w in self.workloads.values()):
            for w in self.workloads.values():
                if not w.alive():
                    raise RuntimeError(f"ioscope ({w.name}) ended before measuring: "
                                       f"{tail(w.output)}")
            if time.time() - t_start > 120:
                raise RuntimeError("the workloads did not start measuring within 120 s")
            time.sleep(0.1)
        self.t0 = time.time()
        log("soak: all four workloads measuring: " + ", ".join(
            f"{w.name} (pid {w.proc.pid})" for w in self.workloads.values()))
        self.loop()
        log("soak: workloads done")

    def loop(self):
        pending = list(self.faults)
        active = []  # faults under way
        next_sample = 0.0
        while any(w.alive() for w in self.workloads.values()):
            t = self.now()
            if t > self.seconds + 180:
                late = [w.name for w in self.workloads.values() if w.alive()]
                raise RuntimeError(f"ioscope ({', '.join(late)}) still running 180 s "
                                   "after its duration")
            if pending and t >= pending[0].at:
                f = pending.pop(0)
                self.begin(f)
                active.append(f)
            for f in list(active):
                if time.time() >= f.began + f.hold:
                    self.end(f)
                    active.remove(f)
            self.watchdog()
            for w in self.workloads.values():
                if w.exited is None and not w.alive():
                    w.exited = t
            if t >= next_sample:
                for w in self.workloads.values():
                    if w.alive():
                        w.sample(t)
                next_sample += SAMPLE_EVERY_S
            time.sleep(0.05)
        for f in active:
            self.end(f)
        for f in pending:
            f.note = "not injected: the workloads had ended"

    def begin(self, f):
        f.began = time.time()
        self.stamp(f"fault {f.n}: {f.describe()}")
        if f.kind == "kill":
            srv = self.servers[f.target]
            pid = srv.pid
            srv.kill()
            self.stamp(f"fault {f.n}: {f.target} (pid {pid}) killed")
        elif f.kind == "cut":
            self.ns.set_link(LINKS.index(f.target.removeprefix("link ")), False)
        elif f.kind == "errors":
            open(self.error_file, "w").close()
        elif f.kind == "stall":
            self.servers[f.target].stall()

    def end(self, f):
        if f.kind == "kill":
            srv = self.servers[f.target]
            srv.start()
            self.stamp(f"fault {f.n}: {f.target} started again (pid {srv.pid})")
        elif f.kind == "cut":
            self.ns.set_link(LINKS.index(f.target.removeprefix("link ")), True)
            self.stamp(f"fault {f.n}: {f.target} up again")
        elif f.kind == "errors":
            os.unlink(self.error_file)
            self.stamp(f"fault {f.n}: error burst over")
        elif f.kind == "stall":
            self.servers[f.target].resume()
            self.stamp(f"fault {f.n}: {f.target} resumed")
        f.ended = time.time()

    def watchdog(self):
        """Starts again a server that ended on its own (not killed by a fault)."""
        for srv in self.servers.values():
            if srv.wanted and not srv.alive():
                status = srv.proc.returncode if srv.proc else None
                why = f"{srv.name} (pid {srv.pid}) ended on its own (status {status})"
                self.stamp(f"note: {why}; starting it again")
                try:
                    srv.start()
                except RuntimeError as e:
                    self.stamp(f"note: starting {srv.name} again failed: {e}")
                    continue
                self.notes.append((time.time(), f"{why}: {tail(srv.logfile(), 1)}"))

    # ---- the checks ------------------------------------------------------------

    def check(self, ok, what):
        log(f"  {'PASS' if ok else 'FAIL'}  {what}")
        if not ok:
            self.passed = False

    def verify(self):
        log("soak: ioscope verify --journal on every target")
        for w in self.workloads.values():
            p = subprocess.run(w.ioscope_argv("verify", "--journal", w.journal, "--json",
                                              w.verify_json),
                               capture_output=True, text=True,
                               env={**os.environ, **w.env})
            with open(os.path.join(self.out, f"{w.name}.verify.out"), "w") as f:
                f.write(p.stdout + p.stderr)
            try:
                with open(w.verify_json) as f:
                    doc = json.load(f)
            except (FileNotFoundError, json.JSONDecodeError):
                doc = None
            counts = verify_counts(doc)
            ok = p.returncode == 0 and counts is not None and counts["mismatches"] == 0 \
                and counts["units_checked"] > 0
            if counts is None:
                what = f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[-300:]}"
            else:
                what = (f"{counts['units_checked']} units checked, {counts['ok']} ok, "
                        f"{counts['mismatches']} mismatches ({counts['stale']} lost/stale, "
                        f"{counts['corrupted']} corrupted, {counts['misplaced']} misplaced, "
                        f"{counts['never_written']} never written, "
                        f"{counts['unexpected']} unexpected)")
            self.check(ok, f"{w.name:5} verify --journal: {what}")

    def load_results(self):
        for w in self.workloads.values():
            try:
                with open(w.json) as f:
                    w.result = json.load(f)["runs"][0]
            except (FileNotFoundError, json.JSONDecodeError, KeyError, IndexError) as e:
                w.result = None
                self.check(False, f"{w.name:5} result {w.json}: {e}")

    def check_runs(self):
        log("soak: runs, errors and in-run verification")
        for w in self.workloads.values():
            r = w.result
            if r is None:
                continue
            tot = r["totals"]
            per_iv = sum(iv.get("errors", 0) for iv in r["intervals"])
            code = w.proc.returncode
            ends = r.get("end_reason")
            ok_code = code == 0 or (code == 1 and tot["errors"] > 0)
            self.check(ends == "duration" and ok_code,
                       f"{w.name:5} ended by its duration ({ends}, exit {code}) after "
                       f"{r['duration_s']:.0f} s: {tot['ios']} I/Os, "
                       f"{tot['iops']:.0f} IOPS")
            self.check(per_iv == tot["errors"]
                       and tot["read"]["errors"] + tot["write"]["errors"] == tot["errors"],
                       f"{w.name:5} errors add up: {per_iv} over {len(r['intervals'])} "
                       f"intervals = {tot['errors']} in the totals "
                       f"({tot['read']['errors']} read + {tot['write']['errors']} write)")
            v = r.get("verify") or {}
            self.check(v.get("mismatches", 1) == 0 and v.get("units_checked", 0) > 0,
                       f"{w.name:5} in-run verification: {v.get('units_checked')} units "
                       f"checked, {v.get('ok')} ok, {v.get('mismatches')} mismatches")

    def run_start(self, w):
        iv = w.result["intervals"][0]
        return iv["unix_s"] - iv["t_s"]

    def check_faults(self):
        log("soak: every fault in the results and on the HTML timelines")
        flags = {}
        for w in self.workloads.values():
            flags[w.name] = html_flags(w.html)
        for f in self.faults:
            w = self.workloads[f.workload]
            if f.began is None:
                self.check(False, f"fault {f.n} ({f.describe()}): {f.note}")
                continue
            if w.result is None:
                self.check(False, f"fault {f.n}: no result for {w.name}")
                continue
            start = self.run_start(w)
            a, b = f.began - start, f.ended - start
            if f.kind == "errors":
                ivs = [iv for iv in w.result["intervals"]
                       if iv.get("errors", 0) > 0 and iv["t_s"] > a and
                       iv["t_s"] - iv["duration_s"] < b + 1.0]
                n = sum(iv["errors"] for iv in ivs)
                tips = [t for t in flags[w.name].tips("errors")
                        if any(abs(tip_time(t) - iv["t_s"]) <= 0.5 for iv in ivs)]
                self.check(n > 0, f"fault {f.n} {f.kind:6} {w.name}: {n} I/O errors in "
                                  f"{len(ivs)} intervals over {a:.1f}-{b:.1f} s")
                self.check(len(tips) >= len(ivs) > 0,
                           f"fault {f.n} {f.kind:6} {w.name}: {len(tips)} error intervals "
                           f"marked on the HTML timeline")
                continue
            events = w.result.get("events", [])
            seen, text = fault_events(events, f.kind, f.path, a, b)
            where = f"p{f.path}" if f.path is not None else "connection"
            head = f"fault {f.n} {f.kind:6} {w.name} {where} over {a:.1f}-{b:.1f} s"
            if seen is None:
                near = [(round(e["t_s"], 2), e.get("path"), e["kind"])
                        for e in events if a - 2 <= e["t_s"] <= b + 30]
                self.check(False, f"{head}: {text} (events near it: {near[:12]})")
                continue
            self.check(True, f"{head}: {text}")
            shown = [flags[w.name].shows(e, events) for e in seen]
            self.check(all(shown), f"fault {f.n} {f.kind:6} {w.name}: "
                                   f"{'/'.join(e['kind'] for e in seen)} flagged on the "
                                   f"HTML timeline ({shown})")

    def check_drift(self):
        log("soak: RSS and open descriptors, first minute against the end")
        quiet = [(f.began - self.t0, f.ended - self.t0 + SETTLE_S) for f in self.faults
                 if f.began is not None]
        quiet += [(t - self.t0 - SETTLE_S, t - self.t0 + SETTLE_S) for t, _ in self.notes]

        def steady(t):
            return not any(lo - SAMPLE_EVERY_S <= t <= hi for lo, hi in quiet)
        for w in self.workloads.values():
            s = w.samples
            first = [x for x in s if x[0] <= 60.0 and x[0] >= 10.0]
            ref = [x for x in first if steady(x[0])] or first
            # Taken while it was still measuring: after its measured time it winds
            # down (workers gone, connections closed).
            if w.result is not None:
                last = self.run_start(w) + w.result["duration_s"] - self.t0
            else:
                last = (w.exited or float("inf")) - 10.0
            live = [x for x in s if x[0] <= last - SAMPLE_EVERY_S]
            end = [x for x in live if steady(x[0])] or live
            if not ref or not end:
                self.check(False, f"{w.name:5} no RSS/fd samples")
                continue
            r, e = ref[-1], end[-1]
            drss = (e[1] - r[1]) / r[1]
            dfd = (e[2] - r[2]) / r[2]
            # Growth is what a leak makes. A drop is the kernel taking back
            # file-backed pages (the binary's code; this VM runs DAMON's pageout),
            # printed, not failed: it is not memory the process holds on to.
            self.check(drss <= DRIFT_LIMIT,
                       f"{w.name:5} RSS {r[1] / 1024:.1f} MiB at {r[0]:.0f} s -> "
                       f"{e[1] / 1024:.1f} MiB at {e[0]:.0f} s ({drss * 100:+.1f} %: "
                       f"anonymous {(e[4] - r[4]) / 1024:+.2f} MiB, file-backed "
                       f"{(e[5] - r[5]) / 1024:+.2f} MiB; max "
                       f"{max(x[1] for x in s) / 1024:.1f} MiB)")
            self.check(abs(dfd) <= DRIFT_LIMIT,
                       f"{w.name:5} fds {r[2]} at {r[0]:.0f} s -> {e[2]} at {e[0]:.0f} s "
                       f"({dfd * 100:+.1f} %; max {max(x[2] for x in s)}; "
                       f"threads {r[3]} -> {e[3]})")

    def report(self):
        self.load_results()
        self.verify()
        self.check_runs()
        self.check_faults()
        self.check_drift()
        kinds = {}
        for f in self.faults:
            if f.began is not None:
                kinds[f.kind] = kinds.get(f.kind, 0) + 1
        injected = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
        log(f"soak: seed {self.seed}, {self.seconds / 60:g} min, "
            f"{sum(kinds.values())} faults injected ({injected}); servers that ended "
            f"on their own and were started again: {len(self.notes)}")
        for w in self.workloads.values():
            evs = {}
            for e in (w.result or {}).get("events", []):
                evs[e["kind"]] = evs.get(e["kind"], 0) + 1
            hit = sum(1 for f in self.faults if f.workload == w.name and f.began)
            tot = (w.result or {}).get("totals", {})
            log(f"  {w.name:5} {hit} faults; events "
                f"{', '.join(f'{v} {k}' for k, v in sorted(evs.items())) or 'none'}; "
                f"{tot.get('ios', 0)} I/Os, {tot.get('errors', 0)} errors")
        for t, text in self.notes:
            log(f"  note at {t - self.t0:.1f} s: {text}")
        with open(os.path.join(self.out, "soak.json"), "w") as f:
            json.dump({"seed": self.seed, "minutes": self.seconds / 60,
                       "t0_unix": self.t0,
                       "faults": [x.to_json() for x in self.faults],
                       "notes": [{"unix": t, "text": x} for t, x in self.notes],
                       "samples": {w.name: w.samples for w in self.workloads.values()},
                       "passed": self.passed}, f, indent=1)
        log(f"soak: {'PASS' if self.passed else 'FAIL'} (results in {self.out})")


def verify_counts(doc):
    """The counts of an `ioscope verify --json` document (`total`, summed over its
    targets), or None when it has none."""
    total = doc.get("total") if isinstance(doc, dict) else None
    if not isinstance(total, dict) or "units_checked" not in total:
        return None
    keys = ("units_checked", "ok", "mismatches", "corrupted", "misplaced", "stale",
            "never_written", "unexpected")
    return {k: int(total.get(k, 0)) for k in keys}


def fault_events(events, kind, path, a, b):
    """The events that show a fault over run time a..b on `path` (any connection
    when None), and a line saying what they were; (None, why) when they are not
    there. A kill or a cut: a `down` from a second before the fault to 10 s after
    it, then an `up` within 30 s of its end. A stall (delay spike): answers past the
    I/O timeout, a `timeout` (or `down`) event up to 2 s after the stall ended; when
    the connection or path was dropped for it, the `up` that followed (an SMB
    session is kept: the requests past their deadline are counted and answered
    late)."""
    def on(e):
        return path is None or e.get("path") == path

    def first(k, lo, hi):
        return next((e for e in events if on(e) and e["kind"] == k
                     and lo <= e["t_s"] <= hi), None)
    if kind == "stall":
        late = [e for e in events if on(e) and e["kind"] in ("timeout", "down")
                and a - 1.0 <= e["t_s"] <= b + IO_TIMEOUT_S]
        if not late:
            return None, "no timeout or down event"
        down = first("down", a - 1.0, b + IO_TIMEOUT_S)
        n = sum(1 for e in late if e["kind"] == "timeout")
        if down is None:
            return [late[0]], (f"{n} timeouts from {late[0]['t_s']:.2f} s, the session "
                               f"kept ({late[0]['detail']})")
        up = first("up", down["t_s"], b + 30.0)
        if up is None:
            return None, f"down at {down['t_s']:.2f} s and no up after it"
        return [late[0], down, up], (f"{n} timeouts, down at {down['t_s']:.2f} s, up at "
                                     f"{up['t_s']:.2f} s ({up['detail']})")
    down = first("down", a - 1.0, b + 10.0)
    if down is None:
        return None, "no down event"
    up = first("up", down["t_s"], b + 30.0)
    if up is None:
        return None, f"down at {down['t_s']:.2f} s and no up after it"
    return [down, up], (f"down at {down['t_s']:.2f} s, up at {up['t_s']:.2f} s "
                        f"({up['detail']})")


def tip_time(tip):
    m = re.match(r"t=([\d,.]+) s:", tip)
    return float(m.group(1).replace(",", "")) if m else float("nan")


class HtmlFlags:
    """The flag series of an HTML report's charts: per series name, the declared
    point count and the tips (absent when a series has too many points to carry
    them)."""

    def __init__(self, series):
        self.series = series  # name -> list of (count, tips)

    def tips(self, name):
        return [t for _, tips in self.series.get(name, []) for t in tips]

    def shows(self, event, events):
        """Whether `event` is flagged: a tip naming its kind and detail near its
        time, or (a series too long to carry tips) as many flags of its kind as the
        result has events of that kind."""
        name = f"event_{event['kind']}"
        want = f"{event['kind']}: {event['detail']}"
        for count, tips in self.series.get(name, []):
            if tips:
                if any(want in t and abs(tip_time(t) - event["t_s"]) < 1.0 for t in tips):
                    return True
            elif count == sum(1 for e in events if e["kind"] == event["kind"]):
                return True
        return False


def html_flags(path):
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return HtmlFlags({})
    series = {}
    for m in re.finditer(r'<g class="series flags" data-series="([^"]*)" '
                         r'data-count="(\d+)"[^>]*>(.*?)</g>', text, re.S):
        tips = [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", m.group(3),
                                                     re.S)]
        series.setdefault(html.unescape(m.group(1)), []).append((int(m.group(2)), tips))
    return HtmlFlags(series)


def tail(path, n=5):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-n:])
    except FileNotFoundError:
        return "(no output)"


def free_tgtd_control():
    """A tgtd control port (it names the management socket) no tgtd uses: tests
    derive theirs from free TCP ports (1000 and up); these are below."""
    for c in range(600, 998, 2):
        if not any(os.path.exists(f"/run/tgtd/socket.{x}") for x in (c, c + 1)):
            return c
    raise RuntimeError("no free tgtd control port in 600-999")


def missing_tools():
    need = []
    for cmd, pkg in (("nbdkit", "nbdkit"), ("tgtd", "tgt"), ("tgtadm", "tgt"),
                     ("ganesha.nfsd", "nfs-ganesha"), ("rpcbind", "rpcbind"),
                     ("smbd", "samba"), ("smbpasswd", "samba"), ("ip", "iproute2"),
                     ("ss", "iproute2"), ("nsenter", "util-linux"),
                     ("unshare", "util-linux")):
        if shutil.which(cmd) is None and pkg not in need:
            need.append(pkg)
    return need


def main():
    ap = argparse.ArgumentParser(
        description="ioscope soak campaign: four verified network workloads under a "
                    "seeded fault schedule (docs/methodology.md, Soak campaigns)")
    ap.add_argument("--minutes", type=float, default=60,
                    help="how long the workloads run (default 60; at least 2)")
    ap.add_argument("--seed", type=int, default=None,
                    help="the fault schedule's seed (default: drawn and printed)")
    ap.add_argument("--ioscope", default=None,
                    help="the ioscope binary (default: $CARGO_TARGET_DIR or target, "
                         "release/ioscope); built with --features smb")
    ap.add_argument("--out", default=None,
                    help="keep the results (job files, JSON, HTML, journals, verify "
                         "output, soak.json) in this directory")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (server storage and logs) too")
    args = ap.parse_args()
    if args.minutes < 2:
        die("--minutes must be at least 2 (the first minute is the reference)")
    if args.seed is None:
        args.seed = secrets.randbelow(1_000_000)
    if args.ioscope is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        tgt = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
        args.ioscope = os.path.join(tgt, "release", "ioscope")
    if not os.access(args.ioscope, os.X_OK):
        die(f"no ioscope binary at {args.ioscope}: build it with `cargo build --release "
            "--all-features` or give --ioscope PATH")
    if os.geteuid() != 0:
        die("needs root (network namespaces, tgtd, smbd)")
    need = missing_tools()
    if need:
        die(f"not installed: {' '.join(need)} (Debian packages; scripts/test.sh installs "
            "them)")

    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    soak = Soak(args)
    try:
        soak.run()
        soak.report()
    except KeyboardInterrupt:
        soak.passed = False
        log("soak: interrupted; tearing down")
        raise SystemExit(130)
    except Exception as e:
        soak.passed = False
        log(f"soak: FAIL: {e}")
        raise SystemExit(1)
    finally:
        soak.teardown()
    sys.exit(0 if soak.passed else 1)


if __name__ == "__main__":
    main()
