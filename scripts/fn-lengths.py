#!/usr/bin/env python3
"""Function lengths in Rust sources (issue 11: no function in src/run or src/plan
longer than 120 lines). Prints the longest functions under the given directories and
exits 1 if any exceeds --max. A function runs from its `fn` line to its closing brace;
strings, char literals and comments are skipped when matching braces, so the count is
the number of source lines the body spans (attributes and doc comments excluded).

usage: scripts/fn-lengths.py [--max N] [--top K] DIR...
"""
import os
import re
import sys

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def strip_code(text):
    """Returns text with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i : j + 1]))
            i = j + 1
        elif c == "'":
            # char literal ('x', '\n', '\u{1}') or a lifetime ('a)
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    with open(path, encoding="utf-8") as f:
        code = strip_code(f.read())
    lines = code.split("\n")
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
        found.append((end - idx + 1, path, idx + 1, m.group(1)))
    return found


def main(argv):
    limit, top, dirs = 120, 10, []
    it = iter(argv)
    for a in it:
        if a == "--max":
            limit = int(next(it))
        elif a == "--top":
            top = int(next(it))
        else:
            dirs.append(a)
    allf = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if name.endswith(".rs"):
                    allf.extend(functions(os.path.join(root, name)))
    allf.sort(reverse=True)
    for length, path, line, name in allf[:top]:
        mark = "  TOO LONG" if length > limit else ""
        print(f"{length:5} {path}:{line} {name}{mark}")
    over = [f for f in allf if f[0] > limit]
    if over:
        print(f"{len(over)} function(s) longer than {limit} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
