#!/usr/bin/env bash
# Idempotently install the host packages the e2e control plane needs (Debian 12).
#
#   tests/e2e/lib/install-deps.sh          # installs what is missing (needs root)
#   E2E_DEPS_CHECK_ONLY=1 install-deps.sh  # only report, exit 1 if something is missing
#
# Packages:
#   golang-1.19-go Go 1.19 at /usr/lib/go-1.19/bin/go, builds kube-apiserver/kube-scheduler/kubectl
#                  v1.20.2 (build-kube.sh calls it by that path, whatever else is on PATH)
#   etcd-server    etcd 3.4 for the apiserver
#   dpkg-dev       `apt-get source` (dpkg-source) for Debian's `kubernetes` source package
#   openssl curl jq rsync python3 ca-certificates util-linux(flock) procps iproute2(ss)
#   chromium       headless Chromium: scenarios.sh opens the status page (/ui), dumps its DOM and
#                  takes a screenshot
#   kubernetes-client  Debian's kubectl 1.20 -- only when no kubectl is on PATH at all: the
#                  library uses the kubectl built by build-kube.sh anyway, and on machines where
#                  another package (e.g. google-cloud-cli's `kubectl`) owns /usr/bin/kubectl,
#                  installing it would fail with a dpkg file conflict.
set -euo pipefail

log() { printf '[install-deps] %s\n' "$*" >&2; }

pkgs=(golang-1.19-go etcd-server dpkg-dev openssl curl jq rsync python3 ca-certificates util-linux procps iproute2 xz-utils chromium)
if ! command -v kubectl >/dev/null 2>&1; then
  pkgs+=(kubernetes-client)
fi

missing=()
for p in "${pkgs[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  log "all packages present: ${pkgs[*]}"
  exit 0
fi

if [[ -n "${E2E_DEPS_CHECK_ONLY:-}" ]]; then
  log "missing packages: ${missing[*]}"
  exit 1
fi

if [[ "$(id -u)" != 0 ]]; then
  log "missing packages: ${missing[*]} -- run as root (or: sudo apt-get install ${missing[*]})"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log "apt-get update"
apt-get update -qq >&2
log "apt-get install ${missing[*]}"
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
log "done"
