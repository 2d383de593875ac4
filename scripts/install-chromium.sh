#!/usr/bin/env bash
# Installs Debian's chromium, which the web console's browser tests
# (internal/console, TestConsoleInBrowser) drive headless over the
# DevTools protocol, with apt-get, when it is missing. CI runs it before
# the tests; on a developer machine the browser tests skip when no
# chromium is on PATH (they fail instead when CI is set). No browser is
# ever downloaded from elsewhere.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
echo "install-chromium: installing chromium with apt-get" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends chromium
