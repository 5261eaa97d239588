#!/usr/bin/env bash
# GPUs from Dynamic Resource Allocation (resource.k8s.io/v1) beside GPUs from a device plugin,
# through the daemon, against a real kube-apiserver, kube-scheduler and kube-controller-manager
# (its resourceclaim-controller only) on loopback, no kubelet and no DRA driver: the suite
# publishes the ResourceSlices NVIDIA's driver (gpu.nvidia.com) would publish.
#
# Feature gates (v1.37.2, read from `kube-apiserver --help` and `kube-scheduler --help`, and by
# trying to turn them off): DynamicResourceAllocation and DRAExtendedResource (KEP-5004,
# extended resources backed by a DeviceClass) are both GA and locked on ("cannot set feature gate
# DRAExtendedResource to false, feature is locked to true"); --help lists neither, as it lists
# no GA gate. So no flag is needed and the control plane starts as for every other suite.
# kube-scheduler's DynamicResources plugin allocates the devices and writes the claims' status in
# PreBind (for a pod asking nvidia.com/gpu on a DRA node it creates the pod's claim itself);
# kube-controller-manager's resourceclaim-controller creates the claims of pod.spec.resourceClaims
# templates. Neither needs a kubelet. Kubernetes before v1.34 (E2E_KUBE=1.20) serves no
# resource.k8s.io/v1: the suite says so and passes.
#
# Cluster: dp-1, dp-2 with 4 device-plugin GPUs each (allocatable nvidia.com/gpu 4); dra-1, dra-2
# with no nvidia.com/gpu allocatable and one ResourceSlice each as NVIDIA's kubelet plugin
# publishes it (NVIDIA/k8s-dra-driver-gpu@22407113, cmd/gpu-kubelet-plugin/{deviceinfo.go,mig.go}:
# generateName 00-gpu.nvidia.com-<node>-, owner the Node, pool = node): 4 full GPUs gpu-0..3 of
# type gpu, 80Gi each, with the driver's attributes (uuid, productName, brand, architecture,
# cudaComputeCapability, driverVersion, cudaDriverVersion, pciBusID, pcieRoot) and no `index` or
# `minor` (none since v25.8.0); and a fifth GPU in MIG mode, published only as its static MIG
# devices (type mig, parentUUID, profile; capacity memory, multiprocessors, ...), not as a GPU.
# DeviceClasses gpu.nvidia.com (with extendedResourceName nvidia.com/gpu) and mig.nvidia.com as
# its chart renders them (deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml);
# the daemon with gpu_packing binpack; kube-scheduler with the extender (filter, prioritize at
# weight 10, bind, nodeCacheCapable, managedResources nvidia.com/gpu, ignoredByScheduler false).
#   1. binpack ranks both kinds on one scale: with dra-1 at 3/4 and dp-1 at 1/4 the daemon's
#      /prioritize puts dra-1 alone on top for a 1-GPU pod, which lands there (DRA); with dp-2 at
#      2/4, dra-2 and dp-1 at 1/4 it puts dp-2 on top, scores dra-2 and dp-1 alike, and the next
#      1-GPU pod lands on dp-2 (device plugin).
#   2. a burst of pods asking nvidia.com/gpu 1 or 2, and two pods with a ResourceClaimTemplate of
#      one device of the class, more than the GPUs left; the daemon is killed -9 and restarted
#      while the burst is being created. Every pod that fits binds: each pod still Pending asks
#      more than any node has free (and a template pod is Pending only with no DRA device free).
#      No DRA device is allocated twice, no node holds more GPUs than it has, and the daemon's
#      GET /debug/dra shows per node the devices the claims allocate.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Pods that wait for a GPU go back to the active queue within 20s at worst.
export CLUSTER_POD_MAX_UNSCHEDULABLE="${CLUSTER_POD_MAX_UNSCHEDULABLE-20s}"
SUITE_TAG=e2e-dra
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"

