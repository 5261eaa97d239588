#!/usr/bin/env python3
"""The cluster side of bench/through_scheduler.sh, against the e2e control plane (APISERVER_URL,
ADMIN_TOKEN and CLUSTER_CA_FILE from the environment, as tests/e2e/lib/cluster.sh exports them).

  through_scheduler.py nodes N                 N Ready nodes gpu-00000.. of 8 GPUs, 64 CPUs, 512Gi
  through_scheduler.py pods P SCHEDULER_NAME   P pending one-GPU pods bench-00000.. in namespace default
  through_scheduler.py wait P START TIMEOUT    waits until P pods of namespace default are bound (a
                                               watch); prints seconds since START (epoch seconds), pods/s
  through_scheduler.py delete                  deletes every pod of namespace default, waits until gone
  through_scheduler.py quantiles BEFORE AFTER  p50 and p90 per verb of the daemon's request histogram
                                               between two scrapes of its /metrics (files)
  through_scheduler.py requests BEFORE AFTER P  the API server's requests per pod by verb and resource
                                               between two scrapes of its /metrics (files)
  through_scheduler.py scheduler METRICS       p50 and p90 of kube-scheduler's scheduling algorithm
                                               (its filters, scores and extender calls) and of a
                                               scheduled pod's attempt, from its /metrics (a file)

Writes go out on 16 threads; a failed write is retried once, then the command fails.
"""
import concurrent.futures
import json
import os
import re
import ssl
import sys
import time
import urllib.error
import urllib.request

THREADS = 16


class Api:
    def __init__(self):
        self.url = os.environ["APISERVER_URL"]
        self.token = os.environ["ADMIN_TOKEN"]
        self.ctx = ssl.create_default_context(cafile=os.environ["CLUSTER_CA_FILE"])

    def call(self, method, path, body=None, ctype="application/json", timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + self.token, "Content-Type": ctype})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as res:
                return res.status, json.load(res)
        except urllib.error.HTTPError as e:
            return e.code, None


def must(api, method, path, body=None, ctype="application/json", ok=(200, 201), timeout=30):
    for _ in range(2):
        status, reply = api.call(method, path, body, ctype, timeout)
        if status in ok:
            return reply
    raise SystemExit("%s %s: HTTP %d" % (method, path, status))


def fan_out(fn, items):
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        for _ in pool.map(fn, items):
            pass


def add_node(api, name):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    must(api, "POST", "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}}})
    capacity = {"cpu": "64", "memory": "512Gi", "pods": "110", "ephemeral-storage": "1Ti", "nvidia.com/gpu": "8"}
    conditions = [{"type": t, "status": s, "reason": "bench", "message": "fake node (no kubelet)",
                   "lastHeartbeatTime": now, "lastTransitionTime": now}
                  for t, s in (("Ready", "True"), ("MemoryPressure", "False"), ("DiskPressure", "False"),
                               ("PIDPressure", "False"))]
    must(api, "PATCH", "/api/v1/nodes/%s/status" % name,
         {"status": {"capacity": capacity, "allocatable": capacity, "conditions": conditions}},
         "application/merge-patch+json")
    # Admission taints a new node not-ready; no node lifecycle controller runs to lift it.
    must(api, "PATCH", "/api/v1/nodes/%s" % name, {"spec": {"taints": None}}, "application/merge-patch+json")


def add_pod(api, name, scheduler):
    must(api, "POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"bench": "through-scheduler"}},
        "spec": {"schedulerName": scheduler, "automountServiceAccountToken": False,
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                               "limits": {"nvidia.com/gpu": "1"}}}]}})


def wait_bound(api, total, deadline):
    """Until `total` pods of namespace default are bound, from one list and then a watch: the API
    server's work follows the pods' changes, not the time waited (polling a list of the pending
    pods would load it with as much JSON as the scheduler's own work, and the more so the slower
    the configuration)."""
    listing = must(api, "GET", "/api/v1/namespaces/default/pods")
    bound = {p["metadata"]["name"] for p in listing["items"] if p["spec"].get("nodeName")}
    path = "/api/v1/namespaces/default/pods?watch=1&resourceVersion=%s" % listing["metadata"]["resourceVersion"]
    req = urllib.request.Request(api.url + path, headers={"Authorization": "Bearer " + api.token})
    if len(bound) >= total:
        return
    left = deadline - time.time()
    if left <= 0:
        raise SystemExit("not all %d pods bound in time" % total)
    with urllib.request.urlopen(req, context=api.ctx, timeout=max(left, 1)) as res:
        for line in res:
            if len(bound) >= total:
                break
            event = json.loads(line)
            obj = event.get("object", {})
            if event.get("type") in ("ADDED", "MODIFIED") and obj.get("spec", {}).get("nodeName"):
                bound.add(obj["metadata"]["name"])
            if len(bound) >= total:
                break
            if time.time() > deadline:
                raise SystemExit("not all %d pods bound in time (%d)" % (total, len(bound)))


