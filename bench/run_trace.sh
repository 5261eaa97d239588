#!/usr/bin/env bash
# The 2023 Alibaba GPU trace (the FGD paper's "openb" files, read as published from TRACE_DIR)
# through `scheduler-extender simulate`, by the paper's protocol for seeds 42-51: GPU allocation when
# the arrived GPU demand reaches 100% of capacity, per seed, then per deployment and policy one line
#   mean <gpu-pods|every-pod> <policy> <allocation>%
# The extender's weight and percentageOfNodesToScore are the chart's (extender.weight,
# secondScheduler.percentageOfNodesToScore) unless WEIGHT or PERCENTAGE is set. Builds the Release
# daemon into BUILD_DIR (default build) when it is not there.
# usage: bench/run_trace.sh TRACE_DIR [BUILD_DIR]   (env: SEEDS, POLICIES, DEPLOYMENTS, WEIGHT, PERCENTAGE)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 TRACE_DIR [BUILD_DIR]" >&2; exit 2; }
trace=$1
cd "$(dirname "$0")/.."
build=${2:-build}
seeds=${SEEDS:-42 43 44 45 46 47 48 49 50 51}
policies=${POLICIES:-binpack spread fragmentation best-fit}
deployments=${DEPLOYMENTS:-gpu-pods every-pod}
values=charts/scheduler-extender/values.yaml
chart() { python3 -c 'import sys, yaml; print(int(yaml.safe_load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]]))' "$values" "$1" "$2"; }
weight=${WEIGHT:-$(chart extender weight)}
percentage=${PERCENTAGE:-$(chart secondScheduler percentageOfNodesToScore)}
for f in openb_node_list_gpu_node.csv openb_pod_list_default.csv; do
  [ -r "$trace/$f" ] || { echo "$0: $trace/$f: not readable (TRACE_DIR holds the trace's CSV files)" >&2; exit 2; }
done
if [ ! -x "$build/scheduler-extender" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target scheduler-extender >/dev/null
fi
policy_args=()
for p in $policies; do policy_args+=(--policy "$p"); done
echo "# extender weight $weight, percentageOfNodesToScore $percentage; GPU allocation at 100% arrival"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for d in $deployments; do
  for s in $seeds; do
    start=$(date +%s.%N)
    json=$("$build/scheduler-extender" simulate --trace "$trace" --seed "$s" --deployment "$d" --weight "$weight" \
           --percentage-of-nodes-to-score "$percentage" --json "${policy_args[@]}")
    took=$(echo "$(date +%s.%N) - $start" | bc)
    python3 - "$d" "$s" "$took" "$json" >>"$results" <<'PY'
import json, sys
d, seed, took, answer = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
for policy, r in answer["policies"].items():
    print(f"{d} {policy} {seed} {100 * r['allocated_at_100']:.2f}")
PY
    awk -v d="$d" -v s="$s" -v t="$took" '$1 == d && $3 == s { printf "seed %s %s %s %s%%\n", s, $1, $2, $4 } END { printf "# seed %s %s: %.1f s\n", s, d, t }' "$results"
  done
done
python3 - "$results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    d, policy, seed, value = line.split()
    rows.setdefault((d, policy), []).append(float(value))
for (d, policy), values in rows.items():
    print(f"worst {d} {policy} {min(values):.2f}%")
for (d, policy), values in rows.items():
    print(f"mean {d} {policy} {sum(values) / len(values):.2f}%")
PY
