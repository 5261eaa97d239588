#!/usr/bin/env bash
# The Helm chart and the plain manifests against a real Kubernetes API server (E2E_KUBE: current,
# the default, or 1.20), then the daemon in kubernetes mode behind the chart's own second-scheduler
# configuration, and (current versions) behind deploy/scheduler-config/default-scheduler.yaml.
#
#   tests/e2e/chart-install.sh [EXTENDER_BINARY]
#
# Phases (each reports PASS/FAIL; the chart phases run first and do not need the daemon):
#   1 helm       helm install the chart (second scheduler, NetworkPolicy, and by default two
#                replicas with leader election and a PDB; a TLS release from inline PEM; one with
#                generated certificates, kept by helm upgrade and made anew once removed) into the API server;
#                every object is there (kubectl get), the Service selects the leader label; the
#                ServiceAccounts' rights are exactly what the daemon and the scheduler need
#                (SubjectAccessReview), the daemon's Lease rights limited to its one Lease
#   2 manifests  every Kubernetes object under deploy/ passes `kubectl apply --dry-run=server`
#   3 render     the second scheduler's KubeSchedulerConfiguration and the daemon's config as the
#                release installed in phase 1 rendered them (`helm get manifest`: image tag and
#                config apiVersion chosen from the API server's .Capabilities, as on a user's cluster)
#   4 daemon     the daemon (kubernetes mode, on loopback, with the chart's rendered daemon config
#                and the chart ServiceAccount's token) answers /readyz; with POD_NAME/POD_NAMESPACE/
#                POD_UID of a stand-in pod object (there is no kubelet) it takes the chart's Lease,
#                labels that pod as the leader and takes the label off a stale one; kube-scheduler (the built
#                binary standing in for the image, whose tag must name the same version) runs
#                the rendered config (only urlPrefix, clientConnection, leader election and the
#                healthz/metrics addresses changed) with the chart scheduler ServiceAccount's
#                token; GPU pods with schedulerName gpu-scheduler get bound through the extender
#   5 default    (kubescheduler.config.k8s.io/v1 versions) kube-scheduler runs
#                deploy/scheduler-config/default-scheduler.yaml (only urlPrefix's host, the
#                kubeconfig and leader election changed) as the default scheduler; a GPU pod
#                without schedulerName is bound through the extender
#   6 ha         (versions with kube-controller-manager in $KUBE_BIN: the current one) the chart
#                with its defaults (two replicas, leader election, PDB maxUnavailable 1): rollout
#                status reaches two Ready replicas, one leads (the label) and binds a GPU pod;
#                `kubectl rollout restart` completes; `kubectl drain` of the leader's node
#                completes within the PDB; after each a GPU pod binds through the leader.
#                lib/pod_runner.py plays the kubelet for the daemon pods, lib/leader_proxy.py the
#                leader-only Service
#
# Environment:
#   EXTENDER_BINARY          daemon binary (default: build/scheduler-extender; or the first argument)
#   E2E_WORKDIR              work directory (default: a new /tmp dir; kept, with logs)
#   HELM                     a helm 3 binary (default: tests/chart/get-helm.sh $TOOLS_DIR)
#   TOOLS_DIR                where get-helm.sh caches Helm (default: build/tools)
#   CHART_E2E_PHASES         all (default) | chart (phases 1-3 only)
#   CHART_E2E_IDENTITY       chart (default: the daemon and the scheduler use tokens of the chart's
#                            ServiceAccounts, so the chart's RBAC is what is tested) | lib (the e2e
#                            library's EXTENDER_KUBECONFIG / SCHEDULER_KUBECONFIG)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CHART="$REPO/charts/scheduler-extender"
T0=$SECONDS

EXTENDER_BINARY="${1:-${EXTENDER_BINARY:-$REPO/build/scheduler-extender}}"
PHASES="${CHART_E2E_PHASES:-all}"
IDENTITY="${CHART_E2E_IDENTITY:-chart}"
RELEASE=se
NS=gpu-system
FULLNAME=se-scheduler-extender
SCHED_FULLNAME=se-scheduler-extender-scheduler
SCHED_NAME=gpu-scheduler
LEADER_LABEL=scheduler-extender.io/leader

step() { printf '[chart-e2e] %s\n' "$*" >&2; }
die() { printf '[chart-e2e] ERROR: %s\n' "$*" >&2; exit 1; }

# ---- checks and phase results -------------------------------------------------------------------
PASSED=0 FAILED=0 PHASE="" PHASE_FAILED=0
declare -a SUMMARY=()
check() { # check "what" CMD...: run CMD quietly, record the outcome, keep going
  local what="$1" out
  shift
  if out="$("$@" 2>&1)"; then
    PASSED=$((PASSED + 1))
    printf '  ok:   %s\n' "$what" >&2
  else
    FAILED=$((FAILED + 1)) PHASE_FAILED=$((PHASE_FAILED + 1))
    printf '  FAIL: %s\n' "$what" >&2
    [[ -n "$out" ]] && printf '%s\n' "$out" | tail -n 15 | sed 's/^/        /' >&2
  fi
  return 0
}
fail() { check "$1" false; }
phase_begin() { PHASE="$1" PHASE_FAILED=0; step "phase $PHASE"; }
phase_end() { # phase_end: record the phase; stop the script if it failed
  if ((PHASE_FAILED)); then
    SUMMARY+=("FAIL  $PHASE ($PHASE_FAILED failed check(s))")
    exit 1
  fi
  SUMMARY+=("PASS  $PHASE")
  PHASE=""
}
on_exit() {
  local rc=$?
  if [[ -n "$PHASE" ]]; then
    if ((PHASE_FAILED == 0)); then
      FAILED=$((FAILED + 1))
      SUMMARY+=("FAIL  $PHASE (aborted: exit status $rc)")
    fi
  fi
  step "summary after $((SECONDS - T0))s (work dir ${WORKDIR:-?}, logs ${CLUSTER_LOG_DIR:-?}):"
  local s
  for s in "${SUMMARY[@]+"${SUMMARY[@]}"}"; do printf '[chart-e2e]   %s\n' "$s" >&2; done
  printf '%d passed, %d failed\n' "$PASSED" "$FAILED"
}

