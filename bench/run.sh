#!/usr/bin/env bash
# Generates realistic ExtenderArgs bodies (500 and 5,000 nodes) and runs the /filter benchmark,
# the hardening benchmark, and the peak memory of hostile bodies (decode_rss).
# usage: bench/run.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-30}
data="$build/bench-data"
gen=bench/gen_extender_args.py
mkdir -p "$data"
for n in 500 5000; do
  [ -s "$data/args-$n.json" ] || python3 "$gen" "$n" "$data/args-$n.json"
done
"$build/bench/filter_bench" "$data/args-500.json" "$data/args-5000.json" --runs "$runs"
"$build/bench/hardening_bench" "$data/args-500.json" "$data/args-5000.json" --runs 3 --seconds 10
"$build/bench/decode_rss"
