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
# Results go to $WORKDIR/results.txt and to the log as "RESULT" lines.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE_TAG=e2e-ha
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"

NS=ha-system
LABEL=scheduler-extender.io/leader
read -r LEASE RENEW RETRY <<<"${E2E_HA_TIMINGS:-2s 1500ms 500ms}"
LEASE_SECONDS="$(sed -E 's/s$//' <<<"$LEASE")"
printf 'ha: {lease_duration: %s, renew_deadline: %s, retry_period: %s}\n' "$LEASE" "$RENEW" "$RETRY" >"$WORKDIR/daemon.yaml"
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
# after_binds I N COMMAND...: in the background, run COMMAND after replica I's Nth bind in this phase.
after_binds() {
  local i="$1" n="$2" from
  shift 2
  from="$(wc -l <"${LOG[i]}")"
  (
    deadline=$((SECONDS + 120))
    until (($(tail -n +"$((from + 1))" "${LOG[i]}" | grep -c 'bind default/.*: nodes 1 -> 1') >= n)); do
      ((SECONDS < deadline)) || exit 1
      sleep 0.02
    done
    "$@"
  ) 2>/dev/null &
  KILLER=$!
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

E2E_OK=1
step "all HA scenarios passed"
