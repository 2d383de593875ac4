#!/usr/bin/env bash
# clients-azcli.sh: the az CLI part of the client compatibility matrix
# (docs/compatibility.md, "az CLI"), run by .ci/run.
#
# Uses Debian's azure-cli package (installed with apt-get when missing),
# builds cerulean and starts it the way a user would (`cerulean azurite`,
# Blob, Queue, Table and File on 127.0.0.1 ports below 32768), then runs
# the storage commands docs/compatibility.md lists with --connection-string
# and compares their output with what was sent: containers and blobs
# (upload, batch upload and download, list, show, metadata, lease,
# snapshot, tier, copy, SAS), queues and messages, tables and entities,
# shares, directories and files. A command that provokes an error passes
# only with Azure's error code. One PASS/FAIL line per check; closes with
# "N passed, N failed" and exits non-zero when any check failed.
#
# PORT_BASE (default 2440) picks ports ${PORT_BASE}0..${PORT_BASE}3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cerulean-azcli.XXXXXX)
pid=0
cleanup() {
  if [ "$pid" != 0 ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
base=${PORT_BASE:-2440}

command -v az >/dev/null || apt-get install -y -qq azure-cli >/dev/null
az version -o tsv --query '"azure-cli"' 2>/dev/null | sed 's/^/az CLI /' || true

go build -o "$work/cerulean" "$root/cmd/cerulean"
"$work/cerulean" azurite --blobPort "${base}0" --queuePort "${base}1" --tablePort "${base}2" \
  --filePort "${base}3" --location "$work/data" --silent >"$work/server.log" 2>&1 &
pid=$!
for port in "${base}0" "${base}1" "${base}2" "${base}3"; do
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
done
if ! kill -0 "$pid" 2>/dev/null; then
  echo "FAIL server did not start:"; cat "$work/server.log"
  echo "0 passed, 1 failed"
  exit 1
fi

export AZURE_CONFIG_DIR=$work/azconfig AZURE_CORE_COLLECT_TELEMETRY=no AZURE_CORE_NO_COLOR=1 AZURE_CORE_ONLY_SHOW_ERRORS=1
u=http://127.0.0.1
key=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==
cs="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$u:${base}0/devstoreaccount1;QueueEndpoint=$u:${base}1/devstoreaccount1;TableEndpoint=$u:${base}2/devstoreaccount1;FileEndpoint=$u:${base}3/devstoreaccount1;"
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS [az] $1"; }
fail() { failed=$((failed + 1)); echo "FAIL [az] $1"; }
azs() { az storage "$@" --connection-string "$cs" 2>"$work/err"; }
# check NAME WANT ARGS...: `az storage ARGS` succeeds and prints WANT.
check() {
  local name=$1 want=$2; shift 2
  local got
  if got=$(azs "$@"); then
    got=$(printf '%s' "$got" | tr -d '\r' | sed -e 's/[[:space:]]*$//')
    if [ "$got" = "$want" ]; then pass "$name"; else fail "$name: got $(printf '%q' "$got"), want $(printf '%q' "$want")"; fi
  else
    fail "$name: $(tr '\n' ' ' <"$work/err" | cut -c1-300)"
  fi
}
# refuse NAME CODE ARGS...: `az storage ARGS` fails with Azure's error code CODE.
refuse() {
  local name=$1 code=$2; shift 2
  if azs "$@" >/dev/null; then
    fail "$name: succeeded, want $code"
  elif grep -q "ErrorCode:$code\b\|\"$code\"\|Code: $code\b" "$work/err"; then
    pass "$name -> $code"
  else
    fail "$name: want $code, got $(tr '\n' ' ' <"$work/err" | cut -c1-300)"
  fi
}
# same NAME A B: files or trees A and B are equal.
same() { if diff -r "$2" "$3" >/dev/null; then pass "$1"; else fail "$1: $2 and $3 differ"; fi; }

t0=$(date +%s)
mkdir -p "$work/src/sub" "$work/out"
head -c 3000000 /dev/urandom >"$work/big.bin"
echo one >"$work/src/one.txt"
echo two >"$work/src/sub/two.txt"

echo "-- Blob"
check "container create" true container create -n azc --query created -o tsv
check "container create again" false container create -n azc --query created -o tsv
check "container policy create" "" container policy create -c azc -n rpol --permissions r --expiry 2099-01-01T00:00Z -o none
check "container policy list" "r" container policy list -c azc --query rpol.permission -o tsv
check "blob upload (3 MB, blocks)" "" blob upload -c azc -n big.bin -f "$work/big.bin" --max-connections 4 --metadata Author=ann -o none
check "blob show" $'3000000\nann\nBlockBlob' blob show -c azc -n big.bin --query '[properties.contentLength, metadata.Author, properties.blobType]' -o tsv
check "blob download" "" blob download -c azc -n big.bin -f "$work/out/big.bin" -o none
same "blob download content" "$work/big.bin" "$work/out/big.bin"
check "blob upload-batch" "" blob upload-batch -d azc -s "$work/src" --destination-path tree -o none
check "blob list" "$(printf 'big.bin\ntree/one.txt\ntree/sub/two.txt')" blob list -c azc --query '[].name' -o tsv
check "blob list --include m" "ann" blob list -c azc --include m --prefix big --query '[].metadata.Author' -o tsv
check "blob download-batch" "" blob download-batch -d "$work/out" -s azc --pattern 'tree/*' -o none
same "blob download-batch content" "$work/src" "$work/out/tree"
check "blob metadata update" "" blob metadata update -c azc -n tree/one.txt --metadata k=v -o none
check "blob metadata show" "v" blob metadata show -c azc -n tree/one.txt --query k -o tsv
lease=$(azs blob lease acquire -c azc -b tree/one.txt --lease-duration 60 -o tsv || true)
if [ -n "$lease" ]; then pass "blob lease acquire"; else fail "blob lease acquire: $(tr '\n' ' ' <"$work/err" | cut -c1-300)"; fi
refuse "blob upload over a leased blob" LeaseIdMissing blob upload -c azc -n tree/one.txt -f "$work/src/one.txt" --overwrite -o none
check "blob lease release" "" blob lease release -c azc -b tree/one.txt --lease-id "$lease" -o none
check "blob snapshot" "true" blob snapshot -c azc -n tree/one.txt --query 'snapshot != null' -o tsv
check "blob list --include s" "2" blob list -c azc --include s --prefix tree/one --query 'length(@)' -o tsv
check "blob set-tier" "" blob set-tier -c azc -n big.bin --tier Cool -o none
check "blob show tier" "Cool" blob show -c azc -n big.bin --query properties.blobTier -o tsv
check "blob copy start (source container/blob)" "success" blob copy start -c azc -b copy.bin --source-container azc --source-blob big.bin --query copy_status -o tsv
check "blob copy start (source URI)" "success" blob copy start -c azc -b copy2.bin --source-uri "$u:${base}0/devstoreaccount1/azc/big.bin" --query copy_status -o tsv
check "blob copy length" "3000000" blob show -c azc -n copy2.bin --query properties.contentLength -o tsv
refuse "blob show missing" BlobNotFound blob show -c azc -n missing.bin
sas=$(azs blob generate-sas -c azc -n tree/sub/two.txt --permissions r --expiry 2099-01-01T00:00Z -o tsv || true)
if [ "$(curl -s "$u:${base}0/devstoreaccount1/azc/tree/sub/two.txt?$sas")" = two ]; then pass "blob generate-sas read"; else fail "blob generate-sas read (sas $sas)"; fi
if [ "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'x-ms-blob-type: BlockBlob' --data x "$u:${base}0/devstoreaccount1/azc/tree/sub/two.txt?$sas")" = 403 ]; then pass "blob read-only SAS refuses a write"; else fail "blob read-only SAS refuses a write"; fi
check "blob delete-batch" "" blob delete-batch -s azc --pattern 'tree/*' --delete-snapshots include -o none
check "blob list after delete-batch" "$(printf 'big.bin\ncopy.bin\ncopy2.bin')" blob list -c azc --query '[].name' -o tsv
check "cors add" "" cors add --services b --methods GET PUT --origins 'http://example.com' --allowed-headers '*' --exposed-headers '*' --max-age 60 -o none
check "cors list" $'GET, PUT\thttp://example.com' cors list --services b --query '[].[AllowedMethods, AllowedOrigins]' -o tsv
check "service-properties update" "" blob service-properties update --static-website --index-document index.html --404-document 404.html -o none
check "service-properties show" $'true\nindex.html' blob service-properties show --query '[staticWebsite.enabled, staticWebsite.indexDocument]' -o tsv
check "container delete" true container delete -n azc --query deleted -o tsv

echo "-- Queue"
check "queue create" true queue create -n azq --query created -o tsv
check "queue metadata update" "" queue metadata update -n azq --metadata k=v -o none
check "queue list" "azq" queue list --query '[].name' -o tsv
check "message put" "" message put -q azq --content 'hello there' -o none
check "message peek" "hello there" message peek -q azq --query '[].content' -o tsv
check "message get" "hello there" message get -q azq --query '[].content' -o tsv
refuse "queue delete missing" QueueNotFound queue delete -n nosuchq --fail-not-exist
check "queue delete" true queue delete -n azq --query deleted -o tsv

echo "-- Table"
check "table create" true table create -n aztable --query created -o tsv
check "table list" "aztable" table list --query '[].name' -o tsv
check "entity insert" "" entity insert -t aztable -e PartitionKey=p RowKey=r1 n=5 big=12345678901234 big@odata.type=Edm.Int64 name=ann -o none
refuse "entity merge missing" ResourceNotFound entity merge -t aztable -e PartitionKey=p RowKey=nope x=1
refuse "entity show missing" ResourceNotFound entity show -t aztable --partition-key p --row-key nope
check "entity merge" "" entity merge -t aztable -e PartitionKey=p RowKey=r1 extra=x -o none
check "entity show (Edm.Int64 kept)" $'Edm.Int64\n12345678901234\nann\nx' entity show -t aztable --partition-key p --row-key r1 --query '[big.edm_type, big.value, name, extra]' -o tsv
check "entity query" "r1" entity query -t aztable --filter "name eq 'ann'" --query 'items[].RowKey' -o tsv
check "table delete" true table delete -n aztable --query deleted -o tsv

echo "-- File"
check "share create" true share create -n azshare --quota 5 --query created -o tsv
check "share snapshot" "true" share snapshot -n azshare --query 'snapshot != null' -o tsv
check "directory create" true directory create -s azshare -n d1 --query created -o tsv
check "file upload" "" file upload -s azshare --source "$work/big.bin" -p d1/big.bin -o none
check "file list" "big.bin" file list -s azshare -p d1 --query '[].name' -o tsv
check "file download" "" file download -s azshare -p d1/big.bin --dest "$work/out/file.bin" -o none
same "file download content" "$work/big.bin" "$work/out/file.bin"
check "file copy start (from a file)" "success" file copy start --source-share azshare --source-path d1/big.bin -s azshare -p d1/copy.bin --query status -o tsv
refuse "directory delete non-empty" DirectoryNotEmpty directory delete -s azshare -n d1 --fail-not-exist
check "file delete-batch" "" file delete-batch -s azshare --pattern 'd1/*' -o none
check "directory delete" true directory delete -s azshare -n d1 --query deleted -o tsv
check "share delete" true share delete -n azshare --delete-snapshots include --query deleted -o tsv

# The matrix's row (scripts/matrix.sh), with the version Debian installed.
. "$root/scripts/matrix.sh"
matrix_row "az CLI" "$(dpkg-query -W -f '${Version}' azure-cli 2>/dev/null | sed 's/-[^-]*$//' || echo '?') (Debian \`azure-cli\`)" \
  "\`scripts/clients-azcli.sh\` against \`cerulean azurite\`" "$(matrix_result "$passed" "$failed" checks)"
if [ "$failed" -gt 0 ]; then echo "--- server log (tail)"; tail -20 "$work/server.log"; fi
echo "commands ran $(( $(date +%s) - t0 )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
