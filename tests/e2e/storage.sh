#!/usr/bin/env bash
# Local volumes whose capacity a CSI driver publishes, against a real kube-apiserver and
# kube-scheduler (current versions; v1.20 has no storage.k8s.io/v1 CSIStorageCapacity: skipped).
# No kubelet and no driver: lib/csi_provisioner.py plays a CSI driver with storage capacity
# tracking and its external-provisioner. A claim the scheduler selected a node for gets a volume
# there at once (the driver never refuses: an overcommitted pool shows as provisioned bytes over
# its size), and the lowered free space is republished only $DELAY s later, as external-provisioner
# does after its next poll. Objects: CSIDriver csi.e2e.scheduler-extender.io (storageCapacity:
# true), one WaitForFirstConsumer class of it per scenario, one CSIStorageCapacity per node and
# class (nodeTopology kubernetes.io/hostname); for TopoLVM a class of topolvm.io with
# topolvm.io/device-class and the nodes' capacity.topolvm.io/<device class> annotations.
#
# Each burst: 16 one-GPU pods, each with two 20Gi claims, onto 4 nodes of 8 GPUs whose pools hold
# 100Gi: two pods fit a node (80Gi), a third does not (120Gi), though each of its claims alone
# fits the 100Gi (or, once republished, 20Gi) the driver publishes. 8 pods fit.
#
# Scenarios (results as RESULT lines and in $WORKDIR/results.txt):
#   B  the scheduler alone (no extender): measured, not asserted: pools over their capacity, pods
#      bound, pods bound in their first scheduling cycle.
#   A  the daemon (GPU extender entry with filter and bind): no pool over capacity, every pod that
#      fits bound, the same figures; the daemon's free space per pool agrees with the driver's.
#   S  the same pods one at a time (2 nodes, 4 of 6 fit), with the daemon: none over, the 4 that
#      fit bound in their first cycle, the others refused with the daemon's pool reason.
#   T  TopoLVM's node annotation as the source (3 nodes, 6 of 10 pods fit): none over, 6 bound.
#   R  the daemon killed -9 mid-burst and restarted on the same ports: no pool over capacity, and
#      the restarted daemon counts every volume the driver holds.
#   V volume-only pods (no GPU) through the every-pod entry (filter-unmanaged), as the chart
#     configures kube-scheduler by default; then, the daemon killed, a pod without managed claims
#     still schedules.
#   L pre-provisioned local PersistentVolumes (local-static-provisioner's kind) with
#     kube-controller-manager's PersistentVolume binder: the pods that fit bound, each claim on a
#     volume of its pod's node, the daemon counting the volumes taken whole.
# Every expectation is checked (expect) and the suite fails at its end if any did not hold.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-storage
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"

if ((CLUSTER_KUBE_MINOR < 24)); then
  step "skipped on $CLUSTER_KUBE_VERSION: storage.k8s.io/v1 CSIStorageCapacity needs Kubernetes 1.24 or later"
  E2E_OK=1
  step "[e2e-storage] PASS"
  exit 0
fi

DRIVER=csi.e2e.scheduler-extender.io
DELAY=3         # seconds from a volume's creation to the republished figure
GIB=1073741824
POOL_GIB=100    # each node's pool
CLAIM=20Gi      # each of a pod's two claims
NODES=4
PODS=16
FIT=$((NODES * (POOL_GIB / 40)))
POD_RESOURCES='{limits: {nvidia.com/gpu: "1"}}'  # each burst pod's; scenario V asks no GPU

# Expectations (lib/suite.sh's expect) are recorded and the suite goes on, so every scenario's
# figures are printed; it fails at its end when any was recorded.
suite_start_daemon

python3 "$SUITE_LIB/csi_provisioner.py" --drivers "$DRIVER,topolvm.io" --delay "$DELAY" \
  --report "$WORKDIR/pools.json" >>"$CLUSTER_LOG_DIR/csi-provisioner.log" 2>&1 &