# ---- tools --------------------------------------------------------------------------------------
step "checking host packages"
if [[ "$(id -u)" == 0 ]]; then
  "$HERE/lib/install-deps.sh"
else
  E2E_DEPS_CHECK_ONLY=1 "$HERE/lib/install-deps.sh"
fi
HELM_BIN="$("$REPO/tests/chart/get-helm.sh" "${TOOLS_DIR:-$REPO/build/tools}")"
PY=""
for p in "$(command -v python3 || true)" /usr/bin/python3; do
  if [[ -n "$p" && -x "$p" ]] && "$p" -c 'import yaml' 2>/dev/null; then PY="$p"; break; fi
done
if [[ -z "$PY" ]]; then
  [[ "$(id -u)" == 0 ]] || die "PyYAML is missing: apt-get install python3-yaml"
  step "installing python3-yaml"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-yaml >&2
  PY=/usr/bin/python3
fi
step "helm: $HELM_BIN; building or reusing Kubernetes (E2E_KUBE=${E2E_KUBE:-current})"
KUBE_BIN="$("$HERE/lib/kube-bin.sh" | tail -n1)"
export KUBE_BIN
KV="$("$KUBE_BIN/kube-apiserver" --version | awk '{print $2}')" # e.g. v1.37.2
KMINOR="${KV#v1.}" KMINOR="${KMINOR%%.*}"
SCHED_CFG_API=v1 PDB_API=v1
((KMINOR >= 25)) || SCHED_CFG_API=v1beta1 # what the chart must pick for v1.20
((KMINOR >= 21)) || PDB_API=v1beta1

WORKDIR="${E2E_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/scheduler-extender-chart-e2e.XXXXXX")}"
mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"

# shellcheck source=lib/cluster.sh
source "$HERE/lib/cluster.sh"
cluster_register_cleanup on_exit
# Generic ephemeral volumes (deploy/examples/gpu-local-volume-pod.yaml) are alpha in 1.20 (GA
# in 1.23, where the gate is gone).
if ((KMINOR < 23)); then
  export CLUSTER_APISERVER_EXTRA_ARGS="${CLUSTER_APISERVER_EXTRA_ARGS:-} --feature-gates=GenericEphemeralVolume=true"
fi
cluster_up "$WORKDIR"
cluster_bootstrap

helm() { "$HELM_BIN" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }
k() { cluster_kubectl "$@"; }

# sar USER VERB RESOURCE[/SUB] GROUP NAMESPACE [NAME]: SubjectAccessReview (the SA's groups included).
sar() {
  local user="$1" verb="$2" res="${3%%/*}" sub="" group="$4" ns="$5" name="${6:-}" body
  [[ "$3" == */* ]] && sub="${3#*/}"
  body="$(jq -n -c --arg u "$user" --arg v "$verb" --arg r "$res" --arg s "$sub" --arg g "$group" \
    --arg n "$ns" --arg name "$name" \
    '{apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview",
      spec: {user: $u, groups: ["system:serviceaccounts", ("system:serviceaccounts:" + ($u | split(":")[2])), "system:authenticated"],
             resourceAttributes: {verb: $v, resource: $r, subresource: $s, group: $g, namespace: $n, name: $name}}}')"
  [[ "$(cluster_api POST /apis/authorization.k8s.io/v1/subjectaccessreviews "$body" | jq -r .status.allowed)" == true ]]
}
denied() { ! sar "$@"; }
# jsonpath_matches REGEX KUBECTL-ARGS...: some line of kubectl's output matches REGEX (grep -E).
jsonpath_matches() {
  local re="$1" out
  shift
  out="$(k "$@")" || return 1
  grep -Eq -- "$re" <<<"$out" || { printf 'got: %s\n' "$out"; return 1; }
}
secret_keys() { # secret_keys NS NAME: the secret's data keys, comma-separated
  k -n "$1" get secret "$2" -o json | jq -r '.data | keys | join(",")'
}
absent() { ! k "$@" >/dev/null 2>&1; }

# ---- phase 1: helm install ----------------------------------------------------------------------
phase_begin "1 helm install into the $KV API server"
# Default replicas (2, leader election) and PodDisruptionBudget (maxUnavailable 1).
check "helm install $RELEASE (second scheduler, NetworkPolicy; 2 replicas, PDB by default) into namespace $NS" \
  helm install "$RELEASE" "$CHART" --namespace "$NS" --create-namespace \
  --set secondScheduler.enabled=true --set networkPolicy.enabled=true
helm get notes "$RELEASE" -n "$NS" >"$WORKDIR/notes.txt" 2>&1 || true
check "NOTES.txt tells how to check readiness, opt in, reach the debug view" \
  grep -q -e "rollout status deployment/$FULLNAME" -e "schedulerName: $SCHED_NAME" "$WORKDIR/notes.txt"
check "NOTES.txt: port-forward to the admin port" grep -q "port-forward deployment/$FULLNAME 8889:8889" "$WORKDIR/notes.txt"
check "NOTES.txt: who leads (pods with the leader label)" grep -q "get pods -l $LEADER_LABEL=true" "$WORKDIR/notes.txt"
check "NOTES.txt: who leads (the Lease's holder)" grep -q "get lease $FULLNAME" "$WORKDIR/notes.txt"
for obj in "serviceaccount/$FULLNAME" "configmap/$FULLNAME" "service/$FULLNAME" "deployment/$FULLNAME" \
  "networkpolicy/$FULLNAME" "poddisruptionbudget/$FULLNAME" \
  "role/$FULLNAME-leader-election" "rolebinding/$FULLNAME-leader-election" \
  "serviceaccount/$SCHED_FULLNAME" "configmap/$SCHED_FULLNAME" "deployment/$SCHED_FULLNAME" \
  "role/$SCHED_FULLNAME-leader-election" "rolebinding/$SCHED_FULLNAME-leader-election"; do
  check "kubectl get $obj -n $NS" k -n "$NS" get "$obj"
done
for obj in "clusterrole/$FULLNAME" "clusterrolebinding/$FULLNAME" \
  "clusterrolebinding/$SCHED_FULLNAME-kube-scheduler" "clusterrolebinding/$SCHED_FULLNAME-volume-scheduler"; do
  check "kubectl get $obj" k get "$obj"
