#!/usr/bin/env bash
# csi-baremetal's drives, against a real kube-apiserver and kube-scheduler (current versions):
# the daemon in place of csi-baremetal's own extender, on csi-baremetal's own objects as its
# operator and its controllers make them, and with the daemon's shipped configuration. No driver
# and no drives: baremetal/crds.yaml is csi-baremetal's CRDs unchanged (structural schemas; Volume
# namespaced), baremetal/storageclasses.yaml its chart's StorageClasses (csi-baremetal-sc, storageType
# ANY, the cluster's default class; csi-baremetal-sc-hdd, -ssd, -nvme, -hddlvg, -ssdlvg, -nvmelvg,
# -syslvg, -nvme-raw-part), and the suite publishes what csi-baremetal's node and drive controllers
# would: each Node annotated and labelled nodes.csi-baremetal.dell.com/uuid = a fresh uuid (the
# chart's default feature.usenodeannotation: true), its Node object csibmnode-<uuid>, Drives, a
# LogicalVolumeGroup, and AvailableCapacities named by a uuid and naming the node by that uuid,
# labelled app: csi-baremetal. lib/baremetal_controller.py plays csi-baremetal's controller as its
# CreateVolume does: the first RESERVED reservation in the claim's namespace with a request named
# after the claim, the AC it lists on the selected node taken and shrunk, a Volume (in the claim's
# namespace) and the PersistentVolume created, the reservation released; without one CreateVolume
# fails with ResourceExhausted: the claim is not provisioned and, as external-provisioner does then,
# its selected-node annotation is removed, so the pod's cycle fails in VolumeBinding's PreBind and
# the pod is scheduled again.
#
# The daemon runs with the configuration deploy/scheduler-extender.yaml ships (its ConfigMap's
# config.yaml, unchanged: no storage.baremetal setting, leader election on), as a stand-in replica
# pod would (POD_NAME, POD_NAMESPACE, POD_UID). kube-scheduler is configured as the chart renders
# it by default (the GPU entry with filter, prioritize, bind and preempt, weight 10; the every-pod
# entry with filter-unmanaged and prioritize-unmanaged, ignorable, 200ms).
#
# Cluster: 4 nodes of 8 GPUs, each with two 100Gi HDD drives, two 100Gi NVMe drives (ACs of class
# HDD and NVME) and one 200Gi SSD volume group (an AC of class SSDLVG).
# The burst: 12 pods, created at once, each with a 50Gi csi-baremetal-sc claim (ANY: a whole drive,
# HDD first), a 50Gi csi-baremetal-sc-nvme claim (a whole NVMe drive) and a 30Gi
# csi-baremetal-sc-ssdlvg claim; the odd ones ask one GPU (they reach the GPU entry), the even ones
# none (only the every-pod entry). Two pods fit a node (its two NVMe drives; their ANY claims take
# the two HDDs): 8 fit.
# Checked (the suite fails at its end listing what did not hold, after printing the RESULT lines):
#   - the 8 that fit are bound, each in its first scheduling cycle (no FailedScheduling event);
#   - no claim was refused by CreateVolume's lookup or for want of room (ResourceExhausted): every
#     selected claim found its reservation as CreateVolume looks it up;
#   - no AC was handed to two claims (a drive) or below its size (a volume group); no AC below 0;
#   - every ANY claim took an HDD drive (none an NVMe drive or a group);
#   - the burst is spread: its first 4 bound pods are on 4 nodes, no node holds more than 2;
#   - every reservation of a bound pod is gone within 70 s of the burst settling, and none is
#     left holding ACs for a pod that stays Pending;
#   - the daemon logged, once per node, the annotation's uuid as the node's id;
#   - chart defaults: a pod in another namespace whose claim names no class (so the cluster's
#     default, csi-baremetal-sc) binds on a fifth node that has one free HDD drive (the others have
#     only their volume groups left, which ANY never takes), its Volume in the claim's namespace;
#   - measured: creation to bound per pod (median, max), scheduling attempts per pod.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-baremetal
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"
# shellcheck source=lib/baremetal_objects.sh
source "$HERE/lib/baremetal_objects.sh"

if ((CLUSTER_KUBE_MINOR < 25)); then
  step "skipped on $CLUSTER_KUBE_VERSION: run on current versions only (kubescheduler.config.k8s.io/v1, the chart's default configuration)"
  E2E_OK=1
  step "[e2e-baremetal] PASS"
  exit 0
fi
# A pod refused once waits at most this long in the unschedulable queue (5 min by default).
export CLUSTER_POD_MAX_UNSCHEDULABLE="${CLUSTER_POD_MAX_UNSCHEDULABLE-20s}"

