#!/usr/bin/env bash
# `make e2e`: every end-to-end suite against a real control plane, one after the other.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$SECONDS
ROOT="$(cd "$HERE/../.." && pwd)"
# Helm is cached under the build tree by the chart checks (tests/chart/get-helm.sh).
export TOOLS_DIR="${TOOLS_DIR:-$ROOT/build/tools}"
base="${E2E_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/scheduler-extender-e2e.XXXXXX")}"
for suite in scenarios.sh chart-install.sh; do
  echo "=== e2e: $suite (work directory and logs: $base/${suite%.sh})" >&2
  E2E_WORKDIR="$base/${suite%.sh}" "$HERE/$suite"
done
echo "=== e2e: all passed in $((SECONDS - start))s" >&2
