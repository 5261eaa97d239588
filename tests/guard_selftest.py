#!/usr/bin/env python3
"""Runs a guard script on a fixture tree of deliberately bad files and checks that it reports
exactly what the tree's markers say: no more (a false alarm) and no less (a weakened guard).

usage: guard_selftest.py GUARD FIXTURE_DIR [GUARD_ARGS...]

A marker is a comment in a fixture file:
- `expect: TEXT` on a line: the guard reports that line (`path:line`) with TEXT in the message;
- `expect-file: TEXT` anywhere: the guard reports the file itself (`path: `) with TEXT.
Every line of the guard's output that names a fixture file must answer a marker, the guard must
exit 1 when there is any marker (0 when there is none), and each marker must be answered.
"""
import os
import re
import subprocess
import sys

MARKER = re.compile(r"expect(-file)?: (.*?)\s*(\*/|-->)?\s*$")


def markers(root):
    found = []
    for top, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            rel = os.path.relpath(os.path.join(top, name), root)
            for number, line in enumerate(open(os.path.join(top, name), encoding="utf-8"), 1):
                m = MARKER.search(line)
                if m:
                    where = f"{rel}: " if m.group(1) else f"{rel}:{number}"
                    found.append((where, m.group(2), rel, number))
    return found


def answers(where, text, line):
    if where.endswith(": "):
        return where in line and text in line
    return re.search(re.escape(where) + r"\b(?!\d)", line) is not None and text in line


def main(argv):
    guard, root, args = argv[1], argv[2], argv[3:]
    expected = markers(root)
    files = {rel for _, _, rel, _ in expected} | {
        os.path.relpath(os.path.join(t, n), root) for t, _, ns in os.walk(root) for n in ns}
    run = subprocess.run([sys.executable, guard, root, *args], capture_output=True, text=True)
    output = (run.stdout + run.stderr).splitlines()
    reports = [line for line in output if any(re.search(rf"(^|\s){re.escape(f)}:", line) for f in files)]
    failures = []
    for where, text, rel, number in expected:
        if not any(answers(where, text, line) for line in reports):
            failures.append(f"{rel}:{number}: the guard did not report '{text}'")
    for line in reports:
        if not any(answers(where, text, line) for where, text, _, _ in expected):
            failures.append(f"unexpected report: {line}")
    want = 1 if expected else 0
    if run.returncode != want:
        failures.append(f"{os.path.basename(guard)} exited {run.returncode}, not {want}")
    for f in failures:
        print(f"guard self-test: {f}", file=sys.stderr)
    if failures:
        print("\n".join(output), file=sys.stderr)
        return 1
    print(f"guard self-test: {os.path.basename(guard)} reported all {len(expected)} planted violations "
          f"in {os.path.relpath(root)} and nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
