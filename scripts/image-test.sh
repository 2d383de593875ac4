#!/usr/bin/env bash
# image-test.sh: builds the container image and runs test/image against
# it. Installs Debian's docker.io when docker is missing and starts a
# private dockerd when none answers (no bridge network, no iptables, the
# vfs storage driver: containers run with --network host only), and stops
# the dockerd it started. Run by .ci/run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v dockerd >/dev/null 2>&1; then
  echo "image-test: installing docker.io" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
started=""
state=$(mktemp -d /tmp/cerulean-dockerd.XXXXXX)
cleanup() {
  if [ -n "$started" ]; then
    kill "$started" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$started" 2>/dev/null || break; sleep 0.2; done
  fi
  # dockerd leaves its network namespace mounted under its exec root.
  for m in "$state"/exec/netns/*; do
    [ -e "$m" ] && umount -l "$m" 2>/dev/null || true
  done
  rm -rf "$state" 2>/dev/null || true
}
trap cleanup EXIT
if ! docker info >/dev/null 2>&1; then
  dockerd --bridge=none --iptables=false --ip6tables=false --storage-driver=vfs \
    --data-root /var/lib/cerulean-docker --exec-root "$state/exec" --pidfile "$state/pid" \
    -H unix:///var/run/docker.sock >"$state/log" 2>&1 &
  started=$!
  for _ in $(seq 100); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  if ! docker info >/dev/null 2>&1; then
    echo "image-test: dockerd did not start:" >&2
    cat "$state/log" >&2
    exit 1
  fi
fi
tag=cerulean:ci-$$
bash "$root/scripts/build-image.sh" "$tag"
status=0
(cd "$root" && CERULEAN_TEST_IMAGE=$tag go test -count=1 -timeout 15m -v ./test/image/) || status=$?
docker image rm -f "$tag" >/dev/null 2>&1 || true
exit $status
