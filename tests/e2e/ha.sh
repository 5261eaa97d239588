#!/usr/bin/env bash
# Two replicas of the daemon against a real kube-apiserver and kube-scheduler (E2E_KUBE: current,
# the default, or 1.20), on loopback, no kubelet.
#
#   tests/e2e/ha.sh      # EXTENDER_BINARY (default build/scheduler-extender)
#
# The replicas run as the placeholder pods ha-system/ext-0 and ext-1 (POD_NAME/POD_UID), elect a
# leader on the Lease ha-system/scheduler-extender with the default timings (2s/1500ms/500ms; E2E_HA_TIMINGS
# "LEASE RENEW RETRY", e.g. "15s 10s 2s", runs others), and the leader labels its pod. Each replica
# reaches the API server through its own lib/api_partition.py link, which a scenario can cut.
# kube-scheduler (bindVerb, ignoredByScheduler: true: only the daemon counts GPUs) calls
# lib/leader_proxy.py, which plays the chart's leader-only Service: connections go to the labelled
# pod's daemon while it is Ready.
#
# Scenarios (each: every pod that fits binds, no node holds more than 8 GPUs, and the gap in binding
# is measured, from the old leader's last bind to the new leader's first):
#   I  idle: the API server's Lease requests per second with both replicas up, for 10 s.
#   K  kill -9: a burst of 100 one-GPU pods onto 10 nodes of 8 GPUs; the leader is killed -9 after
#      its 30th bind; 80 bind. The gap must stay under lease_duration + 4 s (a safety bound; the
#      figure is the RESULT line), and the Lease requests per second during the burst are printed.
#   T  SIGTERM: the killed replica comes back (a standby now); 60 pods on an empty cluster, the
#      leader gets SIGTERM after its 20th bind, releases the Lease, and the standby takes over.
#   P  partition: the SIGTERMed replica comes back; 60 pods on an empty cluster; the leader's link
#      to the API server is cut after its 20th bind (its process alive, its calls hanging). The
#      standby takes over; then the link heals and the old leader must find itself a standby.
#   D  csi-baremetal reservations across kill -9 (current versions only, as baremetal.sh): the
#      cluster is emptied; 6 nodes bm-1..bm-6 with two 100Gi NVMe drives each as csi-baremetal
#      publishes them (lib/baremetal_objects.sh), lib/baremetal_controller.py playing its
#      CreateVolume (a pass a second); a burst of 18 one-GPU pods with a 50Gi csi-baremetal-sc-nvme
#      claim each (a whole drive: 12 fit). The leader is killed -9 after its 3rd filter that passes
#      nodes (each writes its pod's reservation), as soon as one is RESERVED (read just before the
#      kill), with not all 12 bound.
#      lib/reservation_check.py lists the reservations every 0.1 s throughout. Checked:
#      no drive held by two RESERVED reservations at once (in any poll, and at the end), no drive
#      provisioned twice (the controller's record and the Volumes' drives), the 12 bound (the
#      standby, now leading, binds the rest), the 6 others Pending with no volume, and within 75 s
#      of the burst settling no reservation left for a bound or gone pod, none holding a drive.
# Both replicas run with the storage settings deploy/'s configuration ships (storage.baremetal on),
# and csi-baremetal's kinds are installed before they start (the daemon looks for them once).
# A pod refused waits at most 20 s in kube-scheduler's unschedulable queue (as in baremetal.sh).
# Results go to $WORKDIR/results.txt and to the log as "RESULT" lines.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-ha
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"
# shellcheck source=lib/baremetal_objects.sh
source "$HERE/lib/baremetal_objects.sh"

NS=ha-system
LABEL=scheduler-extender.io/leader
read -r LEASE RENEW RETRY <<<"${E2E_HA_TIMINGS:-2s 1500ms 500ms}"
LEASE_SECONDS="$(sed -E 's/s$//' <<<"$LEASE")"
printf 'ha: {lease_duration: %s, renew_deadline: %s, retry_period: %s}\n' "$LEASE" "$RENEW" "$RETRY" >"$WORKDIR/daemon.yaml"
# D: the storage settings deploy/ ships, and csi-baremetal's kinds before the replicas start.
BAREMETAL=$((CLUSTER_KUBE_MINOR >= 25))
if ((BAREMETAL)); then
  python3 "$SUITE_LIB/shipped_config.py" daemon "$WORKDIR/shipped-config.yaml"
  python3 -c 'import sys, yaml; print(yaml.safe_dump({"storage": yaml.safe_load(open(sys.argv[1]))["storage"]}))' \
    "$WORKDIR/shipped-config.yaml" >>"$WORKDIR/daemon.yaml"
  grep -q '^  baremetal:' "$WORKDIR/daemon.yaml" || fail "deploy/'s configuration has no storage.baremetal section"
  bm_install_kinds