cluster_register_pid $! csi-provisioner
step "provisioner log: $CLUSTER_LOG_DIR/csi-provisioner.log"

K apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $DRIVER}
spec: {attachRequired: false, podInfoOnMount: false, storageCapacity: true, volumeLifecycleModes: [Persistent]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: topolvm.io}
spec: {attachRequired: false, podInfoOnMount: false, storageCapacity: false, volumeLifecycleModes: [Persistent]}
EOF

# shellcheck source=lib/csi_pools.sh
source "$SUITE_LIB/csi_pools.sh"

# burst_manifest PREFIX FROM TO CLASS: one-GPU pods PREFIX-NN for NN in FROM..TO (label
# e2e-burst=PREFIX), each with two claims of CLAIM of CLASS; all claims first, then the pods.
burst_manifest() {
  local prefix="$1" from="$2" to="$3" cls="$4" i c name
  for ((i = from; i <= to; i++)); do
    name="$(printf '%s-%02d' "$prefix" "$i")"
    for c in a b; do
      cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $name-$c, namespace: default, labels: {e2e-burst: $prefix}}
spec: {storageClassName: $cls, accessModes: [ReadWriteOnce], resources: {requests: {storage: $CLAIM}}}
EOF
    done
  done
  for ((i = from; i <= to; i++)); do
    name="$(printf '%s-%02d' "$prefix" "$i")"
    cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: {e2e-burst: $prefix}}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: $POD_RESOURCES
  volumes:
  - {name: a, persistentVolumeClaim: {claimName: $name-a}}
  - {name: b, persistentVolumeClaim: {claimName: $name-b}}
EOF
  done
}
# burst PREFIX COUNT CLASS: COUNT such pods, created in one kubectl call.
burst() { burst_manifest "$1" 1 "$2" "$3" | K create -f - >/dev/null; }

bound_count() { K get pods -l "e2e-burst=$1" -o json | jq '[.items[] | select(.spec.nodeName)] | length'; }
# Claims of the burst the scheduler selected a node for that have no volume yet.
unprovisioned() {
  K get pvc -l "e2e-burst=$1" -o json |
    jq '[.items[] | select(.metadata.annotations["volume.kubernetes.io/selected-node"] and (.spec.volumeName // "") == "")] | length'
}
volumes_of() { jq --arg c "$1" '[.[] | select(.class == $c) | .volumes] | add // 0' "$WORKDIR/pools.json"; }
# over_pools CLASS: the pools of CLASS whose provisioned volumes exceed their size.
over_pools() { jq --arg c "$1" '[.[] | select(.class == $c and .provisioned > .size)] | length' "$WORKDIR/pools.json"; }
pools_line() {
  jq -r --arg c "$1" --argjson g "$GIB" '[.[] | select(.class == $c) | "\(.node) \(.provisioned / $g)/\(.size / $g)Gi"] | sort | join(", ")' \
    "$WORKDIR/pools.json"
}
# first_cycle PREFIX: pods of the burst bound without any FailedScheduling event.
first_cycle() {
  local refused
  refused="$(K get events -o json | jq -c '[.items[] | select(.reason == "FailedScheduling") | .involvedObject.name] | unique')"
  K get pods -l "e2e-burst=$1" -o json |
    jq --argjson r "$refused" '[.items[] | select(.spec.nodeName) | select(.metadata.name as $n | $r | index($n) | not)] | length'
}

# settle PREFIX CLASS TIMEOUT [MIN_BOUND]: wait until at least MIN_BOUND pods are bound, no selected
# claim waits for its volume, and neither changed for QUIET s (longer than the republish delay,
# so pods the republished figures let through are counted too).
QUIET=$((DELAY + 3))
settle() {
  local prefix="$1" cls="$2" deadline=$((SECONDS + $3)) min="${4:-0}" sig last="" since=$SECONDS b
  while :; do
    b="$(bound_count "$prefix")"
    sig="$b $(unprovisioned "$prefix") $(volumes_of "$cls")"
    if [[ "$sig" != "$last" ]]; then
      last="$sig"
      since=$SECONDS
    fi
    if ((b >= min)) && [[ "$sig" == "$b 0 "* ]] && ((SECONDS - since >= QUIET)); then return 0; fi
    ((SECONDS < deadline)) || fail "burst $prefix did not settle within $3s (bound, unprovisioned, volumes: $sig; want >= $min bound)"
    sleep 0.5
  done
}

