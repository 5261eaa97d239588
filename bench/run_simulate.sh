#!/usr/bin/env bash
# Runs every placement policy on synthetic workloads (gen_trace_workload.py; not the trace's shape:
# bench/run_trace.sh runs the trace itself) for 3 seeds and prints the allocation at 100% arrival.
# Usage: bench/run_simulate.sh [BUILD_DIR] [SCALE]
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