fi
export CLUSTER_POD_MAX_UNSCHEDULABLE="${CLUSTER_POD_MAX_UNSCHEDULABLE-20s}"
cluster_create_namespace "$NS"
declare -a UID_OF PORT ADMIN PID LOG CUT KUBECONFIG_OF
for i in 0 1; do
  K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: ext-$i, namespace: $NS}
spec:
  schedulerName: e2e-no-scheduler
  automountServiceAccountToken: false
  containers: [{name: daemon, image: registry.k8s.io/pause:3.2}]
EOF
  UID_OF[i]="$(K -n "$NS" get pod "ext-$i" -o jsonpath='{.metadata.uid}')"
  mapfile -t ports < <(cluster_free_ports 2)
  PORT[i]="${ports[0]}" ADMIN[i]="${ports[1]}" LOG[i]="$CLUSTER_LOG_DIR/scheduler-extender-$i.log"
  # The replica's own link to the API server, cut while the file CUT[i] exists.
  link_port="$(cluster_free_ports 1)"
  CUT[i]="$WORKDIR/cut-$i" KUBECONFIG_OF[i]="$WORKDIR/extender-$i.kubeconfig"
  python3 "$HERE/lib/api_partition.py" --listen "$link_port" --upstream "$APISERVER_PORT" --control "${CUT[i]}" \
    2>>"$CLUSTER_LOG_DIR/api-partition-$i.log" &
  cluster_register_pid $! "api-partition-$i"
  sed -E "s#server: https://127.0.0.1:[0-9]+#server: https://127.0.0.1:$link_port#" "$EXTENDER_KUBECONFIG" >"${KUBECONFIG_OF[i]}"
done

# start_replica I: the daemon as pod ext-I; waits until it is ready.
start_replica() {
  local i="$1"
  echo "----- start $(date -u +%T)" >>"${LOG[i]}"
  POD_NAME="ext-$i" POD_UID="${UID_OF[i]}" POD_NAMESPACE="$NS" \
    "$BIN" --mode kubernetes --kubeconfig "${KUBECONFIG_OF[i]}" --config "$WORKDIR/daemon.yaml" \
    --listen "127.0.0.1:${PORT[i]}" --admin-listen "127.0.0.1:${ADMIN[i]}" >>"${LOG[i]}" 2>&1 &
  PID[i]=$!
  cluster_register_pid "${PID[i]}" "scheduler-extender-$i"
  cluster_wait_http "http://127.0.0.1:${ADMIN[i]}/readyz" 60 "${PID[i]}" "${LOG[i]}" >/dev/null
}
leads() { curl -sf "http://127.0.0.1:${ADMIN[$1]}/readyz" | jq -e '.leading == true' >/dev/null 2>&1; }
standby() { curl -sf "http://127.0.0.1:${ADMIN[$1]}/readyz" | jq -e '.leading == false' >/dev/null 2>&1; }
leader() {
  local i
  for i in 0 1; do leads "$i" && { echo "$i"; return 0; }; done
  return 1
}
one_leads() { local l; l="$(leader)" && standby $((1 - l)); }
labelled() { K -n "$NS" get pods -l "$LABEL=true" -o jsonpath='{.items[*].metadata.name}'; }
label_on() { [[ "$(labelled)" == "ext-$1" ]]; }

