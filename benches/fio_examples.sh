#!/usr/bin/env bash
# Runs `ioscope convert` on every *.fio job file in a directory (fio's own examples/
# folder, fetched from the fio source tree; they are not kept in this repository) and
# counts the files translated with nothing dropped and those refused, with the first
# reason for each refusal and the most common reasons.
#
# Fourteen examples take values from environment variables (${VAR}); fio substitutes
# an empty string for an unset one, and so does ioscope. The files are counted twice:
# with none of those variables set, and with the values the examples' own comments
# give (placeholders where a comment only says "your credentials"; those files' engines
# are ones ioscope lacks, so they are refused for the engine either way).
#
# Some examples are meant to be run with fio options on the command line around the
# file. In the second count such a file is converted with the command line its own
# comment gives, as `ioscope convert fio OPTIONS… FILE` (example_args below):
# sprandom.fio (`fio --filename=/dev/nvme0n1 examples/sprandom.fio`, whose target is
# named nowhere in the file) and xnvme-compare.fio / xnvme-zoned.fio, whose first
# command line is the io_uring baseline (`--section=default --ioengine=io_uring
# --sqthread_poll=1 --filename=/dev/nvme0n1`; their other lines use the xnvme engine,
# which ioscope lacks). The first count converts every file alone, so a file that
# needs its command line is counted there as it fares without it.
#
# usage: benches/fio_examples.sh DIR [IOSCOPE_BINARY]   (-v lists every file)
set -u
verbose=0
if [ "${1:-}" = "-v" ]; then verbose=1; shift; fi
dir=${1:?usage: fio_examples.sh [-v] DIR [IOSCOPE_BINARY]}
bin=${2:-$(dirname "$0")/../target/debug/ioscope}
[ -x "$bin" ] || { echo "no ioscope binary at $bin (cargo build first)" >&2; exit 2; }
# The variables the examples read, and the values their comments ask for.
example_vars="uri FIO_BS FIO_RW FIO_IODEPTH FIO_DIR GPU_DEV_IDS POOL CONT S3_KEY S3_ID \
SSE_KEY STORAGE_CLASS SWIFT_id"
example_env() {
    case "$1" in
    nbd.fio) echo "uri=nbd+unix:///?socket=/var/tmp/socket" ;;
    sprandom.fio) echo "FIO_BS=4096" ;;
    xnvme-fdp.fio) echo "FIO_BS=512 FIO_RW=read FIO_IODEPTH=16" ;;
    xnvme-*.fio) echo "FIO_BS=512 FIO_RW=verify FIO_IODEPTH=16" ;;
    libcufile-*.fio | libhipfile-*.fio) echo "FIO_DIR=/mnt/gds GPU_DEV_IDS=0" ;;
    dfs.fio) echo "POOL=pool CONT=cont" ;;
    http-s3*.fio) echo "S3_KEY=key S3_ID=id SSE_KEY=ssekey STORAGE_CLASS=STANDARD" ;;
    http-swift.fio) echo "SWIFT_id=token" ;;
    esac
}

# The fio options an example's comment puts on its command line (empty: none).
example_args() {
    case "$1" in
    sprandom.fio) echo "--filename=/dev/nvme0n1" ;;
    xnvme-compare.fio | xnvme-zoned.fio)
        echo "--section=default --ioengine=io_uring --sqthread_poll=1 --filename=/dev/nvme0n1"
        ;;
    esac
}

count() { # count WITH_ENV(0|1)
ok=0 refused=0
: >"$reasons"
for f in "$dir"/*.fio; do
    [ -e "$f" ] || continue
    # shellcheck disable=SC2086 # word splitting of the variable lists is wanted
    if [ "$1" -eq 1 ]; then
        args=$(example_args "$(basename "$f")")
        if [ -n "$args" ]; then
            err=$(env -u ${example_vars// / -u } $(example_env "$(basename "$f")") \
                "$bin" convert fio $args "$f" 2>&1 >/dev/null)
        else
            err=$(env -u ${example_vars// / -u } $(example_env "$(basename "$f")") \
                "$bin" convert "$f" 2>&1 >/dev/null)
        fi
    else
        err=$(env -u ${example_vars// / -u } "$bin" convert "$f" 2>&1 >/dev/null)
    fi
    rc=$?
    if [ $rc -eq 0 ]; then
        ok=$((ok + 1))
        [ $verbose -eq 1 ] && echo "ok       $(basename "$f")"
    else
        refused=$((refused + 1))
        # The engine when it is one ioscope lacks (the options after it are often its
        # own), else the first dropped option (exit 3) or the error (exit 2), without
        # its place.
        first=$(printf '%s\n' "$err" | grep -m1 -E '^warning: not translated .*: ioengine=')
        [ -n "$first" ] || first=$(printf '%s\n' "$err" | grep -m1 -E '^(warning: not translated|error:)')
        first=$(printf '%s\n' "$first" |
            sed -E 's/^warning: not translated \(unsupported\) at [^ ]+: //; s/^error: //; s/^[^ ]+:[0-9]+: //')
        printf '%s\n' "$first" >>"$reasons"
        [ $verbose -eq 1 ] && echo "refused  $(basename "$f") (exit $rc): $first"
    fi
done
echo "converted with nothing dropped: $ok"
echo "refused: $refused"
echo "top reasons:"
sed -E 's/=.*//; s/ .*//' "$reasons" | sort | uniq -c | sort -rn | head -15
}

reasons=$(mktemp)
trap 'rm -f "$reasons"' EXIT
echo "== with none of the examples' environment variables set"
count 0
echo
echo "== with the environment variables the examples' comments ask for"
count 1