done
check "kubectl get rolebinding/$SCHED_FULLNAME-auth-reader -n kube-system" k -n kube-system get "rolebinding/$SCHED_FULLNAME-auth-reader"
check "the PodDisruptionBudget went in as policy/$PDB_API (1.20 has no policy/v1)" \
  k -n "$NS" get "poddisruptionbudgets.$PDB_API.policy/$FULLNAME" -o name
check "Service $FULLNAME has a ClusterIP and the scheduler port only (http 8888)" jsonpath_matches \
  '^10\.0\.0\.[0-9]+ http 8888$' -n "$NS" get service "$FULLNAME" \
  -o 'jsonpath={.spec.clusterIP} {.spec.ports[*].name} {.spec.ports[*].port}'
check "Deployment $FULLNAME: 2 replicas, RollingUpdate with maxSurge 1, maxUnavailable 0" jsonpath_matches \
  '^2 RollingUpdate 1 0$' -n "$NS" get deployment "$FULLNAME" -o 'jsonpath={.spec.replicas} {.spec.strategy.type} {.spec.strategy.rollingUpdate.maxSurge} {.spec.strategy.rollingUpdate.maxUnavailable}'
check "Deployment $FULLNAME: POD_NAME, POD_NAMESPACE, POD_UID from the downward API" jsonpath_matches \
  '^POD_NAME=metadata\.name POD_NAMESPACE=metadata\.namespace POD_UID=metadata\.uid' -n "$NS" get deployment "$FULLNAME" \
  -o 'jsonpath={range .spec.template.spec.containers[0].env[*]}{.name}={.valueFrom.fieldRef.fieldPath} {end}'
check "Deployment $FULLNAME: preferred pod anti-affinity (weight 100, kubernetes.io/hostname)" jsonpath_matches \
  '^100 kubernetes\.io/hostname$' -n "$NS" get deployment "$FULLNAME" -o 'jsonpath={.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight} {.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey}'
selector_has_leader_label() { # selector_has_leader_label KIND JQ-PATH: "true" or "absent"
  k -n "$NS" get "$1" "$FULLNAME" -o json | jq -r --arg l "$LEADER_LABEL" "$2 | .[\$l] // \"absent\""
}
check "Service $FULLNAME selects $LEADER_LABEL=true (the leader's pod only)" \
  test "$(selector_has_leader_label service .spec.selector)" == true
check "Deployment $FULLNAME's selector has no leader label (it owns leader and standby)" \
  test "$(selector_has_leader_label deployment .spec.selector.matchLabels)" == absent
check "PodDisruptionBudget $FULLNAME: maxUnavailable 1, no minAvailable" jsonpath_matches '^1/$' \
  -n "$NS" get poddisruptionbudget "$FULLNAME" -o 'jsonpath={.spec.maxUnavailable}/{.spec.minAvailable}'
check "the stored ConfigMap names Lease $FULLNAME (ha.lease_name)" jsonpath_matches "^ +lease_name: $FULLNAME\$" \
  -n "$NS" get configmap "$FULLNAME" -o 'jsonpath={.data.config\.yaml}'
check "the stored ConfigMap holds mode: kubernetes" jsonpath_matches '^mode: kubernetes$' \
  -n "$NS" get configmap "$FULLNAME" -o 'jsonpath={.data.config\.yaml}'
check "the stored scheduler ConfigMap is kubescheduler.config.k8s.io/$SCHED_CFG_API" \
  jsonpath_matches "^apiVersion: kubescheduler.config.k8s.io/$SCHED_CFG_API\$" \
  -n "$NS" get configmap "$SCHED_FULLNAME" -o 'jsonpath={.data.scheduler-config\.yaml}'
check "the stored scheduler Deployment runs registry.k8s.io/kube-scheduler:$KV (the API server's version)" \
  jsonpath_matches "^registry\\.k8s\\.io/kube-scheduler:${KV//./\\.}\$" \
  -n "$NS" get deployment "$SCHED_FULLNAME" -o 'jsonpath={.spec.template.spec.containers[0].image}'

SA="system:serviceaccount:$NS:$FULLNAME"
for a in "list nodes ''" "watch nodes ''" "get pods ''" "watch pods ''" "list persistentvolumeclaims ''" \
  "create pods/binding ''" "watch persistentvolumes ''" "list storageclasses storage.k8s.io" "watch csistoragecapacities storage.k8s.io" "watch csidrivers storage.k8s.io" \
  "watch resourceslices resource.k8s.io" "list resourceclaims resource.k8s.io" "watch deviceclasses resource.k8s.io"; do
  eval "set -- $a"
  check "daemon SA may $1 $3${3:+ }$2" sar "$SA" "$1" "$2" "$3" ""
done
for a in "delete pods ''" "create pods ''" "patch nodes ''" "list secrets ''" "get configmaps ''" \
  "patch persistentvolumes ''" "create events ''" "update pods/status ''"; do
  eval "set -- $a"
  check "daemon SA may NOT $1 $2" denied "$SA" "$1" "$2" "$3" ""
done
# Leader election: the one Lease by name, create (not limitable by name), the leader label on pods.
check "daemon SA may get lease $FULLNAME in $NS" sar "$SA" get leases coordination.k8s.io "$NS" "$FULLNAME"
check "daemon SA may update lease $FULLNAME in $NS" sar "$SA" update leases coordination.k8s.io "$NS" "$FULLNAME"
check "daemon SA may create leases in $NS" sar "$SA" create leases coordination.k8s.io "$NS"
check "daemon SA may patch pods in $NS (the leader label)" sar "$SA" patch pods "" "$NS"
check "daemon SA may list pods in $NS" sar "$SA" list pods "" "$NS"
check "daemon SA may NOT update another lease (other-lease in $NS)" denied "$SA" update leases coordination.k8s.io "$NS" other-lease
check "daemon SA may NOT get another lease (other-lease in $NS)" denied "$SA" get leases coordination.k8s.io "$NS" other-lease
check "daemon SA may NOT update lease $FULLNAME in kube-system" denied "$SA" update leases coordination.k8s.io kube-system "$FULLNAME"
check "daemon SA may NOT create leases in kube-system" denied "$SA" create leases coordination.k8s.io kube-system
check "daemon SA may NOT delete lease $FULLNAME" denied "$SA" delete leases coordination.k8s.io "$NS" "$FULLNAME"
SSA="system:serviceaccount:$NS:$SCHED_FULLNAME"
check "scheduler SA may create pods/binding (system:kube-scheduler)" sar "$SSA" create pods/binding "" default
check "scheduler SA may list csinodes (system:kube-scheduler)" sar "$SSA" list csinodes storage.k8s.io ""
check "scheduler SA may patch persistentvolumes (system:volume-scheduler)" sar "$SSA" patch persistentvolumes "" ""
check "scheduler SA may read configmap extension-apiserver-authentication" \
  sar "$SSA" get configmaps "" kube-system extension-apiserver-authentication
