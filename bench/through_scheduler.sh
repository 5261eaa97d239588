#!/usr/bin/env bash
# kube-scheduler's throughput with the daemon in the loop, on the e2e's real control plane
# (kube-apiserver, etcd and kube-scheduler of E2E_KUBE, by default v1.37.2, built and cached by
# tests/e2e/lib/kube-bin.sh) on loopback, without kubelets. Run by hand, never by `make e2e`.
#
#   bench/through_scheduler.sh [--quick] [NODES [PODS]]    # defaults 5000 2000; --quick: 500 500
#   BENCH_CONFIGS="alone bind" BENCH_ROUNDS=3 bench/through_scheduler.sh
#
# BENCH_PROFILE=SECONDS: for each configuration, profile both sides for SECONDS from a second
# after the scheduler starts: kube-scheduler's CPU profile from its /debug/pprof/profile (opened
# for the run with --authorization-always-allow-paths) into $WORKDIR/profile-NAME-scheduler.pb.gz
# (read with `go tool pprof -top FILE`), and the daemon's with perf, if installed, into
# $WORKDIR/perf-NAME-daemon.data (`perf report -i FILE`). Profiling slows the run: its pods/s are
# not the figures.
#
# BENCH_ROUNDS (default 1): run every configuration this many times, interleaved (alone, names,
# ..., alone, names, ...), and give each one's median pods/s with every round's figure beside it;
# the CPU and latency columns are the last round's. The machine's own rate drifts between minutes
# by more than the differences measured, so a share of the scheduler alone is read from medians.
#
# NODES nodes of 8 GPUs; for each configuration in turn, PODS one-GPU pods are created while no
# scheduler runs, kube-scheduler starts, and the time from its start until no pod is pending gives
# pods/s. The scheduler's and the daemon's API clients both run at QPS 1000, burst 2000, as large
# clusters configure kube-scheduler (so the client-side limit is not what is measured), and the
# scheduler scores its default share of the nodes (percentageOfNodesToScore 0: about 10% of 5,000
# nodes, so about 500 names reach the extender). The
# configurations are the chart's:
#   alone      kube-scheduler without extenders
#   names      the GPU entry (NodeNames form), kube-scheduler binds (no bindVerb)
#   bind       the GPU entry with bindVerb: the daemon binds
#   every-pod  bind, plus the every-pod entry (filter-unmanaged, prioritize-unmanaged) straight to
#              the daemon: the chart's default route
#   relay      the second-scheduler route: pods name their own scheduler, and its every-pod entry
#              goes through scheduler-extender-relay
#   floor-names, floor-every-pod (not run unless named in BENCH_CONFIGS)
#              names and every-pod without bindVerb, against bench/floor_server instead of the
#              daemon: an extender that reads each request and decides nothing (/filter echoes
#              the names, /prioritize answers []). What the extender protocol costs kube-scheduler
#              itself: no extender's answers can make a route faster than its floor.
# The daemon runs as one replica that leads (its Lease renewals are not rate-limited), with the
# scoring the chart gives its default route (bench/chart_scoring.py every-pod). Printed: one
# table of pods/s, the share of the scheduler alone, the CPU time per pod of each process (on a
# machine where they share few cores, what one spends the others cannot), and the daemon's p50/p90
# per verb (bucket bounds of its request histogram), and kube-scheduler's own p50/p90 of its
# scheduling algorithm (filters, scores and the extender's calls) and of a scheduled attempt.
# Results also go to $WORKDIR/results.txt.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODES=5000 PODS=2000
if [[ "${1:-}" == --quick ]]; then
  NODES=500 PODS=500
  shift
fi
NODES="${1:-$NODES}"
PODS="${2:-$PODS}"
CONFIGS="${BENCH_CONFIGS:-alone names bind every-pod relay}"
ROUNDS="${BENCH_ROUNDS:-1}"
PROFILE_SECONDS="${BENCH_PROFILE:-}"
# kube-scheduler's /metrics (and its profile with BENCH_PROFILE) open to this script for the run.
open_paths=/healthz,/metrics
[[ -n "$PROFILE_SECONDS" ]] && open_paths+=,/debug/pprof/profile
export CLUSTER_SCHEDULER_ARGS="${CLUSTER_SCHEDULER_ARGS:-} --authorization-always-allow-paths=$open_paths"

