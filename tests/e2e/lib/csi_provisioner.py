#!/usr/bin/env python3
"""A CSI driver with storage capacity tracking and its external-provisioner, played against the
API server (no kubelet, no driver): every --interval seconds it lists StorageClasses, claims,
volumes, CSIStorageCapacities and Nodes and

- provisions each claim of a class of one of --drivers that the scheduler selected a node for
  (annotation volume.kubernetes.io/selected-node) and that has no volume yet: a PersistentVolume of
  the claim's size with that node's affinity, and the claim bound to it. The driver never refuses
  (a thin pool): a burst the scheduler overcommits shows as a pool over its capacity;
- republishes the free space of a (node, class) only --delay seconds after a volume was created
  there, computed at that moment from the volumes then on the node, as external-provisioner does
  after its next poll:
    * CSI classes: the `capacity` of the class's CSIStorageCapacity whose nodeTopology matchLabels
      name the node (kubernetes.io/hostname); the pool's size is that object's annotation
      e2e.scheduler-extender.io/size (bytes);
    * TopoLVM classes (provisioner topolvm.io): the node annotation capacity.topolvm.io/<device
      class> (the class's topolvm.io/device-class, 00default without one); the size is the node
      annotation e2e.scheduler-extender.io/size.<device class> (bytes);
- deletes the volume of a claim that is gone (reclaim policy Delete, as external-provisioner does
  once the claim is deleted) and republishes its pool --delay seconds later;
- writes --report (JSON, atomically): one row per (node, class) with a size: size, provisioned
  bytes and volume count, from the volumes the API server holds.

The API is reached as admin (lib/kube_api.py).
"""
import argparse
import datetime
import json
import os
import re
import sys
import time
import urllib.error

from kube_api import Api

SELECTED = "volume.kubernetes.io/selected-node"
SIZE = "e2e.scheduler-extender.io/size"
TOPOLVM = "topolvm.io"
UNITS = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
         "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def log(msg):
    sys.stderr.write("%s csi-provisioner: %s\n" % (datetime.datetime.utcnow().strftime("%H:%M:%S.%f")[:-3], msg))
    sys.stderr.flush()


def quantity(text):
    m = re.fullmatch(r"([0-9]+)(|k|M|G|T|Ki|Mi|Gi|Ti)", str(text).strip())
    if not m:
        raise ValueError("unsupported quantity %r" % text)
    return int(m.group(1)) * UNITS[m.group(2)]


def items(api, path):
    status, body = api.call("GET", path)
    if status != 200:
        raise RuntimeError("GET %s: HTTP %s" % (path, status))
    return body["items"]


def patch(api, path, body):
    status, _ = api.call("PATCH", path, body, "application/merge-patch+json")
    return status


def device_class(sc):
    return (sc.get("parameters") or {}).get("topolvm.io/device-class") or "00default"


