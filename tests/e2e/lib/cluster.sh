# shellcheck shell=bash
# Kubernetes control plane on loopback (etcd + kube-apiserver + kube-scheduler), no kubelet: the
# current version (tests/e2e/kube-current, the default) or v1.20 (E2E_KUBE=1.20).
#
# Usage (from a bash script running with `set -euo pipefail`):
#
#   source tests/e2e/lib/cluster.sh
#   cluster_up "$WORKDIR"                 # builds/reuses binaries, starts etcd+apiserver, installs trap
#   cluster_bootstrap                     # default SA, extender RBAC
#   cluster_add_gpu_node gpu-0 4
#   cluster_write_scheduler_config "$WORKDIR/sched.yaml" --extender-url "http://127.0.0.1:$PORT/scheduler" \
#       --node-cache-capable true --bind-verb bind
#   cluster_start_scheduler "$WORKDIR/sched.yaml"
#   ...
#   cluster_down                          # also runs from the EXIT trap
#
# Call the functions directly (not inside $(...) or a pipeline): they export variables into
# the calling shell. Progress lines go to stderr, prefixed with "[cluster]".
# See the "Contract" section of the e2e README/report for the exported variables.

# ---------------------------------------------------------------------------------------------
# internals
# ---------------------------------------------------------------------------------------------
CLUSTER_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CLUSTER_LIB_DIR

_CL_CLEANUPS=()

_cl_log() { printf '[cluster] %s\n' "$*" >&2; }
_cl_err() { printf '[cluster] ERROR: %s\n' "$*" >&2; }

# _cl_require_up: fail unless cluster_up ran in this shell (or CLUSTER_WORKDIR/cluster.env was sourced).
_cl_require_up() {
  if [[ -z "${APISERVER_URL:-}" || -z "${CLUSTER_WORKDIR:-}" ]]; then
    _cl_err "cluster is not up (call cluster_up WORKDIR first)"
    return 1
  fi
}

