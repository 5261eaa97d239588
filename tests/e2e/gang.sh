#!/usr/bin/env bash
# Pod groups (gangs, KEP-4671) against a real kube-apiserver and kube-scheduler with the
# GenericWorkload gate on (beta, off by default: --feature-gates=GenericWorkload=true on both, and
# --runtime-config=scheduling.k8s.io/v1beta1=true on the API server). Current versions only.
#
# The daemon runs deploy/'s configuration as shipped (lib/shipped_config.py daemon) and
# kube-scheduler deploy/scheduler-config/default-scheduler.yaml pointed at it (both extender
# entries, lib/shipped_config.py scheduler): the recommended setup, unchanged. A gang is a PodGroup
# (spec.schedulingPolicy.gang.minCount = its size) and its pods (spec.schedulingGroup.podGroupName);
# two gangs are created interleaved (a-1, b-1, a-2, b-2, ...) so that kube-scheduler may take either
# first. kube-scheduler decides a whole gang before it publishes any of it: only the daemon's
# in-flight holds (docs/kubernetes.md, "Pod groups") keep an earlier member's volume or GPU share
# from being handed out again to a later one.
#
# Scenarios, each on nodes of its own (deleted at its end):
#   G  GPUs: two gangs of 4 pods x 2 GPUs onto 2 nodes of 4 GPUs.
#   V  volumes, E2E_GANG_RUNS times (default 3; the overbooking it guards against is a race): two
#      gangs of 4 pods, each with 1 GPU and a 40Gi claim of a WaitForFirstConsumer class whose
#      driver publishes CSIStorageCapacity (100Gi per node; lib/csi_provisioner.py plays the driver
#      and external-provisioner), onto 2 nodes of 8 GPUs: 2 claims fit a pool, one gang fits.
#   C  csi-baremetal drives: two gangs of 4 pods, each with 1 GPU and a 50Gi claim of csi-baremetal's
#      csi-baremetal-sc-nvme class (a whole NVMe drive), onto 2 nodes of two 100Gi NVMe drives
#      published as csi-baremetal does (lib/baremetal_objects.sh; lib/baremetal_controller.py plays
#      its CreateVolume and DeleteVolume): one gang fits, and no drive is handed to two claims.
#   S  GPU shares: two gangs of 4 pods x 9 GiB of GPU memory (aliyun.com/gpu-mem) onto 2 nodes of
#      two 16 GiB GPUs: a GPU holds one such share, so one gang fits, one member per GPU, although
#      kube-scheduler's own count (32 GiB a node) would take 3 on a node.
#   N  a gang that cannot fit: 3 pods with a 60Gi claim each onto 2 nodes of 100Gi: it is never
#      bound in part, and once kube-scheduler has given up, nothing of it stays held: a pod outside
#      the gang that needs a whole pool binds.
# In G, V and S: each gang is bound whole or not at all, exactly one gang is bound, no node holds
# more GPUs (G), no pool more selected or provisioned bytes (V), no drive to two claims (C), no GPU
# more shared memory (S) than it has; then the bound gang is deleted and the other binds whole (the time it took is a RESULT).
# Every expectation is checked (expect) and the suite fails at its end if any did not hold.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-gang
if [[ "${E2E_KUBE:-current}" != current ]]; then
  printf '[%s] skipped on E2E_KUBE=%s: pod groups need Kubernetes 1.37\n[%s] PASS\n' "$SUITE_TAG" "$E2E_KUBE" "$SUITE_TAG" >&2
  exit 0
fi
export CLUSTER_APISERVER_EXTRA_ARGS="--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true"
export CLUSTER_SCHEDULER_ARGS="--feature-gates=GenericWorkload=true"
# A gang refused once waits at most this long in the unschedulable queue (5 min by default).
export CLUSTER_POD_MAX_UNSCHEDULABLE="${CLUSTER_POD_MAX_UNSCHEDULABLE-15s}"
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"
# shellcheck source=lib/baremetal_objects.sh
source "$HERE/lib/baremetal_objects.sh"

GIB=1073741824
RUNS="${E2E_GANG_RUNS:-3}"
DRIVER=csi.e2e.scheduler-extender.io
SETTLE_QUIET=6 # seconds without a change before a burst counts as settled

