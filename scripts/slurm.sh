#!/usr/bin/env bash
# A real single-node Slurm 22.05 cluster with accounting, for tests/slurm (docs/platforms/slurm.md).
#
#   scripts/slurm.sh start     install what is missing (Debian packages, as root), start what is not running
#   scripts/slurm.sh stop      stop the daemons this folder started (never touches a foreign Slurm or MariaDB)
#   scripts/slurm.sh restart-controller   stop and start slurmctld only (tests: what a restart rewrites)
#   scripts/slurm.sh status    one line per daemon; exit 0 if all up, 3 otherwise
#   scripts/slurm.sh env       print export lines:  eval "$(scripts/slurm.sh env)"
#
# Everything is private to one folder (default <servers folder>/slurm, the folder scripts/servers.sh uses;
# override with JOBTRIAGE_SLURM_DIR): munged's key and socket, MariaDB's data, Slurm's configuration, state,
# logs and two fake GPUs (character devices). Nothing in /etc is written and no system service is started.
# No systemd and no cgroups: proctrack/linuxproc, task/none, memory enforced by jobacct_gather's
# OverMemoryKill. Every port is bound to 127.0.0.1 and kept away from the other servers'
# (PostgreSQL 55432, Redis 56379, Elasticsearch 59200/59300):
#   SLURMCTLD_PORT 56817, SLURMD_PORT 56818, SLURMDBD_PORT 56819, SLURM_MARIADB_PORT 53306.
# Jobs run as the unprivileged user SLURM_JOB_USER (default jobtriage-jobs, created if missing).
# Needs root (munged, slurmd and MariaDB run as their own users). Progress goes to stderr.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SLURMCTLD_PORT="${SLURMCTLD_PORT:-56817}"
SLURMD_PORT="${SLURMD_PORT:-56818}"
SLURMDBD_PORT="${SLURMDBD_PORT:-56819}"
SLURM_MARIADB_PORT="${SLURM_MARIADB_PORT:-53306}"
SLURM_JOB_USER="${SLURM_JOB_USER:-jobtriage-jobs}"
CLUSTER=jobtriage
ACCOUNT=ml
NODE=jt-node1
PACKAGES=(slurmctld slurmd slurmdbd slurm-client mariadb-server munge)
START_TIMEOUT=60 STOP_TIMEOUT=30