# measure LABEL PREFIX CLASS POD_COUNT: RESULT lines for a settled burst; sets OVER and BOUND.
measure() {
  local label="$1" prefix="$2" cls="$3" count="$4" first
  sleep 0.5 # the provisioner's report of the last pass
  OVER="$(over_pools "$cls")"
  BOUND="$(bound_count "$prefix")"
  first="$(first_cycle "$prefix")"
  result "$label: pools over their published capacity: $OVER of $(jq --arg c "$cls" '[.[] | select(.class == $c)] | length' "$WORKDIR/pools.json") ($(pools_line "$cls"))"
  result "$label: pods bound: $BOUND of $count ($FIT fit); bound in their first scheduling cycle: $first"
}

# daemon_pool NODE POOL FIELD: a field of the pool in the daemon's /debug/nodes/NODE.
daemon_pool() {
  curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/$1" | jq -r --arg p "$2" --arg f "$3" '.pools[] | select(.name == $p) | .[$f]'
}
# daemon_free_gib NODE POOL: the free space the daemon decided on for the pool, in GiB.
daemon_free_gib() {
  local free
  free="$(daemon_pool "$1" "$2" free_bytes)"
  [[ -n "$free" ]] && echo $((free / GIB))
}

# end_burst PREFIX NODE_PREFIX NODE_COUNT: the burst's pods and nodes go (its claims and volumes stay).
end_burst() {
  local i
  K delete pods -l "e2e-burst=$1" --grace-period=0 --force >/dev/null 2>&1
  for ((i = 1; i <= $3; i++)); do K delete node "$2-$i" >/dev/null; done
}

##### B: the scheduler alone.
cluster_write_scheduler_config "$WORKDIR/scheduler-alone.yaml"
cluster_start_scheduler "$WORKDIR/scheduler-alone.yaml" "$CLUSTER_LOG_DIR/kube-scheduler-alone.log"
csi_class alone
csi_nodes alone alone
step "scenario B: the scheduler alone: $PODS pods x 2 x $CLAIM onto $NODES nodes of ${POOL_GIB}Gi ($FIT fit)"
burst b "$PODS" alone
settle b alone 60 1
measure "scheduler alone" b alone "$PODS"
end_burst b alone "$NODES"
cluster_stop_scheduler

##### A: the daemon.
cluster_write_scheduler_config "$WORKDIR/scheduler.yaml" --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
  --node-cache-capable true --bind-verb bind --ignored-by-scheduler false
cluster_start_scheduler "$WORKDIR/scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler.log"
csi_class daemon
csi_nodes daemon daemon
step "scenario A: the daemon: $PODS pods x 2 x $CLAIM onto $NODES nodes of ${POOL_GIB}Gi ($FIT fit)"
burst a "$PODS" daemon
settle a daemon 60 "$FIT"
measure "with the daemon" a daemon "$PODS"
expect '((OVER == 0))' "A: with the daemon $OVER pool(s) are over their capacity: $(pools_line daemon)"
expect '((BOUND == FIT))' "A: with the daemon $BOUND pods are bound, want the $FIT that fit"
# The daemon's free space per pool is the driver's truth once the republished figures reflect
# every volume: 100Gi - 2 pods x 40Gi.
agrees() {
  local i f
  for ((i = 1; i <= NODES; i++)); do
    f="$(daemon_free_gib "daemon-$i" daemon)"
    [[ "$f" == $((POOL_GIB - 80)) ]] || return 1
  done
}
((OVER > 0)) || wait_until 20 "the daemon's free space on each daemon-* pool to be $((POOL_GIB - 80))Gi" agrees
end_burst a daemon "$NODES"

