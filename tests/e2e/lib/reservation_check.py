#!/usr/bin/env python3
"""Watches csi-baremetal's AvailableCapacityReservations (ACRs) for a drive held twice, for
tests/e2e/ha.sh. Every --interval seconds it lists the ACRs, then the claims, the
AvailableCapacities (ACs) and the Nodes (as admin, lib/kube_api.py), and finds every drive AC
(storageClass HDD, SSD or NVME: a whole drive, never shared) that two RESERVED reservations hold at
once. A reservation holds each AC it lists for a claim as the daemon counts it
(sources/baremetal_store.h): on every node while the claim has no selected node
(volume.kubernetes.io/selected-node), then on that node only. The claims are read after the ACRs:
a selected node the daemon saw before it wrote a reservation is in that read.

--report (JSON, written atomically after every pass):
  passes        passes done
  seen          names of every ACR seen (in the order first seen)
  reserved_now  RESERVED ACRs in the last pass
  reserved_max  most RESERVED ACRs in one pass
  twice         [{ac, holders, at}] each drive AC held by two or more RESERVED ACRs at once (first
                time seen per AC and set of holders)
  errors        passes that failed (the API unreachable), with why
"""
import argparse
import json
import os
import sys
import time
import urllib.error

from csi_provisioner import items
from kube_api import Api

SELECTED = "volume.kubernetes.io/selected-node"
GROUP = "/apis/csi-baremetal.dell.com/v1"
UUID_KEY = "nodes.csi-baremetal.dell.com/uuid"
DRIVES = {"HDD", "SSD", "NVME"}


def selected_nodes(api):
    out = {}
    for c in items(api, "/api/v1/persistentvolumeclaims"):
        node = (c["metadata"].get("annotations") or {}).get(SELECTED)
        if node:
            out[c["metadata"]["namespace"] + "/" + c["metadata"]["name"]] = node
    return out


def drives_held_twice(acrs, acs, node_of_id, selected):
    """{drive AC name: sorted names of the RESERVED ACRs holding it} for the ACs held twice."""
    holders = {}
    for acr in acrs:
        spec = acr.get("spec") or {}
        if spec.get("Status") != "RESERVED":
            continue
        for req in spec.get("ReservationRequests") or []:
            claim = "%s/%s" % (spec.get("Namespace"), (req.get("CapacityRequest") or {}).get("Name"))
            chosen = selected.get(claim)
            for name in req.get("Reservations") or []:
                ac = acs.get(name)
                if ac is None or (ac.get("spec") or {}).get("storageClass") not in DRIVES:
                    continue
                if chosen and node_of_id.get(ac["spec"].get("NodeId")) != chosen:
                    continue
                holders.setdefault(name, set()).add(acr["metadata"]["name"])
    return {ac: sorted(h) for ac, h in holders.items() if len(h) > 1}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--interval", type=float, default=0.1)
    p.add_argument("--report", required=True)
    args = p.parse_args()
    api = Api()
    report = {"passes": 0, "seen": [], "reserved_now": 0, "reserved_max": 0, "twice": [], "errors": []}
    noted = set()
    while True:
        try:
            acrs = items(api, GROUP + "/availablecapacityreservations")
            selected = selected_nodes(api)
            acs = {a["metadata"]["name"]: a for a in items(api, GROUP + "/availablecapacities")}
            node_of_id = {}
            for n in items(api, "/api/v1/nodes"):
                meta = n["metadata"]
                node_of_id[(meta.get("annotations") or {}).get(UUID_KEY) or meta["uid"]] = meta["name"]
            for acr in acrs:
                if acr["metadata"]["name"] not in report["seen"]:
                    report["seen"].append(acr["metadata"]["name"])
            reserved = sum(1 for a in acrs if (a.get("spec") or {}).get("Status") == "RESERVED")
            report["reserved_now"] = reserved
            report["reserved_max"] = max(report["reserved_max"], reserved)
            for ac, holders in drives_held_twice(acrs, acs, node_of_id, selected).items():
                if (ac, tuple(holders)) not in noted:
                    noted.add((ac, tuple(holders)))
                    report["twice"].append({"ac": ac, "holders": holders, "at": time.time()})
                    sys.stderr.write("reservation-check: drive %s held by %s\n" % (ac, " ".join(holders)))
            report["passes"] += 1
        except (RuntimeError, KeyError, ValueError, urllib.error.URLError, OSError) as e:
            report["errors"].append("%.3f %s" % (time.time(), e))
            del report["errors"][:-20]
        tmp = args.report + ".tmp"
        with open(tmp, "w") as f:
            json.dump(report, f)
        os.replace(tmp, args.report)
        time.sleep(args.interval)


if __name__ == "__main__":
    main()
