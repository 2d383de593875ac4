#!/usr/bin/env bash
# clients-js.sh: the JavaScript part of the client compatibility matrix
# (docs/compatibility.md, "Azure SDK for JavaScript (npm)" and "azcopy"),
# run by .ci/run.
#
# Installs the pinned npm packages below into a temporary directory (npm's
# cache, ~/.npm, makes reruns cheap), builds cerulean and starts it the way
# a user would, on 127.0.0.1 ports below 32768:
#   A  `cerulean azurite` (Azurite's command line): Blob, Queue, Table, File
#   B  `cerulean serve --hierarchical-namespace`: Blob and dfs (Data Lake)
#   C  `cerulean serve --blob-change-feed`: Blob, with the blob change feed
#   D  `cerulean serve --blob-versioning --container-soft-delete 7
#      --share-soft-delete 7`: Blob and File, with versioning and the soft
#      delete of containers and shares, for the dev account and wormacct
#      (same key), marked :versioning:immutability
# then runs scripts/compat/probe.js and fidelity.js with the newest SDKs
# and with releases about two years older, scripts/compat/datalake.js with
# @azure/storage-file-datalake, scripts/compat/changefeed.js with
# @azure/storage-blob-changefeed on C, scripts/compat/versioning.js and
# dataprotection.js with the newest SDKs on D (the latter also sets
# container-level WORM holds and policies through D's /.cerulean/worm
# admin endpoint, signing Shared Key itself), and azcopy jobs (upload, copies between
# containers and between Blob and File, download compared byte for byte,
# sync, remove, a dfs round trip). Each step prints one PASS/FAIL line; a
# step that provokes an error passes only with Azure's error code. The
# script closes with "N passed, N failed" and exits non-zero when any step
# failed or a probe crashed.
#
# PORT_BASE (default 2460) picks ports ${PORT_BASE}0..${PORT_BASE}9.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cerulean-jsclients.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
base=${PORT_BASE:-2460}

# The pinned packages. "newest": the newest releases on 2026-11-26;
# "older": releases about two years older (what projects that pin their
# dependencies still run).
NEWEST="@azure/storage-blob@12.34.0 @azure/storage-queue@12.32.0 @azure/data-tables@13.3.2 @azure/storage-file-share@12.33.0"
OLDER="@azure/storage-blob@12.26.0 @azure/storage-queue@12.25.0 @azure/data-tables@13.2.2 @azure/storage-file-share@12.26.0"
DATALAKE="@azure/storage-file-datalake@12.31.0 @azure/storage-blob@12.34.0"
CHANGEFEED="@azure/storage-blob-changefeed@12.0.0-preview.4 @azure/storage-blob@12.34.0"
AZCOPY="@azure-tools/azcopy-linux@10.32.2"

command -v npm >/dev/null || apt-get install -y -qq nodejs npm >/dev/null
# azcopy links libsecret (its credential store) even when it is not used.
ldconfig -p | grep -q libsecret-1.so.0 || apt-get install -y -qq libsecret-1-0 >/dev/null

t0=$(date +%s)
install() {  # install DIR PACKAGES...: a private node_modules, npm's shared cache
  local dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --prefer-offline --loglevel=error "$@" >/dev/null)
}
# The four installs side by side (npm's cache is safe for concurrent use).
ipids=()
# shellcheck disable=SC2086
{ install "$work/js-newest" $NEWEST & ipids+=($!); install "$work/js-older" $OLDER & ipids+=($!)
  install "$work/js-datalake" $DATALAKE & ipids+=($!); install "$work/azcopy" $AZCOPY & ipids+=($!)
  install "$work/js-changefeed" $CHANGEFEED & ipids+=($!); }
for p in "${ipids[@]}"; do wait "$p"; done  # set -e: a failed install stops here
echo "npm install took $(( $(date +%s) - t0 )) s"

go build -o "$work/cerulean" "$root/cmd/cerulean"
"$work/cerulean" azurite --blobPort "${base}0" --queuePort "${base}1" --tablePort "${base}2" \
  --filePort "${base}3" --location "$work/data-a" --silent >"$work/a.log" 2>&1 &
pids+=($!)
"$work/cerulean" serve --data "$work/data-b" --blob-port "${base}5" --queue-port -1 --table-port -1 \
  --file-port -1 --dfs-port "${base}6" --smb-port -1 --hierarchical-namespace --log-level warn >"$work/b.log" 2>&1 &
pids+=($!)
"$work/cerulean" serve --in-memory --blob-port "${base}7" --queue-port -1 --table-port -1 --file-port -1 \
  --dfs-port -1 --smb-port -1 --blob-change-feed --log-level warn >"$work/c.log" 2>&1 &
pids+=($!)
devkey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==  # Azurite's well-known key
"$work/cerulean" serve --in-memory --blob-port "${base}8" --queue-port -1 --table-port -1 --file-port "${base}9" \
  --dfs-port -1 --smb-port -1 --blob-versioning --container-soft-delete 7 --share-soft-delete 7 \
  --accounts "devstoreaccount1:$devkey;wormacct:$devkey:versioning:immutability" --log-level warn >"$work/d.log" 2>&1 &
