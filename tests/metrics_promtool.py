#!/usr/bin/env python3
"""Checks /metrics of a live daemon with Prometheus's own `promtool check metrics`.

usage: metrics_promtool.py BINARY REPO_DIR

Starts the daemon on the example configuration and inventory (ephemeral ports), runs a scripted
workload (filter and prioritize in both forms, a bind, a refused bind, a preempt, a malformed
body), scrapes the admin listener's /metrics and pipes it to `promtool check metrics`. Also checks
that every inventory node has its per-node series. Exits 77 (a skip for ctest) when promtool is
not installed; scripts/install-deps.sh installs it (Debian package `prometheus`).
"""
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request

SKIP = 77


def main():
    binary, repo = sys.argv[1], sys.argv[2]
    promtool = shutil.which("promtool")
    if not promtool:
        print("skip: promtool is not installed (Debian package prometheus; scripts/install-deps.sh installs it)")
        return SKIP
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
        print("FAIL: daemon did not start:\n" + log)
        return 1
    failures = 0

    def post(path, body):
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body.encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    try:
        ex = f"{repo}/examples/requests"
        fx = f"{repo}/tests/fixtures/protocol-examples"
        workload = [
            ("/scheduler/filter", open(f"{ex}/trainer-0.json").read(), 200),
            ("/scheduler/prioritize", open(f"{ex}/trainer-0.json").read(), 200),
            ("/scheduler/filter", open(f"{fx}/filter-request-nodes.json").read(), 200),
            ("/scheduler/filter", open(f"{fx}/filter-request-names.json").read(), 200),
            ("/scheduler/bind", open(f"{ex}/bind-trainer-0.json").read(), 200),
            ("/scheduler/bind", json.dumps({"PodName": "x", "PodNamespace": "y", "PodUID": "never-filtered",
                                            "Node": "gpu-a100-1"}), 200),
            ("/scheduler/preempt", open(f"{fx}/preempt-request-names.json").read(), 200),
            ("/scheduler/filter", "{not json", 400),
        ]
        for path, body, want in workload:
            status, answer = post(path, body)
            if status != want:
                failures += 1
                print(f"FAIL: {path} answered {status}, want {want}: {answer[:300]}")
        with urllib.request.urlopen(f"http://127.0.0.1:{admin}/metrics", timeout=10) as r:
            text = r.read().decode()
            content_type = r.headers.get("Content-Type", "")
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)

    check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    if check.returncode != 0:
        failures += 1
        print(f"FAIL: promtool check metrics:\n{check.stdout}{check.stderr}")
    else:
        print("ok:   promtool check metrics")
    if not content_type.startswith("text/plain; version=0.0.4"):
        failures += 1
        print(f"FAIL: Content-Type {content_type!r}")
    inventory = re.findall(r"^  - name: (\S+)", open(f"{repo}/examples/inventory.yaml").read(), re.M)
    for node in inventory:
        if f'scheduler_extender_node_gpus_allocatable{{node="{node}",' not in text:
            failures += 1
            print(f"FAIL: no GPU series for inventory node {node}")
    wants = [
        r'^scheduler_extender_requests_total\{outcome="ok",verb="bind"\} 1$',
        r'^scheduler_extender_requests_total\{outcome="rejected",verb="filter"\} 1$',
        r'^scheduler_extender_refusals_total\{reason="unknown_pod",verb="bind"\} 1$',
        r'^scheduler_extender_node_gpus_used\{node="gpu-h100-1",resource="nvidia.com/gpu"\} 4$',
        r'^scheduler_extender_request_duration_seconds_count\{verb="filter"\} 4$',
    ]
    for want in wants:
        if not re.search(want, text, re.M):
            failures += 1
            print(f"FAIL: /metrics has no line matching {want}")
    print(f"{'FAILED' if failures else 'passed'}: {len(inventory)} inventory nodes, {len(text.splitlines())} lines")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
