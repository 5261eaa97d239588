#!/usr/bin/env bash
# Local volumes through the daemon against a real kube-apiserver and kube-scheduler (E2E_KUBE:
# current, the default, or 1.20), on loopback. There is no controller-manager, provisioner or
# kubelet: the harness plays them (a loop below): it creates the claim of every generic ephemeral
# volume (<pod>-<volume>, owned by the pod), provisions a claim once the scheduler has selected its
# node (a PV with that node's affinity, the claim bound to it), finishes graceful pod deletions,
# and deletes the claims and volumes of deleted pods.
#
# Scenarios:
#   V1 the claim counted once: a WaitForFirstConsumer volume larger than half its node's device
#      pool binds on the first try (no FailedScheduling), and the bind records its device.
#   V2 scratch space is freeable: on a node whose pool two low-priority pods' ephemeral volumes
#      fill, a high-priority pod with a large ephemeral volume preempts them (preemptVerb) and binds.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-volumes
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"

if ((CLUSTER_KUBE_MINOR < 21)); then
  # Generic ephemeral volumes are alpha (off) before 1.21: nothing to test here.
  step "skipped on $CLUSTER_KUBE_VERSION: generic ephemeral volumes need Kubernetes 1.21 or later"
  E2E_OK=1
  exit 0
fi

suite_start_daemon

gone() { ! K get pod "$1" >/dev/null 2>&1; }
# FailedScheduling messages for pod $1, but for the wait for its ephemeral claim (which the
# harness, like the ephemeral volume controller, creates just after the pod).
failed_scheduling() {
  K get events -o json | jq -r --arg p "$1" '.items[] | select(.involvedObject.name == $p and .reason == "FailedScheduling")
    | .message | select(test("waiting for ephemeral volume controller") | not)'
}
pool_used_gib() {
  curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/$1" | jq -r '.pools[0].used_bytes / 1073741824 | floor'
}

# ---- the controllers this control plane lacks ---------------------------------------------------
(
  while kill -0 "$APISERVER_PID" 2>/dev/null; do
    pods="$(cluster_api GET /api/v1/namespaces/default/pods 2>/dev/null || echo '{}')"
    claims="$(cluster_api GET /api/v1/namespaces/default/persistentvolumeclaims 2>/dev/null || echo '{}')"
    # Graceful deletions finish at once; the deleted pods' claims and volumes go with them.
    jq -r '.items[]? | select(.metadata.deletionTimestamp != null) | .metadata.name' <<<"$pods" | while read -r p; do
      cluster_api DELETE "/api/v1/namespaces/default/pods/$p" '{"gracePeriodSeconds":0}' >/dev/null 2>&1 || true
    done
    live="$(jq -c '[.items[]? | select(.metadata.deletionTimestamp == null) | .metadata.uid]' <<<"$pods")"
    # (Admission adds protection finalizers that no controller here removes: drop them first.)
    jq -r --argjson live "$live" '.items[]? | select(.metadata.ownerReferences[0].kind == "Pod")
        | select(.metadata.ownerReferences[0].uid as $u | any($live[]; . == $u) | not)
        | "\(.metadata.name) \(.spec.volumeName // "")"' <<<"$claims" | while read -r c pv; do
      cluster_api PATCH "/api/v1/namespaces/default/persistentvolumeclaims/$c" '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
      cluster_api DELETE "/api/v1/namespaces/default/persistentvolumeclaims/$c" >/dev/null 2>&1 || true
      if [[ -n "$pv" ]]; then
        cluster_api PATCH "/api/v1/persistentvolumes/$pv" '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
        cluster_api DELETE "/api/v1/persistentvolumes/$pv" >/dev/null 2>&1 || true
      fi
    done
    # The claim of every generic ephemeral volume, owned by its pod.
    jq -c '.items[]? | select(.metadata.deletionTimestamp == null) | . as $p | .spec.volumes[]? | select(.ephemeral)
        | {apiVersion: "v1", kind: "PersistentVolumeClaim",
           metadata: {name: "\($p.metadata.name)-\(.name)", namespace: "default",
                      ownerReferences: [{apiVersion: "v1", kind: "Pod", name: $p.metadata.name,
                                         uid: $p.metadata.uid, controller: true, blockOwnerDeletion: true}]},
           spec: .ephemeral.volumeClaimTemplate.spec}' <<<"$pods" | while read -r claim; do
      name="$(jq -r .metadata.name <<<"$claim")"
      jq -e --arg n "$name" '.items[]? | select(.metadata.name == $n)' <<<"$claims" >/dev/null ||
        cluster_api POST /api/v1/namespaces/default/persistentvolumeclaims "$claim" >/dev/null 2>&1 || true
    done
    # Provisioning: a claim whose node is selected gets a volume there and is bound to it.
    jq -c '.items[]? | select(.metadata.annotations["volume.kubernetes.io/selected-node"] != null and .spec.volumeName == null)' \
      <<<"$claims" | while read -r claim; do
      name="$(jq -r .metadata.name <<<"$claim")"
      uid="$(jq -r .metadata.uid <<<"$claim")"
      node="$(jq -r '.metadata.annotations["volume.kubernetes.io/selected-node"]' <<<"$claim")"
      pv="$(jq -c --arg node "$node" '{apiVersion: "v1", kind: "PersistentVolume",
            metadata: {name: "pv-\(.metadata.uid)", annotations: {"pv.kubernetes.io/provisioned-by": "e2e.scheduler-extender.io/local"}},
            spec: {capacity: {storage: .spec.resources.requests.storage}, accessModes: .spec.accessModes,
                   storageClassName: .spec.storageClassName, persistentVolumeReclaimPolicy: "Delete",
                   local: {path: "/mnt/\(.metadata.name)"},
                   claimRef: {apiVersion: "v1", kind: "PersistentVolumeClaim", namespace: "default",
                              name: .metadata.name, uid: .metadata.uid},
                   nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [
                     {key: "kubernetes.io/hostname", operator: "In", values: [$node]}]}]}}}}' <<<"$claim")"
      cluster_api POST /api/v1/persistentvolumes "$pv" >/dev/null 2>&1 || true
      cluster_api PATCH "/api/v1/persistentvolumes/pv-$uid/status" '{"status":{"phase":"Bound"}}' >/dev/null 2>&1 || true
      cluster_api PATCH "/api/v1/namespaces/default/persistentvolumeclaims/$name" \
        "{\"metadata\":{\"annotations\":{\"pv.kubernetes.io/bind-completed\":\"yes\",\"pv.kubernetes.io/bound-by-controller\":\"yes\"}},\"spec\":{\"volumeName\":\"pv-$uid\"}}" \
        >/dev/null 2>&1 || true
      cluster_api PATCH "/api/v1/namespaces/default/persistentvolumeclaims/$name/status" \
        "{\"status\":{\"phase\":\"Bound\",\"capacity\":$(jq -c '{storage: .spec.resources.requests.storage}' <<<"$claim")}}" \
        >/dev/null 2>&1 || true
    done
    sleep 0.3
  done
) &
cluster_register_pid $! controllers

