#!/usr/bin/env python3
"""Fails when a build or test file refers to a path outside the repository.

usage: self_contained.py REPO

Scans the build files (CMakeLists.txt, Makefile, Dockerfile, scripts/, .ci/) and everything under
tests/ and bench/ for: the old out-of-tree fixtures folder; a chain of parent-directory segments
that climbs above the repository from where it is anchored (the file's folder, or the repository
root for CMAKE_SOURCE_DIR, ROOT, REPO and the like); an absolute path into the folder that holds
the repository, unless that folder is a system one such as /tmp. Reading /proc, ~/.cache or system tools is not a path above the repository.
Prints one line per finding; exit status 1 when there is any.
"""
import os
import re
import subprocess
import sys

UP = "." + "."
SHARED = "sha" + "red"
# A chain of parent segments; what stands just before it anchors it.
CHAIN = re.compile(r"(?<![\w.])(?:\.\.(?:/|(?![\w.])))+")
ROOT_ANCHOR = re.compile(r"(?i)(cmake_source_dir|project_source_dir|extender_source_dir|root|repo)\W*$")
FIXTURES_ANCHOR = re.compile(r"(?i)extender_fixtures_dir\W*$")
SCANNED_TOP = ("CMakeLists.txt", "Makefile", "Dockerfile")
SCANNED_DIRS = ("tests", "bench", "scripts", ".ci")
TEXT_SUFFIXES = (".txt", ".sh", ".py", ".cpp", ".h", ".hpp", ".cmake", ".in", ".yaml", ".yml", ".json", ".md", "")


def files(repo):
    listed = subprocess.run(["git", "-C", repo, "ls-files", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True)
    paths = listed.stdout.split() if listed.returncode == 0 else []
    if not paths:
        for top, dirs, names in os.walk(repo):
            dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")]
            paths += [os.path.relpath(os.path.join(top, n), repo) for n in names]
    for p in sorted(set(paths)):
        first = p.split("/")[0]
        name = os.path.basename(p)
        if p in SCANNED_TOP or name == "CMakeLists.txt" or first in SCANNED_DIRS:
            if os.path.splitext(name)[1] in TEXT_SUFFIXES and os.path.isfile(os.path.join(repo, p)):
                yield p


def depth_of_anchor(anchor, rel_dir):
    if ROOT_ANCHOR.search(anchor):
        return 0
    if FIXTURES_ANCHOR.search(anchor):
        return 2  # tests/fixtures
    return len([s for s in rel_dir.split("/") if s])


# Folders every machine has: a clone there has neighbours that are not ours to judge (/tmp/x).
SYSTEM_DIRS = {"/", "/tmp/", "/var/tmp/", "/var/", "/home/", "/root/", "/usr/", "/opt/", "/srv/", "/mnt/"}


def findings(repo):
    parent = os.path.dirname(os.path.abspath(repo)).rstrip("/") + "/"
    own = os.path.abspath(repo).rstrip("/") + "/"
    for rel in files(repo):
        try:
            text = open(os.path.join(repo, rel), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        rel_dir = os.path.dirname(rel)
        for lineno, line in enumerate(text.splitlines(), 1):
            if UP + "/" + SHARED in line or SHARED + "/fixtures" in line:
                yield f"{rel}:{lineno}: refers to the out-of-tree fixtures folder: {line.strip()}"
                continue
            for m in CHAIN.finditer(line):
                ups = m.group(0).count(UP)
                if ups > depth_of_anchor(line[max(0, m.start() - 48):m.start()], rel_dir):
                    yield f"{rel}:{lineno}: climbs above the repository: {line.strip()}"
                    break
            if parent not in SYSTEM_DIRS and parent in line and own not in line:
                yield f"{rel}:{lineno}: absolute path beside the repository: {line.strip()}"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = list(findings(sys.argv[1]))
    for f in found:
        print("FAIL:", f)
    print(f"{len(found)} reference(s) outside the repository")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
