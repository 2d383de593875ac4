#!/usr/bin/env bash
# compat.sh: run the Python probes of docs/compatibility.md (probe.py,
# fidelity.py) with Debian's older SDK releases (python3-azure, installed
# with apt-get when missing) against a fresh `cerulean serve`. Each probe
# prints PASS/FAIL per step. Not part of .ci/run. What .ci/run runs
# instead: the newest Python SDKs (and adlfs, pyarrow, deltalake) through
# clients-python.sh; the JavaScript SDKs and azcopy, which this script ran
# until 2026-11-28, through clients-js.sh; the az CLI through
# clients-azcli.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cerulean-compat.XXXXXX)
trap 'kill "${pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
base=${PORT_BASE:-2470}  # ports 24700-24703: below the ephemeral range (32768-60999)

go build -o "$work/cerulean" "$root/cmd/cerulean"
"$work/cerulean" serve --data "$work/data" --blob-port "${base}0" --queue-port "${base}1" \
  --table-port "${base}2" --file-port "${base}3" --dfs-port -1 --smb-port -1 --log-level warn &
pid=$!
sleep 1

echo "== Python SDKs"
if ! /usr/bin/python3 -c 'import azure.storage.blob, azure.data.tables' 2>/dev/null; then
  apt-get install -y -qq python3-azure >/dev/null
fi
PORT_BASE=$base /usr/bin/python3 "$root/scripts/compat/probe.py"
PORT_BASE=$base /usr/bin/python3 "$root/scripts/compat/fidelity.py"
