#!/usr/bin/env bash
# The scale benchmark of docs/benchmarks.md ("Scale"): `cerulean-bench
# -workloads scale` against a real `cerulean serve` in its own process (so
# its RSS, heap and data size are the server's alone) on each store, and
# against Azurite 3.37.0 with the same client, which stops a service's
# larger sizes once one fill takes longer than -scale-fill-limit (10 min).
#
#   bash scripts/bench-scale.sh [STORES] [-- bench flags]
#   bash scripts/bench-scale.sh embedded,memory,azurite -- -scale-sizes 10000,100000
#
# STORES: comma-separated of embedded, memory, postgres (needs
# CERULEAN_POSTGRES, e.g. under scripts/with-postgres.sh) and azurite;
# default embedded,memory,azurite. Ports 20200-20205, below the ephemeral range.
set -euo pipefail
cd "$(dirname "$0")/.."
stores=${1:-embedded,memory,azurite}
shift $(( $# > 0 ? 1 : 0 )) || true
[ "${1:-}" = "--" ] && shift
bin=$(mktemp -d /tmp/cerulean-scale-bin.XXXXXX)
work=$(mktemp -d /tmp/cerulean-scale.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$bin" "$work"; }
trap cleanup EXIT
go build -o "$bin/cerulean" ./cmd/cerulean
go build -o "$bin/cerulean-bench" ./cmd/cerulean-bench
acct=devstoreaccount1
urls=(-url http://127.0.0.1:20200/$acct -queue-url http://127.0.0.1:20201/$acct -table-url http://127.0.0.1:20202/$acct)
wait_port() { for _ in $(seq 300); do (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
for store in ${stores//,/ }; do
  echo "=== $store, $(date -u +%FT%TZ)"
  extra=()
  data="$work/$store"
  case $store in
    embedded) ;;
    memory) extra=(--in-memory) ;;
    postgres) extra=(--postgres "${CERULEAN_POSTGRES:?postgres needs CERULEAN_POSTGRES}") ;;
    azurite)
      AZ_DIR=${AZURITE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cerulean-azurite}
      if [ ! -x "$AZ_DIR/node_modules/.bin/azurite" ]; then
        mkdir -p "$AZ_DIR"
        (cd "$AZ_DIR" && npm install --no-audit --no-fund azurite@3.37.0 >/dev/null)
      fi
      "$AZ_DIR/node_modules/.bin/azurite" --blobHost 127.0.0.1 --queueHost 127.0.0.1 --tableHost 127.0.0.1 \
        --blobPort 20200 --queuePort 20201 --tablePort 20202 --location "$data" \
        --disableTelemetry --skipApiVersionCheck --silent >"$work/azurite.log" 2>&1 &
      pid=$!
      wait_port 20202
      "$bin/cerulean-bench" -workloads scale "${urls[@]}" -server-data "$data" "$@" || echo "azurite: scale failed: $?"
      kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
      continue ;;
    *) echo "unknown store $store" >&2; exit 2 ;;
  esac
  "$bin/cerulean" serve --data "$data" --blob-port 20200 --queue-port 20201 --table-port 20202 \
    --file-port -1 --dfs-port -1 --smb-port -1 --metrics-port 20205 --log-level warn "${extra[@]}" >"$work/$store.log" 2>&1 &
  pid=$!
  wait_port 20205
  dataflag=(-server-data "$data")
  [ "$store" = embedded ] || dataflag=()
  "$bin/cerulean-bench" -workloads scale "${urls[@]}" -metrics-url http://127.0.0.1:20205 "${dataflag[@]}" "$@"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
done