# cluster_free_ports N: print N distinct free TCP ports on 127.0.0.1, one per line.
cluster_free_ports() {
  local n="${1:-1}"
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$n" <<'PY'
import socket, sys
n = int(sys.argv[1]); socks = []
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0)); socks.append(s)
print("\n".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
    return
  fi
  # Fallback: random ports in a high range that nothing listens on (ss) and that refuse connections.
  local found=() p used
  used="$(ss -Htln 2>/dev/null | awk '{print $4}' | sed 's/.*://' || true)"
  while ((${#found[@]} < n)); do
    p=$((20000 + RANDOM % 30000))
    grep -qx "$p" <<<"$used" && continue
    [[ " ${found[*]} " == *" $p "* ]] && continue
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then continue; fi
    found+=("$p")
  done
  printf '%s\n' "${found[@]}"
}

# _cl_start NAME LOGFILE CMD...: start CMD in the background (stdin /dev/null, stdout+stderr to
# LOGFILE), record "NAME PID" in $CLUSTER_WORKDIR/pids, set _CL_LAST_PID.
_cl_start() {
  local name="$1" logf="$2"
  shift 2
  "$@" </dev/null >>"$logf" 2>&1 &
  _CL_LAST_PID=$!
  printf '%s %s\n' "$name" "$_CL_LAST_PID" >>"$CLUSTER_WORKDIR/pids"
}

# _cl_kill PID [NAME]: TERM, wait up to 10s, then KILL. Only the given pid is signalled.
_cl_kill() {
  local pid="$1" name="${2:-pid}" i
  [[ -n "$pid" ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    _cl_log "$name ($pid) did not stop on TERM; sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# _cl_wait_url NAME PID URL TIMEOUT_S LOGFILE [curl args...]: poll URL until HTTP 200 "ok";
# fail early if PID died.
_cl_wait_url() {
  local name="$1" pid="$2" url="$3" timeout="$4" logf="$5"
  shift 5
  local deadline=$((SECONDS + timeout)) body
  while ((SECONDS < deadline)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      _cl_err "$name (pid $pid) exited during startup; last log lines ($logf):"
      tail -n 25 "$logf" >&2 || true
      return 1
    fi
    if body="$(curl -fsS --max-time 2 "$@" "$url" 2>/dev/null)" && [[ "$body" == ok* ]]; then
      return 0
    fi
    sleep 0.3
  done
  _cl_err "$name not healthy at $url after ${timeout}s; last log lines ($logf):"
  tail -n 25 "$logf" >&2 || true
  return 1
}

_cl_write_kubeconfig() { # FILE USER TOKEN
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: ${APISERVER_URL}
    certificate-authority: ${CLUSTER_CA_FILE}
users:
- name: $2
  user:
    token: $3
contexts:
- name: e2e
  context:
    cluster: e2e
    user: $2
    namespace: default
current-context: e2e
EOF
  chmod 600 "$1"
}

_cl_gen_pki() {
  local d="$CLUSTER_PKI_DIR" plog="$CLUSTER_LOG_DIR/pki.log"
  mkdir -p "$d"
  if ! {
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
      -keyout "$d/ca.key" -out "$d/ca.crt" -subj "/CN=scheduler-extender-e2e-ca" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" >>"$plog" 2>&1 &&
      cluster_gen_serving_cert apiserver "IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" &&
      openssl genrsa -out "$d/sa.key" 2048 >>"$plog" 2>&1 &&
      openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" >>"$plog" 2>&1
  }; then
    _cl_err "certificate generation failed; see $plog"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------

# cluster_gen_serving_cert NAME SANS: write $CLUSTER_PKI_DIR/NAME.{crt,key}, a serving cert
# signed by the cluster CA. SANS in openssl syntax, e.g. "IP:127.0.0.1,DNS:localhost".
# (Usable for an HTTPS extender: enableHTTPS + tlsConfig.caFile=$CLUSTER_CA_FILE.)
cluster_gen_serving_cert() {
  local name="$1" sans="$2" d="$CLUSTER_PKI_DIR"
  openssl req -newkey rsa:2048 -nodes -sha256 -keyout "$d/$name.key" -out "$d/$name.csr" \
    -subj "/CN=$name" >>"$CLUSTER_LOG_DIR/pki.log" 2>&1 || return 1
  openssl x509 -req -sha256 -days 3650 -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
    -CAcreateserial -out "$d/$name.crt" \
    -extfile <(printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' "$sans") \
    >>"$CLUSTER_LOG_DIR/pki.log" 2>&1 || return 1
  rm -f "$d/$name.csr" "$d/ca.srl"
}

# cluster_register_pid PID [NAME]: have cluster_down stop PID (TERM, then KILL after 10s).
# Registered pids are stopped first, newest first.
cluster_register_pid() {
  _cl_require_up || return 1
  printf '%s %s\n' "${2:-registered}" "$1" >>"$CLUSTER_WORKDIR/pids"
}

# cluster_register_cleanup 'COMMAND': run COMMAND (eval) at the start of cluster_down
# (may be called before cluster_up).
cluster_register_cleanup() {
  _CL_CLEANUPS+=("$1")
}

# cluster_up WORKDIR: start etcd + kube-apiserver on free 127.0.0.1 ports.
# Uses $KUBE_BIN if set (dir with kube-apiserver, kube-scheduler, kubectl), else runs build-kube.sh.
# Installs `trap cluster_down EXIT` (+ INT/TERM -> exit) unless CLUSTER_NO_TRAP=1.
cluster_up() {
  local wd="${1:?usage: cluster_up WORKDIR}"
  if [[ -n "${CLUSTER_UP_DONE:-}" ]]; then
    _cl_err "cluster_up already called in this shell (workdir $CLUSTER_WORKDIR)"
    return 1
  fi
  mkdir -p "$wd"
  CLUSTER_WORKDIR="$(cd "$wd" && pwd)"
  export CLUSTER_WORKDIR
  export CLUSTER_LOG_DIR="$CLUSTER_WORKDIR/logs"
  export CLUSTER_PKI_DIR="$CLUSTER_WORKDIR/pki"
  mkdir -p "$CLUSTER_LOG_DIR" "$CLUSTER_PKI_DIR"
  : >"$CLUSTER_WORKDIR/pids"
  export CLUSTER_UP_DONE=1

  if [[ "${CLUSTER_NO_TRAP:-}" != 1 ]]; then
    trap cluster_down EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
  fi

  _cl_log "workdir $CLUSTER_WORKDIR (logs in $CLUSTER_LOG_DIR)"

  # binaries
  if [[ -z "${KUBE_BIN:-}" ]]; then
    _cl_log "building/reusing kube binaries (tests/e2e/lib/kube-bin.sh, E2E_KUBE=${E2E_KUBE:-current})"
    KUBE_BIN="$("$CLUSTER_LIB_DIR/kube-bin.sh" | tail -n1)" || {
      _cl_err "kube-bin.sh failed"
      return 1
    }
  fi
  export KUBE_BIN
  local b
  for b in kube-apiserver kube-scheduler kubectl; do
    [[ -x "$KUBE_BIN/$b" ]] || { _cl_err "$KUBE_BIN/$b missing"; return 1; }
  done
  export KUBECTL="${KUBECTL:-$KUBE_BIN/kubectl}"
  export PATH="$KUBE_BIN:$PATH"
  # The build that brings its own etcd (the current version) uses it; v1.20 uses Debian's etcd 3.4.
  if [[ -x "$KUBE_BIN/etcd" ]]; then
    export ETCD_BIN="$KUBE_BIN/etcd"
  else
    ETCD_BIN="$(command -v etcd || true)"
    export ETCD_BIN
    [[ -n "$ETCD_BIN" ]] || { _cl_err "etcd not found (run tests/e2e/lib/install-deps.sh)"; return 1; }
  fi
  # Versions, printed whether the binaries were built now or came from the cache.
  local vline
  vline="$("$KUBE_BIN/kube-apiserver" --version 2>&1 | head -n1)"
  CLUSTER_KUBE_VERSION="$(awk '{print $2}' <<<"$vline")"
  CLUSTER_KUBE_MINOR="${CLUSTER_KUBE_VERSION#v1.}"
  CLUSTER_KUBE_MINOR="${CLUSTER_KUBE_MINOR%%.*}"
  [[ "$CLUSTER_KUBE_MINOR" =~ ^[0-9]+$ ]] || { _cl_err "cannot read a version from kube-apiserver --version: $vline"; return 1; }
  export CLUSTER_KUBE_VERSION CLUSTER_KUBE_MINOR
  _cl_log "version: kube-apiserver --version: $vline ($KUBE_BIN/kube-apiserver)"
  _cl_log "version: etcd --version: $("$ETCD_BIN" --version 2>&1 | head -n1) ($ETCD_BIN)"
  _cl_log "version: kubectl: $("$KUBECTL" version --client 2>/dev/null | head -n1)"

  # ports
  local ports
  mapfile -t ports < <(cluster_free_ports 3)
  export ETCD_CLIENT_PORT="${ports[0]}" ETCD_PEER_PORT="${ports[1]}" APISERVER_PORT="${ports[2]}"
  export ETCD_URL="http://127.0.0.1:$ETCD_CLIENT_PORT"
  export APISERVER_URL="https://127.0.0.1:$APISERVER_PORT"

  # pki + tokens
  _cl_log "generating CA, apiserver serving cert, service-account keys in $CLUSTER_PKI_DIR"
  _cl_gen_pki || return 1
  export CLUSTER_CA_FILE="$CLUSTER_PKI_DIR/ca.crt"
  export CLUSTER_CA_KEY="$CLUSTER_PKI_DIR/ca.key"
  export APISERVER_CERT_FILE="$CLUSTER_PKI_DIR/apiserver.crt"
  export APISERVER_KEY_FILE="$CLUSTER_PKI_DIR/apiserver.key"
  export SA_KEY_FILE="$CLUSTER_PKI_DIR/sa.key" SA_PUB_FILE="$CLUSTER_PKI_DIR/sa.pub"
  ADMIN_TOKEN="$(openssl rand -hex 16)"
  SCHEDULER_TOKEN="$(openssl rand -hex 16)"
  EXTENDER_TOKEN="$(openssl rand -hex 16)"
  export ADMIN_TOKEN SCHEDULER_TOKEN EXTENDER_TOKEN
  export ADMIN_USER=e2e-admin SCHEDULER_USER=system:kube-scheduler EXTENDER_USER=scheduler-extender
  export CLUSTER_TOKEN_FILE="$CLUSTER_PKI_DIR/tokens.csv"
  {
    printf '%s,%s,%s,"system:masters"\n' "$ADMIN_TOKEN" "$ADMIN_USER" "uid-e2e-admin"
    printf '%s,%s,%s\n' "$SCHEDULER_TOKEN" "$SCHEDULER_USER" "uid-kube-scheduler"
    printf '%s,%s,%s,"scheduler-extenders"\n' "$EXTENDER_TOKEN" "$EXTENDER_USER" "uid-scheduler-extender"
  } >"$CLUSTER_TOKEN_FILE"
  chmod 600 "$CLUSTER_TOKEN_FILE"
  export EXTENDER_TOKEN_FILE="$CLUSTER_PKI_DIR/extender.token"
  printf '%s\n' "$EXTENDER_TOKEN" >"$EXTENDER_TOKEN_FILE"

  # etcd
  export ETCD_LOG="$CLUSTER_LOG_DIR/etcd.log"
  _cl_log "starting etcd on $ETCD_URL (log: $ETCD_LOG)"
  # etcd reads ETCD_* environment variables as flags: start it without any.
  local envclean=() v
  for v in $(compgen -e); do
    [[ "$v" == ETCD_* ]] && envclean+=(-u "$v")
  done
  _cl_start etcd "$ETCD_LOG" env "${envclean[@]}" "$ETCD_BIN" \
    --name e2e \
    --data-dir "$CLUSTER_WORKDIR/etcd" \
    --listen-client-urls "$ETCD_URL" \
    --advertise-client-urls "$ETCD_URL" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster-state new \
    --snapshot-count 10000 \
    --quota-backend-bytes $((1024 * 1024 * 1024))
  export ETCD_PID="$_CL_LAST_PID"
  _cl_wait_health_json etcd "$ETCD_PID" "$ETCD_URL/health" 30 "$ETCD_LOG" || return 1

  # kube-apiserver
  export APISERVER_LOG="$CLUSTER_LOG_DIR/kube-apiserver.log"
  _cl_log "starting kube-apiserver on $APISERVER_URL (log: $APISERVER_LOG)"
  local extra=()
  if [[ -n "${CLUSTER_APISERVER_EXTRA_ARGS:-}" ]]; then
    read -r -a extra <<<"$CLUSTER_APISERVER_EXTRA_ARGS"
  fi
  local byversion=()
  if ((CLUSTER_KUBE_MINOR < 24)); then
    # v1.20: the insecure port still exists (off), CSIStorageCapacity is alpha (v1alpha1).
    byversion=(--insecure-port=0 --feature-gates=CSIStorageCapacity=true --runtime-config=storage.k8s.io/v1alpha1=true)
  fi
  _cl_start kube-apiserver "$APISERVER_LOG" "$KUBE_BIN/kube-apiserver" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="$APISERVER_PORT" \
    --etcd-servers="$ETCD_URL" \
    --tls-cert-file="$APISERVER_CERT_FILE" \
    --tls-private-key-file="$APISERVER_KEY_FILE" \
    --client-ca-file="$CLUSTER_CA_FILE" \
    --cert-dir="$CLUSTER_PKI_DIR/apiserver-certdir" \
    --token-auth-file="$CLUSTER_TOKEN_FILE" \
    --authorization-mode=Node,RBAC \
    --service-account-key-file="$SA_PUB_FILE" \
    --service-account-signing-key-file="$SA_KEY_FILE" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range=10.0.0.0/24 \
    --endpoint-reconciler-type=none \
    --allow-privileged=true \
    --profiling=false \
    --v="${CLUSTER_APISERVER_V:-1}" \
    "${byversion[@]}" "${extra[@]}"
  export APISERVER_PID="$_CL_LAST_PID"
  _cl_wait_url kube-apiserver "$APISERVER_PID" "$APISERVER_URL/readyz" 90 "$APISERVER_LOG" \
    --cacert "$CLUSTER_CA_FILE" -H "Authorization: Bearer $ADMIN_TOKEN" || return 1

  # kubeconfigs
  export ADMIN_KUBECONFIG="$CLUSTER_WORKDIR/admin.kubeconfig"
  export SCHEDULER_KUBECONFIG="$CLUSTER_WORKDIR/scheduler.kubeconfig"
  export EXTENDER_KUBECONFIG="$CLUSTER_WORKDIR/extender.kubeconfig"
  _cl_write_kubeconfig "$ADMIN_KUBECONFIG" "$ADMIN_USER" "$ADMIN_TOKEN"
  _cl_write_kubeconfig "$SCHEDULER_KUBECONFIG" "$SCHEDULER_USER" "$SCHEDULER_TOKEN"
  _cl_write_kubeconfig "$EXTENDER_KUBECONFIG" "$EXTENDER_USER" "$EXTENDER_TOKEN"
  export KUBECONFIG="$ADMIN_KUBECONFIG"
  _cl_write_env
  _cl_log "kube-apiserver ready at $APISERVER_URL (KUBECONFIG=$KUBECONFIG; env: $CLUSTER_WORKDIR/cluster.env)"
}

# _cl_wait_health_json NAME PID URL TIMEOUT LOG: etcd's /health returns {"health":"true"}.
_cl_wait_health_json() {
  local name="$1" pid="$2" url="$3" timeout="$4" logf="$5" deadline body
  deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      _cl_err "$name (pid $pid) exited during startup; last log lines ($logf):"
      tail -n 25 "$logf" >&2 || true
      return 1
    fi
    if body="$(curl -fsS --max-time 2 "$url" 2>/dev/null)" && [[ "$body" == *'"health":"true"'* ]]; then
      return 0
    fi
    sleep 0.2
  done
  _cl_err "$name not healthy at $url after ${timeout}s; see $logf"
  tail -n 25 "$logf" >&2 || true
  return 1
}

# Write $CLUSTER_WORKDIR/cluster.env: `source` it from another shell to reach the cluster
# (and to call cluster_down there after sourcing cluster.sh).
_cl_write_env() {
  local v
  {
    for v in CLUSTER_WORKDIR CLUSTER_LOG_DIR CLUSTER_PKI_DIR KUBE_BIN KUBECTL KUBECONFIG \
      ADMIN_KUBECONFIG SCHEDULER_KUBECONFIG EXTENDER_KUBECONFIG APISERVER_URL APISERVER_PORT \
      ETCD_URL ETCD_CLIENT_PORT ETCD_PEER_PORT CLUSTER_CA_FILE CLUSTER_CA_KEY APISERVER_CERT_FILE \
      APISERVER_KEY_FILE SA_KEY_FILE SA_PUB_FILE CLUSTER_TOKEN_FILE ADMIN_USER ADMIN_TOKEN \
      SCHEDULER_USER SCHEDULER_TOKEN EXTENDER_USER EXTENDER_TOKEN EXTENDER_TOKEN_FILE \
      ETCD_LOG APISERVER_LOG ETCD_PID APISERVER_PID ETCD_BIN CLUSTER_KUBE_VERSION CLUSTER_KUBE_MINOR; do
      printf 'export %s=%q\n' "$v" "${!v:-}"
    done
  } >"$CLUSTER_WORKDIR/cluster.env"
  chmod 600 "$CLUSTER_WORKDIR/cluster.env"
}

# cluster_api METHOD PATH [BODY [CONTENT_TYPE]]: curl the apiserver as admin; prints the body;
# fails (non-zero) on HTTP >= 400. CONTENT_TYPE defaults to application/json, or
# application/merge-patch+json for PATCH.
cluster_api() {
  _cl_require_up || return 1
  local method="$1" path="$2" body="${3:-}" ctype="${4:-}"
  if [[ -z "$ctype" ]]; then
    if [[ "$method" == PATCH ]]; then ctype=application/merge-patch+json; else ctype=application/json; fi
  fi
  local args=(-sS --fail-with-body --max-time 30 -X "$method" --cacert "$CLUSTER_CA_FILE"
    -H "Authorization: Bearer $ADMIN_TOKEN" -H "Accept: application/json")
  if [[ -n "$body" ]]; then
    args+=(-H "Content-Type: $ctype" --data-binary "$body")
  fi
  curl "${args[@]}" "$APISERVER_URL$path"
}

# cluster_kubectl ARGS...: kubectl (the cluster's version, from $KUBE_BIN) as admin.
cluster_kubectl() {
  _cl_require_up || return 1
  "$KUBECTL" --kubeconfig "$ADMIN_KUBECONFIG" "$@"
}

# cluster_create_namespace NS: create namespace NS (if missing) and its `default` ServiceAccount
# with automountServiceAccountToken: false (there is no token controller).
cluster_create_namespace() {
  local ns="$1"
  if ! cluster_kubectl get namespace "$ns" >/dev/null 2>&1; then
    cluster_kubectl create namespace "$ns" >/dev/null
  fi
  cluster_kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata:
  name: default
  namespace: $ns
automountServiceAccountToken: false
EOF
}

# cluster_bootstrap: wait for the built-in namespaces, create `default` ServiceAccounts
# (automountServiceAccountToken: false) in default and kube-system, the extender's ClusterRole +
# ClusterRoleBinding, and check the scheduler/extender permissions with `kubectl auth can-i`.
cluster_bootstrap() {
  _cl_require_up || return 1
  _cl_log "bootstrap: default ServiceAccounts, RBAC for $EXTENDER_USER"
  local i ns
  for ns in default kube-system; do
    for ((i = 0; i < 100; i++)); do
      cluster_kubectl get namespace "$ns" >/dev/null 2>&1 && break
      sleep 0.2
    done
    cluster_create_namespace "$ns"
  done
  cluster_kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: scheduler-extender
rules:
- apiGroups: [""]
  resources: [nodes, pods, persistentvolumeclaims, persistentvolumes, namespaces]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods, persistentvolumeclaims]
  verbs: [patch]
- apiGroups: [""]
  resources: [pods/binding, bindings]
  verbs: [create]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch, update]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch, update]
- apiGroups: [storage.k8s.io]
  resources: [storageclasses, csinodes, csidrivers, csistoragecapacities]
  verbs: [get, list, watch]
- apiGroups: [resource.k8s.io]
  resources: [resourceslices, resourceclaims, deviceclasses]
  verbs: [get, list, watch]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
- apiGroups: [scheduling.k8s.io]
  resources: [podgroups]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: scheduler-extender
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: scheduler-extender
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: $EXTENDER_USER
EOF
  # sanity: ask the authorizer (SubjectAccessReview; `kubectl auth can-i` mis-parses pods/binding)
  local check
  for check in \
    "$EXTENDER_USER list nodes" "$EXTENDER_USER watch pods" "$EXTENDER_USER create pods/binding" \
    "$EXTENDER_USER list persistentvolumeclaims" "$EXTENDER_USER watch persistentvolumes" "$EXTENDER_USER list storageclasses storage.k8s.io" \
    "$EXTENDER_USER patch pods" "$EXTENDER_USER patch persistentvolumeclaims" \
    "$EXTENDER_USER watch csistoragecapacities storage.k8s.io" "$EXTENDER_USER watch csidrivers storage.k8s.io" \
    "$EXTENDER_USER update leases coordination.k8s.io" "$EXTENDER_USER watch podgroups scheduling.k8s.io" \
    "$SCHEDULER_USER create pods/binding" "$SCHEDULER_USER watch nodes" \
    "$SCHEDULER_USER list persistentvolumeclaims" "$SCHEDULER_USER list csinodes storage.k8s.io"; do
    # shellcheck disable=SC2086
    cluster_can_i $check || {
      _cl_err "RBAC check failed: $check"
      return 1
    }
  done
}

# cluster_can_i USER VERB RESOURCE[/SUBRESOURCE] [GROUP] [NAMESPACE]: exit 0 iff the apiserver's
# authorizer allows it (SubjectAccessReview; USER gets group system:authenticated).
cluster_can_i() {
  local user="$1" verb="$2" res="${3%%/*}" sub="" group="${4:-}" ns="${5:-}" body
  [[ "$3" == */* ]] && sub="${3#*/}"
  body="$(jq -n -c --arg u "$user" --arg v "$verb" --arg r "$res" --arg s "$sub" --arg g "$group" --arg n "$ns" \
    '{apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview",
      spec: {user: $u, groups: ["system:authenticated"],
             resourceAttributes: {verb: $v, resource: $r, subresource: $s, group: $g, namespace: $n}}}')"
  [[ "$(cluster_api POST /apis/authorization.k8s.io/v1/subjectaccessreviews "$body" | jq -r .status.allowed)" == true ]]
}

# cluster_add_gpu_node NAME GPUS [options]: create a Ready Node (no kubelet) and set its status.
#   GPUS            nvidia.com/gpu capacity/allocatable ("none" = do not advertise the resource)
#   -l KEY=VALUE    extra label (repeatable)
#   -a KEY=VALUE    extra annotation (repeatable)
#   --cpu Q         default 16          --memory Q   default 64Gi
#   --pods N        default 110         --resource NAME=Q  extra capacity+allocatable (repeatable)
#   --taint KEY=VALUE:EFFECT  extra taint (repeatable)
#   --unschedulable
# Labels kubernetes.io/hostname, kubernetes.io/os=linux, kubernetes.io/arch=amd64 are always set.
# The admission-added node.kubernetes.io/not-ready taint is removed.
cluster_add_gpu_node() {
  _cl_require_up || return 1
  local name="${1:?usage: cluster_add_gpu_node NAME GPUS [opts]}" gpus="${2:?usage: cluster_add_gpu_node NAME GPUS [opts]}"
  shift 2
  local cpu=16 mem=64Gi pods=110 unsched=false
  local labels='{}' annos='{}' res='{}' taints='[]' k v
  while (($#)); do
    case "$1" in
      -l) k="${2%%=*}" v="${2#*=}"; labels="$(jq -c --arg k "$k" --arg v "$v" '. + {($k): $v}' <<<"$labels")"; shift 2 ;;
      -a) k="${2%%=*}" v="${2#*=}"; annos="$(jq -c --arg k "$k" --arg v "$v" '. + {($k): $v}' <<<"$annos")"; shift 2 ;;
      --cpu) cpu="$2"; shift 2 ;;
      --memory) mem="$2"; shift 2 ;;
      --pods) pods="$2"; shift 2 ;;
      --resource) k="${2%%=*}" v="${2#*=}"; res="$(jq -c --arg k "$k" --arg v "$v" '. + {($k): $v}' <<<"$res")"; shift 2 ;;
      --taint)
        k="${2%%=*}" v="${2#*=}"
        taints="$(jq -c --arg k "$k" --arg v "${v%%:*}" --arg e "${2##*:}" '. + [{key: $k, value: $v, effect: $e}]' <<<"$taints")"
        shift 2 ;;
      --unschedulable) unsched=true; shift ;;
      *) _cl_err "cluster_add_gpu_node: unknown option $1"; return 1 ;;
    esac
  done
  if [[ "$gpus" != none ]]; then
    res="$(jq -c --arg v "$gpus" '. + {"nvidia.com/gpu": $v}' <<<"$res")"
  fi
  _cl_log "adding node $name (nvidia.com/gpu: $gpus)"
  local node
  node="$(jq -n -c --arg n "$name" --argjson l "$labels" --argjson a "$annos" --argjson u "$unsched" '{
      apiVersion: "v1", kind: "Node",
      metadata: {name: $n,
        labels: ({"kubernetes.io/hostname": $n, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                  "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"} + $l),
        annotations: $a},
      spec: {unschedulable: $u}}')"
  cluster_api POST /api/v1/nodes "$node" >/dev/null || { _cl_err "creating node $name failed"; return 1; }

  local now status
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  status="$(jq -n -c --arg cpu "$cpu" --arg mem "$mem" --arg pods "$pods" --argjson res "$res" --arg now "$now" \
    --arg kv "$CLUSTER_KUBE_VERSION" '
    ({cpu: $cpu, memory: $mem, pods: $pods, "ephemeral-storage": "100Gi"} + $res) as $cap |
    {status: {capacity: $cap, allocatable: $cap,
      conditions: [
        {type: "Ready", status: "True", reason: "KubeletReady", message: "fake node (no kubelet)",
         lastHeartbeatTime: $now, lastTransitionTime: $now},
        {type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory", message: "",
         lastHeartbeatTime: $now, lastTransitionTime: $now},
        {type: "DiskPressure", status: "False", reason: "KubeletHasNoDiskPressure", message: "",
         lastHeartbeatTime: $now, lastTransitionTime: $now},
        {type: "PIDPressure", status: "False", reason: "KubeletHasSufficientPID", message: "",
         lastHeartbeatTime: $now, lastTransitionTime: $now}],
      addresses: [{type: "InternalIP", address: "127.0.0.1"}],
      nodeInfo: {machineID: "", systemUUID: "", bootID: "", kernelVersion: "", osImage: "fake",
        containerRuntimeVersion: "fake://0", kubeletVersion: $kv, kubeProxyVersion: $kv,
        operatingSystem: "linux", architecture: "amd64"}}}')"
  cluster_api PATCH "/api/v1/nodes/$name/status" "$status" >/dev/null \
    || { _cl_err "patching status of node $name failed"; return 1; }

  # Replace taints: drop admission-added not-ready/unreachable, add requested ones.
  local cur newt
  cur="$(cluster_api GET "/api/v1/nodes/$name")"
  newt="$(jq -c --argjson add "$taints" '[(.spec.taints // [])[] | select(.key != "node.kubernetes.io/not-ready" and .key != "node.kubernetes.io/unreachable")] + $add' <<<"$cur")"
  if [[ "$newt" != "$(jq -c '.spec.taints // []' <<<"$cur")" ]]; then
    cluster_api PATCH "/api/v1/nodes/$name" "$(jq -n -c --argjson t "$newt" '{spec: {taints: (if $t == [] then null else $t end)}}')" >/dev/null \
      || { _cl_err "patching taints of node $name failed"; return 1; }
  fi
}

