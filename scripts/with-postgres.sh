#!/usr/bin/env bash
# with-postgres.sh runs a command against a private, throw-away PostgreSQL 15.
#
#   bash scripts/with-postgres.sh go test -race ./internal/kv/postgres/ ./internal/chunk/sqlchunk/
#
# It finds Debian's PostgreSQL 15 binaries (installing postgresql-15 with
# apt-get when they are missing), initdb's a cluster in a temporary directory
# as the `postgres` user (or the current user when not root), starts it on a
# free loopback port with its unix socket in the same directory, creates the
# database `cerulean`, exports
#
#   CERULEAN_TEST_POSTGRES=postgres://USER@127.0.0.1:PORT/cerulean?sslmode=disable
#
# and runs the command. Whatever happens, the server is stopped and the
# directory removed; the script exits with the command's status.
#
# With --exclusive as the first argument — for tests that stop and start the
# server themselves (test/multiproc's TestDatabaseRestart), which nothing
# else may be using at the time — it also exports
#
#   CERULEAN_TEST_PGBIN   the directory of pg_ctl
#   CERULEAN_TEST_PGDATA  the data directory (postmaster.opts in it holds
#                         the server's options, as pg_ctl restart uses them)
#   CERULEAN_TEST_PGUSER  the user the server runs as (and pg_ctl must)
#   CERULEAN_TEST_PGLOG   the server's log file
#
# Environment:
#   CERULEAN_PG_OPTS  extra server options, e.g. "-c fsync=off" for faster,
#                     non-durable test runs (the default is durable).
#   CERULEAN_PG_KEEP  when set, keep the data directory (logs) after the run.
set -euo pipefail

exclusive=0
if [ "${1:-}" = "--exclusive" ]; then
  exclusive=1
  shift
fi

if [ "$#" -eq 0 ]; then
  echo "usage: $0 [--exclusive] command [args...]" >&2
  exit 2
fi

me=with-postgres
# shellcheck source=scripts/pg-common.sh
source "$(dirname "$0")/pg-common.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cerulean-pg.XXXXXX")
chmod 755 "$tmp"
mkdir "$tmp/data" "$tmp/sock"
if [ "$(id -u)" -eq 0 ]; then
  chown -R "$pguser" "$tmp"
fi

started=0
cleanup() {
  local status=$?
  if [ "$started" -eq 1 ]; then
    as_pg "$bindir/pg_ctl" -D "$tmp/data" -m fast -w stop >/dev/null 2>&1 ||
      as_pg "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -n "${CERULEAN_PG_KEEP:-}" ]; then
    echo "with-postgres: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

as_pg "$bindir/initdb" -D "$tmp/data" -U "$pguser" -A trust -E UTF8 --locale=C >"$tmp/initdb.log" 2>&1 || {
  cat "$tmp/initdb.log" >&2
  exit 1
}

# A port nobody listens on: try random ports until the server starts (a
# race with another process grabbing the port just makes us try again).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=""
for _ in $(seq 1 20); do
  p=$((20000 + RANDOM % 12000)) # below 32768: the ephemeral range is for client source ports
  port_free "$p" || continue
  if as_pg "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 \
    -o "-p $p -k $tmp/sock -c listen_addresses=127.0.0.1 -c max_connections=400 ${CERULEAN_PG_OPTS:-}" \
    start >/dev/null 2>&1; then
    port=$p
    started=1
    break
  fi
  # A failed start may have left a half-started server behind.
  as_pg "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
done
if [ -z "$port" ]; then
  echo "with-postgres: could not start PostgreSQL; server log:" >&2
  cat "$tmp/server.log" >&2 || true
  exit 1
fi

as_pg "$bindir/createdb" -h "$tmp/sock" -p "$port" -U "$pguser" cerulean

export CERULEAN_TEST_POSTGRES="postgres://$pguser@127.0.0.1:$port/cerulean?sslmode=disable"
if [ "$exclusive" -eq 1 ]; then
  export CERULEAN_TEST_PGBIN="$bindir" CERULEAN_TEST_PGDATA="$tmp/data" CERULEAN_TEST_PGUSER="$pguser" CERULEAN_TEST_PGLOG="$tmp/server.log"
fi
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on port $port; CERULEAN_TEST_POSTGRES=$CERULEAN_TEST_POSTGRES" >&2

set +e
"$@"
status=$?
set -e
exit "$status"
