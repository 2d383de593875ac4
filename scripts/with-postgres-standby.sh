#!/usr/bin/env bash
# with-postgres-standby.sh runs a command against a private PostgreSQL 15
# primary with a synchronous standby: the deployment docs/durability.md
# recommends, in miniature, on loopback.
#
#   bash scripts/with-postgres-standby.sh go test -count=1 -run TestPrimaryFailover -v ./test/multiproc/
#
# It initdb's the primary (as the `postgres` user when run as root, as
# scripts/with-postgres.sh does), starts it with synchronous_commit=on and
# synchronous_standby_names naming the standby, clones the standby from it
# with pg_basebackup -R (streaming replication), starts it, waits until the
# primary reports it as its synchronous standby, creates the database
# `cerulean`, and exports
#
#   CERULEAN_TEST_FAILOVER_DSN   postgres://USER@127.0.0.1:P1,127.0.0.1:P2/cerulean?target_session_attrs=read-write&sslmode=disable
#                                (both servers; connections go to whichever accepts writes)
#   CERULEAN_TEST_PGBIN          the directory of pg_ctl
#   CERULEAN_TEST_PGUSER         the user the servers run as (and pg_ctl must)
#   CERULEAN_TEST_PRIMARY_DATA   the primary's data directory
#   CERULEAN_TEST_STANDBY_DATA   the standby's data directory
#   CERULEAN_TEST_STANDBY_LOG    the standby's log file
#
# then runs the command. Whatever happens, both servers are stopped and the
# directory removed; the script exits with the command's status.
#
# Environment:
#   CERULEAN_PG_PORTS  the two ports to try first (default "21301 21302");
#                      when one is taken, later ports up to 21399 are tried.
#   CERULEAN_PG_KEEP   when set, keep the directory (logs) after the run.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 command [args...]" >&2
  exit 2
fi

me=with-postgres-standby
# shellcheck source=scripts/pg-common.sh
source "$(dirname "$0")/pg-common.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cerulean-pgha.XXXXXX")
chmod 755 "$tmp"
mkdir "$tmp/primary" "$tmp/standby" "$tmp/sock"
chmod 700 "$tmp/primary" "$tmp/standby"
if [ "$(id -u)" -eq 0 ]; then
  chown -R "$pguser" "$tmp"
fi

cleanup() {
  local status=$?
  local d shmid
  for d in standby primary; do
    if [ -f "$tmp/$d/postmaster.pid" ]; then
      as_pg "$bindir/pg_ctl" -D "$tmp/$d" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    # A server killed with SIGKILL (the failover test kills the primary)
    # leaves its postmaster.pid and its small System V shared memory
    # segment behind (key and id on the pid file's 7th line): remove it.
    if [ -f "$tmp/$d/postmaster.pid" ]; then
      shmid=$(sed -n 7p "$tmp/$d/postmaster.pid" | awk '{print $2}')
      if [ -n "$shmid" ]; then
        as_pg ipcrm -m "$shmid" >/dev/null 2>&1 || true
      fi
    fi
  done
  if [ -n "${CERULEAN_PG_KEEP:-}" ]; then
    echo "with-postgres-standby: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

as_pg "$bindir/initdb" -D "$tmp/primary" -U "$pguser" -A trust -E UTF8 --locale=C >"$tmp/initdb.log" 2>&1 || {
  cat "$tmp/initdb.log" >&2
  exit 1
}
# initdb -A trust also trusts replication connections from 127.0.0.1.
grep -Eq '^host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$tmp/primary/pg_hba.conf" || {
  echo "with-postgres-standby: pg_hba.conf does not allow replication from 127.0.0.1" >&2
  exit 1
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# next_port N: the first free port from N up to 21399.
next_port() {
  local p=$1
  while [ "$p" -le 21399 ]; do
    if port_free "$p"; then
      echo "$p"
      return 0
    fi
    p=$((p + 1))
  done
  return 1
}
read -r want1 want2 <<<"${CERULEAN_PG_PORTS:-21301 21302}"

# The servers' common options; synchronous_standby_names is the primary's
# alone (given on its command line, so the standby's copy of the
# configuration does not carry it: once promoted, it must not wait for a
# standby of its own that does not exist).
common="-k $tmp/sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c wal_level=replica -c max_wal_senders=4 -c synchronous_commit=on -c wal_keep_size=256MB"

port1=$(next_port "$want1") || { echo "with-postgres-standby: no free port from $want1" >&2; exit 1; }
if ! as_pg "$bindir/pg_ctl" -D "$tmp/primary" -l "$tmp/primary.log" -w -t 60 \
  -o "-p $port1 $common -c synchronous_standby_names='FIRST 1 (standby1)'" start >/dev/null 2>&1; then
  echo "with-postgres-standby: the primary did not start; log:" >&2
  cat "$tmp/primary.log" >&2 || true
  exit 1
fi

as_pg "$bindir/pg_basebackup" -h 127.0.0.1 -p "$port1" -U "$pguser" -D "$tmp/standby" -X stream -R -c fast >"$tmp/basebackup.log" 2>&1 || {
  cat "$tmp/basebackup.log" >&2
  exit 1
}
# -R wrote standby.signal and primary_conninfo; name the standby as the
# primary's synchronous_standby_names does (the last setting wins).
echo "primary_conninfo = 'host=127.0.0.1 port=$port1 user=$pguser application_name=standby1'" |
  as_pg tee -a "$tmp/standby/postgresql.auto.conf" >/dev/null

port2=$(next_port "$((port1 == want2 ? port1 + 1 : want2))") || { echo "with-postgres-standby: no free port from $want2" >&2; exit 1; }
if ! as_pg "$bindir/pg_ctl" -D "$tmp/standby" -l "$tmp/standby.log" -w -t 60 \
  -o "-p $port2 $common -c hot_standby=on" start >/dev/null 2>&1; then
  echo "with-postgres-standby: the standby did not start; log:" >&2
  cat "$tmp/standby.log" >&2 || true
  exit 1
fi

psql_primary() { as_pg "$bindir/psql" -h "$tmp/sock" -p "$port1" -U "$pguser" -d postgres -Atqc "$1"; }
state=""
for _ in $(seq 1 100); do
  state=$(psql_primary "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'" || true)
  [ "$state" = "sync" ] && break
  sleep 0.2
done
if [ "$state" != "sync" ]; then
  echo "with-postgres-standby: the standby is not the primary's synchronous standby (sync_state '$state'); standby log:" >&2
  cat "$tmp/standby.log" >&2 || true
  exit 1
fi
# Created through the primary: a commit there now waits for the standby.
as_pg "$bindir/createdb" -h "$tmp/sock" -p "$port1" -U "$pguser" cerulean

export CERULEAN_TEST_FAILOVER_DSN="postgres://$pguser@127.0.0.1:$port1,127.0.0.1:$port2/cerulean?target_session_attrs=read-write&sslmode=disable"
export CERULEAN_TEST_PGBIN="$bindir" CERULEAN_TEST_PGUSER="$pguser"
export CERULEAN_TEST_PRIMARY_DATA="$tmp/primary" CERULEAN_TEST_STANDBY_DATA="$tmp/standby" CERULEAN_TEST_STANDBY_LOG="$tmp/standby.log"
echo "with-postgres-standby: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}'): primary on port $port1, synchronous standby on port $port2; CERULEAN_TEST_FAILOVER_DSN=$CERULEAN_TEST_FAILOVER_DSN" >&2

set +e
"$@"
status=$?
set -e
exit "$status"
