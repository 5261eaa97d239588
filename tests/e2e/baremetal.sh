#!/usr/bin/env bash
# csi-baremetal's drives, against a real kube-apiserver and kube-scheduler (current versions):
# the daemon in place of csi-baremetal's own extender. No driver and no drives:
# baremetal/crds.yaml serves csi-baremetal's kinds (AvailableCapacity, AvailableCapacityReservation,
# Volume; group csi-baremetal.dell.com/v1, cluster-scoped, its field names), the suite publishes
# the ACs, and lib/baremetal_controller.py plays csi-baremetal's controller as its CreateVolume
# does: the RESERVED reservation found by the claim's namespace and name, the AC it lists on the
# selected node taken and shrunk, a Volume and the PersistentVolume created, the reservation
# released; without one CreateVolume fails with ResourceExhausted: the claim is not provisioned
# and, as external-provisioner does then, its selected-node annotation is removed, so the pod's
# cycle fails in VolumeBinding's PreBind and the pod is scheduled again.
#
# Cluster: 4 nodes of 8 GPUs, each with two 100Gi SSD drives (ACs of class SSD) and one 200Gi
# volume group (an AC of class SSDLVG); node ids are the nodes' UIDs. Classes bm-ssd (storageType
# SSD) and bm-ssdlvg (SSDLVG) of provisioner csi-baremetal, WaitForFirstConsumer. kube-scheduler
# is configured as the chart renders it by default (the GPU entry with filter, prioritize, bind
# and preempt, weight 10; the every-pod entry with filter-unmanaged and prioritize-unmanaged,
# ignorable, 200ms). The daemon runs with its defaults (csi-baremetal read when its kinds are
# served, provisioner csi-baremetal, node ids from UIDs).
#
# The burst: 12 pods, created at once, each with a 50Gi bm-ssd claim (a whole drive) and a 30Gi
# bm-ssdlvg claim; the odd ones ask one GPU (they reach the GPU entry), the even ones none (only
# the every-pod entry). Two pods fit a node (its two drives): 8 fit.
# Checked (the suite fails at its end listing what did not hold, after printing the RESULT lines):
#   - the 8 that fit are bound, each in its first scheduling cycle (no FailedScheduling event);
#   - no claim was refused for want of a reservation or room (ResourceExhausted);
#   - no AC was handed to two claims (a drive) or below its size (a volume group); no AC below 0;
#   - the burst is spread: its first 4 bound pods are on 4 nodes, no node holds more than 2;
#   - every reservation of a bound pod is gone within 70 s of the burst settling, and none is
#     left holding ACs for a pod that stays Pending;
#   - measured: creation to bound per pod (median, max), scheduling attempts per pod.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-baremetal
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"

if ((CLUSTER_KUBE_MINOR < 25)); then
  step "skipped on $CLUSTER_KUBE_VERSION: run on current versions only (kubescheduler.config.k8s.io/v1, the chart's default configuration)"
  E2E_OK=1
  step "[e2e-baremetal] PASS"
  exit 0
fi
# A pod refused once waits at most this long in the unschedulable queue (5 min by default).
export CLUSTER_POD_MAX_UNSCHEDULABLE="${CLUSTER_POD_MAX_UNSCHEDULABLE-20s}"

GIB=1073741824
NODES="${E2E_BM_NODES:-4}" # E2E_BM_NODES, E2E_BM_PODS: a larger burst, by hand
PODS="${E2E_BM_PODS:-12}"
FIT=$((NODES * 2))
GROUP=csi-baremetal.dell.com
ACR_GONE_WITHIN=70 # csi-baremetal's validator sweeps every 60 s

##### csi-baremetal's kinds, and the daemon's rights on them (the chart's RBAC for csi-baremetal).
K apply -f "$HERE/baremetal/crds.yaml" >/dev/null
K wait --for condition=established --timeout=30s \
  "crd/availablecapacities.$GROUP" "crd/availablecapacityreservations.$GROUP" "crd/volumes.$GROUP" >/dev/null
K apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scheduler-extender-baremetal}
rules:
- apiGroups: [$GROUP]
  resources: [availablecapacities, volumes]
  verbs: [get, list, watch]
- apiGroups: [$GROUP]
  resources: [availablecapacityreservations]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: scheduler-extender-baremetal}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: scheduler-extender-baremetal}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: $EXTENDER_USER}]
EOF
cluster_can_i "$EXTENDER_USER" create availablecapacityreservations "$GROUP" || fail "RBAC: $EXTENDER_USER cannot create reservations"

for type in SSD SSDLVG; do
  K apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: bm-${type,,}}
