#!/usr/bin/env python3
"""Plays the kubelet for the daemon's pods of one namespace, on an e2e control plane without one.

Every --interval it lists the pods of --namespace and:
  - starts the daemon binary for each pod bound to a node that matches --selector (a label
    key=value) and has no process yet: the configuration is the pod's ConfigMap (its `config`
    volume) with the listen addresses moved to free loopback ports and kubernetes.kubeconfig set to
    --kubeconfig; POD_NAME, POD_NAMESPACE and POD_UID come from the pod, as the downward API gives
    them;
  - reports the pod Running, and Ready exactly while the daemon's /readyz answers 200 (the
    readiness probe), through the pods/status subresource;
  - for a pod being deleted (a deletionTimestamp: scale-down, eviction), sends SIGTERM, waits for
    the process (SIGKILL after --grace seconds), then deletes the pod for good (grace 0), as a
    kubelet does once its containers have stopped.
It writes "POD PORT ADMIN_PORT" for every running daemon to --backends-file (for leader_proxy.py)
and logs what it does to stderr. Daemon output goes to --log-dir/<pod>.log.

The API server is reached with APISERVER_URL, ADMIN_TOKEN and CLUSTER_CA_FILE from the environment.
"""
import argparse
import datetime
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import yaml

from kube_api import Api


def log(msg):
    sys.stderr.write("%s pod-runner: %s\n" % (datetime.datetime.utcnow().strftime("%H:%M:%S.%f")[:-3], msg))
    sys.stderr.flush()


def now_rfc3339():
    return datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Daemon:
    def __init__(self, pod, proc, port, admin):
        self.pod, self.proc, self.port, self.admin = pod, proc, port, admin
        self.reported = None  # the readiness last written to the pod's status

    def ready(self):
        if self.proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % self.admin, timeout=1) as res:
                return res.status == 200
        except Exception:
            return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--namespace", required=True)
    p.add_argument("--selector", required=True, help="label key=value of the daemon's pods")
    p.add_argument("--binary", required=True)
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--backends-file", required=True)
    p.add_argument("--log-dir", required=True)
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--grace", type=float, default=15)
    args = p.parse_args()
    key, value = args.selector.split("=", 1)
    api = Api()
    ns = args.namespace
    daemons = {}  # pod uid -> Daemon
    stopping = []

    def shutdown(*_):
        for d in daemons.values():
            d.proc.kill()
        sys.exit(0)

    signal.signal(signal.SIGTERM, shutdown)

    def start(pod):
        name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
        cm = next((v["configMap"]["name"] for v in pod["spec"].get("volumes", [])
                   if v.get("name") == "config" and "configMap" in v), None)
        status, obj = api.call("GET", "/api/v1/namespaces/%s/configmaps/%s" % (ns, cm))
        if status != 200:
            log("pod %s: ConfigMap %s not readable (HTTP %s)" % (name, cm, status))
            return
        cfg = yaml.safe_load(obj["data"]["config.yaml"])
        port, admin = free_ports(2)
        cfg.setdefault("server", {})["listen"] = "127.0.0.1:%d" % port
        cfg["admin"] = {"listen": "127.0.0.1:%d" % admin}
        cfg.setdefault("kubernetes", {})["kubeconfig"] = args.kubeconfig
        path = os.path.join(args.log_dir, "%s.config.yaml" % name)
        with open(path, "w") as f:
            yaml.safe_dump(cfg, f)
        env = dict(os.environ, POD_NAME=name, POD_NAMESPACE=ns, POD_UID=uid)
        out = open(os.path.join(args.log_dir, "%s.log" % name), "ab")
        proc = subprocess.Popen([args.binary, "--config", path], env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        daemons[uid] = Daemon(pod, proc, port, admin)
        log("pod %s on node %s: started the daemon (pid %d, ports %d/%d)" % (name, pod["spec"]["nodeName"], proc.pid, port, admin))

    def report(d, ready):
        name = d.pod["metadata"]["name"]
        t = now_rfc3339()
        cond = "True" if ready else "False"
        body = {"status": {
            "phase": "Running", "podIP": "127.0.0.1", "hostIP": "127.0.0.1", "startTime": d.pod["status"].get("startTime", t),
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": t},
                           {"type": "Initialized", "status": "True", "lastTransitionTime": t},
                           {"type": "ContainersReady", "status": cond, "lastTransitionTime": t},
                           {"type": "Ready", "status": cond, "lastTransitionTime": t}],
            "containerStatuses": [{"name": c["name"], "ready": ready, "restartCount": 0, "image": c.get("image", ""),
                                   "imageID": "", "started": True, "state": {"running": {"startedAt": t}}}
                                  for c in d.pod["spec"]["containers"]]}}
        status, _ = api.call("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (ns, name), body,
                             "application/merge-patch+json")
        if status == 200:
            d.reported = ready
            log("pod %s: Ready=%s" % (name, cond))

    def finish(pod):
        name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
        d = daemons.pop(uid, None)
        if d and d.proc.poll() is None:
            d.proc.send_signal(signal.SIGTERM)
            try:
                d.proc.wait(timeout=args.grace)
            except subprocess.TimeoutExpired:
                d.proc.kill()
                d.proc.wait()
            log("pod %s: daemon stopped (exit %s)" % (name, d.proc.returncode))
        status, _ = api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (ns, name),
                             {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                              "preconditions": {"uid": uid}})
        log("pod %s: deleted (HTTP %s)" % (name, status))

    while True:
        status, pods = api.call("GET", "/api/v1/namespaces/%s/pods" % ns)
        if status == 200:
            seen = set()
            for pod in pods["items"]:
                uid = pod["metadata"]["uid"]
                seen.add(uid)
                if pod["metadata"].get("deletionTimestamp"):
                    finish(pod)
                    continue
                if pod["metadata"].get("labels", {}).get(key) != value or not pod["spec"].get("nodeName"):
                    continue
                if uid not in daemons:
                    start(pod)
                    continue
                d = daemons[uid]
                d.pod = pod
                ready = d.ready()
                if ready != d.reported:
                    report(d, ready)
            for uid in [u for u in daemons if u not in seen]:
                d = daemons.pop(uid)
                d.proc.kill()
                log("pod %s vanished: daemon killed" % d.pod["metadata"]["name"])
            tmp = args.backends_file + ".tmp"
            with open(tmp, "w") as f:
                for d in daemons.values():
                    if d.proc.poll() is None:
                        f.write("%s %d %d\n" % (d.pod["metadata"]["name"], d.port, d.admin))
            os.replace(tmp, args.backends_file)
        time.sleep(args.interval)


if __name__ == "__main__":
    main()
