#!/usr/bin/env bash
# Module dependency check (docs/architecture.md): prints the edges between top-level
# modules of src/ ("from -> to", with the number of `crate::` references) and fails
# on a cycle, or on an edge the architecture forbids. Comments and doc comments are
# not references: only code lines count.
set -euo pipefail
cd "$(dirname "$0")/.."

# Edges that must never appear, whatever else changes ("from to", one a line).
# clap lives at the edge (cli, main.rs); reporters read only the result model;
# engines know nothing of runs or reports; plan knows nothing of how I/O is done;
# vocab (the value types plan and result share) reads nothing else in the crate.
forbidden=$(
  cat <<'EOF'
report run
report stats
report engine
report target
report app
result plan
result run
result stats
engine run
engine report
engine app
plan target
plan engine
plan run
plan report
target run
target report
stats run
stats report
stats engine
stats target
clock run
rng run
run app
run cli
report cli
plan cli
plan result
vocab app
vocab cli
vocab cluster
vocab clock
vocab data
vocab engine
vocab errors
vocab net
vocab plan
vocab report
vocab result
vocab rng
vocab run
vocab stats
vocab stdout
vocab sysinfo
vocab target
EOF
)

edges=$(
  for dir in src/*/ src/*.rs; do
    from=$(basename "$dir" .rs)
    case "$from" in main | lib) continue ;; esac
    # Code lines only: drop // and //! comments, then collect crate::module paths.
    find "$dir" -name '*.rs' -print0 2>/dev/null | xargs -0 cat 2>/dev/null |
      sed -E 's#^\s*//.*$##; s#([^:])//.*$#\1#' |
      grep -oE 'crate::[a-z_]+' | sed 's/crate:://' | grep -vx "$from" |
      sed "s/^/$from /" || true
  done | sort | uniq -c | awk '{print $2, $3, $1}'
)

echo "module edges (from -> to: references):"
echo "$edges" | awk 'NF {printf "  %-8s -> %-8s %s\n", $1, $2, $3}'

status=0
# clap outside the edge.
clap_users=$(grep -rlE '\bclap::|crate::cli\b' src --include='*.rs' | grep -vE '^src/(cli/|main\.rs)' || true)
if [ -n "$clap_users" ]; then
  echo "error: clap or crate::cli used outside src/cli and src/main.rs:" >&2
  echo "$clap_users" | sed 's/^/  /' >&2
  status=1
fi

while read -r from to; do
  [ -z "$from" ] && continue
  if echo "$edges" | grep -qE "^$from $to "; then
    echo "error: forbidden edge $from -> $to" >&2
    status=1
  fi
done <<<"$forbidden"

# tsort reports a loop when the graph has a cycle.
if ! cycle=$(echo "$edges" | awk 'NF {print $1, $2}' | tsort 2>&1 >/dev/null) || [ -n "$cycle" ]; then
  echo "error: dependency cycle among top-level modules:" >&2
  echo "$cycle" | sed 's/^/  /' >&2
  status=1
fi

if [ "$status" = 0 ]; then
  echo "deps: no cycle, no forbidden edge"
fi
exit "$status"