NODES="${E2E_BM_NODES:-4}" # E2E_BM_NODES, E2E_BM_PODS: a larger burst, by hand
PODS="${E2E_BM_PODS:-12}"
FIT=$((NODES * 2))
ACR_GONE_WITHIN=70 # csi-baremetal's validator sweeps every 60 s

##### csi-baremetal's kinds, the daemon's rights on them, its chart's classes.
bm_install_kinds
for ((i = 1; i <= NODES; i++)); do bm_node "bm-$i" HDD:100 HDD:100 NVME:100 NVME:100 SSDLVG:200; done
step "$NODES nodes, each with the uuid annotation, ACs of two 100Gi HDD and two 100Gi NVMe drives and one 200Gi SSDLVG group"

python3 "$SUITE_LIB/baremetal_controller.py" --report "$WORKDIR/controller.json" \
  >>"$CLUSTER_LOG_DIR/baremetal-controller.log" 2>&1 &
cluster_register_pid $! baremetal-controller
step "controller log: $CLUSTER_LOG_DIR/baremetal-controller.log"

##### The daemon: deploy/'s configuration as shipped, run as a replica pod would run it.
python3 "$SUITE_LIB/shipped_config.py" daemon "$WORKDIR/shipped-config.yaml"
grep -q 'baremetal:' "$WORKDIR/shipped-config.yaml" || fail "deploy/'s configuration has no storage.baremetal section"
K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: bm-extender-replica, namespace: default}
spec:
  schedulerName: e2e-nobody
  automountServiceAccountToken: false
  containers: [{name: main, image: registry.k8s.io/pause:3.10}]
EOF
REPLICA_UID="$(K get pod bm-extender-replica -o jsonpath='{.metadata.uid}')"
mapfile -t ports < <(cluster_free_ports 2)
DAEMON_PORT="${ports[0]}" DAEMON_ADMIN="${ports[1]}"
DAEMON_LOG="$CLUSTER_LOG_DIR/scheduler-extender.log"
POD_NAME=bm-extender-replica POD_NAMESPACE=default POD_UID="$REPLICA_UID" \
  "$BIN" --config "$WORKDIR/shipped-config.yaml" --mode kubernetes --kubeconfig "$EXTENDER_KUBECONFIG" \
  --listen "127.0.0.1:$DAEMON_PORT" --admin-listen "127.0.0.1:$DAEMON_ADMIN" >>"$DAEMON_LOG" 2>&1 &
DAEMON_PID=$!
cluster_register_pid "$DAEMON_PID" scheduler-extender
cluster_wait_http "http://127.0.0.1:$DAEMON_ADMIN/readyz" 60 "$DAEMON_PID" "$DAEMON_LOG" >/dev/null
suite_wait_leading "$DAEMON_ADMIN"
step "daemon (deploy/'s configuration, unchanged): log $DAEMON_LOG"
# The daemon's view of bm-1 names its ACs once it reads them (format not asserted).
LVG_AC="$(tail -1 "$WORKDIR/acs-bm-1.txt")"
sees_acs() { curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/bm-1" | grep -q "$LVG_AC"; }
if poll_until 20 sees_acs; then step "the daemon's /debug/nodes/bm-1 lists the node's ACs"; else
  step "the daemon's /debug/nodes/bm-1 does not name its group's AC $LVG_AC after 20s: $(curl -s "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/bm-1" | head -c 600)"
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
metadata: {name: $name-any, namespace: default, labels: {e2e-burst: bm}}
spec: {storageClassName: csi-baremetal-sc, accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $name-nvme, namespace: default, labels: {e2e-burst: bm}}
spec: {storageClassName: csi-baremetal-sc-nvme, accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $name-lvg, namespace: default, labels: {e2e-burst: bm}}
spec: {storageClassName: csi-baremetal-sc-ssdlvg, accessModes: [ReadWriteOnce], resources: {requests: {storage: 30Gi}}}
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
  - {name: any, persistentVolumeClaim: {claimName: $name-any}}
  - {name: nvme, persistentVolumeClaim: {claimName: $name-nvme}}
  - {name: lvg, persistentVolumeClaim: {claimName: $name-lvg}}
EOF
  done
}
bound_count() { K get pods -l e2e-burst=bm -o json | jq '[.items[] | select(.spec.nodeName)] | length'; }
unprovisioned() {
  K get pvc -l e2e-burst=bm -o json |
    jq '[.items[] | select(.metadata.annotations["volume.kubernetes.io/selected-node"] and (.spec.volumeName // "") == "")] | length'
}

