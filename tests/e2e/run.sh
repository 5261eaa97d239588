#!/usr/bin/env bash
# `make e2e`: every end-to-end suite against a real control plane, one after the other, each on a
# control plane and work directory of its own. E2E_KUBE picks the Kubernetes version: current
# (default; tests/e2e/kube-current/go.mod) or 1.20 (`make e2e-v1.20`).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$SECONDS
ROOT="$(cd "$HERE/../.." && pwd)"
# Helm is cached under the build tree by the chart checks (tests/chart/get-helm.sh).
export TOOLS_DIR="${TOOLS_DIR:-$ROOT/build/tools}"
export E2E_KUBE="${E2E_KUBE:-current}"
base="${E2E_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/scheduler-extender-e2e.XXXXXX")}"
# Build (or reuse) the control plane once, before the first suite, so its time shows on its own.
if [[ "$(id -u)" == 0 ]]; then "$HERE/lib/install-deps.sh"; else E2E_DEPS_CHECK_ONLY=1 "$HERE/lib/install-deps.sh"; fi
t=$SECONDS
KUBE_BIN="$("$HERE/lib/kube-bin.sh" | tail -n1)"
echo "=== e2e: Kubernetes $("$KUBE_BIN/kube-apiserver" --version | awk '{print $2}') (E2E_KUBE=$E2E_KUBE) in $KUBE_BIN, ready after $((SECONDS - t))s" >&2
times=()
# E2E_SUITES: the suites to run, by name (e.g. "placement gpushare"); default: all of them.
suites=(${E2E_SUITES:-scenarios chart-install preemption-requeue volumes storage gpushare ha placement dra baremetal gang})
for suite in "${suites[@]/%/.sh}"; do
  [[ -x "$HERE/$suite" ]] || { echo "=== e2e: no suite ${suite%.sh} in $HERE" >&2; exit 2; }
  echo "=== e2e: $suite (work directory and logs: $base/${suite%.sh})" >&2
  t=$SECONDS
  E2E_WORKDIR="$base/${suite%.sh}" "$HERE/$suite"
  times+=("${suite%.sh} $((SECONDS - t))s")
done
echo "=== e2e: all passed in $((SECONDS - start))s on E2E_KUBE=$E2E_KUBE (${times[*]})" >&2