SUITE_TAG=through-scheduler
# shellcheck source=../tests/e2e/lib/suite.sh
source "$HERE/../tests/e2e/lib/suite.sh"
py() { python3 "$HERE/through_scheduler.py" "$@"; }
# cpu_ticks PID...: user+system clock ticks each process has used so far.
cpu_ticks() { local p; for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat"; done; }
TICK_HZ="$(getconf CLK_TCK)"

cat >"$WORKDIR/daemon.yaml" <<'EOF'
kubernetes:
  api_qps: 1000
  api_burst: 2000
  scheduler_names: [default-scheduler, gpu-scheduler]
EOF
# The scoring of the chart's default route (every-pod), so prioritize costs what it costs there.
"$HERE/chart_scoring.py" every-pod >>"$WORKDIR/daemon.yaml"
suite_start_daemon --config "$WORKDIR/daemon.yaml" --log-level warn
URL="http://127.0.0.1:$DAEMON_PORT/scheduler"

RELAY_BIN="$(dirname "$BIN")/scheduler-extender-relay"
[[ -x "$RELAY_BIN" ]] || fail "no relay binary at $RELAY_BIN (run make build)"
RELAY_PORT="$(cluster_free_ports 1)"
"$RELAY_BIN" --listen "127.0.0.1:$RELAY_PORT" --upstream "http://127.0.0.1:$DAEMON_PORT" \
  >>"$CLUSTER_LOG_DIR/scheduler-extender-relay.log" 2>&1 &
RELAY_PID=$!
cluster_register_pid "$RELAY_PID" scheduler-extender-relay
cluster_wait_http "http://127.0.0.1:$RELAY_PORT/healthz" 30 >/dev/null

FLOOR_PID=""
if [[ " $CONFIGS " == *" floor-"* ]]; then
  FLOOR_BIN="$ROOT/build/bench/floor_server"
  [[ -x "$FLOOR_BIN" ]] || fail "no floor server at $FLOOR_BIN (run make build)"
  FLOOR_PORT="$(cluster_free_ports 1)"
  "$FLOOR_BIN" "$FLOOR_PORT" >>"$CLUSTER_LOG_DIR/floor_server.log" 2>&1 &
  FLOOR_PID=$!
  cluster_register_pid "$FLOOR_PID" floor_server
  for _ in $(seq 100); do
    curl -sf -d '{"NodeNames":[]}' "http://127.0.0.1:$FLOOR_PORT/scheduler/prioritize" >/dev/null && break
    sleep 0.1
  done
fi
FLOOR_URL="http://127.0.0.1:${FLOOR_PORT:-0}/scheduler"

step "$NODES nodes of 8 GPUs"
py nodes "$NODES"

# What the processes spend with no scheduler running: a longer run pays more of it per pod.
sleep 2
idle_procs=("$APISERVER_PID" "$ETCD_PID" "$DAEMON_PID" "$RELAY_PID")
mapfile -t idle_before < <(cpu_ticks "${idle_procs[@]}")
sleep 5
mapfile -t idle_after < <(cpu_ticks "${idle_procs[@]}")
idle=""
for i in 0 1 2 3; do
  idle+="$(echo "scale=3; (${idle_after[i]} - ${idle_before[i]}) / $TICK_HZ / 5" | bc) "
done
IDLE="${idle% }"
step "idle CPU, cores (apiserver etcd daemon relay): $IDLE"

# scheduler_config NAME FILE: the KubeSchedulerConfiguration of configuration NAME, client QPS 1000.
scheduler_config() {
  local name="$1" file="$2"
  case "$name" in
    alone) cluster_write_scheduler_config "$file" ;;
    names) cluster_write_scheduler_config "$file" --extender-url "$URL" --node-cache-capable true \
      --ignored-by-scheduler false --weight 10 ;;
    bind) cluster_write_scheduler_config "$file" --extender-url "$URL" --node-cache-capable true \
      --ignored-by-scheduler false --weight 10 --bind-verb bind ;;
    every-pod)
      cluster_write_scheduler_config "$file" --extender-url "$URL" --node-cache-capable true \
        --ignored-by-scheduler false --weight 10 --bind-verb bind
      cluster_append_every_pod_entry "$file" "$URL" ;;
    relay)
      cluster_write_scheduler_config "$file" --extender-url "$URL" --node-cache-capable true \
        --ignored-by-scheduler false --weight 10 --bind-verb bind --scheduler-name gpu-scheduler
      cluster_append_every_pod_entry "$file" "http://127.0.0.1:$RELAY_PORT/scheduler" ;;
    floor-names) cluster_write_scheduler_config "$file" --extender-url "$FLOOR_URL" --node-cache-capable true \
      --ignored-by-scheduler false --weight 10 ;;
    floor-every-pod)
      cluster_write_scheduler_config "$file" --extender-url "$FLOOR_URL" --node-cache-capable true \
        --ignored-by-scheduler false --weight 10
      cluster_append_every_pod_entry "$file" "$FLOOR_URL" ;;
    *) fail "unknown configuration $name" ;;
  esac
  sed -i -E -e 's/^clientConnection:$/clientConnection:\n  qps: 1000\n  burst: 2000/' \
    -e 's/^percentageOfNodesToScore: .*/percentageOfNodesToScore: 0/' "$file"
}

