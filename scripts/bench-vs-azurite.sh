#!/usr/bin/env bash
# Runs `cerulean-bench` against Cerulean (in-process, durable writes) and
# against Azurite 3.37.0 side by side with the same client, and prints both.
#   scripts/bench-vs-azurite.sh [bench flags, e.g. -duration 10s -workloads blob,queue,table]
# Azurite is installed with npm into a cache directory on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
AZ_DIR=${AZURITE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cerulean-azurite}
if [ ! -x "$AZ_DIR/node_modules/.bin/azurite" ]; then
  mkdir -p "$AZ_DIR"
  (cd "$AZ_DIR" && npm install --no-audit --no-fund azurite@3.37.0 >/dev/null)
fi
bin=$(mktemp -d)/cerulean
go build -o "$bin" ./cmd/cerulean
go build -o "$bin-bench" ./cmd/cerulean-bench
work=$(mktemp -d)
cleanup() { [ -n "${az_pid:-}" ] && kill "$az_pid" 2>/dev/null; rm -rf "$work" "$(dirname "$bin")"; }
trap cleanup EXIT
base=$((20000 + RANDOM % 10000)) # below the ephemeral range (32768-60999)
"$AZ_DIR/node_modules/.bin/azurite" --blobHost 127.0.0.1 --queueHost 127.0.0.1 --tableHost 127.0.0.1 \
  --blobPort "$base" --queuePort $((base + 1)) --tablePort $((base + 2)) \
  --location "$work/azurite" --disableTelemetry --skipApiVersionCheck --silent >"$work/azurite.log" 2>&1 &
az_pid=$!
for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$((base + 2))") 2>/dev/null && break; sleep 0.2; done
echo "== Cerulean (embedded store, durable writes)"
"$bin-bench" -data "$work/cerulean" "$@"
echo "== Azurite 3.37.0 (same client)"
"$bin-bench" -url "http://127.0.0.1:$base/devstoreaccount1" -queue-url "http://127.0.0.1:$((base + 1))/devstoreaccount1" \
  -table-url "http://127.0.0.1:$((base + 2))/devstoreaccount1" "$@"
