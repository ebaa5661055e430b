#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: `pg_cluster.sh start STATE`
# installs PostgreSQL when it is missing, runs initdb into a new temporary
# directory as an unprivileged user (postgres when run as root), trusts local
# connections, listens only on a Unix socket in that directory, and writes
# the directory to the file STATE; `pg_cluster.sh stop STATE` stops the server
# and removes the directory. The server is for tests: fsync and the like off.
# `pg_cluster.sh restart STATE` restarts it (for tests of a lost server);
# `pg_cluster.sh uri STATE [DB]` prints the URI of database DB (postgres).
set -euo pipefail
cmd=${1:?usage: pg_cluster.sh start|stop|restart|uri STATE [DB]}
state=${2:?usage: pg_cluster.sh start|stop|restart|uri STATE [DB]}

# A TCP port nothing listens on, though the server listens only on its socket
# (the port names the socket file and is part of every URI).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $cmd in
start)
  if ! bindir >/dev/null || ! command -v psql >/dev/null 2>&1 ||
     ! pkg-config --exists libpq 2>/dev/null; then
    echo "pg_cluster: installing postgresql and libpq-dev" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql libpq-dev >/dev/null
  fi
  bin=$(bindir) || { echo "pg_cluster: no initdb found after installing postgresql" >&2; exit 1; }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/fdx-pg-cluster-XXXXXX")
  echo "$dir" >"$state"
  PORT=$(free_port)
  echo "$PORT" >"$dir/port"
  chmod 755 "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  if ! as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 \
       >"$dir/initdb.log" 2>&1; then
    echo "pg_cluster: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1
  fi
  cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $PORT
fsync = off
full_page_writes = off
synchronous_commit = off
max_connections = 100
CONF
  if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null; then
    echo "pg_cluster: the server did not start:" >&2; cat "$dir/server.log" >&2; exit 1
  fi
  echo "pg_cluster: PostgreSQL running in $dir (socket, port $PORT)"
  ;;
stop)
  [ -f "$state" ] || exit 0
  dir=$(cat "$state")
  if [ -n "$dir" ] && [ -d "$dir" ]; then
    bin=$(bindir) && as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
  fi
  rm -f "$state"
  ;;
restart)
  dir=$(cat "$state")
  as_owner "$(bindir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null
  ;;
uri)
  dir=$(cat "$state")
  PORT=$(cat "$dir/port")
  echo "postgresql:///${3:-postgres}?host=$dir&port=$PORT&user=postgres"
  ;;
*)
  echo "usage: pg_cluster.sh start|stop|restart|uri STATE [DB]" >&2; exit 2
  ;;
esac
