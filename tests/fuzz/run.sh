#!/usr/bin/env bash
# Runs every libFuzzer target of a build made with -DEXTENDER_FUZZ=ON for FUZZ_SECONDS each
# (default 60), FUZZ_JOBS at a time (default: the number of CPUs), each on a writable copy of its
# seeds (tests/fuzz/corpus/<target>, plus the request fixtures for the request decoders) in the
# build folder. Crashes, leaks, timeouts and out-of-memory inputs go to <build>/fuzz-artifacts.
# Fails if any target found one.   Usage: tests/fuzz/run.sh [build-fuzz]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build-fuzz}" && pwd)"
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_JOBS:-$(nproc)}"
fixtures="$root/tests/fixtures"

# target  max_len
targets=(
  "extender_args 65536"
  "binding_args 4096"
  "preemption_args 65536"
  "quantity 64"
  "config 16384"
  "inventory 16384"
  "watch_event 65536"
  "dra_objects 65536"
  "request_parser 8192"
  "http_connection 8192"
)

seed() {
  local target="$1" corpus="$2"
  mkdir -p "$corpus"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$corpus/" 2>/dev/null || true
  case "$target" in
    extender_args)
      # The first byte picks the node field filter (even: keep all, odd: a few fields).
      for f in "$fixtures"/kube-scheduler-v1.20/*.json "$fixtures"/protocol-examples/filter-*.json; do
        [ -e "$corpus/all-$(basename "$f")" ] || { printf '\0'; cat "$f"; } > "$corpus/all-$(basename "$f")"
        [ -e "$corpus/few-$(basename "$f")" ] || { printf '\1'; cat "$f"; } > "$corpus/few-$(basename "$f")"
      done ;;
    binding_args) cp -n "$fixtures"/protocol-examples/bind-*.json "$corpus/" ;;
    preemption_args) cp -n "$fixtures"/protocol-examples/preempt-*.json "$corpus/" ;;
    http_connection) cp -n "$root/tests/fuzz/corpus/request_parser/"* "$corpus/" ;;
  esac
}

run_one() {
  local target="$1" max_len="$2"
  local corpus="$build/fuzz-corpus/$target" artifacts="$build/fuzz-artifacts/$target/" log="$build/fuzz-logs/$target.log"
  seed "$target" "$corpus"
  mkdir -p "$artifacts" "$(dirname "$log")"
  local rc=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/fuzz_$target" "$corpus" -max_total_time="$seconds" -max_len="$max_len" \
    -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  local execs
  execs="$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $target FAILED (exit $rc) after ${execs:-?} executions; reproducer(s):" >&2
    ls "$artifacts" | sed "s|^|  $artifacts|" >&2
    grep -m3 -E 'ERROR: |runtime error|SUMMARY' "$log" | sed 's/^/  /' >&2
    return 1
  fi
  echo "fuzz: $target ok: ${execs:-?} executions in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs"
}

failed=0
pids=()
names=()
for entry in "${targets[@]}"; do
  set -- $entry
  [ -x "$build/tests/fuzz/fuzz_$1" ] || { echo "fuzz: $build/tests/fuzz/fuzz_$1 is not built" >&2; exit 1; }
  run_one "$1" "$2" &
  pids+=($!)
  names+=("$1")
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings above; logs in $build/fuzz-logs" >&2
  exit 1
fi