pids+=($!)
for port in "${base}0" "${base}1" "${base}2" "${base}3" "${base}5" "${base}6" "${base}7" "${base}8" "${base}9"; do
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
done
# A server that could not listen (a port taken) has exited by now: stop
# rather than probe whatever else answers on that port.
for i in 0 1 2 3; do
  if ! kill -0 "${pids[$i]}" 2>/dev/null; then
    log=$(echo a b c d | cut -d' ' -f$((i + 1)))
    echo "FAIL server $log did not start:"; cat "$work/$log.log"
    echo "0 passed, 1 failed"
    exit 1
  fi
done

export PORT_BASE=$base
out="$work/results"
: >"$out"
status=0
t1=$(date +%s)
probe() {  # probe LABEL DIR SCRIPT: one probe file with one package set
  local label=$1 dir=$2 script=$3
  echo "-- $label: $script"
  if ! (cd "$dir" && NODE_PATH="$dir/node_modules" node "$root/scripts/compat/$script") | sed "s/^\(PASS\|FAIL\) /\1 [$label] /" | tee -a "$out"; then
    echo "FAIL [$label] $script exited non-zero (it crashed: see above)" | tee -a "$out"
  fi
}
probe "js newest" "$work/js-newest" probe.js
probe "js newest" "$work/js-newest" fidelity.js
probe "js older" "$work/js-older" probe.js
probe "js older" "$work/js-older" fidelity.js
probe "js datalake" "$work/js-datalake" datalake.js
probe "js changefeed" "$work/js-changefeed" changefeed.js
probe "js versioning" "$work/js-newest" versioning.js
probe "js data protection" "$work/js-newest" dataprotection.js