if ((CLUSTER_KUBE_MINOR < 34)); then
  step "SKIP: Kubernetes $CLUSTER_KUBE_VERSION serves no resource.k8s.io/v1 (DRA); nothing to test"
  E2E_OK=1
  echo "[e2e-dra] PASS (skipped: no resource.k8s.io/v1 on $CLUSTER_KUBE_VERSION)"
  exit 0
fi

served() { [[ "$(K get --raw /apis/resource.k8s.io/v1 2>/dev/null | jq -r '[.resources[].name] | index("resourceslices") != null')" == true ]]; }
wait_until 30 "kube-apiserver $CLUSTER_KUBE_VERSION to serve resource.k8s.io/v1 resourceslices" served

DRIVER=gpu.nvidia.com
CAP=4
DP_NODES=(dp-1 dp-2)
DRA_NODES=(dra-1 dra-2)

cat >"$WORKDIR/daemon.yaml" <<'EOF'
scoring:
  gpu_packing: binpack
EOF
suite_start_daemon --config "$WORKDIR/daemon.yaml"

step "nodes: ${DP_NODES[*]} with $CAP device-plugin GPUs, ${DRA_NODES[*]} with $CAP DRA GPUs each"
for n in "${DP_NODES[@]}"; do cluster_add_gpu_node "$n" "$CAP"; done
for n in "${DRA_NODES[@]}"; do
  cluster_add_gpu_node "$n" none
  node_uid="$(K get node "$n" -o jsonpath='{.metadata.uid}')"
  devices="$(jq -n -c --argjson cap "$CAP" --arg n "$n" '
    def product: {productName: {string: "NVIDIA H100 80GB HBM3"}, brand: {string: "Nvidia"},
      architecture: {string: "Hopper"}, cudaComputeCapability: {version: "9.0.0"},
      driverVersion: {version: "580.95.5"}, cudaDriverVersion: {version: "13.0.0"}};
    def pci($i): {"resource.kubernetes.io/pciBusID": {string: "0000:\(16 * ($i + 1)):00.0"},
      "resource.kubernetes.io/pcieRoot": {string: "pci0000:00"}};
    def mig($profile; $gi; $start; $mem; $sms): {name: "gpu-\($cap)-mig-\($profile | gsub("\\."; ""))-\($gi)-\($start)",
      attributes: ({type: {string: "mig"}, parentUUID: {string: "GPU-\($n)-\($cap)"}, profile: {string: $profile},
        uuid: {string: "MIG-\($n)-\($gi)-\($start)"}} + product + pci($cap)),
      capacity: {multiprocessors: {value: $sms}, copyEngines: {value: "1"}, decoders: {value: "0"}, encoders: {value: "0"},
        jpegEngines: {value: "0"}, ofaEngines: {value: "0"}, memory: {value: $mem}, "memorySlice\($start)": {value: "1"}}};
    [range(0; $cap) | {name: "gpu-\(.)",
      attributes: ({type: {string: "gpu"}, uuid: {string: "GPU-\($n)-\(.)"}} + product + pci(.)),
      capacity: {memory: {value: "80Gi"}}}]
    + [mig("1g.10gb"; 19; 0; "9856Mi"; "16"), mig("1g.10gb"; 19; 1; "9856Mi"; "16")]')"
  K create -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  generateName: 00-$DRIVER-$n-
  ownerReferences: [{apiVersion: v1, kind: Node, name: $n, uid: $node_uid, controller: true}]
spec:
  driver: $DRIVER
  nodeName: $n
  pool: {name: $n, generation: 1, resourceSliceCount: 1}
  devices: $devices
