#!/usr/bin/env bash
# Runs every placement policy on generated workloads of the GPU trace's shape for 3 seeds and
# prints the allocation at 100% arrival. Usage: bench/run_simulate.sh [BUILD_DIR] [SCALE]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="${1:-$HERE/../build}"
SCALE="${2:-1.0}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
for seed in 1 2 3; do
  python3 "$HERE/gen_trace_workload.py" --seed "$seed" --scale "$SCALE" --out "$WORK/$seed" >/dev/null
  echo "seed $seed"
  "$BUILD/scheduler-extender" simulate --inventory "$WORK/$seed/inventory.yaml" --workload "$WORK/$seed/workload.csv" --seed "$seed"
done
