#!/usr/bin/env bash
# bench-smb.sh: sequential write and read of one big file over SMB with
# Debian's smbclient (put/get, -m SMB3_11), beside REST upload/download of
# the same size (`cerulean-bench -workloads file`: 4 MiB Put Range and
# ranged Get File calls from 8 azfile clients), against one
# `cerulean serve` (embedded store, durable writes) on a temporary
# directory. Prints MB/s (10^6 bytes) per run and SMB as % of REST.
#
#   bash scripts/bench-smb.sh [-runs N] [-size MiB] [-samba]     (defaults: 1, 256)
#
# -samba: the same smbclient put and get against Debian's Samba (smbd,
# package samba) on the same machine, a share in a temporary directory
# with a private configuration (guest access, SMB3_11 only, port below
# the ephemeral range), alternating with Cerulean's in each run. Samba
# answers a write once it is in the page cache (its defaults: `strict
# sync` honours only the client's flushes, `sync always = no`, and
# smbclient sends none), Cerulean once it is durable on disk.
#
# smbclient and smbtorture: scripts/install-smb-clients.sh. The SMB rates
# are smbclient's own (the time from open to close of the transfer, as the
# REST figures exclude connection setup too); each get is compared with
# the file put.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=1
size=256
samba=
while [ $# -gt 0 ]; do
  case "$1" in
    -runs) runs=$2; shift 2 ;;
    -size) size=$2; shift 2 ;;
    -samba) samba=1; shift ;;
    *) echo "usage: $0 [-runs N] [-size MiB] [-samba]" >&2; exit 2 ;;
  esac
done
command -v smbclient >/dev/null || { echo "smbclient is not installed: bash scripts/install-smb-clients.sh" >&2; exit 1; }

account=devstoreaccount1
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
work=$(mktemp -d)
pid=
spid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "$spid" ]; then kill "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/cerulean" ./cmd/cerulean
go build -o "$work/cerulean-bench" ./cmd/cerulean-bench
base=$((20000 + RANDOM % 10000)) # below the ephemeral range (32768-60999)
fport=$base
sport=$((base + 1))
"$work/cerulean" serve --blob-port -1 --queue-port -1 --table-port -1 --file-port "$fport" --dfs-port -1 --smb-port "$sport" \
  --data "$work/data" --log-level warn >"$work/serve.log" 2>&1 &