T0=$SECONDS
LOG_TAG=slurm
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"   # log, die, show_log, pid_alive, read_pid, wait_gone
# The pid in a pid file, only if that process is the named program (a stale file never names a stranger).
our_pid() { # pidfile program
    local pid; pid="$(read_pid "$1")"
    if pid_alive "$pid" && [[ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" == *"$2"* ]]; then echo "$pid"; fi
}
wait_until() { # seconds description command...
    local deadline=$((SECONDS + $1)) what="$2"; shift 2
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}

# ---------------------------------------------------------------- folder
resolve_dir() {
    local servers
    if [[ -n "${JOBTRIAGE_SLURM_DIR:-}" ]]; then
        DIR="$JOBTRIAGE_SLURM_DIR"
    else
        # The same rule as scripts/servers.sh: the service users must reach the folder.
        servers="${JOBTRIAGE_SERVERS_DIR:-$REPO/.servers}"
        if [[ -z "${JOBTRIAGE_SERVERS_DIR:-}" ]] && [[ $EUID -eq 0 ]] && ! runuser -u nobody -- test -x "$REPO" 2>/dev/null; then
            servers="/var/tmp/jobtriage-servers-$(printf '%s' "$REPO" | cksum | cut -d' ' -f1)"
        fi
        DIR="$servers/slurm"
    fi
    mkdir -p "$DIR"
    DIR="$(cd "$DIR" && pwd)"
    ETC="$DIR/etc" MUNGE="$DIR/munge" DB="$DIR/mariadb" STATE="$DIR/state" SPOOL="$DIR/spool" LOGS="$DIR/log"
    RUN="$DIR/run" GPU="$DIR/gpu" JOBS="$DIR/jobs" EPILOG="$DIR/epilog"
    export SLURM_CONF="$ETC/slurm.conf"
}

# ---------------------------------------------------------------- installation
install_missing() {
    local missing=() p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if ((${#missing[@]})); then
        command -v apt-get >/dev/null || die "missing packages: ${missing[*]} and no apt-get on this machine"
        export DEBIAN_FRONTEND=noninteractive
        # The packages' scripts would start the system's munge/mariadb/slurm services: forbid that while
        # installing (policy-rc.d 101), unless the machine already has a policy of its own.
        local policy=/usr/sbin/policy-rc.d made_policy=0
        if [[ ! -e $policy ]]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=1; fi
        log "apt-get install ${missing[*]} ..."
        { apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
            || { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }; } \
            || { ((made_policy)) && rm -f "$policy"; die "apt-get install ${missing[*]} failed"; }
        if ((made_policy)); then rm -f "$policy"; fi
    fi
    if ! id "$SLURM_JOB_USER" >/dev/null 2>&1; then
        log "creating system user $SLURM_JOB_USER (the jobs run as it)"
        useradd --system --no-create-home --shell /bin/bash "$SLURM_JOB_USER"
    fi
}

# ---------------------------------------------------------------- configuration
write_config() {
    local host; host="$(hostname -s)"
    mkdir -p "$ETC" "$MUNGE" "$DB/data" "$DB/run" "$DB/log" "$STATE" "$SPOOL" "$LOGS" "$RUN" "$GPU" "$JOBS" "$EPILOG"
    chown slurm: "$STATE" "$LOGS" "$RUN"
    chown munge: "$MUNGE" && chmod 755 "$MUNGE"   # munged wants its socket folder open to all; the key is 400
    chown -R mysql: "$DB"
    chmod 1777 "$JOBS"           # every job writes its output here, as its own user
    # Fake GPUs: slurmd only keeps a GPU whose gres.conf File= names a device; /dev/null's numbers do.
    local i
    for i in 0 1; do [[ -c "$GPU/nvidia$i" ]] || mknod -m 666 "$GPU/nvidia$i" c 1 3; done
    cat >"$ETC/slurm.conf" <<EOF
# Written by scripts/slurm.sh: a single-node test cluster for jobtriage. Do not edit; it is rewritten at start.
ClusterName=$CLUSTER
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
SrunPortRange=56900-56999
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE/munge.socket.2
CredType=cred/munge
StateSaveLocation=$STATE
SlurmdSpoolDir=$SPOOL/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$SPOOL/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm
# No systemd, no cgroups: processes tracked by parentage, memory limits by polling (OverMemoryKill).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# Short waits, so that time limits and cancels end in seconds.
KillWait=2
InactiveLimit=0
MinJobAge=600
MessageTimeout=20
SchedulerParameters=sched_interval=2
JobRequeue=1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$SLURMDBD_PORT
# For connections to slurmdbd this names the munge socket (AuthInfo is not read for them).
AccountingStoragePass=$MUNGE/munge.socket.2
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/none
GresTypes=gpu
EpilogSlurmctld=$ETC/epilog_slurmctld.sh
NodeName=$NODE NodeHostname=$host NodeAddr=127.0.0.1 CPUs=32 RealMemory=8000 Gres=gpu:tesla:2 State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    cat >"$ETC/gres.conf" <<EOF
NodeName=$NODE Name=gpu Type=tesla File=$GPU/nvidia[0-1]
EOF
    # slurmdbd refuses a configuration others can read (it holds the database password).
    cat >"$ETC/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$MUNGE/munge.socket.2
DbdAddr=127.0.0.1
DbdHost=localhost
DbdPort=$SLURMDBD_PORT
# Listen on DbdAddr only (by default slurmdbd binds every address).
CommunicationParameters=NoInAddrAny
SlurmUser=slurm
LogFile=$LOGS/slurmdbd.log
PidFile=$RUN/slurmdbd.pid
PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$SLURM_MARIADB_PORT
StorageUser=slurm
StoragePass=jobtriage-slurmdbd
StorageLoc=slurm_acct_db
EOF
    chown slurm: "$ETC/slurmdbd.conf" && chmod 600 "$ETC/slurmdbd.conf"
    # The EpilogSlurmctld hook of docs/platforms, as an operator installs it. slurmctld runs it with a
    # fixed environment, so this wrapper names the configuration, the URL and the token file. The tests
    # install the hook (a copy: the repository may be unreadable to the slurm user) and write
    # $EPILOG/url and $EPILOG/token while a live server listens. Without them it does nothing.
    cat >"$ETC/epilog_slurmctld.sh" <<EOF
#!/bin/sh
[ -s "$EPILOG/url" ] && [ -s "$EPILOG/token" ] && [ -f "$EPILOG/jobtriage_epilog_slurmctld.py" ] || exit 0
export SLURM_CONF="$ETC/slurm.conf" JOBTRIAGE_URL="\$(cat "$EPILOG/url")" JOBTRIAGE_TOKEN_FILE="$EPILOG/token"
exec /usr/bin/python3 "$EPILOG/jobtriage_epilog_slurmctld.py" >>"$LOGS/epilog.log" 2>&1
EOF
    chmod 755 "$ETC/epilog_slurmctld.sh"
    chown slurm: "$EPILOG" && chmod 700 "$EPILOG"
}

# ---------------------------------------------------------------- munge
munge_up() { munge -S "$MUNGE/munge.socket.2" -n </dev/null 2>/dev/null | unmunge -S "$MUNGE/munge.socket.2" >/dev/null 2>&1; }
munge_start() {
    if munge_up; then log "munge: already running"; return; fi
    if [[ ! -s "$MUNGE/munge.key" ]]; then
        mungekey --create --keyfile="$MUNGE/munge.key" >/dev/null 2>&1 || die "mungekey --create failed"
        chown munge: "$MUNGE/munge.key" && chmod 400 "$MUNGE/munge.key"
    fi
    log "munge: starting munged as munge (socket $MUNGE/munge.socket.2) ..."
    runuser -u munge -- /usr/sbin/munged --socket="$MUNGE/munge.socket.2" --key-file="$MUNGE/munge.key" \
        --pid-file="$MUNGE/munged.pid" --log-file="$MUNGE/munged.log" --seed-file="$MUNGE/munged.seed" 9>&- \
        || { show_log "$MUNGE/munged.log"; die "munged failed to start"; }
    wait_until 20 munge munge_up || { show_log "$MUNGE/munged.log"; die "munged does not answer"; }
}
munge_stop() { stop_pid "$(our_pid "$MUNGE/munged.pid" munged)" munged; }

# ---------------------------------------------------------------- MariaDB
sql() { mariadb --no-defaults --protocol=socket -S "$DB/run/mysqld.sock" -u root "$@"; }
mariadb_up() { mysqladmin --no-defaults --protocol=socket -S "$DB/run/mysqld.sock" -u root ping >/dev/null 2>&1; }
mariadb_start() {
    if mariadb_up; then log "mariadb: already running"; else
        if [[ ! -d "$DB/data/mysql" ]]; then
            log "mariadb: mariadb-install-db into $DB/data ..."
            mariadb-install-db --no-defaults --user=mysql --datadir="$DB/data" --skip-test-db \
                --auth-root-authentication-method=socket >"$DB/log/install.log" 2>&1 \
                || { show_log "$DB/log/install.log"; die "mariadb-install-db failed"; }
        fi
        log "mariadb: starting on 127.0.0.1:$SLURM_MARIADB_PORT (log $DB/log/error.log) ..."
        # setsid -f: detached at once, so no shell of ours waits for it (or keeps the lock open).
        (cd / && exec setsid -f mysqld_safe --no-defaults --user=mysql --datadir="$DB/data" --port="$SLURM_MARIADB_PORT" \
            --bind-address=127.0.0.1 --socket="$DB/run/mysqld.sock" --pid-file="$DB/run/mysqld.pid" \
            --log-error="$DB/log/error.log" --innodb-buffer-pool-size=128M --innodb-log-file-size=64M \
            --innodb-lock-wait-timeout=900 </dev/null >/dev/null 2>&1) 9>&-
        wait_until "$START_TIMEOUT" mariadb mariadb_up || { show_log "$DB/log/error.log"; die "mariadb does not answer"; }
    fi
    sql <<'SQL' || die "mariadb: could not create database slurm_acct_db and its user"
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'jobtriage-slurmdbd';
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'jobtriage-slurmdbd';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
SQL
}
mariadb_stop() {
    local pid; pid="$(our_pid "$DB/run/mysqld.pid" mariadbd)"
    [[ -n "$pid" ]] || pid="$(our_pid "$DB/run/mysqld.pid" mysqld)"
    if [[ -n "$pid" ]]; then
        log "mariadb: shutting down ..."
        mysqladmin --no-defaults --protocol=socket -S "$DB/run/mysqld.sock" -u root shutdown >/dev/null 2>&1 || kill -TERM "$pid"
        wait_gone "$pid" mariadb
    else
        log "mariadb: not running"
    fi
}

# ---------------------------------------------------------------- Slurm daemons
dbd_up() { [[ -n "$(our_pid "$RUN/slurmdbd.pid" slurmdbd)" ]] && sacctmgr -n show cluster >/dev/null 2>&1; }
ctld_up() { [[ -n "$(our_pid "$RUN/slurmctld.pid" slurmctld)" ]] && scontrol ping 2>/dev/null | grep -q 'is UP'; }
node_idle() { [[ "$(sinfo -h -n "$NODE" -o %T 2>/dev/null)" =~ ^(idle|mixed|allocated) ]]; }

slurmdbd_start() {
    if dbd_up; then log "slurmdbd: already running"; else
        log "slurmdbd: starting on 127.0.0.1:$SLURMDBD_PORT ..."
        slurmdbd 9>&- || { show_log "$LOGS/slurmdbd.log"; die "slurmdbd failed to start"; }
        wait_until "$START_TIMEOUT" slurmdbd dbd_up || { show_log "$LOGS/slurmdbd.log"; die "slurmdbd does not answer"; }
    fi
    # The cluster, an account and the users (idempotent: only what is missing is added).
    [[ -n "$(sacctmgr -n -P show cluster "$CLUSTER" format=cluster)" ]] || sacctmgr -i add cluster "$CLUSTER" >&2
    [[ -n "$(sacctmgr -n -P show account "$ACCOUNT" format=account)" ]] \
        || sacctmgr -i add account "$ACCOUNT" Cluster="$CLUSTER" Description="jobtriage tests" Organization=jobtriage >&2
    local u
    for u in root "$SLURM_JOB_USER"; do
        [[ -n "$(sacctmgr -n -P show user "$u" format=user)" ]] \
            || sacctmgr -i add user "$u" Account="$ACCOUNT" DefaultAccount="$ACCOUNT" Cluster="$CLUSTER" >&2
    done
}

slurmctld_start() {
    if ctld_up; then log "slurmctld: already running"; return; fi
    log "slurmctld: starting on 127.0.0.1:$SLURMCTLD_PORT ..."
    slurmctld -f "$ETC/slurm.conf" 9>&- || { show_log "$LOGS/slurmctld.log"; die "slurmctld failed to start"; }
    wait_until "$START_TIMEOUT" slurmctld ctld_up || { show_log "$LOGS/slurmctld.log"; die "slurmctld does not answer"; }
}

slurmd_start() {
    if [[ -z "$(our_pid "$SPOOL/slurmd.pid" slurmd)" ]]; then
        log "slurmd: starting node $NODE (2 fake GPUs) ..."
        mkdir -p "$SPOOL/slurmd"
        slurmd -f "$ETC/slurm.conf" -N "$NODE" 9>&- || { show_log "$LOGS/slurmd.log"; die "slurmd failed to start"; }
    else
        log "slurmd: already running"
    fi
    if ! wait_until "$START_TIMEOUT" slurmd node_idle; then
        sinfo -N -l >&2 || true; show_log "$LOGS/slurmd.log"; show_log "$LOGS/slurmctld.log"
        die "node $NODE is not idle after ${START_TIMEOUT}s"
    fi
}

stop_pid() { # pid name
    if [[ -n "$1" ]]; then
        log "$2: stopping pid $1 ..."
        kill -TERM "$1" 2>/dev/null || true
        wait_gone "$1" "$2"
    else
        log "$2: not running"
    fi
}

# ---------------------------------------------------------------- commands
with_lock() {
    exec 9>"$DIR/.lock"
    flock -w 600 9 || die "another slurm.sh holds $DIR/.lock for 10 minutes"
    "$@"
}

cmd_start() {
    [[ $EUID -eq 0 ]] || die "the test cluster needs root (munged, slurmd and MariaDB run as their own users)"
    log "slurm folder: $DIR"
    install_missing
    write_config
    munge_start
    mariadb_start
    slurmdbd_start
    slurmctld_start
    slurmd_start
    log "single-node Slurm $(sinfo -V | cut -d' ' -f2) with accounting ready in $((SECONDS - T0))s"
}

cmd_stop() {
    stop_pid "$(our_pid "$SPOOL/slurmd.pid" slurmd)" slurmd
    stop_pid "$(our_pid "$RUN/slurmctld.pid" slurmctld)" slurmctld
    stop_pid "$(our_pid "$RUN/slurmdbd.pid" slurmdbd)" slurmdbd
    mariadb_stop
    munge_stop
}

cmd_restart_controller() {
    stop_pid "$(our_pid "$RUN/slurmctld.pid" slurmctld)" slurmctld
    slurmctld_start
    wait_until "$START_TIMEOUT" slurmd node_idle || log "warning: node $NODE not back to idle yet"
}

cmd_status() {
    local rc=0
    line() { printf '%-10s %-5s %s\n' "$1" "$2" "$3"; }
    if munge_up; then line munged up "$MUNGE/munge.socket.2"; else line munged down ""; rc=3; fi
    if mariadb_up; then line mariadb up "127.0.0.1:$SLURM_MARIADB_PORT"; else line mariadb down ""; rc=3; fi
    if dbd_up; then line slurmdbd up "127.0.0.1:$SLURMDBD_PORT"; else line slurmdbd down ""; rc=3; fi
    if ctld_up; then line slurmctld up "127.0.0.1:$SLURMCTLD_PORT"; else line slurmctld down ""; rc=3; fi
    if node_idle; then line slurmd up "node $NODE $(sinfo -h -n "$NODE" -o %T 2>/dev/null)"; else line slurmd down ""; rc=3; fi
    return $rc
}

cmd_env() {
    printf 'export SLURM_CONF=%q\n' "$ETC/slurm.conf"
    printf 'export JOBTRIAGE_SLURM_DIR=%q\n' "$DIR"
    printf 'export JOBTRIAGE_SLURM_JOB_USER=%q\n' "$SLURM_JOB_USER"
}

case "${1:-}" in
    start) resolve_dir; with_lock cmd_start ;;
    stop) resolve_dir; with_lock cmd_stop ;;
    restart-controller) resolve_dir; with_lock cmd_restart_controller ;;
    status) resolve_dir; cmd_status ;;
    env) resolve_dir; cmd_env ;;
    *) echo "usage: $0 start|stop|restart-controller|status|env   (see docs/platforms/slurm.md)" >&2; exit 2 ;;
esac
