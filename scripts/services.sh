#!/usr/bin/env bash
# Starts throwaway PostgreSQL and MariaDB servers on loopback for the tests,
# from Debian's packages (installed with apt-get when missing; needs root).
#
#   eval "$(scripts/services.sh start)"   # prints export PG_URL=... MYSQL_URL=...
#   npm test                               # runs the server tests too
#   scripts/services.sh stop
#
# Data lives in /var/tmp/ale-services (the server users must be able to reach
# it, which a clone under a private temp dir may not allow). `start` reuses
# servers that already answer there, so a second shell does not wipe the
# first one's run; `restart` recreates them from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${ALE_SERVICES_DIR:-/var/tmp/ale-services}
pg_port=${ALE_PG_PORT:-54329}
my_port=${ALE_MYSQL_PORT:-33069}
log() { printf '[services] %s\n' "$*" >&2; }

need_packages() {
  local missing=()
  dpkg -s postgresql >/dev/null 2>&1 || missing+=(postgresql)
  dpkg -s mariadb-server >/dev/null 2>&1 || missing+=(mariadb-server)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]} from Debian's packages"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  fi
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1; }

stop() {
  if [ -f "$root/pg/postmaster.pid" ]; then
    runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$root/pg" -m fast stop >&2 || true
  fi
  if [ -f "$root/myrun/mysql.pid" ]; then
    kill "$(cat "$root/myrun/mysql.pid")" 2>/dev/null || true
    for _ in $(seq 50); do [ -e "$root/myrun/mysql.sock" ] || break; sleep 0.2; done
  fi
}

running() {
  [ -f "$root/pg/postmaster.pid" ] && [ -S "$root/myrun/mysql.sock" ] &&
    runuser -u postgres -- psql -h 127.0.0.1 -p "$pg_port" -U postgres -d ale_test -qtAc 'SELECT 1' >/dev/null 2>&1 &&
    mariadb --socket="$root/myrun/mysql.sock" -uroot -e 'SELECT 1' ale_test >/dev/null 2>&1
}

urls() {
  echo "export PG_URL=postgres://postgres@127.0.0.1:$pg_port/ale_test"
  echo "export MYSQL_URL=mysql://ale:ale@127.0.0.1:$my_port/ale_test"
}

start() {
  need_packages
  if running; then
    log "reusing the servers already running in $root"
    urls
    return
  fi
  fresh
}

fresh() {
  stop
  rm -rf "$root"
  mkdir -p "$root"
  chmod 755 "$root"

  log "PostgreSQL on 127.0.0.1:$pg_port"
  mkdir -p "$root/pg"
  chown postgres: "$root/pg"
  runuser -u postgres -- "$(pg_bin)/initdb" -D "$root/pg" -A trust -U postgres >/dev/null
  runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$root/pg" -l "$root/pg/server.log" -w \
    -o "-p $pg_port -c listen_addresses=127.0.0.1 -k $root/pg -c fsync=off" start >&2
  runuser -u postgres -- psql -h 127.0.0.1 -p "$pg_port" -U postgres -qc "CREATE DATABASE ale_test" >&2

  log "MariaDB on 127.0.0.1:$my_port"
  mkdir -p "$root/mysql" "$root/myrun"
  chown mysql: "$root/mysql" "$root/myrun"
  mariadb-install-db --user=mysql --datadir="$root/mysql" --auth-root-authentication-method=normal >/dev/null 2>&1
  mariadbd --user=mysql --datadir="$root/mysql" --port="$my_port" --bind-address=127.0.0.1 \
    --socket="$root/myrun/mysql.sock" --pid-file="$root/myrun/mysql.pid" --skip-log-bin \
    --innodb-flush-log-at-trx-commit=0 >"$root/mysql.log" 2>&1 &
  local pid=$!
  for _ in $(seq 150); do
    mariadb --socket="$root/myrun/mysql.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { tail -n 5 "$root/mysql.log" >&2; exit 1; }
    sleep 0.2
  done
  mariadb --socket="$root/myrun/mysql.sock" -uroot -e \
    "CREATE DATABASE ale_test; CREATE USER 'ale'@'127.0.0.1' IDENTIFIED BY 'ale'; GRANT ALL ON ale_test.* TO 'ale'@'127.0.0.1';"

  urls
}

case "${1:-start}" in
  start) start ;;
  restart) need_packages && fresh ;;
  stop) stop ;;
  *) echo "usage: $0 start|restart|stop" >&2; exit 2 ;;
esac
