#!/usr/bin/env python3
"""Workload families: variants of the 2023 Alibaba GPU trace ("openb", as published) to judge
placement policies by, each derived from the trace given with a fixed seed, written as a trace
directory that `scheduler-extender simulate --trace` reads (the same two CSV files, the same
columns). docs/placement.md, "Workload families", describes them and the table.

  bench/gen_families.py derive TRACE_DIR FAMILY OUT_DIR [--seed N] [--scale F]
  bench/gen_families.py table RESULTS      # lines "family deployment policy seed allocation"
  bench/gen_families.py list

Families (GPU pods: pods asking at least one GPU or a share; CPU-only pods: the others):
  default      the trace as is.
  multi-gpu    half of the GPU pods ask 2, 4 or 8 whole GPUs (uniformly); their CPU and memory per
               GPU stay, capped at the most a node with that many GPUs offers per GPU.
  fractional   every GPU pod asks a share of one GPU, drawn from the trace's own shares; its CPU
               and memory are those of one of its GPUs.
  few-cpu      a tenth of the CPU-only pods (drawn).
  many-cpu     four times the CPU-only pods (each three more times).
  gpu-model    a third of the GPU pods are constrained to GPU models (gpu_spec), as in the trace's
               published gpuspec33 pod list: its model sets (single models and sets of two to five)
               drawn in that list's proportions (GPU_SPECS), among the sets with a node that holds
               the pod's GPUs; the simulator makes it a required node affinity on
               nvidia.com/gpu.product, which each node carries from the node list's model column.
  small-nodes  half of the 8-GPU nodes are each split into four 2-GPU nodes with a quarter of its
               CPU and memory (same model): as many GPUs, half the 8-GPU nodes.
--scale F keeps that fraction of the nodes and of the pods (drawn, the same for every family), for
quick checks.
"""
import argparse
import csv
import os
import random
import sys

NODES = "openb_node_list_gpu_node.csv"
PODS = "openb_pod_list_default.csv"
FAMILIES = ["default", "multi-gpu", "fractional", "few-cpu", "many-cpu", "gpu-model", "small-nodes"]