# cluster_write_scheduler_config FILE [options]: write a KubeSchedulerConfiguration for the
# cluster's version: kubescheduler.config.k8s.io/v1beta1 for v1.20 (the only version it reads;
# healthz+metrics on a plain-HTTP healthzBindAddress), kubescheduler.config.k8s.io/v1 for current
# versions (no healthz/metrics addresses in v1: they are served on the secure port, which
# cluster_start_scheduler sets). Allocates a free loopback port for them (exported as
# SCHEDULER_HEALTHZ_PORT; also stored in FILE, as `# e2e-healthz-port: N` for v1).
#   --extender-url URL               add an extenders entry (none => plain scheduler)
#   --filter-verb V                  default "filter" ('' to disable)
#   --prioritize-verb V              default "prioritize" ('' to disable)
#   --weight N                       default 1
#   --preempt-verb V                 default '' (off)
#   --bind-verb V                    default '' (off); e.g. --bind-verb bind
#   --node-cache-capable true|false  default false
#   --managed-resource NAME          default nvidia.com/gpu ('' = no managedResources => all pods)
#   --ignored-by-scheduler true|false  default true
#   --http-timeout D                 default 5s
#   --ignorable true|false           default false
#   --enable-https true|false        default false (then tlsConfig.caFile=$CLUSTER_CA_FILE)
#   --percentage-of-nodes-to-score N default 100
#   --scheduler-name NAME            default default-scheduler
cluster_write_scheduler_config() {
  _cl_require_up || return 1
  local file="${1:?usage: cluster_write_scheduler_config FILE [opts]}"
  shift
  local url="" filter=filter prio=prioritize weight=1 preempt="" bind="" ncc=false mres=nvidia.com/gpu
  local ignored=true timeout=5s ignorable=false https=false pct=100 sname=default-scheduler
  while (($#)); do
    case "$1" in
      --extender-url) url="$2" ;;
      --filter-verb) filter="$2" ;;
      --prioritize-verb) prio="$2" ;;
      --weight) weight="$2" ;;
      --preempt-verb) preempt="$2" ;;
      --bind-verb) bind="$2" ;;
      --node-cache-capable) ncc="$2" ;;
      --managed-resource) mres="$2" ;;
      --ignored-by-scheduler) ignored="$2" ;;
      --http-timeout) timeout="$2" ;;
      --ignorable) ignorable="$2" ;;
      --enable-https) https="$2" ;;
      --percentage-of-nodes-to-score) pct="$2" ;;
      --scheduler-name) sname="$2" ;;
      *) _cl_err "cluster_write_scheduler_config: unknown option $1"; return 1 ;;
    esac
    shift 2
  done
  local port
  port="$(cluster_free_ports 1)"
  export SCHEDULER_HEALTHZ_PORT="$port"
  {
    if ((CLUSTER_KUBE_MINOR < 25)); then
      cat <<EOF
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
healthzBindAddress: "127.0.0.1:$port"
metricsBindAddress: "127.0.0.1:$port"
EOF
    else
      cat <<EOF
# e2e-healthz-port: $port
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
EOF
    fi
    cat <<EOF
clientConnection:
  kubeconfig: "$SCHEDULER_KUBECONFIG"
leaderElection:
  leaderElect: false
percentageOfNodesToScore: $pct
profiles:
- schedulerName: "$sname"
EOF
    if [[ -n "$url" ]]; then
      cat <<EOF
extenders:
- urlPrefix: "$url"
  filterVerb: "$filter"
  prioritizeVerb: "$prio"
  weight: $weight
  preemptVerb: "$preempt"
  bindVerb: "$bind"
  enableHTTPS: $https
  httpTimeout: "$timeout"
  nodeCacheCapable: $ncc
  ignorable: $ignorable
EOF
      if [[ "$https" == true ]]; then
        printf '  tlsConfig:\n    caFile: "%s"\n' "$CLUSTER_CA_FILE"
      fi
      if [[ -n "$mres" ]]; then
        printf '  managedResources:\n  - name: "%s"\n    ignoredByScheduler: %s\n' "$mres" "$ignored"
      fi
    fi
  } >"$file"
}

