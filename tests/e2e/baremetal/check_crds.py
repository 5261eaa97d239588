"""Checks tests/e2e/baremetal/crds.yaml is as strict as csi-baremetal's own CRDs: every object schema
types its properties, nothing keeps unknown fields, and Volume alone is namespaced. A fixture looser
than upstream would let the e2e suite write objects the real API server prunes or refuses. Each
CRD's spec must also be the one the operator chart ships (the commit the fixture's header names): the
SHA-256 of its JSON (sorted keys, no spaces) is pinned below, taken from that chart's files, so an
edit to the fixture fails here.
usage: check_crds.py CRDS_YAML"""
import hashlib
import json
import sys

import yaml

PRESERVE = "x-kubernetes-preserve-unknown-fields"


def loose_paths(node, path):
    if isinstance(node, dict):
        if node.get(PRESERVE):
            yield path + "." + PRESERVE
        if "properties" in node or node.get("type") == "object":
            for name, sub in (node.get("properties") or {}).items():
                if not isinstance(sub, dict) or "type" not in sub:
                    yield f"{path}.properties.{name}: no type"
        for key, value in node.items():
            yield from loose_paths(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from loose_paths(value, f"{path}[{i}]")


UPSTREAM_SPECS = {
    "availablecapacities.csi-baremetal.dell.com": "88376cb9727d35789c85071ef1aefdf4fe1d8522e47de1a2c6ba7d0691381615",
    "availablecapacityreservations.csi-baremetal.dell.com":
        "4dc0357ebf737ebcb62ab832354625085966143ea8f92a1732e2b1b1976da332",
    "drives.csi-baremetal.dell.com": "a8591055641482e212e8ea29df440c73ee5c8e64bdd859ac96b2f3ffe6515988",
    "logicalvolumegroups.csi-baremetal.dell.com": "3937f2dfc8b57458673ea2e9bebe49186a90cf0f114e4f44af9fbec8e509cab6",
    "nodes.csi-baremetal.dell.com": "126c0f6da8ac26130d6828681bf5a7951df4f925f7b862f7d7d2bf784078219c",
    "storagegroups.csi-baremetal.dell.com": "d5eb33f031677b79647b48407d60490c76fe219d48690c30cf044777d9fc013a",
    "volumes.csi-baremetal.dell.com": "2a685bc81a250b94f6c223207e46c0d0c793b588c233d42cf0ac38ea686d5f72",
}


def spec_digest(crd):
    return hashlib.sha256(json.dumps(crd["spec"], sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def main(path):
    crds = [d for d in yaml.safe_load_all(open(path)) if d]
    problems = []
    for crd in crds:
        name = crd["metadata"]["name"]
        if name not in UPSTREAM_SPECS:
            problems.append(f"{name}: not a CRD csi-baremetal ships")
        elif spec_digest(crd) != UPSTREAM_SPECS[name]:
            problems.append(f"{name}: spec differs from the operator chart's")
    for crd in crds:
        name = crd["metadata"]["name"]
        want = "Namespaced" if name.startswith("volumes.") else "Cluster"
        if crd["spec"].get("scope") != want:
            problems.append(f"{name}: scope {crd['spec'].get('scope')}, upstream {want}")
        for version in crd["spec"]["versions"]:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if not schema:
                problems.append(f"{name} {version['name']}: no openAPIV3Schema")
                continue
            problems += [f"{name} {version['name']}{p}" for p in loose_paths(schema, "")]
    if len(crds) != 7:
        problems.append(f"{len(crds)} CRDs, upstream ships 7")
    for p in problems:
        print("crds:", p)
    print(f"crds: {len(crds)} CRDs checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
