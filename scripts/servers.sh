#!/usr/bin/env bash
# Local PostgreSQL 15 + Redis + Elasticsearch 8.19.8 for jobtriage, without Docker.
#
#   scripts/servers.sh start    install what is missing, start what is not answering, wait for health
#   scripts/servers.sh stop     stop the servers this folder started (never touches foreign servers)
#   scripts/servers.sh status   one line per server; exit 0 if all up, 3 otherwise
#   scripts/servers.sh env      print export lines:  eval "$(scripts/servers.sh env)"
#
# Overrides: JOBTRIAGE_SERVERS_DIR (default <repo>/.servers), PG_PORT (55432), REDIS_PORT (56379),
# ES_PORT (59200), ES_TRANSPORT_PORT (59300), ES_HEAP (1g), ES_JAVA_HOME (system OpenJDK 17).
# Progress goes to stderr, so stdout of `env` and `status` stays machine-friendly. See docs/servers.md.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG_PORT="${PG_PORT:-55432}"
REDIS_PORT="${REDIS_PORT:-56379}"
ES_PORT="${ES_PORT:-59200}"
ES_TRANSPORT_PORT="${ES_TRANSPORT_PORT:-59300}"
ES_HEAP="${ES_HEAP:-1g}"
ES_VERSION=8.19.8
ES_JAVA_HOME="${ES_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
ES_ARTIFACT="org.elasticsearch.distribution.integ-test-zip:elasticsearch:${ES_VERSION}:zip"
ES_ZIP="${MAVEN_REPO:-$HOME/.m2/repository}/org/elasticsearch/distribution/integ-test-zip/elasticsearch/${ES_VERSION}/elasticsearch-${ES_VERSION}.zip"
ES_USER=jobtriage-es
PG_USER=postgres
PG_BIN=/usr/lib/postgresql/15/bin
PG_TIMEOUT=60 REDIS_TIMEOUT=30 ES_TIMEOUT=240 STOP_TIMEOUT=60

T0=$SECONDS
LOG_TAG=servers
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"   # log, die, show_log, pid_alive, read_pid, wait_gone
is_root() { [[ $EUID -eq 0 ]]; }
# Run a command as a service user when we are root (PG and ES refuse to run as root); as ourselves otherwise.
as_user() { local u="$1"; shift; if is_root; then (cd / && runuser -u "$u" -- "$@"); else "$@"; fi; }

# ---------------------------------------------------------------- servers folder
resolve_dir() {
    if [[ -n "${JOBTRIAGE_SERVERS_DIR:-}" ]]; then
        DIR="$JOBTRIAGE_SERVERS_DIR"
    else
        DIR="$REPO/.servers"
        # The postgres/ES service users must be able to reach the folder. A clone under a private
        # home directory (e.g. /root, mode 700) cannot work; fall back to a stable folder in /var/tmp.
        if is_root && ! runuser -u nobody -- test -x "$REPO" 2>/dev/null; then
            DIR="/var/tmp/jobtriage-servers-$(printf '%s' "$REPO" | cksum | cut -d' ' -f1)"
            [[ "${1:-}" == quiet ]] || log "note: $REPO is not reachable by unprivileged users; using $DIR"
        fi
    fi
    mkdir -p "$DIR"
    DIR="$(cd "$DIR" && pwd)"
    PG_DIR="$DIR/pg" PG_DATA="$DIR/pg/data" PG_LOG="$DIR/pg/postgres.log"
    REDIS_DIR="$DIR/redis"
    ES_HOME="$DIR/elasticsearch-$ES_VERSION" ES_DIR="$DIR/es"
    ES_PIDFILE="$DIR/es/es.pid" ES_LOG="$DIR/es/logs/jobtriage.log" ES_OUT="$DIR/es/startup.log"
}

check_reachable() { # user dir
    if is_root && ! runuser -u "$1" -- test -w "$2"; then
        die "user '$1' cannot write $2 (is a parent directory private?). Set JOBTRIAGE_SERVERS_DIR to a folder under /var/tmp."
    fi
}

# ---------------------------------------------------------------- installation
APT_UPDATED=0
apt_install() {
    is_root || die "missing packages: $* — install them (sudo apt-get install $*) or run this script as root."
    command -v apt-get >/dev/null || die "missing packages: $* and no apt-get on this machine."
    export DEBIAN_FRONTEND=noninteractive
    if [[ $APT_UPDATED == 0 ]]; then
        log "apt-get update ..."
        apt-get update -q >&2 || die "apt-get update failed"
        APT_UPDATED=1
    fi
    log "apt-get install $* ..."
    apt-get install -y -q --no-install-recommends "$@" >&2 || die "apt-get install $* failed"
}