K apply -f - >/dev/null <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-storage}
provisioner: e2e.scheduler-extender.io/local
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000000
EOF

cluster_write_scheduler_config "$WORKDIR/scheduler.yaml" --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
  --node-cache-capable true --bind-verb bind --preempt-verb preempt --ignored-by-scheduler false
cluster_start_scheduler "$WORKDIR/scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler.log"

# scratch_pod NAME GPUS SIZE PRIORITY: a pod with a generic ephemeral volume of class local-storage.
scratch_pod() {
  K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  priorityClassName: $4
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 30
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: {limits: {nvidia.com/gpu: "$2"}}
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec:
          storageClassName: local-storage
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: $3}}
EOF
}

##### V1: the claim PreBind places is counted once.
step "scenario V1: a 600Gi ephemeral volume on a node whose device pool is one 1Ti device"
cluster_add_gpu_node vol-a 4 -a scheduler-extender.io/pool.local=nvme0n1=1Ti
scratch_pod etl 1 600Gi low
on_vol_a() { [[ "$(node_of etl)" == vol-a ]]; }
wait_until 90 "etl bound to vol-a" on_vol_a
refusals="$(failed_scheduling etl)"
[[ -z "$refusals" ]] || fail "etl was refused before it bound: $refusals"
device="$(K get pvc etl-scratch -o jsonpath='{.metadata.annotations.scheduler-extender\.io/device}')"
[[ "$device" == nvme0n1 ]] || fail "the claim's device is '$device', want nvme0n1"
counted_once() { [[ "$(pool_used_gib vol-a)" == 600 ]]; }
wait_until 30 "the daemon to count 600 GiB on vol-a" counted_once
K delete pod etl --wait=false >/dev/null
wait_until 60 "etl and its claim deleted" gone etl
K delete node vol-a >/dev/null

##### V2: scratch space is freed by preemption.
step "scenario V2: two low-priority pods' 450Gi scratch volumes fill vol-b's 1Ti pool; a high-priority 2-GPU pod needs 600Gi"
cluster_add_gpu_node vol-b 2 -a scheduler-extender.io/pool.local=1Ti
scratch_pod low-1 1 450Gi low
scratch_pod low-2 1 450Gi low
both_bound() { [[ "$(node_of low-1)" == vol-b && "$(node_of low-2)" == vol-b ]]; }
wait_until 90 "low-1 and low-2 bound to vol-b" both_bound
scratch_pod high 2 600Gi high
high_bound() { [[ "$(node_of high)" == vol-b ]]; }
wait_until 120 "high to preempt the scratch users and bind to vol-b" high_bound
gone low-1 && gone low-2 || fail "the low-priority pods were not evicted"
grep -Eq "preempt default/high: nodes 1 -> 1" "$DAEMON_LOG" || fail "the daemon did not keep vol-b for preemption"

E2E_OK=1
step "all volume scenarios passed"
