#!/usr/bin/env python3
"""Checks of the Helm chart, the plain manifests in deploy/ and the Dockerfile.

usage: check_chart.py --helm HELM --repo REPO --work DIR [--binary BIN] STEP...

STEP is one of: lint, render, scheduler-decode, deploy, docker, daemon-config, all. Run through
check-chart.sh, which provides Helm and a python3 with PyYAML. Every check prints "ok:", "FAIL:"
or "skip:"; the last line is "N passed, N failed" and the exit status is 1 if anything failed,
else 77 (a skip for ctest) if a check was skipped, else 0.
"""
import argparse
import base64
import glob
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kube_binaries  # noqa: E402

RELEASE = "se"
NAMESPACE = "gpu-system"
FULLNAME = "se-scheduler-extender"
SCHED_FULLNAME = "se-scheduler-extender-scheduler"
CHART_REL = "charts/scheduler-extender"

# Keys of the daemon's configuration file that the chart sets itself.
FORCED = {("mode",), ("admin",), ("standalone",), ("server", "listen"), ("server", "tls"),
          ("kubernetes", "kubeconfig")}

# Leader election (config.ha): the label the leader puts on its own pod, which the Service selects.
LEADER_LABEL = "scheduler-extender.io/leader"
DOWNWARD_ENV = {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_UID": "metadata.uid"}

FAKE_CERT = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
FAKE_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEfake\n-----END PRIVATE KEY-----\n"


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def ok(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            print(f"ok:   {what}")
        else:
            self.failed += 1
            print(f"FAIL: {what}" + (f"\n      {detail}" if detail else ""))
        return cond

    def eq(self, got, want, what):
        return self.ok(got == want, what, f"got {got!r}, want {want!r}")

    def skip(self, what, why):
        self.skipped += 1
        print(f"skip: {what} ({why})")


C = Checks()
ARGS = None
SKIP = 77  # ctest's SKIP_RETURN_CODE: a check that could not run is never reported as a pass


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------

def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def helm_template(kube_version, sets=(), set_files=(), values_files=(), release=RELEASE,
                  namespace=NAMESPACE, extra=()):
    """Renders the chart; returns (ok, docs or error text)."""
    cmd = [ARGS.helm, "template", release, os.path.join(ARGS.repo, CHART_REL),
           "--namespace", namespace, "--kube-version", kube_version]
    for s in sets:
        cmd += ["--set", s]
    for s in set_files:
        cmd += ["--set-file", s]
    for f in values_files:
        cmd += ["-f", f]
    cmd += list(extra)
    r = run(cmd)
    if r.returncode != 0:
        return False, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    return True, docs


def render(kube_version, what, **kw):
    good, out = helm_template(kube_version, **kw)
    C.ok(good, f"helm template {what} (--kube-version {kube_version})", str(out)[:2000])
    return out if good else []


def find(docs, kind, name=None, namespace=None):
    for d in docs:
        if d.get("kind") != kind:
            continue
        md = d.get("metadata", {})
        if name is not None and md.get("name") != name:
            continue
        if namespace is not None and md.get("namespace") != namespace:
            continue
        return d
    return None


def find_all(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def kinds(docs):
    return sorted((d["kind"], d["metadata"]["name"]) for d in docs)


def container(dep, name=None):
    cs = dep["spec"]["template"]["spec"]["containers"]
    if name is None:
        return cs[0]
    return next(c for c in cs if c["name"] == name)


def mount_of(dep, cont, volume_pred):
    """(volume, mountPath) of the first volume matching volume_pred mounted in container cont."""
    vols = {v["name"]: v for v in dep["spec"]["template"]["spec"].get("volumes", [])}
    for m in cont.get("volumeMounts", []):
        v = vols.get(m["name"])
        if v is not None and volume_pred(v):
            return v, m
    return None, None


def rule_triples(rules):
    out = set()
    for r in rules:
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    out.add((g, res, v, tuple(r.get("resourceNames", []))))
    return out


def labels_match(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def key_paths(d, prefix=()):
    """Every key path of a nested mapping (lists are leaves)."""
    out = set()
    for k, v in d.items():
        p = prefix + (k,)
        out.add(p)
        if isinstance(v, dict) and not (p == ("storage", "classes")):
            out |= key_paths(v, p)
    return out


def make_certs(work):
    """A CA and a certificate signed by it (serverAuth+clientAuth), in a new directory under work;
    None without openssl."""
    if not shutil.which("openssl"):
        return None
    d = tempfile.mkdtemp(dir=work)
    ext = tmpfile(d, "ext.cnf", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
    for cmd in [
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=chart-check-ca",
         "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt"],
        ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=chart-check", "-keyout", f"{d}/tls.key",
         "-out", f"{d}/tls.csr"],
        ["openssl", "x509", "-req", "-days", "2", "-in", f"{d}/tls.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
         "-CAcreateserial", "-extfile", ext, "-out", f"{d}/tls.crt"],
    ]:
        if run(cmd).returncode != 0:
            return None
    return d


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def tmpfile(work, name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# ------------------------------------------------------------------------------------------------
# lint
# ------------------------------------------------------------------------------------------------

def nondefault_values_file():
    return tmpfile(ARGS.work, "nondefault-values.yaml", yaml.safe_dump({
        "secondScheduler": {"enabled": True, "tls": {"cert": FAKE_CERT, "key": FAKE_KEY}},
        "tls": {"enabled": True, "cert": FAKE_CERT, "key": FAKE_KEY, "ca": FAKE_CERT},
        "networkPolicy": {"enabled": True, "metricsFrom": [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]},
        "podDisruptionBudget": {"enabled": True},
        "serviceMonitor": {"enabled": True},
    }))


def step_lint():
    chart = os.path.join(ARGS.repo, CHART_REL)
    nondefault = nondefault_values_file()
    for what, extra in [("default values", []), ("non-default values", ["-f", nondefault])]:
        for kv in ["1.20.2", "1.31.0"]:
            r = run([ARGS.helm, "lint", "--strict", chart, "--kube-version", kv] + extra)
            out = r.stdout + r.stderr
            problems = [l for l in out.splitlines() if re.match(r"\[(WARNING|ERROR)\]", l)]
            C.ok(r.returncode == 0 and not problems,
                 f"helm lint --strict, {what}, --kube-version {kv}: clean", out[-1500:])

    # README.md of the chart documents every value, and only values that exist.
    values = load_yaml(os.path.join(chart, "values.yaml"))
    readme = open(os.path.join(chart, "README.md")).read()
    free_form = {"resources", "podSecurityContext", "securityContext", "classes", "annotations",
                 "labels", "podAnnotations", "podLabels", "nodeSelector", "affinity", "fragmentation_prior"}

    def leaves(d, prefix=""):
        out = []
        for k, v in d.items():
            p = f"{prefix}.{k}" if prefix else k
            if isinstance(v, dict) and v and k not in free_form:
                out += leaves(v, p)
            else:
                out.append(p)
        return out

    value_paths = leaves(values)
    missing = [p for p in value_paths if f"| `{p}` |" not in readme]
    C.ok(not missing, f"chart README.md lists all {len(value_paths)} values with their defaults",
         f"not in a README table row: {missing}")
    documented = re.findall(r"^\| `([A-Za-z0-9_.]+)` \|", readme, re.M)
    unknown = [p for p in documented if p not in value_paths]
    C.ok(not unknown, "chart README.md documents no value that values.yaml lacks", f"unknown: {unknown}")

    # The chart exposes every key of the daemon's configuration (examples/config.yaml documents
    # them all), except those it sets itself; and nothing else. placementByRoute's keys are
    # config.scoring's, filled in by route unless config.scoring sets them.
    daemon = load_yaml(os.path.join(ARGS.repo, "examples/config.yaml"))
    want = {p for p in key_paths(daemon) if not any(p[:len(f)] == f for f in FORCED)}
    have = key_paths(values["config"])
    for route in values["placementByRoute"].values():
        have |= {("scoring",) + p for p in key_paths(route)}
    C.ok(want == have, "values `config` mirrors the daemon's keys in examples/config.yaml (minus forced ones)",
         f"missing in values: {sorted(want - have)}; unknown to the daemon: {sorted(have - want)}")
    C.ok(values.get("replicaCount") == 2, "values.yaml: replicaCount is 2")
    vtext = open(os.path.join(chart, "values.yaml")).read()
    m = re.search(r"((?:#.*\n)+)replicaCount: 2\n", vtext)
    comment = m.group(1) if m else ""
    C.ok(all(w in comment for w in ["Two by default", "standby", "One replica", "maxSurge 1", "maxUnavailable 0"]),
         "values.yaml: the comment on replicaCount says why 2, what one replica costs, and the update strategy",
         comment)
    m = re.search(r"((?:#.*\n)+)affinity: \{\}\n", vtext)
    C.ok(m is not None and "anti-affinity" in m.group(1) and "kubernetes.io/hostname" in m.group(1),
         "values.yaml: the comment on affinity describes the default preferred anti-affinity")
    C.eq((values["podDisruptionBudget"]["enabled"], values["podDisruptionBudget"]["maxUnavailable"],
          values["podDisruptionBudget"]["minAvailable"]), (True, 1, ""),
         "values.yaml: PodDisruptionBudget on, maxUnavailable 1, minAvailable unset")
    C.eq(values["config"]["ha"], {"enabled": True, "lease_name": "", "lease_namespace": "", "lease_duration": "2s",
                                  "renew_deadline": "1500ms", "retry_period": "500ms", "leader_label": LEADER_LABEL},
         "values.yaml: config.ha on, lease named by the chart, 2s/1500ms/500ms, leader label")
    chart_yaml = load_yaml(os.path.join(chart, "Chart.yaml"))
    C.eq((chart_yaml.get("apiVersion"), chart_yaml.get("appVersion"), chart_yaml.get("kubeVersion")),
         ("v2", "0.1.0", ">=1.20.0-0"), "Chart.yaml: apiVersion v2, appVersion 0.1.0, kubeVersion >=1.20.0-0")


# ------------------------------------------------------------------------------------------------
# render
# ------------------------------------------------------------------------------------------------

def table_rbac():
    """The ClusterRole's rights as deploy/scheduler-extender.yaml grants them. That file is checked
    against the daemon's table of watched kinds (sources/watched_kinds.h) by sources_tests, and
    against the chart's default render by step deploy: the chart's rules are the table's."""
    with open(os.path.join(ARGS.repo, "deploy", "scheduler-extender.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    return rule_triples(find(docs, "ClusterRole", "scheduler-extender")["rules"])


CSI_RBAC = {("storage.k8s.io", r, v, ()) for r in ("csidrivers", "csistoragecapacities") for v in ("get", "list", "watch")}


def daemon_config(docs):
    cm = find(docs, "ConfigMap", FULLNAME)
    return yaml.safe_load(cm["data"]["config.yaml"]) if cm else None


def scheduler_config(docs):
    cm = find(docs, "ConfigMap", SCHED_FULLNAME)
    return yaml.safe_load(cm["data"]["scheduler-config.yaml"]) if cm else None


def default_anti_affinity(selector):
    return {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                            "labelSelector": {"matchLabels": selector}}}]}}


def check_leader_election_rbac(docs, kv, lease=FULLNAME):
    role = find(docs, "Role", f"{FULLNAME}-leader-election", NAMESPACE)
    if not C.ok(role is not None, f"[{kv}] Role {FULLNAME}-leader-election in {NAMESPACE}"):
        return
    C.eq(rule_triples(role["rules"]), {("coordination.k8s.io", "leases", "get", (lease,)),
                                       ("coordination.k8s.io", "leases", "update", (lease,)),
                                       ("coordination.k8s.io", "leases", "create", ()),
                                       ("", "pods", "get", ()), ("", "pods", "list", ()), ("", "pods", "patch", ())},
         f"[{kv}] leader-election Role: get/update only Lease {lease}, create leases, get/list/patch pods")
    rb = find(docs, "RoleBinding", f"{FULLNAME}-leader-election", NAMESPACE)
    C.ok(rb is not None and rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                               "name": f"{FULLNAME}-leader-election"}
         and rb["subjects"] == [{"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}],
         f"[{kv}] RoleBinding {FULLNAME}-leader-election binds it to the daemon's ServiceAccount", str(rb))


def check_daemon_objects(docs, kv, tls, second_scheduler=False, monitor=False):
    dep = find(docs, "Deployment", FULLNAME)
    if not C.ok(dep is not None, f"[{kv}] Deployment {FULLNAME} rendered"):
        return
    spec = dep["spec"]
    pod = spec["template"]["spec"]
    c = container(dep, "scheduler-extender")
    C.eq(spec.get("replicas"), 2, f"[{kv}] Deployment replicas is 2 (a leader and a standby)")
    C.eq(spec.get("strategy"), {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
         f"[{kv}] Deployment strategy RollingUpdate, maxSurge 1, maxUnavailable 0 (a new pod is Ready before an old one stops)")
    env = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") for e in c.get("env", [])}
    C.eq({k: env.get(k) for k in DOWNWARD_ENV}, DOWNWARD_ENV,
         f"[{kv}] env POD_NAME, POD_NAMESPACE, POD_UID from the downward API")
    selector = spec["selector"]["matchLabels"]
    C.ok(LEADER_LABEL not in selector, f"[{kv}] the Deployment's selector has no leader label", str(selector))
    C.eq(pod.get("affinity"), default_anti_affinity(selector),
         f"[{kv}] preferred pod anti-affinity across nodes (weight 100, kubernetes.io/hostname) by default")
    C.eq(c["image"], "ghcr.io/scheduler-extender/scheduler-extender:0.1.0", f"[{kv}] daemon image tag defaults to appVersion")
    psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
    C.ok(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 65532
         and psc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
         f"[{kv}] pod securityContext: runAsNonRoot, runAsUser 65532, seccomp RuntimeDefault", str(psc))
    C.ok(csc.get("allowPrivilegeEscalation") is False and csc.get("readOnlyRootFilesystem") is True
         and csc.get("capabilities", {}).get("drop") == ["ALL"] and csc.get("runAsNonRoot") is True,
         f"[{kv}] container securityContext: no privilege escalation, read-only root, drop ALL", str(csc))
    C.eq(pod.get("priorityClassName"), "system-cluster-critical", f"[{kv}] priorityClassName system-cluster-critical")
    sa = find(docs, "ServiceAccount", FULLNAME)
    C.ok(sa is not None and pod.get("serviceAccountName") == FULLNAME, f"[{kv}] pod runs as ServiceAccount {FULLNAME}")
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    port_name = "https" if tls else "http"
    C.eq(ports, {port_name: 8888, "admin": 8889}, f"[{kv}] container ports {port_name}:8888, admin:8889")
    C.eq((c["livenessProbe"]["httpGet"]["path"], c["livenessProbe"]["httpGet"]["port"]), ("/healthz", "admin"),
         f"[{kv}] liveness probe GET /healthz on the admin port")
    C.eq((c["readinessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["port"]), ("/readyz", "admin"),
         f"[{kv}] readiness probe GET /readyz on the admin port")
    C.ok("checksum/config" in spec["template"]["metadata"].get("annotations", {}),
         f"[{kv}] pod template carries checksum/config (config changes roll the pod)")

    # --config points at the ConfigMap's key through its mount.
    cfg_arg = next((a for a in c.get("args", []) if a.startswith("--config=")), "")
    vol, mnt = mount_of(dep, c, lambda v: v.get("configMap", {}).get("name") == FULLNAME)
    C.ok(vol is not None and mnt.get("readOnly") and cfg_arg == f"--config={mnt['mountPath']}/config.yaml",
         f"[{kv}] --config names config.yaml of the ConfigMap mounted read-only", f"{cfg_arg} {mnt}")

    cfg = daemon_config(docs)
    C.ok(cfg is not None and cfg.get("mode") == "kubernetes", f"[{kv}] daemon config: mode: kubernetes")
    C.eq(cfg["server"]["listen"], "0.0.0.0:8888", f"[{kv}] daemon config: server.listen 0.0.0.0:8888")
    C.eq(cfg["admin"]["listen"], "0.0.0.0:8889", f"[{kv}] daemon config: admin.listen 0.0.0.0:8889")
    C.eq(cfg["kubernetes"]["kubeconfig"], "", f"[{kv}] daemon config: in-cluster credentials")
    C.ok("standalone" not in cfg, f"[{kv}] daemon config: no standalone section")
    daemon_keys = key_paths(load_yaml(os.path.join(ARGS.repo, "examples/config.yaml")))
    unknown = sorted(key_paths(cfg) - daemon_keys)
    C.ok(not unknown, f"[{kv}] daemon config: only keys the daemon knows (examples/config.yaml)", str(unknown))

    tls_cfg = cfg["server"]["tls"]
    if tls:
        secret_name = f"{FULLNAME}-tls"
        vol, mnt = mount_of(dep, c, lambda v: "secret" in v)
        secret = find(docs, "Secret", secret_name)
        C.ok(vol is not None and vol["secret"]["secretName"] == secret_name and mnt.get("readOnly"),
             f"[{kv}] TLS secret {secret_name} mounted read-only", str(mnt))
        if vol is not None:
            d = mnt["mountPath"]
            C.eq(tls_cfg, {"cert_file": f"{d}/tls.crt", "key_file": f"{d}/tls.key", "client_ca_file": f"{d}/ca.crt",
                           "client_names": []},
                 f"[{kv}] daemon config: server.tls paths are the mounted secret's files")
        C.ok(secret is not None and set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt"}
             and base64.b64decode(secret["data"]["tls.crt"]).decode() == FAKE_CERT,
             f"[{kv}] TLS secret holds tls.crt, tls.key, ca.crt from the inline values")
    else:
        C.eq(tls_cfg, {"cert_file": "", "key_file": "", "client_ca_file": "", "client_names": []},
             f"[{kv}] daemon config: no TLS")
        C.ok(find(docs, "Secret", f"{FULLNAME}-tls") is None, f"[{kv}] no TLS secret")

    C.eq(cfg.get("ha"), {"enabled": True, "lease_name": FULLNAME, "lease_namespace": "", "lease_duration": "2s",
                         "renew_deadline": "1500ms", "retry_period": "500ms", "leader_label": LEADER_LABEL},
         f"[{kv}] daemon config: ha on, Lease named {FULLNAME} in the pod's namespace (POD_NAMESPACE)")

    svc = find(docs, "Service", FULLNAME)
    sports = {p["name"]: (p["port"], p["targetPort"]) for p in svc["spec"]["ports"]}
    C.eq(sports, {port_name: (8888, port_name)}, f"[{kv}] Service ports: the scheduler's only")
    pod_labels = spec["template"]["metadata"]["labels"]
    C.eq(svc["spec"]["selector"], dict(selector, **{LEADER_LABEL: "true"}),
         f"[{kv}] Service selects the daemon's pods and {LEADER_LABEL}: \"true\" (the leader only)")
    C.ok(labels_match(svc["spec"]["selector"], dict(pod_labels, **{LEADER_LABEL: "true"}))
         and not labels_match(svc["spec"]["selector"], pod_labels),
         f"[{kv}] Service selects a labelled (leader) pod, not an unlabelled (standby) one")
    msvc = find(docs, "Service", f"{FULLNAME}-metrics")
    sm = find(docs, "ServiceMonitor", FULLNAME)
    if monitor:
        if C.ok(msvc is not None, f"[{kv}] metrics Service {FULLNAME}-metrics rendered (serviceMonitor.enabled)"):
            C.eq({p["name"]: (p["port"], p["targetPort"]) for p in msvc["spec"]["ports"]}, {"metrics": (8889, "admin")},
                 f"[{kv}] metrics Service: port metrics 8889 -> admin")
            C.eq(msvc["spec"]["selector"], selector,
                 f"[{kv}] metrics Service selects every replica (the Deployment's selector, no leader label)")
            sel = (sm or {}).get("spec", {}).get("selector", {}).get("matchLabels", {})
            C.ok(sm is not None and sel.get("app.kubernetes.io/component") == "metrics"
                 and labels_match(sel, msvc["metadata"]["labels"]) and not labels_match(sel, svc["metadata"]["labels"]),
                 f"[{kv}] ServiceMonitor selects the metrics Service and not the scheduler-facing one", str(sel))
            C.ok(sm is not None and sm["spec"]["endpoints"][0]["port"] == "metrics",
                 f"[{kv}] ServiceMonitor scrapes port metrics (the admin listener)")
    else:
        C.ok(msvc is None and sm is None, f"[{kv}] no metrics Service or ServiceMonitor without serviceMonitor.enabled")
    C.eq(cfg["kubernetes"]["scheduler_names"], ["default-scheduler", "gpu-scheduler"] if second_scheduler else ["default-scheduler"],
         f"[{kv}] daemon config: kubernetes.scheduler_names" + (" with the second scheduler's name" if second_scheduler else ""))
    C.ok(labels_match(spec["selector"]["matchLabels"], spec["template"]["metadata"]["labels"]),
         f"[{kv}] the Deployment's selector matches the daemon's pods")

    role = find(docs, "ClusterRole", FULLNAME)
    C.eq(rule_triples(role["rules"]), table_rbac(),
         f"[{kv}] ClusterRole is exactly get/list/watch nodes, pods, pvcs, pvs, storageclasses, csidrivers, csistoragecapacities, DRA's slices, claims, classes + create pods/binding + patch pods, pvcs")
    crb = find(docs, "ClusterRoleBinding", FULLNAME)
    C.ok(crb["roleRef"]["name"] == FULLNAME and crb["subjects"] == [
        {"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}],
         f"[{kv}] ClusterRoleBinding binds it to the daemon's ServiceAccount")
    check_leader_election_rbac(docs, kv)

    pdb = find(docs, "PodDisruptionBudget", FULLNAME)
    if C.ok(pdb is not None, f"[{kv}] PodDisruptionBudget rendered by default"):
        C.eq(pdb["spec"], {"maxUnavailable": 1, "selector": {"matchLabels": selector}},
             f"[{kv}] PodDisruptionBudget: maxUnavailable 1 (no minAvailable) over every replica")


def check_placement_route(docs, kv, route, overrides=None):
    """The daemon's scoring carries placementByRoute's set for the route, but what config.scoring sets."""
    scoring = (daemon_config(docs) or {}).get("scoring") or {}
    values = load_yaml(os.path.join(ARGS.repo, CHART_REL, "values.yaml"))
    want = dict(values["placementByRoute"][route], **(overrides or {}))
    got = {k: scoring.get(k) for k in want}
    C.eq(got, want, f"[{kv}] fragmentation settings of the {route} route")
    C.eq(scoring.get("gpu_packing"), "fragmentation", f"[{kv}] gpu_packing fragmentation")


def check_bench_reads_the_chart_scoring(docs):
    """bench/chart_scoring.py, which the benchmarks run the daemon with, gives what the chart renders."""
    sys.path.insert(0, os.path.join(ARGS.repo, "bench"))
    import chart_scoring  # noqa: E402
    values = load_yaml(os.path.join(ARGS.repo, CHART_REL, "values.yaml"))
    rendered = (daemon_config(docs) or {}).get("scoring") or {}
    C.eq(chart_scoring.scoring_for(values, "every-pod"), rendered, "bench/chart_scoring.py every-pod = the chart's scoring")


def check_placement_routes():
    docs = render("1.31.0", "default placement")
    if docs:
        check_placement_route(docs, "1.31.0/default", "everyPod")
        check_bench_reads_the_chart_scoring(docs)
    docs = render("1.31.0", "placement with a window of its own", sets=["config.scoring.fragmentation_window=50"])
    if docs:
        check_placement_route(docs, "1.31.0/window", "everyPod", {"fragmentation_window": 50})


def check_second_scheduler(docs, kv, want_api, want_tag, tls, every_pod=True, relay=True):
    cfg = scheduler_config(docs)
    if not C.ok(cfg is not None, f"[{kv}] second scheduler ConfigMap rendered"):
        return
    C.eq(cfg["apiVersion"], f"kubescheduler.config.k8s.io/{want_api}", f"[{kv}] scheduler config apiVersion {want_api}")
    C.eq(cfg["kind"], "KubeSchedulerConfiguration", f"[{kv}] scheduler config kind")
    has_bind_addr = "healthzBindAddress" in cfg or "metricsBindAddress" in cfg
    if want_api in ("v1beta1", "v1beta2"):
        C.ok(cfg.get("healthzBindAddress") == "127.0.0.1:10251" and cfg.get("metricsBindAddress") == "127.0.0.1:10251",
             f"[{kv}] {want_api}: insecure healthz/metrics kept on loopback")
    else:
        C.ok(not has_bind_addr, f"[{kv}] {want_api}: no healthzBindAddress/metricsBindAddress (fields removed in v1beta3)")
    C.eq(cfg["leaderElection"], {"leaderElect": True, "resourceLock": "leases", "resourceName": "gpu-scheduler",
                                 "resourceNamespace": NAMESPACE}, f"[{kv}] leader election on Lease gpu-scheduler")
    C.eq(cfg["profiles"], [{"schedulerName": "gpu-scheduler"}], f"[{kv}] one profile, gpu-scheduler")
    scheme = "https" if tls else "http"
    want_ext = {
        "urlPrefix": f"{scheme}://{FULLNAME}.{NAMESPACE}.svc:8888/scheduler",
        "filterVerb": "filter", "prioritizeVerb": "prioritize", "bindVerb": "bind", "preemptVerb": "preempt",
        "weight": 10, "nodeCacheCapable": True, "httpTimeout": "5s", "ignorable": False,
        "managedResources": [{"name": "nvidia.com/gpu", "ignoredByScheduler": False},
                             {"name": "aliyun.com/gpu-mem", "ignoredByScheduler": False},
                             {"name": "aliyun.com/gpu-count", "ignoredByScheduler": False}],
    }
    ext = dict(cfg["extenders"][0])
    tls_config = ext.pop("tlsConfig", None)
    enable_https = ext.pop("enableHTTPS", None)
    C.eq(ext, want_ext, f"[{kv}] extender entry (urlPrefix, verbs, weight, nodeCacheCapable, managedResources, ...)")
    C.eq(len(cfg["extenders"]), 2 if every_pod else 1,
         f"[{kv}] {'two extender entries (extender.everyPod.enabled)' if every_pod else 'one extender entry'}")
    dep = find(docs, "Deployment", SCHED_FULLNAME)
    c = container(dep, "kube-scheduler")
    relay_c = next((x for x in dep["spec"]["template"]["spec"]["containers"] if x["name"] == "relay"), None)
    if every_pod and len(cfg["extenders"]) == 2:
        second = dict(cfg["extenders"][1])
        second_tls = (second.pop("tlsConfig", None), second.pop("enableHTTPS", None))
        want_second = {"urlPrefix": want_ext["urlPrefix"], "filterVerb": "filter-unmanaged",
                       "prioritizeVerb": "prioritize-unmanaged", "weight": 10,
                       "nodeCacheCapable": True, "httpTimeout": "200ms", "ignorable": True}
        if relay:
            want_second["urlPrefix"] = "http://127.0.0.1:8890/scheduler"
            C.eq(second_tls, (None, None), f"[{kv}] every-pod entry: plain HTTP to the relay on loopback")
            C.eq(second, want_second, f"[{kv}] every-pod entry: filter-unmanaged and prioritize-unmanaged, through the relay "
                 "http://127.0.0.1:8890/scheduler, ignorable, 200ms")
            daemon_c = container(find(docs, "Deployment", FULLNAME), "scheduler-extender")
            if C.ok(relay_c is not None, f"[{kv}] relay sidecar in the scheduler's pod"):
                C.eq((relay_c["image"], relay_c["command"]), (daemon_c["image"], ["scheduler-extender-relay"]),
                     f"[{kv}] relay sidecar: the daemon's image, command scheduler-extender-relay")
                want_args = ["--listen=127.0.0.1:8890", f"--upstream={scheme}://{FULLNAME}.{NAMESPACE}.svc:8888",
                             "--upstream-timeout=150ms", "--open-for=5s"]
                if tls:
                    rvol, rmnt = mount_of(dep, relay_c, lambda v: "secret" in v)
                    d = rmnt["mountPath"] if rmnt else "?"
                    want_args += [f"--ca-file={d}/ca.crt", f"--cert-file={d}/tls.crt", f"--key-file={d}/tls.key"]
                    C.eq(d, tls_config["caFile"].rsplit("/", 1)[0] if tls_config else None,
                         f"[{kv}] relay sidecar mounts the managed entry's CA and client certificate")
                C.eq(relay_c["args"], want_args, f"[{kv}] relay sidecar args (loopback listen, the daemon's Service, "
                     "timeout, open-for, TLS files)")
                C.ok("ports" not in relay_c, f"[{kv}] relay sidecar publishes no port")
        else:
            C.eq(second_tls, (tls_config, enable_https), f"[{kv}] every-pod entry: the same TLS settings as the first")
            C.eq(second, want_second,
                 f"[{kv}] every-pod entry: filter-unmanaged and prioritize-unmanaged, no managedResources, same urlPrefix and weight, "
                 "ignorable, 200ms")
    if not (every_pod and relay):
        C.ok(relay_c is None, f"[{kv}] no relay sidecar")

    C.eq(c["image"], f"registry.k8s.io/kube-scheduler:{want_tag}", f"[{kv}] kube-scheduler image tag {want_tag}")
    vol, mnt = mount_of(dep, c, lambda v: v.get("configMap", {}).get("name") == SCHED_FULLNAME)
    C.ok(vol is not None and f"--config={mnt['mountPath']}/scheduler-config.yaml" in c["command"],
         f"[{kv}] kube-scheduler --config names the mounted ConfigMap key", str(c["command"]))
    C.eq(dep["spec"]["template"]["spec"]["serviceAccountName"], SCHED_FULLNAME, f"[{kv}] scheduler ServiceAccount")
    C.eq((c["livenessProbe"]["httpGet"]["port"], c["livenessProbe"]["httpGet"]["scheme"]), (10259, "HTTPS"),
         f"[{kv}] scheduler probes on the secure port")
    C.ok(not labels_match(find(docs, "Deployment", FULLNAME)["spec"]["selector"]["matchLabels"],
                          dep["spec"]["template"]["metadata"]["labels"]),
         f"[{kv}] the daemon's selector does not select the scheduler's pods")

    subj = [{"kind": "ServiceAccount", "name": SCHED_FULLNAME, "namespace": NAMESPACE}]
    crbs = {(b["roleRef"]["kind"], b["roleRef"]["name"]) for b in find_all(docs, "ClusterRoleBinding")
            if b["subjects"] == subj}
    C.eq(crbs, {("ClusterRole", "system:kube-scheduler"), ("ClusterRole", "system:volume-scheduler")},
         f"[{kv}] scheduler bound to system:kube-scheduler and system:volume-scheduler")
    rbs = {(b["metadata"]["namespace"], b["roleRef"]["name"]) for b in find_all(docs, "RoleBinding")
           if b["subjects"] == subj}
    C.eq(rbs, {("kube-system", "extension-apiserver-authentication-reader"),
               (NAMESPACE, f"{SCHED_FULLNAME}-leader-election")}, f"[{kv}] scheduler RoleBindings")
    role = find(docs, "Role", f"{SCHED_FULLNAME}-leader-election")
    C.eq(rule_triples(role["rules"]), {("coordination.k8s.io", "leases", "create", ()),
                                       ("coordination.k8s.io", "leases", "get", ("gpu-scheduler",)),
                                       ("coordination.k8s.io", "leases", "update", ("gpu-scheduler",))},
         f"[{kv}] leader-election Role: create leases, get/update only Lease gpu-scheduler")

    if tls:
        C.eq(enable_https, True, f"[{kv}] extender enableHTTPS")
        vol, mnt = mount_of(dep, c, lambda v: "secret" in v)
        secret = find(docs, "Secret", vol["secret"]["secretName"]) if vol else None
        d = mnt["mountPath"] if mnt else "?"
        C.eq(tls_config, {"serverName": f"{FULLNAME}.{NAMESPACE}.svc", "caFile": f"{d}/ca.crt",
                          "certFile": f"{d}/tls.crt", "keyFile": f"{d}/tls.key"},
             f"[{kv}] extender tlsConfig: caFile/certFile/keyFile in the mounted client secret, serverName = Service DNS")
        C.ok(secret is not None and set(secret["data"]) == {"ca.crt", "tls.crt", "tls.key"},
             f"[{kv}] scheduler client secret holds ca.crt, tls.crt, tls.key")
    else:
        C.ok(tls_config is None and not enable_https, f"[{kv}] no tlsConfig without TLS")


def check_network_policy(docs, kv):
    np = find(docs, "NetworkPolicy", FULLNAME)
    if not C.ok(np is not None, f"[{kv}] NetworkPolicy rendered"):
        return
    C.eq(np["apiVersion"], "networking.k8s.io/v1", f"[{kv}] NetworkPolicy networking.k8s.io/v1")
    dep = find(docs, "Deployment", FULLNAME)
    sdep = find(docs, "Deployment", SCHED_FULLNAME)
    C.ok(labels_match(np["spec"]["podSelector"]["matchLabels"], dep["spec"]["template"]["metadata"]["labels"]),
         f"[{kv}] NetworkPolicy selects the daemon's pods")
    C.eq(np["spec"]["policyTypes"], ["Ingress"], f"[{kv}] NetworkPolicy restricts ingress only")
    by_port = {}
    for rule in np["spec"]["ingress"]:
        for p in rule["ports"]:
            by_port.setdefault(p["port"], []).extend(rule["from"])
    C.eq(sorted(by_port), [8888, 8889], f"[{kv}] NetworkPolicy rules for ports 8888 and 8889 only")
    sched_labels = sdep["spec"]["template"]["metadata"]["labels"]
    C.ok(any(set(peer) == {"podSelector"} and labels_match(peer["podSelector"]["matchLabels"], sched_labels)
             for peer in by_port.get(8888, [])),
         f"[{kv}] the second scheduler's pods may reach 8888")
    C.eq(len(by_port.get(8888, [])), 1, f"[{kv}] only the second scheduler may reach 8888 (schedulerFrom empty)")
    C.eq(by_port.get(8889), [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
         f"[{kv}] admin port only from networkPolicy.metricsFrom")


def step_render():
    nondefault = nondefault_values_file()

    for kv in ["1.20.2", "1.31.0"]:
        docs = render(kv, "default values")
        if docs:
            C.eq(kinds(docs), sorted([("ServiceAccount", FULLNAME), ("ConfigMap", FULLNAME), ("ClusterRole", FULLNAME),
                                      ("ClusterRoleBinding", FULLNAME), ("Role", f"{FULLNAME}-leader-election"),
                                      ("RoleBinding", f"{FULLNAME}-leader-election"), ("Service", FULLNAME),
                                      ("Deployment", FULLNAME), ("PodDisruptionBudget", FULLNAME)]),
                 f"[{kv}] default values render exactly SA, ConfigMap, ClusterRole(Binding), leader-election "
                 "Role(Binding), Service, Deployment, PodDisruptionBudget")
            check_daemon_objects(docs, kv, tls=False)

    for kv, api, tag, pdb in [("1.20.2", "v1beta1", "v1.20.2", "policy/v1beta1"),
                              ("1.31.0", "v1", "v1.31.0", "policy/v1")]:
        docs = render(kv, "second scheduler + TLS + NetworkPolicy + PDB", values_files=[nondefault])
        if not docs:
            continue
        check_daemon_objects(docs, kv, tls=True, second_scheduler=True, monitor=True)
        check_second_scheduler(docs, kv, api, tag, tls=True)
        check_network_policy(docs, kv)
        C.eq(find(docs, "PodDisruptionBudget", FULLNAME)["apiVersion"], pdb, f"[{kv}] PodDisruptionBudget {pdb}")

    for kv, api, tag in [("1.20.2", "v1beta1", "v1.20.2"), ("1.31.0", "v1", "v1.31.0")]:
        docs = render(kv, "second scheduler + TLS + every-pod entry", values_files=[nondefault],
                      sets=["extender.everyPod.enabled=true"])
        if docs:
            check_second_scheduler(docs, kv, api, tag, tls=True, every_pod=True)

    check_generated_tls()

    # Plain HTTP second scheduler.
    docs = render("1.20.2", "second scheduler without TLS", sets=["secondScheduler.enabled=true"])
    if docs:
        check_second_scheduler(docs, "1.20.2/http", "v1beta1", "v1.20.2", tls=False)
    docs = render("1.31.0", "second scheduler without TLS, without the every-pod entry",
                  sets=["secondScheduler.enabled=true", "extender.everyPod.enabled=false"])
    if docs:
        check_second_scheduler(docs, "1.31.0/http", "v1", "v1.31.0", tls=False, every_pod=False)
        check_placement_route(docs, "1.31.0/http", "gpuPods")
    check_placement_routes()
    docs = render("1.31.0", "second scheduler, every-pod entry without the relay",
                  values_files=[nondefault], sets=["extender.everyPod.enabled=true", "extender.everyPod.relay.enabled=false"])
    if docs:
        check_second_scheduler(docs, "1.31.0/no-relay", "v1", "v1.31.0", tls=True, every_pod=True, relay=False)

    # The Grafana dashboard: off by default (the exact kinds above), a ConfigMap Grafana's sidecar
    # loads when on. tests/server/metrics_test.cpp checks that the daemon exports every metric its
    # queries name.
    docs = render("1.31.0", "Grafana dashboard", sets=[
        "grafanaDashboard.enabled=true", "grafanaDashboard.namespace=monitoring",
        "grafanaDashboard.annotations.grafana_folder=GPU", "grafanaDashboard.labels.team=ml"])
    if docs:
        cm = find(docs, "ConfigMap", FULLNAME + "-dashboard")
        if C.ok(cm is not None, "grafanaDashboard.enabled renders the dashboard ConfigMap"):
            md = cm["metadata"]
            C.eq((md.get("namespace"), md["labels"].get("grafana_dashboard"), md["labels"].get("team"),
                  md.get("annotations", {}).get("grafana_folder")), ("monitoring", "1", "ml", "GPU"),
                 "dashboard ConfigMap: namespace, grafana_dashboard: \"1\" and the extra labels and annotations")
            want = json.load(open(os.path.join(ARGS.repo, CHART_REL, "dashboards/scheduler-extender.json")))
            C.eq(json.loads(cm["data"]["scheduler-extender.json"]), want,
                 "dashboard ConfigMap carries dashboards/scheduler-extender.json unchanged")
            exprs = " ".join(t["expr"] for p in want["panels"] for t in p.get("targets", []))
            for family in ["scheduler_extender_requests_total", "scheduler_extender_request_duration_seconds_bucket",
                           "scheduler_extender_filter_nodes_total", "scheduler_extender_node_gpus_used",
                           "scheduler_extender_node_pool_used_bytes", "scheduler_extender_reservations_in_flight",
                           "scheduler_extender_refusals_total"]:
                C.ok(family in exprs, f"the dashboard plots {family}")

    # The configuration version follows the scheduler's version, vendor suffixes stripped.
    for kv, api, tag in [("1.21.14", "v1beta1", "v1.21.14"), ("1.22.17", "v1beta2", "v1.22.17"),
                         ("1.23.0", "v1beta3", "v1.23.0"), ("1.24.17", "v1beta3", "v1.24.17"),
                         ("1.25.0", "v1", "v1.25.0"), ("1.29.3", "v1", "v1.29.3"),
                         ("v1.27.3-eks-4f4795d", "v1", "v1.27.3"), ("v1.28.2+k3s1", "v1", "v1.28.2"),
                         ("v1.22.15-gke.100", "v1beta2", "v1.22.15")]:
        docs = render(kv, "second scheduler", sets=["secondScheduler.enabled=true"])
        if docs:
            cfg = scheduler_config(docs)
            image = container(find(docs, "Deployment", SCHED_FULLNAME))["image"]
            C.eq((cfg["apiVersion"].split("/")[1], image.split(":")[1]), (api, tag),
                 f"[{kv}] scheduler config {api}, image tag {tag}")
    # A pinned tag decides the configuration version; configApiVersion overrides both.
    for sets, api, tag, what in [
        (["secondScheduler.image.tag=v1.24.17"], "v1beta3", "v1.24.17", "pinned tag v1.24.17"),
        (["secondScheduler.image.tag=v1.22.0-custom.1"], "v1beta2", "v1.22.0-custom.1", "pinned custom tag"),
        (["secondScheduler.configApiVersion=v1beta3"], "v1beta3", "v1.31.0", "configApiVersion override"),
    ]:
        docs = render("1.31.0", what, sets=["secondScheduler.enabled=true"] + sets)
        if docs:
            cfg = scheduler_config(docs)
            image = container(find(docs, "Deployment", SCHED_FULLNAME))["image"]
            C.eq((cfg["apiVersion"].split("/")[1], image.split(":")[1]), (api, tag), f"[1.31.0] {what}: config {api}, image {tag}")

    # Other values reach the rendering.
    docs = render("1.31.0", "custom values", sets=[
        "secondScheduler.enabled=true", "extender.managedResources=null", "extender.everyPod.enabled=false",
        "extender.weight=5",
        "extender.ignorable=true", "secondScheduler.schedulerName=ml-scheduler",
        "secondScheduler.percentageOfNodesToScore=100", "config.server.path_prefix=/ext/",
        "config.logging.format=json", "rbac.csiStorageCapacity=false", "image.tag=0.2.0",
        "service.port=9443", "secondScheduler.leaderElection.enabled=false"])
    if docs:
        cfg = scheduler_config(docs)
        ext = cfg["extenders"][0]
        C.ok("managedResources" not in ext, "managedResources: null -> no managedResources (every pod)")
        C.eq((ext["weight"], ext["ignorable"], ext["urlPrefix"]),
             (5, True, f"http://{FULLNAME}.{NAMESPACE}.svc:9443/ext"), "weight, ignorable, service.port, path_prefix reach the entry")
        C.eq((cfg["profiles"][0]["schedulerName"], cfg["leaderElection"]["resourceName"], cfg["leaderElection"]["leaderElect"],
              cfg.get("percentageOfNodesToScore")), ("ml-scheduler", "ml-scheduler", False, 100),
             "schedulerName, leader election, percentageOfNodesToScore reach the config")
        C.ok(find(docs, "Role", f"{SCHED_FULLNAME}-leader-election") is None, "no Lease Role without leader election")
        dcfg = daemon_config(docs)
        C.eq((dcfg["logging"]["format"], dcfg["server"]["path_prefix"]), ("json", "/ext/"), "config values reach the daemon's file")
        C.eq(rule_triples(find(docs, "ClusterRole", FULLNAME)["rules"]), table_rbac() - CSI_RBAC,
             "rbac.csiStorageCapacity=false drops csidrivers and csistoragecapacities")
        C.eq(dcfg.get("storage", {}).get("capacity_tracking"), False,
             "rbac.csiStorageCapacity=false turns the daemon's capacity tracking off (it could not watch)")
        C.eq(container(find(docs, "Deployment", FULLNAME))["image"],
             "ghcr.io/scheduler-extender/scheduler-extender:0.2.0", "image.tag overrides appVersion")

    check_ha_variants()

    # Invalid values fail with a reason.
    for sets, files, expect, what in [
        (["config.ha.enabled=false"], [], "replicaCount 2 needs config.ha.enabled",
         "config.ha.enabled=false with replicaCount 2"),
        (["config.ha.enabled=false", "replicaCount=3"], [], "replicaCount 3 needs config.ha.enabled",
         "config.ha.enabled=false with replicaCount 3"),
        (["config.ha.leader_label="], [], "needs config.ha.leader_label", "two replicas without a leader label"),
        (["podDisruptionBudget.minAvailable=1"], [], "exactly one of maxUnavailable and minAvailable",
         "a PodDisruptionBudget with both maxUnavailable and minAvailable"),
        (["podDisruptionBudget.maxUnavailable=null"], [], "needs maxUnavailable or minAvailable",
         "a PodDisruptionBudget with neither"),
        (["tls.enabled=true", "tls.key=x"], [], "needs both tls.cert and tls.key", "TLS with a key and no certificate"),
        (["tls.enabled=true", "tls.cert=x"], [], "needs both tls.cert and tls.key", "TLS with a certificate and no key"),
        (["tls.enabled=true", "tls.existingSecret=x", "secondScheduler.enabled=true"], [],
         "needs a client certificate", "second scheduler without client certificate"),
        (["config.mode=standalone"], [], "mode", "config.mode set in values"),
        (["config.kubernetes.kubeconfig=/x"], [], "kubeconfig", "config.kubernetes.kubeconfig set in values"),
        (["config.sever.threads=4"], [], "sever", "a typo in config"),
        (["secondScheduler.enabled=true", "extender.weight=0"], [], "weight", "weight 0 with prioritizeVerb"),
        (["secondScheduler.enabled=true", "extender.weight=0", "extender.prioritizeVerb=", "extender.everyPod.enabled=true"],
         [], "everyPod", "weight 0 with the every-pod entry"),
        (["extender.everyPod.httpTimeout=fast"], [], "httpTimeout", "an every-pod httpTimeout that is no duration"),
        (["secondScheduler.enabled=true", "extender.managedResources=null"], [], "everyPod.enabled needs extender.managedResources",
         "the every-pod entry with a first entry that already sees every pod"),
        (["secondScheduler.configApiVersion=v2"], [], "configApiVersion", "unknown configApiVersion"),
        (["networkPolicy.enabled=true"], [], "would lock it out",
         "a NetworkPolicy that would lock the cluster's host-network scheduler out"),
        (["networkPolicy.enabled=true", "networkPolicy.schedulerFrom[0].podSelector.matchLabels.component=kube-scheduler"],
         [], "would lock it out", "a NetworkPolicy admitting the host-network scheduler by pod selector only"),
    ]:
        good, out = helm_template("1.31.0", sets=sets, set_files=files)
        C.ok(not good and expect in out, f"invalid values rejected: {what}", str(out)[:600])
    good, docs = helm_template("1.31.0", sets=["networkPolicy.enabled=true",
                                               "networkPolicy.schedulerFrom[0].ipBlock.cidr=10.0.0.0/24"])
    np = find(docs, "NetworkPolicy", FULLNAME) if good else None
    C.ok(np is not None and np["spec"]["ingress"][0]["from"] == [{"ipBlock": {"cidr": "10.0.0.0/24"}}],
         "control-plane route: the NetworkPolicy admits the control-plane ipBlock to 8888", str(docs)[:600])
    good, docs = helm_template("1.31.0")
    C.ok(good and find(docs, "NetworkPolicy", FULLNAME) is None, "default values (no second scheduler): no NetworkPolicy")
    good, docs = helm_template("1.31.0", sets=["secondScheduler.enabled=true"])
    C.ok(good and find(docs, "NetworkPolicy", FULLNAME) is not None,
         "with the second scheduler a NetworkPolicy is on by default (networkPolicy.enabled: auto)")
    good, out = helm_template("1.19.16")
    C.ok(not good and "kubeVersion" in out, "Kubernetes 1.19 is refused (kubeVersion >=1.20.0-0)", str(out)[:400])


GENERATED_SETS = ["tls.enabled=true", "secondScheduler.enabled=true"]


def secret_files(secret, directory):
    """Writes a rendered Secret's data as files (as its volume would hold them); returns directory."""
    os.makedirs(directory, exist_ok=True)
    for key, value in secret["data"].items():
        with open(os.path.join(directory, key), "wb") as f:
            f.write(base64.b64decode(value))
    return directory


def certificate_text(path):
    r = run(["openssl", "x509", "-in", path, "-noout", "-subject", "-ext", "subjectAltName,extendedKeyUsage"])
    return r.stdout if r.returncode == 0 else ""


def check_generated_tls():
    """tls.enabled alone: the chart generates a CA, the daemon's serving certificate and the
    scheduler's client certificate, admits that client's name only, and rolls both Deployments when
    the material is new (helm template: always new; reuse on upgrade is checked by tests/e2e)."""
    docs = render("1.31.0", "generated TLS (tls.enabled only)", sets=GENERATED_SETS)
    if not docs:
        return
    server = find(docs, "Secret", f"{FULLNAME}-tls")
    client = find(docs, "Secret", f"{SCHED_FULLNAME}-tls")
    if not C.ok(server is not None and client is not None, "generated TLS: the daemon's and the scheduler's secrets"):
        return
    for secret in (server, client):
        C.eq(sorted(secret["data"]), ["ca.crt", "tls.crt", "tls.key"], f"generated secret {secret['metadata']['name']}: keys")
        C.eq(secret["metadata"].get("annotations", {}).get("scheduler-extender.io/generated"), "true",
             f"generated secret {secret['metadata']['name']} is marked generated (what an upgrade reuses)")
    C.ok(server["data"]["ca.crt"] == client["data"]["ca.crt"], "both generated secrets carry the one CA")
    C.ok(server["data"]["tls.key"] != client["data"]["tls.key"], "the client's key is not the server's")
    C.eq(daemon_config(docs)["server"]["tls"]["client_names"], [SCHED_FULLNAME],
         "generated TLS: the daemon admits the generated client's name only")
    dep = find(docs, "Deployment", FULLNAME)
    sched = find(docs, "Deployment", SCHED_FULLNAME)
    stamp = dep["spec"]["template"]["metadata"]["annotations"].get("checksum/tls")
    C.ok(stamp and sched["spec"]["template"]["metadata"]["annotations"].get("checksum/tls") == stamp,
         "generated TLS: the daemon's and the second scheduler's pods carry the same checksum/tls (new material rolls both)")
    C.ok(all(x["metadata"]["annotations"].get("scheduler-extender.io/generation") == stamp for x in (server, client)),
         "generated TLS: both secrets record the generation the pods carry (what an upgrade that reuses them keeps)")
    _, smnt = mount_of(sched, container(sched), lambda v: "secret" in v)
    C.eq(next(v for v in sched["spec"]["template"]["spec"]["volumes"] if v["name"] == smnt["name"])["secret"]["secretName"],
         f"{SCHED_FULLNAME}-tls", "the second scheduler mounts the generated client secret")
    if shutil.which("openssl"):
        d = tempfile.mkdtemp(dir=ARGS.work)
        sdir = secret_files(server, os.path.join(d, "server"))
        cdir = secret_files(client, os.path.join(d, "client"))
        for what, path in [("server", f"{sdir}/tls.crt"), ("client", f"{cdir}/tls.crt")]:
            r = run(["openssl", "verify", "-CAfile", f"{sdir}/ca.crt", path])
            C.ok(r.returncode == 0, f"the generated {what} certificate chains to the generated CA", r.stdout + r.stderr)
        text = certificate_text(f"{sdir}/tls.crt")
        C.ok(f"DNS:{FULLNAME}.{NAMESPACE}.svc" in text, "the serving certificate names the Service host", text)
        text = certificate_text(f"{cdir}/tls.crt")
        C.ok(re.search(rf"CN\s*=\s*{SCHED_FULLNAME}\b", text) and "TLS Web Client Authentication" in text,
             "the client certificate is for client authentication with CN <fullname>-scheduler", text)
    good, out = helm_template("1.31.0", sets=GENERATED_SETS + ["tls.clientNames={other-scheduler}"])
    C.ok(good and daemon_config([d for d in out if d])["server"]["tls"]["client_names"] == ["other-scheduler", SCHED_FULLNAME],
         "generated TLS with tls.clientNames: the given names and the generated one", str(out)[:400])
    good, out = helm_template("1.31.0", sets=GENERATED_SETS, extra=["--set-json", 'tls.clientNames=[""]'])
    C.ok(not good, "an empty name in tls.clientNames is refused by the values schema", str(out)[:300])


def check_ha_variants():
    """Leader election off (one replica), the Lease elsewhere, minAvailable, a custom affinity."""
    docs = render("1.31.0", "config.ha.enabled=false, replicaCount=1",
                  sets=["config.ha.enabled=false", "replicaCount=1"])
    if docs:
        dep = find(docs, "Deployment", FULLNAME)
        svc = find(docs, "Service", FULLNAME)
        C.eq((dep["spec"]["replicas"], dep["spec"]["strategy"]), (1, {"type": "Recreate"}),
             "ha off: one replica, strategy Recreate (never two ledgers at once)")
        C.eq(svc["spec"]["selector"], dep["spec"]["selector"]["matchLabels"],
             "ha off: the Service selects the one pod without a leader label")
        C.ok(find(docs, "Role", f"{FULLNAME}-leader-election") is None
             and find(docs, "RoleBinding", f"{FULLNAME}-leader-election") is None, "ha off: no leader-election Role")
        C.eq(daemon_config(docs)["ha"]["enabled"], False, "ha off: daemon config ha.enabled false")

    docs = render("1.31.0", "replicaCount=1 with leader election", sets=["replicaCount=1"])
    if docs:
        dep = find(docs, "Deployment", FULLNAME)
        C.eq((dep["spec"]["replicas"], dep["spec"]["strategy"]["type"],
              find(docs, "Service", FULLNAME)["spec"]["selector"].get(LEADER_LABEL)), (1, "RollingUpdate", "true"),
             "replicaCount=1 with ha: RollingUpdate, the Service still follows the leader label")
        check_leader_election_rbac(docs, "1.31.0/1 replica")

    docs = render("1.31.0", "Lease named and placed elsewhere",
                  sets=["config.ha.lease_name=gpu-extender", "config.ha.lease_namespace=kube-system"])
    if docs:
        C.eq((daemon_config(docs)["ha"]["lease_name"], daemon_config(docs)["ha"]["lease_namespace"]),
             ("gpu-extender", "kube-system"), "config.ha.lease_name/lease_namespace reach the daemon's file")
        here = find(docs, "Role", f"{FULLNAME}-leader-election", NAMESPACE)
        there = find(docs, "Role", f"{FULLNAME}-leader-election", "kube-system")
        C.eq(rule_triples(here["rules"]) if here else None,
             {("", "pods", "get", ()), ("", "pods", "list", ()), ("", "pods", "patch", ())},
             "Lease elsewhere: the release namespace's Role keeps the pods rules only")
        C.eq(rule_triples(there["rules"]) if there else None,
             {("coordination.k8s.io", "leases", "get", ("gpu-extender",)),
              ("coordination.k8s.io", "leases", "update", ("gpu-extender",)),
              ("coordination.k8s.io", "leases", "create", ())},
             "Lease elsewhere: a Role in kube-system for Lease gpu-extender")
        rb = find(docs, "RoleBinding", f"{FULLNAME}-leader-election", "kube-system")
        C.ok(rb is not None and rb["subjects"] == [{"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}],
             "Lease elsewhere: its RoleBinding names the daemon's ServiceAccount in the release namespace")

    docs = render("1.31.0", "PodDisruptionBudget with minAvailable",
                  sets=["podDisruptionBudget.minAvailable=1", "podDisruptionBudget.maxUnavailable=null"])
    if docs:
        spec = find(docs, "PodDisruptionBudget", FULLNAME)["spec"]
        C.ok(spec.get("minAvailable") == 1 and "maxUnavailable" not in spec,
             "podDisruptionBudget.minAvailable=1, maxUnavailable=null: minAvailable only", str(spec))
    docs = render("1.31.0", "PodDisruptionBudget with a percentage",
                  extra=["--set-string", "podDisruptionBudget.maxUnavailable=50%"])
    if docs:
        C.eq(find(docs, "PodDisruptionBudget", FULLNAME)["spec"].get("maxUnavailable"), "50%",
             "podDisruptionBudget.maxUnavailable=50% stays a string")
    docs = render("1.31.0", "PodDisruptionBudget off", sets=["podDisruptionBudget.enabled=false"])
    if docs:
        C.ok(find(docs, "PodDisruptionBudget", FULLNAME) is None, "podDisruptionBudget.enabled=false: no PDB")

    docs = render("1.31.0", "custom affinity", sets=[
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].key=node-role.kubernetes.io/control-plane",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].operator=Exists"])
    if docs:
        aff = find(docs, "Deployment", FULLNAME)["spec"]["template"]["spec"]["affinity"]
        C.ok(list(aff) == ["nodeAffinity"], "a given affinity replaces the default anti-affinity", str(aff))


def check_with_kube_scheduler_120():
    """Strict decoding of the rendered v1beta1 configs by the real kube-scheduler v1.20 of tests/e2e
    (only where tests/e2e/lib/build-kube.sh has cached it)."""
    binary = kube_binaries.find_binary("kube-scheduler", "1.20", [os.environ.get("KUBE_BIN", "")])
    if binary is None:
        C.skip("kube-scheduler v1.20 decodes the rendered v1beta1 configs", "no cached v1.20 binary; tests/e2e builds it")
        return
    kubeconfig = tmpfile(ARGS.work, "dummy.kubeconfig", yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "x", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "x", "user": {"token": "x"}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}], "current-context": "x"}))
    for what, kw in [("plain", {"sets": ["secondScheduler.enabled=true"]}),
                     ("TLS", {"values_files": [nondefault_values_file()]})]:
        good, docs = helm_template("1.20.2", **kw)
        if not good:
            C.ok(False, f"render for kube-scheduler v1.20 ({what})", docs)
            continue
        cfg = scheduler_config(docs)
        cfg["clientConnection"] = {"kubeconfig": kubeconfig}
        tls_config = cfg["extenders"][0].get("tlsConfig")
        if tls_config:
            # kube-scheduler reads the files while it builds the extender: give it real ones.
            certs = make_certs(ARGS.work)
            if certs is None:
                C.skip(f"kube-scheduler v1.20 decodes the rendered v1beta1 config ({what})", "no openssl")
                continue
            for key, name in [("caFile", "ca.crt"), ("certFile", "tls.crt"), ("keyFile", "tls.key")]:
                tls_config[key] = os.path.join(certs, name)
        path = tmpfile(ARGS.work, f"v1beta1-{what}.yaml", yaml.safe_dump(cfg))
        out_path = os.path.join(ARGS.work, f"v1beta1-{what}.out.yaml")
        if os.path.exists(out_path):
            os.remove(out_path)
        r = run([binary, f"--config={path}", f"--write-config-to={out_path}"], timeout=60)
        ok = r.returncode == 0 and os.path.exists(out_path)
        decoded = load_yaml(out_path) if ok else {}
        ext = (decoded.get("extenders") or [{}])[0]
        C.ok(ok and ext.get("bindVerb") == "bind" and ext.get("nodeCacheCapable") is True
             and ext.get("urlPrefix") == cfg["extenders"][0]["urlPrefix"],
             f"kube-scheduler v1.20 strictly decodes the rendered v1beta1 config ({what})", r.stderr[-800:])


# ------------------------------------------------------------------------------------------------
# deploy/
# ------------------------------------------------------------------------------------------------

def yaml_blocks(markdown):
    return re.findall(r"```yaml\n(.*?)```", markdown, re.S)


def step_deploy():
    repo = ARGS.repo
    files = sorted(glob.glob(os.path.join(repo, "deploy", "**", "*.yaml"), recursive=True))
    C.ok(len(files) >= 8, f"deploy/ holds {len(files)} YAML files")
    parsed = {}
    for f in files:
        rel = os.path.relpath(f, repo)
        try:
            docs = [d for d in yaml.safe_load_all(open(f)) if d is not None]
            good = bool(docs) and all(isinstance(d, dict) and d.get("apiVersion") and d.get("kind") for d in docs)
            C.ok(good, f"{rel}: {len(docs)} YAML document(s), each with apiVersion and kind")
            parsed[rel] = docs
        except yaml.YAMLError as e:
            C.ok(False, f"{rel}: parses as YAML", str(e))
    for md in sorted(glob.glob(os.path.join(repo, "deploy", "**", "*.md"), recursive=True)) + \
            [os.path.join(repo, CHART_REL, "README.md")]:
        rel = os.path.relpath(md, repo)
        for i, block in enumerate(yaml_blocks(open(md).read())):
            try:
                list(yaml.safe_load_all(block))
                C.ok(True, f"{rel}: yaml block {i + 1} parses")
            except yaml.YAMLError as e:
                C.ok(False, f"{rel}: yaml block {i + 1} parses", str(e))

    # The generated plain manifests equal the chart's rendering.
    env = dict(os.environ, HELM=ARGS.helm)
    r = run([os.path.join(repo, "tests/chart/render-deploy.sh"), "--check"], env=env)
    C.ok(r.returncode == 0, "deploy/scheduler-extender.yaml and deploy/second-scheduler.yaml match the chart",
         (r.stdout + r.stderr)[-2500:])
    plain = parsed.get("deploy/scheduler-extender.yaml", [])
    C.eq(sorted(d["kind"] for d in plain),
         sorted(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
                 "Deployment", "PodDisruptionBudget", "Service"]),
         "deploy/scheduler-extender.yaml: namespace, serviceaccount, rbac (with the leader-election Role), configmap, "
         "deployment, pdb, service")
    pdep = next((d for d in plain if d["kind"] == "Deployment"), None)
    psvc = next((d for d in plain if d["kind"] == "Service"), None)
    prole = next((d for d in plain if d["kind"] == "Role"), None)
    if pdep and psvc and prole:
        env = {e["name"] for e in pdep["spec"]["template"]["spec"]["containers"][0].get("env", [])}
        C.ok(pdep["spec"]["replicas"] == 2 and set(DOWNWARD_ENV) <= env
             and psvc["spec"]["selector"].get(LEADER_LABEL) == "true"
             and ("coordination.k8s.io", "leases", "update", ("scheduler-extender",)) in rule_triples(prole["rules"]),
             "deploy/scheduler-extender.yaml: 2 replicas with the downward-API env, the Service on the leader label, "
             "the Role for Lease scheduler-extender")
    C.ok(all(d["metadata"].get("namespace") in (None, "scheduler-extender") for d in plain),
         "deploy/scheduler-extender.yaml: everything in namespace scheduler-extender")

    # scheduler-config/ documents agree with what the chart renders (v1, release and namespace
    # scheduler-extender).
    good, docs = helm_template("1.31.0", sets=["secondScheduler.enabled=true"],
                               release="scheduler-extender", namespace="scheduler-extender")
    chart_cfg = None
    if C.ok(good, "render the chart's v1 second-scheduler config for comparison", str(docs)[:500]):
        cm = find(docs, "ConfigMap", "scheduler-extender-scheduler")
        chart_cfg = yaml.safe_load(cm["data"]["scheduler-config.yaml"])
    second = load_yaml(os.path.join(repo, "deploy/scheduler-config/second-scheduler.yaml"))
    default = load_yaml(os.path.join(repo, "deploy/scheduler-config/default-scheduler.yaml"))
    if chart_cfg:
        C.eq(second, chart_cfg, "scheduler-config/second-scheduler.yaml is the chart's rendering (v1)")
        want = dict(chart_cfg["extenders"][0])
        got = dict(default["extenders"][0])
        C.ok(got.pop("urlPrefix", "").startswith("http://") and want.pop("urlPrefix"),
             "scheduler-config/default-scheduler.yaml: http urlPrefix")
        C.eq(got, want, "scheduler-config/default-scheduler.yaml: same extender entry as the chart (but urlPrefix)")
        want_every = dict(chart_cfg["extenders"][1]) if len(chart_cfg["extenders"]) > 1 else {}
        got_every = dict(default["extenders"][1]) if len(default["extenders"]) > 1 else {}
        want_every.pop("urlPrefix", None)
        C.ok(got_every.pop("urlPrefix", "").startswith("http://"), "scheduler-config/default-scheduler.yaml: "
             "an every-pod entry, as the chart's default")
        C.eq(got_every, want_every, "scheduler-config/default-scheduler.yaml: the every-pod entry is the chart's "
             "(but urlPrefix)")
    C.eq((default["apiVersion"], default["kind"], default["clientConnection"]["kubeconfig"], default["profiles"]),
         ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration", "/etc/kubernetes/scheduler.conf",
          [{"schedulerName": "default-scheduler"}]),
         "scheduler-config/default-scheduler.yaml: v1, kubeadm's scheduler.conf, default-scheduler profile")
    for rel in ["deploy/scheduler-config/default-scheduler.yaml", "deploy/scheduler-config/second-scheduler.yaml"]:
        text = open(os.path.join(repo, rel)).read()
        lines = text.splitlines()
        for word in ["urlPrefix", "filterVerb", "prioritizeVerb", "bindVerb", "weight", "nodeCacheCapable",
                     "managedResources", "httpTimeout", "ignorable", "enableHTTPS", "caFile", "certFile", "keyFile"]:
            # The field (set, or shown in a commented-out block) comes right after a comment line.
            at = [i for i, l in enumerate(lines) if re.match(rf"^\s*(#\s*)?(- )?{word}:", l)]
            C.ok(any(i > 0 and lines[i - 1].strip().startswith("#") for i in at), f"{rel}: a comment explains {word}")

    # The static-pod snippet in scheduler-config/README.md mounts the directory --config names.
    readme = open(os.path.join(repo, "deploy/scheduler-config/README.md")).read()
    pod = next((yaml.safe_load(b) for b in yaml_blocks(readme) if "kind: Pod" in b), None)
    if C.ok(pod is not None, "scheduler-config/README.md shows the kube-scheduler static pod snippet"):
        c = pod["spec"]["containers"][0]
        cfg_flag = next((a for a in c["command"] if a.startswith("--config=")), "")
        cfg_path = cfg_flag.split("=", 1)[1] if cfg_flag else ""
        vols = {v["name"]: v for v in pod["spec"]["volumes"]}
        mounted = [m for m in c["volumeMounts"] if cfg_path.startswith(m["mountPath"] + "/")]
        C.ok(bool(cfg_path) and mounted and vols[mounted[0]["name"]]["hostPath"]["path"] == mounted[0]["mountPath"]
             and mounted[0].get("readOnly"),
             "static pod snippet: --config file lies in a read-only hostPath mount of the same directory",
             f"{cfg_flag} {mounted}")
        C.ok(pod["spec"].get("hostNetwork") is True, "static pod snippet shows hostNetwork (why urlPrefix uses the ClusterIP)")

    # Example pods.
    values = load_yaml(os.path.join(repo, CHART_REL, "values.yaml"))
    sched = values["secondScheduler"]["schedulerName"]
    classes = values["config"]["storage"]["classes"]
    annotation = values["config"]["gpu"]["memory_annotation"]
    examples = {os.path.basename(k): v[0] for k, v in parsed.items() if k.startswith("deploy/examples/")}
    C.eq(sorted(examples), ["gpu-local-volume-pod.yaml", "gpu-memory-pod.yaml", "gpu-pod.yaml", "multi-gpu-pod.yaml"],
         "deploy/examples: one GPU, several GPUs, GPU memory floor, GPU + local volume")

    def gpus(pod):
        cs = pod["spec"]["containers"]
        app = sum(int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)) for c in cs)
        init = max([int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0))
                    for c in pod["spec"].get("initContainers", [])] or [0])
        return max(app, init)

    for name, pod in examples.items():
        C.ok(pod["kind"] == "Pod" and pod["spec"].get("schedulerName") == sched and gpus(pod) >= 1,
             f"examples/{name}: a Pod for {sched} requesting nvidia.com/gpu")
    if len(examples) == 4:
        C.eq(gpus(examples["gpu-pod.yaml"]), 1, "examples/gpu-pod.yaml: one GPU")
        C.ok(gpus(examples["multi-gpu-pod.yaml"]) > 1, "examples/multi-gpu-pod.yaml: several GPUs")
        C.eq(examples["gpu-memory-pod.yaml"]["metadata"].get("annotations", {}).get(annotation), "40Gi",
             f"examples/gpu-memory-pod.yaml: {annotation}: 40Gi")
        vols = examples["gpu-local-volume-pod.yaml"]["spec"]["volumes"]
        sc = vols[0].get("ephemeral", {}).get("volumeClaimTemplate", {}).get("spec", {}).get("storageClassName")
        C.ok(sc == "local-storage" and classes.get(sc) == "local",
             "examples/gpu-local-volume-pod.yaml: generic ephemeral volume of local-storage (pool local)")


