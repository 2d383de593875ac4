#!/usr/bin/env bash
# compat.sh: run the hand-written compatibility probes of docs/compatibility.md
# against a fresh `cerulean serve`: the Python SDKs (Debian's python3-azure,
# installed with apt-get when missing), the JavaScript SDKs and azcopy (from
# npm, pinned). Each probe prints PASS/FAIL per step; some FAILs are the
# expected errors the probe provokes (see docs/compatibility.md). Not part of
# .ci/run: it needs npm and installs packages. The newest Python SDKs (and
# adlfs, pyarrow, deltalake) run in .ci/run through clients-python.sh; the
# Python probes here stay on Debian's older SDK releases.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cerulean-compat.XXXXXX)
trap 'kill "${pid:-0}" "${dlpid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
base=${PORT_BASE:-2470}  # ports 24700-24706: below the ephemeral range (32768-60999)

go build -o "$work/cerulean" "$root/cmd/cerulean"
"$work/cerulean" serve --data "$work/data" --blob-port "${base}0" --queue-port "${base}1" \
  --table-port "${base}2" --file-port "${base}3" --dfs-port -1 --smb-port -1 --log-level warn &
pid=$!
# A second server with a hierarchical namespace for the Data Lake probes
# (Blob on ${base}5, dfs on ${base}6).
"$work/cerulean" serve --data "$work/data-dl" --blob-port "${base}5" --queue-port -1 --table-port -1 \
  --file-port -1 --dfs-port "${base}6" --smb-port -1 --hierarchical-namespace --log-level warn &
dlpid=$!
sleep 1

echo "== Python SDKs"
if ! /usr/bin/python3 -c 'import azure.storage.blob, azure.data.tables' 2>/dev/null; then
  apt-get install -y -qq python3-azure >/dev/null
fi
PORT_BASE=$base /usr/bin/python3 "$root/scripts/compat/probe.py"
PORT_BASE=$base /usr/bin/python3 "$root/scripts/compat/fidelity.py"

