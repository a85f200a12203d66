#!/usr/bin/env python3
"""Dependency checks over src/ (docs/architecture.md, "Top-level modules and what
they may read"). Run by scripts/deps.sh.

1. Top-level edges. Every `crate::X` reference (in `use` trees and in code paths;
   comments, doc comments and strings are not references) from a file of module
   `from` to module `X` is an edge `from -> X`. The allowed edges are read from the
   "reads" column of the module table in docs/architecture.md: any live edge that is
   not listed fails, naming the edge and one place that uses it. src/main.rs is the
   row `main.rs` (its paths start with `ioscope::`).
2. clap only in src/cli and src/main.rs.
3. File-level cycles inside a top-level module: file A refers to file B when a
   `use` or a path in A's code resolves (through `crate::`, `super::`, `self::` or a
   child module's name, and through the `pub use` re-exports of a module file) to an
   item of B. A cycle among the files of one module fails, except for the edges in
   CYCLE_EXCEPTIONS. A module file (mod.rs, or X.rs over a directory X/) over its
   own children is their interface, not a layer: its declarations, re-exports and
   calls down are not edges (its children's uses of it are). Test modules
   (`#[cfg(test)] mod ... { }`) are not counted.

usage: scripts/deps.py [--quiet]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rust_source import strip_code  # noqa: E402

DOC = "docs/architecture.md"
TABLE_TITLE = "Top-level modules and what they may read"

# File edges (from, to) that close a cycle and are allowed for now: none. The last
# ones (plan/model.rs with overrides, engine_opts, priority and zbd) went when the
# shared types moved to `vocab`, `plan::engine_kind`, `plan::outputs` and
# `plan::effective`. Do not add to this set: fix the cycle. The check says when an
# entry no longer closes a cycle, so the set only shrinks.
CYCLE_EXCEPTIONS: set = set()

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
KEYWORD_ROOTS = ("crate", "super", "self")
DEF_RE = re.compile(
    r"\b(?:struct|enum|union|trait|type|fn|const|static|mod)\s+(" + IDENT + r")|\bmacro_rules!\s*(" + IDENT + ")"
)


def module_path(path):
    """src/a/b.rs -> ('a', 'b'); src/a/mod.rs -> ('a',); src/main.rs -> ('main.rs',)."""
    rel = os.path.relpath(path, "src")[: -len(".rs")].split(os.sep)
    if rel == ["main"]:
        return ("main.rs",)
    if rel == ["lib"]:
        return ()
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel)


class File:
    def __init__(self, path):
        self.path = path
        self.mod = module_path(path)
        with open(path, encoding="utf-8") as f:
            self.code = strip_code(f.read())
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.code)]
        self.refs = []  # (segments as written, module path at the reference, line, is_reexport)
        self.defs = {m.group(1) or m.group(2) for m in DEF_RE.finditer(self.code)}
        self.reexports = {}  # name -> absolute path; "*" -> [absolute paths]

    def line_of(self, offset):
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1


TOKEN = re.compile(r"\s*(::|\{|\}|,|\*|;|" + IDENT + r"|.)", re.S)


def parse_use(code, pos):
    """Parses the use tree starting at pos (after `use`). Returns (leaves, end) where
    each leaf is (segments, alias, offset); a glob leaf ends with '*'."""
    toks = []
    while True:
        m = TOKEN.match(code, pos)
        if not m or m.group(1) == "" or m.group(1) == ";":
            end = m.end() if m else len(code)
            break
        toks.append((m.group(1), m.start(1)))
        pos = m.end()
    leaves = []

    def tree(i, prefix):
        segs = list(prefix)
        first = None
        while i < len(toks):
            t, off = toks[i]
            first = off if first is None else first
            if t == "::":
                i += 1
            elif t == "{":
                i += 1
                while i < len(toks) and toks[i][0] != "}":
                    if toks[i][0] == ",":
                        i += 1
                        continue
                    i = tree(i, segs)
                return i + 1
            elif t == "*":
                leaves.append((segs + ["*"], None, off))
                return i + 1
            elif t in (",", "}"):
                break
            elif t == "as":
                alias = toks[i + 1][0] if i + 1 < len(toks) else None
                leaves.append((segs, alias, first))
                return i + 2
            else:
                segs.append(t)
                i += 1
        if segs and segs != list(prefix):
            leaves.append((segs, None, first))
        return i

    tree(0, [])
    # `{self, X}` names the prefix itself.
    leaves = [([s for s in segs if s != "self"] if segs[-1:] == ["self"] else segs, a, o) for segs, a, o in leaves]
    return leaves, end


SCAN = re.compile(
    r"(?P<testmod>#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<tname>" + IDENT + r")\s*\{)"
    r"|(?P<mod>\bmod\s+(?P<mname>" + IDENT + r")\s*\{)"
    r"|(?P<use>(?P<pub>\bpub(?:\([^)]*\))?\s+)?\buse\s)"
    r"|(?P<path>(?<![\w:$])(?P<root>" + IDENT + r")(?P<rest>(?:\s*::\s*" + IDENT + r")+))"
    r"|(?P<open>\{)|(?P<close>\})"
)


def scan(f, child_mods):
    """Collects f's references: (segments, module path at the reference, offset, reexport, in_test)."""
    code, pos, depth, stack = f.code, 0, 0, []
    while True:
        m = SCAN.search(code, pos)
        if not m:
            return
        cur = f.mod + tuple(name for name, _, _ in stack)
        in_test = any(t for _, _, t in stack)
        if m.group("testmod") or m.group("mod"):
            depth += 1
            stack.append((m.group("tname") or m.group("mname"), depth, bool(m.group("testmod"))))
            pos = m.end()
        elif m.group("open"):
            depth += 1
            pos = m.end()
        elif m.group("close"):
            if stack and stack[-1][1] == depth:
                stack.pop()
            depth -= 1
            pos = m.end()
        elif m.group("use"):
            leaves, pos = parse_use(code, m.end())
            for segs, alias, off in leaves:
                f.refs.append((segs, cur, off, bool(m.group("pub")), in_test, alias))
        else:
            root = m.group("root")
            segs = [root] + re.findall(IDENT, m.group("rest"))
            if root in KEYWORD_ROOTS or root == "ioscope" or cur + (root,) in child_mods:
                f.refs.append((segs, cur, m.start(), False, in_test, None))
            pos = m.end()


