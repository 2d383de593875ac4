#!/usr/bin/env bash
# Put/Get Blob 1 KiB with 16 clients against 1 and 3 `cerulean serve`
# front ends sharing one PostgreSQL database, beside the embedded store.
# Run it under a private PostgreSQL:
#   bash scripts/with-postgres.sh bash scripts/bench-postgres.sh [-duration 10s]
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CERULEAN_TEST_POSTGRES:?run under scripts/with-postgres.sh}"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
go build -o "$work/cerulean" ./cmd/cerulean
go build -o "$work/cerulean-bench" ./cmd/cerulean-bench
base=$((20000 + RANDOM % 10000)) # below the ephemeral range (32768-60999)
start() { # start i: a front end on port base+i
  "$work/cerulean" serve --postgres "$CERULEAN_TEST_POSTGRES" --blob-port $((base + $1)) --queue-port -1 --table-port -1 --file-port -1 --dfs-port -1 --smb-port -1 \
    --data "$work/d$1" --log-level warn >"$work/serve$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$((base + $1))") 2>/dev/null && return; sleep 0.1; done
  echo "front end $1 did not start" >&2; cat "$work/serve$1.log" >&2; exit 1
}
url() { echo "http://127.0.0.1:$((base + $1))/devstoreaccount1"; }
echo "== embedded store (in-process)"
"$work/cerulean-bench" -workloads blob "$@"
start 0
echo "== PostgreSQL, 1 front end"
"$work/cerulean-bench" -workloads blob -url "$(url 0)" "$@"
start 1
start 2
echo "== PostgreSQL, 3 front ends"
"$work/cerulean-bench" -workloads blob -url "$(url 0),$(url 1),$(url 2)" "$@"
