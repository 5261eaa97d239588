#!/usr/bin/env bash
# Build-or-reuse kube-apiserver, kube-scheduler and kubectl v1.20.2 from Debian 12's
# `kubernetes` source package, cached OUTSIDE the checkout.
#
#   tests/e2e/lib/build-kube.sh            # prints the bin dir as the LAST line of stdout
#   KUBE_BIN="$(tests/e2e/lib/build-kube.sh | tail -n1)"
#
# Cache layout (keyed by the Debian source version):
#   ${SCHEDULER_EXTENDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-extender}/
#     apt/                       private apt config/lists/cache (the system's sources are never edited)
#     kube-<debian-version>/
#       bin/{kube-apiserver,kube-scheduler,kubectl}   appears atomically, only after a good build
#       build.log                log of the last cold build
#       .lock                    flock: concurrent runs wait instead of building twice
#
# Environment:
#   KUBE_DEB_VERSION     Debian source version (default 1.20.5+really1.20.2-1.1+deb12u1)
#   KUBE_GIT_VERSION     version stamped into the binaries (default v1.20.2)
#   KUBE_BUILD_JOBS      go build -p (default 2)
#   KUBE_KEEP_BUILD=1    keep the build tree (~1.3 GB) after a successful build
#
# Cold build: ~8-10 min on 2 cores, ~1.3 GB temporary disk. Warm: well under a second.
# Progress goes to stderr, one line per step; build output goes to build.log.
set -euo pipefail

KUBE_DEB_VERSION="${KUBE_DEB_VERSION:-1.20.5+really1.20.2-1.1+deb12u1}"
KUBE_GIT_VERSION="${KUBE_GIT_VERSION:-v1.20.2}"
KUBE_BUILD_JOBS="${KUBE_BUILD_JOBS:-2}"
CACHE_ROOT="${SCHEDULER_EXTENDER_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/scheduler-extender}"
BINARIES=(kube-apiserver kube-scheduler kubectl)
# Go 1.19 vs. the vendored github.com/modern-go/reflect2 v1.0.1: the apiserver panics in
# reflect2.Type2 (nil pointer) when decoding requests (known Go >= 1.18 incompatibility).
# Replace reflect2/json-iterator in vendor/ with Debian 12's packaged sources of the versions
# upstream Kubernetes backported for Go 1.18 (reflect2 v1.0.2, json-iterator v1.1.12).
VENDOR_OVERRIDES=(
  "golang-github-modern-go-reflect2=1.0.2-2:github.com/modern-go/reflect2"
  "golang-github-json-iterator-go=1.1.12-1:github.com/json-iterator/go"
)
# Bump when the recipe changes; cached binaries built by another recipe are rebuilt.
BUILD_RECIPE="2 ${VENDOR_OVERRIDES[*]}"

log() { printf '[build-kube] %s\n' "$*" >&2; }
die() { printf '[build-kube] ERROR: %s\n' "$*" >&2; exit 1; }

# bin_ok DIR: all binaries present and executable.
bin_ok() {
  local d="$1" b
  for b in "${BINARIES[@]}"; do
    [[ -x "$d/$b" ]] || return 1
  done
  [[ "$(cat "$d/.build-recipe" 2>/dev/null || true)" == "$BUILD_RECIPE" ]]
}

kube_dir_for() { printf '%s/kube-%s' "$CACHE_ROOT" "$1"; }

# ---- warm path --------------------------------------------------------------
KDIR="$(kube_dir_for "$KUBE_DEB_VERSION")"
if bin_ok "$KDIR/bin"; then
  log "reusing cached binaries in $KDIR/bin"
  printf '%s\n' "$KDIR/bin"
  exit 0
fi

# ---- cold path --------------------------------------------------------------
# Debian's Go 1.19, called by its own path: a newer Go elsewhere on PATH (e.g. /usr/local/go) cannot
# build this tree in GOPATH mode, and GOTOOLCHAIN=local keeps it from switching toolchains.
GO="${KUBE_GO:-/usr/lib/go-1.19/bin/go}"
export GOTOOLCHAIN=local
[[ -x "$GO" ]] || die "'$GO' not found; run tests/e2e/lib/install-deps.sh as root first (package golang-1.19-go)"
for tool in apt-get dpkg-source flock rsync; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found; run tests/e2e/lib/install-deps.sh as root first"
done

mkdir -p "$CACHE_ROOT"

# Private apt configuration: deb-src copy of the system's Debian sources, own lists and cache.
APT_DIR="$CACHE_ROOT/apt"
APT_OPTS=(
  -o "Dir::Etc::SourceList=$APT_DIR/sources.list"
  -o "Dir::Etc::SourceParts=$APT_DIR/sources.list.d"
  -o "Dir::State::Lists=$APT_DIR/lists"
  -o "Dir::Cache=$APT_DIR/cache"
  -o "APT::Sandbox::User=$(id -un)"
  -o "Acquire::Retries=3"
)

