#!/usr/bin/env bash
# build-image.sh [TAG]: builds the Cerulean container image (default tag
# cerulean:dev) from deploy/Dockerfile.
#
# Needs: Go (go.mod's version) and a running Docker daemon. On Debian or
# Ubuntu it installs busybox-static with apt-get when /bin/busybox is
# missing (as root).
#
# The binary is built here, outside Docker (static: CGO_ENABLED=0,
# -trimpath), and the image's final stage is FROM scratch over it, so the
# build pulls nothing from a registry. Go's build cache keeps what these
# flags compiled: the first image build compiles every package (minutes),
# later ones only what changed (seconds).
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
say() { echo "build-image: $*" >&2; }
command -v go >/dev/null 2>&1 || { say "needs Go (https://go.dev/dl/)"; exit 1; }
command -v docker >/dev/null 2>&1 || { say "needs Docker (the docker CLI and a running daemon)"; exit 1; }
if [ ! -x /bin/busybox ] || ! /bin/busybox --list | grep -qx sh; then
  say "installing busybox-static for the image's /bin/sh (apt-get)…"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq busybox-static >/dev/null
fi
ctx=$(mktemp -d /tmp/cerulean-image.XXXXXX)
log=$(mktemp /tmp/cerulean-image-log.XXXXXX)
trap 'rm -rf "$ctx" "$log"' EXIT
mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/bin" "$ctx/rootfs/tmp" "$ctx/data"
chmod 1777 "$ctx/rootfs/tmp"
version=$(git -C "$root" describe --always --dirty 2>/dev/null || echo dev)
say "building the binary (cerulean $version, static)…"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" \
  -o "$ctx/rootfs/usr/local/bin/cerulean" ./cmd/cerulean)
for n in azurite azurite-blob azurite-queue azurite-table; do
  ln -s cerulean "$ctx/rootfs/usr/local/bin/$n"
done
cp /bin/busybox "$ctx/rootfs/bin/busybox"
for n in sh cat awk grep nc sleep; do
  ln -s busybox "$ctx/rootfs/bin/$n"
done
cp "$root/deploy/Dockerfile" "$ctx/Dockerfile"
# BuildKit when the buildx plugin is there; otherwise Docker's legacy
# builder, which prints a deprecation notice: harmless here, since the
# Dockerfile is one stage of COPY over scratch.
if docker buildx version >/dev/null 2>&1; then
  say "building the image $tag (BuildKit)…"
  build=(docker buildx build --load)
else
  say "building the image $tag (Docker's legacy builder: no buildx plugin; its deprecation notice is harmless for this one-stage COPY build)…"
  export DOCKER_BUILDKIT=0
  build=(docker build)
fi
if ! "${build[@]}" -t "$tag" "$ctx" >"$log" 2>&1; then
  say "docker build failed:"
  cat "$log" >&2
  exit 1
fi
size=$(docker image inspect -f '{{.Size}}' "$tag")
say "built $tag: $size bytes ($((size / 1000000)) MB)"
