#!/usr/bin/env python3
"""csi-baremetal's controller as its CreateVolume behaves, played against the API server (no
driver, no drives) for tests/e2e/baremetal.sh, as dell/csi-baremetal@b8a2a2f8
pkg/common/volume_operations.go (handleVolumeCreation, getVolumeReservation) and
pkg/base/util/common.go (ConvertStorageClass) do it. Every --interval seconds it lists the
StorageClasses of --provisioner (storageType upper-cased, ANY when not one of csi-baremetal's
types), the Nodes, the claims, the AvailableCapacities (ACs) and the
AvailableCapacityReservations (ACRs) (group csi-baremetal.dell.com/v1, cluster-scoped), and for
each claim of such a class (WaitForFirstConsumer) that the scheduler selected a node for
(annotation volume.kubernetes.io/selected-node) and that has no volume yet:

1. finds the first RESERVED reservation whose spec.Namespace is the claim's namespace and that
   has a request (spec.ReservationRequests[].CapacityRequest.Name) named as the claim;
2. takes the first AC that request lists whose spec.NodeId is the selected node's id (the
   annotation nodes.csi-baremetal.dell.com/uuid when the node carries it, as csi-baremetal's
   chart default usenodeannotation has its node controller write it, else its metadata.uid; or
   the annotation --node-id-annotation): a whole-drive class (HDD, SSD, NVME) takes the drive
   (its Size to 0), ANY a drive of any of those classes; a volume-group class (HDDLVG, SSDLVG,
   NVMELVG, SYSLVG) takes the claim's size rounded up to 4 MiB extents from the group (Size minus
   that), or from a free drive of its media, which becomes a group of that class (storageClass
   changed, Size minus that);
3. creates the Volume in the claim's namespace (Volume is namespaced; spec Id, NodeId, Location =
   the AC's, Size, StorageClass = the AC's (so an ANY claim's is its drive's), CSIStatus CREATED),
   then the PersistentVolume bound to the claim (claimRef, node affinity on
   nodes.csi-baremetal.dell.com/uuid when the node carries that label, else on
   kubernetes.io/hostname, CSI driver --provisioner), as lib/csi_provisioner.py does;
4. releases the reservation: the request is removed, the reservation deleted when none remain.
ACs are taken one claim at a time; steps 3 and 4 run on 8 workers, claims in parallel, as
external-provisioner's workers do.

A provisioned claim that is gone (deleted, its protection finalizer off) has its volume deleted as
DeleteVolume does: the Volume and the PersistentVolume go and the AC gets its room back (a drive its
whole size, a group the claim's extents).

No such reservation, no AC of the selected node in it, or an AC without room (a drive already
taken, a group too small): CreateVolume fails with ResourceExhausted and the claim is NOT
provisioned. As external-provisioner does with that error for a driver with topology and a
WaitForFirstConsumer claim, a Warning event ProvisioningFailed (`rpc error: code =
ResourceExhausted desc = ...`) is recorded on the claim and its selected-node annotation removed:
kube-scheduler's VolumeBinding PreBind then fails the pod's cycle and schedules it again, and the
claim is tried when a node is selected anew. An AC a reservation handed out without room is a
reservation error and is recorded as such (a drive handed to a second claim, a group overdrawn).

--report (JSON, written atomically after every pass):
  taken            [{ac, class, type, node, claim, size_before, size_after, at}] every AC taken, in
                   order (class: the AC's before it was taken; type: the claim's storage type)
  drive_reused     [{ac, claim, holder}] a reservation named a drive another claim already took
  group_overdrawn  [{ac, claim, free, need}] a reservation named a group without room for the claim
                   (each once per AC and claim)
  negative_acs     [names] ACs whose Size the API server holds below zero
  exhausted        {namespace/claim: refusals} claims refused (ResourceExhausted), each rescheduled
  provisioned      claims provisioned
  released         reservations deleted once their last request was served
  reservations_seen {name: {status, nodes (NodeRequests.Requested), acs (ACs listed)}} as last listed
  provision_seconds per provisioned claim: from its selected node first seen to the claim bound

The API is reached as admin (lib/kube_api.py).
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import sys
import threading
import time
import urllib.error

from csi_provisioner import items, quantity
from kube_api import Api

SELECTED = "volume.kubernetes.io/selected-node"
GROUP = "/apis/csi-baremetal.dell.com/v1"
EXTENT = 4 << 20
DRIVES = {"HDD", "SSD", "NVME"}
GROUPS = {"HDDLVG": "HDD", "SSDLVG": "SSD", "NVMELVG": "NVME", "SYSLVG": "SYS"}
ANY = "ANY"
UUID_KEY = "nodes.csi-baremetal.dell.com/uuid"


def storage_type(parameter):
    """A StorageClass's storageType as csi-baremetal's util.ConvertStorageClass reads it."""
    t = str(parameter or "").upper()
    return t if t in DRIVES or t in GROUPS else ANY


def log(msg):
    sys.stderr.write("%s baremetal-controller: %s\n" % (datetime.datetime.utcnow().strftime("%H:%M:%S.%f")[:-3], msg))
    sys.stderr.flush()


def rfc3339_now():
    return datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")


class Refused(Exception):
    """CreateVolume fails with ResourceExhausted: the message says why."""


class Controller:
    def __init__(self, api, provisioner, node_id_annotation, report):
        self.api, self.provisioner, self.annotation, self.report = api, provisioner, node_id_annotation, report
        self.taken, self.drive_reused, self.group_overdrawn = [], [], []
        self.holder = {}        # drive AC name -> the claim (namespace/name) that took it
        self.claim_ac = {}      # claim uid -> AC name taken (a retry after a failed step reuses it)
        self.sizes = {}         # claim uid -> (volume size, location type) of the AC it took
        self.undo = {}          # claim (namespace/name) -> (AC name, bytes to give back; None: the whole drive)
        self.exhausted = {}     # namespace/claim -> failed attempts
        self.provisioned = 0
        self.released = 0
        self.negative = []
        self.seen = {}          # reservation name -> {status, nodes, acs} as last listed
        self.lock = threading.Lock()  # the workers' counters and in-flight set
        self.inflight = set()   # claim uids a worker is provisioning
        self.first_seen = {}    # claim uid -> monotonic time its selected node was first seen
        self.seconds = []       # per provisioned claim: selected node first seen -> claim bound
        self.uuid_labelled = set()  # nodes carrying the label nodes.csi-baremetal.dell.com/uuid
        self.workers = concurrent.futures.ThreadPoolExecutor(max_workers=8)

    # ----- one claim

    def find_request(self, acrs, ns, claim):
        for acr in acrs:
            spec = acr.get("spec") or {}
            if spec.get("Status") != "RESERVED" or spec.get("Namespace") != ns:
                continue
            for req in spec.get("ReservationRequests") or []:
                if ((req.get("CapacityRequest") or {}).get("Name")) == claim:
                    return acr, req
        return None, None

    @staticmethod
    def note(errors, error):
        """Records a reservation error once per AC and claim (the claim is retried every pass)."""
        if not any(e["ac"] == error["ac"] and e["claim"] == error["claim"] for e in errors):
            errors.append(error)

    def take(self, ac, storage_type, size, who):
        """Shrinks the AC for the claim (PATCH) and returns (volume size, volume class, location type)."""
        spec = ac["spec"]
        name, free, cls = ac["metadata"]["name"], int(spec.get("Size") or 0), spec.get("storageClass")
        patch = {}
        if storage_type in DRIVES or storage_type == ANY:
            if cls != storage_type and not (storage_type == ANY and cls in DRIVES):
                raise Refused("AC %s is %s, the claim needs a %s drive" % (name, cls, storage_type))
            if name in self.holder or free < size:
                self.note(self.drive_reused, {"ac": name, "claim": who, "holder": self.holder.get(name, "")})
                raise Refused("drive %s is taken (Size %d, holder %s)" % (name, free, self.holder.get(name, "?")))
            patch, vol_size, location_type = {"Size": 0}, free, "DRIVE"
            self.undo[who] = (name, free, True)
        elif storage_type in GROUPS:
            need = -(-size // EXTENT) * EXTENT
            if cls not in (storage_type, GROUPS[storage_type]) or (cls in DRIVES and name in self.holder):
                raise Refused("AC %s is %s, the claim needs %s or a free %s drive" % (name, cls, storage_type, GROUPS[storage_type]))
            if free < need:
                self.note(self.group_overdrawn, {"ac": name, "claim": who, "free": free, "need": need})
                raise Refused("group %s has %d bytes free, the claim needs %d" % (name, free, need))
            patch, vol_size, location_type = {"Size": free - need, "storageClass": storage_type}, size, "LVM"
            self.undo[who] = (name, need, False)
        else:
            raise Refused("storage type %r is not csi-baremetal's" % storage_type)
        status, _ = self.api.call("PATCH", "%s/availablecapacities/%s" % (GROUP, name), {"spec": patch},
                                  "application/merge-patch+json")
        if status != 200:
            raise RuntimeError("patching AC %s: HTTP %s" % (name, status))
        self.taken.append({"ac": name, "class": cls, "type": storage_type, "node": spec.get("NodeId"), "claim": who,
                           "size_before": free, "size_after": patch["Size"], "at": time.time()})
        if storage_type in DRIVES or storage_type == ANY or cls in DRIVES:
            self.holder[name] = who
        spec.update(patch)
        return vol_size, location_type

    def create_volume(self, claim, node_id, ac, vol_size, location_type):
        uid, ns = claim["metadata"]["uid"], claim["metadata"]["namespace"]
        name = "pvc-" + uid
        body = {"apiVersion": "csi-baremetal.dell.com/v1", "kind": "Volume",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"Id": name, "NodeId": node_id, "Location": ac["spec"].get("Location", ""),
                         "LocationType": location_type, "StorageClass": ac["spec"].get("storageClass", ""),
                         "Size": vol_size,
                         "Mode": "FS", "Type": "xfs", "Health": "GOOD", "OperationalStatus": "OPERATIVE",
                         "CSIStatus": "CREATED", "Usage": "IN_USE", "Ephemeral": False,
                         "Owners": [claim["metadata"]["namespace"] + "/" + claim["metadata"]["name"]]}}
        status, _ = self.api.call("POST", "%s/namespaces/%s/volumes" % (GROUP, ns), body)
        if status not in (201, 409):
            raise RuntimeError("creating Volume %s: HTTP %s" % (name, status))
        return name

    def create_pv(self, claim, node, node_id, sc_name, volume):
        meta = claim["metadata"]
        ns, name, uid = meta["namespace"], meta["name"], meta["uid"]
        size = claim["spec"]["resources"]["requests"]["storage"]
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": volume, "annotations": {"pv.kubernetes.io/provisioned-by": self.provisioner}},
              "spec": {"capacity": {"storage": size}, "accessModes": claim["spec"].get("accessModes") or ["ReadWriteOnce"],
                       "storageClassName": sc_name, "persistentVolumeReclaimPolicy": "Delete",
                       "csi": {"driver": self.provisioner, "volumeHandle": volume},
                       "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns,
                                    "name": name, "uid": uid},
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                           self.topology(node, node_id)]}]}}}}
        status, _ = self.api.call("POST", "/api/v1/persistentvolumes", pv)
        if status not in (201, 409):
            raise RuntimeError("creating PV %s: HTTP %s" % (volume, status))
        merge = "application/merge-patch+json"
        self.api.call("PATCH", "/api/v1/persistentvolumes/%s/status" % volume, {"status": {"phase": "Bound"}}, merge)
        base = "/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (ns, name)
        self.api.call("PATCH", base, {"metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                                                  "pv.kubernetes.io/bound-by-controller": "yes"}},
                                     "spec": {"volumeName": volume}}, merge)
        self.api.call("PATCH", base + "/status", {"status": {"phase": "Bound", "capacity": {"storage": size}}}, merge)

    def topology(self, node, node_id):
        """The node affinity csi-baremetal's topology gives a volume: its uuid label, else the host."""
        if node in self.uuid_labelled:
            return {"key": UUID_KEY, "operator": "In", "values": [node_id]}
        return {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}

    def release(self, acr_name, claim_name):
        """Removes the claim's request from the reservation; deletes it when none remain."""
        path = "%s/availablecapacityreservations/%s" % (GROUP, acr_name)
        for _ in range(5):
            status, acr = self.api.call("GET", path)
            if status == 404:
                return
            if status != 200:
                raise RuntimeError("GET %s: HTTP %s" % (path, status))
            spec = acr.get("spec") or {}
            left = [r for r in spec.get("ReservationRequests") or []
                    if ((r.get("CapacityRequest") or {}).get("Name")) != claim_name]
            if not left:
                rv = acr["metadata"]["resourceVersion"]
                status, _ = self.api.call("DELETE", path, {"preconditions": {"resourceVersion": rv}})
                if status in (200, 202, 404):
                    with self.lock:
                        self.released += status != 404
                    log("reservation %s released (deleted)" % acr_name)
                    return
            else:
                spec["ReservationRequests"] = left
                status, _ = self.api.call("PUT", path, acr)
                if status == 200:
                    return
            if status != 409:
                raise RuntimeError("releasing %s: HTTP %s" % (acr_name, status))
        raise RuntimeError("releasing %s: conflicts" % acr_name)

    def refuse(self, claim, why):
        meta = claim["metadata"]
        who = meta["namespace"] + "/" + meta["name"]
        self.exhausted[who] = self.exhausted.get(who, 0) + 1
        log("claim %s: ResourceExhausted (rescheduled): %s" % (who, why))
        event = {"apiVersion": "v1", "kind": "Event",
                 "metadata": {"generateName": meta["name"] + ".", "namespace": meta["namespace"]},
                 "involvedObject": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": meta["namespace"],
                                    "name": meta["name"], "uid": meta["uid"]},
                 "reason": "ProvisioningFailed", "type": "Warning",
                 "message": "failed to provision volume with StorageClass %r: rpc error: code = ResourceExhausted desc = %s"
                            % (claim["spec"].get("storageClassName"), why),
                 "source": {"component": self.provisioner + "_controller"},
                 "firstTimestamp": rfc3339_now(), "lastTimestamp": rfc3339_now(), "count": 1}
        self.api.call("POST", "/api/v1/namespaces/%s/events" % meta["namespace"], event)
        self.api.call("PATCH", "/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (meta["namespace"], meta["name"]),
                      {"metadata": {"annotations": {SELECTED: None}}}, "application/merge-patch+json")

    def provision(self, claim, node, sc_name, storage_type, node_ids, acs, acrs):
        meta = claim["metadata"]
        ns, name, uid = meta["namespace"], meta["name"], meta["uid"]
        who = ns + "/" + name
        node_id = node_ids.get(node)
        acr, req = self.find_request(acrs, ns, name)
        if req is None:
            raise Refused("no RESERVED reservation of namespace %s requests %s" % (ns, name))
        ac_name = self.claim_ac.get(uid)
        if ac_name is None:
            ac = next((acs[n] for n in req.get("Reservations") or []
                       if n in acs and (acs[n].get("spec") or {}).get("NodeId") == node_id), None)
            if ac is None:
                raise Refused("reservation %s lists no AC of node %s (id %s) for %s: %s"
                              % (acr["metadata"]["name"], node, node_id, name, req.get("Reservations")))
            size = quantity(claim["spec"]["resources"]["requests"]["storage"])
            vol_size, location_type = self.take(ac, storage_type, size, who)
            self.claim_ac[uid] = ac["metadata"]["name"]
            self.sizes[uid] = (vol_size, location_type)
        else:
            ac = acs[ac_name]
        with self.lock:
            self.inflight.add(uid)
        self.workers.submit(self.finish, claim, node, node_id, sc_name, storage_type, ac, acr["metadata"]["name"])

    def finish(self, claim, node, node_id, sc_name, storage_type, ac, acr_name):
        """The rest of CreateVolume, and external-provisioner's binding, on a worker: claims are
        provisioned in parallel once their ACs are taken (one at a time, in step())."""
        meta = claim["metadata"]
        who, uid = meta["namespace"] + "/" + meta["name"], meta["uid"]
        try:
            vol_size, location_type = self.sizes[uid]
            volume = self.create_volume(claim, node_id, ac, vol_size, location_type)
            self.create_pv(claim, node, node_id, sc_name, volume)
            self.release(acr_name, meta["name"])
            with self.lock:
                self.provisioned += 1
                self.seconds.append(time.monotonic() - self.first_seen.get(uid, time.monotonic()))
            log("claim %s (%s %s): AC %s on %s, Volume %s" % (who, storage_type, claim["spec"]["resources"]["requests"]["storage"],
                                                             ac["metadata"]["name"], node, volume))
        except (RuntimeError, KeyError, ValueError, urllib.error.URLError, OSError) as e:
            log("claim %s: %s (tried again)" % (who, e))
        finally:
            with self.lock:
                self.inflight.discard(uid)

    def delete_volume(self, pv):
        """DeleteVolume for a PersistentVolume whose claim is gone."""
        ref = pv["spec"].get("claimRef") or {}
        who = "%s/%s" % (ref.get("namespace"), ref.get("name"))
        name, merge = pv["metadata"]["name"], "application/merge-patch+json"
        if who in self.undo:
            ac, amount, whole = self.undo.pop(who)
            status, body = self.api.call("GET", "%s/availablecapacities/%s" % (GROUP, ac))
            if status == 200:
                size = amount if whole else int(body["spec"].get("Size") or 0) + amount
                self.api.call("PATCH", "%s/availablecapacities/%s" % (GROUP, ac), {"spec": {"Size": size}}, merge)
            if whole:
                self.holder.pop(ac, None)
        self.api.call("DELETE", "%s/namespaces/%s/volumes/%s" % (GROUP, ref.get("namespace"), name))
        self.api.call("PATCH", "/api/v1/persistentvolumes/%s" % name, {"metadata": {"finalizers": None}}, merge)
        self.api.call("DELETE", "/api/v1/persistentvolumes/%s" % name)
        log("claim %s is gone: volume %s deleted" % (who, name))

    # ----- a pass

    def node_ids(self):
        out = {}
        for n in items(self.api, "/api/v1/nodes"):
            meta = n["metadata"]
            annotations = meta.get("annotations") or {}
            if UUID_KEY in (meta.get("labels") or {}):
                self.uuid_labelled.add(meta["name"])
            if self.annotation:
                out[meta["name"]] = annotations.get(self.annotation)
            else:
                out[meta["name"]] = annotations.get(UUID_KEY) or meta["uid"]
        return out

    def step(self):
        classes = {}
        for sc in items(self.api, "/apis/storage.k8s.io/v1/storageclasses"):
            if sc.get("provisioner") == self.provisioner:
                classes[sc["metadata"]["name"]] = storage_type((sc.get("parameters") or {}).get("storageType"))
        work = []
        claims = items(self.api, "/api/v1/persistentvolumeclaims")
        uids = {c["metadata"]["uid"] for c in claims}
        for pv in items(self.api, "/api/v1/persistentvolumes"):
            if (pv["spec"].get("csi") or {}).get("driver") == self.provisioner and \
                    (pv["spec"].get("claimRef") or {}).get("uid") not in uids:
                self.delete_volume(pv)
        for claim in claims:
            node = (claim["metadata"].get("annotations") or {}).get(SELECTED)
            sc_name = claim["spec"].get("storageClassName")
            if node and sc_name in classes and not claim["spec"].get("volumeName") \
                    and not claim["metadata"].get("deletionTimestamp"):
                self.first_seen.setdefault(claim["metadata"]["uid"], time.monotonic())
                with self.lock:
                    if claim["metadata"]["uid"] in self.inflight:
                        continue
                work.append((claim, node, sc_name))
        ac_list = items(self.api, GROUP + "/availablecapacities")
        self.negative = sorted(a["metadata"]["name"] for a in ac_list if int((a.get("spec") or {}).get("Size") or 0) < 0)
        acrs = items(self.api, GROUP + "/availablecapacityreservations")
        for acr in acrs:
            spec = acr.get("spec") or {}
            self.seen[acr["metadata"]["name"]] = {
                "status": spec.get("Status"), "nodes": len((spec.get("NodeRequests") or {}).get("Requested") or []),
                "acs": sum(len(r.get("Reservations") or []) for r in spec.get("ReservationRequests") or [])}
        if work:
            node_ids = self.node_ids()
            acs = {a["metadata"]["name"]: a for a in ac_list}
            for claim, node, sc_name in sorted(work, key=lambda w: w[0]["metadata"]["creationTimestamp"]):
                if acrs is None:  # read again after each volume: the reservation it served changed
                    acrs = items(self.api, GROUP + "/availablecapacityreservations")
                try:
                    self.provision(claim, node, sc_name, classes[sc_name], node_ids, acs, acrs)
                    acrs = None
                except Refused as e:
                    self.refuse(claim, str(e))
        self.write_report()

    def write_report(self):
        with self.lock:
            body = {"taken": self.taken, "drive_reused": self.drive_reused, "group_overdrawn": self.group_overdrawn,
                    "negative_acs": self.negative, "exhausted": self.exhausted, "provisioned": self.provisioned,
                    "released": self.released, "reservations_seen": self.seen, "provision_seconds": list(self.seconds)}
        tmp = self.report + ".tmp"
        with open(tmp, "w") as f:
            json.dump(body, f)
        os.replace(tmp, self.report)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--provisioner", default="csi-baremetal")
    p.add_argument("--node-id-annotation", default="",
                   help="node id from this annotation only (default: %s when present, else the node's UID)" % UUID_KEY)
    p.add_argument("--interval", type=float, default=0.2)
    p.add_argument("--report", required=True)
    args = p.parse_args()
    ctl = Controller(Api(), args.provisioner, args.node_id_annotation, args.report)
    log("serving %s, node ids from %s" % (args.provisioner, args.node_id_annotation or UUID_KEY + ", else metadata.uid"))
    while True:
        try:
            ctl.step()
        except (RuntimeError, KeyError, ValueError, urllib.error.URLError, OSError) as e:
            log("pass failed: %s" % e)
        time.sleep(args.interval)


if __name__ == "__main__":
    main()