##### S: the same pods one at a time, with the daemon: the accounting rule without a race.
SEQ_NODES=2
SEQ_PODS=6
seq_fit=$((SEQ_NODES * 2))
csi_class seq
csi_nodes seq seq "$SEQ_NODES"
step "scenario S: $SEQ_PODS pods x 2 x $CLAIM one at a time onto $SEQ_NODES nodes of ${POOL_GIB}Gi ($seq_fit fit)"
refused() { [[ -n "$(K get events --field-selector "involvedObject.name=$1,reason=FailedScheduling" -o name)" ]]; }
decided() { scheduled "$1" || refused "$1"; }
for ((i = 1; i <= SEQ_PODS; i++)); do
  burst_manifest s "$i" "$i" seq | K create -f - >/dev/null
  wait_until 30 "s-0$i bound or refused" decided "s-0$i"
done
settle s seq 30 "$seq_fit"
FIT=$seq_fit measure "one at a time, with the daemon" s seq "$SEQ_PODS"
expect '((OVER == 0))' "S: $OVER pool(s) over their capacity: $(pools_line seq)"
expect '((BOUND == seq_fit))' "S: $BOUND pods bound, want the $seq_fit that fit"
expect '(($(first_cycle s) == BOUND))' "S: only $(first_cycle s) of the $BOUND bound pods were bound in their first scheduling cycle"
reason="$(K get events --field-selector "involvedObject.name=s-0$SEQ_PODS,reason=FailedScheduling" -o jsonpath='{.items[0].message}')"
expect '[[ "$reason" == *"pool seq: pod needs 40 GiB"* ]]' "S: s-0$SEQ_PODS was refused with '$reason', not the daemon's pool reason"
agrees_seq() { [[ "$(daemon_free_gib seq-1 seq)" == $((POOL_GIB - 80)) && "$(daemon_free_gib seq-2 seq)" == $((POOL_GIB - 80)) ]]; }
((OVER > 0)) || wait_until 20 "the daemon's free space on seq-1 and seq-2 to be $((POOL_GIB - 80))Gi" agrees_seq
source_seq="$(daemon_pool seq-1 seq source)"
expect '[[ "$source_seq" == "CSIStorageCapacity kube-system/seq-seq-1" ]]' "S: the daemon's source for seq-1's pool is '$source_seq'"
end_burst s seq "$SEQ_NODES"

##### V: volume-only pods (reserved).
# scenario_volume_only_burst: the same burst with pods that ask no GPU, only their two claims,
# with kube-scheduler configured as the chart renders it by default: the GPU entry, and the
# every-pod entry (no managedResources, filter-unmanaged and prioritize-unmanaged, ignorable).
# Then, with the daemon stopped, a pod without managed claims still schedules.
scenario_volume_only_burst() {
  local file="$WORKDIR/scheduler-every-pod.yaml" url="http://127.0.0.1:$DAEMON_PORT/scheduler" t
  cluster_stop_scheduler
  cluster_write_scheduler_config "$file" --extender-url "$url" --node-cache-capable true --bind-verb bind \
    --managed-resource nvidia.com/gpu --ignored-by-scheduler false
  cluster_append_every_pod_entry "$file" "$url"
  cluster_start_scheduler "$file" "$CLUSTER_LOG_DIR/kube-scheduler-every-pod.log"
  csi_class volonly
  csi_nodes vol volonly
  step "scenario V: volume-only pods through the every-pod entry: $PODS pods x 2 x $CLAIM, no GPU, onto $NODES nodes of ${POOL_GIB}Gi ($FIT fit)"
  POD_RESOURCES='{requests: {cpu: 10m}}' burst v "$PODS" volonly
  settle v volonly 60 "$FIT"
  measure "volume-only pods, with the daemon (every-pod entry)" v volonly "$PODS"
  expect '((OVER == 0))' "V: volume-only pods put $OVER pool(s) over their capacity: $(pools_line volonly)"
  expect '((BOUND == FIT))' "V: $BOUND volume-only pods bound, want the $FIT that fit"
  expect 'grep -q "filter-unmanaged default/v-01" "$DAEMON_LOG"' "V: the daemon's log shows no filter-unmanaged of default/v-01"

  step "scenario V: the daemon killed; a pod without managed claims must still schedule"
  kill -KILL "$DAEMON_PID"
  wait "$DAEMON_PID" 2>/dev/null || true
  echo "----- killed -9 with the every-pod entry configured $(date -u +%T)" >>"$DAEMON_LOG"
  t=$SECONDS
  K create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: plain-while-down, namespace: default}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers: [{name: main, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 10m}}}]
