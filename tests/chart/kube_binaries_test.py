#!/usr/bin/env python3
"""kube_binaries.find_binary takes a cached binary by the version it reports, never by folder order."""
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kube_binaries  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok:   {what}")
    else:
        failed += 1
        print(f"FAIL: {what}")


def fake_binary(cache, folder, version, exit_code=0):
    d = os.path.join(cache, folder, "bin")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "kube-scheduler")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\necho 'Kubernetes {version}'\nexit {exit_code}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


with tempfile.TemporaryDirectory() as tmp:
    cases = [
        # (what, [(folder, reported version, exit code)], expected folder or None)
        ("only the current version cached: no v1.20 binary", [("kube-v1.37.2", "v1.37.2", 0)], None),
        ("both cached, v1.20 sorted last", [("kube-1.37", "v1.37.2", 0), ("kube-zz", "v1.20.2", 0)], "kube-zz"),
        ("a folder named 1.20 holding another version", [("kube-1.20.5", "v1.37.2", 0)], None),
        ("a v1.200 is not v1.20", [("kube-a", "v1.200.1", 0)], None),
        ("a binary that fails --version", [("kube-1.20", "v1.20.2", 3)], None),
        ("nothing cached", [], None),
    ]
    for i, (what, binaries, want) in enumerate(cases):
        cache = os.path.join(tmp, f"cache{i}")
        os.makedirs(cache)
        for folder, version, code in binaries:
            fake_binary(cache, folder, version, code)
        os.environ["SCHEDULER_EXTENDER_CACHE"] = cache
        got = kube_binaries.find_binary("kube-scheduler", "1.20")
        expected = os.path.join(cache, want, "bin", "kube-scheduler") if want else None
        check(got == expected, f"{what}: got {got}, want {expected}")

    cache = os.path.join(tmp, "cache-extra")
    os.environ["SCHEDULER_EXTENDER_CACHE"] = cache
    current = fake_binary(cache, "kube-v1.37.2", "v1.37.2")
    check(kube_binaries.find_binary("kube-scheduler", "1.20", [os.path.dirname(current)]) is None,
          "KUBE_BIN pointing at the current version is not taken for v1.20")
    old = fake_binary(os.path.join(tmp, "elsewhere"), "x", "v1.20.2")
    check(kube_binaries.find_binary("kube-scheduler", "1.20", [os.path.dirname(old)]) == old,
          "an extra folder holding v1.20 is taken first")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