# ------------------------------------------------------------------------------------------------
# Dockerfile
# ------------------------------------------------------------------------------------------------

def runtime_packages():
    text = open(os.path.join(ARGS.repo, "scripts/install-deps.sh")).read()
    m = re.search(r'--runtime.*?packages=\(([^)]*)\)', text, re.S)
    return set(m.group(1).split()) if m else set()


def installed_packages():
    """{package: (set of dependencies, essential)} of every installed package (one dpkg-query)."""
    out = run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}\t${Package}\t${Depends}, ${Pre-Depends}\t${Essential}\n"]).stdout
    pkgs = {}
    for line in out.splitlines():
        status, name, deps, essential = (line.split("\t") + ["", "", "", ""])[:4]
        if not status.startswith("ii"):
            continue
        names = {re.sub(r"\(.*?\)", "", alt).strip().split(":")[0] for alt in re.split(r"[,|]", deps)}
        pkgs[name] = ({n for n in names if n}, essential.strip() == "yes")
    return pkgs


def dependency_closure(roots, pkgs):
    """Installed packages reachable from roots through Depends/Pre-Depends: what apt installs along
    with them in a bookworm-slim image."""
    seen, todo = set(), list(roots)
    while todo:
        pkg = todo.pop()
        if pkg in seen or pkg not in pkgs:
            continue
        seen.add(pkg)
        todo.extend(pkgs[pkg][0] - seen)
    return seen