bound_count() { K get pods -o json | jq '[.items[] | select(.spec.nodeName != null and .spec.nodeName != "")] | length'; }
count_at_least() { (($(bound_count) >= $1)); }
no_pods() { [[ -z "$(K get pods -o name)" ]]; }
assert_no_overcommit() {
  local report
  report="$(K get pods -o json | jq -c '[.items[] | select(.spec.nodeName != null and .spec.nodeName != "")
      | {node: .spec.nodeName, gpus: ([.spec.containers[].resources.limits["nvidia.com/gpu"] // "0" | tonumber] | add)}]
      | group_by(.node) | map({node: .[0].node, used: (map(.gpus) | add)}) | map(select(.used > 8))')"
  [[ "$report" == "[]" ]] || fail "GPUs overcommitted: $report"
}
burst() { # burst PREFIX N: N one-GPU pods in one apply
  local i
  for ((i = 1; i <= $2; i++)); do cluster_gpu_pod_manifest "$1-$i" 1 default; echo "---"; done | K apply -f - >/dev/null
}
# after_lines I N PATTERN COMMAND...: in the background, run COMMAND once replica I's log has N
# lines matching PATTERN (grep -E) in this phase.
after_lines() {
  local i="$1" n="$2" pattern="$3" from
  shift 3
  from="$(wc -l <"${LOG[i]}")"
  (
    deadline=$((SECONDS + 120))
    until (($(tail -n +"$((from + 1))" "${LOG[i]}" | grep -cE "$pattern") >= n)); do
      ((SECONDS < deadline)) || exit 1
      sleep 0.02
    done
    "$@"
  ) 2>/dev/null &
  KILLER=$!
}
# after_binds I N COMMAND...: in the background, run COMMAND after replica I's Nth bind in this phase.
after_binds() {
  local i="$1" n="$2"
  shift 2
  after_lines "$i" "$n" 'bind default/.*: nodes 1 -> 1' "$@"
}
# gap OLD NEW: seconds from the last bind in OLD's log to the first bind after it in NEW's log.
gap() {
  python3 - "$1" "$2" <<'EOF'
import datetime, re, sys
def binds(path):
    out = []
    for line in open(path, errors="replace"):
        if re.search(r"bind default/\S+: nodes 1 -> 1", line):
            out.append(datetime.datetime.fromisoformat(line.split()[0]))
    return out
old, new = binds(sys.argv[1]), binds(sys.argv[2])
last = max(old)
after = [t for t in new if t > last]
print("%.2f" % ((min(after) - last).total_seconds()) if after else "none")
EOF
}
# within_bound GAP: the gap is under lease_duration + 4 s (a safety bound, not a performance figure).
within_bound() { [[ "$1" != none ]] && (($(echo "$1 < $LEASE_SECONDS + 4" | bc) == 1)); }
# lease_requests: the API server's count of requests on Leases so far (kube-apiserver's own identity
# lease included: about one request every 10 s).
lease_requests() {
  K get --raw /metrics | awk '/^apiserver_request_total\{/ && /resource="leases"/ { n += $NF } END { printf "%d\n", n }'
}
per_second() { echo "scale=2; ($2 - $1) / $3" | bc; }
# restart_as_standby I: replica I starts again and must find the other leading; the cluster is emptied.
restart_as_standby() {
  start_replica "$1"
  wait_until 10 "ext-$1 is a standby" standby "$1"
  K delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true
  wait_until 60 "all pods deleted" no_pods
}

step "nodes gpu-0..gpu-9 with 8 GPUs each"
for n in 0 1 2 3 4 5 6 7 8 9; do cluster_add_gpu_node "gpu-$n" 8 >/dev/null 2>&1; done

step "two replicas: ext-0 and ext-1"
start_replica 0
start_replica 1
wait_until 30 "exactly one replica leads" one_leads
L="$(leader)"
wait_until 10 "the leader's pod ext-$L alone carries the leader label" label_on "$L"
step "ext-$L leads; ext-$((1 - L)) is a standby (Ready)"
for i in 0 1; do
  metrics="$(curl -sf "http://127.0.0.1:${ADMIN[i]}/metrics")" || fail "GET /metrics of ext-$i failed"
  grep -q "^scheduler_extender_leader $([[ $i == "$L" ]] && echo 1 || echo 0)" <<<"$metrics" ||
    fail "ext-$i's scheduler_extender_leader metric does not say whether it leads"
done
curl -sf "http://127.0.0.1:${ADMIN[L]}/debug/state" | jq -e '.leadership.leading == true' >/dev/null || fail "/debug/state of the leader"
curl -sf "http://127.0.0.1:${ADMIN[L]}/version" | jq -e '.leading == true' >/dev/null || fail "/version of the leader"
S=$((1 - L))
refused="$(curl -s -X POST "http://127.0.0.1:${PORT[S]}/scheduler/filter" -H 'Content-Type: application/json' \
  -d "{\"Pod\":$(cluster_gpu_pod_manifest probe 1 default | K create --dry-run=client -f - -o json),\"NodeNames\":[\"gpu-0\"]}" | jq -r .Error)"
[[ "$refused" == *"standby"* ]] || fail "the standby decided a filter: $refused"

mapfile -t ports < <(cluster_free_ports 1)
PROXY_PORT="${ports[0]}"
python3 "$HERE/lib/leader_proxy.py" --listen "$PROXY_PORT" --namespace "$NS" --label "$LABEL" \
  --backend "ext-0=${PORT[0]}:${ADMIN[0]}" --backend "ext-1=${PORT[1]}:${ADMIN[1]}" \
  2>>"$CLUSTER_LOG_DIR/leader-proxy.log" &
cluster_register_pid $! leader-proxy
cluster_write_scheduler_config "$WORKDIR/scheduler.yaml" --extender-url "http://127.0.0.1:$PROXY_PORT/scheduler" \
  --node-cache-capable true --bind-verb bind --ignored-by-scheduler true
cluster_start_scheduler "$WORKDIR/scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler.log"

##### I: what leadership costs the API server at idle.
step "I: Lease requests at the API server for 10 s with both replicas idle"
before="$(lease_requests)"
sleep 10
result "I idle: $(per_second "$before" "$(lease_requests)" 10) Lease requests/s at the API server (timings $LEASE/$RENEW/$RETRY, two replicas)"

##### K: kill -9 the leader in the middle of a burst.
step "K: 100 one-GPU pods for 80 GPUs; ext-$L gets kill -9 after its 30th bind"
after_binds "$L" 30 kill -KILL "${PID[L]}"
t0=$SECONDS
before="$(lease_requests)"
burst k 100
wait "$KILLER" || fail "ext-$L did not bind 30 pods within 120s"
wait "${PID[L]}" 2>/dev/null || true
killed_at=$SECONDS
step "K: ext-$L killed with $(bound_count) pod(s) bound after $((killed_at - t0))s"
wait_until 30 "ext-$S leads" leads "$S"
step "K: ext-$S leads $((SECONDS - killed_at))s after the kill"
wait_until 180 "80 pods bound" count_at_least 80
sleep 5 # room for a wrong 81st
[[ "$(bound_count)" == 80 ]] || fail "$(bound_count) pods bound, want 80 (10 nodes x 8 GPUs)"
assert_no_overcommit
label_on "$S" || fail "the leader label is on [$(labelled)], want ext-$S only"
k_gap="$(gap "${LOG[L]}" "${LOG[S]}")"
result "K kill -9: 80/100 bound, no node over 8; leader ext-$L killed after 30 binds; binding gap ${k_gap}s (last bind of ext-$L to first of ext-$S); all 80 bound $((SECONDS - 5 - t0))s after the burst; $(per_second "$before" "$(lease_requests)" $((SECONDS - t0))) Lease requests/s meanwhile"
within_bound "$k_gap" || fail "K: binding stopped for ${k_gap}s after the kill, over lease_duration + 4 s"

##### T: SIGTERM hands over.
step "T: ext-$L restarts as a standby; the cluster is emptied"
restart_as_standby "$L"
step "T: 60 one-GPU pods; ext-$S gets SIGTERM after its 20th bind"
after_binds "$S" 20 kill -TERM "${PID[S]}"
t0=$SECONDS
burst t 60
wait "$KILLER" || fail "ext-$S did not bind 20 pods within 120s"
wait "${PID[S]}" 2>/dev/null || true
grep -Eq " info +leader election: .* stopped leading on shutdown and released Lease" "${LOG[S]}" ||
  fail "ext-$S did not log at info that it handed the lease over"
wait_until 15 "ext-$L leads" leads "$L"
wait_until 120 "60 pods bound" count_at_least 60
assert_no_overcommit
t_gap="$(gap "${LOG[S]}" "${LOG[L]}")"
result "T SIGTERM: 60/60 bound, no node over 8; binding gap ${t_gap}s (last bind of ext-$S to first of ext-$L; the lease is released, not waited out)"
within_bound "$t_gap" || fail "T: binding stopped for ${t_gap}s after SIGTERM, over lease_duration + 4 s"

##### P: the leader cut off from the API server, alive.
step "P: ext-$S restarts as a standby; the cluster is emptied"
restart_as_standby "$S"
step "P: 60 one-GPU pods; ext-$L's link to the API server is cut after its 20th bind"
after_binds "$L" 20 touch "${CUT[L]}"
burst p 60
wait "$KILLER" || fail "ext-$L did not bind 20 pods within 120s"
cut_at=$SECONDS
wait_until 30 "ext-$S leads" leads "$S"
step "P: ext-$S leads $((SECONDS - cut_at))s after the cut"
wait_until 120 "60 pods bound" count_at_least 60
leads "$L" && fail "the partitioned ext-$L still says it leads"
sleep 3 # room for a late bind by the partitioned replica
[[ "$(bound_count)" == 60 ]] || fail "$(bound_count) pods bound, want 60"
assert_no_overcommit
p_gap="$(gap "${LOG[L]}" "${LOG[S]}")"
step "P: the link heals; ext-$L must find ext-$S's lease and stay a standby"
rm -f "${CUT[L]}"
wait_until 30 "ext-$L is a standby again" standby "$L"
leads "$S" || fail "ext-$S stopped leading when ext-$L came back"
label_on "$S" || fail "the leader label is on [$(labelled)], want ext-$S only"
[[ "$(bound_count)" == 60 ]] || fail "$(bound_count) pods bound after the heal, want 60"
assert_no_overcommit
result "P partition: 60/60 bound, no node over 8; leader ext-$L cut off after 20 binds; binding gap ${p_gap}s (last bind of ext-$L to first of ext-$S); after the heal ext-$L is a standby"
within_bound "$p_gap" || fail "P: binding stopped for ${p_gap}s after the partition, over lease_duration + 4 s"

##### D: csi-baremetal reservations in flight when the leader is killed -9.
D_NODES=6 D_PODS=18 D_KILL_AFTER=3 D_GONE_WITHIN=75
D_FIT=$((D_NODES * 2))
# d_manifest: D_PODS pods of one GPU, each with a 50Gi claim of a whole NVMe drive.
d_manifest() {
  local i
  for ((i = 1; i <= D_PODS; i++)); do
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: d-$i, namespace: default, labels: {e2e-burst: d}}
spec: {storageClassName: csi-baremetal-sc-nvme, accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: d-$i, namespace: default, labels: {e2e-burst: d}}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers: [{name: main, image: registry.k8s.io/pause:3.10, resources: {limits: {nvidia.com/gpu: "1"}}}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: d-$i}}]
EOF
  done
}
d_report() { jq -r "$1" "$WORKDIR/d-reservations.json" 2>/dev/null; }
# Both replicas list the ACs of every bm node (the last one's drives named in /debug/nodes).
d_sees_drives() {
  local i ac
  ac="$(tail -1 "$WORKDIR/acs-bm-$D_NODES.txt")"
  for i in 0 1; do curl -sf "http://127.0.0.1:${ADMIN[i]}/debug/nodes/bm-$D_NODES" | grep -q "$ac" || return 1; done
}
# d_binds I: the D pods replica I bound.
d_binds() { grep -cE 'bind default/d-[0-9]+: nodes 1 -> 1' "${LOG[$1]}" || true; }
# d_orphans: reservations of bound pods or of pods that are gone; d_holding: RESERVED ones that
# still list drives (for the Pending pods, until the sweep drops them).
d_orphans() {
  jq -r -n --slurpfile acrs <(K get "availablecapacityreservations.$GROUP" -o json) --slurpfile pods <(K get pods -o json) '
    ($pods[0].items | map({key: ("default-" + .metadata.name), value: ((.spec.nodeName // "") != "")}) | from_entries) as $bound
    | [$acrs[0].items[].metadata.name | select(. as $n | if $bound | has($n) then $bound[$n] else true end)] | join(" ")'
}
d_holding() {
  K get "availablecapacityreservations.$GROUP" -o json |
    jq -r '[.items[] | select(.spec.Status == "RESERVED" and ([.spec.ReservationRequests[]?.Reservations[]?] | length) > 0) | .metadata.name] | join(" ")'
}
d_clean() { [[ -z "$(d_orphans)" && -z "$(d_holding)" ]]; }
d_reserved() {
  K get "availablecapacityreservations.$GROUP" -o json | jq -r '[.items[] | select(.spec.Status == "RESERVED") | .metadata.name] | join(" ")'
}
# d_kill_in_flight I: kill -9 replica I as soon as a reservation is RESERVED (their names, as read
# just before the kill, to $WORKDIR/d-reserved-at-kill.txt).
d_kill_in_flight() {
  local reserved deadline=$((SECONDS + 30))
  until reserved="$(d_reserved)" && [[ -n "$reserved" ]]; do
    ((SECONDS < deadline)) || return 1
  done
  kill -KILL "${PID[$1]}"
  echo "$reserved" >"$WORKDIR/d-reserved-at-kill.txt"
}

if ((!BAREMETAL)); then
  step "D: skipped on $CLUSTER_KUBE_VERSION: run on current versions only (as baremetal.sh)"
else
  DL="$(leader)" || fail "D: no replica leads"
  DS=$((1 - DL))
  step "D: the cluster is emptied; $D_NODES nodes bm-1..bm-$D_NODES with two 100Gi NVMe drives each"
  K delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true
  wait_until 60 "all pods deleted" no_pods
  for ((i = 1; i <= D_NODES; i++)); do bm_node "bm-$i" NVME:100 NVME:100 >/dev/null; done
  wait_until 30 "both replicas list bm-$D_NODES's drives" d_sees_drives
  python3 "$SUITE_LIB/baremetal_controller.py" --interval 1 --report "$WORKDIR/d-controller.json" \
    >>"$CLUSTER_LOG_DIR/baremetal-controller.log" 2>&1 &
  cluster_register_pid $! baremetal-controller
  python3 "$SUITE_LIB/reservation_check.py" --report "$WORKDIR/d-reservations.json" \
    >>"$CLUSTER_LOG_DIR/reservation-check.log" 2>&1 &
  cluster_register_pid $! reservation-check
  wait_until 10 "the reservation check's first pass" test -s "$WORKDIR/d-reservations.json"

  step "D: $D_PODS one-GPU pods with a 50Gi NVMe claim each ($D_FIT fit); ext-$DL gets kill -9 after $D_KILL_AFTER of its filters pass nodes (each writes its pod's reservation)"
  d_manifest >"$WORKDIR/d-burst.yaml"
  after_lines "$DL" "$D_KILL_AFTER" 'filter default/d-[0-9]+: nodes [0-9]+ -> [1-9]' d_kill_in_flight "$DL"
  t0=$SECONDS
  K create -f "$WORKDIR/d-burst.yaml" >/dev/null
  wait "$KILLER" || fail "D: ext-$DL did not pass nodes in $D_KILL_AFTER filters with a reservation RESERVED within 120s"
  wait "${PID[DL]}" 2>/dev/null || true
  killed_at=$SECONDS
  d_reserved_at_kill="$(cat "$WORKDIR/d-reserved-at-kill.txt")"
  d_bound_at_kill="$(bound_count)" d_old_binds="$(d_binds "$DL")"
  step "D: ext-$DL killed $((killed_at - t0))s into the burst; RESERVED just before: $d_reserved_at_kill; $d_bound_at_kill pod(s) bound"
  ((d_bound_at_kill < D_FIT)) || fail "D: every pod that fits was bound before the kill: nothing was in flight"
  wait_until 30 "ext-$DS leads" leads "$DS"
  step "D: ext-$DS leads $((SECONDS - killed_at))s after the kill"
  wait_until 180 "$D_FIT pods bound" count_at_least "$D_FIT"
  sleep 5 # room for a wrong one more
  d_settled=$SECONDS
  d_bound="$(bound_count)"
  ((d_bound == D_FIT)) || fail "D: $d_bound pods bound, want $D_FIT (6 nodes x 2 NVMe drives)"
  assert_no_overcommit
  d_new_binds="$(d_binds "$DS")"
  d_gap=n/a
  ((d_old_binds == 0)) || d_gap="$(gap "${LOG[DL]}" "${LOG[DS]}")s"
  ((d_new_binds >= 1)) || fail "D: ext-$DS bound none of the pods after the kill"
  d_pending="$(K get pods -l e2e-burst=d -o json | jq -r '[.items[] | select((.spec.nodeName // "") == "") | .metadata.name] | join(" ")')"
  d_pending_volumes="$(K get pvc -l e2e-burst=d -o json | jq -r --arg p " $d_pending " \
    '[.items[] | .metadata.name as $n | select(($p | contains(" " + $n + " ")) and (.spec.volumeName // "") != "") | $n] | join(" ")')"
  [[ -z "$d_pending_volumes" ]] || fail "D: Pending pods' claims were provisioned: $d_pending_volumes"
  label_on "$DS" || fail "the leader label is on [$(labelled)], want ext-$DS only"

  # Drives: held twice at once (any poll, and now), provisioned twice.
  sleep 0.5 # the checker's and the controller's passes after the settle
  d_twice_polls="$(d_report '[.twice[] | .ac + " by " + (.holders | join(","))] | join("; ")')"
  d_twice_now="$(python3 - "$SUITE_LIB" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from reservation_check import drives_held_twice, selected_nodes, GROUP, UUID_KEY
from csi_provisioner import items
from kube_api import Api
api = Api()
acrs = items(api, GROUP + "/availablecapacityreservations")
selected = selected_nodes(api)
acs = {a["metadata"]["name"]: a for a in items(api, GROUP + "/availablecapacities")}
ids = {(n["metadata"].get("annotations") or {}).get(UUID_KEY) or n["metadata"]["uid"]: n["metadata"]["name"]
       for n in items(api, "/api/v1/nodes")}
print("; ".join("%s by %s" % (ac, ",".join(h)) for ac, h in sorted(drives_held_twice(acrs, acs, ids, selected).items())))
EOF
)"
  d_polls="$(d_report .passes)" d_seen="$(d_report '.seen | length')" d_reserved_max="$(d_report .reserved_max)"
  d_reused="$(jq -r '[.drive_reused[] | .ac + " (" + .claim + ", held by " + .holder + ")"] + [.taken | group_by(.ac)[] | select(length > 1) | .[0].ac + " taken " + (length | tostring) + " times"] | join("; ")' "$WORKDIR/d-controller.json")"
  d_exhausted="$(jq -r '[.exhausted | to_entries[] | select(.key | startswith("default/d-")) | .value] | add // 0' "$WORKDIR/d-controller.json")"
  d_volumes="$(K get "volumes.$GROUP" -n default -o json | jq '.items | length')"
  d_drives="$(K get "volumes.$GROUP" -n default -o json | jq '[.items[].spec.Location] | unique | length')"
  result "D kill -9 with reservations in flight: $d_bound/$D_PODS bound ($D_FIT fit), no node over 8 GPUs; ext-$DL killed $((killed_at - t0))s into the burst with $(wc -w <<<"$d_reserved_at_kill") reservation(s) RESERVED just before ($d_reserved_at_kill) and $d_bound_at_kill bound (ext-$DL bound $d_old_binds); ext-$DS bound $d_new_binds (binding gap $d_gap); Pending: $d_pending (no volume)"
  result "D drives held by two RESERVED reservations at once: ${d_twice_polls:-none} in $d_polls polls over $((d_settled - t0))s ($d_seen reservations seen, at most $d_reserved_max RESERVED at once), ${d_twice_now:-none} after the settle; provisioned twice: ${d_reused:-none} ($d_volumes Volumes on $d_drives drives); claims refused by CreateVolume (rescheduled): $d_exhausted"
  [[ -z "$d_twice_polls" && -z "$d_twice_now" ]] || fail "D: drives held by two RESERVED reservations at once: ${d_twice_polls} ${d_twice_now}"
  [[ -z "$d_reused" ]] || fail "D: drives provisioned twice: $d_reused"
  ((d_volumes == D_FIT && d_drives == D_FIT)) || fail "D: $d_volumes Volumes on $d_drives drives for $D_FIT bound pods"

  # The sweep: the new leader deletes what the bound pods' (and gone pods') reservations left.
  poll_until "$D_GONE_WITHIN" d_clean ||
    fail "D: ${D_GONE_WITHIN}s after the burst settled, reservations of bound or gone pods: [$(d_orphans)]; holding drives: [$(d_holding)]"
  d_swept=$((SECONDS - d_settled))
  d_twice_polls="$(d_report '[.twice[] | .ac + " by " + (.holders | join(","))] | join("; ")')"
  result "D sweep: no reservation of a bound or gone pod and none holding a drive ${d_swept}s after the burst settled (ext-$DS leading); drives held twice in all $(d_report .passes) polls: ${d_twice_polls:-none}"
  [[ -z "$d_twice_polls" ]] || fail "D: drives held by two RESERVED reservations at once: $d_twice_polls"
fi

E2E_OK=1
step "all HA scenarios passed"
