#!/usr/bin/env python3
"""Function lengths in Rust sources: a ratchet over src/ (docs/architecture.md).

A function runs from its `fn` line to its closing brace; strings, char literals and
comments are skipped when matching braces, so its length is the number of source
lines the body spans (attributes and doc comments excluded). Rules:

- at most --max lines (80);
- a function whose body is a flat list of rules (a match over option names, a table)
  may reach --flat (120) when the line right above it (above its attributes and doc
  comments) is `// fn-length: flat list`;
- a function listed in the baseline (--baseline, scripts/fn-lengths.baseline: path,
  name, length) may keep its recorded length, never grow beyond it;
- nothing may exceed --flat, baseline or not.

Exits 1 on any breach, printing the longest functions (--top) and each breach.
`--write-baseline` records every function now over --max (and within --flat) as the
new baseline; run it after shortening a listed function so the ratchet tightens.

usage: scripts/fn-lengths.py [--max N] [--flat N] [--top K] [--baseline FILE]
                             [--write-baseline] DIR...
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rust_source import strip_code  # noqa: E402

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")
FLAT_MARK = "// fn-length: flat list"
DEFAULT_BASELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fn-lengths.baseline")


def flat_marked(raw, idx):
    """True when the line above the function's attributes and doc comments is the
    flat-list mark."""
    j = idx - 1
    depth = 0  # inside a multi-line attribute, read bottom-up
    while j >= 0:
        s = raw[j].strip()
        if depth > 0:
            depth += s.count("]") - s.count("[")
            depth = max(depth, 0)
            j -= 1
            continue
        if s.startswith("///") or s.startswith("#[") or s.startswith("#!["):
            j -= 1
        elif s.endswith("]") or s.endswith(")]"):
            # the last line of a multi-line attribute
            depth = s.count("]") - s.count("[")
            j -= 1
        else:
            break
    return j >= 0 and raw[j].strip() == FLAT_MARK


def functions(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    raw = text.split("\n")
    lines = strip_code(text).split("\n")
    found = []
    for idx, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        # Find the body's opening brace (or a ';' for a declaration without body).
        depth, start, end = 0, None, None
        for j in range(idx, len(lines)):
            for ch in lines[j]:
                if start is None and ch == ";" and depth == 0:
                    end = -1
                    break
                if ch == "{":
                    if start is None:
                        start = j
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if start is not None and depth == 0:
                        end = j
                        break
                elif ch in "([" and start is None:
                    depth += 1
                elif ch in ")]" and start is None:
                    depth -= 1
            if end is not None:
                break
        if end is None or end < 0:
            continue
        found.append((end - idx + 1, path, idx + 1, m.group(1), flat_marked(raw, idx)))
    return found


def read_baseline(path):
    """{(path, name): [lengths, longest first]}."""
    base = {}
    if not os.path.exists(path):
        return base
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 3 or not parts[2].isdigit():
                sys.exit(f"{path}:{n}: expected 'PATH NAME LENGTH', got '{line}'")
            base.setdefault((parts[0], parts[1]), []).append(int(parts[2]))
    for v in base.values():
        v.sort(reverse=True)
    return base


def write_baseline(path, over, limit, dirs):
    """Writes the functions now over the limit; entries outside dirs are kept."""
    kept = [
        (length, p, 0, name, False)
        for (p, name), lengths in read_baseline(path).items()
        for length in lengths
        if not any(p.startswith(d + "/") or p == d for d in dirs)
    ]
    over = over + kept
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            "# Functions longer than %d lines when the ratchet started (scripts/fn-lengths.py):\n"
            "# PATH NAME LENGTH. Each may shrink, never grow; none may be added. Shorten one,\n"
            "# then rewrite this file with `python3 scripts/fn-lengths.py --write-baseline src`.\n" % limit
        )
        for length, p, _, name, _ in sorted(over, key=lambda x: (x[1], x[3], -x[0])):
            f.write(f"{p} {name} {length}\n")


def main(argv):
    limit, flat, top, dirs = 80, 120, 10, []
    baseline, write = DEFAULT_BASELINE, False
    it = iter(argv)
    for a in it:
        if a == "--max":
            limit = int(next(it))
        elif a == "--flat":
            flat = int(next(it))
        elif a == "--top":
            top = int(next(it))
        elif a == "--baseline":
            baseline = next(it)
        elif a == "--write-baseline":
            write = True
        elif a.startswith("-"):
            sys.exit(__doc__)
        else:
            dirs.append(os.path.normpath(a))
    allf = []
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            subdirs.sort()
            for name in sorted(files):
                if name.endswith(".rs"):
                    allf.extend(functions(os.path.normpath(os.path.join(root, name))))
    allf.sort(key=lambda x: (-x[0], x[1], x[2]))

    too_long = [f for f in allf if f[0] > flat]
    over = [f for f in allf if limit < f[0] <= flat and not f[4]]
    if write:
        write_baseline(baseline, over, limit, dirs)
        print(f"wrote {len(over)} function(s) to {baseline}")
        if too_long:
            print(f"note: {len(too_long)} function(s) over {flat} lines cannot be baselined", file=sys.stderr)

    base = read_baseline(baseline)
    errors, baselined = [], set()
    for f in too_long:
        errors.append(f"{f[1]}:{f[2]} {f[3]}: {f[0]} lines, over the hard limit of {flat}")
    by_key = {}
    for f in over:
        by_key.setdefault((f[1], f[3]), []).append(f)
    for key, fs in sorted(by_key.items()):
        allowed = base.get(key, [])
        for k, f in enumerate(fs):  # longest first, against the longest recorded
            if k >= len(allowed):
                errors.append(
                    f"{f[1]}:{f[2]} {f[3]}: {f[0]} lines, over {limit} (split it; a flat list of "
                    f"rules may take '{FLAT_MARK}' up to {flat})"
                )
            elif f[0] > allowed[k]:
                errors.append(f"{f[1]}:{f[2]} {f[3]}: {f[0]} lines, grew beyond its baseline of {allowed[k]}")
            else:
                baselined.add(key)
    # Baseline entries that shrank or went: say so, the baseline can tighten.
    slack = []
    for key, lengths in sorted(base.items()):
        now = sorted((f[0] for f in by_key.get(key, [])), reverse=True)
        if not any(key[0].startswith(d + "/") or key[0] == d for d in dirs):
            continue
        for k, length in enumerate(lengths):
            cur = now[k] if k < len(now) else None
            if cur is None or cur < length:
                slack.append(f"{key[0]} {key[1]}: baseline {length}, now {cur if cur else 'within ' + str(limit)}")

    print(f"longest functions (limit {limit}, flat lists {flat}, {sum(len(v) for v in base.values())} in the baseline):")
    for length, path, line, name, marked in allf[:top]:
        mark = ""
        if length > flat:
            mark = "  TOO LONG"
        elif marked:
            mark = "  (flat list)"
        elif length > limit:
            mark = "  (baseline)" if (path, name) in baselined else "  TOO LONG"
        print(f"{length:5} {path}:{line} {name}{mark}")
    if slack:
        print(f"{len(slack)} baseline entr{'y' if len(slack) == 1 else 'ies'} shrank; tighten with --write-baseline:")
        for s in slack[:top]:
            print(f"  {s}")
    if errors:
        for e in errors:
            print(f"error: {e}", file=sys.stderr)
        print(f"{len(errors)} function(s) too long", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
