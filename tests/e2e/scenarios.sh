#!/usr/bin/env bash
# The daemon in kubernetes mode against a real kube-apiserver and kube-scheduler (E2E_KUBE: current,
# the default, from Go modules; or 1.20, from Debian's source), on loopback. Every assertion reads the outcome back from the API server.
#
#   tests/e2e/scenarios.sh             # EXTENDER_BINARY (default build/scheduler-extender)
#
# Scenarios: (1) GPU pods fill nodes exactly, the next waits with the daemon's reason, a deleted
# pod frees room; (2) pods without managed resources never reach the daemon; (3) prioritize
# spreads WaitForFirstConsumer volumes by count; (4) the daemon killed -9 mid-run rebuilds its
# cache and nothing is overcommitted; (5) nodeCacheCapable true and false, daemon binding and
# scheduler binding; (6) TLS with client verification refuses a client without the trusted cert;
# (7) a burst under the misconfiguration that overcommits is logged, counted and shown in /debug.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# kube-scheduler's retry on a pod-delete event can race ahead of the daemon's watch; the pod then
# waits for the unschedulable queue's flush: 30s, as docs/kubernetes.md recommends (v1.20: fixed 60s).
export CLUSTER_POD_MAX_UNSCHEDULABLE="${CLUSTER_POD_MAX_UNSCHEDULABLE-30s}"
SUITE_TAG=e2e
# shellcheck source=lib/suite.sh
source "$HERE/lib/suite.sh"

mapfile -t PORTS < <(cluster_free_ports 2)
DAEMON_PORT="${PORTS[0]}"
DAEMON_ADMIN="${PORTS[1]}"
DAEMON_LOG="$CLUSTER_LOG_DIR/scheduler-extender.log"
DAEMON_PID=""
step "daemon log: $DAEMON_LOG"

# start_daemon [CONFIG]: the daemon in kubernetes mode on the run's fixed ports; waits until it is
# ready and leads.
start_daemon() {
  local config="${1:-}" args=()
  [[ -n "$config" ]] && args=(--config "$config")
  echo "----- start $(date -u +%T) ${config:-default config}" >>"$DAEMON_LOG"
  suite_run_daemon "${args[@]}"
}

stop_daemon() {
  local sig="${1:-TERM}"
  [[ -n "$DAEMON_PID" ]] || return 0
  kill "-$sig" "$DAEMON_PID" 2>/dev/null || true
  wait "$DAEMON_PID" 2>/dev/null || true
  DAEMON_PID=""
}

# use_scheduler NAME [cluster_write_scheduler_config options]: (re)start kube-scheduler.
use_scheduler() {
  local name="$1"
  shift
  [[ -n "${SCHEDULER_PID:-}" ]] && cluster_stop_scheduler
  cluster_write_scheduler_config "$WORKDIR/scheduler-$name.yaml" "$@"
  cluster_start_scheduler "$WORKDIR/scheduler-$name.yaml" "$CLUSTER_LOG_DIR/kube-scheduler-$name.log"
}

gpu_pod() { cluster_gpu_pod_manifest "$1" "$2" default | K apply -f - >/dev/null; }



bound_count() { K get pods -o json | jq '[.items[] | select(.spec.nodeName != null and .spec.nodeName != "")] | length'; }
count_is() { [[ "$(bound_count)" == "$1" ]]; }