# The JavaScript SDKs twice: the newest releases, and releases about two
# years older (what projects that pin their dependencies still run).
for set in "newest:@azure/storage-blob@12.34.0 @azure/storage-queue@12.32.0 @azure/data-tables@13.3.2 @azure/storage-file-share@12.33.0" \
           "older:@azure/storage-blob@12.26.0 @azure/storage-queue@12.25.0 @azure/data-tables@13.2.2 @azure/storage-file-share@12.26.0"; do
  name=${set%%:*}
  echo "== JavaScript SDKs, $name (${set#*:})"
  js="$work/js-$name"
  mkdir -p "$js"
  # shellcheck disable=SC2086
  (cd "$js" && npm init -y >/dev/null && npm install --silent ${set#*:} >/dev/null)
  (cd "$js" && PORT_BASE=$base NODE_PATH="$js/node_modules" node "$root/scripts/compat/probe.js")
  (cd "$js" && PORT_BASE=$base NODE_PATH="$js/node_modules" node "$root/scripts/compat/fidelity.js")
done

echo "== JavaScript Data Lake SDK (@azure/storage-file-datalake@12.31.0)"
dljs="$work/js-datalake"
mkdir -p "$dljs"
(cd "$dljs" && npm init -y >/dev/null && npm install --silent @azure/storage-file-datalake@12.31.0 >/dev/null)
(cd "$dljs" && PORT_BASE=$base NODE_PATH="$dljs/node_modules" node "$root/scripts/compat/datalake.js")

echo "== azcopy"
(cd "$work" && npm init -y >/dev/null && npm install --silent @azure-tools/azcopy-linux@10.32.2 >/dev/null)
azcopy=$(find "$work/node_modules/@azure-tools" -name 'azcopy_linux_amd64' -type f | head -1)
chmod +x "$azcopy"
# azcopy links libsecret (its credential store) even when it is not used.
if ! ldconfig -p | grep -q libsecret-1.so.0; then
  apt-get install -y -qq libsecret-1-0 >/dev/null
fi
export AZCOPY_LOG_LOCATION=$work/azlogs AZCOPY_JOB_PLAN_LOCATION=$work/azplans
sas=$(/usr/bin/python3 - <<PY
import datetime
from azure.storage.blob import generate_account_sas, ResourceTypes, AccountSasPermissions
print(generate_account_sas("devstoreaccount1", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
  ResourceTypes(service=True, container=True, object=True),
  AccountSasPermissions(read=True, write=True, delete=True, list=True, add=True, create=True),
  datetime.datetime.utcnow() + datetime.timedelta(hours=1), protocol="https,http"))
PY
)
fsas=$(/usr/bin/python3 - <<PY
import datetime
from azure.storage.fileshare import generate_account_sas, ResourceTypes, AccountSasPermissions
print(generate_account_sas("devstoreaccount1", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
  ResourceTypes(service=True, container=True, object=True),
  AccountSasPermissions(read=True, write=True, delete=True, list=True, create=True),
  datetime.datetime.utcnow() + datetime.timedelta(hours=1), protocol="https,http"))
PY
)
/usr/bin/python3 - <<PY
from azure.storage.fileshare import ShareServiceClient
ShareServiceClient("http://127.0.0.1:${base}3/devstoreaccount1", credential={"account_name": "devstoreaccount1", "account_key": "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}).create_share("azs")
PY
/usr/bin/python3 - <<PY
from azure.storage.blob import BlobServiceClient
svc = BlobServiceClient("http://127.0.0.1:${base}0/devstoreaccount1", credential={"account_name": "devstoreaccount1", "account_key": "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="})
for c in ("azc", "azc2"): svc.create_container(c)
PY
mkdir -p "$work/src/sub"
head -c 20000000 /dev/urandom > "$work/src/big.bin"
echo small > "$work/src/sub/small.txt"
u="http://127.0.0.1:${base}0/devstoreaccount1"
run() {
  local what=$1; shift
  if timeout -s KILL 120 "$azcopy" "$@" 2>&1 | grep -q "Final Job Status: Completed$"; then
    echo "PASS azcopy $what"
  else
    echo "FAIL azcopy $what (logs in $AZCOPY_LOG_LOCATION)"
  fi
}
run upload copy "$work/src" "$u/azc?$sas" --recursive --from-to LocalBlob
run blob-to-blob copy "$u/azc/src?$sas" "$u/azc2?$sas" --recursive --from-to BlobBlob
run download copy "$u/azc2/src/big.bin?$sas" "$work/dl.bin" --from-to BlobLocal
cmp -s "$work/src/big.bin" "$work/dl.bin" && echo "PASS azcopy download content" || echo "FAIL azcopy download content"
run sync sync "$work/src" "$u/azc2/src?$sas" --recursive --from-to LocalBlob
run remove remove "$u/azc2/src?$sas" --recursive --from-to BlobTrash
f="http://127.0.0.1:${base}3/devstoreaccount1"
run blob-to-file copy "$u/azc/src?$sas" "$f/azs?$fsas" --recursive --from-to BlobFile
run file-to-blob copy "$f/azs/src?$fsas" "$u/azc2/fromfile?$sas" --recursive --from-to FileBlob
run file-download copy "$u/azc2/fromfile/src/big.bin?$sas" "$work/dl2.bin" --from-to BlobLocal
cmp -s "$work/src/big.bin" "$work/dl2.bin" && echo "PASS azcopy blob-file-blob content" || echo "FAIL azcopy blob-file-blob content"
# A dfs URL against the hierarchical server: upload the tree through the
# Data Lake API (Path Create, append, flush) and download it back.
/usr/bin/python3 - <<PY
from azure.storage.blob import BlobServiceClient
BlobServiceClient("http://127.0.0.1:${base}5/devstoreaccount1", credential={"account_name": "devstoreaccount1", "account_key": "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}).create_container("azfs")
PY
d="http://127.0.0.1:${base}6/devstoreaccount1"
run dfs-upload copy "$work/src" "$d/azfs?$sas" --recursive --from-to LocalBlobFS
run dfs-download copy "$d/azfs/src?$sas" "$work/dfsdl" --recursive --from-to BlobFSLocal
diff -r "$work/src" "$work/dfsdl/src" >/dev/null && echo "PASS azcopy dfs round trip content" || echo "FAIL azcopy dfs round trip content"