EOF
  wait_until 30 "plain-while-down bound with the daemon down" scheduled plain-while-down
  result "daemon down, every-pod entry configured: a pod without managed claims bound after $((SECONDS - t))s"
  K delete pod plain-while-down --grace-period=0 --force >/dev/null 2>&1
  suite_run_daemon
  end_burst v vol "$NODES"
}
scenario_volume_only_burst

##### T: TopoLVM's node annotation.
TOPO_NODES=3
TOPO_PODS=10
K apply -f - >/dev/null <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: topolvm-ssd}
provisioner: topolvm.io
parameters: {topolvm.io/device-class: ssd}
volumeBindingMode: WaitForFirstConsumer
EOF
for ((i = 1; i <= TOPO_NODES; i++)); do
  cluster_add_gpu_node "topo-$i" 8 -a "capacity.topolvm.io/ssd=$((POOL_GIB * GIB))" \
    -a "e2e.scheduler-extender.io/size.ssd=$((POOL_GIB * GIB))"
done
topo_fit=$((TOPO_NODES * 2))
step "scenario T: TopoLVM's annotation: $TOPO_PODS pods x 2 x $CLAIM onto $TOPO_NODES nodes of ${POOL_GIB}Gi ($topo_fit fit)"
burst t "$TOPO_PODS" topolvm-ssd
settle t topolvm-ssd 60 "$topo_fit"
FIT=$topo_fit measure "TopoLVM annotation, with the daemon" t topolvm-ssd "$TOPO_PODS"
expect '((OVER == 0))' "T: $OVER TopoLVM pool(s) over their capacity: $(pools_line topolvm-ssd)"
expect '((BOUND == topo_fit))' "T: $BOUND pods bound, want the $topo_fit that fit"
annotated() { [[ "$(K get node topo-1 -o jsonpath='{.metadata.annotations.capacity\.topolvm\.io/ssd}')" == $(((POOL_GIB - 80) * GIB)) ]]; }
((OVER > 0)) || wait_until 10 "topo-1's capacity.topolvm.io/ssd republished as $((POOL_GIB - 80))Gi" annotated
source_topo="$(daemon_pool topo-1 topolvm-ssd source)"
expect '[[ "$source_topo" == "annotation capacity.topolvm.io/ssd" ]]' "T: the daemon's source for topo-1's pool is '$source_topo'"
end_burst t topo "$TOPO_NODES"

##### R: a daemon restart mid-burst.
csi_class restart
csi_nodes restart restart
step "scenario R: $PODS pods x 2 x $CLAIM onto $NODES nodes of ${POOL_GIB}Gi; the daemon is killed -9 after the first binds and restarted"
t0=$SECONDS
burst r "$PODS" restart
some_bound() { (($(bound_count r) >= 2)); }
wait_until 30 "two pods of the burst bound" some_bound
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
echo "----- killed -9 mid-burst $(date -u +%T)" >>"$DAEMON_LOG"
step "daemon killed -9 with $(bound_count r) pods bound; restarting it on the same ports"
suite_run_daemon
settle r restart 90
measure "daemon killed -9 mid-burst" r restart "$PODS"
result "daemon killed -9 mid-burst: settled $((SECONDS - t0))s after the burst"
expect '((OVER == 0))' "R: after the restart $OVER pool(s) are over their capacity: $(pools_line restart)"
# Nothing forgotten across the restart: the restarted daemon counts every volume on each pool.
for ((i = 1; i <= NODES; i++)); do
  counted="$(daemon_pool "restart-$i" restart used_bytes)"
  have="$(jq --arg n "restart-$i" '.[] | select(.class == "restart" and .node == $n) | .provisioned' "$WORKDIR/pools.json")"
  expect '[[ "$counted" == "$have" ]]' "R: the restarted daemon counts $counted bytes on restart-$i's pool, the driver holds $have"
