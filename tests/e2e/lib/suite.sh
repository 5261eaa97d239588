# shellcheck shell=bash
# The start every e2e suite shares, sourced after the suite sets SUITE_TAG (its log prefix):
# step/fail/result, host packages, the control plane of E2E_KUBE (up and bootstrapped in
# $E2E_WORKDIR), a log summary when the suite fails (it sets E2E_OK=1 when it passes), and the
# helpers below. EXTENDER_BINARY is the daemon (default build/scheduler-extender).
SUITE_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SUITE_LIB/../../.." && pwd)"
BIN="${EXTENDER_BINARY:-$ROOT/build/scheduler-extender}"
T0=$SECONDS
step() { printf '[%s %3ds] %s\n' "$SUITE_TAG" "$((SECONDS - T0))" "$*" >&2; }
# fail TEXT...: the suite fails; TEXT is logged now and again after the log summary (CI shows tails).
E2E_FAILURE=""
fail() {
  E2E_FAILURE="$*"
  step "FAIL: $*"
  exit 1
}

[[ -x "$BIN" ]] || fail "no daemon binary at $BIN (run make build)"
if [[ "$(id -u)" == 0 ]]; then "$SUITE_LIB/install-deps.sh"; else E2E_DEPS_CHECK_ONLY=1 "$SUITE_LIB/install-deps.sh"; fi
KUBE_BIN="$("$SUITE_LIB/kube-bin.sh" | tail -n1)"
export KUBE_BIN
WORKDIR="${E2E_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/scheduler-extender-e2e.XXXXXX")}"

# shellcheck source=cluster.sh
source "$SUITE_LIB/cluster.sh"

E2E_OK=0
suite_on_exit() {
  if [[ "$E2E_OK" != 1 ]]; then
    step "FAILED; logs in ${CLUSTER_LOG_DIR:-$WORKDIR/logs}:"
    ls -1 "${CLUSTER_LOG_DIR:-$WORKDIR/logs}" >&2 2>/dev/null || true
    if [[ -f "${DAEMON_LOG:-}" ]]; then
      step "last daemon log lines ($DAEMON_LOG):"
      tail -n 25 "$DAEMON_LOG" >&2 || true
    fi
    if [[ -f "${SCHEDULER_LOG:-}" ]]; then
      step "last scheduler warnings and errors ($SCHEDULER_LOG):"
      grep -E '^[EWF][0-9]{4} ' "$SCHEDULER_LOG" | tail -n 15 >&2 || true
    fi
    [[ -z "$E2E_FAILURE" ]] || step "FAILED: $E2E_FAILURE"
  fi
  return 0
}
cluster_register_cleanup suite_on_exit

step "control plane in $WORKDIR"
cluster_up "$WORKDIR"
cluster_bootstrap
K() { cluster_kubectl "$@"; }

# result TEXT...: a measured outcome, appended to $WORKDIR/results.txt and logged as a RESULT line.
RESULTS="$WORKDIR/results.txt"
: >"$RESULTS"
result() {
  printf '%s\n' "$*" >>"$RESULTS"
  step "RESULT ($CLUSTER_KUBE_VERSION): $*"
}

# expect TEST MESSAGE...: a failed TEST (a bash expression) is recorded in FAILURES and logged;
# the suite decides at its end.
FAILURES=()
expect() {
  local test="$1"
  shift
  if ! eval "$test"; then
    FAILURES+=("$*")
    step "EXPECTATION FAILED: $*"
  fi
}

# The daemon runs as a pod would: POD_NAME/POD_UID/POD_NAMESPACE name a placeholder pod (never
# scheduled) that carries the leader label while it leads, and make a restarted daemon the same
# replica (it renews its own Lease at once, as a restarted container does).
export POD_NAMESPACE=e2e-system POD_NAME=scheduler-extender-0
cluster_create_namespace "$POD_NAMESPACE"
K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $POD_NAME, namespace: $POD_NAMESPACE}
spec:
  schedulerName: e2e-no-scheduler
  automountServiceAccountToken: false
  containers: [{name: daemon, image: registry.k8s.io/pause:3.2}]
EOF
POD_UID="$(K -n "$POD_NAMESPACE" get pod "$POD_NAME" -o jsonpath='{.metadata.uid}')"
export POD_UID

# suite_wait_leading ADMIN_PORT: wait until the daemon there leads (its /readyz says so).
suite_wait_leading() {
  local deadline=$((SECONDS + 30))
  until curl -sf "http://127.0.0.1:$1/readyz" | jq -e '.leading == true' >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "the daemon on admin port $1 did not lead within 30s: $(curl -s "http://127.0.0.1:$1/readyz")"
    sleep 0.1
  done
}

# suite_start_daemon [FLAGS...]: the daemon in kubernetes mode on two free loopback ports
# (DAEMON_PORT, DAEMON_ADMIN; log DAEMON_LOG); waits until it is ready and leads.
suite_start_daemon() {
  local ports
  mapfile -t ports < <(cluster_free_ports 2)
  DAEMON_PORT="${ports[0]}"
  DAEMON_ADMIN="${ports[1]}"
  DAEMON_LOG="$CLUSTER_LOG_DIR/scheduler-extender.log"
  suite_run_daemon "$@"
  step "daemon log: $DAEMON_LOG"
}

# suite_run_daemon [FLAGS...]: the daemon (again, after a stop) in kubernetes mode on DAEMON_PORT
# and DAEMON_ADMIN, logging to DAEMON_LOG; waits until it is ready and leads.
suite_run_daemon() {
  "$BIN" --mode kubernetes --kubeconfig "$EXTENDER_KUBECONFIG" --log-level debug "$@" \
    --listen "127.0.0.1:$DAEMON_PORT" --admin-listen "127.0.0.1:$DAEMON_ADMIN" >>"$DAEMON_LOG" 2>&1 &
  DAEMON_PID=$!
  cluster_register_pid "$DAEMON_PID" scheduler-extender
  cluster_wait_http "http://127.0.0.1:$DAEMON_ADMIN/readyz" 60 "$DAEMON_PID" "$DAEMON_LOG" >/dev/null
  suite_wait_leading "$DAEMON_ADMIN"
}

# wait_until TIMEOUT DESCRIPTION COMMAND...: poll COMMAND until it succeeds, else fail.
wait_until() {
  local timeout="$1" what="$2" deadline
  shift 2
  deadline=$((SECONDS + timeout))
  until "$@"; do
    ((SECONDS < deadline)) || fail "timed out after ${timeout}s waiting for: $what"
    sleep 0.5
  done
}
# poll_until TIMEOUT COMMAND...: like wait_until, but returns 1 instead of failing.
poll_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.25
  done
}

node_of() { K get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
scheduled() { [[ -n "$(node_of "$1")" ]]; }
