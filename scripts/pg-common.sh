# pg-common.sh, sourced by with-postgres.sh and with-postgres-standby.sh:
# finds Debian's PostgreSQL 15 binaries (installing postgresql-15 with
# apt-get when they are missing) and decides which user runs the servers
# (PostgreSQL refuses to run as root: `postgres` then). The caller sets
# `me` (its name, for messages) before sourcing. Sets bindir, pguser and
# the function as_pg (run a command as pguser).

find_bindir() {
  local initdb
  initdb=$(dpkg -L postgresql-15 2>/dev/null | grep '/bin/initdb$' | head -n1 || true)
  if [ -n "$initdb" ] && [ -x "$initdb" ]; then
    dirname "$initdb"
  fi
}

bindir=$(find_bindir)
if [ -z "$bindir" ]; then
  echo "$me: postgresql-15 not installed; installing it with apt-get" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y postgresql-15
  bindir=$(find_bindir)
  if [ -z "$bindir" ]; then
    echo "$me: cannot find initdb of postgresql-15 after installing it" >&2
    exit 1
  fi
fi

if [ "$(id -u)" -eq 0 ]; then
  pguser=postgres
  if ! id "$pguser" >/dev/null 2>&1; then
    echo "$me: running as root but there is no '$pguser' user" >&2
    exit 1
  fi
  as_pg() { runuser -u "$pguser" -- "$@"; }
else
  pguser=$(id -un)
  as_pg() { "$@"; }
fi
