#!/usr/bin/env bash
# The test command (README): installs what the tests need on a fresh machine, then
# runs fmt, clippy and every test. Safe to run again; installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v losetup >/dev/null 2>&1 || need+=(util-linux)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v zstd >/dev/null 2>&1 || need+=(zstd)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# NBD targets: a server for the tests and the client library ioscope loads.
command -v nbdkit >/dev/null 2>&1 || need+=(nbdkit)
ldconfig -p 2>/dev/null | grep -q 'libnbd\.so\.0 ' || need+=(libnbd0)
# iSCSI targets: tgtd for the tests and the client library ioscope loads.
command -v tgtd >/dev/null 2>&1 || need+=(tgt)
ldconfig -p 2>/dev/null | grep -q 'libiscsi\.so\.7 ' || need+=(libiscsi7)
# MPI (issue 16): Open MPI for `--features mpi` and its tests; clang for rsmpi's
# bindings (bindgen needs libclang).
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/mpi/mpi.h ] || command -v mpicc >/dev/null 2>&1 || need+=(libopenmpi-dev)
command -v clang >/dev/null 2>&1 || need+=(clang)
ldconfig -p 2>/dev/null | grep -q 'libclang' || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "warning: missing ${need[*]} and cannot install them (not root or no apt-get); tests that need them will say so" >&2
  fi
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

cargo fmt --all -- --check
# Issue 11: no function in src/plan longer than 120 lines (src/run joins when split).
python3 scripts/fn-lengths.py --max 120 --top 3 src/plan
cargo clippy --all-targets -- -D warnings
cargo test --lib --bins -- --test-threads=2
# Integration tests measure real time (rates, latencies, stalls): one at a time, so
# they do not steal each other's CPU.
cargo test --test tests -- --test-threads=1
# The `mpi` feature: clippy and the mpirun tests (three runs of 3-10 s under
# `mpirun -n 4`; about 30 s plus one build of the crate with the feature).
cargo clippy --features mpi --all-targets -- -D warnings
cargo test --features mpi --test tests it::mpi:: -- --test-threads=1