def absolute(segs, cur, f, mods):
    """The absolute module path a reference names, or None (std, external crates, locals)."""
    if not segs:
        return None
    root = segs[0]
    if root == "crate" or (root == "ioscope" and f.mod == ("main.rs",)):
        return tuple(segs[1:])
    if root == "super":
        base = list(cur)
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
        return tuple(base) + tuple(segs)
    if root == "self":
        return cur + tuple(segs[1:])
    if cur + (root,) in mods:
        return cur + tuple(segs)
    return None


def resolve(path, mods, seen=None):
    """The file (a File) that defines what an absolute path names: the longest prefix
    that is a file module, then through that file's `pub use` re-exports."""
    seen = seen or set()
    for k in range(len(path), 0, -1):
        f = mods.get(path[:k])
        if f is None:
            continue
        if k < len(path) and (f.path, path[k]) not in seen:
            seen.add((f.path, path[k]))
            name = path[k]
            if name in f.reexports and name not in f.defs:
                return resolve(f.reexports[name] + path[k + 1 :], mods, seen)
            if name not in f.defs:
                for target in f.reexports.get("*", []):
                    g = resolve(target + (name,), mods, seen)
                    if g is not None and g is not f and name in g.defs:
                        return g
        return f
    return None


def reads_table():
    """{module: set of modules it may read} from the module table of the docs."""
    with open(DOC, encoding="utf-8") as fh:
        text = fh.read()
    at = text.find(TABLE_TITLE)
    if at < 0:
        sys.exit(f"deps: cannot find '{TABLE_TITLE}' in {DOC}")
    rows = []
    for line in text[at:].split("\n")[1:]:
        if not line.strip():
            if rows:
                break
            continue
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("module", "") or set(cells[0]) <= set("-: "):
            continue
        rows.append((cells[0].strip("`"), cells[-1]))
    names = {name for name, _ in rows}
    allowed, problems = {}, []
    for name, reads in rows:
        # Parenthesised notes say what for; a module may be named with a path in it.
        plain = re.sub(r"\([^)]*\)", "", reads)
        allowed[name] = set()
        for item in plain.split(","):
            item = item.strip().strip("`").strip()
            if item in ("", "—", "-", "nothing") or item.startswith("nothing"):
                continue
            word = item.split("::")[0].split()[0].strip("`")
            if word in names:
                allowed[name].add(word)
            else:
                problems.append(f"{DOC}: module `{name}` reads `{item}`, which is not a module of the table")
    return allowed, problems