done

##### L: pre-provisioned local PersistentVolumes (local-static-provisioner's kind), last: it
# starts kube-controller-manager's PersistentVolume binder, which completes the bindings
# VolumeBinding's PreBind makes.
LPV_NODES=2
LPV_PODS=4
lpv_fit=$LPV_NODES # three 50Gi volumes per node: one pod of two 40Gi claims, one volume left
# lpv_pool NODE FIELD: a field of the daemon's pool local-disks on NODE.
lpv_pool() { daemon_pool "$1" local-disks "$2"; }
lpv_seen() { [[ "$(lpv_pool lpv-1 source)" == "local PVs" ]]; }
# lpv_bound_right: every bound claim of the burst is on a volume of its pod's node.
lpv_bound_right() {
  local pods pvs
  pods="$(K get pods -l e2e-burst=l -o json | jq -c '[.items[] | select(.spec.nodeName) | {(.metadata.name): .spec.nodeName}] | add // {}')"
  pvs="$(K get pv -o json | jq -c '[.items[] | select(.spec.claimRef) | {(.spec.claimRef.name): .spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}] | add // {}')"
  jq -n --argjson p "$pods" --argjson v "$pvs" \
    '[$p | to_entries[] | . as $e | ["a", "b"][] | $v[$e.key + "-" + .] == $e.value] | all and length > 0' | grep -qx true
}
scenario_local_pvs() {
  local i j n
  if ! cluster_start_controller_manager persistentvolume-binder-controller >/dev/null; then
    step "scenario L skipped: no kube-controller-manager in this build"
    return 0
  fi
  K apply -f - >/dev/null <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-disks}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
EOF
  for ((i = 1; i <= LPV_NODES; i++)); do
    n="lpv-$i"
    cluster_add_gpu_node "$n" 8
    for ((j = 1; j <= 3; j++)); do
      K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $n-disk-$j}
spec:
  capacity: {storage: 50Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local-disks
  local: {path: /mnt/disks/disk-$j}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$n]}]
EOF
    done
  done
  wait_until 20 "the daemon's pool local-disks on lpv-1, from local PVs" lpv_seen
  step "scenario L: local PVs: $LPV_PODS pods x 2 x 40Gi onto $LPV_NODES nodes of three 50Gi local volumes ($lpv_fit fit)"
  CLAIM=40Gi burst l "$LPV_PODS" local-disks
  two_bound() { (($(bound_count l) >= lpv_fit)); }
  wait_until 60 "$lpv_fit pods of the burst bound" two_bound
  sleep "$QUIET"
  BOUND="$(bound_count l)"
  result "local PVs, with the daemon: pods bound: $BOUND of $LPV_PODS ($lpv_fit fit); bound in their first scheduling cycle: $(first_cycle l)"
  expect '((BOUND == lpv_fit))' "L: $BOUND pods bound on local PVs, want the $lpv_fit that fit"
  expect lpv_bound_right "L: a bound pod's claims are not on volumes of its node"
  for ((i = 1; i <= LPV_NODES; i++)); do
    used="$(lpv_pool "lpv-$i" used_bytes)"
    expect '[[ "$used" == $((100 * GIB)) ]]' "L: the daemon counts $used bytes used on lpv-$i's local volumes, want two whole 50Gi volumes"
  done
}
scenario_local_pvs

((${#FAILURES[@]} == 0)) || fail "${#FAILURES[@]} expectation(s) failed: $(printf '%s; ' "${FAILURES[@]}")"
E2E_OK=1
step "[e2e-storage] PASS"
