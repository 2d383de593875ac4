#!/usr/bin/env bash
# Runs `cerulean bench` against Cerulean (in-process, durable writes) and
# against Azurite 3.37.0 side by side with the same client, and prints both.
# Usage: scripts/bench-vs-azurite.sh [extra bench flags, e.g. -duration 10s]
# Azurite is installed with npm into a cache directory on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
AZ_DIR=${AZURITE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cerulean-azurite}
if [ ! -x "$AZ_DIR/node_modules/.bin/azurite-blob" ]; then
  mkdir -p "$AZ_DIR"
  (cd "$AZ_DIR" && npm install --no-audit --no-fund azurite@3.37.0 >/dev/null)
fi
go build -o /tmp/cerulean-bench-bin ./cmd/cerulean
work=$(mktemp -d)
cleanup() { [ -n "${az_pid:-}" ] && kill "$az_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port=$((20000 + RANDOM % 20000))
"$AZ_DIR/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$port" \
  --location "$work/azurite" --disableTelemetry --skipApiVersionCheck --silent >"$work/azurite.log" 2>&1 &
az_pid=$!
for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
echo "== Cerulean (embedded store, durable writes)"
/tmp/cerulean-bench-bin bench -data "$work/cerulean" "$@"
echo "== Azurite 3.37.0 (same client)"
/tmp/cerulean-bench-bin bench -url "http://127.0.0.1:$port/devstoreaccount1" "$@"
