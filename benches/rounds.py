"""What the side-by-side and callgrind bench scripts share: alternating rounds,
medians with their range, and reading callgrind's per-thread output files.

    from rounds import alternate, med_range, callgrind_files

`alternate` runs each tag once per round and reverses the order every other round,
so that neither side always runs first (the page cache, the CPU frequency and
whatever else is running change over a script's life).
"""

import glob
import os
import re
import statistics

TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.M)


def alternate(rounds, tags, run, report=None):
    """{tag: [run(tag, round) for each round]}, the order reversed on odd rounds;
    `report(tag, round, value)` is called after each run (for progress lines)."""
    got = {t: [] for t in tags}
    for r in range(rounds):
        for tag in (tags if r % 2 == 0 else list(reversed(tags))):
            v = run(tag, r)
            got[tag].append(v)
            if report:
                report(tag, r, v)
    return got


def med_range(xs):
    """(median, min, max) of the rounds."""
    return statistics.median(xs), min(xs), max(xs)


def callgrind_files(prefix, remove=True):
    """[(instructions, text)] of each callgrind output file named `prefix*` (one per
    thread with --separate-threads, one per process with --trace-children), the
    files removed afterwards unless `remove` is false."""
    out = []
    for f in sorted(glob.glob(prefix + "*")):
        with open(f) as fh:
            text = fh.read()
        m = TOTAL.search(text)
        out.append((int(m.group(1)) if m else 0, text))
        if remove:
            os.unlink(f)
    return out
