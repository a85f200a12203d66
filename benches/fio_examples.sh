#!/usr/bin/env bash
# Runs `ioscope convert` on every *.fio job file in a directory (fio's own examples/
# folder, fetched from the fio source tree; they are not kept in this repository) and
# counts the files translated with nothing dropped and those refused, with the first
# reason for each refusal and the most common reasons.
#
# usage: benches/fio_examples.sh DIR [IOSCOPE_BINARY]   (-v lists every file)
set -u
verbose=0
if [ "${1:-}" = "-v" ]; then verbose=1; shift; fi
dir=${1:?usage: fio_examples.sh [-v] DIR [IOSCOPE_BINARY]}
bin=${2:-$(dirname "$0")/../target/debug/ioscope}
[ -x "$bin" ] || { echo "no ioscope binary at $bin (cargo build first)" >&2; exit 2; }
ok=0 refused=0
reasons=$(mktemp)
trap 'rm -f "$reasons"' EXIT
for f in "$dir"/*.fio; do
    [ -e "$f" ] || continue
    err=$("$bin" convert "$f" 2>&1 >/dev/null)
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