K get --raw /apis/scheduling.k8s.io/v1beta1 | jq -e '.resources[] | select(.name == "podgroups")' >/dev/null ||
  fail "the API server does not serve scheduling.k8s.io/v1beta1 podgroups"

bm_install_kinds # before the daemon starts: it looks for csi-baremetal's kinds once
python3 "$SUITE_LIB/shipped_config.py" daemon "$WORKDIR/daemon.yaml"
suite_start_daemon --config "$WORKDIR/daemon.yaml"
python3 "$SUITE_LIB/shipped_config.py" scheduler "$WORKDIR/scheduler.yaml" "127.0.0.1:$DAEMON_PORT" \
  "$SCHEDULER_KUBECONFIG" "$(cluster_free_ports 1)"
cluster_start_scheduler "$WORKDIR/scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler.log"
step "kube-scheduler runs deploy/scheduler-config/default-scheduler.yaml: $WORKDIR/scheduler.yaml"

python3 "$SUITE_LIB/csi_provisioner.py" --drivers "$DRIVER" --delay 2 --report "$WORKDIR/pools.json" \
  >>"$CLUSTER_LOG_DIR/csi-provisioner.log" 2>&1 &
cluster_register_pid $! csi-provisioner
python3 "$SUITE_LIB/baremetal_controller.py" --report "$WORKDIR/controller.json" \
  >>"$CLUSTER_LOG_DIR/baremetal-controller.log" 2>&1 &
cluster_register_pid $! baremetal-controller
K apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $DRIVER}
spec: {attachRequired: false, podInfoOnMount: false, storageCapacity: true, volumeLifecycleModes: [Persistent]}
EOF

POOL_GIB=100
# shellcheck source=lib/csi_pools.sh
source "$SUITE_LIB/csi_pools.sh"

# gang_manifest GANG SIZE RESOURCES [CLASS CLAIM]: the PodGroup GANG (gang, minCount SIZE); then
# gang_member prints member I (label e2e-gang=GANG) with RESOURCES, and with CLASS a claim of CLAIM.
podgroup_manifest() {
  cat <<EOF
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: $1, namespace: default, labels: {e2e-gang: $1}}
spec: {schedulingPolicy: {gang: {minCount: $2}}}
EOF
}
gang_member() {
  local gang="$1" i="$2" resources="$3" cls="${4:-}" claim="${5:-}" name="$1-$2"
  if [[ -n "$cls" ]]; then
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $name-data, namespace: default, labels: {e2e-gang: $gang}}
spec: {storageClassName: $cls, accessModes: [ReadWriteOnce], resources: {requests: {storage: $claim}}}
EOF
  fi
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: {e2e-gang: $gang}}
spec:
  schedulingGroup: {podGroupName: $gang}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: $resources
EOF
  [[ -z "$cls" ]] || printf '  volumes:\n  - {name: data, persistentVolumeClaim: {claimName: %s-data}}\n' "$name"
}
# two_gangs A B SIZE RESOURCES [CLASS CLAIM]: both gangs' PodGroups, then their members interleaved,
# in one kubectl call.
two_gangs() {
  local a="$1" b="$2" size="$3" i
  shift 3
  {
    podgroup_manifest "$a" "$size"
    podgroup_manifest "$b" "$size"
    for ((i = 1; i <= size; i++)); do
      gang_member "$a" "$i" "$@"
      gang_member "$b" "$i" "$@"
    done
  } | K create -f - >/dev/null
}

