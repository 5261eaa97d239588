#!/usr/bin/env python3
"""Fails when a C++ file of src/, include/, tests/ or bench/ is not as `.clang-format` formats it.

usage: format_check.py REPO [--fix]

Runs Debian 12's clang-format (major version 14, what scripts/install-deps.sh installs: another
version formats differently, so it is not asked) over every `.cpp` and `.h` file of those folders
but the guards' fixtures (deliberately bad files). Prints one line per file that differs, with
the first line that differs; exit status 1 when there is any. With --fix, formats them in place.
Exit status 77 (a skip, never a pass) when clang-format 14 is missing.
"""
import os
import re
import shutil
import subprocess
import sys

FOLDERS = ("src", "include", "tests", "bench")
SKIPPED = (os.path.join("tests", "fixtures", "guards"),)
MAJOR = "14"


def clang_format():
    for name in ("clang-format-" + MAJOR, "clang-format"):
        path = shutil.which(name)
        if not path:
            continue
        version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.", version)
        if m and m.group(1) == MAJOR:
            return path
    return None


def sources(repo):
    for folder in FOLDERS:
        for top, dirs, names in os.walk(os.path.join(repo, folder)):
            dirs.sort()
            rel_top = os.path.relpath(top, repo)
            if any(rel_top == s or rel_top.startswith(s + os.sep) for s in SKIPPED):
                dirs[:] = []
                continue
            for name in sorted(names):
                if name.endswith((".cpp", ".h")):
                    yield os.path.join(rel_top, name)


def first_difference(a, b):
    for number, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return number
    return min(len(a.splitlines()), len(b.splitlines())) + 1


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    repo, fix = sys.argv[1], "--fix" in sys.argv[2:]
    tool = clang_format()
    if not tool:
        print(f"format_check: clang-format {MAJOR} not found (scripts/install-deps.sh installs it)", file=sys.stderr)
        return 77
    bad = 0
    for rel in sources(repo):
        path = os.path.join(repo, rel)
        text = open(path, encoding="utf-8").read()
        done = subprocess.run([tool, "--style=file", "--assume-filename=" + path], input=text,
                              capture_output=True, text=True, cwd=repo)
        if done.returncode != 0:
            print(f"{rel}: clang-format failed: {done.stderr.strip()}")
            bad += 1
            continue
        if done.stdout == text:
            continue
        if fix:
            open(path, "w", encoding="utf-8").write(done.stdout)
            continue
        print(f"{rel}:{first_difference(text, done.stdout)}: not as .clang-format formats it "
              f"(tests/format_check.py {repo} --fix)")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