step "burst: $PODS pods (odd ones with a GPU) x (50Gi csi-baremetal-sc (ANY) + 50Gi csi-baremetal-sc-nvme + 30Gi csi-baremetal-sc-ssdlvg) onto $NODES nodes ($FIT fit)"
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
K get "volumes.$GROUP" -A -o json >"$WORKDIR/volumes.json"
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
any_taken = [t for t in ctl["taken"] if t.get("type") == "ANY"]
any_not_hdd = sorted("%s:%s" % (t["claim"], t["class"]) for t in any_taken if t["class"] != "HDD")
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
    "ANY_TAKEN": len(any_taken), "ANY_NOT_HDD": len(any_not_hdd), "ANY_NOT_HDD_LIST": " ".join(any_not_hdd[:6]),
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
result "ANY claims provisioned: $ANY_TAKEN, on another drive than an HDD: $ANY_NOT_HDD ${ANY_NOT_HDD_LIST}"
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
expect '((VOLUMES == 3 * BOUND))' "$VOLUMES Volume objects for $BOUND bound pods of three claims"
expect '((ANY_TAKEN == BOUND && ANY_NOT_HDD == 0))' "$ANY_TAKEN ANY claims provisioned for $BOUND bound pods, $ANY_NOT_HDD not on an HDD: $ANY_NOT_HDD_LIST"

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

##### Node ids: the daemon named every node by the uuid csi-baremetal's node controller wrote, once.
ids_logged=0 ids_twice=0
for ((i = 1; i <= NODES; i++)); do
  id="$(cat "$WORKDIR/id-bm-$i.txt")"
  c="$(grep -c "csi-baremetal: node bm-$i has id $id (annotation $UUID_KEY)" "$DAEMON_LOG" || true)"
  ((c >= 1)) && ids_logged=$((ids_logged + 1))
  ((c > 1)) && ids_twice=$((ids_twice + 1))
done
result "node ids logged as the annotation's uuid: $ids_logged of $NODES nodes (logged more than once: $ids_twice)"
expect '((ids_logged == NODES && ids_twice == 0))' "the daemon's log names $ids_logged of $NODES nodes by their uuid annotation once ($ids_twice more than once)"

##### Chart defaults: a claim without a class (the cluster's default, csi-baremetal-sc) in another
##### namespace; only a new node's HDD is free (the others have only their groups left).
bm_node bm-defaults HDD:100
DEFAULT_AC="$(cat "$WORKDIR/acs-bm-defaults.txt")"
cluster_create_namespace team-a
K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch, namespace: team-a}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 20Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: team-a}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers: [{name: main, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 10m}}}]
  volumes: [{name: scratch, persistentVolumeClaim: {claimName: scratch}}]
EOF
claim_class="$(K -n team-a get pvc scratch -o jsonpath='{.spec.storageClassName}')"
defaults_bound() { [[ -n "$(K -n team-a get pod trainer -o jsonpath='{.spec.nodeName}')" && -n "$(K -n team-a get pvc scratch -o jsonpath='{.spec.volumeName}')" ]]; }
if poll_until 60 defaults_bound; then
  node="$(K -n team-a get pod trainer -o jsonpath='{.spec.nodeName}')"
  volume="$(K -n team-a get pvc scratch -o jsonpath='{.spec.volumeName}')"
  vol_ns="$(K get "volumes.$GROUP" -A -o json | jq -r --arg v "$volume" '[.items[] | select(.metadata.name == $v) | .metadata.namespace] | join(" ")')"
  took="$(jq -r --arg c team-a/scratch '[.taken[] | select(.claim == $c) | .ac] | join(" ")' "$WORKDIR/controller.json")"
  attempts="$(K -n team-a get events -o json | jq '[.items[] | select(.reason == "FailedScheduling" and .involvedObject.name == "trainer")] | length')"
  result "chart defaults: claim class '$claim_class', pod on $node in $((attempts + 1)) cycle(s), Volume $volume in namespace '$vol_ns', AC taken: $took"
  expect '[[ "$claim_class" == csi-baremetal-sc && "$node" == bm-defaults && "$vol_ns" == team-a && "$took" == "$DEFAULT_AC" ]]' \
    "chart defaults: class '$claim_class', node $node, Volume namespace '$vol_ns', AC '$took' (want csi-baremetal-sc, bm-defaults, team-a, $DEFAULT_AC)"
  expect '((attempts == 0))' "chart defaults: the pod needed $((attempts + 1)) scheduling cycles"
else
  result "chart defaults: pod not bound with its claim provisioned within 60s (claim class '$claim_class'): $(K -n team-a get pod trainer -o jsonpath='{.status.conditions}')"
  expect false "chart defaults: a pod with a claim of the default csi-baremetal-sc class did not bind within 60s"
fi

((${#FAILURES[@]} == 0)) || fail "${#FAILURES[@]} expectation(s) failed: $(printf '%s; ' "${FAILURES[@]}")"
E2E_OK=1
step "[e2e-baremetal] PASS"
