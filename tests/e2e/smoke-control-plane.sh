#!/usr/bin/env bash
# Self-check of the e2e control plane (no extender involved):
# build-or-reuse kube (E2E_KUBE: current or 1.20), etcd + kube-apiserver on loopback, two fake nodes with 4 GPUs each,
# a plain kube-scheduler, one pod requesting nvidia.com/gpu: 1 -> must get spec.nodeName.
#
#   tests/e2e/smoke-control-plane.sh            # workdir: $E2E_WORKDIR or a new /tmp dir (kept: logs)
# Exit 0 on success; non-zero with the log paths printed on failure.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
T0=$SECONDS
step() { printf '[smoke] %s\n' "$*" >&2; }

step "checking host packages"
if [[ "$(id -u)" == 0 ]]; then
  "$HERE/lib/install-deps.sh"
else
  E2E_DEPS_CHECK_ONLY=1 "$HERE/lib/install-deps.sh"
fi

step "building or reusing kube-apiserver/kube-scheduler (E2E_KUBE=${E2E_KUBE:-current})"
KUBE_BIN="$("$HERE/lib/kube-bin.sh" | tail -n1)"
export KUBE_BIN
step "binaries: $KUBE_BIN ($((SECONDS - T0))s)"

WORKDIR="${E2E_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/scheduler-extender-smoke.XXXXXX")}"

# shellcheck source=lib/cluster.sh
source "$HERE/lib/cluster.sh"

SMOKE_OK=0
smoke_on_exit() {
  if [[ "$SMOKE_OK" != 1 ]]; then
    step "FAILED after $((SECONDS - T0))s; logs:"
    local f
    for f in "${CLUSTER_LOG_DIR:-$WORKDIR/logs}"/*.log; do
      [[ -e "$f" ]] && printf '  %s\n' "$f" >&2
    done
    if [[ -n "${SCHEDULER_LOG:-}" && -f "$SCHEDULER_LOG" ]]; then
      step "last scheduler log lines:"
      tail -n 15 "$SCHEDULER_LOG" >&2 || true
    fi
  fi
}

step "starting control plane in $WORKDIR"
cluster_register_cleanup smoke_on_exit
cluster_up "$WORKDIR"
cluster_bootstrap

step "adding nodes gpu-node-0, gpu-node-1 (4 x nvidia.com/gpu each)"
cluster_add_gpu_node gpu-node-0 4 -l e2e.scheduler-extender/pool=a
cluster_add_gpu_node gpu-node-1 4 -l e2e.scheduler-extender/pool=b
cluster_kubectl get nodes -o wide >&2
for n in gpu-node-0 gpu-node-1; do
  gpu="$(cluster_kubectl get node "$n" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')"
  taints="$(cluster_kubectl get node "$n" -o jsonpath='{.spec.taints}')"
  [[ "$gpu" == 4 ]] || { step "node $n allocatable nvidia.com/gpu is '$gpu', want 4"; exit 1; }
  [[ -z "$taints" ]] || { step "node $n still has taints: $taints"; exit 1; }
done

step "starting kube-scheduler without extender"
cluster_write_scheduler_config "$WORKDIR/scheduler-plain.yaml"
cluster_start_scheduler "$WORKDIR/scheduler-plain.yaml"

step "creating pod default/gpu-smoke (nvidia.com/gpu: 1)"
cluster_gpu_pod_manifest gpu-smoke 1 default | cluster_kubectl apply -f - >&2
node="$(cluster_wait_pod_scheduled default gpu-smoke 60)"
step "pod default/gpu-smoke scheduled on $node"
cluster_kubectl -n default get pod gpu-smoke -o wide
cond="$(cluster_kubectl -n default get pod gpu-smoke -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}')"
[[ "$cond" == True ]] || { step "PodScheduled condition is '$cond'"; exit 1; }

step "checking scheduler log $SCHEDULER_LOG"
grep -q 'Starting Kubernetes Scheduler' "$SCHEDULER_LOG" || { step "no 'Starting Kubernetes Scheduler' line"; exit 1; }
grep -q "$CLUSTER_KUBE_VERSION" "$SCHEDULER_LOG" || { step "scheduler log does not mention $CLUSTER_KUBE_VERSION"; exit 1; }
grep -q 'Successfully bound pod to node' "$SCHEDULER_LOG" || { step "no 'Successfully bound pod to node' line"; exit 1; }
if grep -E 'is forbidden|Unauthorized|Failed to watch|Failed to list' "$SCHEDULER_LOG" >&2; then
  step "scheduler log shows RBAC/list-watch errors (above)"
  exit 1
fi

cluster_delete_pod default gpu-smoke
cluster_stop_scheduler
SMOKE_OK=1
step "PASS in $((SECONDS - T0))s (logs: $CLUSTER_LOG_DIR)"
