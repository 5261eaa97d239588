#!/usr/bin/env bash
# Build-or-reuse the CURRENT Kubernetes control plane from Go modules: kube-apiserver,
# kube-scheduler, kubectl, kube-controller-manager (k8s.io/kubernetes) and etcd (go.etcd.io/etcd/server/v3), at the versions
# tests/e2e/kube-current/go.mod pins, cached OUTSIDE the checkout.
#
#   tests/e2e/lib/build-kube-current.sh     # prints the bin dir as the LAST line of stdout
#
# Cache layout (keyed by the k8s.io/kubernetes version; shares the v1.20 build's root and lock):
#   ${SCHEDULER_EXTENDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-extender}/
#     gomod/  gocache/                 GOMODCACHE and GOCACHE of these builds (a rebuild is warm)
#     kube-<version>/
#       bin/{kube-apiserver,kube-scheduler,kubectl,etcd,kube-controller-manager}   appears atomically
#       build.log                      log of the last cold build
#   .build.lock                        flock: one Kubernetes build at a time on the machine
#
# The toolchain is /usr/local/go/bin/go, called by its path with GOTOOLCHAIN=local (no toolchain
# download: go.mod's `go` line must not be newer than it), GOFLAGS=-mod=mod, CGO_ENABLED=0, -p 2.
# The binaries carry their versions (-ldflags -X), so `--version` prints them.
#
# Environment:
#   KUBE_CURRENT_GO      go binary (default /usr/local/go/bin/go)
#   KUBE_BUILD_JOBS      go build -p (default 2)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODDIR="$(cd "$HERE/../kube-current" && pwd)"
GO="${KUBE_CURRENT_GO:-/usr/local/go/bin/go}"
KUBE_BUILD_JOBS="${KUBE_BUILD_JOBS:-2}"
CACHE_ROOT="${SCHEDULER_EXTENDER_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/scheduler-extender}"
BINARIES=(kube-apiserver kube-scheduler kubectl etcd kube-controller-manager)

log() { printf '[build-kube-current] %s\n' "$*" >&2; }
die() { printf '[build-kube-current] ERROR: %s\n' "$*" >&2; exit 1; }

# mod_version MODULE: the version go.mod requires (a plain read: the warm path runs no go command).
mod_version() {
  awk -v m="$1" '$1 == m && $2 ~ /^v[0-9]/ {print $2; exit}' "$MODDIR/go.mod"
}
KUBE_VERSION="$(mod_version k8s.io/kubernetes)"
ETCD_VERSION="$(mod_version go.etcd.io/etcd/server/v3)"
[[ -n "$KUBE_VERSION" && -n "$ETCD_VERSION" ]] || die "cannot read the k8s.io/kubernetes and etcd versions from $MODDIR/go.mod"
# The recipe: go.mod, go.sum and this script's build steps. Cached binaries of another recipe are rebuilt.
RECIPE="$(cat "$MODDIR/go.mod" "$MODDIR/go.sum" | sha256sum | cut -c1-16) recipe-1"
KDIR="$CACHE_ROOT/kube-$KUBE_VERSION"

bin_ok() {
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$1/$b" ]] || return 1; done
  [[ "$(cat "$1/.build-recipe" 2>/dev/null || true)" == "$RECIPE" ]]
}

if bin_ok "$KDIR/bin"; then
  log "reusing cached Kubernetes $KUBE_VERSION (etcd $ETCD_VERSION) in $KDIR/bin"
  printf '%s\n' "$KDIR/bin"
  exit 0
fi

[[ -x "$GO" ]] || die "'$GO' not found (Go at /usr/local/go is part of this machine)"
command -v flock >/dev/null 2>&1 || die "'flock' not found; run tests/e2e/lib/install-deps.sh as root first"
mkdir -p "$KDIR"
exec 9>"$CACHE_ROOT/.build.lock"
if ! flock -n 9; then
  log "another build holds $CACHE_ROOT/.build.lock; waiting"
  flock 9
fi
if bin_ok "$KDIR/bin"; then
  log "reusing cached Kubernetes $KUBE_VERSION (built while we waited) in $KDIR/bin"
  printf '%s\n' "$KDIR/bin"
  exit 0
fi
rm -rf "$KDIR"/build.* "$KDIR"/bin.new.*

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
export GOMODCACHE="$CACHE_ROOT/gomod" GOCACHE="$CACHE_ROOT/gocache"
export GOMAXPROCS="$KUBE_BUILD_JOBS"
unset GOPATH GO111MODULE GOWORK GOOS GOARCH
BUILD="$(mktemp -d "$KDIR/build.XXXXXX")"
BLOG="$KDIR/build.log"
: >"$BLOG"
cleanup_build() {
  local rc=$?
  ((rc == 0)) || { log "FAILED (rc=$rc); build log: $BLOG"; tail -n 30 "$BLOG" >&2 || true; }
  rm -rf "$BUILD"
}
trap cleanup_build EXIT
START=$SECONDS
# A copy of the module: -mod=mod never writes into the checkout.
mkdir -p "$BUILD/mod" "$BUILD/out"
cp "$MODDIR/go.mod" "$MODDIR/go.sum" "$BUILD/mod/"
cd "$BUILD/mod"
log "cold build of Kubernetes $KUBE_VERSION and etcd $ETCD_VERSION with $("$GO" version | cut -d' ' -f3) (log: $BLOG; GOMODCACHE=$GOMODCACHE GOCACHE=$GOCACHE)"

log "go mod download"
"$GO" mod download >>"$BLOG" 2>&1 || die "go mod download failed"

MINOR="${KUBE_VERSION#v1.}"; MINOR="${MINOR%%.*}"
DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$MINOR"
  LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$DATE"
done
log "go build -p $KUBE_BUILD_JOBS kube-apiserver kube-scheduler kubectl kube-controller-manager (several minutes)"
"$GO" build -p "$KUBE_BUILD_JOBS" -trimpath -ldflags "$LDFLAGS" -o "$BUILD/out/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  >>"$BLOG" 2>&1 || die "go build of Kubernetes failed"
log "go build -p $KUBE_BUILD_JOBS etcd"
"$GO" build -p "$KUBE_BUILD_JOBS" -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" \
  -o "$BUILD/out/etcd" go.etcd.io/etcd/server/v3 >>"$BLOG" 2>&1 || die "go build of etcd failed"

for b in "${BINARIES[@]}"; do
  case "$b" in
    kubectl) v="$("$BUILD/out/$b" version --client 2>&1 | head -n1 || true)"; want="$KUBE_VERSION" ;;
    etcd) v="$("$BUILD/out/$b" --version 2>&1 | head -n1 || true)"; want="${ETCD_VERSION#v}" ;;
    *) v="$("$BUILD/out/$b" --version 2>&1 | head -n1 || true)"; want="$KUBE_VERSION" ;;
  esac
  [[ "$v" == *"$want"* ]] || die "$b reports '$v', expected $want"
  log "built $b: $v"
done

printf '%s\n' "$RECIPE" >"$BUILD/out/.build-recipe"
NEW="$KDIR/bin.new.$$"
mv "$BUILD/out" "$NEW"
rm -rf "${KDIR:?}/bin"
mv -T "$NEW" "$KDIR/bin"
log "done in $((SECONDS - START))s: $KDIR/bin"
printf '%s\n' "$KDIR/bin"