def step_docker():
    repo = ARGS.repo
    text = open(os.path.join(repo, "Dockerfile")).read()
    lines = [l.strip() for l in re.sub(r"\\\n", " ", text).splitlines() if l.strip() and not l.strip().startswith("#")]
    froms = [l for l in lines if l.upper().startswith("FROM ")]
    C.eq([f.split()[1] for f in froms], ["debian:bookworm-slim", "debian:bookworm-slim"],
         "Dockerfile: two stages on debian:bookworm-slim")
    stage = 0
    build_runs, runtime_runs, copies = [], [], []
    for l in lines:
        if l.upper().startswith("FROM "):
            stage += 1
        elif l.upper().startswith("RUN "):
            (build_runs if stage == 1 else runtime_runs).append(l)
        elif l.upper().startswith("COPY ") and stage == 2:
            copies.append(l)
    C.ok(any("scripts/install-deps.sh" in r and "make build" in r for r in build_runs),
         "Dockerfile build stage: scripts/install-deps.sh then make build", str(build_runs))
    C.ok(any(re.search(r"install-deps\.sh --runtime", r) for r in runtime_runs),
         "Dockerfile runtime stage: install-deps.sh --runtime (no second package list)", str(runtime_runs))
    C.ok(not any(re.search(r"apt-get install", r) for r in build_runs + runtime_runs),
         "Dockerfile: no apt-get install of its own")
    from_build = [c for c in copies if c.startswith("COPY --from=")]
    C.ok(all(c.startswith("COPY --from=build") for c in from_build)
         and sorted(c.split()[-1] for c in from_build)
         == ["/usr/local/bin/scheduler-extender", "/usr/local/bin/scheduler-extender-relay"],
         "Dockerfile: only the daemon and the relay binaries come from the build stage, to /usr/local/bin",
         str(copies))
    user = next((l.split()[1] for l in lines if l.upper().startswith("USER ")), "")
    uid = user.split(":")[0]
    values = load_yaml(os.path.join(repo, CHART_REL, "values.yaml"))
    C.ok(uid.isdigit() and int(uid) != 0 and int(uid) == values["securityContext"]["runAsUser"],
         f"Dockerfile: numeric non-root USER {user} (= the chart's runAsUser)")
    expose = sorted(p for l in lines if l.upper().startswith("EXPOSE ") for p in l.split()[1:])
    C.eq(expose, ["8888", "8889"], "Dockerfile: EXPOSE 8888 8889")
    entry = next((l for l in lines if l.upper().startswith("ENTRYPOINT ")), "")
    C.eq(entry, 'ENTRYPOINT ["/usr/local/bin/scheduler-extender"]', "Dockerfile: ENTRYPOINT is the binary")
    ignore = open(os.path.join(repo, ".dockerignore")).read().split()
    C.ok(".git" in ignore and "build" in ignore and "build-*" in ignore, ".dockerignore: .git and build trees")

    # Every shared library of the built binary comes from a package of install-deps.sh --runtime
    # or from one every Debian image has (Priority: required / Essential).
    if not ARGS.binary or not os.path.exists(ARGS.binary):
        C.skip("the binary's shared libraries come from install-deps.sh --runtime", "no binary given")
        return
    if not shutil.which("ldd") or not shutil.which("dpkg"):
        C.skip("the binary's shared libraries come from install-deps.sh --runtime", "no ldd/dpkg")
        return
    wanted = runtime_packages()
    C.ok(bool(wanted), f"scripts/install-deps.sh --runtime lists {sorted(wanted)}")
    pkgs = installed_packages()
    # Every Debian image has the Essential packages and apt, with their dependencies.
    base = {p for p, (_, essential) in pkgs.items() if essential} | {"apt"}
    provided = dependency_closure(wanted | base, pkgs)
    r = run(["ldd", ARGS.binary])
    libs = re.findall(r"=>\s+(/\S+)", r.stdout)
    owner = {}
    paths = sorted({q for lib in libs for q in (lib, os.path.realpath(lib), re.sub(r"^/usr", "", lib),
                                                 re.sub(r"^/usr", "", os.path.realpath(lib)))})
    for line in run(["dpkg", "-S"] + paths).stdout.splitlines():
        pkg, _, path = line.partition(": ")
        owner[path.strip()] = pkg.split(":")[0].split(",")[0].strip()
    unexplained = []
    for lib in libs:
        pkg = next((owner[q] for q in (lib, os.path.realpath(lib), re.sub(r"^/usr", "", lib),
                                       re.sub(r"^/usr", "", os.path.realpath(lib))) if q in owner), None)
        if pkg is None:
            unexplained.append(f"{lib} (no package)")
        elif pkg not in provided:
            unexplained.append(f"{lib} ({pkg})")
    C.ok(libs and not unexplained,
         f"all {len(libs)} shared libraries of the binary come from install-deps.sh --runtime or required packages",
         f"add to install-deps.sh --runtime: {unexplained}")


