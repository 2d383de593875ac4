#!/usr/bin/env bash
# clients-python.sh: the Python part of the client compatibility matrix
# (docs/compatibility.md, "Python (newest SDKs)"), run by .ci/run.
#
# Creates a venv in a temporary directory, installs the pinned Python
# clients below (pip's download cache, ~/.cache/pip, makes reruns cheap),
# builds cerulean and starts it the way a user would, on 127.0.0.1 ports
# below 32768:
#   A  `cerulean azurite` (Azurite's command line): Blob, Queue, Table, File
#   B  `cerulean serve --hierarchical-namespace`: Blob and dfs (Data Lake)
#   C  `cerulean azurite --cert --key --oauth basic`: Blob, Queue and Table
#      over HTTPS with bearer tokens (and user delegation SAS), a
#      self-signed certificate made here with openssl
#   D  `cerulean serve --blob-change-feed`: Blob, with the blob change feed
#   E  `cerulean serve --blob-versioning --container-soft-delete 7
#      --share-soft-delete 7`: Blob and File, with versioning and the
#      soft delete of containers and shares, for the dev account and
#      wormacct (same key), marked :versioning:immutability
# then runs scripts/clients/py_sdk.py (the azure-* SDKs),
# scripts/clients/py_fs.py (adlfs, pyarrow, deltalake),
# scripts/clients/py_changefeed.py (azure-storage-blob-changefeed on D) and
# scripts/clients/py_versioning.py and py_dataprotection.py (on E; the
# latter also sets container-level WORM holds and policies through E's
# /.cerulean/worm admin endpoint, signing Shared Key itself). Each prints one
# PASS/FAIL line per client, version and area; the script closes with
# "N passed, N failed" and exits non-zero when any area failed.
#
# PORT_BASE (default 2490) picks ports ${PORT_BASE}0..${PORT_BASE}9, and
# E listens on the next ten's first two ports (24910, 24911).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cerulean-pyclients.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
base=${PORT_BASE:-2490}
vport=$(( (base + 1) * 10 ))
devkey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==  # Azurite's well-known key

# The pinned clients: the newest releases on 2026-11-28 (pip index versions).
PINS=(
  azure-storage-blob==12.31.1
  azure-storage-queue==12.18.1
  azure-storage-file-share==12.27.1
  azure-storage-file-datalake==12.26.1
  azure-data-tables==12.7.0
  azure-storage-blob-changefeed==12.0.0b5
  adlfs==2026.8.0
  fsspec==2026.9.0
  pyarrow==26.0.1
  deltalake==1.6.6
)

py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
  apt-get install -y -qq python3-venv >/dev/null
fi
venv=${CLIENTS_PY_VENV:-$work/venv}  # CLIENTS_PY_VENV: reuse a venv (development)
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check "${PINS[@]}"

command -v openssl >/dev/null || apt-get install -y -qq openssl >/dev/null
go build -o "$work/cerulean" "$root/cmd/cerulean"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout "$work/key.pem" -out "$work/cert.pem" \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null

"$work/cerulean" azurite --blobPort "${base}0" --queuePort "${base}1" --tablePort "${base}2" \
  --filePort "${base}3" --location "$work/data-a" --silent >"$work/a.log" 2>&1 &
pids+=($!)
"$work/cerulean" serve --data "$work/data-b" --blob-port "${base}5" --queue-port -1 --table-port -1 \
  --file-port -1 --dfs-port "${base}6" --smb-port -1 --hierarchical-namespace --log-level warn >"$work/b.log" 2>&1 &
pids+=($!)
"$work/cerulean" azurite --blobPort "${base}7" --queuePort "${base}8" --tablePort "${base}9" --location "$work/data-c" \
  --cert "$work/cert.pem" --key "$work/key.pem" --oauth basic --silent >"$work/c.log" 2>&1 &
pids+=($!)
"$work/cerulean" serve --in-memory --blob-port "${base}4" --queue-port -1 --table-port -1 --file-port -1 \
  --dfs-port -1 --smb-port -1 --blob-change-feed --log-level warn >"$work/d.log" 2>&1 &
pids+=($!)
"$work/cerulean" serve --in-memory --blob-port "$vport" --queue-port -1 --table-port -1 --file-port "$((vport + 1))" \
  --dfs-port -1 --smb-port -1 --blob-versioning --container-soft-delete 7 --share-soft-delete 7 \
  --accounts "devstoreaccount1:$devkey;wormacct:$devkey:versioning:immutability" \
  --log-level warn >"$work/e.log" 2>&1 &
pids+=($!)

