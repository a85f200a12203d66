#!/usr/bin/env python3
"""Converts every published foreign definition kept under
tests/fixtures/compat/published/ with `ioscope convert` and tabulates the
outcome: clean (exit 0: nothing dropped), drops something (exit 3, the options
listed), or refused (any other exit, with the error).

vdbench: each parameter file (`vdbench/*.parm`) opens with a comment naming its
source; a line `* run: ARGS` gives the command-line arguments its source runs it
with (`-j`, `lun=/dev/sdb`, ...); it is converted as `ioscope convert vdbench -f
FILE ARGS` (with `--target /tmp/x` when a lun is a Windows path).

diskspd: each command line (`diskspd/*.txt`) or XML profile (`diskspd/*.xml`) names
its source in its first line; it is converted as `ioscope convert --target /tmp/x
FILE` (their Windows paths name nothing here).

fio: each job file (`fio/*.fio`) opens with `# source: URL`; a line `# run: ARGS`
gives its source's command line (`--filename=/dev/sdf`, `--section=NAME`), led by
any `NAME=value` environment its source sets for the file's `${NAME}`s; it is
converted as `ioscope convert fio FILE ARGS` with that environment. A file that
another fixture includes (`include FILE`) is part of that fixture, not a row.

    python3 scripts/published.py [--bin target/debug/ioscope] [--format all|vdbench|fio|diskspd] [--markdown]

With --markdown it prints the tables docs/compat-vdbench.md and docs/compat-fio.md
carry (`--format vdbench` or `--format fio` prints one of them).
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLISHED = os.path.join(ROOT, "tests", "fixtures", "compat", "published")
# Per format: fixture folder, fixture extension, the comment that opens a
# `run:` line, and the name `ioscope convert` takes.
FORMATS = {
    "vdbench": ("vdbench", ".parm", r"\*", "vdbench"),
    "fio": ("fio", ".fio", "#", "fio"),
    # diskspd lines (`.txt`) and XML profiles (`.xml`), on `--target /tmp/x`.
    "diskspd": ("diskspd", (".txt", ".xml"), "#", "diskspd"),
}
ENV_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def run_args(path, comment):
    """The `run:` arguments of a fixture (its source's command line)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(comment + r"\s*run:\s*(.*)", line)
            if m:
                return m.group(1).split()
    return []


def split_env(args):
    """(environment, arguments): the leading `NAME=value` words of a fio run line."""
    env = {}
    while args and ENV_WORD.match(args[0]):
        name, value = args[0].split("=", 1)
        env[name] = value
        args = args[1:]
    return env, args


def convert(binary, fmt, path):
    """(outcome, detail) of `ioscope convert FORMAT PATH ARGS`."""
    _, _, comment, name = FORMATS[fmt]
    args = run_args(path, comment)
    env = None
    if fmt == "vdbench":
        cmd = [binary, "convert", name, "-f", path] + args
        # A Windows lun names nothing here: on `--target /tmp/x`, as diskspd's lines.
        with open(path, encoding="utf-8") as f:
            if re.search(r"lun=(\\\\|[A-Za-z]:)", f.read()):
                cmd += ["--target", "/tmp/x"]
    elif fmt == "diskspd":
        # Their Windows paths name nothing here, as in published_diskspd_lines_convert_as_expected.
        cmd = [binary, "convert", "--target", "/tmp/x", path]
    else:
        extra, args = split_env(args)
        env = dict(os.environ, **extra)
        cmd = [binary, "convert", name, path] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode == 0:
        return "clean", ""
    if p.returncode == 3:
        place = r"(?: at [^:]+:\d+)?" if fmt == "vdbench" else r"(?: at (?:argument \d+|[^:]+:\d+))?"
        dropped = [
            re.sub(r"^warning: not translated(?: \(unsupported\))?" + place + ": ", "", l)
            for l in lines
            if l.startswith("warning: not translated")
        ]
        return "drops", "; ".join(dropped)
    err = next((l for l in lines if l.startswith("error:")), lines[-1] if lines else "")
    return "refused", err.replace("error: ", "", 1)


def included(folder, files):
    """Fixtures another fixture includes (`include FILE`): parts of it, not rows."""
    names = set()
    for f in files:
        with open(os.path.join(folder, f), encoding="utf-8") as fh:
            for line in fh:
                m = re.match(r"\s*include\s+(\S+)", line)
                if m:
                    names.add(os.path.basename(m.group(1)))
    return names


def tabulate(binary, fmt, markdown):
    """Converts one format's fixtures and prints its table and summary line."""
    sub, ext, _, _ = FORMATS[fmt]
    folder = os.path.join(PUBLISHED, sub)
    files = sorted(f for f in os.listdir(folder) if f.endswith(ext) and f != "expected.txt")
    if fmt == "fio":
        parts = included(folder, files)
        files = [f for f in files if f not in parts]
    rows = []
    for f in files:
        outcome, detail = convert(binary, fmt, os.path.join(folder, f))
        rows.append((f, outcome, detail))
    counts = {k: sum(1 for r in rows if r[1] == k) for k in ("clean", "drops", "refused")}
    if markdown:
        print("| File | Outcome | What was dropped, or why refused |")
        print("|------|---------|----------------------------------|")
        for f, outcome, detail in rows:
            detail = detail.replace("|", "\\|").replace(os.path.join(folder, ""), "")
            print(f"| `{f}` | {outcome} | {detail} |")
        print()
    else:
        for f, outcome, detail in rows:
            print(f"{outcome:8} {f}: {detail}")
    print(f"{len(rows)} files: {counts['clean']} clean, {counts['drops']} drop something, "
          f"{counts['refused']} refused")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "ioscope"))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--format", choices=["all", "vdbench", "fio", "diskspd"], default="all")
    args = ap.parse_args()
    formats = list(FORMATS) if args.format == "all" else [args.format]
    for i, fmt in enumerate(formats):
        if len(formats) > 1:
            print(("\n" if i else "") + f"{fmt}:")
        tabulate(args.bin, fmt, args.markdown)


if __name__ == "__main__":
    sys.exit(main())
