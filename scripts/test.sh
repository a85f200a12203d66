#!/usr/bin/env bash
# The test command (README): installs what the tests need on a fresh machine, then
# runs fmt, clippy and every test. Safe to run again; installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v losetup >/dev/null 2>&1 || need+=(util-linux)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
# XFS offers atomic writes (RWF_ATOMIC) on any device: the atomic-write tests.
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v zstd >/dev/null 2>&1 || need+=(zstd)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# Network targets: real servers and the client libraries ioscope loads at run time.
command -v nbdkit >/dev/null 2>&1 || need+=(nbdkit)
command -v nbdinfo >/dev/null 2>&1 || need+=(libnbd-bin)
ldconfig -p 2>/dev/null | grep 'libnbd\.so\.0' >/dev/null || need+=(libnbd0)
command -v tgtd >/dev/null 2>&1 || need+=(tgt)
command -v iscsi-inq >/dev/null 2>&1 || need+=(libiscsi-bin)
ldconfig -p 2>/dev/null | grep 'libiscsi\.so\.7' >/dev/null || need+=(libiscsi7)
command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v tc >/dev/null 2>&1 || need+=(iproute2)
# NFS targets: libnfs (loaded at run time) and an NFS-Ganesha server with its VFS
# backend for the tests (NFSv3 registers with rpcbind, which the tests start by PID).
ldconfig -p 2>/dev/null | grep 'libnfs\.so\.13' >/dev/null || need+=(libnfs13)
command -v ganesha.nfsd >/dev/null 2>&1 || need+=(nfs-ganesha)
ls /usr/lib/*/ganesha/libfsalvfs.so /usr/lib64/ganesha/libfsalvfs.so >/dev/null 2>&1 || need+=(nfs-ganesha-vfs)
command -v rpcbind >/dev/null 2>&1 || need+=(rpcbind)
# SMB targets: a Samba server for the tests (smbd, smbpasswd) and smbclient to compare.
command -v smbd >/dev/null 2>&1 || need+=(samba)
command -v smbclient >/dev/null 2>&1 || need+=(smbclient)
# Live metrics and the status line (issue 26): a real Prometheus server and promtool
# scrape `--metrics`; tmux gives the status line a terminal to draw on.
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v curl >/dev/null 2>&1 || need+=(curl)
# MPI (issue 16): Open MPI for `--features mpi` and its tests; clang for rsmpi's
# bindings (bindgen needs libclang).
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/mpi/mpi.h ] || command -v mpicc >/dev/null 2>&1 || need+=(libopenmpi-dev)
command -v clang >/dev/null 2>&1 || need+=(clang)
ldconfig -p 2>/dev/null | grep 'libclang' >/dev/null || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "warning: missing ${need[*]} and cannot install them (not root or no apt-get); tests that need them will say so" >&2
  fi
fi
# Python's HdrHistogram (hdrh): an independent decoder of the result's raw histograms
# and of the --hdr-log interval log (tests/it/histograms.rs).
python3 -c 'import hdrh' >/dev/null 2>&1 || python3 -m pip install -q hdrhistogram || \
  echo "warning: cannot install the hdrhistogram Python package; the raw-histogram tests will say so" >&2
rustup component add rustfmt clippy >/dev/null 2>&1 || true

cargo fmt --all -- --check
# Module edges only as docs/architecture.md's module table allows, no clap outside
# the edge, no import cycle among the files of a module.
bash scripts/deps.sh
# Function lengths over all of src/: 80 lines, 120 for a marked flat list, never
# longer than the baseline (scripts/fn-lengths.baseline) says.
python3 scripts/fn-lengths.py --top 5 src
# The default build (no SMB, no MPI) must stay clean on its own.
cargo clippy --all-targets -- -D warnings
# The optional features: `smb` (the smb:// client; the smb crate needs Rust 1.89 and
# ~250 more crates) and `mpi` (mpirun runs). One build with every feature lints and
# tests them together with everything else, so the crate is compiled for tests once.
cargo clippy --all-targets --all-features -- -D warnings
cargo test --lib --bins --all-features -- --test-threads=2
# Integration tests measure real time (rates, latencies, stalls): one at a time, so
# they do not steal each other's CPU. With --all-features this includes the SMB
# tests against a real smbd and the mpirun tests (it::mpi::). Their output passes
# through scripts/slowest-tests.py unchanged, which then names the 10 slowest (one
# at a time, libtest's own lines show when each starts and ends); the status is
# cargo's (pipefail). Colours as on a terminal when this runs on one.
color=auto
[ -t 1 ] && color=always
cargo test --test tests --all-features -- --test-threads=1 --color "$color" |
  python3 scripts/slowest-tests.py 10
# The soak campaign's 3-minute form (docs/methodology.md, "Soak campaigns"): the four
# network initiators at once under a fault schedule from a drawn, printed seed (rerun
# a failure with `--seed S`), on the debug build the integration tests just built.
# It needs root for its network namespaces, tgtd and smbd.
if [ "$(id -u)" = 0 ]; then
  scripts/soak.sh --minutes 3 --ioscope "${CARGO_TARGET_DIR:-target}/debug/ioscope"
else
  echo "warning: not root: the soak campaign (scripts/soak.sh --minutes 3) is skipped" >&2
fi