for port in "${base}0" "${base}1" "${base}2" "${base}3" "${base}4" "${base}5" "${base}6" "${base}7" "${base}8" "${base}9" "$vport" "$((vport + 1))"; do
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
done

# A server that could not listen (a port taken) has exited by now: stop
# rather than probe whatever else answers on that port.
for i in 0 1 2 3 4; do
  if ! kill -0 "${pids[$i]}" 2>/dev/null; then
    log=$(echo a b c d e | cut -d' ' -f$((i + 1)))
    echo "FAIL server $log did not start:"; cat "$work/$log.log"
    echo "0 passed, 1 failed"
    exit 1
  fi
done

export PORT_BASE=$base VERSIONING_PORT=$vport CERT="$work/cert.pem" WORK="$work"
out="$work/results"
status=0
t0=$(date +%s)
"$venv/bin/python" "$root/scripts/clients/py_sdk.py" | tee "$out.sdk" || status=1
"$venv/bin/python" "$root/scripts/clients/py_fs.py" | tee "$out.fs" || status=1
"$venv/bin/python" "$root/scripts/clients/py_changefeed.py" | tee "$out.cf" || status=1
"$venv/bin/python" "$root/scripts/clients/py_versioning.py" | tee "$out.ver" || status=1
"$venv/bin/python" "$root/scripts/clients/py_dataprotection.py" | tee "$out.dp" || status=1
cat "$out.sdk" "$out.fs" "$out.cf" "$out.ver" "$out.dp" >"$out"
# The matrix's rows (scripts/matrix.sh): the SDKs, then the file-system
# and table libraries, each with its pinned versions.
. "$root/scripts/matrix.sh"
pins() {  # pins NAME...: "`name` version, ..." from PINS
  local n p acc=""
  for n in "$@"; do
    for p in "${PINS[@]}"; do
      [ "${p%%==*}" = "$n" ] && acc="$acc${acc:+, }\`$n\` ${p#*==}"
    done
  done
  echo "$acc"
}
count() { grep -c "^$1 " "$2" || true; }
matrix_row "Azure SDK for Python, newest" \
  "$(pins azure-storage-blob azure-storage-queue azure-storage-file-share azure-storage-file-datalake azure-data-tables)" \
  "\`scripts/clients-python.sh\` (\`py_sdk.py\`)" "$(matrix_result "$(count PASS "$out.sdk")" "$(count FAIL "$out.sdk")" areas)"
matrix_row "adlfs, pyarrow \`AzureFileSystem\`, deltalake (delta-rs)" "$(pins adlfs fsspec pyarrow deltalake)" \
  "\`scripts/clients-python.sh\` (\`py_fs.py\`): Blob and dfs, two concurrent Delta writers" \
  "$(matrix_result "$(count PASS "$out.fs")" "$(count FAIL "$out.fs")" areas)"
matrix_row "Azure Storage Blob ChangeFeed for Python" "$(pins azure-storage-blob-changefeed azure-storage-blob)" \
  "\`scripts/clients-python.sh\` (\`py_changefeed.py\`): \`cerulean serve --blob-change-feed\`" \
  "$(matrix_result "$(count PASS "$out.cf")" "$(count FAIL "$out.cf")" areas)"
matrix_row "Azure SDK for Python, blob versioning" "$(pins azure-storage-blob)" \
  "\`scripts/clients-python.sh\` (\`py_versioning.py\`): \`cerulean serve --blob-versioning\`" \
  "$(matrix_result "$(count PASS "$out.ver")" "$(count FAIL "$out.ver")" areas)"
matrix_row "Azure SDK for Python, container and share soft delete, version-level immutability, container-level WORM" "$(pins azure-storage-blob azure-storage-file-share)" \
  "\`scripts/clients-python.sh\` (\`py_dataprotection.py\`): \`--container-soft-delete 7 --share-soft-delete 7\`, an account marked \`:versioning:immutability\`, container holds and policies through \`/.cerulean/worm\`" \
  "$(matrix_result "$(count PASS "$out.dp")" "$(count FAIL "$out.dp")" areas)"
passed=$(grep -c '^PASS ' "$out" || true)
failed=$(grep -c '^FAIL ' "$out" || true)
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "FAIL a probe script exited non-zero without a FAIL line (it crashed: see above)"
  failed=1
fi
if [ "$failed" -gt 0 ] || [ "$status" -ne 0 ]; then
  for f in a b c d e; do echo "--- server $f log (tail)"; tail -20 "$work/$f.log"; done
fi
echo "probes ran $(( $(date +%s) - t0 )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