def all_pods(api):
    return len(must(api, "GET", "/api/v1/namespaces/default/pods")["items"])


def histogram(path, metric="scheduler_extender_request_duration_seconds", key="verb", where=None):
    """{value of label KEY: [(le, cumulative count)]} of histogram METRIC, of the series whose labels
    include WHERE (a dict); KEY None: one entry, "all"."""
    out = {}
    pattern = re.compile(r'^' + metric + r'_bucket\{(.*)\} (\S+)$')
    for line in open(path):
        m = pattern.match(line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if where and any(labels.get(k) != v for k, v in where.items()):
            continue
        le = float("inf") if labels["le"] == "+Inf" else float(labels["le"])
        name = labels.get(key, "") if key else "all"
        out.setdefault(name, {}).setdefault(le, 0.0)
        out[name][le] += float(m.group(2))
    return {name: sorted(buckets.items()) for name, buckets in out.items()}


def api_requests(path):
    """{"VERB resource[/subresource]": count} of the API server's apiserver_request_total."""
    out = {}
    pattern = re.compile(r'^apiserver_request_total\{(.*)\} (\S+)$')
    for line in open(path):
        m = pattern.match(line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        key = "%s %s%s" % (labels.get("verb", "?"), labels.get("resource", "?"),
                           "/" + labels["subresource"] if labels.get("subresource") else "")
        out[key] = out.get(key, 0.0) + float(m.group(2))
    return out


def quantile(buckets, q):
    total = buckets[-1][1]
    if total <= 0:
        return None
    for le, count in buckets:
        if count >= q * total:
            return le
    return buckets[-1][0]


def main():
    api = Api()
    cmd = sys.argv[1]
    if cmd == "nodes":
        fan_out(lambda i: add_node(api, "gpu-%05d" % i), range(int(sys.argv[2])))
    elif cmd == "pods":
        fan_out(lambda i: add_pod(api, "bench-%05d" % i, sys.argv[3]), range(int(sys.argv[2])))
    elif cmd == "wait":
        total, start, timeout = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
        wait_bound(api, total, start + timeout)
        took = time.time() - start
        print("%.2f %.1f" % (took, total / took))
    elif cmd == "delete":
        must(api, "DELETE", "/api/v1/namespaces/default/pods?labelSelector=bench%3Dthrough-scheduler",
             {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}, timeout=600)
        while all_pods(api) > 0:
            time.sleep(0.5)
    elif cmd == "requests":
        before, after = api_requests(sys.argv[2]), api_requests(sys.argv[3])
        pods = int(sys.argv[4])
        parts = ["%s %.2f" % (key, (count - before.get(key, 0.0)) / pods)
                 for key, count in sorted(after.items()) if (count - before.get(key, 0.0)) / pods >= 0.05]
        print("; ".join(parts))
    elif cmd == "quantiles":
        before, after = histogram(sys.argv[2]), histogram(sys.argv[3])
        parts = []
        for verb in sorted(after):
            base = dict(before.get(verb, []))
            delta = [(le, count - base.get(le, 0.0)) for le, count in after[verb]]
            if delta[-1][1] <= 0:
                continue
            p50, p90 = quantile(delta, 0.5), quantile(delta, 0.9)
            parts.append("%s %d calls p50<=%gms p90<=%gms" % (verb, delta[-1][1], p50 * 1000, p90 * 1000))
        print("; ".join(parts) if parts else "no verb called")
    elif cmd == "scheduler":
        # kube-scheduler's own view, from one scrape of its /metrics (it starts afresh per run).
        parts = []
        for label, metric, where in (
                ("algorithm", "scheduler_scheduling_algorithm_duration_seconds", None),
                ("attempt", "scheduler_scheduling_attempt_duration_seconds", {"result": "scheduled"})):
            buckets = histogram(sys.argv[2], metric, None, where).get("all")
            if not buckets or buckets[-1][1] <= 0:
                continue
            parts.append("%s p50<=%gms p90<=%gms" % (label, quantile(buckets, 0.5) * 1000, quantile(buckets, 0.9) * 1000))
        print("; ".join(parts) if parts else "no figures")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
