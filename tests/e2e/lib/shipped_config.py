#!/usr/bin/env python3
"""What the project ships, made runnable on loopback by the e2e suites:

  shipped_config.py daemon DST
      deploy/scheduler-extender.yaml's ConfigMap config.yaml, unchanged.
  shipped_config.py scheduler DST HOST:PORT KUBECONFIG HEALTHZ_PORT
      deploy/scheduler-config/default-scheduler.yaml with every extender's urlPrefix pointed at
      HOST:PORT (scheme and path kept), the given kubeconfig, no leader election, and the
      `# e2e-healthz-port:` line lib/cluster.sh's cluster_start_scheduler reads.
"""
import os
import sys
from urllib.parse import urlsplit, urlunsplit

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def daemon(dst):
    src = os.path.join(REPO, "deploy", "scheduler-extender.yaml")
    for doc in yaml.safe_load_all(open(src)):
        if doc and doc.get("kind") == "ConfigMap" and "config.yaml" in (doc.get("data") or {}):
            with open(dst, "w") as f:
                f.write(doc["data"]["config.yaml"])
            return
    sys.exit("no ConfigMap with config.yaml in " + src)


def scheduler(dst, hostport, kubeconfig, healthz_port):
    src = os.path.join(REPO, "deploy", "scheduler-config", "default-scheduler.yaml")
    cfg = yaml.safe_load(open(src))
    if cfg.get("apiVersion") != "kubescheduler.config.k8s.io/v1":
        sys.exit("%s: apiVersion %s, want kubescheduler.config.k8s.io/v1" % (src, cfg.get("apiVersion")))
    for ext in cfg.get("extenders") or []:
        u = urlsplit(ext["urlPrefix"])
        ext["urlPrefix"] = urlunsplit((u.scheme, hostport, u.path, "", ""))
    cfg["clientConnection"]["kubeconfig"] = kubeconfig
    cfg["leaderElection"]["leaderElect"] = False
    with open(dst, "w") as f:
        f.write("# e2e-healthz-port: %s\n" % healthz_port)
        f.write("# deploy/scheduler-config/default-scheduler.yaml with loopback addresses\n")
        yaml.safe_dump(cfg, f, sort_keys=False)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "daemon":
        daemon(sys.argv[2])
    elif len(sys.argv) == 6 and sys.argv[1] == "scheduler":
        scheduler(*sys.argv[2:])
    else:
        sys.exit(__doc__)
