#!/usr/bin/env bash
# Build-or-reuse the control plane that E2E_KUBE names and print its bin dir as the last stdout line.
#   E2E_KUBE=current (default)  tests/e2e/kube-current/go.mod's k8s.io/kubernetes, from Go modules
#                               (build-kube-current.sh; brings its own etcd)
#   E2E_KUBE=1.20               v1.20.2 from Debian 12's source package (build-kube.sh; Debian's etcd)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "${E2E_KUBE:-current}" in
  current) exec "$HERE/build-kube-current.sh" ;;
  1.20 | v1.20) exec "$HERE/build-kube.sh" ;;
  *) printf '[kube-bin] ERROR: E2E_KUBE=%s: want current or 1.20\n' "$E2E_KUBE" >&2; exit 2 ;;
esac