pid=$!
for port in "$fport" "$sport"; do
  for i in $(seq 100); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    [ "$i" = 100 ] && { echo "cerulean serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
    sleep 0.1
  done
done
url="http://127.0.0.1:$fport/$account"

# createShare NAME: Create Share over REST, signed with Shared Key.
createShare() {
  local date ver sts sig
  date=$(LC_ALL=C TZ=GMT date '+%a, %d %b %Y %H:%M:%S GMT')
  ver=2021-06-08
  sts=$(printf 'PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:%s\nx-ms-version:%s\n/%s/%s/%s\nrestype:share' "$date" "$ver" "$account" "$account" "$1")
  sig=$(printf '%s' "$sts" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$(printf '%s' "$key" | base64 -d | xxd -p -c 256)" -binary | base64)
  curl -fsS -X PUT -H "x-ms-date: $date" -H "x-ms-version: $ver" -H "Content-Length: 0" \
    -H "Authorization: SharedKey $account:$sig" "$url/$1?restype=share" >/dev/null
}
createShare bench

printf 'username = %s\npassword = %s\ndomain = AZURE\n' "$account" "$key" >"$work/auth"
chmod 600 "$work/auth"
head -c $((size << 20)) /dev/urandom >"$work/src"

# rate OUTPUT: smbclient's "(average N kb/s)" of put or "(average N
# KiloBytes/sec)" of get (both bytes / (1.024 × ms), i.e. KiB/s) in MB/s.
rate() { sed -n 's/.*(average \([0-9.]*\) \(kb\/s\|KiloBytes\/sec\)).*/\1/p' <<<"$1" | tail -n1 | awk '{printf "%.1f", $1 * 1.024 / 1000}'; }
smb() { HOME="$work" smbclient "//127.0.0.1/bench" -p "$sport" -A "$work/auth" -m SMB3_11 -c "$1" 2>&1; }

if [ -n "$samba" ]; then
  command -v smbd >/dev/null || { echo "smbd is not installed: apt-get install samba" >&2; exit 1; }
  sambaport=$((base + 2))
  chmod 755 "$work"
  mkdir -p "$work/samba/share" "$work/samba/var"
  chmod 1777 "$work/samba/share"
  cat >"$work/samba/smb.conf" <<CONF
[global]
  smb ports = $sambaport
  interfaces = lo
  bind interfaces only = yes
  private dir = $work/samba/var
  lock directory = $work/samba/var
  state directory = $work/samba/var
  cache directory = $work/samba/var
  pid directory = $work/samba/var
  log file = $work/samba/smbd.log
  server role = standalone server
  map to guest = Bad User
  guest account = nobody
  disable netbios = yes
  server min protocol = SMB3_11
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
[bench]
  path = $work/samba/share
  guest ok = yes
  guest only = yes
  read only = no
CONF
  # Its own session: smbd signals its whole process group as it stops.
  setsid smbd --foreground --no-process-group --configfile="$work/samba/smb.conf" >"$work/samba/out.log" 2>&1 &
  spid=$!
  for i in $(seq 100); do
    (echo >"/dev/tcp/127.0.0.1/$sambaport") 2>/dev/null && break
    [ "$i" = 100 ] && { echo "smbd did not start" >&2; cat "$work/samba/out.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "Samba $(smbd --version | sed 's/Version //') on $sambaport, share in $work/samba/share"
fi
sambasmb() { HOME="$work" smbclient "//127.0.0.1/bench" -p "$sambaport" -N -m SMB3_11 -c "$1" 2>&1; }

echo "cerulean serve: File on $fport, SMB on $sport, embedded store in $work/data; ${size} MiB file; $(nproc) CPUs"
printf '%-4s %14s %14s %15s %15s %9s %9s\n' run "SMB write" "SMB read" "REST upload" "REST download" "write %" "read %"
# xfer CLIENT NAME R: put the source file as big$R with CLIENT (smb or
# sambasmb), get it back, compare and delete it; sets w and rd (MB/s).
xfer() {
  local out
  out=$(cd "$work" && "$1" "put src big$3")
  w=$(rate "$out")
  [ -n "$w" ] || { echo "smbclient put to $2 failed: $out" >&2; exit 1; }
  rm -f "$work/dst"
  out=$(cd "$work" && "$1" "get big$3 dst")
  rd=$(rate "$out")
  [ -n "$rd" ] || { echo "smbclient get from $2 failed: $out" >&2; exit 1; }
  cmp -s "$work/src" "$work/dst" || { echo "smbclient get from $2: content differs from the put" >&2; exit 1; }
  "$1" "del big$3" >/dev/null
}

for r in $(seq "$runs"); do
  if [ -n "$samba" ]; then
    xfer sambasmb Samba "$r"
    printf '%-4s %9s MB/s %9s MB/s   (Samba)\n' "$r" "$w" "$rd"
  fi
  xfer smb Cerulean "$r"
  rest=$("$work/cerulean-bench" -workloads file -url "$url" -file-url "$url" -large "$size")
  up=$(awk '/File upload/ {for (i = 1; i <= NF; i++) if ($i == "MB/s") print $(i-1)}' <<<"$rest")
  down=$(awk '/File download/ {for (i = 1; i <= NF; i++) if ($i == "MB/s") print $(i-1)}' <<<"$rest")
  [ -n "$up" ] && [ -n "$down" ] || { echo "cerulean-bench failed: $rest" >&2; exit 1; }
  printf '%-4s %9s MB/s %9s MB/s %10s MB/s %10s MB/s %8s%% %8s%%\n' "$r" "$w" "$rd" "$up" "$down" \
    "$(awk -v a="$w" -v b="$up" 'BEGIN {printf "%.0f", 100 * a / b}')" \
    "$(awk -v a="$rd" -v b="$down" 'BEGIN {printf "%.0f", 100 * a / b}')"
done
