#!/usr/bin/env bash
# The daemon, standalone as `make run` starts it, against the independent floor (floor_server:
# cpp-httplib and simdjson, no daemon code), with the clients people use: wrk with one
# connection, and a Go net/http client made like kube-scheduler's extender client
# (bench/goclient, built with the Go toolchain `make e2e` uses; never by `make test`).
# Stages: the Nodes-form /filter of 500 nodes, and the NodeNames form of 5,000 nodes the daemon
# has seen. Targets alternate so that both see the same machine; medians are printed. With
# BASELINE=path/to/another/scheduler-extender (another commit's build), that daemon runs beside
# this one and the NodeNames stage with wrk measures it in the same alternating rounds.
# usage: [BASELINE=BINARY] bench/run_floor.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-40}
data="$build/bench-data"
go=${GO:-/usr/local/go/bin/go}
gocache=${GOCACHE:-$HOME/.cache/scheduler-extender/gocache}

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq wrk >/dev/null; else echo "wrk is missing: apt-get install wrk" >&2; exit 1; fi
fi
cmake --build "$build" -j"${JOBS:-2}" --target scheduler-extender floor_server >/dev/null
(cd bench/goclient && GOCACHE="$gocache" GOTOOLCHAIN=local "$go" build -o "$OLDPWD/$build/bench/goclient" .)
mkdir -p "$data"
for n in 500 5000; do
  [ -s "$data/args-$n.json" ] || python3 bench/gen_extender_args.py "$n" "$data/args-$n.json"
done
# The NodeNames form of the 5,000-node body, as kube-scheduler sends it once the daemon has the nodes.
[ -s "$data/names-5000.json" ] || python3 -c '
import json, sys
args = json.load(open(sys.argv[1]))
names = [n["metadata"]["name"] for n in args["Nodes"]["items"]]
json.dump({"Pod": args["Pod"], "Nodes": None, "NodeNames": names}, open(sys.argv[2], "w"), separators=(",", ":"))
' "$data/args-5000.json" "$data/names-5000.json"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
daemon_port=$(port); admin_port=$(port); floor_port=$(port)
# wrk replays one pod's request back to back, which server.pacing would answer late (kube-scheduler
# sends each pod once an attempt): the daemon runs the example config with pacing off.
config="$data/floor-config.yaml"
sed 's/^server:$/server:\n  pacing: {hold: 0s}/' examples/config.yaml >"$config"
"$build/scheduler-extender" --config "$config" --listen "127.0.0.1:$daemon_port" \
  --admin-listen "127.0.0.1:$admin_port" --log-level warn &
daemon=$!
"$build/bench/floor_server" "$floor_port" &
floor=$!
baseline=
if [ -n "${BASELINE:-}" ]; then
  baseline_port=$(port); baseline_admin=$(port)
  "$BASELINE" --config examples/config.yaml --listen "127.0.0.1:$baseline_port" --admin-listen "127.0.0.1:$baseline_admin" \
    --log-level warn &
  baseline=$!
fi
trap 'kill $daemon $floor $baseline 2>/dev/null; wait 2>/dev/null' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$admin_port/readyz" >/dev/null && break
  sleep 0.1
done
daemon_url="http://127.0.0.1:$daemon_port/scheduler/filter"
floor_url="http://127.0.0.1:$floor_port/filter"

echo "== Nodes form, 500 nodes ($(du -h "$data/args-500.json" | cut -f1)), Go net/http client, $runs calls each"
"$build/bench/goclient" -body "$data/args-500.json" -runs "$runs" "$daemon_url" "$floor_url"

echo "== Nodes form, 500 nodes, wrk -t1 -c1, 4 alternating rounds of 5 s each; median of the rounds' medians"
wrk_median() {
  WRK_BODY="${2:-$data/args-500.json}" wrk -t1 -c1 -d5s --latency -s bench/wrk_post.lua "$1" |
    awk '$1 == "50%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } print v }'
}
d=(); f=()
for _ in 1 2 3 4; do d+=("$(wrk_median "$daemon_url")"); f+=("$(wrk_median "$floor_url")"); done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2 }'; }
dm=$(median "${d[@]}"); fm=$(median "${f[@]}")
printf 'wrk -c1       daemon %8.2f ms  floor %8.2f ms  ratio %.2fx  (rounds: daemon %s; floor %s)\n' \
  "$dm" "$fm" "$(awk -v a="$dm" -v b="$fm" 'BEGIN { print a / b }')" "${d[*]}" "${f[*]}"

echo "== NodeNames form, 5,000 nodes the daemon has seen, Go net/http client, $runs calls each"
curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary "@$data/args-5000.json" "$daemon_url"
# The floor echoes every name (it has no cache to decide with), so the answers are not compared.
# The Go client's own decoding of the answer (5,000 names, or 2,500 and 2,500 failure reasons) is
# most of what it times here; wrk reads the answer without decoding it.
"$build/bench/goclient" -names -compare=false -body "$data/args-5000.json" -runs "$runs" "$daemon_url" "$floor_url"

echo "== NodeNames form, 5,000 nodes the daemon has seen, wrk -t1 -c1, 4 alternating rounds of 5 s each"
baseline_url="http://127.0.0.1:${baseline_port:-0}/scheduler/filter"
if [ -n "$baseline" ]; then
  curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary "@$data/args-5000.json" "$baseline_url"
fi
d=(); f=(); b=()
for _ in 1 2 3 4; do
  d+=("$(wrk_median "$daemon_url" "$data/names-5000.json")"); f+=("$(wrk_median "$floor_url" "$data/names-5000.json")")
  if [ -n "$baseline" ]; then b+=("$(wrk_median "$baseline_url" "$data/names-5000.json")"); fi
done
dm=$(median "${d[@]}"); fm=$(median "${f[@]}")
printf 'wrk -c1       daemon %8.2f ms  floor %8.2f ms  ratio %.2fx  (rounds: daemon %s; floor %s)\n' \
  "$dm" "$fm" "$(awk -v a="$dm" -v b="$fm" 'BEGIN { print a / b }')" "${d[*]}" "${f[*]}"
if [ -n "$baseline" ]; then
  printf 'wrk -c1       baseline %8.2f ms  (%s; rounds: %s)\n' "$(median "${b[@]}")" "$BASELINE" "${b[*]}"
fi
