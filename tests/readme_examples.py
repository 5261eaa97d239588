#!/usr/bin/env python3
"""Runs every ```console block of README.md against a daemon started with examples/config.yaml and
checks each command prints exactly what the README shows. localhost:8888 / localhost:8889 in the
README are rewritten to the ports the daemon picked, and build/scheduler-extender to BINARY.

usage: readme_examples.py BINARY REPO_DIR
"""
import re
import subprocess
import sys
import time

binary, repo = sys.argv[1], sys.argv[2]
readme = open(f"{repo}/README.md").read()
blocks = re.findall(r"```console\n(.*?)```", readme, re.S)
steps = []
for block in blocks:
    for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
        lines = chunk.rstrip("\n").split("\n")
        steps.append((lines[0], "\n".join(lines[1:])))
if not steps:
    sys.exit("no ```console examples found in README.md")

daemon = subprocess.Popen([binary, "--config", "examples/config.yaml", "--listen", "127.0.0.1:0",
                           "--admin-listen", "127.0.0.1:0"], cwd=repo, stderr=subprocess.PIPE, text=True)
log, port, admin = "", None, None
deadline = time.time() + 20
while (port is None or admin is None) and time.time() < deadline:
    line = daemon.stderr.readline()
    log += line
    m = re.search(r"serving http on [^ ]+:(\d+)", line)
    port = m.group(1) if m else port
    m = re.search(r"admin and debug endpoints on http://[^ ]+:(\d+)", line)
    admin = m.group(1) if m else admin
if port is None or admin is None:
    daemon.kill()
    sys.exit("daemon did not start:\n" + log)

failures = 0
try:
    for command, expected in steps:
        runnable = command.replace("localhost:8888", f"127.0.0.1:{port}").replace("localhost:8889", f"127.0.0.1:{admin}")
        runnable = runnable.replace("build/scheduler-extender ", binary + " ")
        out = subprocess.run(["bash", "-c", runnable], cwd=repo, capture_output=True, text=True, timeout=30)
        got = out.stdout.rstrip("\n")
        if got != expected:
            failures += 1
            print(f"FAIL: $ {command}\n  expected: {expected}\n  got:      {got}\n  stderr:   {out.stderr}")
        else:
            print(f"ok:   $ {command}")
finally:
    daemon.terminate()
    daemon.wait(timeout=10)
print(f"{len(steps) - failures}/{len(steps)} README examples print what the README shows")
sys.exit(1 if failures else 0)