check "scheduler SA may create leases in $NS" sar "$SSA" create leases coordination.k8s.io "$NS"
check "scheduler SA may update lease $SCHED_NAME in $NS" sar "$SSA" update leases coordination.k8s.io "$NS" "$SCHED_NAME"
check "scheduler SA may NOT update other leases (e.g. other-scheduler in $NS)" denied "$SSA" update leases coordination.k8s.io "$NS" other-scheduler

# A second release with TLS: the chart creates both secrets from inline PEM.
cluster_gen_serving_cert chart-e2e-extender "DNS:tls-scheduler-extender.gpu-tls.svc"
P="$CLUSTER_PKI_DIR"
check "helm install tls (TLS, client certificates, second scheduler) into namespace gpu-tls" \
  helm install tls "$CHART" --namespace gpu-tls --create-namespace \
  --set tls.enabled=true --set-file tls.cert="$P/chart-e2e-extender.crt" --set-file tls.key="$P/chart-e2e-extender.key" \
  --set-file tls.ca="$CLUSTER_CA_FILE" --set secondScheduler.enabled=true \
  --set-file secondScheduler.tls.cert="$P/chart-e2e-extender.crt" --set-file secondScheduler.tls.key="$P/chart-e2e-extender.key" \
  --set secondScheduler.schedulerName=gpu-tls-scheduler
check "secret tls-scheduler-extender-tls holds tls.crt, tls.key, ca.crt" \
  test "$(secret_keys gpu-tls tls-scheduler-extender-tls)" == ca.crt,tls.crt,tls.key
check "secret tls-scheduler-extender-scheduler-tls holds ca.crt, tls.crt, tls.key" \
  test "$(secret_keys gpu-tls tls-scheduler-extender-scheduler-tls)" == ca.crt,tls.crt,tls.key
check "the TLS release's scheduler config uses https, enableHTTPS and tlsConfig" jsonpath_matches \
  '^ +certFile: /etc/kubernetes/scheduler-extender-tls/tls.crt$' \
  -n gpu-tls get configmap tls-scheduler-extender-scheduler -o 'jsonpath={.data.scheduler-config\.yaml}'
check "helm upgrade $RELEASE (config change) succeeds" \
  helm upgrade "$RELEASE" "$CHART" --namespace "$NS" --reuse-values --set config.logging.level=debug
check "helm uninstall tls removes its objects" helm uninstall tls --namespace gpu-tls

# A third release with tls.enabled alone: the chart generates the CA and both certificates, keeps
# them across helm upgrade, and makes new ones (rolling the second scheduler) when they are removed.
secret_crt() { k -n gpu-gen get secret "$1" -o 'jsonpath={.data.tls\.crt}'; }
tls_stamp() { k -n gpu-gen get deployment gen-scheduler-extender-scheduler -o 'jsonpath={.spec.template.metadata.annotations.checksum/tls}'; }
check "helm install gen (tls.enabled only, second scheduler) into namespace gpu-gen" \
  helm install gen "$CHART" --namespace gpu-gen --create-namespace --set tls.enabled=true \
  --set secondScheduler.enabled=true --set secondScheduler.schedulerName=gpu-gen-scheduler
GEN_SERVER="$(secret_crt gen-scheduler-extender-tls)" GEN_CLIENT="$(secret_crt gen-scheduler-extender-scheduler-tls)"
GEN_STAMP="$(tls_stamp)"
check "generated secrets hold ca.crt, tls.crt, tls.key" \
  test "$(secret_keys gpu-gen gen-scheduler-extender-scheduler-tls)" == ca.crt,tls.crt,tls.key -a -n "$GEN_SERVER" -a -n "$GEN_STAMP"
check "helm upgrade gen succeeds" helm upgrade gen "$CHART" --namespace gpu-gen --reuse-values --set config.logging.level=debug
check "helm upgrade keeps the generated certificates and does not roll the second scheduler for them" \
  test "$(secret_crt gen-scheduler-extender-tls)" == "$GEN_SERVER" -a "$(secret_crt gen-scheduler-extender-scheduler-tls)" == "$GEN_CLIENT" \
  -a "$(tls_stamp)" == "$GEN_STAMP"
k -n gpu-gen delete secret gen-scheduler-extender-tls gen-scheduler-extender-scheduler-tls >/dev/null
check "helm upgrade after the secrets were removed succeeds" helm upgrade gen "$CHART" --namespace gpu-gen --reuse-values
check "removed secrets are generated anew and the second scheduler's pods roll (checksum/tls changed)" \
  test "$(secret_crt gen-scheduler-extender-scheduler-tls)" != "$GEN_CLIENT" -a -n "$(secret_crt gen-scheduler-extender-tls)" \
  -a "$(tls_stamp)" != "$GEN_STAMP"
check "helm uninstall gen removes its objects" helm uninstall gen --namespace gpu-gen
check "no ClusterRole tls-scheduler-extender left" absent get clusterrole tls-scheduler-extender
phase_end