provisioner: csi-baremetal
parameters: {storageType: $type, fsType: xfs}
volumeBindingMode: WaitForFirstConsumer
EOF
done

# ac NAME NODE_ID CLASS GIB LOCATION: one AvailableCapacity.
ac() {
  cat <<EOF
---
apiVersion: $GROUP/v1
kind: AvailableCapacity
metadata: {name: $1}
spec: {NodeId: "$2", storageClass: $3, Size: $(($4 * GIB)), Location: "$5"}
EOF
}
for ((i = 1; i <= NODES; i++)); do
  n="bm-$i"
  cluster_add_gpu_node "$n" 8
  uid="$(K get node "$n" -o jsonpath='{.metadata.uid}')"
  { ac "$n-ssd-1" "$uid" SSD 100 "drive-$uid-1"; ac "$n-ssd-2" "$uid" SSD 100 "drive-$uid-2"
    ac "$n-lvg" "$uid" SSDLVG 200 "lvg-$uid"; } | K apply -f - >/dev/null
done
step "$NODES nodes, each with ACs of two 100Gi SSD drives and one 200Gi SSDLVG group"

python3 "$SUITE_LIB/baremetal_controller.py" --report "$WORKDIR/controller.json" \
  >>"$CLUSTER_LOG_DIR/baremetal-controller.log" 2>&1 &
cluster_register_pid $! baremetal-controller
step "controller log: $CLUSTER_LOG_DIR/baremetal-controller.log"

suite_start_daemon
# The daemon's view of bm-1 names its ACs once it reads them (format not asserted).
sees_acs() { curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/bm-1" | grep -q 'bm-1-lvg'; }
if poll_until 20 sees_acs; then step "the daemon's /debug/nodes/bm-1 lists the node's ACs"; else
  step "the daemon's /debug/nodes/bm-1 does not name bm-1-lvg after 20s: $(curl -s "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/bm-1" | head -c 600)"
fi

url="http://127.0.0.1:$DAEMON_PORT/scheduler"
cluster_write_scheduler_config "$WORKDIR/scheduler.yaml" --extender-url "$url" --node-cache-capable true \
  --bind-verb bind --preempt-verb preempt --weight 10 --ignored-by-scheduler false
cluster_append_every_pod_entry "$WORKDIR/scheduler.yaml" "$url"
cluster_start_scheduler "$WORKDIR/scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler.log"

##### The burst.
burst_manifest() {
  local i name res
  for ((i = 1; i <= PODS; i++)); do
    name="$(printf 'bm-%02d' "$i")"
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $name-ssd, namespace: default, labels: {e2e-burst: bm}}
spec: {storageClassName: bm-ssd, accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $name-lvg, namespace: default, labels: {e2e-burst: bm}}
spec: {storageClassName: bm-ssdlvg, accessModes: [ReadWriteOnce], resources: {requests: {storage: 30Gi}}}
EOF
  done
  for ((i = 1; i <= PODS; i++)); do
    name="$(printf 'bm-%02d' "$i")"
    res='{requests: {cpu: 10m}}'
    ((i % 2 == 0)) || res='{limits: {nvidia.com/gpu: "1"}}'
    cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: {e2e-burst: bm}}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers: [{name: main, image: registry.k8s.io/pause:3.10, resources: $res}]
  volumes:
  - {name: ssd, persistentVolumeClaim: {claimName: $name-ssd}}
  - {name: lvg, persistentVolumeClaim: {claimName: $name-lvg}}
EOF
  done
}
bound_count() { K get pods -l e2e-burst=bm -o json | jq '[.items[] | select(.spec.nodeName)] | length'; }
unprovisioned() {
  K get pvc -l e2e-burst=bm -o json |
    jq '[.items[] | select(.metadata.annotations["volume.kubernetes.io/selected-node"] and (.spec.volumeName // "") == "")] | length'
}

step "burst: $PODS pods (odd ones with a GPU) x (50Gi bm-ssd + 30Gi bm-ssdlvg) onto $NODES nodes ($FIT fit)"
burst_manifest >"$WORKDIR/burst.yaml"
T_CREATE="$(date +%s.%N)"
K create -f "$WORKDIR/burst.yaml" >/dev/null
# Settled: at least FIT bound (or 60 s), no selected claim waiting for its volume, nothing changed for 6 s.
settle_deadline=$((SECONDS + 60))
last="" since=$SECONDS
while :; do
  b="$(bound_count)"
  sig="$b $(unprovisioned)"
  [[ "$sig" == "$last" ]] || { last="$sig"; since=$SECONDS; }
  if ((b >= FIT)) && [[ "$sig" == "$b 0" ]] && ((SECONDS - since >= 6)); then break; fi
  if ((SECONDS >= settle_deadline)); then
    step "the burst did not settle within 60s (bound, claims waiting for a volume: $sig)"
    break
  fi
  sleep 0.5