def sccs(nodes, edges):
    """Tarjan's strongly connected components with more than one node."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def reaches(edges, start, goal):
    """True when goal can be reached from start."""
    seen, todo = {start}, [start]
    while todo:
        v = todo.pop()
        if v == goal:
            return True
        for w in edges.get(v, ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return False


def short_cycle(comp, edges):
    """One cycle through the component's first node (breadth-first, shortest)."""
    start, members = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    for v in queue:
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main(argv):
    quiet = "--quiet" in argv
    files = []
    for root, _, names in os.walk("src"):
        for name in sorted(names):
            if name.endswith(".rs"):
                files.append(File(os.path.join(root, name)))
    files.sort(key=lambda f: f.path)
    mods = {f.mod: f for f in files if f.mod}
    for f in files:
        scan(f, mods)
    # Re-exports first: resolving a path may go through them.
    for f in files:
        for segs, cur, _, reexport, _, alias in f.refs:
            if reexport:
                target = absolute(segs, cur, f, mods)
                if target is None:
                    continue
                if target[-1:] == ("*",):
                    f.reexports.setdefault("*", []).append(target[:-1])
                elif target:
                    f.reexports[alias or target[-1]] = target

    status = 0
    top_edges, file_edges = {}, {}
    for f in files:
        src_top = f.mod[0] if f.mod else None
        for segs, cur, off, reexport, in_test, _ in f.refs:
            target = absolute(segs, cur, f, mods)
            if not target:
                continue
            where = f"{f.path}:{f.line_of(off)}"
            if src_top and target[0] != src_top and target[0] in {m[0] for m in mods}:
                top_edges.setdefault((src_top, target[0]), []).append(where)
            if in_test or not src_top or target[0] != src_top:
                continue
            g = resolve(tuple(s for s in target if s != "*"), mods)
            if g is None or g is f:
                continue
            # A module file over its own children (declaring, re-exporting, dispatching
            # to them) is its interface, not a layer: only the other direction counts.
            if g.mod[: len(f.mod)] == f.mod:
                continue
            file_edges.setdefault((f.path, g.path), []).append(where)

    # 1. Top-level edges against the docs.
    allowed, problems = reads_table()
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
        status = 1
    if not quiet:
        print("module edges (from -> to: references):")
        for (a, b), where in sorted(top_edges.items()):
            print(f"  {a:8} -> {b:8} {len(where)}")
    for (a, b), where in sorted(top_edges.items()):
        if a not in allowed:
            print(f"error: module `{a}` has no row in the module table of {DOC} (edge {a} -> {b}, {where[0]})", file=sys.stderr)
            status = 1
        elif b not in allowed[a]:
            print(
                f"error: edge {a} -> {b} is not in `{a}`'s reads column of {DOC}: "
                f"used at {where[0]} ({len(where)} reference(s)); list it there with a reason, or remove the use",
                file=sys.stderr,
            )
            status = 1

    # 2. clap at the edge only.
    for f in files:
        if f.path.startswith("src/cli/") or f.path == "src/main.rs":
            continue
        m = re.search(r"(?<![\w:])clap::|\bcrate::cli\b", f.code)
        if m:
            print(f"error: clap or crate::cli used outside src/cli and src/main.rs: {f.path}:{f.line_of(m.start())}", file=sys.stderr)
            status = 1

    # 3. File-level cycles inside each top-level module.
    live = set(file_edges)
    full = {}
    for a, b in live:
        full.setdefault(a, set()).add(b)
    for a, b in sorted(CYCLE_EXCEPTIONS):
        if (a, b) not in live or not reaches(full, b, a):
            print(f"error: cycle exception {a} -> {b} no longer closes a cycle; remove it from scripts/deps.py", file=sys.stderr)
            status = 1
    graph = {}
    for a, b in live - CYCLE_EXCEPTIONS:
        graph.setdefault(a, set()).add(b)
    nodes = {f.path for f in files}
    cycles = sccs(nodes, graph)
    for comp in cycles:
        cyc = short_cycle(comp, graph)
        print(f"error: import cycle among {len(comp)} files: " + " -> ".join(cyc), file=sys.stderr)
        for a, b in zip(cyc, cyc[1:]):
            print(f"  {a} -> {b}: {file_edges[(a, b)][0]}", file=sys.stderr)
        if len(comp) > len(cyc) - 1:
            print("  (component: " + ", ".join(comp) + ")", file=sys.stderr)
        status = 1

    if status == 0:
        print(f"deps: every module edge is in {DOC}, no file import cycle ({len(CYCLE_EXCEPTIONS & live)} temporary exception(s))")
    return status


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    sys.exit(main(sys.argv[1:]))