echo "-- azcopy ($AZCOPY)"
azcopy=$(find "$work/azcopy/node_modules/@azure-tools" -name 'azcopy_linux_amd64' -type f | head -1)
chmod +x "$azcopy"
export AZCOPY_LOG_LOCATION=$work/azlogs AZCOPY_JOB_PLAN_LOCATION=$work/azplans
# Account SAS for Blob and File, and the containers and share the jobs use
# (azcopy make refuses IP-addressed URLs), through the newest JS SDK.
read -r sas fsas < <(cd "$work/js-newest" && NODE_PATH="$work/js-newest/node_modules" PORT_BASE=$base node -e '
const b = require("@azure/storage-blob"), f = require("@azure/storage-file-share");
const K = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==", A = "devstoreaccount1", P = process.env.PORT_BASE;
const exp = new Date(Date.now() + 3600e3);
const s = b.generateAccountSASQueryParameters({ expiresOn: exp, permissions: b.AccountSASPermissions.parse("rwdlac"),
  resourceTypes: "sco", services: "b" }, new b.StorageSharedKeyCredential(A, K)).toString();
const fs = f.generateAccountSASQueryParameters({ expiresOn: exp, permissions: f.AccountSASPermissions.parse("rwdlc"),
  resourceTypes: "sco", services: "f" }, new f.StorageSharedKeyCredential(A, K)).toString();
(async () => {
  const bs = new b.BlobServiceClient(`http://127.0.0.1:${P}0/${A}`, new b.StorageSharedKeyCredential(A, K));
  for (const c of ["azc", "azc2"]) await bs.getContainerClient(c).create();
  await new f.ShareServiceClient(`http://127.0.0.1:${P}3/${A}`, new f.StorageSharedKeyCredential(A, K)).getShareClient("azs").create();
  await new b.BlobServiceClient(`http://127.0.0.1:${P}5/${A}`, new b.StorageSharedKeyCredential(A, K)).getContainerClient("azfs").create();
  console.log(s, fs);
})().catch(e => { console.error(e); process.exit(1); });')
mkdir -p "$work/src/sub"
head -c 20000000 /dev/urandom >"$work/src/big.bin"
echo small >"$work/src/sub/small.txt"
u="http://127.0.0.1:${base}0/devstoreaccount1"
f="http://127.0.0.1:${base}3/devstoreaccount1"
d="http://127.0.0.1:${base}6/devstoreaccount1"
result() { echo "$1" | tee -a "$out"; }
run() {  # run NAME AZCOPY-ARGS...: PASS when the job completes
  local what=$1; shift
  if timeout -s KILL 120 "$azcopy" "$@" >"$work/azcopy.out" 2>&1 && grep -q "Final Job Status: Completed$" "$work/azcopy.out"; then
    result "PASS [azcopy] $what"
  else
    result "FAIL [azcopy] $what: $(grep -m1 -i 'error\|failed' "$work/azcopy.out" | cut -c1-200)"
  fi
}
same() {  # same NAME A B: PASS when the trees or files are equal
  if diff -r "$2" "$3" >/dev/null; then result "PASS [azcopy] $1"; else result "FAIL [azcopy] $1: $2 and $3 differ"; fi
}
run upload copy "$work/src" "$u/azc?$sas" --recursive --from-to LocalBlob
run blob-to-blob copy "$u/azc/src?$sas" "$u/azc2?$sas" --recursive --from-to BlobBlob
run download copy "$u/azc2/src/big.bin?$sas" "$work/dl.bin" --from-to BlobLocal
same "download content" "$work/src/big.bin" "$work/dl.bin"
echo changed >"$work/src/sub/small.txt"
run sync sync "$work/src" "$u/azc2/src?$sas" --recursive --from-to LocalBlob
run sync-download copy "$u/azc2/src/sub/small.txt?$sas" "$work/small.txt" --from-to BlobLocal
same "sync content" "$work/src/sub/small.txt" "$work/small.txt"
run remove remove "$u/azc2/src?$sas" --recursive --from-to BlobTrash
run blob-to-file copy "$u/azc/src?$sas" "$f/azs?$fsas" --recursive --from-to BlobFile
run file-to-blob copy "$f/azs/src?$fsas" "$u/azc2/fromfile?$sas" --recursive --from-to FileBlob
run file-download copy "$u/azc2/fromfile/src/big.bin?$sas" "$work/dl2.bin" --from-to BlobLocal
same "blob-file-blob content" "$work/src/big.bin" "$work/dl2.bin"
# A dfs URL against the hierarchical server: the tree through the Data
# Lake API (Path Create, append, flush) and back.
run dfs-upload copy "$work/src" "$d/azfs?$sas" --recursive --from-to LocalBlobFS
run dfs-download copy "$d/azfs/src?$sas" "$work/dfsdl" --recursive --from-to BlobFSLocal
same "dfs round trip content" "$work/src" "$work/dfsdl/src"

# Steps that must have run (and passed) on both SDK lines: Blob Batch
# sub-responses carry a lower-case x-ms-error-code, which the SDK's batch
# parser matches case-sensitively.
for line in "js newest" "js older"; do
  grep -q "^PASS \[$line\] batch delete counts a failure" "$out" ||
    echo "FAIL [$line] the step \"batch delete counts a failure\" did not pass" | tee -a "$out"
done
# The matrix's rows (scripts/matrix.sh): one per package set, with the
# versions npm installed (the pins above).
. "$root/scripts/matrix.sh"
npmpins() {  # npmpins "pkg@v pkg@v": "`pkg` v, ..."
  local p acc=""
  for p in $1; do acc="$acc${acc:+, }\`${p%@*}\` ${p##*@}"; done
  echo "$acc"
}
jsrow() {  # jsrow LABEL CLIENT PINS HOW
  matrix_row "$2" "$(npmpins "$3")" "$4" \
    "$(matrix_result "$(grep -c "^PASS \[$1\] " "$out" || true)" "$(grep -c "^FAIL \[$1\] " "$out" || true)" steps)"
}
jsrow "js newest" "Azure SDK for JavaScript, newest" "$NEWEST" "\`scripts/clients-js.sh\` (\`probe.js\`, \`fidelity.js\`)"
jsrow "js older" "Azure SDK for JavaScript, about two years older" "$OLDER" "\`scripts/clients-js.sh\` (\`probe.js\`, \`fidelity.js\`)"
jsrow "js datalake" "Azure SDK for JavaScript, Data Lake" "$DATALAKE" "\`scripts/clients-js.sh\` (\`datalake.js\`)"
jsrow "js changefeed" "Azure SDK for JavaScript, blob change feed" "$CHANGEFEED" "\`scripts/clients-js.sh\` (\`changefeed.js\`): \`cerulean serve --blob-change-feed\`"
jsrow "js versioning" "Azure SDK for JavaScript, blob versioning" "${NEWEST%% *}" "\`scripts/clients-js.sh\` (\`versioning.js\`): \`cerulean serve --blob-versioning\`"
jsrow "js data protection" "Azure SDK for JavaScript, container and share soft delete, version-level immutability, container-level WORM" "$(echo $NEWEST | tr ' ' '\n' | grep -E 'storage-(blob|file-share)@' | tr '\n' ' ')" "\`scripts/clients-js.sh\` (\`dataprotection.js\`): \`--container-soft-delete 7 --share-soft-delete 7\`, an account marked \`:versioning:immutability\`, container holds and policies through \`/.cerulean/worm\`"
jsrow "azcopy" "azcopy" "$AZCOPY" "\`scripts/clients-js.sh\`: jobs between local files, Blob, File and dfs, and content comparisons"
passed=$(grep -c '^PASS ' "$out" || true)
failed=$(grep -c '^FAIL ' "$out" || true)
if [ "$failed" -gt 0 ]; then
  status=1
  for s in a b c d; do echo "--- server $s log (tail)"; tail -20 "$work/$s.log"; done
fi
echo "probes ran $(( $(date +%s) - t1 )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
