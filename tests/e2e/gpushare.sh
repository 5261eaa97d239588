#!/usr/bin/env bash
# GPU sharing through the daemon against a real kube-apiserver and kube-scheduler (E2E_KUBE:
# current, the default, or 1.20), on loopback, with the gpushare device plugin's protocol. There is
# no kubelet or device plugin: the assertions read what the plugin would read, the pods'
# annotations, and the daemon's per-device view.
#
# On a node of two 16 GiB GPUs (allocatable aliyun.com/gpu-mem 32, aliyun.com/gpu-count 2), GPU
# packing binpack (the default):
#   - two pods of 8 GiB land on one GPU, a third of 10 GiB on the other; each carries
#     ALIYUN_COM_GPU_MEM_IDX/POD/DEV/ASSIGNED/ASSUME_TIME as /bind wrote them before the Binding,
#     and a patch naming another uid is refused;
#   - without patch on pods in the daemon's ClusterRole a share pod is neither annotated nor bound,
#     and /readyz names the 403;
#   - a restarted daemon rebuilds the same per-device view from those annotations.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-gpushare
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"

suite_start_daemon

NODE=gs-1
cluster_add_gpu_node "$NODE" none --resource aliyun.com/gpu-mem=32 --resource aliyun.com/gpu-count=2
cluster_write_scheduler_config "$WORKDIR/scheduler.yaml" --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
  --node-cache-capable true --bind-verb bind --managed-resource aliyun.com/gpu-mem --ignored-by-scheduler false
cluster_start_scheduler "$WORKDIR/scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler.log"

# share_pod NAME GIB: a pod asking GIB GiB of one GPU.
share_pod() {
  K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  automountServiceAccountToken: false
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: {limits: {aliyun.com/gpu-mem: "$2"}}
EOF
}
annotation() { K get pod "$1" -o json | jq -r --arg k "$2" '.metadata.annotations[$k] // ""'; }
# The daemon's view of the node's GPUs: "<index>=<GiB shared>/<shares>" per device, and the device
# of each placed pod's share; empty while a reservation is still in flight.
device_view() {
  curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/$NODE" | jq -r 'select((.reservations | length) == 0) |
    [(.gpu_devices.devices[] | "\(.index)=\(.shared_bytes / 1073741824)/\(.shares)")] +
    [(.pods | sort_by(.pod)[] | "\(.pod)@\(.gpu_devices[0].index)")] | join(" ")'
}

step "three GPU share pods, 8, 8 and 10 GiB, on $NODE (two 16 GiB GPUs)"
start_ns="$(date +%s%N)"
for spec in gs-a:8 gs-b:8 gs-c:10; do
  pod="${spec%%:*}"
  share_pod "$pod" "${spec#*:}"
  on_node() { [[ "$(node_of "$pod")" == "$NODE" ]]; }
  wait_until 60 "$pod bound to $NODE" on_node
done
end_ns="$(date +%s%N)"

step "each pod carries the gpushare annotations"
declare -A idx
for spec in gs-a:8 gs-b:8 gs-c:10; do
  pod="${spec%%:*}"
  idx[$pod]="$(annotation "$pod" ALIYUN_COM_GPU_MEM_IDX)"
  [[ "${idx[$pod]}" =~ ^[01]$ ]] || fail "$pod: ALIYUN_COM_GPU_MEM_IDX is '${idx[$pod]}', want 0 or 1"
  [[ "$(annotation "$pod" ALIYUN_COM_GPU_MEM_POD)" == "${spec#*:}" ]] || fail "$pod: ALIYUN_COM_GPU_MEM_POD is not ${spec#*:}"
  [[ "$(annotation "$pod" ALIYUN_COM_GPU_MEM_DEV)" == 16 ]] || fail "$pod: ALIYUN_COM_GPU_MEM_DEV is not 16"
  [[ "$(annotation "$pod" ALIYUN_COM_GPU_MEM_ASSIGNED)" == false ]] || fail "$pod: ALIYUN_COM_GPU_MEM_ASSIGNED is not false"
  assumed="$(annotation "$pod" ALIYUN_COM_GPU_MEM_ASSUME_TIME)"
  [[ "$assumed" =~ ^[0-9]+$ ]] && ((assumed >= start_ns && assumed <= end_ns)) ||
    fail "$pod: ALIYUN_COM_GPU_MEM_ASSUME_TIME '$assumed' is not Unix nanoseconds of its bind"
done
[[ "${idx[gs-a]}" == "${idx[gs-b]}" ]] || fail "the 8 GiB pods are on GPUs ${idx[gs-a]} and ${idx[gs-b]}, want one GPU (binpack)"
[[ "${idx[gs-c]}" != "${idx[gs-a]}" ]] || fail "the 10 GiB pod is on GPU ${idx[gs-c]} with the 8 GiB pods"
step "gs-a and gs-b on GPU ${idx[gs-a]}, gs-c on GPU ${idx[gs-c]}"
# The patch names the pod's uid: the API server refuses it for another pod of the same name.
if cluster_api PATCH /api/v1/namespaces/default/pods/gs-a \
  '{"metadata":{"uid":"00000000-0000-0000-0000-000000000000","annotations":{"ALIYUN_COM_GPU_MEM_IDX":"1"}}}' >/dev/null 2>&1; then
  fail "a gpushare patch naming another uid was applied to gs-a"
fi
[[ "$(annotation gs-a ALIYUN_COM_GPU_MEM_IDX)" == "${idx[gs-a]}" ]] || fail "gs-a's index changed"

shared=(0/0 0/0)
shared[${idx[gs-a]}]=16/2
shared[${idx[gs-c]}]=10/1
want="0=${shared[0]} 1=${shared[1]} default/gs-a@${idx[gs-a]} default/gs-b@${idx[gs-b]} default/gs-c@${idx[gs-c]}"
read_back() { [[ "$(device_view)" == "$want" ]]; }
wait_until 30 "the daemon's per-device view '$want' (now '$(device_view)')" read_back

step "without patch on pods in its ClusterRole, the daemon binds no share pod and /readyz names the 403"
role="$(K get clusterrole scheduler-extender -o json | jq -c 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)')"
jq -c '(.rules[] | select(.verbs == ["patch"]) | .resources) -= ["pods"]' <<<"$role" | K replace -f - >/dev/null
share_pod gs-x 4
readyz() { curl -s "http://127.0.0.1:$DAEMON_ADMIN/readyz"; }
named() { [[ "$(readyz)" == *"patch pods is forbidden (HTTP 403)"* ]]; }
wait_until 30 "/readyz to name the refused pod patch (now '$(readyz)')" named
! scheduled gs-x || fail "gs-x was bound without its gpushare annotations"
[[ -z "$(annotation gs-x ALIYUN_COM_GPU_MEM_IDX)" ]] || fail "gs-x was annotated although the patch was refused"
K delete pod gs-x --grace-period=0 --force >/dev/null 2>&1
K replace -f - >/dev/null <<<"$role"
wait_until 10 "the daemon's per-device view unchanged" read_back

step "restart the daemon: the per-device view is rebuilt from the annotations"
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
echo "----- restart $(date -u +%T)" >>"$DAEMON_LOG"
suite_start_daemon
view="$(device_view)"
[[ "$view" == "$want" ]] || fail "after the restart the daemon shows '$view', want '$want'"

E2E_OK=1
step "GPU sharing passed"