# ---- phase 2: plain manifests -------------------------------------------------------------------
phase_begin "2 deploy/ manifests pass kubectl apply --dry-run=server"
cluster_create_namespace scheduler-extender
mapfile -t manifests < <(cd "$REPO" && find deploy -name '*.yaml' -not -path 'deploy/scheduler-config/*' | sort)
((${#manifests[@]} >= 6)) || fail "expected at least 6 object manifests under deploy/, found ${#manifests[@]}"
for f in "${manifests[@]}"; do
  if ((KMINOR < 21)) && grep -qx 'apiVersion: policy/v1' "$REPO/$f"; then
    # The plain manifests are written for 1.21+ (policy/v1 PodDisruptionBudget); their header tells
    # 1.20 users to change that apiVersion to policy/v1beta1: check that this is all it takes.
    sed 's#^apiVersion: policy/v1$#apiVersion: policy/v1beta1#' "$REPO/$f" >"$WORKDIR/${f//\//_}"
    check "kubectl apply --dry-run=server -f $f with its PodDisruptionBudget as policy/v1beta1 ($KV)" \
      k apply --dry-run=server -f "$WORKDIR/${f//\//_}"
    continue
  fi
  check "kubectl apply --dry-run=server -f $f" k apply --dry-run=server -f "$REPO/$f"
done
check "deploy/scheduler-config/ holds only KubeSchedulerConfiguration documents (not API objects)" \
  test "$(grep -h '^kind:' "$REPO"/deploy/scheduler-config/*.yaml | sort -u)" == "kind: KubeSchedulerConfiguration"
phase_end

# ---- phase 3: the rendered second-scheduler configuration ---------------------------------------
phase_begin "3 the second scheduler's configuration as rendered for the $KV API server"
RENDERED="$WORKDIR/rendered"
mkdir -p "$RENDERED"
helm get manifest "$RELEASE" --namespace "$NS" >"$RENDERED/all.yaml"
"$PY" - "$RENDERED" <<'PY'
import sys, yaml
out = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(f"{out}/all.yaml")) if d]
cms = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
open(f"{out}/scheduler-config.yaml", "w").write(cms["se-scheduler-extender-scheduler"]["data"]["scheduler-config.yaml"])
open(f"{out}/daemon-config.yaml", "w").write(cms["se-scheduler-extender"]["data"]["config.yaml"])
deps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
open(f"{out}/scheduler-image.txt", "w").write(deps["se-scheduler-extender-scheduler"]["spec"]["template"]["spec"]["containers"][0]["image"] + "\n")
PY
check "rendered scheduler config is kubescheduler.config.k8s.io/$SCHED_CFG_API" \
  grep -qx "apiVersion: kubescheduler.config.k8s.io/$SCHED_CFG_API" "$RENDERED/scheduler-config.yaml"
SCHED_IMAGE="$(cat "$RENDERED/scheduler-image.txt")"
binary_is_image_version() { [[ "$("$KUBE_BIN/kube-scheduler" --version)" == "Kubernetes ${SCHED_IMAGE##*:}" ]]; }
check "the image $SCHED_IMAGE names the version of the kube-scheduler binary that stands in for it" \
  binary_is_image_version
check "rendered scheduler config calls http://$FULLNAME.$NS.svc:8888/scheduler" \
  grep -q "urlPrefix: \"http://$FULLNAME.$NS.svc:8888/scheduler\"" "$RENDERED/scheduler-config.yaml"
check "rendered daemon config is mode: kubernetes" grep -qx 'mode: kubernetes' "$RENDERED/daemon-config.yaml"
step "rendered: $RENDERED/scheduler-config.yaml, $RENDERED/daemon-config.yaml"
phase_end

if [[ "$PHASES" == chart ]]; then
  step "CHART_E2E_PHASES=chart: skipping the daemon phase"
  exit 0
fi

# ---- phase 4: daemon + kube-scheduler with the rendered configuration ---------------------------
phase_begin "4 daemon (kubernetes mode) behind kube-scheduler $KV with the chart's configuration"
[[ -x "$EXTENDER_BINARY" ]] || { fail "daemon binary $EXTENDER_BINARY exists (make build)"; phase_end; }

# Tokens of the chart's ServiceAccounts (TokenRequest), so that their RBAC is what runs.
sa_kubeconfig() { # sa_kubeconfig SA FILE
  local token
  token="$(cluster_api POST "/api/v1/namespaces/$NS/serviceaccounts/$1/token" \
    '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":7200}}' | jq -r .status.token)"
  [[ -n "$token" && "$token" != null ]] || return 1
  cat >"$2" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$APISERVER_URL", certificate-authority: "$CLUSTER_CA_FILE"}}]
users: [{name: $1, user: {token: "$token"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: $1, namespace: $NS}}]
current-context: e2e
EOF
  chmod 600 "$2"
}
if [[ "$IDENTITY" == chart ]]; then
  DAEMON_KUBECONFIG="$WORKDIR/daemon-sa.kubeconfig"
  SCHED_KUBECONFIG="$WORKDIR/scheduler-sa.kubeconfig"
  check "token for ServiceAccount $NS/$FULLNAME (TokenRequest)" sa_kubeconfig "$FULLNAME" "$DAEMON_KUBECONFIG"
  check "token for ServiceAccount $NS/$SCHED_FULLNAME (TokenRequest)" sa_kubeconfig "$SCHED_FULLNAME" "$SCHED_KUBECONFIG"
  check "the daemon's token authenticates as $SA" "$KUBECTL" --kubeconfig "$DAEMON_KUBECONFIG" get nodes -o name
  ((PHASE_FAILED == 0)) || phase_end
else
  DAEMON_KUBECONFIG="$EXTENDER_KUBECONFIG"
  SCHED_KUBECONFIG="$SCHEDULER_KUBECONFIG"
fi

step "adding nodes gpu-node-0 (4 GPUs of 40960 MiB), gpu-node-1 (4 GPUs, no memory label)"
cluster_add_gpu_node gpu-node-0 4 -l nvidia.com/gpu.memory=40960 -l nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB
cluster_add_gpu_node gpu-node-1 4

# The rendered config elects a leader (ha.enabled) on Lease $FULLNAME in POD_NAMESPACE. The daemon
# gets the downward-API variables a replica of the Deployment would get, naming a stand-in pod
# object (no kubelet runs it; no scheduler knows its schedulerName), so the leader label goes on
# it; a second pod, labelled as if by an earlier leader, must lose the label.
STANDIN=$FULLNAME-e2e-replica STALE=$FULLNAME-e2e-old-leader
standin_pod() { # standin_pod NAME [LEADER-LABEL-VALUE]
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  labels:
    app.kubernetes.io/name: scheduler-extender
    app.kubernetes.io/instance: $RELEASE
    app.kubernetes.io/component: extender
$([[ -n "${2:-}" ]] && printf '    %s: "%s"\n' "$LEADER_LABEL" "$2")
spec:
  schedulerName: chart-e2e-nobody
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
EOF
}
cluster_create_namespace "$NS" # its default ServiceAccount (no token controller here)
standin_pod "$STANDIN" | k apply -f - >&2
standin_pod "$STALE" true | k apply -f - >&2
STANDIN_UID="$(k -n "$NS" get pod "$STANDIN" -o 'jsonpath={.metadata.uid}')"