def read(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def gpus_of(pod):
    return int(pod["num_gpu"])


def is_share(pod):
    return gpus_of(pod) == 1 and 0 < int(pod["gpu_milli"]) < 1000


def per_gpu(pod, column):
    return int(pod[column]) // max(1, gpus_of(pod))


def multi_gpu(rng, nodes, pods):
    gpu_pods = [p for p in pods if gpus_of(p) > 0]
    for p in rng.sample(gpu_pods, len(gpu_pods) // 2):
        n = rng.choice([2, 4, 8])
        holders = [x for x in nodes if int(x["gpu"]) >= n]
        if not holders:
            continue
        for column in ("cpu_milli", "memory_mib"):
            cap = max(int(x[column]) * n // int(x["gpu"]) for x in holders)
            p[column] = str(min(per_gpu(p, column) * n, cap))
        p["num_gpu"], p["gpu_milli"] = str(n), str(1000 * n)
    return nodes, pods


def fractional(rng, nodes, pods):
    shares = [int(p["gpu_milli"]) for p in pods if is_share(p)] or [500]
    for p in pods:
        if gpus_of(p) > 0 and not is_share(p):
            p["cpu_milli"], p["memory_mib"] = str(per_gpu(p, "cpu_milli")), str(per_gpu(p, "memory_mib"))
            p["num_gpu"], p["gpu_milli"] = "1", str(rng.choice(shares))
    return nodes, pods


def few_cpu(rng, nodes, pods):
    cpu_only = [i for i, p in enumerate(pods) if gpus_of(p) == 0]
    drop = set(cpu_only) - set(rng.sample(cpu_only, len(cpu_only) // 10))
    return nodes, [p for i, p in enumerate(pods) if i not in drop]


def many_cpu(rng, nodes, pods):
    out = []
    for p in pods:
        out.append(p)
        if gpus_of(p) == 0:
            out += [dict(p, name=f"{p['name']}-c{k}") for k in (1, 2, 3)]
    return nodes, out


# The model sets the published openb_pod_list_gpuspec33.csv names, by how many of its first 220
# pods name each (70 of them; its other pods ask any model).
GPU_SPECS = [("T4", 33), ("V100M16|V100M32", 13), ("G2", 10), ("P100", 5), ("P100|V100M16|V100M32", 3),
             ("G3", 2), ("G2|P100|T4|V100M16|V100M32", 2), ("P100|T4|V100M16|V100M32", 2)]
GPU_MODEL_SHARE = 1 / 3


def gpu_model(rng, nodes, pods):
    largest = {}
    for x in nodes:
        if x.get("model"):
            largest[x["model"]] = max(largest.get(x["model"], 0), int(x["gpu"]))
    gpu_pods = [p for p in pods if gpus_of(p) > 0]
    for p in rng.sample(gpu_pods, round(len(gpu_pods) * GPU_MODEL_SHARE)):
        specs = [(s, w) for s, w in GPU_SPECS if any(largest.get(m, 0) >= gpus_of(p) for m in s.split("|"))]
        if not specs:
            continue
        spec = rng.choices([s for s, _ in specs], [w for _, w in specs])[0]
        p["gpu_spec"] = "|".join(sorted(m for m in spec.split("|") if m in largest))
    return nodes, pods


def small_nodes(rng, nodes, pods):
    eight = [i for i, x in enumerate(nodes) if int(x["gpu"]) == 8]
    split = set(rng.sample(eight, len(eight) // 2))
    out = []
    for i, x in enumerate(nodes):
        if i not in split:
            out.append(x)
            continue
        for k in range(4):
            out.append(dict(x, sn=f"{x['sn']}-q{k}", cpu_milli=str(int(x["cpu_milli"]) // 4),
                            memory_mib=str(int(x["memory_mib"]) // 4), gpu="2"))
    return out, pods


DERIVE = {"default": lambda rng, n, p: (n, p), "multi-gpu": multi_gpu, "fractional": fractional,
          "few-cpu": few_cpu, "many-cpu": many_cpu, "gpu-model": gpu_model, "small-nodes": small_nodes}


def derive(trace, family, out, seed, scale):
    node_header, nodes = read(os.path.join(trace, NODES))
    pod_header, pods = read(os.path.join(trace, PODS))
    for needed, header in (("model", node_header), ("gpu_spec", pod_header)):
        if needed not in header:
            header.append(needed)
    if scale < 1:
        # The same part of the trace for every family, so that scaled families compare.
        rng = random.Random(f"scale/{seed}")
        nodes = sorted(rng.sample(nodes, max(1, round(len(nodes) * scale))), key=lambda x: x["sn"])
        pods = sorted(rng.sample(pods, max(1, round(len(pods) * scale))), key=lambda p: p["name"])
    nodes, pods = DERIVE[family](random.Random(f"{family}/{seed}"), nodes, pods)
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, NODES), node_header, nodes)
    write(os.path.join(out, PODS), pod_header, pods)
    gpus = sum(int(x["gpu"]) for x in nodes)
    print(f"{family}: {len(nodes)} nodes, {gpus} GPUs, {len(pods)} pods "
          f"({sum(1 for p in pods if gpus_of(p) == 0)} without GPUs) -> {out}", file=sys.stderr)


def table(results):
    values = {}
    families, policies, deployments = [], [], []
    for line in results:
        if not line.strip() or line.startswith("#"):
            continue
        family, deployment, policy, _seed, value = line.split()
        for seen, item in ((families, family), (policies, policy), (deployments, deployment)):
            if item not in seen:
                seen.append(item)
        values.setdefault((family, deployment, policy), []).append(float(value.rstrip("%")))
    head = "| family | policy |" + "".join(f" {d}: mean | worst seed |" for d in deployments)
    lines = [head, "|---|---|" + "---|---|" * len(deployments)]
    for family in families:
        for policy in policies:
            cells = []
            for d in deployments:
                v = values.get((family, d, policy))
                cells += [f"{sum(v) / len(v):.2f}%", f"{min(v):.2f}%"] if v else ["", ""]
            if any(cells):
                lines.append(f"| {family} | `{policy}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# What the recommended policy is held to (docs/placement.md, "Which policy to run"): per
# deployment, the baselines whose best it must reach on each family and seed.
RECOMMENDED = "fragmentation"
BASELINES = {"every-pod": ("best-fit", "fgd"), "gpu-pods": ("binpack",)}


def verdict(results):
    """Per family and deployment: the recommended policy's mean minus the mean of the best baseline
    on each seed, and its worst gap on one seed (negative: below)."""
    by_seed = {}
    for line in results:
        if not line.strip() or line.startswith("#"):
            continue
        family, deployment, policy, seed, value = line.split()
        by_seed.setdefault((family, deployment), {}).setdefault(seed, {})[policy] = float(value.rstrip("%"))
    lines = ["| family | deployment | against | mean gap | worst seed gap |", "|---|---|---|---|---|"]
    for (family, deployment), seeds in by_seed.items():
        baselines = BASELINES.get(deployment, ())
        gaps, ours, best = [], [], []
        for values in seeds.values():
            present = [values[b] for b in baselines if b in values]
            if RECOMMENDED not in values or not present:
                continue
            ours.append(values[RECOMMENDED])
            best.append(max(present))
            gaps.append(values[RECOMMENDED] - max(present))
        if gaps:
            mean_gap = sum(ours) / len(ours) - sum(best) / len(best)
            lines.append(f"| {family} | {deployment} | max({', '.join(baselines)}) | {mean_gap:+.2f} | {min(gaps):+.2f} |")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("derive")
    d.add_argument("trace")
    d.add_argument("family", choices=FAMILIES)
    d.add_argument("out")
    d.add_argument("--seed", type=int, default=29)
    d.add_argument("--scale", type=float, default=1.0)
    t = sub.add_parser("table")
    t.add_argument("results")
    sub.add_parser("list")
    a = ap.parse_args(argv)
    if a.command == "derive":
        if not 0 < a.scale <= 1:
            ap.error("--scale is a fraction in (0, 1]")
        derive(a.trace, a.family, a.out, a.seed, a.scale)
    elif a.command == "table":
        with open(a.results) as f:
            lines = f.readlines()
        print(table(lines))
        print()
        print(verdict(lines))
    else:
        print(" ".join(FAMILIES))


if __name__ == "__main__":
    main(sys.argv[1:])