done
T_SETTLED=$SECONDS
sleep 0.5 # the controller's report of its last pass

##### Figures.
K get pods -l e2e-burst=bm -o json >"$WORKDIR/pods.json"
K get events -o json >"$WORKDIR/events.json"
K get events.v1.events.k8s.io -o json >"$WORKDIR/events-v1.json"
K get "availablecapacities.$GROUP" -o json >"$WORKDIR/acs.json"
K get "volumes.$GROUP" -o json >"$WORKDIR/volumes.json"
for ((i = 1; i <= NODES; i++)); do curl -s "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/bm-$i" >"$WORKDIR/daemon-bm-$i.json" || true; done
python3 - "$WORKDIR" "$T_CREATE" "$NODES" >"$WORKDIR/figures.env" <<'EOF'
import json, statistics, sys, datetime
wd, t_create, nodes = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
load = lambda f: json.load(open("%s/%s" % (wd, f)))
pods = load("pods.json")["items"]
ctl = load("controller.json")
def when(text):
    base, _, frac = text.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()
    return t + (float("0." + frac) if frac else 0.0)
failed, scheduled = {}, {}
for e in load("events-v1.json")["items"]:
    name = (e.get("regarding") or {}).get("name")
    if e.get("reason") == "FailedScheduling":
        failed[name] = failed.get(name, 0) + ((e.get("series") or {}).get("count") or 1)
    elif e.get("reason") == "Scheduled" and e.get("eventTime"):
        scheduled[name] = min(scheduled.get(name, 1e18), when(e["eventTime"]))
bound = sorted((p for p in pods if p["spec"].get("nodeName")), key=lambda p: scheduled.get(p["metadata"]["name"], 1e18))
names = [p["metadata"]["name"] for p in bound]
attempts = [1 + failed.get(n, 0) for n in names]
per_node = {}
for p in bound:
    per_node[p["spec"]["nodeName"]] = per_node.get(p["spec"]["nodeName"], 0) + 1
first = {p["spec"]["nodeName"] for p in bound[:nodes]}
lat = sorted(scheduled[n] - t_create for n in names if n in scheduled)
drive_use = {}
for t in ctl["taken"]:
    if t["class"] in ("HDD", "SSD", "NVME"):
        drive_use[t["ac"]] = drive_use.get(t["ac"], 0) + 1