# ------------------------------------------------------------------------------------------------
# the daemon reads the rendered configuration
# ------------------------------------------------------------------------------------------------

def start_daemon(config_path, log_path):
    log = open(log_path, "w")
    proc = subprocess.Popen([ARGS.binary, "--config", config_path, "--mode", "standalone",
                             "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 15
    text = ""
    while time.time() < deadline:
        text = open(log_path).read()
        if re.search(r"serving https? on", text) and "admin and debug endpoints" in text:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    running = proc.poll() is None
    if running:
        stop_process(proc)
    log.close()
    return running, open(log_path).read()


def stop_process(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def step_daemon_config():
    if not ARGS.binary or not os.path.exists(ARGS.binary):
        C.skip("the daemon loads the chart's rendered configuration", "no binary given")
        return
    docs = render("1.31.0", "default values")
    if docs:
        path = tmpfile(ARGS.work, "daemon-config.yaml", find(docs, "ConfigMap", FULLNAME)["data"]["config.yaml"])
        running, log = start_daemon(path, os.path.join(ARGS.work, "daemon-config.log"))
        C.ok(running and "serving http on" in log,
             "the daemon parses the chart's default configuration (run with --mode standalone on loopback)", log[-1500:])

    # TLS: real certificates at the paths the chart mounts, moved into a temporary directory.
    d = make_certs(ARGS.work)
    if d is None:
        C.skip("the daemon loads the chart's TLS configuration", "no openssl")
        return
    docs = render("1.31.0", "TLS", sets=["tls.enabled=true"], set_files=[
        f"tls.cert={d}/tls.crt", f"tls.key={d}/tls.key", f"tls.ca={d}/ca.crt"])
    if docs:
        dep = find(docs, "Deployment", FULLNAME)
        _, mnt = mount_of(dep, container(dep), lambda v: "secret" in v)
        text = find(docs, "ConfigMap", FULLNAME)["data"]["config.yaml"].replace(mnt["mountPath"] + "/", d + "/")
        path = tmpfile(ARGS.work, "daemon-config-tls.yaml", text)
        running, log = start_daemon(path, os.path.join(ARGS.work, "daemon-config-tls.log"))
        C.ok(running and "serving https on" in log and "client certificates required" in log,
             "the daemon serves HTTPS with client certificates from the chart's TLS configuration", log[-1500:])
    check_daemon_with_generated_tls()


def check_daemon_with_generated_tls():
    """The daemon with the chart's generated material: the scheduler's client certificate is served,
    the daemon's own certificate presented as a client is refused (another name, same CA)."""
    docs = render("1.31.0", "generated TLS for the daemon", sets=GENERATED_SETS)
    if not docs:
        return
    d = tempfile.mkdtemp(dir=ARGS.work)
    sdir = secret_files(find(docs, "Secret", f"{FULLNAME}-tls"), os.path.join(d, "server"))
    cdir = secret_files(find(docs, "Secret", f"{SCHED_FULLNAME}-tls"), os.path.join(d, "client"))
    dep = find(docs, "Deployment", FULLNAME)
    _, mnt = mount_of(dep, container(dep), lambda v: "secret" in v)
    text = find(docs, "ConfigMap", FULLNAME)["data"]["config.yaml"].replace(mnt["mountPath"] + "/", sdir + "/")
    log_path = os.path.join(ARGS.work, "daemon-generated-tls.log")
    log = open(log_path, "w")
    proc = subprocess.Popen([ARGS.binary, "--config", tmpfile(ARGS.work, "daemon-generated-tls.yaml", text),
                             "--mode", "standalone", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        deadline = time.time() + 15
        while port is None and time.time() < deadline and proc.poll() is None:
            m = re.search(r"serving https on 127\.0\.0\.1:(\d+)", open(log_path).read())
            port = int(m.group(1)) if m else None
            time.sleep(0.1)
        if not C.ok(port is not None, "the daemon serves HTTPS with the generated material", open(log_path).read()[-1500:]):
            return

        def status_as(cert_dir):
            ctx = ssl.create_default_context(cafile=f"{cdir}/ca.crt")
            ctx.load_cert_chain(f"{cert_dir}/tls.crt", f"{cert_dir}/tls.key")
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                with ctx.wrap_socket(raw, server_hostname=f"{FULLNAME}.{NAMESPACE}.svc") as tls:
                    tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    answer = tls.recv(64).decode("latin-1")
            return int(answer[9:12]) if answer.startswith("HTTP/1.1 ") else -1

        C.eq(status_as(cdir), 200, "the generated client certificate is served (its CA, the Service host's name checked)")
        C.eq(status_as(sdir), 403, "the daemon's own certificate presented as a client is refused (not in client_names)")
    finally:
        stop_process(proc)
        log.close()


# ------------------------------------------------------------------------------------------------

def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--helm", required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--binary", default="")
    p.add_argument("steps", nargs="+",
                   choices=["lint", "render", "scheduler-decode", "deploy", "docker", "daemon-config", "all"])
    ARGS = p.parse_args()
    os.makedirs(ARGS.work, exist_ok=True)
    steps = (["lint", "render", "scheduler-decode", "deploy", "docker", "daemon-config"] if "all" in ARGS.steps
             else ARGS.steps)
    started = time.time()
    for s in steps:
        print(f"== {s}")
        {"lint": step_lint, "render": step_render, "scheduler-decode": check_with_kube_scheduler_120,
         "deploy": step_deploy, "docker": step_docker, "daemon-config": step_daemon_config}[s]()
    print(f"({time.time() - started:.1f}s)")
    tail = f", {C.skipped} skipped" if C.skipped else ""
    print(f"{C.passed} passed, {C.failed} failed{tail}")
    return 1 if C.failed else SKIP if C.skipped else 0


if __name__ == "__main__":
    sys.exit(main())