# cluster_append_every_pod_entry FILE URL [WEIGHT]: adds to FILE (written by
# cluster_write_scheduler_config) the every-pod extender entry as the chart renders it: no
# managedResources, filter-unmanaged and prioritize-unmanaged, ignorable, 200ms; WEIGHT default 10.
cluster_append_every_pod_entry() {
  cat >>"$1" <<EOF
- urlPrefix: "$2"
  filterVerb: filter-unmanaged
  prioritizeVerb: prioritize-unmanaged
  weight: ${3:-10}
  nodeCacheCapable: true
  httpTimeout: 200ms
  ignorable: true
EOF
}

# cluster_start_scheduler CONFIG_FILE [LOGFILE]: start kube-scheduler with --config and wait for
# its healthz. v1beta1 (v1.20): plain HTTP at healthzBindAddress in CONFIG_FILE (required),
# --secure-port=0. v1: HTTPS on --secure-port=<port> --bind-address=127.0.0.1, the port from the
# `# e2e-healthz-port: N` line in CONFIG_FILE, else $SCHEDULER_HEALTHZ_PORT (required).
# Prints kube-scheduler --version.
# Exports SCHEDULER_PID, SCHEDULER_LOG, SCHEDULER_HEALTHZ_URL. Verbosity: CLUSTER_SCHEDULER_V (default 2).
cluster_start_scheduler() {
  _cl_require_up || return 1
  local cfg="${1:?usage: cluster_start_scheduler CONFIG_FILE [LOGFILE]}"
  local logf="${2:-$CLUSTER_LOG_DIR/kube-scheduler.log}"
  if [[ -n "${SCHEDULER_PID:-}" ]] && kill -0 "$SCHEDULER_PID" 2>/dev/null; then
    _cl_err "kube-scheduler already running (pid $SCHEDULER_PID); cluster_stop_scheduler first"
    return 1
  fi
  local addr port serving=() curlargs=()
  if grep -qE '^apiVersion:[[:space:]]*kubescheduler.config.k8s.io/v1beta1' "$cfg"; then
    addr="$(sed -nE 's/^healthzBindAddress:[[:space:]]*"?([^"[:space:]]+)"?.*$/\1/p' "$cfg" | head -n1)"
    if [[ -z "$addr" || "$addr" == 0.0.0.0:* || "$addr" == :* ]]; then
      _cl_err "$cfg must set healthzBindAddress to 127.0.0.1:<free port> (use cluster_write_scheduler_config)"
      return 1
    fi
    export SCHEDULER_HEALTHZ_URL="http://$addr/healthz"
    serving=(--secure-port=0)
  else
    port="$(sed -nE 's/^# e2e-healthz-port:[[:space:]]*([0-9]+)$/\1/p' "$cfg" | head -n1)"
    port="${port:-${SCHEDULER_HEALTHZ_PORT:-}}"
    [[ -n "$port" ]] || { _cl_err "no healthz port for $cfg (use cluster_write_scheduler_config or set SCHEDULER_HEALTHZ_PORT)"; return 1; }
    export SCHEDULER_HEALTHZ_URL="https://127.0.0.1:$port/healthz"
    mkdir -p "$CLUSTER_WORKDIR/scheduler-certs"
    serving=(--secure-port="$port" --bind-address=127.0.0.1 --cert-dir="$CLUSTER_WORKDIR/scheduler-certs")
    curlargs=(-k)
  fi
  # CLUSTER_POD_MAX_UNSCHEDULABLE (e.g. 30s): kube-scheduler's --pod-max-in-unschedulable-pods-duration,
  # the longest a pod waits in the unschedulable queue for a cluster event (5m by default on
  # current versions; v1.20 has no such flag and a fixed 60s).
  if [[ -n "${CLUSTER_POD_MAX_UNSCHEDULABLE:-}" ]] && ((CLUSTER_KUBE_MINOR >= 22)); then
    serving+=(--pod-max-in-unschedulable-pods-duration="$CLUSTER_POD_MAX_UNSCHEDULABLE")
  fi
  # CLUSTER_SCHEDULER_ARGS: more flags for kube-scheduler, split on spaces (e.g. to open
  # /debug/pprof/profile: --authorization-always-allow-paths=/healthz,/debug/pprof/profile).
  if [[ -n "${CLUSTER_SCHEDULER_ARGS:-}" ]]; then
    local extra
    read -r -a extra <<<"$CLUSTER_SCHEDULER_ARGS"
    serving+=("${extra[@]}")
  fi
  export SCHEDULER_LOG="$logf"
  _cl_log "version: kube-scheduler --version: $("$KUBE_BIN/kube-scheduler" --version 2>&1 | head -n1) ($KUBE_BIN/kube-scheduler)"
  _cl_log "starting kube-scheduler --config $cfg (log: $SCHEDULER_LOG)"
  _cl_start kube-scheduler "$SCHEDULER_LOG" "$KUBE_BIN/kube-scheduler" \
    --config="$cfg" \
    "${serving[@]}" \
    --v="${CLUSTER_SCHEDULER_V:-2}"
  export SCHEDULER_PID="$_CL_LAST_PID"
  _cl_wait_url kube-scheduler "$SCHEDULER_PID" "$SCHEDULER_HEALTHZ_URL" 60 "$SCHEDULER_LOG" "${curlargs[@]}" || return 1
  _cl_log "kube-scheduler healthy at $SCHEDULER_HEALTHZ_URL (pid $SCHEDULER_PID)"
}

# cluster_start_controller_manager [CONTROLLERS]: kube-controller-manager from $KUBE_BIN with only
# CONTROLLERS (default: deployment, replicaset, disruption and garbagecollector: what Deployments,
# rollouts and PodDisruptionBudgets need) as admin, no leader election, HTTPS health on a free
# loopback port. Returns 2 when $KUBE_BIN has no kube-controller-manager (the v1.20 build).
# Exports CONTROLLER_MANAGER_PID and CONTROLLER_MANAGER_LOG.
cluster_start_controller_manager() {
  _cl_require_up || return 1
  local bin="$KUBE_BIN/kube-controller-manager" port
  [[ -x "$bin" ]] || return 2
  port="$(cluster_free_ports 1)"
  export CONTROLLER_MANAGER_LOG="$CLUSTER_LOG_DIR/kube-controller-manager.log"
  mkdir -p "$CLUSTER_WORKDIR/controller-manager-certs"
  _cl_log "version: kube-controller-manager --version: $("$bin" --version 2>&1 | head -n1) ($bin)"
  _cl_start kube-controller-manager "$CONTROLLER_MANAGER_LOG" "$bin" \
    --kubeconfig="$ADMIN_KUBECONFIG" --controllers="${1:-deployment,replicaset,disruption,garbagecollector}" \
    --leader-elect=false --secure-port="$port" --bind-address=127.0.0.1 \
    --cert-dir="$CLUSTER_WORKDIR/controller-manager-certs" --v=2
  export CONTROLLER_MANAGER_PID="$_CL_LAST_PID"
  _cl_wait_url kube-controller-manager "$CONTROLLER_MANAGER_PID" "https://127.0.0.1:$port/healthz" 60 \
    "$CONTROLLER_MANAGER_LOG" -k || return 1
  _cl_log "kube-controller-manager healthy (pid $CONTROLLER_MANAGER_PID)"
}

# cluster_wait_http URL [TIMEOUT_S=30] [PID] [LOGFILE]: poll URL until it answers 2xx; fail early
# (printing the log tail) if PID is given and dies. For waiting on your daemon's health endpoint.
cluster_wait_http() {
  local url="$1" timeout="${2:-30}" pid="${3:-}" logf="${4:-}" deadline
  deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      _cl_err "pid $pid exited while waiting for $url"
      [[ -n "$logf" ]] && tail -n 25 "$logf" >&2
      return 1
    fi
    curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null && return 0
    sleep 0.2
  done
  _cl_err "$url not answering 2xx after ${timeout}s"
  [[ -n "$logf" ]] && tail -n 25 "$logf" >&2
  return 1
}

# cluster_stop_scheduler: stop the scheduler started by cluster_start_scheduler (no-op if none).
cluster_stop_scheduler() {
  if [[ -n "${SCHEDULER_PID:-}" ]]; then
    _cl_log "stopping kube-scheduler (pid $SCHEDULER_PID)"
    _cl_kill "$SCHEDULER_PID" kube-scheduler
  fi
  SCHEDULER_PID=""
}

# cluster_wait_pod_scheduled NS NAME [TIMEOUT_S=60]: wait until spec.nodeName is set; print it.
cluster_wait_pod_scheduled() {
  local ns="$1" name="$2" timeout="${3:-60}" deadline node
  deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    node="$(cluster_kubectl -n "$ns" get pod "$name" -o jsonpath='{.spec.nodeName}' 2>/dev/null || true)"
    if [[ -n "$node" ]]; then
      printf '%s\n' "$node"
      return 0
    fi
    sleep 0.5
  done
  _cl_err "pod $ns/$name not scheduled after ${timeout}s"
  cluster_kubectl -n "$ns" get pod "$name" -o yaml >&2 2>/dev/null || true
  return 1
}

# cluster_delete_pod NS NAME...: delete pods immediately (--grace-period=0 --force; no kubelet).
cluster_delete_pod() {
  local ns="$1"
  shift
  cluster_kubectl -n "$ns" delete pod "$@" --grace-period=0 --force --ignore-not-found >/dev/null 2>&1
}

# cluster_gpu_pod_manifest NAME GPUS [NS=default]: print a pod manifest requesting GPUS
# nvidia.com/gpu (automountServiceAccountToken: false; image never pulled, no kubelet).
cluster_gpu_pod_manifest() {
  local name="$1" gpus="$2" ns="${3:-default}"
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $ns
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.2
    resources:
      limits:
        nvidia.com/gpu: "$gpus"
EOF
}

# cluster_down [WORKDIR]: stop everything started (cleanup hooks, registered pids newest first,
# kube-scheduler, kube-apiserver, etcd). Idempotent; safe from traps. Keeps WORKDIR (logs)
# unless CLUSTER_KEEP_DATA=0, which deletes the etcd data dir.
cluster_down() {
  local rc=$?
  local wd="${1:-${CLUSTER_WORKDIR:-}}"
  trap - EXIT INT TERM
  [[ -n "$wd" && -f "$wd/pids" ]] || return "$rc"
  local c
  for c in "${_CL_CLEANUPS[@]+"${_CL_CLEANUPS[@]}"}"; do
    eval "$c" || true
  done
  _CL_CLEANUPS=()
  local lines=() i name pid
  mapfile -t lines <"$wd/pids"
  if ((${#lines[@]})); then
    _cl_log "stopping cluster processes (logs kept in $wd/logs)"
  fi
  # Reverse start order: registered pids/scheduler (newest) first, etcd last.
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    read -r name pid <<<"${lines[i]}"
    _cl_kill "$pid" "$name"
  done
  : >"$wd/pids"
  if [[ "${CLUSTER_KEEP_DATA:-1}" == 0 ]]; then
    rm -rf "$wd/etcd"
  fi
  SCHEDULER_PID=""
  unset CLUSTER_UP_DONE
  return "$rc"
}