def pv_node(pv):
    for term in (((pv["spec"].get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []):
        for e in term.get("matchExpressions") or []:
            if e.get("key") == "kubernetes.io/hostname" and e.get("values"):
                return e["values"][0]
    return None


def capacity_node(obj):
    return ((obj.get("nodeTopology") or {}).get("matchLabels") or {}).get("kubernetes.io/hostname")


class Provisioner:
    def __init__(self, api, drivers, delay, report):
        self.api, self.drivers, self.delay, self.report = api, drivers, delay, report
        self.due = {}  # (node, class) -> monotonic time of the republish

    def provision(self, claim, node, sc_name):
        meta = claim["metadata"]
        ns, name, uid = meta["namespace"], meta["name"], meta["uid"]
        size = claim["spec"]["resources"]["requests"]["storage"]
        pv_name = "pv-" + uid
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": pv_name, "annotations": {"pv.kubernetes.io/provisioned-by": self.provisioner_of[sc_name]}},
              "spec": {"capacity": {"storage": size}, "accessModes": claim["spec"].get("accessModes") or ["ReadWriteOnce"],
                       "storageClassName": sc_name, "persistentVolumeReclaimPolicy": "Delete",
                       "csi": {"driver": self.provisioner_of[sc_name], "volumeHandle": uid},
                       "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns,
                                    "name": name, "uid": uid},
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                           {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}}}
        status, _ = self.api.call("POST", "/api/v1/persistentvolumes", pv)
        if status not in (201, 409):
            log("claim %s/%s: creating %s failed (HTTP %s)" % (ns, name, pv_name, status))
            return
        patch(self.api, "/api/v1/persistentvolumes/%s/status" % pv_name, {"status": {"phase": "Bound"}})
        base = "/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (ns, name)
        patch(self.api, base, {"metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                                           "pv.kubernetes.io/bound-by-controller": "yes"}},
                              "spec": {"volumeName": pv_name}})
        patch(self.api, base + "/status", {"status": {"phase": "Bound", "capacity": {"storage": size}}})
        self.due.setdefault((node, sc_name), time.monotonic() + self.delay)
        log("claim %s/%s (%s): volume %s on %s" % (ns, name, size, pv_name, node))

    def reclaim(self, pv, node, sc_name):
        name = pv["metadata"]["name"]
        # No kube-controller-manager: its PV protection controller's part, the finalizer taken off.
        patch(self.api, "/api/v1/persistentvolumes/%s" % name, {"metadata": {"finalizers": None}})
        status, _ = self.api.call("DELETE", "/api/v1/persistentvolumes/%s" % name)
        if status not in (200, 202, 404):
            log("volume %s: deleting failed (HTTP %s)" % (name, status))
            return
        self.due.setdefault((node, sc_name), time.monotonic() + self.delay)
        log("volume %s on %s deleted: its claim is gone" % (name, node))

    def republish(self, node, sc_name, sc, used, capacities, nodes):
        if sc["provisioner"] == TOPOLVM:
            dc = device_class(sc)
            size = ((nodes.get(node) or {}).get("annotations") or {}).get(SIZE + "." + dc)
            if size is None:
                return
            free = max(0, int(size) - used)
            patch(self.api, "/api/v1/nodes/%s" % node,
                           {"metadata": {"annotations": {"capacity.topolvm.io/" + dc: str(free)}}})
            log("node %s: capacity.topolvm.io/%s = %d" % (node, dc, free))
            return
        for obj in capacities:
            if obj.get("storageClassName") == sc_name and capacity_node(obj) == node:
                size = (obj["metadata"].get("annotations") or {}).get(SIZE)
                if size is None:
                    continue
                free = max(0, int(size) - used)
                patch(self.api, "/apis/storage.k8s.io/v1/namespaces/%s/csistoragecapacities/%s"
                               % (obj["metadata"]["namespace"], obj["metadata"]["name"]), {"capacity": str(free)})
                log("CSIStorageCapacity %s (%s on %s): capacity = %d" % (obj["metadata"]["name"], sc_name, node, free))

    def write_report(self, used, count, capacities, nodes, classes):
        rows = []
        for obj in capacities:
            size = (obj["metadata"].get("annotations") or {}).get(SIZE)
            node = capacity_node(obj)
            if size is not None and node:
                key = (node, obj.get("storageClassName"))
                rows.append({"node": node, "class": key[1], "size": int(size),
                             "provisioned": used.get(key, 0), "volumes": count.get(key, 0)})
        for sc_name, sc in classes.items():
            if sc["provisioner"] != TOPOLVM:
                continue
            for node, meta in nodes.items():
                size = (meta.get("annotations") or {}).get(SIZE + "." + device_class(sc))
                if size is not None:
                    key = (node, sc_name)
                    rows.append({"node": node, "class": sc_name, "size": int(size),
                                 "provisioned": used.get(key, 0), "volumes": count.get(key, 0)})
        tmp = self.report + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rows, f)
        os.replace(tmp, self.report)

    def step(self):
        classes = {sc["metadata"]["name"]: sc for sc in items(self.api, "/apis/storage.k8s.io/v1/storageclasses")
                   if sc.get("provisioner") in self.drivers}
        self.provisioner_of = {n: sc["provisioner"] for n, sc in classes.items()}
        for claim in items(self.api, "/api/v1/persistentvolumeclaims"):
            node = (claim["metadata"].get("annotations") or {}).get(SELECTED)
            sc_name = claim["spec"].get("storageClassName")
            if node and sc_name in classes and not claim["spec"].get("volumeName") \
                    and not claim["metadata"].get("deletionTimestamp"):
                self.provision(claim, node, sc_name)
        claims = {c["metadata"]["uid"] for c in items(self.api, "/api/v1/persistentvolumeclaims")}
        used, count = {}, {}
        for pv in items(self.api, "/api/v1/persistentvolumes"):
            sc_name, node = pv["spec"].get("storageClassName"), pv_node(pv)
            if sc_name in classes and node and (pv["spec"].get("claimRef") or {}).get("uid") not in claims:
                self.reclaim(pv, node, sc_name)
            elif sc_name in classes and node:
                used[(node, sc_name)] = used.get((node, sc_name), 0) + quantity(pv["spec"]["capacity"]["storage"])
                count[(node, sc_name)] = count.get((node, sc_name), 0) + 1
        capacities = items(self.api, "/apis/storage.k8s.io/v1/csistoragecapacities")
        nodes = {n["metadata"]["name"]: n["metadata"] for n in items(self.api, "/api/v1/nodes")}
        now = time.monotonic()
        for key, when in list(self.due.items()):
            if when <= now and key[1] in classes:
                del self.due[key]
                self.republish(key[0], key[1], classes[key[1]], used.get(key, 0), capacities, nodes)
        self.write_report(used, count, capacities, nodes, classes)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--drivers", required=True, help="comma-separated provisioner names this driver serves")
    p.add_argument("--delay", type=float, default=3.0, help="seconds from a volume's creation to the republish")
    p.add_argument("--interval", type=float, default=0.2)
    p.add_argument("--report", required=True)
    args = p.parse_args()
    prov = Provisioner(Api(), set(args.drivers.split(",")), args.delay, args.report)
    log("serving %s, republishing %.1fs after a volume is created" % (args.drivers, args.delay))
    while True:
        try:
            prov.step()
        except (RuntimeError, KeyError, ValueError, urllib.error.URLError, OSError) as e:
            log("pass failed: %s" % e)
        time.sleep(args.interval)


if __name__ == "__main__":
    main()