# profile_both_sides NAME SECONDS: the scheduler's CPU profile and the daemon's perf record (BENCH_PROFILE).
profile_both_sides() {
  local name="$1" seconds="$2"
  sleep 1
  if command -v perf >/dev/null; then
    perf record -F 499 -g -p "$DAEMON_PID" -o "$WORKDIR/perf-$name-daemon.data" -- sleep "$seconds" >/dev/null 2>&1 &
  fi
  curl -sfk "${SCHEDULER_HEALTHZ_URL%/healthz}/debug/pprof/profile?seconds=$seconds" \
    -o "$WORKDIR/profile-$name-scheduler.pb.gz" || step "$name: no CPU profile from kube-scheduler"
  wait
  step "$name: profiles in $WORKDIR/profile-$name-scheduler.pb.gz and $WORKDIR/perf-$name-daemon.data"
}
if [[ -n "$PROFILE_SECONDS" ]] && ! command -v perf >/dev/null; then
  step "BENCH_PROFILE: no perf here; only kube-scheduler is profiled"
fi

declare -A RATE RATES LATENCY CPU SCHEDULER_SEES
for round in $(seq 1 "$ROUNDS"); do
for name in $CONFIGS; do
  scheduler="default-scheduler"
  [[ "$name" == relay ]] && scheduler=gpu-scheduler
  step "$name: $PODS pending pods, then kube-scheduler"
  py pods "$PODS" "$scheduler"
  scheduler_config "$name" "$WORKDIR/scheduler-$name.yaml"
  curl -sf "http://127.0.0.1:$DAEMON_ADMIN/metrics" >"$WORKDIR/metrics-$name-before.txt"
  K get --raw /metrics >"$WORKDIR/apiserver-$name-before.txt"
  start="$(date +%s.%N)"
  CLUSTER_SCHEDULER_V=1 cluster_start_scheduler "$WORKDIR/scheduler-$name.yaml" "$CLUSTER_LOG_DIR/kube-scheduler-$name.log" >/dev/null
  procs=("$APISERVER_PID" "$ETCD_PID" "$SCHEDULER_PID" "$DAEMON_PID" "$RELAY_PID" "${FLOOR_PID:-$RELAY_PID}")
  [[ -n "$PROFILE_SECONDS" ]] && profile_both_sides "$name" "$PROFILE_SECONDS" &
  mapfile -t before < <(cpu_ticks "${procs[@]}")
  read -r took rate < <(py wait "$PODS" "$start" 900)
  mapfile -t after < <(cpu_ticks "${procs[@]}")
  curl -sfk "${SCHEDULER_HEALTHZ_URL%/healthz}/metrics" >"$WORKDIR/scheduler-metrics-$name.txt" || true
  SCHEDULER_SEES[$name]="$(py scheduler "$WORKDIR/scheduler-metrics-$name.txt")"
  curl -sf "http://127.0.0.1:$DAEMON_ADMIN/metrics" >"$WORKDIR/metrics-$name-after.txt"
  K get --raw /metrics >"$WORKDIR/apiserver-$name-after.txt"
  cluster_stop_scheduler
  [[ -z "$FLOOR_PID" ]] && after[5]="${before[5]}"
  cpu=""
  for i in 0 1 2 3 4 5; do
    cpu+="$(echo "scale=2; 1000 * (${after[i]} - ${before[i]}) / $TICK_HZ / $PODS" | bc) "
  done
  CPU[$name]="${cpu% }"
  RATES[$name]="${RATES[$name]:-}${RATES[$name]:+ }$rate"
  LATENCY[$name]="$(py quantiles "$WORKDIR/metrics-$name-before.txt" "$WORKDIR/metrics-$name-after.txt")"
  step "$name: API server requests per pod: $(py requests "$WORKDIR/apiserver-$name-before.txt" "$WORKDIR/apiserver-$name-after.txt" "$PODS")"
  result "$name (round $round of $ROUNDS): $PODS pods on $NODES nodes in ${took}s: $rate pods/s; CPU ms per pod (apiserver etcd scheduler daemon relay floor): ${CPU[$name]}; kube-scheduler: ${SCHEDULER_SEES[$name]}; daemon: ${LATENCY[$name]}"
  py delete
done
done
for name in $CONFIGS; do
  RATE[$name]="$(tr ' ' '\n' <<<"${RATES[$name]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
done

E2E_OK=1
{
  printf '\n%d nodes, %d pods, QPS 1000 (kube-scheduler %s), %d round(s); idle CPU, cores (apiserver etcd daemon relay): %s\n' \
    "$NODES" "$PODS" "$CLUSTER_KUBE_VERSION" "$ROUNDS" "$IDLE"
  printf '| configuration | pods/s (median) | each round | of alone | CPU ms/pod: apiserver etcd scheduler daemon relay floor | kube-scheduler p50/p90 | daemon p50/p90 per verb |\n'
  printf '|---|---|---|---|---|---|---|\n'
  for name in $CONFIGS; do
    share="-"
    [[ -n "${RATE[alone]:-}" ]] && share="$(echo "scale=0; 100 * ${RATE[$name]} / ${RATE[alone]}" | bc)%"
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "${RATE[$name]}" "${RATES[$name]}" "$share" "${CPU[$name]}" \
      "${SCHEDULER_SEES[$name]}" "${LATENCY[$name]}"
  done
} | tee -a "$RESULTS"
