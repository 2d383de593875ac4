#!/usr/bin/env bash
# The steady-state soak of docs/benchmarks.md ("Soak"): a real `cerulean
# serve` on the embedded store (or --in-memory, or PostgreSQL with
# CERULEAN_POSTGRES set) under a moderate mixed load for an hour, reporting
# every five minutes each operation's p50/p99, the server's RSS, heap,
# goroutines and descriptors, and the data directory's size; it fails when
# an operation fails or the write p99 of the last quarter exceeds the first
# quarter's by more than 1.5×.
#
#   bash scripts/soak.sh [DURATION [WINDOW]] [-- extra cerulean serve flags]
#   bash scripts/soak.sh 60m 5m
#   bash scripts/soak.sh 10m 1m -- --in-memory
#
# Ports 20100-20105 (below the ephemeral range). The log is written to
# stdout; the server's own log to $SOAK_DIR/server.log.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-60m}
window=${2:-5m}
shift $(( $# > 2 ? 2 : $# )) || true
[ "${1:-}" = "--" ] && shift
bin=$(mktemp -d /tmp/cerulean-soak-bin.XXXXXX)
export SOAK_DIR=${SOAK_DIR:-$(mktemp -d /tmp/cerulean-soak.XXXXXX)}
go build -o "$bin/cerulean" ./cmd/cerulean
go build -o "$bin/cerulean-bench" ./cmd/cerulean-bench
serve=("$bin/cerulean" serve --data "$SOAK_DIR/data" --blob-port 20100 --queue-port 20101 \
  --table-port 20102 --file-port 20103 --dfs-port -1 --smb-port -1 --metrics-port 20105)
[ -n "${CERULEAN_POSTGRES:-}" ] && serve+=(--postgres "$CERULEAN_POSTGRES")
"${serve[@]}" "$@" >"$SOAK_DIR/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$bin"' EXIT
for _ in $(seq 100); do
  curl -fs http://127.0.0.1:20105/readyz >/dev/null 2>&1 && break
  sleep 0.1
done
acct=devstoreaccount1
echo "soak: server pid $pid, data in $SOAK_DIR/data, $(date -u +%FT%TZ)"
"$bin/cerulean-bench" -workloads soak -duration "$duration" -soak-window "$window" \
  -url http://127.0.0.1:20100/$acct -queue-url http://127.0.0.1:20101/$acct \
  -table-url http://127.0.0.1:20102/$acct -file-url http://127.0.0.1:20103/$acct \
  -metrics-url http://127.0.0.1:20105 -server-data "$SOAK_DIR/data"
