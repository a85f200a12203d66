#!/usr/bin/env bash
# Module dependency checks (docs/architecture.md), run by scripts/test.sh. The work
# is in scripts/deps.py: prints the edges between top-level modules of src/ and fails
#  - on an edge `from -> to` that is not in `from`'s "reads" column of the module
#    table in docs/architecture.md (the allow-list; naming one place that uses it),
#  - on clap (or crate::cli) outside src/cli and src/main.rs,
#  - on an import cycle among the files of one top-level module (A uses B, B uses A,
#    or longer), but for the documented temporary exceptions listed in deps.py.
# Comments, doc comments and strings are not references: only code counts.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/deps.py "$@"
