#!/usr/bin/env python3
"""Passes the output of a libtest run through unchanged — every byte, as it comes —
and prints its slowest tests after it.

    cargo test --test tests -- --test-threads=1 | python3 scripts/slowest-tests.py 10

Stable libtest has no per-test time without `-Z unstable-options --report-time`, but
with one test at a time its output shows when each test starts and ends: it writes
and flushes `test NAME ... ` before running the test, and the status (`ok`, `FAILED`,
`ignored`) when it ends. A test's time is from the one to the other, as read here.
Anything a test's children write in between is passed on too and ends no test.

The exit status is always 0: the pipeline's status (`set -o pipefail`) is the test
run's. Output that is not one test at a time gives no times, and says so.
"""

import os
import re
import sys
import time

START = re.compile(rb"^test (\S+) \.\.\. ")
# libtest's colours (`--color always` on a terminal) around the status.
ANSI = re.compile(rb"\x1b\[[0-9;]*m|\x1b\(B")
STATUS = re.compile(rb"(^|\.\.\. )(ok|FAILED|ignored(, .*)?)$")


class Timer:
    """Per-test times from the lines of a libtest run, fed as they arrive."""

    def __init__(self):
        self.times = {}
        self.line = b""
        self.current = None  # (name, start)

    def feed(self, chunk, now):
        parts = chunk.split(b"\n")
        for i, part in enumerate(parts):
            self.line += part
            plain = ANSI.sub(b"", self.line)
            if self.current is None:
                m = START.match(plain)
                if m:
                    self.current = (m.group(1).decode(errors="replace"), now)
                    plain = plain[m.end() :]
                    if i == len(parts) - 1:
                        continue
            if i < len(parts) - 1:
                if self.current is not None and STATUS.search(plain.rstrip()):
                    name, start = self.current
                    self.times[name] = now - start
                    self.current = None
                self.line = b""

    def report(self, n):
        lines = [""]
        if not self.times:
            lines.append("(no per-test times: the run was not one test at a time)")
        else:
            slow = sorted(self.times.items(), key=lambda kv: -kv[1])[:n]
            lines.append(f"slowest {len(slow)} of {len(self.times)} tests:")
            lines += [f"{secs:9.2f} s  {name}" for name, secs in slow]
        if self.current is not None:
            lines.append(f"(did not finish: {self.current[0]})")
        return "\n".join(lines) + "\n"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    out = sys.stdout.buffer
    timer = Timer()
    timing = True
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        now = time.monotonic()
        out.write(chunk)
        out.flush()
        if timing:
            try:
                timer.feed(chunk, now)
            except Exception as e:  # never let the timing disturb the output
                timing = False
                print(f"(slowest-tests: timing stopped: {e})", file=sys.stderr)
    out.write(timer.report(n).encode())
    out.flush()


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
    sys.exit(0)
