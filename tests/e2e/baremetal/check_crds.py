"""Checks tests/e2e/baremetal/crds.yaml is as strict as csi-baremetal's own CRDs: every object schema
types its properties, nothing keeps unknown fields, and Volume alone is namespaced. A fixture looser
than upstream would let the e2e suite write objects the real API server prunes or refuses. Given
upstream's CRD folder (../shared/upstream/csi-baremetal/crds beside the repository, when there), also
checks that each CRD's spec equals upstream's.
usage: check_crds.py CRDS_YAML [UPSTREAM_DIR]"""
import glob
import os
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


def upstream_differences(crds, folder):
    ours = {crd["metadata"]["name"]: crd["spec"] for crd in crds}
    for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        for crd in yaml.safe_load_all(open(path)):
            if not crd:
                continue
            name = crd["metadata"]["name"]
            if name not in ours:
                yield f"{name}: in upstream, not in the fixture"
            elif ours[name] != crd["spec"]:
                yield f"{name}: spec differs from upstream's {os.path.basename(path)}"


def main(path, upstream=None):
    crds = [d for d in yaml.safe_load_all(open(path)) if d]
    problems = []
    if upstream and os.path.isdir(upstream):
        problems += list(upstream_differences(crds, upstream))
        print(f"crds: compared with {upstream}")
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
    sys.exit(main(*sys.argv[1:3]))
