"""Finds a cached Kubernetes binary of a given version.

The e2e suites cache binaries under ${SCHEDULER_EXTENDER_CACHE:-~/.cache/scheduler-extender}/kube-*/bin,
one folder per version (tests/e2e/lib/build-kube*.sh). A folder's name is not a promise of what is in
it, and more than one version may be cached: a binary is taken only when its own `--version` answers
the version asked for.
"""
import glob
import os
import re
import subprocess


def cache_root():
    return os.environ.get("SCHEDULER_EXTENDER_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "scheduler-extender")


def binary_version(path):
    """The "vMAJOR.MINOR.PATCH" a Kubernetes binary reports, or None."""
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"\bv(\d+)\.(\d+)\.(\d+)", r.stdout + r.stderr)
    return f"v{m.group(1)}.{m.group(2)}.{m.group(3)}" if m and r.returncode == 0 else None


def find_binary(name, minor, extra_dirs=()):
    """The first executable NAME (in extra_dirs, then the cache) whose version is vMINOR.*
    (minor as "1.20"), or None."""
    candidates = [os.path.join(d, name) for d in extra_dirs if d]
    candidates += sorted(glob.glob(os.path.join(cache_root(), "kube-*", "bin", name)))
    for c in candidates:
        if not os.access(c, os.X_OK):
            continue
        v = binary_version(c)
        if v is not None and (v + ".").startswith(f"v{minor}."):
            return c
    return None
