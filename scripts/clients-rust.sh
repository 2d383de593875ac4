#!/usr/bin/env bash
# clients-rust.sh: the Rust client compatibility matrix of
# docs/compatibility.md ("Rust (object_store)"): object_store's own reusable
# integration suite (its public `integration` module, the functions the
# crate's azure_blob_test runs against Azurite) in scripts/clients/rust,
# against a fresh `cerulean azurite` in the crate's emulator mode
# (devstoreaccount1 with the well-known key; AZURITE_BLOB_STORAGE_URL points
# it at our port). object_store is pinned exactly in Cargo.toml, the rest
# by Cargo.lock. Cargo's target directory is kept between runs
# (CARGO_TARGET_DIR, default ~/.cache/cerulean-rust-target), so only the
# first run compiles the dependencies. Exits non-zero when a test fails.
# Extra arguments go to the test binary (e.g. a test name filter).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cerulean-rust.XXXXXX)
pid=0
cleanup() {
  if [ "$pid" != 0 ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
port=${RUST_BLOB_PORT:-25010}  # below the ephemeral range (32768-60999)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/cerulean-rust-target}

go build -o "$work/cerulean" "$root/cmd/cerulean"
# Compile before the server starts, so a cold build does not keep it idle.
(cd "$root/scripts/clients/rust" && cargo test --locked --no-run -q)
"$work/cerulean" azurite --location "$work/data" --blobPort "$port" --queuePort -1 --tablePort -1 \
  --filePort -1 --dfsPort -1 --smbPort -1 --silent &
pid=$!
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done

export AZURITE_BLOB_STORAGE_URL=http://127.0.0.1:$port
status=0
(cd "$root/scripts/clients/rust" && cargo test --locked -q -- "$@") 2>&1 | tee "$work/cargo.out" || status=1
# The matrix's row (scripts/matrix.sh): cargo's counts, the version
# Cargo.lock pins.
. "$root/scripts/matrix.sh"
sum() { grep -o "[0-9][0-9]* $1" "$work/cargo.out" | awk '{ n += $1 } END { print n + 0 }'; }
passed=$(sum passed) failed=$(sum failed)
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
version=$(grep -A1 '^name = "object_store"$' "$root/scripts/clients/rust/Cargo.lock" | sed -n 's/^version = "\(.*\)"$/\1/p')
matrix_row "Rust \`object_store\` (Azure)" "\`object_store\` $version" \
  "\`scripts/clients-rust.sh\`: the crate's own Azure integration tests against \`cerulean azurite\`" \
  "$(matrix_result "$passed" "$failed" tests)"
if [ "$status" -ne 0 ]; then
  echo "Rust clients (object_store): FAILED" >&2
  exit 1
fi
echo "Rust clients (object_store): all tests passed"