install_missing() {
    local pkgs=()
    if [[ ! -x "$PG_BIN/postgres" || ! -x "$PG_BIN/pg_isready" ]]; then
        # Do not let the Debian package create and start its own 'main' cluster on port 5432.
        if is_root && [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
            mkdir -p /etc/postgresql-common
            echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
        fi
        pkgs+=(postgresql-15)
    fi
    command -v psql >/dev/null || pkgs+=(postgresql-client-15)
    command -v redis-server >/dev/null || pkgs+=(redis-server)
    command -v redis-cli >/dev/null || pkgs+=(redis-tools)
    [[ -x "$ES_JAVA_HOME/bin/java" ]] || pkgs+=(openjdk-17-jre-headless)
    command -v curl >/dev/null || pkgs+=(curl ca-certificates)
    command -v unzip >/dev/null || pkgs+=(unzip)
    if [[ ! -f "$ES_ZIP" ]] && ! command -v mvn >/dev/null; then pkgs+=(maven); fi
    if ((${#pkgs[@]})); then apt_install "${pkgs[@]}"; fi
    [[ -x "$ES_JAVA_HOME/bin/java" ]] || die "no Java 17 at $ES_JAVA_HOME (set ES_JAVA_HOME)"
    if is_root && ! id "$ES_USER" >/dev/null 2>&1; then
        log "creating system user $ES_USER"
        useradd --system --no-create-home --shell /usr/sbin/nologin "$ES_USER"
    fi
    if is_root && ! id "$PG_USER" >/dev/null 2>&1; then die "OS user '$PG_USER' missing (the postgresql package creates it)"; fi
}

# ---------------------------------------------------------------- PostgreSQL
pg_up() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 2 2>/dev/null; }
pg_ours() { [[ -f "$PG_DATA/PG_VERSION" ]] && as_user "$PG_USER" "$PG_BIN/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1; }

pg_start() {
    local t=$SECONDS
    if pg_up; then
        log "postgresql: already answering on 127.0.0.1:$PG_PORT"
    else
        mkdir -p "$PG_DIR"
        is_root && chown "$PG_USER:" "$PG_DIR"
        check_reachable "$PG_USER" "$PG_DIR"
        if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
            log "postgresql: initdb $PG_DATA ..."
            rm -rf "$PG_DATA" "$PG_DATA.partial"
            as_user "$PG_USER" "$PG_BIN/initdb" -D "$PG_DATA.partial" --auth=trust --username=postgres \
                --encoding=UTF8 --locale=C >"$PG_DIR/initdb.log" 2>&1 \
                || { show_log "$PG_DIR/initdb.log"; die "postgresql: initdb failed"; }
            mv "$PG_DATA.partial" "$PG_DATA"
        fi
        log "postgresql: starting on 127.0.0.1:$PG_PORT (log $PG_LOG) ..."
        # Ports/sockets are passed at every start so that PG_PORT overrides keep working on an old data dir.
        # synchronous_commit=off: faster tests, a crash loses at most the last few commits (never corrupts).
        as_user "$PG_USER" "$PG_BIN/pg_ctl" start -D "$PG_DATA" -l "$PG_LOG" -w -t "$PG_TIMEOUT" \
            -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c synchronous_commit=off" >/dev/null 9>&- \
            || { show_log "$PG_LOG"; die "postgresql did not start on port $PG_PORT within ${PG_TIMEOUT}s"; }
    fi
    local deadline=$((SECONDS + PG_TIMEOUT))
    until pg_up; do
        ((SECONDS < deadline)) || { show_log "$PG_LOG"; die "postgresql not ready on port $PG_PORT after ${PG_TIMEOUT}s"; }
        sleep 1
    done
    # Role + database (idempotent). CREATEDB lets pytest-django create test_jobtriage.
    PGCONNECT_TIMEOUT=5 psql -w -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres >/dev/null <<'SQL' \
        || die "postgresql on port $PG_PORT: could not create role/database jobtriage as superuser 'postgres' (is this server ours?)"
SELECT 'CREATE ROLE jobtriage LOGIN CREATEDB PASSWORD ''jobtriage'''
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'jobtriage') \gexec
SELECT 'CREATE DATABASE jobtriage OWNER jobtriage'
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'jobtriage') \gexec
SQL
    log "postgresql: healthy (role/database jobtriage ok) in $((SECONDS - t))s"
}

pg_stop() {
    if pg_ours; then
        log "postgresql: stopping (pg_ctl stop -m fast) ..."
        as_user "$PG_USER" "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m fast -w -t "$STOP_TIMEOUT" >/dev/null \
            || { show_log "$PG_LOG"; die "postgresql did not stop"; }
        log "postgresql: stopped"
    elif pg_up; then
        log "postgresql: something answers on port $PG_PORT but it was not started from $DIR; leaving it alone"
    else
        log "postgresql: not running"
    fi
}

pg_status() {
    if pg_up; then
        local v
        v="$(PGPASSWORD=jobtriage PGCONNECT_TIMEOUT=3 psql -w -X -tA -h 127.0.0.1 -p "$PG_PORT" -U jobtriage -d jobtriage -c 'SHOW server_version' 2>/dev/null || echo '?')"
        printf '%-14s up    127.0.0.1:%-6s PostgreSQL %s%s\n' postgresql "$PG_PORT" "${v%% *}" "$(pg_ours && echo "  data=$PG_DATA")"
    else
        printf '%-14s down  127.0.0.1:%s\n' postgresql "$PG_PORT"; return 1
    fi
}

# ---------------------------------------------------------------- Redis
redis_cli() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }
redis_up() { [[ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }

redis_start() {
    local t=$SECONDS
    if redis_up; then
        log "redis: already answering on 127.0.0.1:$REDIS_PORT"
    else
        mkdir -p "$REDIS_DIR"
        log "redis: starting on 127.0.0.1:$REDIS_PORT (log $REDIS_DIR/redis.log) ..."
        # No persistence: Redis is only the Celery broker / result store; PostgreSQL and ES hold the data.
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes \
            --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" --dir "$REDIS_DIR" \
            --save '' --appendonly no 9>&- \
            || { show_log "$REDIS_DIR/redis.log"; die "redis-server failed to start"; }
    fi
    local deadline=$((SECONDS + REDIS_TIMEOUT))
    until redis_up; do
        ((SECONDS < deadline)) || { show_log "$REDIS_DIR/redis.log"; die "redis not answering PING on port $REDIS_PORT after ${REDIS_TIMEOUT}s"; }
        sleep 0.5
    done
    log "redis: healthy in $((SECONDS - t))s"
}

redis_stop() {
    local pid; pid="$(read_pid "$REDIS_DIR/redis.pid")"
    if pid_alive "$pid" && redis_up; then
        log "redis: stopping (shutdown nosave) ..."
        redis_cli shutdown nosave >/dev/null 2>&1 || true
        wait_gone "$pid" redis
        log "redis: stopped"
    elif redis_up; then
        log "redis: something answers on port $REDIS_PORT but it was not started from $DIR; leaving it alone"
    else
        log "redis: not running"
    fi
}

redis_status() {
    if redis_up; then
        local v; v="$(redis_cli info server 2>/dev/null | tr -d '\r' | sed -n 's/^redis_version://p')"
        printf '%-14s up    127.0.0.1:%-6s Redis %s\n' redis "$REDIS_PORT" "${v:-?}"
    else
        printf '%-14s down  127.0.0.1:%s\n' redis "$REDIS_PORT"; return 1
    fi
}

# ---------------------------------------------------------------- Elasticsearch
es_url() { printf 'http://127.0.0.1:%s%s' "$ES_PORT" "${1:-}"; }
# This distribution answers GET / with 405 (its root handler lives in a module it lacks): ask _cluster/health.
es_up() { curl -fsS -m 3 "$(es_url /_cluster/health)" >/dev/null 2>&1; }
es_pid() { # our ES pid, only if that process really runs our distribution
    local pid; pid="$(read_pid "$ES_PIDFILE")"
    if pid_alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$ES_HOME"; then echo "$pid"; fi
}

es_install() {
    if [[ -x "$ES_HOME/bin/elasticsearch" ]]; then return; fi
    if [[ ! -f "$ES_ZIP" ]]; then
        log "elasticsearch: downloading $ES_ARTIFACT from Maven Central (~200 MB) ..."
        mvn -B -ntp dependency:get -Dartifact="$ES_ARTIFACT" -Dtransitive=false >&2 \
            || die "mvn dependency:get $ES_ARTIFACT failed"
        [[ -f "$ES_ZIP" ]] || die "mvn finished but $ES_ZIP does not exist (custom Maven repo? set MAVEN_REPO)"
    fi
    log "elasticsearch: unzipping into $ES_HOME ..."
    rm -rf "$DIR/.es-unzip"
    unzip -q "$ES_ZIP" -d "$DIR/.es-unzip" || die "unzip $ES_ZIP failed"
    mv "$DIR/.es-unzip/elasticsearch-$ES_VERSION" "$ES_HOME"
    rmdir "$DIR/.es-unzip"
}

es_start() {
    local t=$SECONDS
    if es_up; then
        log "elasticsearch: already answering on 127.0.0.1:$ES_PORT"
    else
        es_install
        mkdir -p "$ES_DIR/data" "$ES_DIR/logs" "$ES_DIR/tmp"
        rm -f "$ES_PIDFILE"
        if is_root; then chown -R "$ES_USER:" "$ES_HOME" "$ES_DIR"; fi
        check_reachable "$ES_USER" "$ES_DIR"
        log "elasticsearch: starting $ES_VERSION on 127.0.0.1:$ES_PORT (transport $ES_TRANSPORT_PORT, heap $ES_HEAP, log $ES_LOG) ..."
        # Single-node discovery also means the production bootstrap checks (vm.max_map_count, ...) only warn.
        # destructive_requires_name=false lets tests delete their own indices by wildcard.
        as_user "$ES_USER" setsid env ES_JAVA_HOME="$ES_JAVA_HOME" ES_JAVA_OPTS="-Xms$ES_HEAP -Xmx$ES_HEAP" ES_TMPDIR="$ES_DIR/tmp" \
            "$ES_HOME/bin/elasticsearch" -d -p "$ES_PIDFILE" \
            -E cluster.name=jobtriage -E node.name=jobtriage-es \
            -E discovery.type=single-node -E xpack.security.enabled=false \
            -E http.host=127.0.0.1 -E http.port="$ES_PORT" \
            -E transport.host=127.0.0.1 -E transport.port="$ES_TRANSPORT_PORT" \
            -E path.data="$ES_DIR/data" -E path.logs="$ES_DIR/logs" \
            -E cluster.routing.allocation.disk.threshold_enabled=false \
            -E action.destructive_requires_name=false \
            >"$ES_OUT" 2>&1 9>&- \
            || { show_log "$ES_OUT"; show_log "$ES_LOG" 60; die "elasticsearch failed to start"; }
    fi
    local deadline=$((SECONDS + ES_TIMEOUT))
    until curl -fsS -m 10 "$(es_url '/_cluster/health?wait_for_status=yellow&timeout=5s')" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            show_log "$ES_OUT" 20; show_log "$ES_LOG" 60
            die "elasticsearch not yellow/green on port $ES_PORT after ${ES_TIMEOUT}s"
        fi
        if [[ -f "$ES_PIDFILE" && -z "$(es_pid)" ]] && ! es_up; then
            show_log "$ES_OUT" 20; show_log "$ES_LOG" 60; die "elasticsearch process exited"
        fi
        sleep 1
    done
    log "elasticsearch: healthy (status yellow or better) in $((SECONDS - t))s"
}


es_stop() {
    local pid; pid="$(es_pid)"
    if [[ -n "$pid" ]]; then
        log "elasticsearch: stopping pid $pid ..."
        kill -TERM "$pid"
        wait_gone "$pid" elasticsearch
        rm -f "$ES_PIDFILE"
        log "elasticsearch: stopped"
    elif es_up; then
        log "elasticsearch: something answers on port $ES_PORT but it was not started from $DIR; leaving it alone"
    else
        log "elasticsearch: not running"
    fi
}

es_status() {
    if es_up; then
        local v h
        v="$(curl -fsS -m 3 "$(es_url '/_cat/nodes?h=version')" 2>/dev/null | head -n1 | tr -d ' \n' || true)"
        h="$(curl -fsS -m 3 "$(es_url '/_cat/health?h=status')" 2>/dev/null | tr -d ' \n' || true)"
        printf '%-14s up    127.0.0.1:%-6s Elasticsearch %s (cluster %s)\n' elasticsearch "$ES_PORT" "${v:-?}" "${h:-?}"
    else
        printf '%-14s down  127.0.0.1:%s\n' elasticsearch "$ES_PORT"; return 1
    fi
}

# ---------------------------------------------------------------- main
with_lock() { # serialise concurrent start/stop on the same folder
    exec 9>"$DIR/.lock"
    flock -w 600 9 || die "another servers.sh holds $DIR/.lock for 10 minutes"
    "$@"
}

cmd_start() {
    log "servers folder: $DIR"
    install_missing
    pg_start
    redis_start
    es_start
    log "all servers healthy in $((SECONDS - T0))s"
}

cmd_stop() {
    es_stop
    redis_stop
    pg_stop
}

cmd_status() {
    local rc=0
    pg_status || rc=3
    redis_status || rc=3
    es_status || rc=3
    return $rc
}

cmd_env() {
    printf 'export DATABASE_URL=%q\n' "postgres://jobtriage:jobtriage@127.0.0.1:$PG_PORT/jobtriage"
    printf 'export CELERY_BROKER_URL=%q\n' "redis://127.0.0.1:$REDIS_PORT/0"
    printf 'export ELASTICSEARCH_URL=%q\n' "http://127.0.0.1:$ES_PORT"
}

case "${1:-}" in
    start) resolve_dir; with_lock cmd_start ;;
    stop) resolve_dir; with_lock cmd_stop ;;
    status) resolve_dir quiet; cmd_status ;;
    env) cmd_env ;;
    *) echo "usage: $0 start|stop|status|env   (see docs/servers.md)" >&2; exit 2 ;;
esac
