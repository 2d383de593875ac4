#!/usr/bin/env bash
# build-image.sh [TAG]: builds the Cerulean container image (default tag
# cerulean:dev) from deploy/Dockerfile. The binary is built here, outside
# Docker (static, CGO_ENABLED=0), and the image's final stage is FROM
# scratch over it, so the build pulls nothing from a registry.
#
# The image holds /usr/local/bin/cerulean, links azurite, azurite-blob,
# azurite-queue and azurite-table to it, and Debian's static busybox as
# /bin/sh with cat, awk, grep and nc: Testcontainers' port wait strategy
# (wait.ForListeningPort in testcontainers-go) runs
# `/bin/sh -c "cat /proc/net/tcp* | awk … | grep …"` inside the container,
# and fails on an image without a shell.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tag=${1:-cerulean:dev}
if [ ! -x /bin/busybox ] || ! /bin/busybox --list | grep -qx sh; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq busybox-static >/dev/null
fi
ctx=$(mktemp -d /tmp/cerulean-image.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/bin" "$ctx/rootfs/tmp" "$ctx/data"
chmod 1777 "$ctx/rootfs/tmp"
version=$(git -C "$root" describe --always --dirty 2>/dev/null || echo dev)
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" \
  -o "$ctx/rootfs/usr/local/bin/cerulean" ./cmd/cerulean)
for n in azurite azurite-blob azurite-queue azurite-table; do
  ln -s cerulean "$ctx/rootfs/usr/local/bin/$n"
done
cp /bin/busybox "$ctx/rootfs/bin/busybox"
for n in sh cat awk grep nc; do
  ln -s busybox "$ctx/rootfs/bin/$n"
done
cp "$root/deploy/Dockerfile" "$ctx/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >/dev/null
echo "built $tag: $(docker image inspect -f '{{.Size}}' "$tag") bytes"