mapfile -t ports < <(cluster_free_ports 2)
EXT_PORT="${ports[0]}" ADMIN_PORT="${ports[1]}"
DAEMON_LOG="$CLUSTER_LOG_DIR/scheduler-extender.log"
daemon_args=(--config "$RENDERED/daemon-config.yaml" --listen "127.0.0.1:$EXT_PORT"
  --admin-listen "127.0.0.1:$ADMIN_PORT" --log-level debug)
daemon_args+=(--mode kubernetes --kubeconfig "$DAEMON_KUBECONFIG")
step "starting POD_NAME=$STANDIN POD_NAMESPACE=$NS POD_UID=$STANDIN_UID $EXTENDER_BINARY ${daemon_args[*]} (log: $DAEMON_LOG)"
POD_NAME="$STANDIN" POD_NAMESPACE="$NS" POD_UID="$STANDIN_UID" \
  "$EXTENDER_BINARY" "${daemon_args[@]}" </dev/null >"$DAEMON_LOG" 2>&1 &
DAEMON_PID=$!
cluster_register_pid "$DAEMON_PID" scheduler-extender
if ! cluster_wait_http "http://127.0.0.1:$ADMIN_PORT/readyz" 60 "$DAEMON_PID" "$DAEMON_LOG"; then
  fail "the daemon answers 200 on http://127.0.0.1:$ADMIN_PORT/readyz within 60s (log $DAEMON_LOG)"
  phase_end