EOF
done
no_index="$(K get resourceslices -o json | jq '[.items[].spec.devices[].attributes | select(has("index") or has("minor"))] | length')"
((no_index == 0)) || fail "a published device has an index or minor attribute, which NVIDIA's driver no longer publishes"
K apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $DRIVER}
spec:
  extendedResourceName: nvidia.com/gpu
  selectors:
  - cel: {expression: "device.driver == '$DRIVER' && device.attributes['$DRIVER'].type == 'gpu'"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == '$DRIVER' && device.attributes['$DRIVER'].type == 'mig'"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: $DRIVER, allocationMode: ExactCount, count: 1}
EOF

cluster_start_controller_manager resourceclaim-controller
cluster_write_scheduler_config "$WORKDIR/scheduler.yaml" --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
  --weight 10 --node-cache-capable true --bind-verb bind --managed-resource nvidia.com/gpu --ignored-by-scheduler false
cluster_start_scheduler "$WORKDIR/scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler.log"

dra_view() { curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/dra"; }
# The daemon counts both DRA nodes' devices before any pod is created.
# Its MIG devices are listed as partitions, not counted as GPUs (nor is their parent).
dra_counted() {
  dra_view | jq -e --argjson cap "$CAP" '[.nodes[] | select(.gpus == $cap and ([.partitions_not_counted[]? | select(.type == "mig")] | length) == 2)] | length == 2' >/dev/null
}
wait_until 30 "GET /debug/dra to count $CAP GPUs and list 2 MIG partitions on each DRA node (now: $(dra_view | jq -c '[.nodes[]? | {name, gpus, partitions: [.partitions_not_counted[]?.device]}]'))" dra_counted

# gpu_pod NAME GPUS [NODE]: a pod asking GPUS nvidia.com/gpu (on NODE when given).
gpu_pod() {
  local selector=""
  [[ -n "${3:-}" ]] && selector="nodeSelector: {kubernetes.io/hostname: $3}"
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {e2e: dra}}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  $selector
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: {limits: {nvidia.com/gpu: "$2"}}
EOF
}
# claim_pod NAME: a pod with a claim of one device of the class from the template one-gpu.
claim_pod() {
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {e2e: dra}}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: {claims: [{name: gpu}]}
EOF
}

