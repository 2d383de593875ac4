#!/usr/bin/env bash
# The cost of the change feed and blob events on the write path
# (docs/events.md, "Cost and latency"): 1 KiB Put Blob with both off
# against the change feed plus one webhook subscription, each server a
# process of its own, alternated over rounds by scripts/bench-cpu.py
# (server CPU per operation and ops/s, 16 SDK clients), the webhook
# receiver another process (cerulean-bench -webhook) that answers the
# validation handshake and prints the events it got with their delivery
# latency every 5 s.
#
#   bash scripts/bench-events.sh [ROUNDS] [-disk]
#   BATCH=100 bash scripts/bench-events.sh [ROUNDS] [-disk]
#   RATE=2000 bash scripts/bench-events.sh [ROUNDS] [-disk]
#
# BATCH=N subscribes through --event-subscriptions with the endpoint's
# maxEventsPerBatch N (Event Grid's batched delivery) instead of
# --event-webhook (one event a request, Event Grid's default). RATE=N
# has the clients start N operations a second together (bench-cpu.py
# -rate) instead of as many as they can, so both servers serve the same
# load: with the receiver a third process on two cores, a closed loop
# measures how the cores are shared as much as what a write costs.
#
# Ports 21000-21002 (the servers) and 21010 (the receiver), below the
# ephemeral range.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-4}
shift $(( $# > 0 ? 1 : 0 )) || true
bin=$(mktemp -d /tmp/cerulean-events-bin.XXXXXX)
rpid=
cleanup() { [ -n "$rpid" ] && kill "$rpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$bin"; }
trap cleanup EXIT
go build -o "$bin/cerulean" ./cmd/cerulean
go build -o "$bin/cerulean-bench" ./cmd/cerulean-bench
"$bin/cerulean-bench" -webhook 127.0.0.1:21010 -webhook-period 5s >"$bin/receiver.log" 2>&1 &
rpid=$!
on="$bin/cerulean,--blob-change-feed,--event-webhook,http://127.0.0.1:21010/"
if [ -n "${BATCH:-}" ]; then
  printf '[{"name":"bench","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://127.0.0.1:21010/","maxEventsPerBatch":%d}}]\n' "$BATCH" >"$bin/subs.json"
  on="$bin/cerulean,--blob-change-feed,--event-subscriptions,$bin/subs.json"
fi
python3 scripts/bench-cpu.py -no-floor -rounds "$rounds" -workloads blob ${RATE:+-rate "$RATE"} "$@" "$bin/cerulean-bench" \
  "$bin/cerulean" "$on"
echo "--- the receiver (events of the runs with the webhook on):"
cat "$bin/receiver.log"
