#!/usr/bin/env python3
"""Generates a synthetic inventory and workload for `scheduler-extender simulate`, for trying it
without the trace. Its node counts and pod kinds follow the 2023 Alibaba GPU trace ("openb"), but
not its shape: CPU and memory are drawn from rough deciles, pods without GPUs are small, and every
GPU pod's CPU scales with its GPUs, so the policies score 4-5 points higher here than on the real
trace. Numbers worth quoting come from bench/run_trace.sh on the trace itself.

  bench/gen_trace_workload.py --seed 1 --scale 1.0 --out DIR   # DIR/inventory.yaml DIR/workload.csv

Nodes: 617 with 8 GPUs, 518 with 2, 54 with 4, 24 with 1 (times --scale); CPU/memory 96/384Gi,
104/512Gi, 16/120Gi in the trace's proportions (the rest 64/256Gi); GPUs of 16 GiB. Pods are drawn
with replacement from the trace's mix of kinds (1,088 of 8,152 without GPU; 3,911 one whole GPU,
3,078 a share, 16 two, 15 four, 44 eight) until requested GPUs reach 130% of capacity.
"""
import argparse
import os
import random

SHARES = [(810, 1078), (470, 750), (320, 328), (650, 253), (230, 330), (120, 170), (950, 169)]
KINDS = [("none", 1088), ("whole1", 3911), ("share", 3078), ("whole2", 16), ("whole4", 15), ("whole8", 44)]
CPU_DECILES = [3152, 3152, 4000, 8000, 11300, 11300, 11400, 11908, 15700]
MEM_DECILES = [5600, 5600, 16384, 24576, 31250, 47104, 48128, 49152, 58368]


def from_deciles(rng, deciles, low, high):
    points = [low] + deciles + [high]
    i = rng.randrange(10)
    return int(rng.uniform(points[i], points[i + 1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--arrival", type=float, default=1.3, help="requested GPUs / capacity to stop at")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    counts = [(8, 617), (2, 518), (4, 54), (1, 24)]
    gpus = []
    for g, n in counts:
        gpus += [g] * max(1, round(n * a.scale))
    rng.shuffle(gpus)
    n = len(gpus)
    machines = [(96, 384)] * round(n * 587 / 1213) + [(104, 512)] * round(n * 387 / 1213) + [(16, 120)] * round(n * 107 / 1213)
    machines += [(64, 256)] * (n - len(machines))
    machines = machines[:n]
    # Bigger machines carry more GPUs, as in the trace.
    machines.sort(key=lambda m: -m[0])
    order = sorted(range(n), key=lambda i: -gpus[i])
    os.makedirs(a.out, exist_ok=True)
    capacity = sum(gpus)
    with open(os.path.join(a.out, "inventory.yaml"), "w") as f:
        f.write("nodes:\n")
        for rank, i in enumerate(order):
            cpu, mem = machines[rank]
            f.write(f"  - name: node-{i:04d}\n    cpu: \"{cpu}\"\n    memory: {mem}Gi\n"
                    f"    gpus:\n      nvidia.com/gpu: {gpus[i]}\n    gpu_memory:\n      nvidia.com/gpu: 16Gi\n")
    kinds, kweights = zip(*KINDS)
    shares, sweights = zip(*SHARES)
    demand = 0.0
    rows = []
    while demand < a.arrival * capacity:
        kind = rng.choices(kinds, kweights)[0]
        if kind == "none":
            num, milli = 0, 0
            cpu, mem = rng.choice([2000, 4000, 8000, 16000]), rng.choice([4096, 8192, 16384, 32768])
        else:
            if kind == "share":
                num, milli = 1, rng.choices(shares, sweights)[0]
            else:
                num = int(kind[5:])
                milli = 1000 * num
            cpu = from_deciles(rng, CPU_DECILES, 1000, 32000) * max(1, num)
            mem = from_deciles(rng, MEM_DECILES, 2048, 98304) * max(1, num)
            demand += milli / 1000
        rows.append(f"pod-{len(rows):05d},{num},{milli},{cpu},{mem}")
    with open(os.path.join(a.out, "workload.csv"), "w") as f:
        f.write("name,num_gpu,gpu_milli,cpu_milli,memory_mib\n")
        f.write("\n".join(rows) + "\n")
    print(f"{n} nodes, {capacity} GPUs, {len(rows)} pods -> {a.out}")


if __name__ == "__main__":
    main()
