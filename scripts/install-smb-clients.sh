#!/usr/bin/env bash
# Installs the SMB clients the SMB front end's integration tests drive:
# Debian's smbclient and smbtorture (package samba-testsuite), with
# apt-get, when they are missing. CI runs it before the tests; on a
# developer machine the tests that need them skip when they are absent
# (they fail instead when CI is set).
set -euo pipefail
missing=()
command -v smbclient >/dev/null 2>&1 || missing+=(smbclient)
command -v smbtorture >/dev/null 2>&1 || missing+=(samba-testsuite)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-smb-clients: installing ${missing[*]} with apt-get" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