# No node holds more GPUs (limits of the pods bound there) than it has allocatable.
assert_no_overcommit() {
  local report
  report="$(
    jq -n --argjson pods "$(K get pods -A -o json)" --argjson nodes "$(K get nodes -o json)" '
      [$nodes.items[] | {name: .metadata.name, gpus: ((.status.allocatable["nvidia.com/gpu"] // "0") | tonumber)}] as $alloc
      | [$pods.items[] | select(.spec.nodeName != null and .spec.nodeName != "")
         | {node: .spec.nodeName, gpus: ([.spec.containers[].resources.limits["nvidia.com/gpu"] // "0" | tonumber] | add)}]
      | group_by(.node) | map({node: .[0].node, used: (map(.gpus) | add)})
      | map(. as $u | $u + {allocatable: ($alloc[] | select(.name == $u.node) | .gpus)})
      | map(select(.used > .allocatable))'
  )"
  [[ "$report" == "[]" ]] || fail "GPUs overcommitted: $report"
}

no_pods() { [[ -z "$(K get pods -o name)" ]]; }

delete_all_pods() {
  K delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true
  wait_until 60 "all pods deleted" no_pods
}

# event_for POD: the FailedScheduling messages recorded for POD.
event_for() {
  K get events --field-selector "involvedObject.name=$1,reason=FailedScheduling" -o jsonpath='{.items[*].message}'
}

step "nodes gpu-a and gpu-b with 2 GPUs each"
cluster_add_gpu_node gpu-a 2
cluster_add_gpu_node gpu-b 2

##### Scenario 1, 2 and 5a: names (nodeCacheCapable: true), the daemon binds.
start_daemon
use_scheduler names-bind --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
  --node-cache-capable true --bind-verb bind --preempt-verb preempt --ignored-by-scheduler true

step "scenario 1: four 1-GPU pods fill the two nodes exactly"
for i in 1 2 3 4; do gpu_pod "fill-$i" 1; done
wait_until 60 "4 pods bound" count_is 4
assert_no_overcommit
for n in gpu-a gpu-b; do
  c="$(K get pods -o json | jq --arg n "$n" '[.items[] | select(.spec.nodeName == $n)] | length')"
  [[ "$c" == 2 ]] || fail "node $n holds $c pods, want 2"
done
grep -q "bind default/fill-1: nodes 1 -> 1" "$DAEMON_LOG" || fail "the daemon did not bind fill-1"

step "scenario 1: the fifth stays Pending with the daemon's reason"
gpu_pod fill-5 1
fill5_refused() { event_for fill-5 | grep -q 'nvidia.com/gpu: pod needs 1, node has 0 free of 2'; }
wait_until 60 "a FailedScheduling event for fill-5 carrying the daemon's reason" fill5_refused
[[ -z "$(node_of fill-5)" ]] || fail "fill-5 was bound although every GPU is taken"
assert_no_overcommit

step "scenario 1: the status page and inspect say why fill-5 waits; headless Chromium renders the page"
inspect_says_why() {
  "$BIN" inspect --admin "http://127.0.0.1:$DAEMON_ADMIN" --pod default/fill-5 >"$WORKDIR/inspect-fill-5.txt" &&
    grep -q '1 more free nvidia.com/gpu on one node (0 of 2 free)' "$WORKDIR/inspect-fill-5.txt"
}
wait_until 30 "inspect --pod default/fill-5 gives the daemon's reason and what it would take" inspect_says_why
"$BIN" inspect --admin "http://127.0.0.1:$DAEMON_ADMIN" >"$WORKDIR/inspect-nodes.txt" ||
  fail "inspect failed: $(cat "$WORKDIR/inspect-nodes.txt")"
grep -q '^gpu-a .*2/2 nvidia.com/gpu' "$WORKDIR/inspect-nodes.txt" || fail "inspect: gpu-a not full: $(cat "$WORKDIR/inspect-nodes.txt")"
chrome() { chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --user-data-dir="$WORKDIR/chromium-profile" "$@" 2>>"$CLUSTER_LOG_DIR/chromium.log"; }
page_url="http://127.0.0.1:$DAEMON_ADMIN/ui?pod=default/fill-5"
chrome --dump-dom "$page_url" >"$WORKDIR/ui.html" || fail "chromium could not open $page_url"
for want in '>gpu-a<' '>gpu-b<' 'Why default/fill-5 waits' 'Placement quality' '<svg'; do
  grep -q -- "$want" "$WORKDIR/ui.html" || fail "the page as Chromium rendered it lacks $want ($WORKDIR/ui.html)"
done
chrome --screenshot="$WORKDIR/ui.png" --window-size=1400,1100 "$page_url" >/dev/null || fail "chromium took no screenshot"
[[ -s "$WORKDIR/ui.png" && "$(head -c 8 "$WORKDIR/ui.png" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]] ||
  fail "the screenshot $WORKDIR/ui.png is empty or not a PNG"
step "status page screenshot: $WORKDIR/ui.png ($(stat -c %s "$WORKDIR/ui.png") bytes)"

step "scenario 1: force-deleting a bound pod lets it schedule"
freed="$(node_of fill-1)"
cluster_delete_pod default fill-1
wait_until 90 "fill-5 bound" scheduled fill-5
[[ "$(node_of fill-5)" == "$freed" ]] || fail "fill-5 went to $(node_of fill-5), want the freed node $freed"
assert_no_overcommit

step "scenario 2: a pod without managed resources schedules without the daemon"
K apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: plain-cpu, namespace: default}
spec:
  automountServiceAccountToken: false
  containers:
  - name: main
    image: registry.invalid/plain:latest
    resources: {requests: {cpu: 100m}}
EOF
cluster_wait_pod_scheduled default plain-cpu 60 >/dev/null
if grep -q "plain-cpu" "$DAEMON_LOG"; then fail "the daemon was called for plain-cpu"; fi
delete_all_pods

step "scenario 2b: /bind acts only for pending pods of the configured schedulers that need something managed, on nodes kube-scheduler could choose"
# Pods of scheduler "parked" are left alone by kube-scheduler; the daemon is told it may bind them.
printf 'kubernetes:\n  scheduler_names: [default-scheduler, parked]\n' >"$WORKDIR/daemon-parked.yaml"
stop_daemon
start_daemon "$WORKDIR/daemon-parked.yaml"
parked_pod() {  # NAME SCHEDULER GPUS (0: a CPU-only pod) [SPEC_LINE, e.g. a nodeSelector]
  local resources='nvidia.com/gpu: "'"$3"'"'
  [[ "$3" == 0 ]] && resources='cpu: 100m'
  K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  schedulerName: $2
  ${4:-}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.2
    resources:
      limits: {$resources}
EOF
}
parked_pod other-gpu tenant-scheduler 1
parked_pod parked-cpu parked 0
parked_pod parked-gpu parked 1
parked_pod parked-selective parked 1 "nodeSelector: {team: a}"
parked_pod parked-unfiltered parked 1
bind_unfiltered() {  # POD PORT: binds to gpu-a without a /filter first; prints the answer body
  local uid
  uid="$(K get pod "$1" -o jsonpath='{.metadata.uid}')"
  curl -s -XPOST "http://127.0.0.1:$2/scheduler/bind" \
    -d "{\"PodName\":\"$1\",\"PodNamespace\":\"default\",\"PodUID\":\"$uid\",\"Node\":\"gpu-a\"}"
}
bind_via_daemon() {  # POD PORT: /filter with gpu-a, as kube-scheduler sends it the nodes its filters passed, then /bind there
  curl -s -o /dev/null -XPOST "http://127.0.0.1:$2/scheduler/filter" \
    -d "{\"Pod\":$(K get pod "$1" -o json),\"NodeNames\":[\"gpu-a\"]}"
  bind_unfiltered "$1" "$2"
}
answer="$(bind_via_daemon other-gpu "$DAEMON_PORT")"
[[ "$answer" == *"not in kubernetes.scheduler_names"* ]] || fail "binding another scheduler's pod: $answer"
answer="$(bind_via_daemon parked-cpu "$DAEMON_PORT")"
[[ "$answer" == *"needs no GPU and no managed volume"* ]] || fail "binding a pod that needs nothing managed: $answer"
answer="$(bind_unfiltered parked-unfiltered "$DAEMON_PORT")"
[[ "$answer" == *"was not filtered by scheduler-extender recently"* ]] || fail "binding a pod never filtered: $answer"
answer="$(bind_via_daemon parked-selective "$DAEMON_PORT")"
[[ "$answer" == *"nodeSelector team=a: node has no label team"* ]] || fail "binding a pod to a node its nodeSelector does not match: $answer"
[[ -z "$(node_of other-gpu)" && -z "$(node_of parked-cpu)" && -z "$(node_of parked-selective)" && -z "$(node_of parked-unfiltered)" ]] ||
  fail "a refused pod was bound"
code="$(curl -s -o /dev/null -w '%{http_code}' -XPOST "http://127.0.0.1:$DAEMON_ADMIN/scheduler/bind" -d '{}')"
[[ "$code" == 404 ]] || fail "the admin listener answered a verb with $code"
answer="$(bind_via_daemon parked-gpu "$DAEMON_PORT")"
[[ "$answer" == '{"Error":""}' ]] || fail "binding a pending GPU pod of a configured scheduler: $answer"
parked_gpu_on_a() { [[ "$(node_of parked-gpu)" == gpu-a ]]; }
wait_until 30 "parked-gpu bound to gpu-a" parked_gpu_on_a
# The exposition is read whole before grep: `curl | grep -q` fails under pipefail once grep stops
# reading before curl's last write (a body over curl's 16 KiB write size).
metrics="$(curl -sf "http://127.0.0.1:$DAEMON_ADMIN/metrics")" || fail "GET /metrics failed"
refusals() { grep -E 'refusals_total\{.*verb="bind"' <<<"$metrics" | grep -v ' 0$' | tr '\n' ' '; }
grep -q 'scheduler_extender_refusals_total{reason="other_scheduler",verb="bind"} 1' <<<"$metrics" ||
  fail "the refusal is not counted: $(refusals)"
grep -q 'scheduler_extender_refusals_total{reason="node_ineligible",verb="bind"} 1' <<<"$metrics" ||
  fail "the node_ineligible refusal is not counted: $(refusals)"
grep -q 'scheduler_extender_refusals_total{reason="not_filtered",verb="bind"} 1' <<<"$metrics" ||
  fail "the not_filtered refusal is not counted: $(refusals)"
grep -q "refused (other_scheduler)" "$DAEMON_LOG" || fail "the refusal is not logged"
uid="$(K get pod parked-selective -o jsonpath='{.metadata.uid}')"
answer="$(curl -s -XPOST "http://127.0.0.1:$DAEMON_PORT/scheduler/bind" \
  -d "{\"PodName\":\"parked-gpu\",\"PodNamespace\":\"default\",\"PodUID\":\"$uid\",\"Node\":\"gpu-b\"}")"
[[ "$answer" == '{"Error":"'?* && -z "$(node_of parked-selective)" ]] || fail "a /bind naming another pod with this UID: $answer"
step "scenario 2b: through kube-scheduler, a pod with nodeSelector team=a binds to the node labelled so"
K label node gpu-b team=a >/dev/null
parked_pod team-a default-scheduler 1 "nodeSelector: {team: a}"
cluster_wait_pod_scheduled default team-a 60 >/dev/null
[[ "$(node_of team-a)" == gpu-b ]] || fail "team-a landed on '$(node_of team-a)', not gpu-b (team=a)"
K label node gpu-b team- >/dev/null
delete_all_pods
stop_daemon
start_daemon

##### Scenario 4: kill -9 mid-run.
step "scenario 4: eight pods for four GPUs; the daemon is killed -9 right after its first bind"
killer_pid=""
(
  deadline=$((SECONDS + 60))
  until grep -q "bind default/burst-" "$DAEMON_LOG"; do
    ((SECONDS < deadline)) || exit 1
    sleep 0.02
  done
  kill -KILL "$DAEMON_PID"
) 2>/dev/null &
killer_pid=$!
for i in 1 2 3 4 5 6 7 8; do cluster_gpu_pod_manifest "burst-$i" 1 default; echo "---"; done | K apply -f - >/dev/null
wait "$killer_pid" || fail "no bind for the burst within 60s"
stop_daemon KILL
before="$(bound_count)"
step "scenario 4: daemon killed with $before pod(s) bound; restarting it"
start_daemon
grep -q "pods: $before bound" "$DAEMON_LOG" || fail "the restarted daemon did not rebuild the $before bound pods from the API server"
# Pods that failed while the daemon was down wait in kube-scheduler's unschedulable queue (up to a
# minute in v1.20); a node label change is a cluster event that sends them back at once.
K label node gpu-a e2e.scheduler-extender.io/nudge=1 --overwrite >/dev/null
wait_until 120 "4 pods bound after the restart" count_is 4
sleep 5  # give the scheduler time to (wrongly) place a fifth
[[ "$(bound_count)" == 4 ]] || fail "$(bound_count) pods bound, want 4"
assert_no_overcommit
delete_all_pods

##### Scenario 5b: objects (nodeCacheCapable: false), the scheduler binds.
step "scenario 5: nodeCacheCapable false, kube-scheduler binds"
use_scheduler objects-scheduler-binds --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
  --node-cache-capable false --bind-verb '' --ignored-by-scheduler false
for i in 1 2 3 4 5; do gpu_pod "obj-$i" 1; done
wait_until 60 "4 pods bound" count_is 4
sleep 3
[[ "$(bound_count)" == 4 ]] || fail "$(bound_count) pods bound, want 4"
assert_no_overcommit
grep -q "filter default/obj-1: nodes 2 -> [12] \[objects\]" "$DAEMON_LOG" || fail "no filter call in the Nodes form for obj-1"
if grep -q "bind default/obj-" "$DAEMON_LOG"; then fail "the daemon was asked to bind although bindVerb is off"; fi
delete_all_pods

##### Scenario 3: volume balance spreads WaitForFirstConsumer claims.
step "scenario 3: a third node; pools on all three; volume balance decides"
cluster_add_gpu_node gpu-c 2
for n in gpu-a gpu-b gpu-c; do K annotate node "$n" --overwrite scheduler-extender.io/pool.local=1Ti >/dev/null; done
K apply -f - >/dev/null <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-storage}
provisioner: e2e.scheduler-extender.io/local
volumeBindingMode: WaitForFirstConsumer
EOF
cat >"$WORKDIR/volume-balance.yaml" <<'EOF'
scoring:
  volume_balance_weight: 1
  gpu_packing_weight: 0
EOF
stop_daemon
start_daemon "$WORKDIR/volume-balance.yaml"
use_scheduler volumes --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
  --node-cache-capable true --bind-verb bind --weight 10 --ignored-by-scheduler true
node_selected() { [[ -n "$(K get pvc "$1" -o jsonpath='{.metadata.annotations.volume\.kubernetes\.io/selected-node}')" ]]; }
daemon_counts_volumes() { curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/state" | jq -e "[.nodes[].volumes] | add == $1" >/dev/null; }
for i in 1 2 3 4 5 6; do
  K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-$i, namespace: default}
spec:
  storageClassName: local-storage
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: vol-$i, namespace: default}
spec:
  automountServiceAccountToken: false
  containers:
  - name: main
    image: registry.invalid/cuda-test:latest
    resources: {limits: {nvidia.com/gpu: "1"}}
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data-$i}
EOF
  wait_until 60 "claim data-$i to get a selected node" node_selected "data-$i"
  # The next pod must see this claim counted on its node.
  wait_until 30 "the daemon to count claim data-$i" daemon_counts_volumes "$i"
done
spread="$(K get pvc -o json | jq -c '[.items[].metadata.annotations["volume.kubernetes.io/selected-node"]] | group_by(.) | map({(.[0]): length}) | add')"
step "scenario 3: selected nodes per claim: $spread"
[[ "$(jq '[.[]] | (max - min)' <<<"$spread")" == 0 && "$(jq 'length' <<<"$spread")" == 3 ]] ||
  fail "claims are not spread evenly over the three nodes: $spread"
grep -q 'prioritize default/vol-2: nodes 3 -> 3' "$DAEMON_LOG" || fail "prioritize was not called for vol-2"
K delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true
for i in 1 2 3 4 5 6; do K patch pvc "data-$i" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true; done
K delete pvc --all --wait=false >/dev/null 2>&1 || true
wait_until 60 "pods deleted" no_pods

##### Scenario 6: TLS, client certificates required.
step "scenario 6: HTTPS with client verification"
cluster_gen_serving_cert scheduler-extender "IP:127.0.0.1,DNS:localhost"
PKI="$CLUSTER_PKI_DIR"
openssl req -newkey rsa:2048 -nodes -sha256 -keyout "$PKI/scheduler-client.key" -out "$PKI/scheduler-client.csr" \
  -subj "/CN=kube-scheduler" >>"$CLUSTER_LOG_DIR/pki.log" 2>&1
openssl x509 -req -sha256 -days 365 -in "$PKI/scheduler-client.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
  -CAcreateserial -out "$PKI/scheduler-client.crt" \
  -extfile <(printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n') \
  >>"$CLUSTER_LOG_DIR/pki.log" 2>&1
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -keyout "$PKI/stranger.key" -out "$PKI/stranger.crt" \
  -subj "/CN=stranger" >>"$CLUSTER_LOG_DIR/pki.log" 2>&1
cat >"$WORKDIR/tls.yaml" <<EOF
server:
  tls:
    cert_file: $PKI/scheduler-extender.crt
    key_file: $PKI/scheduler-extender.key
    client_ca_file: $PKI/ca.crt
EOF
stop_daemon
start_daemon "$WORKDIR/tls.yaml"
url="https://127.0.0.1:$DAEMON_PORT/healthz"
curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/scheduler-client.crt" --key "$PKI/scheduler-client.key" "$url" >/dev/null ||
  fail "a client with the trusted certificate was refused"
if curl -sf --cacert "$PKI/ca.crt" "$url" >/dev/null 2>&1; then fail "a client without a certificate was served"; fi
if curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/stranger.crt" --key "$PKI/stranger.key" "$url" >/dev/null 2>&1; then
  fail "a client with an untrusted certificate was served"
fi
if curl -sf "http://127.0.0.1:$DAEMON_PORT/healthz" >/dev/null 2>&1; then fail "plain HTTP was served on the TLS port"; fi
use_scheduler tls --extender-url "https://127.0.0.1:$DAEMON_PORT/scheduler" --enable-https true \
  --node-cache-capable true --bind-verb bind --ignored-by-scheduler true
sed -i "s|^    caFile: .*|&\n    certFile: \"$PKI/scheduler-client.crt\"\n    keyFile: \"$PKI/scheduler-client.key\"|" \
  "$WORKDIR/scheduler-tls.yaml"
grep -q certFile "$WORKDIR/scheduler-tls.yaml" || fail "could not add the client certificate to the scheduler config"
cluster_stop_scheduler
cluster_start_scheduler "$WORKDIR/scheduler-tls.yaml" "$CLUSTER_LOG_DIR/kube-scheduler-tls.log"
gpu_pod tls-1 1
node="$(cluster_wait_pod_scheduled default tls-1 60)"
grep -q "bind default/tls-1: nodes 1 -> 1" "$DAEMON_LOG" || fail "tls-1 was not bound through the daemon over mutual TLS"
step "scenario 6: tls-1 bound to $node through the daemon over mutual TLS"

##### Scenario 7: the misconfiguration that overcommits is detected and named.
# nodeCacheCapable false, no bindVerb, ignoredByScheduler true: kube-scheduler binds by itself and
# counts no GPU, the daemon learns of placements only from the watch. A burst of 100 one-GPU pods
# on 10 nodes of 8 GPUs overcommits some nodes; the daemon must log each one once, naming the
# cause, and count it in /metrics.
scenario_overcommit_burst() {
  step "scenario 7: 100 one-GPU pods on 10 nodes of 8 GPUs, scheduler binding without bindVerb, ignoredByScheduler true"
  delete_all_pods
  K delete node gpu-a gpu-b gpu-c --wait=false >/dev/null
  local i
  for i in 0 1 2 3 4 5 6 7 8 9; do cluster_add_gpu_node "burst-node-$i" 8; done
  stop_daemon
  start_daemon
  use_scheduler overcommit --extender-url "http://127.0.0.1:$DAEMON_PORT/scheduler" \
    --node-cache-capable false --bind-verb '' --ignored-by-scheduler true
  for i in $(seq 1 100); do cluster_gpu_pod_manifest "oc-$i" 1 default; echo "---"; done | K apply -f - >/dev/null
  # Settled: the bound count stays the same for 5 s (the rest wait in the unschedulable queue).
  local last=-1 now stable=0 deadline=$((SECONDS + 75))
  while ((stable < 10 && SECONDS < deadline)); do
    now="$(bound_count)"
    if [[ "$now" == "$last" ]]; then stable=$((stable + 1)); else stable=0; last="$now"; fi
    sleep 0.5
  done
  local over
  over="$(K get pods -o json | jq -r '
    [.items[] | select(.spec.nodeName != null and .spec.nodeName != "") | .spec.nodeName]
    | group_by(.) | map(select(length > 8) | "\(.[0]) \(length)") | .[]')"
  step "scenario 7: $last pods bound; overcommitted nodes (node pods): ${over//$'\n'/, }"
  if [[ -z "$over" ]] && ((CLUSTER_KUBE_MINOR >= 25)); then
    # A race on every version; on v1.37.2 this burst lost it in some runs (exactly 80 bound)
    # and won it in others (6 nodes overcommitted). The reporting is always checked on v1.20.
    step "scenario 7: on $CLUSTER_KUBE_VERSION the burst overcommitted no node ($last bound); the reporting is checked on v1.20 (make e2e-v1.20)"
    assert_no_overcommit
    delete_all_pods
    return 0
  fi
  [[ -n "$over" ]] || fail "the burst overcommitted no node; the scenario did not reproduce the misconfiguration"
  local node pods
  while read -r node pods; do
    logged() { grep -q "node $1 is overcommitted: .* but the node has 8 allocatable" "$DAEMON_LOG"; }
    wait_until 10 "the daemon to log node $node ($pods pods) as overcommitted" logged "$node"
    [[ "$(grep -c "node $node is overcommitted: " "$DAEMON_LOG")" == 1 ]] || fail "node $node was reported more than once"
  done <<<"$over"
  local first
  first="$(grep -m1 "is overcommitted" "$DAEMON_LOG")" # (no `| head`: a SIGPIPE fails the pipeline)
  [[ "$first" == *"ignoredByScheduler: true"*"bindVerb: bind"* ]] ||
    fail "the overcommit log line does not name the cause and the fix"
  local counted
  counted="$(curl -sf "http://127.0.0.1:$DAEMON_ADMIN/metrics" |
    awk '$1 == "scheduler_extender_overcommit_episodes_total{kind=\"gpu\"}" {print $2}')"
  [[ "$counted" == "$(wc -l <<<"$over")" ]] || fail "overcommit episodes counted: '$counted', want $(wc -l <<<"$over")"
  node="$(head -n1 <<<"$over" | cut -d' ' -f1)"
  curl -sf "http://127.0.0.1:$DAEMON_ADMIN/debug/nodes/$node" | jq -e '.overcommitted[0].bound > 8' >/dev/null ||
    fail "/debug/nodes/$node does not show the overcommit"
  delete_all_pods
}
scenario_overcommit_burst

stop_daemon
grep -q "received SIGTERM" "$DAEMON_LOG" || fail "the daemon did not log its shutdown"
E2E_OK=1
step "PASS (logs: $CLUSTER_LOG_DIR)"