fi
check "the daemon is ready (/readyz 200 after its caches synced)" curl -fsS "http://127.0.0.1:$ADMIN_PORT/readyz"
wait_for() { # wait_for SECONDS CMD...: until CMD succeeds
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
readyz_leading() { curl -fsS "http://127.0.0.1:$ADMIN_PORT/readyz" | jq -e '.leading == true'; }
check "the daemon leads within 15s (/readyz \"leading\": true)" wait_for 15 readyz_leading
# The chart's default lease_duration ("2s"), in the whole seconds the Lease records.
LEASE_SECONDS="$("$PY" -c 'import sys, yaml; print(int(yaml.safe_load(open(sys.argv[1]))["config"]["ha"]["lease_duration"].rstrip("s")))' \
  "$CHART/values.yaml")"
check "Lease $NS/$FULLNAME is held by ${STANDIN}_$STANDIN_UID (POD_NAME_POD_UID), ${LEASE_SECONDS}s" jsonpath_matches \
  "^${STANDIN}_${STANDIN_UID} ${LEASE_SECONDS}\$" -n "$NS" get lease "$FULLNAME" -o 'jsonpath={.spec.holderIdentity} {.spec.leaseDurationSeconds}'
label_is() { # label_is POD VALUE|absent: the pod's leader label
  [[ "$(k -n "$NS" get pod "$1" -o json | jq -r --arg l "$LEADER_LABEL" '.metadata.labels[$l] // "absent"')" == "$2" ]]
}
check "the leader labelled its own pod $STANDIN $LEADER_LABEL=true" wait_for 10 label_is "$STANDIN" true
check "the leader took $LEADER_LABEL off the stale pod $STALE" wait_for 10 label_is "$STALE" absent
check "the Service's selector now picks the leader's pod only" jsonpath_matches "^pod/$STANDIN\$" -n "$NS" get pods -o name \
  -l "$(k -n "$NS" get service "$FULLNAME" -o json | jq -r '.spec.selector | to_entries | map("\(.key)=\(.value)") | join(",")')"

# The rendered configuration with only what must differ on loopback changed.
HZ_PORT="$(cluster_free_ports 1)"
"$PY" - "$RENDERED/scheduler-config.yaml" "$WORKDIR/scheduler-config.yaml" "127.0.0.1:$EXT_PORT" \
  "$SCHED_KUBECONFIG" "127.0.0.1:$HZ_PORT" <<'PY'
import sys, yaml
from urllib.parse import urlsplit, urlunsplit
src, dst, hostport, kubeconfig, healthz = sys.argv[1:]
cfg = yaml.safe_load(open(src))
ext = cfg["extenders"][0]
u = urlsplit(ext["urlPrefix"])
ext["urlPrefix"] = urlunsplit((u.scheme, hostport, u.path, "", ""))
cfg["clientConnection"] = {"kubeconfig": kubeconfig}
cfg["leaderElection"]["leaderElect"] = False
if cfg["apiVersion"].endswith("/v1beta1"):  # v1 has no such fields: healthz is on --secure-port
    cfg["healthzBindAddress"] = healthz
    cfg["metricsBindAddress"] = healthz
with open(dst, "w") as f:
    f.write("# tests/e2e/chart-install.sh: the chart's rendering with loopback addresses\n")
    yaml.safe_dump(cfg, f, sort_keys=False)
PY
step "kube-scheduler config: $WORKDIR/scheduler-config.yaml"
export SCHEDULER_HEALTHZ_PORT="$HZ_PORT"
if ! cluster_start_scheduler "$WORKDIR/scheduler-config.yaml"; then
  fail "kube-scheduler $KV starts with the chart's configuration"
  phase_end
fi
check "kube-scheduler $KV loaded the chart's configuration" grep -q 'Starting Kubernetes Scheduler' "$SCHEDULER_LOG"

pod_manifest() { # pod_manifest NAME GPUS [GPU-MEMORY-FLOOR]
  local annotations="{}"
  [[ -n "${3:-}" ]] && annotations="{scheduler-extender.io/gpu-memory: \"$3\"}"
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  annotations: $annotations
spec:
  schedulerName: $SCHED_NAME
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.2
    resources:
      limits:
        nvidia.com/gpu: "$2"
EOF
}
step "creating pod default/chart-e2e-gpu (schedulerName $SCHED_NAME, nvidia.com/gpu: 1)"
pod_manifest chart-e2e-gpu 1 | k apply -f - >&2
node=""
if node="$(cluster_wait_pod_scheduled default chart-e2e-gpu 60)"; then
  check "pod default/chart-e2e-gpu is bound (spec.nodeName=$node)" test -n "$node"
else
  fail "pod default/chart-e2e-gpu is bound within 60s"
fi
check "the daemon logged the filter call for default/chart-e2e-gpu" grep -Eq 'filter[^ ]* default/chart-e2e-gpu' "$DAEMON_LOG"
check "the daemon bound it (bind call in its log)" grep -Eq 'bind[^ ]* default/chart-e2e-gpu' "$DAEMON_LOG"

step "creating deploy/examples/gpu-memory-pod.yaml (2 GPUs of at least 40Gi each)"
k apply -f "$REPO/deploy/examples/gpu-memory-pod.yaml" >&2
if node="$(cluster_wait_pod_scheduled default gpu-memory-pod 60)"; then
  check "gpu-memory-pod lands on gpu-node-0, the only node whose GPUs report 40960 MiB (got $node)" test "$node" == gpu-node-0
else
  fail "gpu-memory-pod is bound within 60s"
fi
step "creating a pod asking for 80Gi per GPU: no node qualifies"
pod_manifest chart-e2e-80gi 1 80Gi | k apply -f - >&2
sleep 5
check "pod default/chart-e2e-80gi stays unscheduled" \
  test -z "$(k -n default get pod chart-e2e-80gi -o 'jsonpath={.spec.nodeName}')"
check "its FailedScheduling event says no node is available" jsonpath_matches '0/2 nodes are available' \
  -n default get events --field-selector involvedObject.name=chart-e2e-80gi -o 'jsonpath={.items[*].message}'
# (kube-scheduler 1.20 drops the reasons of FailedAndUnresolvableNodes from the event; the daemon
# logs them at debug level.)
check "the daemon rejected both nodes for their GPU memory" grep -Eq \
  "filter default/chart-e2e-80gi: node gpu-node-0: .*80 GiB per GPU" "$DAEMON_LOG"
if grep -E 'is forbidden|Unauthorized' "$SCHEDULER_LOG" >"$WORKDIR/scheduler-rbac-errors.txt"; then
  fail "kube-scheduler log shows no RBAC errors (see $WORKDIR/scheduler-rbac-errors.txt)"
else
  check "kube-scheduler log shows no RBAC errors" true
fi
if grep -Ei 'forbidden|unauthorized' "$DAEMON_LOG" >"$WORKDIR/daemon-rbac-errors.txt"; then
  fail "daemon log shows no RBAC errors (see $WORKDIR/daemon-rbac-errors.txt)"
else
  check "daemon log shows no RBAC errors" true
fi
cluster_delete_pod default chart-e2e-gpu gpu-memory-pod chart-e2e-80gi
phase_end

# ---- phase 5: deploy/scheduler-config/default-scheduler.yaml ------------------------------------
if [[ "$SCHED_CFG_API" != v1 ]]; then
  step "phase 5 skipped: deploy/scheduler-config/default-scheduler.yaml is kubescheduler.config.k8s.io/v1, which kube-scheduler $KV does not read"
  step "PASS"
  exit 0
fi
phase_begin "5 kube-scheduler $KV runs deploy/scheduler-config/default-scheduler.yaml as the default scheduler"
cluster_stop_scheduler
HZ_PORT="$(cluster_free_ports 1)"
"$PY" "$HERE/lib/shipped_config.py" scheduler "$WORKDIR/default-scheduler.yaml" "127.0.0.1:$EXT_PORT" \
  "$SCHEDULER_KUBECONFIG" "$HZ_PORT"
step "kube-scheduler config: $WORKDIR/default-scheduler.yaml"
if ! cluster_start_scheduler "$WORKDIR/default-scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler-default.log"; then
  fail "kube-scheduler $KV starts with deploy/scheduler-config/default-scheduler.yaml"
  phase_end
fi
check "kube-scheduler $KV loaded default-scheduler.yaml" grep -q 'Starting Kubernetes Scheduler' "$SCHEDULER_LOG"
default_pod() {
  cat <<EOP
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: {limits: {nvidia.com/gpu: "$2"}}
EOP
}
default_pod default-gpu 2 | k apply -f - >&2
if node="$(cluster_wait_pod_scheduled default default-gpu 60)"; then
  check "pod default/default-gpu (no schedulerName) is bound (spec.nodeName=$node)" test -n "$node"
else
  fail "pod default/default-gpu is bound within 60s"
fi
check "the daemon bound default/default-gpu (bind call in its log)" grep -Eq 'bind[^ ]* default/default-gpu: nodes 1 -> 1' "$DAEMON_LOG"
if grep -E 'is forbidden|Unauthorized' "$SCHEDULER_LOG" >"$WORKDIR/default-scheduler-rbac-errors.txt"; then
  fail "kube-scheduler log shows no RBAC errors (see $WORKDIR/default-scheduler-rbac-errors.txt)"
else
  check "kube-scheduler log shows no RBAC errors" true
fi
cluster_delete_pod default default-gpu
phase_end

# ---- phase 6: two replicas through a rollout and a node drain ----------------------------------
# kube-controller-manager runs the Deployment, ReplicaSet, disruption and garbage-collector
# controllers; lib/pod_runner.py plays the kubelet for the release's daemon pods (it runs the
# built daemon with the pod's rendered ConfigMap, POD_NAME/POD_NAMESPACE/POD_UID, and reports
# Ready from /readyz); lib/leader_proxy.py plays the leader-only Service for kube-scheduler.
phase_begin "6 two replicas (chart defaults) through a rollout and a node drain"
cluster_stop_scheduler
[[ -n "${DAEMON_PID:-}" ]] && { kill "$DAEMON_PID" 2>/dev/null || true; wait "$DAEMON_PID" 2>/dev/null || true; }
# The earlier releases' Deployments would get pods that nothing runs (and PDBs that block a drain).
helm list -A -o json | jq -r '.[] | "\(.name) \(.namespace)"' | while read -r r rns; do
  helm uninstall "$r" -n "$rns" >/dev/null 2>&1 || true
done
if ! cluster_start_controller_manager; then
  fail "kube-controller-manager starts (tests/e2e/lib/build-kube-current.sh builds it)"
  phase_end
fi
HA_NS=ha-system HA_FULLNAME=ha-scheduler-extender
for n in sys-0 sys-1 sys-2; do cluster_add_gpu_node "$n" none -l e2e-role=system >/dev/null; done
cluster_add_gpu_node gpu-ha 8 >/dev/null
check "helm install ha (chart defaults: 2 replicas, leader election, PDB) into $HA_NS" \
  helm install ha "$CHART" --namespace "$HA_NS" --create-namespace --set nodeSelector.e2e-role=system
HA_KUBECONFIG="$WORKDIR/ha-daemon-sa.kubeconfig"
NS="$HA_NS" check "token for ServiceAccount $HA_NS/$HA_FULLNAME (TokenRequest)" sa_kubeconfig "$HA_FULLNAME" "$HA_KUBECONFIG"
BACKENDS="$WORKDIR/ha-backends.txt"
mkdir -p "$CLUSTER_LOG_DIR/ha-pods"
"$PY" "$HERE/lib/pod_runner.py" --namespace "$HA_NS" --selector app.kubernetes.io/component=extender \
  --binary "$EXTENDER_BINARY" --kubeconfig "$HA_KUBECONFIG" --backends-file "$BACKENDS" \
  --log-dir "$CLUSTER_LOG_DIR/ha-pods" 2>"$CLUSTER_LOG_DIR/pod-runner.log" &
cluster_register_pid $! pod-runner
PROXY_PORT="$(cluster_free_ports 1)"
"$PY" "$HERE/lib/leader_proxy.py" --listen "$PROXY_PORT" --namespace "$HA_NS" --label scheduler-extender.io/leader \
  --backends-file "$BACKENDS" 2>"$CLUSTER_LOG_DIR/leader-proxy.log" &
cluster_register_pid $! leader-proxy
cluster_write_scheduler_config "$WORKDIR/ha-scheduler.yaml" --extender-url "http://127.0.0.1:$PROXY_PORT/scheduler" \
  --node-cache-capable true --bind-verb bind --ignored-by-scheduler false
if ! cluster_start_scheduler "$WORKDIR/ha-scheduler.yaml" "$CLUSTER_LOG_DIR/kube-scheduler-ha.log"; then
  fail "kube-scheduler starts with the extender behind the leader-only proxy"
  phase_end
fi
rollout_done() { k -n "$HA_NS" rollout status "deployment/$HA_FULLNAME" --timeout=150s; }
leader_pods() { k -n "$HA_NS" get pods -l scheduler-extender.io/leader=true -o 'jsonpath={.items[*].metadata.name}'; }
ready_pods() {
  k -n "$HA_NS" get pods -l app.kubernetes.io/component=extender -o json |
    jq -r '[.items[] | select(.metadata.deletionTimestamp == null) | select(any(.status.conditions[]?; .type == "Ready" and .status == "True")) | .metadata.name] | join(" ")'
}
one_leader_of_two_ready() { # exactly one pod labelled, it is one of two Ready pods
  local l r
  l="$(leader_pods)" r="$(ready_pods)"
  [[ -n "$l" && "$l" != *" "* && "$(wc -w <<<"$r")" == 2 && " $r " == *" $l "* ]] || { echo "leader [$l] ready [$r]"; return 1; }
}
gpu_binds_through_leader() { # gpu_binds_through_leader POD: bound, by the labelled pod's daemon
  local pod="$1" l node
  cluster_gpu_pod_manifest "$pod" 1 default | k apply -f - >/dev/null
  node="$(cluster_wait_pod_scheduled default "$pod" 60)" || return 1
  l="$(leader_pods)"
  grep -Eq "bind default/$pod: nodes 1 -> 1" "$CLUSTER_LOG_DIR/ha-pods/$l.log" || { echo "bound to $node, not in $l's log"; return 1; }
}
t=$SECONDS
check "kubectl rollout status: two Ready replicas" rollout_done
step "two replicas Ready after $((SECONDS - t))s: $(ready_pods); leader $(leader_pods)"
check "exactly one of the two Ready pods carries the leader label" wait_for 30 one_leader_of_two_ready
check "a GPU pod binds through the leader (ha-gpu-1)" gpu_binds_through_leader ha-gpu-1
before="$(ready_pods)"
t=$SECONDS
check "kubectl rollout restart" k -n "$HA_NS" rollout restart "deployment/$HA_FULLNAME"
check "the rollout completes (maxSurge 1, maxUnavailable 0)" rollout_done
step "rollout done after $((SECONDS - t))s: $before -> $(ready_pods); leader $(leader_pods)"
check "two new Ready pods, one of them leads" wait_for 30 one_leader_of_two_ready
for p in $before; do check "old pod $p is gone (stopped, deleted)" wait_for 30 absent -n "$HA_NS" get pod "$p"; done
check "a GPU pod binds through the new leader (ha-gpu-2)" gpu_binds_through_leader ha-gpu-2
DRAIN_NODE="$(k -n "$HA_NS" get pod "$(leader_pods)" -o 'jsonpath={.spec.nodeName}')"
t=$SECONDS
check "kubectl drain $DRAIN_NODE (the leader's node) completes within the PodDisruptionBudget" \
  k drain "$DRAIN_NODE" --ignore-daemonsets --timeout=150s
step "drain done after $((SECONDS - t))s; pods $(ready_pods); leader $(leader_pods)"
check "two Ready replicas again, none on $DRAIN_NODE, one leads" wait_for 60 one_leader_of_two_ready
check "no replica on the drained node" test -z "$(k -n "$HA_NS" get pods --field-selector "spec.nodeName=$DRAIN_NODE" -o name)"
check "a GPU pod binds through the leader after the drain (ha-gpu-3)" gpu_binds_through_leader ha-gpu-3
check "the PodDisruptionBudget allowed one disruption at a time" jsonpath_matches '^1$' \
  -n "$HA_NS" get pdb "$HA_FULLNAME" -o 'jsonpath={.spec.maxUnavailable}'
k uncordon "$DRAIN_NODE" >/dev/null 2>&1 || true
cluster_delete_pod default ha-gpu-1 ha-gpu-2 ha-gpu-3
phase_end
step "PASS"
