#!/usr/bin/env bash
# The test command:   scripts/test.sh [pytest args ...]
#
# Works on a fresh machine: creates .venv (Python >= 3.11) if missing, installs requirements-dev.txt and
# requirements-frameworks.txt (torch and keras for the training hook's tests) and requirements-train.txt
# (scikit-learn, to check the learned tagger against it; each file skipped when it
# has not changed since its last install), starts the local
# PostgreSQL / Redis / Elasticsearch with scripts/servers.sh (skipped when they already answer),
# exports their URLs and runs `python -m pytest "$@"` from the repo root with pytest's exit code.
# The browser tests (tests/browser) drive Debian's Chromium (/usr/bin/chromium, never a downloaded
# browser): as root it is installed with apt-get when missing; otherwise the script stops and says so.
# The servers are left running for the next run; stop them with `scripts/servers.sh stop`.
# Port overrides (PG_PORT, REDIS_PORT, ES_PORT, ES_TRANSPORT_PORT) are honoured; see docs/servers.md.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
say() { printf '[test] %s\n' "$*" >&2; }
die() { printf '[test] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- virtualenv
find_python() {
    local c
    for c in "${PYTHON:-}" python3.11 python3 python; do
        [[ -n "$c" ]] && command -v "$c" >/dev/null 2>&1 || continue
        if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then echo "$c"; return 0; fi
    done
    return 1
}

ensure_venv() {
    if [[ ! -x .venv/bin/python ]]; then
        local py
        if ! py="$(find_python)" || ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
            if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
                say "installing python3 + python3-venv with apt-get ..."
                export DEBIAN_FRONTEND=noninteractive
                apt-get update -q >&2 && apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip >&2 \
                    || die "apt-get install python3-venv failed"
                py="$(find_python)" || die "no Python >= 3.11 found (set PYTHON=/path/to/python3.11)"
            else
                die "need Python >= 3.11 with the venv module (Debian: apt-get install python3-venv), or set PYTHON="
            fi
        fi
        say "creating .venv with $py ($("$py" -V 2>&1)) ..."
        rm -rf .venv
        "$py" -m venv .venv || die "$py -m venv .venv failed"
    fi
    # Each requirement file (arguments; default: the product's) is installed only when it, the runtime
    # file it includes, or the interpreter changed since its last good install.
    local file stamp want
    for file in "${@:-requirements.txt}"; do
        stamp=".venv/.jobtriage-${file%.txt}.sha256"
        want="$(cat "$file" requirements.txt <(.venv/bin/python -VV) | sha256sum | cut -d' ' -f1)"
        if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
            say "pip install -r $file ..."
            PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 .venv/bin/python -m pip install -q -r "$file" \
                || die "pip install -r $file failed"
            echo "$want" >"$stamp"
        else
            say "$file unchanged, .venv up to date"
        fi
    done
    export VIRTUAL_ENV="$REPO/.venv" PATH="$REPO/.venv/bin:$PATH"
}

# ---------------------------------------------------------------- chromium (browser tests)
ensure_chromium() {
    if command -v chromium >/dev/null 2>&1; then return 0; fi
    if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
        say "installing Debian's chromium with apt-get (for tests/browser) ..."
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-cache show chromium >/dev/null 2>&1; then apt-get update -q >&2 || die "apt-get update failed"; fi
        # Stale package lists can name versions the mirror no longer has: update once and retry.
        apt-get install -y -q -o DPkg::Lock::Timeout=300 chromium >&2 \
            || { apt-get update -q >&2 && apt-get install -y -q -o DPkg::Lock::Timeout=300 chromium >&2; } \
            || die "apt-get install chromium failed"
        command -v chromium >/dev/null 2>&1 || die "chromium still not on PATH after apt-get install chromium"
    else
        die "the browser tests need Debian's Chromium (/usr/bin/chromium): run as root: apt-get install -y chromium"
    fi
}

# ---------------------------------------------------------------- servers
# Fast path: when all three servers already answer (as the jobtriage role for PostgreSQL) there is
# nothing for `servers.sh start` to do, so do not take its lock or run its installation checks.
servers_answering() {
    local pg="${PG_PORT:-55432}" rd="${REDIS_PORT:-56379}" es="${ES_PORT:-59200}"
    command -v psql >/dev/null && command -v redis-cli >/dev/null && command -v curl >/dev/null || return 1
    PGPASSWORD=jobtriage PGCONNECT_TIMEOUT=3 psql -w -X -qtA -h 127.0.0.1 -p "$pg" -U jobtriage -d jobtriage \
        -c 'SELECT 1' >/dev/null 2>&1 || return 1
    [[ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$rd" ping 2>/dev/null)" == PONG ]] || return 1
    # Not GET /: the integ-test-zip distribution has no rest-root module (GET / answers 405).
    curl -fsS -m 5 "http://127.0.0.1:$es/_cluster/health?wait_for_status=yellow&timeout=2s" >/dev/null 2>&1
}

ensure_servers() {
    if servers_answering; then
        say "servers already answering (postgresql :${PG_PORT:-55432}, redis :${REDIS_PORT:-56379}, elasticsearch :${ES_PORT:-59200})"
    else
        say "starting local servers (scripts/servers.sh start) ..."
        # In a session of its own: Elasticsearch does not detach from the caller's process group, so
        # a Ctrl-C in the terminal (e.g. stopping scripts/dev.sh) would otherwise stop it too.
        local setsid=(); if command -v setsid >/dev/null; then setsid=(setsid -w); fi
        "${setsid[@]}" bash scripts/servers.sh start || die "scripts/servers.sh start failed (see docs/servers.md, troubleshooting)"
    fi
    eval "$(bash scripts/servers.sh env)"
}

# ---------------------------------------------------------------- slurm (tests/slurm)
# A real single-node Slurm 22.05 with accounting for tests/slurm (scripts/slurm.sh, docs/platforms/slurm.md).
# It needs root: otherwise it is not started and tests/slurm skip and say why (under CI=true they fail).
# Left running like the other servers; stop it with `scripts/slurm.sh stop`.
ensure_slurm() {
    if [[ $EUID -ne 0 ]]; then say "not root: the Slurm test cluster is not started (tests/slurm will skip)"; return 0; fi
    if bash scripts/slurm.sh status >/dev/null 2>&1; then
        say "slurm already running (scripts/slurm.sh status)"
    else
        say "starting the Slurm test cluster (scripts/slurm.sh start) ..."
        bash scripts/slurm.sh start || die "scripts/slurm.sh start failed (see docs/platforms/slurm.md)"
    fi
    eval "$(bash scripts/slurm.sh env)"
}

# Local development settings: DEBUG is off unless asked for (jobtriage/settings.py), so both README
# commands ask for it here; production sets DJANGO_SECRET_KEY and leaves DJANGO_DEBUG unset. They are
# written with the servers' URLs to .env (or $JOBTRIAGE_ENV_FILE), which the settings read, so that any
# `manage.py` typed in another shell reaches the same servers.
local_settings() {
    export DJANGO_DEBUG="${DJANGO_DEBUG:-1}"
    local file="${JOBTRIAGE_ENV_FILE:-$REPO/.env}"
    [[ -n "$file" ]] || return 0
    {
        echo "# Written by scripts/test.sh or scripts/dev.sh: the local servers and development settings."
        echo "# The environment wins over this file (jobtriage/settings.py)."
        echo "DATABASE_URL=$DATABASE_URL"
        echo "CELERY_BROKER_URL=$CELERY_BROKER_URL"
        echo "ELASTICSEARCH_URL=$ELASTICSEARCH_URL"
        echo "DJANGO_DEBUG=$DJANGO_DEBUG"
    } >"$file.tmp" && mv "$file.tmp" "$file"
}

# ---------------------------------------------------------------- main
# When sourced (scripts/dev.sh does this), only define the functions.
if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then return 0; fi

T0=$SECONDS
ensure_venv requirements-dev.txt requirements-frameworks.txt requirements-train.txt
ensure_chromium
ensure_servers
ensure_slurm
local_settings
say "ready in $((SECONDS - T0))s: python -m pytest $*"
exec python -m pytest "$@"
