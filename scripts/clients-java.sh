#!/usr/bin/env bash
# clients-java.sh: the Java client compatibility matrix of
# docs/compatibility.md ("Java"): the Azure SDK for Java (versions pinned by
# the azure-sdk-bom import in scripts/clients/java/pom.xml) against a fresh
# `cerulean serve`, run as a JUnit 5 suite by `mvn test`. Three servers:
# as in scripts/compat.sh, Blob, Queue, Table and File on a flat
# namespace, and a second one with --hierarchical-namespace for the Data
# Lake tests (its dfs port also answers the Blob API); a third with
# --blob-change-feed for the blob change feed client (ChangeFeedTest). Maven's local repository is the
# default (~/.m2), so the second run needs no downloads. Then Hadoop's
# ABFS driver (scripts/clients/java/abfs, a project of its own) against the
# dfs port, and Hadoop's own filesystem contract tests for ABFS (the
# contract profile of that project). Exits non-zero when a test fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cerulean-java.XXXXXX)
pid=0 dlpid=0 cfpid=0
cleanup() {
  for p in "$pid" "$dlpid" "$cfpid"; do
    if [ "$p" != 0 ]; then kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
base=${JAVA_PORT_BASE:-2480}  # ports 24800-24807: below the ephemeral range (32768-60999)

go build -o "$work/cerulean" "$root/cmd/cerulean"
"$work/cerulean" serve --data "$work/data" --blob-port "${base}0" --queue-port "${base}1" \
  --table-port "${base}2" --file-port "${base}3" --dfs-port -1 --smb-port -1 --log-level warn &
pid=$!
"$work/cerulean" serve --data "$work/data-dl" --blob-port "${base}5" --queue-port -1 --table-port -1 \
  --file-port -1 --dfs-port "${base}6" --smb-port -1 --hierarchical-namespace --log-level warn &
dlpid=$!
"$work/cerulean" serve --in-memory --blob-port "${base}7" --queue-port -1 --table-port -1 \
  --file-port -1 --dfs-port -1 --smb-port -1 --blob-change-feed --log-level warn &
cfpid=$!
# Wait until every port answers (at most 10 s).
for port in "${base}0" "${base}1" "${base}2" "${base}3" "${base}5" "${base}6" "${base}7"; do
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.1
  done
done

u=http://127.0.0.1
props=(-Dcerulean.blob="$u:${base}0" -Dcerulean.queue="$u:${base}1" -Dcerulean.table="$u:${base}2"
  -Dcerulean.file="$u:${base}3" -Dcerulean.dlblob="$u:${base}5" -Dcerulean.dfs="$u:${base}6"
  -Dcerulean.cfblob="$u:${base}7")
failed=0
echo "-- Azure SDK for Java (scripts/clients/java)"
(cd "$root/scripts/clients/java" && mvn -B -q test "${props[@]}" "$@") || failed=1
echo "-- Hadoop ABFS driver (scripts/clients/java/abfs), with Hadoop's ABFS contract tests"
# -Pcontract adds hadoop-azure's own ITestAbfsFileSystemContract* classes
# (its test jar), pointed at the dfs port by azure-auth-keys.xml.
(cd "$root/scripts/clients/java/abfs" && mvn -B -q test -Pcontract "${props[@]}" \
  -Dcerulean.dfsendpoint="127.0.0.1:${base}6" "$@") || failed=1
# The matrix's rows (scripts/matrix.sh): test counts and the versions
# Maven resolved, both read from the surefire reports.
. "$root/scripts/matrix.sh"
surefire() {  # surefire DIR ATTR: the sum of ATTR over DIR's reports
  local n=0 x v
  for x in "$1"/target/surefire-reports/TEST-*.xml; do
    [ -f "$x" ] || continue
    v=$(grep -o '<testsuite [^>]*>' "$x" | head -1 | grep -o " $2=\"[0-9]*\"" | grep -o '[0-9][0-9]*' || echo 0)
    n=$((n + v))
  done
  echo "$n"
}
resolved() {  # resolved DIR GROUPPATH ARTIFACT...: "`artifact` version, ..."
  local dir=$1 group=$2 a v acc=""
  shift 2
  for a in "$@"; do
    v=$(cat "$dir"/target/surefire-reports/TEST-*.xml 2>/dev/null | grep -o "$group/$a/[0-9][0-9A-Za-z.-]*/" | head -1 | sed 's#.*/\([0-9][0-9A-Za-z.-]*\)/$#\1#')
    acc="$acc${acc:+, }\`$a\` ${v:-?}"
  done
  echo "$acc"
}
javarow() {  # javarow CLIENT DIR VERSIONS HOW (skipped tests are not counted)
  local t f
  t=$(($(surefire "$2" tests) - $(surefire "$2" skipped)))
  f=$(($(surefire "$2" failures) + $(surefire "$2" errors)))
  if [ "$t" -eq 0 ]; then
    matrix_row "$1" "$3" "$4" "failed: no test ran, $(date -u +%F)"
  else
    matrix_row "$1" "$3" "$4" "$(matrix_result $((t - f)) "$f" tests)"
  fi
}
java_dir=$root/scripts/clients/java
javarow "Azure SDK for Java" "$java_dir" \
  "\`azure-sdk-bom\` $(grep -A1 '<artifactId>azure-sdk-bom</artifactId>' "$java_dir/pom.xml" | grep -o '[0-9][0-9.]*' | head -1): $(resolved "$java_dir" com/azure azure-storage-blob azure-storage-blob-batch azure-storage-queue azure-storage-file-share azure-storage-file-datalake azure-data-tables azure-storage-blob-changefeed)" \
  "\`scripts/clients-java.sh\` (JUnit)"
javarow "Hadoop's ABFS driver" "$java_dir/abfs" "$(resolved "$java_dir/abfs" org/apache/hadoop hadoop-azure)" \
  "\`scripts/clients-java.sh\` (JUnit, the dfs endpoint; with Hadoop's ABFS contract tests)"
if [ "$failed" != 0 ]; then
  echo "Java clients: FAILED (surefire reports under scripts/clients/java/target and java/abfs/target)" >&2
  exit 1
fi
echo "Java clients: all tests passed"
