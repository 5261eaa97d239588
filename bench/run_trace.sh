#!/usr/bin/env bash
# The 2023 Alibaba GPU trace (the FGD paper's "openb" files, read as published from TRACE_DIR)
# through `scheduler-extender simulate`, by the paper's protocol for seeds 42-51: GPU allocation when
# the arrived GPU demand reaches 100% of capacity, per seed, for each workload family
# (bench/gen_families.py derives it from the trace; default: the trace as is; list:NAME is the pod
# list TRACE_DIR/openb_pod_list_NAME.csv the paper published beside the trace, as is, and
# FAMILIES=published every such list TRACE_DIR holds), then per family,
# deployment and policy the worst seed and the mean:
#   worst|mean <family> <gpu-pods|every-pod> <policy> <allocation>%
# then one table of them all (family × policy × deployment, mean and worst seed), and last how far
# the recommended policy (fragmentation) is above its baselines (every-pod: the best of best-fit and
# fgd on each seed; gpu-pods: binpack), on the mean and on its worst seed.
# The extender's weight and percentageOfNodesToScore are the chart's (extender.weight,
# secondScheduler.percentageOfNodesToScore) unless WEIGHT or PERCENTAGE is set, and so are the
# daemon's scoring settings for each deployment (config.scoring with placementByRoute's everyPod or
# gpuPods set) unless CONFIG names a daemon configuration file to use for both instead. SCHEDULER=paper
# runs the FGD paper's simulator instead of kube-scheduler (the policy's score alone over every
# node, ties to a fixed node order drawn from the seed: how the paper's figures were measured). SCALE (a fraction,
# default 1) runs a drawn part of the nodes and pods, for quick checks. Builds the Release daemon
# into BUILD_DIR (default build) when it is not there.
# usage: bench/run_trace.sh [--family NAME]... TRACE_DIR [BUILD_DIR]
#        (env: SEEDS, POLICIES, DEPLOYMENTS, FAMILIES, WEIGHT, PERCENTAGE, SCALE, CONFIG, SCHEDULER)
set -euo pipefail
families=()
while [ $# -ge 2 ] && [ "$1" = --family ]; do families+=("$2"); shift 2; done
[ $# -ge 1 ] || { echo "usage: $0 [--family NAME]... TRACE_DIR [BUILD_DIR]" >&2; exit 2; }
trace=$1
cd "$(dirname "$0")/.."
build=${2:-build}
seeds=${SEEDS:-42 43 44 45 46 47 48 49 50 51}
policies=${POLICIES:-binpack spread fragmentation best-fit fgd}
deployments=${DEPLOYMENTS:-gpu-pods every-pod}
[ ${#families[@]} -gt 0 ] || read -r -a families <<<"${FAMILIES:-default}"
[ "${families[0]}" != all ] || read -r -a families <<<"$(bench/gen_families.py list)"
if [ "${families[0]}" = published ]; then
  families=()
  for f in "$trace"/openb_pod_list_*.csv; do
    name=${f##*/openb_pod_list_}
    name=${name%.csv}
    [ "$name" = default ] || [ ! -e "$f" ] || families+=("list:$name")
  done
  [ ${#families[@]} -gt 0 ] || { echo "$0: $trace holds no published pod list besides the default" >&2; exit 2; }
fi
scale=${SCALE:-1}
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The daemon's configuration for deployment $1: the chart's (bench/chart_scoring.py), or CONFIG.
config_for() {
  if [ -n "${CONFIG:-}" ]; then echo "$CONFIG"; return; fi
  bench/chart_scoring.py "$1" "$values" >"$work/config-$1.yaml"
  echo "$work/config-$1.yaml"
}
for d in $deployments; do
  echo "# $d scoring: $(python3 -c 'import sys, yaml; s = (yaml.safe_load(open(sys.argv[1])) or {}).get("scoring") or {}; print(", ".join(f"{k} {v}" for k, v in s.items() if k.startswith("fragmentation_") and k != "fragmentation_prior"))' "$(config_for "$d")")"
done
results=$work/results
: >"$results"
for family in "${families[@]}"; do
  dir=$trace
  base=$family
  if [ "${family#list:}" != "$family" ]; then
    list=$trace/openb_pod_list_${family#list:}.csv
    [ -r "$list" ] || { echo "$0: $list: not readable" >&2; exit 2; }
    dir=$work/$family
    mkdir -p "$dir"
    ln -s "$(realpath "$trace/openb_node_list_gpu_node.csv")" "$dir/openb_node_list_gpu_node.csv"
    ln -s "$(realpath "$list")" "$dir/openb_pod_list_default.csv"
    base=default
  fi
  if [ "$base" != default ] || [ "$scale" != 1 ]; then
    bench/gen_families.py derive "$dir" "$base" "$work/$family-derived" --scale "$scale" 2>&1 | sed 's/^/# /'
    dir=$work/$family-derived
  fi
  for d in $deployments; do
    for s in $seeds; do
      start=$(date +%s.%N)
      json=$("$build/scheduler-extender" simulate --config "$(config_for "$d")" --trace "$dir" --seed "$s" --deployment "$d" --weight "$weight" \
             --percentage-of-nodes-to-score "$percentage" --scheduler "${SCHEDULER:-kube}" --json "${policy_args[@]}")
      took=$(echo "$(date +%s.%N) - $start" | bc)
      python3 - "$family" "$d" "$s" "$json" >>"$results" <<'PY'
import json, sys
family, d, seed, answer = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
for policy, r in answer["policies"].items():
    print(f"{family} {d} {policy} {seed} {100 * r['allocated_at_100']:.2f}")
PY
      awk -v f="$family" -v d="$d" -v s="$s" -v t="$took" '$1 == f && $2 == d && $4 == s { printf "seed %s %s %s %s %s%%\n", s, f, d, $3, $5 }
        END { printf "# seed %s %s %s: %.1f s\n", s, f, d, t }' "$results"
    done
  done
done
python3 - "$results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    family, d, policy, seed, value = line.split()
    rows.setdefault((family, d, policy), []).append(float(value))
for kind, pick in (("worst", min), ("mean", lambda v: sum(v) / len(v))):
    for (family, d, policy), values in rows.items():
        print(f"{kind} {family} {d} {policy} {pick(values):.2f}%")
PY
bench/gen_families.py table "$results"
