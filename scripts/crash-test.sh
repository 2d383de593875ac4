#!/usr/bin/env bash
# crash-test.sh runs N SIGKILL crash trials of a real `cerulean serve`
# (test/crash): mixed load on the Blob, Queue, Table and File services, the
# process killed mid-flight, restarted on the same data, and every
# acknowledged write checked byte for byte, every queue message neither lost
# nor delivered again before its visibility timeout ended; then N trials
# of a second server with --container-soft-delete, whose containers (of a
# flat account, and filesystems of a hierarchical one) must come back from
# every kill either live with all their blobs or deleted and restorable
# with all of them; then N trials of a third server with version-level
# immutability, container-level WORM and a hierarchical account, whose
# deletes under a hold or policy must be refused and leave everything
# whole, and whose other deletes must go (test/crash/worm_delete_test.go).
#
#   bash scripts/crash-test.sh 5
#   bash scripts/with-postgres.sh bash scripts/crash-test.sh 5   # on PostgreSQL
#
# The servers listen on four consecutive loopback ports from
# CERULEAN_CRASH_PORT (default 21210), the four after them and the five
# after those. Further arguments go to go test (e.g. -v, or -run
# TestWORMDeleteCrashTrials for one trial alone).
set -euo pipefail
if [ "$#" -lt 1 ] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N [go test flags...]   (N trials, N >= 1)" >&2
  exit 2
fi
n=$1
shift
cd "$(dirname "$0")/.."
# About 10 s per trial; the timeout leaves room for a slow machine.
timeout=$((10 + n))m
CERULEAN_CRASH_TRIALS=$n exec go test -count=1 -timeout "$timeout" -run '^(TestCrashTrials|TestContainerSoftDeleteCrashTrials|TestWORMDeleteCrashTrials)$' "$@" ./test/crash/