# A snapshot of pods and claims: $WORKDIR/pods.json, $WORKDIR/claims.json.
snapshot() {
  K get pods -n default -o json >"$WORKDIR/pods.json"
  K get resourceclaims -A -o json >"$WORKDIR/claims.json"
}
# Per node GPUs in use: device-plugin nodes from the pods bound there, DRA nodes from the claims'
# allocations (pool = node); printed as a JSON object node -> used.
usage_json() {
  jq -n -c --slurpfile pods "$WORKDIR/pods.json" --slurpfile claims "$WORKDIR/claims.json" \
    --arg driver "$DRIVER" --argjson dp "$(printf '%s\n' "${DP_NODES[@]}" | jq -R . | jq -s -c .)" '
    ([$pods[0].items[] | select(.spec.nodeName as $n | $dp | index($n))
      | {node: .spec.nodeName, n: ([.spec.containers[].resources.limits["nvidia.com/gpu"] // "0" | tonumber] | add)}]
     | group_by(.node) | map({key: .[0].node, value: (map(.n) | add)}) | from_entries) +
    ([$claims[0].items[] | .status.allocation.devices.results[]? | select(.driver == $driver)]
     | group_by(.pool) | map({key: .[0].pool, value: length}) | from_entries)'
}
free_on() { jq -r --arg n "$1" --argjson cap "$CAP" '$cap - (.[$n] // 0)' <<<"$2"; }

step "1. binpack ranks DRA and device-plugin nodes on one scale"
# fill NAME:GPUS:NODE...: one pod per argument, pinned to NODE; waits until each is bound.
fill() {
  local spec name gpus node
  for spec in "$@"; do
    IFS=: read -r name gpus node <<<"$spec"
    gpu_pod "$name" "$gpus" "$node"
  done | K apply -f - >/dev/null
  for spec in "$@"; do
    name="${spec%%:*}"
    wait_until 60 "$name bound" scheduled "$name"
  done
}
fill fill-dra-1:3:dra-1 fill-dp-1:1:dp-1
# daemon_scores POD_NAME GPUS NODE...: the daemon's /prioritize scores for a pod asking GPUS
# nvidia.com/gpu (not created) over NODEs, as "node=score ..." (the scheduler weighs them by 10;
# a node left out ranks lowest, at 0).
daemon_scores() {
  local pod="$1" gpus="$2" body
  shift 2
  body="$(gpu_pod "$pod" "$gpus" | K create --dry-run=client -o json -f - |
    jq -c --arg uid "$(cat /proc/sys/kernel/random/uuid)" --args '{Pod: (.metadata.uid = $uid), NodeNames: $ARGS.positional}' "$@")"
  curl -sf -X POST -H 'Content-Type: application/json' --data-binary "$body" "http://127.0.0.1:$DAEMON_PORT/scheduler/prioritize" |
    jq -r 'map("\(.Host)=\(.Score)") | join(" ")'
}
# top_is NODE SCORES: NODE alone has the highest score.
top_is() { tr ' ' '\n' <<<"$2" | sort -t= -k2,2nr | awk -F= -v n="$1" 'NR == 1 { top = $2; ok = ($1 == n) } NR == 2 { ok = ok && $2 < top } END { exit !ok }'; }
ranks() { scores="$(daemon_scores "$1" 1 "${@:3}")" && top_is "$2" "$scores"; }
poll_until 10 ranks probe-a dra-1 dp-1 dp-2 dra-1 dra-2 || true
step "the daemon's prioritize for a 1-GPU pod: $scores"
scores_a="$scores"
top_is dra-1 "$scores" || fail "the daemon's prioritize does not rank dra-1 (DRA, 3 of 4 allocated) alone on top for a 1-GPU pod: $scores"
gpu_pod probe-a 1 | K apply -f - >/dev/null
wait_until 60 "probe-a bound" scheduled probe-a
[[ "$(node_of probe-a)" == dra-1 ]] ||
  fail "probe-a (1 GPU) went to $(node_of probe-a), want dra-1 (DRA, 3 of 4 allocated) over dp-1 (device plugin, 1 of 4 in use): binpack"
result "binpack, DRA node fuller: probe-a on $(node_of probe-a) (dra-1 3/4 DRA, dp-1 1/4 device plugin; daemon scores before: $scores_a)"
fill fill-dp-2:2:dp-2 fill-dra-2:1:dra-2
poll_until 10 ranks probe-b dp-2 dp-1 dp-2 dra-2 || true
step "the daemon's prioritize for a 1-GPU pod (dra-1 and its 4 of 4 left out, as the scheduler's DRA filter refuses it): $scores"
top_is dp-2 "$scores" || fail "the daemon's prioritize does not rank dp-2 (device plugin, 2 of 4 in use) alone on top for a 1-GPU pod: $scores"
# dp-1 (device plugin) and dra-2 (DRA) both have 1 of 4 in use: one scale scores them alike.
score_of() { tr ' ' '\n' <<<"$2" | awk -F= -v n="$1" '$1 == n { s = $2 } END { print s + 0 }'; }
[[ "$(score_of dp-1 "$scores")" == "$(score_of dra-2 "$scores")" ]] ||
  fail "the daemon scores dp-1 (device plugin, 1 of 4 in use) and dra-2 (DRA, 1 of 4 allocated) differently: $scores"
gpu_pod probe-b 1 | K apply -f - >/dev/null
wait_until 60 "probe-b bound" scheduled probe-b
[[ "$(node_of probe-b)" == dp-2 ]] ||
  fail "probe-b (1 GPU) went to $(node_of probe-b), want dp-2 (device plugin, 2 of 4 in use) over dra-2 (DRA, 1 of 4) and dp-1 (1 of 4): binpack"
result "binpack, device-plugin node fuller: probe-b on $(node_of probe-b) (dp-2 2/4 device plugin, dra-2 1/4 DRA, dp-1 1/4; daemon scores before: $scores)"

# The daemon's views, node by node: GET /debug/dra's allocated devices on DRA nodes (as the
# claims allocate them), GET /debug/state's device-plugin GPUs in use (as the pods there ask them;
# none on DRA nodes, whose pods hold no device-plugin GPUs).
DRA_JSON="$(printf '%s\n' "${DRA_NODES[@]}" | jq -R . | jq -s -c .)"
claims_view() { jq -c --argjson dra "$DRA_JSON" '[$dra[] as $n | {name: $n, allocated: (.[$n] // 0)}]' <<<"$1"; }
daemon_view() { dra_view | jq -c '[.nodes[] | {name, allocated}] | sort_by(.name)'; }
agrees() { [[ "$(daemon_view)" == "$want_view" ]]; }
state_view() {
  curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/state" |
    jq -c '[.nodes[] | {key: .name, value: (.gpus["nvidia.com/gpu"].used // 0)}] | from_entries | with_entries(select(.value > 0))'
}
want_state() { jq -c --argjson dra "$DRA_JSON" 'with_entries(select(.key as $n | $dra | index($n) | not)) | with_entries(select(.value > 0))' <<<"$1"; }
state_agrees() { [[ "$(state_view)" == "$want_state_view" ]]; }

snapshot
before="$(usage_json)"
want_view="$(claims_view "$before")"
poll_until 30 agrees || fail "before the burst GET /debug/dra shows allocated per node $(daemon_view), the claims $want_view"
want_state_view="$(want_state "$before")"
poll_until 30 state_agrees || fail "before the burst GET /debug/state shows device-plugin GPUs in use $(state_view), want $want_state_view (none on DRA nodes)"
free_before=0
for n in "${DP_NODES[@]}" "${DRA_NODES[@]}"; do free_before=$((free_before + $(free_on "$n" "$before"))); done
step "in use before the burst: $before ($free_before GPUs free)"

# The burst: 1- and 2-GPU pods, then two template pods, more than the GPUs left.
BURST=(b-01:1 b-02:2 b-03:1 b-04:1 b-05:2 b-06:1 b-07:2 b-08:1 b-09:1 b-10:2)
CLAIM_PODS=(c-1 c-2)
asked_gpus=2
for spec in "${BURST[@]}"; do asked_gpus=$((asked_gpus + ${spec#*:})); done
asked_pods=$((${#BURST[@]} + ${#CLAIM_PODS[@]}))
step "2. burst: ${#BURST[@]} pods asking nvidia.com/gpu and ${#CLAIM_PODS[@]} with a claim template, $asked_gpus GPUs for $free_before free; the daemon is killed -9 and restarted mid-burst"
t_burst=$SECONDS
for p in "${CLAIM_PODS[@]}"; do claim_pod "$p" | K apply -f - >/dev/null; done
i=0
for spec in "${BURST[@]}"; do
  gpu_pod "${spec%%:*}" "${spec#*:}" | K apply -f - >/dev/null
  i=$((i + 1))
  if ((i == 4)); then
    kill -KILL "$DAEMON_PID"
    wait "$DAEMON_PID" 2>/dev/null || true
    echo "----- killed -9 mid-burst $(date -u +%T)" >>"$DAEMON_LOG"
    step "daemon killed -9 after $i pods; restarting it on the same ports"
    suite_run_daemon --config "$WORKDIR/daemon.yaml"
  fi
done

# settled: every Pending pod asks more than any node has free (a template pod: any DRA node).
settled() {
  snapshot
  local use pending p ask best n f
  use="$(usage_json)"
  mapfile -t pending < <(jq -r '.items[] | select((.spec.nodeName // "") == "") | .metadata.name' "$WORKDIR/pods.json")
  for p in "${pending[@]}"; do
    ask="$(jq -r --arg p "$p" '.items[] | select(.metadata.name == $p) | [.spec.containers[].resources.limits["nvidia.com/gpu"] // "0" | tonumber] | add' "$WORKDIR/pods.json")"
    best=0
    if [[ "$ask" == 0 ]]; then
      ask=1
      for n in "${DRA_NODES[@]}"; do f="$(free_on "$n" "$use")"; ((f > best)) && best=$f; done
    else
      for n in "${DP_NODES[@]}" "${DRA_NODES[@]}"; do f="$(free_on "$n" "$use")"; ((f > best)) && best=$f; done
    fi
    ((ask > best)) || return 1
  done
  return 0
}
poll_until 90 settled ||
  fail "timed out after 90s waiting for every pod that fits to bind (pending: $(jq -r '[.items[] | select((.spec.nodeName // "") == "") | .metadata.name] | join(" ")' "$WORKDIR/pods.json"); in use: $(usage_json))"
burst_s=$((SECONDS - t_burst))

snapshot
use="$(usage_json)"
names=("${BURST[@]%%:*}" "${CLAIM_PODS[@]}")
bound=0
for p in "${names[@]}"; do
  [[ -n "$(jq -r --arg p "$p" '.items[] | select(.metadata.name == $p) | .spec.nodeName // ""' "$WORKDIR/pods.json")" ]] && bound=$((bound + 1))
done
pending="$(jq -r '[.items[] | select((.spec.nodeName // "") == "") | .metadata.name] | join(" ")' "$WORKDIR/pods.json")"
step "after the burst: $bound of $asked_pods burst pods bound; in use $use; pending: ${pending:-none}"
((bound > 0)) || fail "no burst pod bound"
[[ -n "$pending" ]] || fail "every burst pod bound although $asked_gpus GPUs were asked for $free_before free: the suite did not overfill the cluster"
for p in "${CLAIM_PODS[@]}"; do
  n="$(jq -r --arg p "$p" '.items[] | select(.metadata.name == $p) | .spec.nodeName // ""' "$WORKDIR/pods.json")"
  [[ -z "$n" || " ${DRA_NODES[*]} " == *" $n "* ]] || fail "template pod $p bound to $n, which has no DRA devices"
done

# kube-controller-manager made each template pod's claim; a bound one is allocated on its node.
claim_bound=0
for p in "${CLAIM_PODS[@]}"; do
  claim="$(jq -r --arg p "$p" '.items[] | select(.metadata.name == $p) | .status.resourceClaimStatuses[]? | select(.name == "gpu") | .resourceClaimName // ""' "$WORKDIR/pods.json")"
  [[ -n "$claim" ]] || fail "template pod $p has no ResourceClaim (status.resourceClaimStatuses): is the resourceclaim-controller running? ($CONTROLLER_MANAGER_LOG)"
  n="$(jq -r --arg p "$p" '.items[] | select(.metadata.name == $p) | .spec.nodeName // ""' "$WORKDIR/pods.json")"
  [[ -n "$n" ]] || continue
  claim_bound=$((claim_bound + 1))
  got="$(jq -r --arg c "$claim" '.items[] | select(.metadata.name == $c) | [.status.allocation.devices.results[]? | select(.pool == "'"$n"'")] | length' "$WORKDIR/claims.json")"
  [[ "$got" == 1 ]] || fail "template pod $p is bound to $n but its claim $claim allocates $got devices there"
done

# No DRA device allocated twice.
dups="$(jq -r '[.items[] | .status.allocation.devices.results[]? | "\(.driver)/\(.pool)/\(.device)"] | group_by(.) | map(select(length > 1) | "\(.[0]) x\(length)") | join(", ")' "$WORKDIR/claims.json")"
double="$(jq -r '[.items[] | .status.allocation.devices.results[]? | "\(.driver)/\(.pool)/\(.device)"] | group_by(.) | map(select(length > 1)) | length' "$WORKDIR/claims.json")"
[[ -z "$dups" ]] || fail "DRA devices allocated twice: $dups"
# Each claim with an allocation belongs to a bound pod on the node of its devices.
stray="$(jq -r --slurpfile pods "$WORKDIR/pods.json" '
  ([$pods[0].items[] | {key: .metadata.uid, value: (.spec.nodeName // "")}] | from_entries) as $node |
  [.items[] | select(.status.allocation) | . as $c |
   ([.status.reservedFor[]? | select(.resource == "pods") | $node[.uid] // "gone"]) as $on |
   select(($on | length) == 0 or any($on[]; . as $n | [$c.status.allocation.devices.results[].pool] | all(. == $n) | not))
   | "\(.metadata.name) (reserved for pods on \($on | join(",")), devices in \([.status.allocation.devices.results[].pool] | unique | join(",")))"]
  | join("; ")' "$WORKDIR/claims.json")"
[[ -z "$stray" ]] || fail "claims whose devices are not on their pod's node: $stray"
# No node holds more GPUs than it has; no device-plugin GPU counted on a DRA node.
over=0
for n in "${DP_NODES[@]}" "${DRA_NODES[@]}"; do
  u="$(jq -r --arg n "$n" '.[$n] // 0' <<<"$use")"
  if ((u > CAP)); then
    over=$((over + 1))
    step "node $n holds $u GPUs, more than its $CAP"
  fi
done
((over == 0)) || fail "$over node(s) over capacity: $use"
# A pod asking nvidia.com/gpu on a DRA node is served by a claim the scheduler made for it.
for p in $(jq -r --argjson dra "$DRA_JSON" '.items[] | select(.spec.nodeName as $n | $dra | index($n)) | select(.spec.containers[0].resources.limits["nvidia.com/gpu"]) | .metadata.name' "$WORKDIR/pods.json"); do
  uid="$(jq -r --arg p "$p" '.items[] | select(.metadata.name == $p) | .metadata.uid' "$WORKDIR/pods.json")"
  want="$(jq -r --arg p "$p" '.items[] | select(.metadata.name == $p) | .spec.containers[0].resources.limits["nvidia.com/gpu"]' "$WORKDIR/pods.json")"
  got="$(jq -r --arg uid "$uid" '[.items[] | select(any(.status.reservedFor[]?; .uid == $uid)) | .status.allocation.devices.results[]?] | length' "$WORKDIR/claims.json")"
  [[ "$got" == "$want" ]] || fail "pod $p asks $want nvidia.com/gpu on a DRA node but its claims allocate $got devices"
done

# The restarted daemon's views agree with the claims and pods, node by node.
want_view="$(claims_view "$use")"
poll_until 30 agrees || fail "GET /debug/dra shows allocated per node $(daemon_view), the claims $want_view"
want_state_view="$(want_state "$use")"
poll_until 30 state_agrees || fail "GET /debug/state shows device-plugin GPUs in use $(state_view), want $want_state_view (none on DRA nodes)"
unmatched="$(dra_view | jq -r '.results_naming_no_counted_device // [] | join(", ")')"
[[ -z "$unmatched" ]] || fail "/debug/dra names claim results of no counted device: $unmatched"
step "after the restart GET /debug/dra: $(daemon_view); GET /debug/state, device-plugin GPUs in use: $(state_view)"

# Pods that do not fit stay Pending (a few seconds on, after the checks above).
snapshot
still="$(jq -r '[.items[] | select((.spec.nodeName // "") == "") | .metadata.name] | join(" ")' "$WORKDIR/pods.json")"
[[ "$still" == "$pending" ]] || fail "pending pods changed from '$pending' to '$still' with no GPU freed"
[[ "$(usage_json)" == "$use" ]] || fail "GPUs in use changed from $use to $(usage_json) with no pod created or deleted"

result "burst pods bound: $bound / $asked_pods asked ($asked_gpus GPUs asked for $free_before free; pending: $pending)"
result "template (ResourceClaimTemplate) pods bound: $claim_bound / ${#CLAIM_PODS[@]}"
result "DRA devices double-allocated: $double"
result "nodes over capacity: $over"
result "burst with a daemon restart (kill -9) until every pod that fits was bound: ${burst_s}s"
result "daemon /debug/dra allocated per node agrees with the claims: $(daemon_view)"

E2E_OK=1
echo "[e2e-dra] PASS"