prepare_private_apt() {
  mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
  : >"$APT_DIR/sources.list"
  rm -f "$APT_DIR/sources.list.d/"*
  local found=0 f
  # deb822 format (Debian 12 default).
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    grep -qiE '^URIs:.*debian' "$f" || continue
    # "Types: deb" (or "deb deb-src") -> "Types: deb-src"
    sed -E 's/^Types:.*$/Types: deb-src/' "$f" >"$APT_DIR/sources.list.d/$(basename "$f")"
    found=1
  done
  # one-line format.
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] || continue
    if grep -qE '^[[:space:]]*deb[[:space:]].*debian' "$f"; then
      sed -nE 's/^[[:space:]]*deb([[:space:]].*debian.*)$/deb-src\1/p' "$f" >>"$APT_DIR/sources.list"
      found=1
    fi
  done
  ((found)) || die "no Debian apt sources found in /etc/apt/sources.list{,.d/}"
}

# Resolve which source version to build (pinned one, or what the archive offers as fallback).
resolve_version() {
  local versions
  versions="$(apt-cache "${APT_OPTS[@]}" showsrc kubernetes 2>/dev/null | sed -n 's/^Version: //p' | sort -u)"
  [[ -n "$versions" ]] || die "apt has no source package 'kubernetes' (private lists in $APT_DIR/lists)"
  if grep -qxF "$KUBE_DEB_VERSION" <<<"$versions"; then
    printf '%s\n' "$KUBE_DEB_VERSION"
    return
  fi
  local alt
  alt="$(grep -F 'really1.20.2' <<<"$versions" | tail -n1 || true)"
  [[ -n "$alt" ]] || die "kubernetes source $KUBE_DEB_VERSION not available (have: $(tr '\n' ' ' <<<"$versions")); set KUBE_DEB_VERSION"
  log "WARNING: $KUBE_DEB_VERSION not in the archive, using $alt"
  printf '%s\n' "$alt"
}

# Take the per-cache lock before touching the private apt dirs or building.
mkdir -p "$KDIR"
exec 9>"$CACHE_ROOT/.build.lock"
if ! flock -n 9; then
  log "another build holds $CACHE_ROOT/.build.lock; waiting"
  flock 9
fi
if bin_ok "$KDIR/bin"; then # built by a concurrent run while we waited
  log "reusing cached binaries in $KDIR/bin"
  printf '%s\n' "$KDIR/bin"
  exit 0
fi

log "apt-get update (private config in $APT_DIR)"
prepare_private_apt
apt-get "${APT_OPTS[@]}" -qq update >&2 || die "apt-get update failed"
VERSION="$(resolve_version)"
if [[ "$VERSION" != "$KUBE_DEB_VERSION" ]]; then
  rmdir "$KDIR" 2>/dev/null || true
  KDIR="$(kube_dir_for "$VERSION")"
  mkdir -p "$KDIR"
  if bin_ok "$KDIR/bin"; then
    log "reusing cached binaries in $KDIR/bin"
    printf '%s\n' "$KDIR/bin"
    exit 0
  fi
fi

# Remove leftovers of interrupted builds (we hold the lock, so nobody else uses them).
rm -rf "$KDIR"/build.* "$KDIR"/bin.new.*

BUILD="$(mktemp -d "$KDIR/build.XXXXXX")"
BLOG="$KDIR/build.log"
: >"$BLOG"
cleanup_build() {
  local rc=$?
  if ((rc != 0)); then
    log "FAILED (rc=$rc); build log: $BLOG"
    tail -n 30 "$BLOG" >&2 || true
  fi
  if [[ -z "${KUBE_KEEP_BUILD:-}" ]]; then
    rm -rf "$BUILD"
  fi
}
trap cleanup_build EXIT
START=$SECONDS
log "cold build of kubernetes $VERSION in $BUILD (log: $BLOG)"

# ---- fetch sources ----------------------------------------------------------
log "apt-get source kubernetes=$VERSION"
mkdir -p "$BUILD/dl"
(cd "$BUILD/dl" && apt-get "${APT_OPTS[@]}" source "kubernetes=$VERSION") >>"$BLOG" 2>&1 \
  || die "apt-get source failed"
SRC_DIR="$(find "$BUILD/dl" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)"
[[ -n "$SRC_DIR" && -d "$SRC_DIR/cmd/kube-apiserver" ]] || die "unpacked source tree not found in $BUILD/dl"

export GOPATH="$BUILD/gopath"
KROOT="$GOPATH/src/k8s.io/kubernetes"
mkdir -p "$(dirname "$KROOT")"
mv "$SRC_DIR" "$KROOT"
rm -rf "$BUILD/dl"

for ov in "${VENDOR_OVERRIDES[@]}"; do
  spec="${ov%%:*}" vpath="${ov#*:}"
  log "vendor override: vendor/$vpath <- Debian source $spec"
  rm -rf "$BUILD/ov" && mkdir -p "$BUILD/ov"
  (cd "$BUILD/ov" && apt-get "${APT_OPTS[@]}" source "$spec") >>"$BLOG" 2>&1 \
    || die "apt-get source $spec failed"
  ovsrc="$(find "$BUILD/ov" -mindepth 1 -maxdepth 1 -type d | head -n1)"
  [[ -n "$ovsrc" ]] || die "no unpacked tree for $spec"
  rm -rf "${KROOT:?}/vendor/$vpath"
  mkdir -p "$KROOT/vendor/$vpath"
  rsync -a --exclude /debian --exclude '/.*' "$ovsrc/" "$KROOT/vendor/$vpath/"
  rm -rf "$BUILD/ov"
