#!/usr/bin/env bash
# Cold build timings as a newcomer meets them: a fresh clone of REV (default HEAD) in a temporary
# folder, no compiler cache (CCACHE_DISABLE), 2 jobs. Prints, per step, wall seconds and CPU
# seconds (user + system of every compiler and linker): the wall time depends on what else the
# machine runs, the CPU time hardly; on an idle 2-core machine the wall time is about CPU / 2.
#   daemon: `make daemon` (what `make run` waits for), then the seconds until /healthz answers
#   test:   `make build` on top of it (what `make test` adds before ctest), then ctest
#   asan, tsan: `make test-asan`, `make test-tsan` (build and suite); fuzz: `make fuzz`, 1 s a target
# usage: bench/cold_build.sh [REV] [STEPS...]   (steps default: daemon test)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
rev="${1:-HEAD}"
shift || true
steps=("$@")
[ $# -eq 0 ] && steps=(daemon test)
work="$(mktemp -d "${TMPDIR:-/tmp}/cold-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/src"
git -C "$work/src" checkout -q "$rev"
cd "$work/src"
export CCACHE_DISABLE=1

measure() {
  local name="$1"
  shift
  local t0 c0 c1
  t0=$(date +%s.%N)
  c0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  ( "$@" ) > "$work/$name.log" 2>&1 || { tail -20 "$work/$name.log"; echo "cold-build: $name failed" >&2; exit 1; }
  local ticks
  ticks=$(getconf CLK_TCK)
  c1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  printf '%-8s wall %7.0f s   cpu %7.0f s\n' "$name" "$(echo "$(date +%s.%N) - $t0" | bc)" \
    "$(echo "($c1 - $c0) / $ticks" | bc)"
}

first_answer() {
  local port=18931
  ./build/scheduler-extender --config examples/config.yaml --listen 127.0.0.1:$port > "$work/daemon.log" 2>&1 &
  local pid=$!
  until curl -sf "http://127.0.0.1:$port/healthz" > /dev/null; do sleep 0.1; done
  kill "$pid"
  wait "$pid" || true
}

for step in "${steps[@]}"; do
  case "$step" in
    daemon) measure daemon make daemon; measure answers first_answer ;;
    test) measure build make build; measure ctest ctest --test-dir build -j2 ;;
    asan) measure asan make test-asan ;;
    tsan) measure tsan make test-tsan ;;
    fuzz) measure fuzz make fuzz FUZZ_SECONDS=1 ;;
    *) echo "cold-build: unknown step $step" >&2; exit 2 ;;
  esac
done