bound_of() { K get pods -l "e2e-gang=$1" -o json | jq '[.items[] | select(.spec.nodeName)] | length'; }
# settled GANG...: the gangs' bound counts ("a:N b:M"), once unchanged for SETTLE_QUIET s.
SETTLED=""
settle() {
  local deadline=$((SECONDS + $1)) last="" since=$SECONDS sig g
  shift
  while :; do
    sig=""
    for g in "$@"; do sig+="$g:$(bound_of "$g") "; done
    if [[ "$sig" != "$last" ]]; then
      last="$sig"
      since=$SECONDS
    fi
    if [[ "$sig" != *":0 "*":0 " ]] && ((SECONDS - since >= SETTLE_QUIET)); then break; fi
    ((SECONDS < deadline)) || break
    sleep 0.5
  done
  SETTLED="${last% }"
}
# one_gang_whole SIZE A B: exactly one of the gangs is bound, whole; the other not at all. Sets
# PLACED and WAITING.
one_gang_whole() {
  local size="$1" na nb
  na="$(bound_of "$2")" nb="$(bound_of "$3")"
  PLACED="" WAITING=""
  if ((na == size && nb == 0)); then PLACED="$2" WAITING="$3"; fi
  if ((nb == size && na == 0)); then PLACED="$3" WAITING="$2"; fi
  [[ -n "$PLACED" ]]
}
# gpus_over PREFIX: nodes PREFIX-* whose bound pods ask more nvidia.com/gpu than the node has.
gpus_over() {
  local pods nodes
  pods="$(K get pods -o json)" nodes="$(K get nodes -o json)"
  jq -rn --arg p "$1-" --argjson pods "$pods" --argjson nodes "$nodes" '
    [$nodes.items[] | select(.metadata.name | startswith($p)) | .metadata.name as $n |
     (.status.allocatable["nvidia.com/gpu"] // "0" | tonumber) as $have |
     ([$pods.items[] | select(.spec.nodeName == $n) | .spec.containers[].resources.limits["nvidia.com/gpu"] // "0" | tonumber] | add // 0) as $used |
     select($used > $have) | "\($n) \($used)/\($have)"] | join(", ")'
}
# pools_over CLASS: pools of CLASS with more bytes of claims selected onto them, or more
# provisioned, than their size.
pools_over() {
  local claims
  claims="$(K get pvc -o json)"
  jq -r --arg c "$1" --argjson claims "$claims" --argjson g "$GIB" '
    ([$claims.items[] | select(.spec.storageClassName == $c) |
      {node: (.metadata.annotations["volume.kubernetes.io/selected-node"] // ""), gib: (.spec.resources.requests.storage | rtrimstr("Gi") | tonumber)} |
      select(.node != "")] | group_by(.node) | map({key: .[0].node, value: (map(.gib) | add)}) | from_entries) as $selected |
    [.[] | select(.class == $c) | select(.provisioned > .size or ($selected[.node] // 0) * $g > .size) |
     "\(.node) selected \($selected[.node] // 0)Gi provisioned \(.provisioned / $g)Gi of \(.size / $g)Gi"] | join(", ")' \
    "$WORKDIR/pools.json"
}
pools_line() {
  jq -r --arg c "$1" --argjson g "$GIB" '[.[] | select(.class == $c) | "\(.node) \(.provisioned / $g)/\(.size / $g)Gi"] | sort | join(", ")' \
    "$WORKDIR/pools.json"
}
# delete_gang GANG: its pods, claims (their volumes go with them) and PodGroup. No
# kube-controller-manager runs: the claims' protection finalizer is taken off as its controller
# does once no pod uses them.
delete_gang() {
  local c
  K delete pods -l "e2e-gang=$1" --grace-period=0 --force >/dev/null 2>&1
  K delete pvc,podgroups -l "e2e-gang=$1" --wait=false >/dev/null 2>&1
  for c in $(K get pvc -l "e2e-gang=$1" -o name); do
    K patch "$c" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
}
# end_scenario PREFIX COUNT GANG...: the gangs and the nodes PREFIX-1..COUNT go.
end_scenario() {
  local prefix="$1" count="$2" i g
  shift 2
  for g in "$@"; do delete_gang "$g"; done
  for ((i = 1; i <= count; i++)); do K delete node "$prefix-$i" >/dev/null; done
}
# the_other_binds SIZE LABEL [CHECK]: PLACED is deleted; WAITING must then bind whole (and CHECK
# hold after it) within 90 s.
the_other_binds() {
  local size="$1" label="$2" t=$SECONDS
  delete_gang "$PLACED"
  whole() { [[ "$(bound_of "$WAITING")" == "$size" ]]; }
  if poll_until 90 whole; then
    result "$label: gang $WAITING bound whole $((SECONDS - t)) s after gang $PLACED was deleted"
  else
    expect false "$label: gang $WAITING has $(bound_of "$WAITING") of $size bound 90 s after gang $PLACED was deleted"
  fi
}

##### G: GPU gangs.
step "scenario G: two gangs of 4 pods x 2 GPUs onto 2 nodes of 4 GPUs"
cluster_add_gpu_node g-1 4
cluster_add_gpu_node g-2 4
two_gangs ga gb 4 '{limits: {nvidia.com/gpu: "2"}}'
settle 60 ga gb
result "G: bound per gang: $SETTLED"
expect 'one_gang_whole 4 ga gb' "G: want one gang bound whole and the other not at all, got $SETTLED"
over="$(gpus_over g)"
expect '[[ -z "$over" ]]' "G: nodes over their GPUs: $over"
[[ -z "$PLACED" ]] || the_other_binds 4 G
end_scenario g 2 ga gb

##### V: gangs with CSIStorageCapacity claims, repeated.
placed_runs=0
for ((run = 1; run <= RUNS; run++)); do
  cls="gv$run"
  step "scenario V, run $run of $RUNS: two gangs of 4 pods x (1 GPU, one 40Gi claim) onto 2 nodes of ${POOL_GIB}Gi"
  csi_class "$cls"
  csi_nodes "$cls" "$cls" 2 8
  two_gangs "$cls-a" "$cls-b" 4 '{limits: {nvidia.com/gpu: "1"}}' "$cls" 40Gi
  settle 90 "$cls-a" "$cls-b"
  sleep 1 # the provisioner's report of its last pass
  over="$(pools_over "$cls")"
  result "V run $run: bound per gang: $SETTLED; pools: $(pools_line "$cls")"
  expect '[[ -z "$over" ]]' "V run $run: pools over their capacity: $over"
  if one_gang_whole 4 "$cls-a" "$cls-b"; then
    placed_runs=$((placed_runs + 1))
    the_other_binds 4 "V run $run"
    sleep 1
    over="$(pools_over "$cls")"
    expect '[[ -z "$over" ]]' "V run $run: after the other gang bound, pools over their capacity: $over"
  else
    expect false "V run $run: want one gang bound whole and the other not at all, got $SETTLED"
  fi
  end_scenario "$cls" 2 "$cls-a" "$cls-b"
done
result "V: exactly one gang placed, no pool over capacity, in $placed_runs of $RUNS runs"

##### C: gangs with csi-baremetal claims.
step "scenario C: two gangs of 4 pods x (1 GPU, one 50Gi csi-baremetal-sc-nvme claim) onto 2 nodes of two 100Gi NVMe drives"
bm_node gc-1 NVME:100 NVME:100
bm_node gc-2 NVME:100 NVME:100
two_gangs gc-a gc-b 4 '{limits: {nvidia.com/gpu: "1"}}' csi-baremetal-sc-nvme 50Gi
settle 90 gc-a gc-b
sleep 1 # the controller's report of its last pass
# drives_twice: drives csi-baremetal's CreateVolume found already taken, or handed to two claims.
drives_twice() {
  jq -r '([.taken[] | select(.type == "NVME") | .ac] | group_by(.) | map(select(length > 1) | .[0])) as $twice |
    ($twice + [.drive_reused[].ac] | unique | join(" "))' "$WORKDIR/controller.json"
}
twice="$(drives_twice)"
result "C: bound per gang: $SETTLED; NVMe drives taken: $(jq '[.taken[] | select(.type == "NVME")] | length' "$WORKDIR/controller.json"); claims refused by CreateVolume: $(jq '.exhausted | length' "$WORKDIR/controller.json")"
expect 'one_gang_whole 4 gc-a gc-b' "C: want one gang bound whole and the other not at all, got $SETTLED"
expect '[[ -z "$twice" ]]' "C: drives handed to two claims: $twice"
if [[ -n "$PLACED" ]]; then
  the_other_binds 4 C
  sleep 1
  reused="$(jq -r '[.drive_reused[].ac] | unique | join(" ")' "$WORKDIR/controller.json")"
  expect '[[ -z "$reused" ]]' "C: after the other gang bound, drives CreateVolume found taken: $reused"
fi
end_scenario gc 2 gc-a gc-b

##### S: gangs of GPU shares.
step "scenario S: two gangs of 4 pods x 9 GiB of GPU memory onto 2 nodes of two 16 GiB GPUs"
for n in s-1 s-2; do cluster_add_gpu_node "$n" none --resource aliyun.com/gpu-mem=32 --resource aliyun.com/gpu-count=2; done
two_gangs sa sb 4 '{limits: {aliyun.com/gpu-mem: "9"}}'
settle 60 sa sb
result "S: bound per gang: $SETTLED"
expect 'one_gang_whole 4 sa sb' "S: want one gang bound whole and the other not at all, got $SETTLED"
# shares_per_gpu: "node/index=GiB" for every GPU that bound pods share, from their gpushare annotations.
shares_per_gpu() {
  K get pods -o json | jq -r '[.items[] | select(.spec.nodeName and .metadata.annotations.ALIYUN_COM_GPU_MEM_IDX) |
    {gpu: "\(.spec.nodeName)/\(.metadata.annotations.ALIYUN_COM_GPU_MEM_IDX)", gib: (.metadata.annotations.ALIYUN_COM_GPU_MEM_POD | tonumber)}] |
    group_by(.gpu) | map("\(.[0].gpu)=\(map(.gib) | add)") | join(" ")'
}
shares="$(shares_per_gpu)"
result "S: GiB shared per GPU: $shares"
expect '[[ "$shares" != *"=18"* && "$shares" != *"=27"* && "$shares" != *"=36"* ]]' "S: a GPU holds more than its 16 GiB: $shares"
if [[ -n "$PLACED" ]]; then
  the_other_binds 4 S
  shares="$(shares_per_gpu)"
  expect '[[ "$shares" != *"=18"* && "$shares" != *"=27"* && "$shares" != *"=36"* ]]' "S: after the other gang bound, a GPU holds more than its 16 GiB: $shares"
fi
end_scenario s 2 sa sb

##### N: a gang that cannot fit.
step "scenario N: a gang of 3 pods x (1 GPU, one 60Gi claim) onto 2 nodes of ${POOL_GIB}Gi: it cannot fit"
csi_class gn
csi_nodes gn gn 2 8
{
  podgroup_manifest gn-x 3
  for i in 1 2 3; do gang_member gn-x "$i" '{limits: {nvidia.com/gpu: "1"}}' gn 60Gi; done
} | K create -f - >/dev/null
refused() { [[ -n "$(K get events --field-selector reason=FailedScheduling -o json | jq -r '.items[] | select(.involvedObject.name | startswith("gn-x-")) | .metadata.name' | head -1)" ]]; }
wait_until 60 "kube-scheduler to refuse the gang gn-x" refused
t=$SECONDS
held() { curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/groups" | jq '[.groups[] | select(.group == "default/gn-x") | .held[]] | length'; }
nothing_held() { [[ "$(held)" == 0 ]]; }
if poll_until 45 nothing_held; then
  result "N: nothing of the refused gang held $((SECONDS - t)) s after its first refusal"
else
  expect false "N: the refused gang still holds $(held) member(s) 45 s after its first refusal"
fi
# A pod outside the gang that needs a whole pool binds (a hold left behind would refuse it).
gang_member gn-solo 1 '{limits: {nvidia.com/gpu: "1"}}' gn 100Gi | sed '/schedulingGroup/d' | K create -f - >/dev/null
solo_bound() { [[ "$(bound_of gn-solo)" == 1 ]]; }
poll_until 60 solo_bound || expect false "N: a pod needing a whole ${POOL_GIB}Gi pool did not bind beside the refused gang"
sleep 2
expect '[[ "$(bound_of gn-x)" == 0 ]]' "N: $(bound_of gn-x) member(s) of the gang that cannot fit were bound"
over="$(pools_over gn)"
expect '[[ -z "$over" ]]' "N: pools over their capacity: $over"
end_scenario gn 2 gn-x gn-solo

if ((${#FAILURES[@]})); then
  fail "${#FAILURES[@]} expectation(s) did not hold: ${FAILURES[*]}"
fi
E2E_OK=1
step "[e2e-gang] PASS"