twice = len({a for a, c in drive_use.items() if c > 1} | {e["ac"] for e in ctl["drive_reused"]})
acs = load("acs.json")["items"]
groups = sorted("%s=%dGi" % (a["metadata"]["name"], a["spec"]["Size"] // 2**30) for a in acs if a["spec"]["storageClass"].endswith("LVG"))
pending = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
out = {
    "BOUND": len(bound), "BOUND_NAMES": " ".join(names), "PENDING_NAMES": " ".join(pending),
    "FIRST_CYCLE": sum(1 for a in attempts if a == 1),
    "ATTEMPTS": " ".join("%s:%d" % (n, a) for n, a in zip(names, attempts)),
    "ATTEMPTS_MEAN": "%.2f" % (statistics.mean(attempts) if attempts else 0), "ATTEMPTS_MAX": max(attempts or [0]),
    "FAILED_PENDING": sum(failed.get(n, 0) for n in pending),
    "PER_NODE": " ".join("%s:%d" % kv for kv in sorted(per_node.items())), "MAX_PER_NODE": max(per_node.values() or [0]),
    "FIRST_NODES": len(first),
    "LAT_MEDIAN": "%.2f" % (statistics.median(lat) if lat else -1), "LAT_MAX": "%.2f" % (max(lat) if lat else -1),
    "LAT_MIN": "%.2f" % (min(lat) if lat else -1),
    "TWICE": twice, "OVERDRAWN": len({e["ac"] for e in ctl["group_overdrawn"]}), "NEGATIVE": len(ctl["negative_acs"]),
    "EXHAUSTED_CLAIMS": len(ctl["exhausted"]), "EXHAUSTED_ATTEMPTS": sum(ctl["exhausted"].values()),
    "EXHAUSTED_LIST": " ".join(sorted(ctl["exhausted"])[:6]) + (" ..." if len(ctl["exhausted"]) > 6 else ""),
    "TAKEN": len(ctl["taken"]), "PROVISIONED": ctl["provisioned"], "VOLUMES": len(load("volumes.json")["items"]),
    "GROUPS_LEFT": " ".join(groups),
    "ACR_SEEN": len(ctl["reservations_seen"]),
    "PROV_MEDIAN": "%.2f" % (statistics.median(ctl["provision_seconds"]) if ctl["provision_seconds"] else -1),
    "ACR_STATUS": " ".join(sorted({str(r["status"]) for r in ctl["reservations_seen"].values()})),
    "ACR_NODES_MAX": max([r["nodes"] for r in ctl["reservations_seen"].values()] or [0]),
}
for k, v in out.items():
    print("%s=%s" % (k, json.dumps(str(v))))
EOF
# shellcheck disable=SC1091
source "$WORKDIR/figures.env"
result "pods bound: $BOUND of $PODS ($FIT fit); bound in their first scheduling cycle: $FIRST_CYCLE"
result "scheduling attempts per bound pod: mean $ATTEMPTS_MEAN, max $ATTEMPTS_MAX ($ATTEMPTS); FailedScheduling of the Pending ones: $FAILED_PENDING"
result "ACs used twice: $TWICE; volume groups overdrawn: $OVERDRAWN; ACs below zero: $NEGATIVE; ACs taken: $TAKEN, Volumes: $VOLUMES (groups left: $GROUPS_LEFT)"
result "claims refused by CreateVolume (ResourceExhausted, then rescheduled): $EXHAUSTED_CLAIMS ($EXHAUSTED_ATTEMPTS refusals) ${EXHAUSTED_LIST}"
result "reservations seen by the controller (0.2 s polls): $ACR_SEEN, status ${ACR_STATUS:-none}, at most $ACR_NODES_MAX nodes in one"
result "spread: bound per node $PER_NODE; the first $NODES bound pods on $FIRST_NODES nodes"
result "creation to bound: median ${LAT_MEDIAN}s, min ${LAT_MIN}s, max ${LAT_MAX}s (settled $((T_SETTLED - T0))s into the suite); the controller, from a claim's selected node to its volume: median ${PROV_MEDIAN}s"

expect '((BOUND == FIT))' "$BOUND pods bound, want the $FIT that fit (Pending: $PENDING_NAMES)"
expect '((FIRST_CYCLE == BOUND))' "only $FIRST_CYCLE of the $BOUND bound pods were bound in their first scheduling cycle ($ATTEMPTS)"
expect '((EXHAUSTED_CLAIMS == 0))' "$EXHAUSTED_CLAIMS claim(s) refused by CreateVolume (no reservation or no room on their node): $EXHAUSTED_LIST"
expect '((TWICE == 0))' "$TWICE AC(s) handed to two claims"
expect '((OVERDRAWN == 0 && NEGATIVE == 0))' "volume groups overdrawn: $OVERDRAWN, ACs below zero: $NEGATIVE"
expect '((FIRST_NODES == NODES && MAX_PER_NODE <= 2))' "burst not spread: per node $PER_NODE, the first $NODES bound on $FIRST_NODES nodes"
expect '((VOLUMES == 2 * BOUND))' "$VOLUMES Volume objects for $BOUND bound pods of two claims"

##### Reservations: none left for bound pods within ACR_GONE_WITHIN s, none holding ACs for Pending ones.
acrs_of() { # names of the reservations of the pods named in $1 (space-separated)
  K get "availablecapacityreservations.$GROUP" -o json |
    jq -r --arg p "$1" '($p | split(" ") | map("default-" + .)) as $want | [.items[].metadata.name | select(. as $n | $want | index($n))] | join(" ")'
}
no_bound_acrs() { [[ -z "$(acrs_of "$BOUND_NAMES")" ]]; }
t=$SECONDS
if poll_until "$ACR_GONE_WITHIN" no_bound_acrs; then
  result "reservations of bound pods: none left $((SECONDS - T_SETTLED))s after the burst settled"
else
  left="$(acrs_of "$BOUND_NAMES")"
  result "reservations of bound pods: still there after ${ACR_GONE_WITHIN}s: $left"
  expect false "reservations of bound pods not deleted within ${ACR_GONE_WITHIN}s: $left"
fi
held="$(K get "availablecapacityreservations.$GROUP" -o json |
  jq -r '[.items[] | select(.spec.Status == "RESERVED" and ([.spec.ReservationRequests[]?.Reservations[]?] | length) > 0) | .metadata.name] | join(" ")')"
result "reservations holding ACs at the end: ${held:-none} (Pending pods: $PENDING_NAMES)"
expect '[[ -z "$held" ]]' "reservations still hold ACs for pods that stay Pending: $held"

((${#FAILURES[@]} == 0)) || fail "${#FAILURES[@]} expectation(s) failed: $(printf '%s; ' "${FAILURES[@]}")"
E2E_OK=1
step "[e2e-baremetal] PASS"