done

# GOPATH mode exactly like hack/lib/init.sh (module mode with -mod=vendor fails with Go 1.19).
export GO111MODULE=off
export GOFLAGS=""
export CGO_ENABLED=0
export GOCACHE="$BUILD/gocache"
export GOTMPDIR="$BUILD/gotmp"
export GOMAXPROCS="$KUBE_BUILD_JOBS"
mkdir -p "$GOTMPDIR"
cd "$KROOT"

# ---- openapi-gen -------------------------------------------------------------
log "building openapi-gen"
"$GO" build -p "$KUBE_BUILD_JOBS" -o "$BUILD/tools/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen >>"$BLOG" 2>&1 \
  || die "building openapi-gen failed"

# Same input set as build/root/Makefile.generated_files (KUBE target): every Go dir outside
# ./vendor, ./_* and ./.* (staging/src/* named as vendor/*), whose files carry a
# '+k8s:openapi-gen=' tag, minus code-generator and sample-apiserver.
log "generating pkg/generated/openapi/zz_generated.openapi.go"
mapfile -t OPENAPI_DIRS < <(
  find -H . \( -path ./vendor -o -path './_*' -o -path './.*' \) -prune -o -type f -name '*.go' -print0 \
    | xargs -0 grep -l --null --color=never '^// *+k8s:' \
    | xargs -0 grep -l --color=never '+k8s:openapi-gen=' \
    | sed -e 's|^\./||' -e 's|^staging/src/|vendor/|' \
    | grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' \
    | xargs -n1 dirname \
    | LC_ALL=C sort -u
)
((${#OPENAPI_DIRS[@]} > 10)) || die "found only ${#OPENAPI_DIRS[@]} openapi input dirs"
INPUTS="$(printf 'k8s.io/kubernetes/%s,' "${OPENAPI_DIRS[@]}")"
INPUTS="${INPUTS%,}"
"$BUILD/tools/openapi-gen" \
  --logtostderr \
  -i "$INPUTS" \
  -o "$GOPATH/src" \
  -p k8s.io/kubernetes/pkg/generated/openapi \
  -O zz_generated.openapi \
  -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
  -r "$BUILD/openapi-violations.report" >>"$BLOG" 2>&1 \
  || die "openapi-gen failed"
[[ -s pkg/generated/openapi/zz_generated.openapi.go ]] || die "openapi-gen produced no output"

# ---- binaries ----------------------------------------------------------------
MAJOR="${KUBE_GIT_VERSION#v}"; MAJOR="${MAJOR%%.*}"
MINOR="${KUBE_GIT_VERSION#v*.}"; MINOR="${MINOR%%.*}"
LDFLAGS="-s -w"
for pkg in vendor/k8s.io/component-base/version vendor/k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X k8s.io/kubernetes/$pkg.gitVersion=$KUBE_GIT_VERSION"
  LDFLAGS+=" -X k8s.io/kubernetes/$pkg.gitMajor=$MAJOR"
  LDFLAGS+=" -X k8s.io/kubernetes/$pkg.gitMinor=$MINOR"
  LDFLAGS+=" -X k8s.io/kubernetes/$pkg.gitTreeState=clean"
  LDFLAGS+=" -X k8s.io/kubernetes/$pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done
log "$("$GO" version): go build -p $KUBE_BUILD_JOBS ${BINARIES[*]} (several minutes)"
mkdir -p "$BUILD/out"
pkgs=()
for b in "${BINARIES[@]}"; do pkgs+=("./cmd/$b"); done
"$GO" build -p "$KUBE_BUILD_JOBS" -ldflags "$LDFLAGS" -o "$BUILD/out/" "${pkgs[@]}" >>"$BLOG" 2>&1 \
  || die "go build failed"

for b in "${BINARIES[@]}"; do
  v="$("$BUILD/out/$b" --version 2>&1 | head -n1 || true)"
  if [[ "$b" == kubectl ]]; then
    v="$("$BUILD/out/$b" version --client --short 2>&1 | head -n1 || true)"
  fi
  [[ "$v" == *"$KUBE_GIT_VERSION"* ]] || die "$b reports '$v', expected $KUBE_GIT_VERSION"
  log "built $b: $v"
done

# ---- publish atomically --------------------------------------------------------
printf '%s\n' "$BUILD_RECIPE" >"$BUILD/out/.build-recipe"
NEW="$KDIR/bin.new.$$"
mv "$BUILD/out" "$NEW"
rm -rf "${KDIR:?}/bin"
mv -T "$NEW" "$KDIR/bin"
log "done in $((SECONDS - START))s: $KDIR/bin"
printf '%s\n' "$KDIR/bin"
