#!/usr/bin/env python3
"""Fails when code in src/ or include/ reads a clock, sleeps or waits with a timeout directly
instead of through the injected extender::Clock (include/extender/common/clock.h), so that every
expiry and wait can be driven by a test's FakeClock.

usage: clock_rules.py REPO

Scans src/**/*.{cpp,h} and include/**/*.h after blanking comments and literals
(function_length.blank). Reports `path:line what` for each:
- a clock read: `<clock>::now` of std::chrono's clocks or of the aliases SteadyClock and WallClock
  (called or passed as a function), time(), gettimeofday(), clock_gettime(), timespec_get();
- a sleep: sleep_for/sleep_until not called on an object (std::this_thread's), sleep, usleep,
  nanosleep;
- a wait with a timeout: `.wait_for(` / `.wait_until(` (a condition variable's, a future's).
The clock module itself (include/extender/common/clock.h, src/common/clock.cpp) is exempt, and
nothing else is: the I/O edges (the event loop, the API server client, the relay) take the
injected clock as well, and pass the time it leaves to the kernel or to cpp-httplib. Exit status
1 when anything is reported.
"""
import os
import re
import sys

from function_length import blank

CLOCK_MODULE = {"include/extender/common/clock.h", "src/common/clock.cpp"}
RULES = [
    (re.compile(r"\b(?:steady_clock|system_clock|high_resolution_clock|utc_clock|file_clock|SteadyClock|WallClock)"
                r"\s*::\s*now\b"), "reads the clock directly"),
    (re.compile(r"(?<![\w.>])(?:std\s*::\s*|::\s*)?(?:time\s*\(\s*(?:nullptr|NULL|0|&\s*\w+)?\s*\)"
                r"|(?:gettimeofday|clock_gettime|timespec_get)\s*\()"), "reads the clock directly"),
    (re.compile(r"(?<![\w.>])(?:sleep_for|sleep_until|sleep|usleep|nanosleep)\s*\("), "sleeps directly"),
    (re.compile(r"(?:\.|->)\s*wait_(?:for|until)\s*\("), "waits with a timeout on the real clock"),
]


def sources(repo):
    for top in ("src", "include"):
        for root, dirs, names in os.walk(os.path.join(repo, top)):
            dirs.sort()
            for name in sorted(names):
                if name.endswith((".cpp", ".h")):
                    yield os.path.relpath(os.path.join(root, name), repo).replace(os.sep, "/")


def findings(repo, rel):
    text = blank(open(os.path.join(repo, rel), encoding="utf-8").read())
    for number, line in enumerate(text.splitlines(), 1):
        for rule, what in RULES:
            if rule.search(line):
                yield number, what
                break


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    repo = argv[1]
    problems = []
    for rel in sources(repo):
        if rel in CLOCK_MODULE:
            continue
        for number, what in findings(repo, rel):
            problems.append(f"{rel}:{number}: {what}; take the time and waits from an extender::Clock")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
