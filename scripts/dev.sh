#!/usr/bin/env bash
# Run the product locally:   scripts/dev.sh
#
# Sets up .venv and the local servers exactly like scripts/test.sh, migrates the database, creates the
# Elasticsearch index, creates the demo superuser demo/demo, starts a Celery worker in the background
# (log .servers/celery-worker.log), ingests the demo data set (demo/manifest.jsonl) through the real
# pipeline, then runs the Django development server in the foreground on http://127.0.0.1:8000/.
# Ctrl-C stops the web server and the worker; the database servers keep running
# (scripts/servers.sh stop to stop them).
#
# Options (environment): DEV_ADDR (127.0.0.1:8000), DEV_SKIP_INGEST=1 (do not ingest the demo data).
set -euo pipefail

# shellcheck source=scripts/test.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/test.sh"   # defines REPO, ensure_venv, ensure_servers; cd's to REPO
say() { printf '[dev] %s\n' "$*" >&2; }
die() { printf '[dev] ERROR: %s\n' "$*" >&2; exit 1; }

DEV_ADDR="${DEV_ADDR:-127.0.0.1:8000}"
RUN_DIR="$REPO/.servers"
WORKER_LOG="$RUN_DIR/celery-worker.log"
WORKER_PID="$RUN_DIR/celery-worker.pid"
WORKER=""

is_our_worker() { # pid -> true if it is a celery worker of this project
    [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null \
        && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q 'celery.*-A jobtriage worker'
}

stop_worker() { # pid
    local pid="$1" i
    is_our_worker "$pid" || return 0
    say "stopping celery worker (pid $pid) ..."
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
        say "worker still alive after 20s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
}

cleanup() {
    trap - EXIT INT TERM
    if [[ -n "$WORKER" ]]; then stop_worker "$WORKER"; rm -f "$WORKER_PID"; fi
    say "stopped (database servers still running; scripts/servers.sh stop stops them)"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

T0=$SECONDS
ensure_venv
ensure_servers
local_settings
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-jobtriage.settings}"

say "migrate ..."
python manage.py migrate --noinput
say "ensure_search_index ..."
python manage.py ensure_search_index

static_root="$(python manage.py shell -v 0 -c \
    "from django.conf import settings; print(getattr(settings, 'STATIC_ROOT', None) or '')" 2>/dev/null | tail -n1 || true)"
if [[ -n "$static_root" ]]; then
    say "collectstatic -> $static_root ..."
    python manage.py collectstatic --noinput -v 0
fi

say "demo superuser ..."
python manage.py shell -v 0 -c "
from django.contrib.auth import get_user_model
User = get_user_model()
if User.objects.filter(username='demo').exists():
    print('[dev] superuser demo already exists')
else:
    User.objects.create_superuser('demo', 'demo@example.com', 'demo')
    print('[dev] created superuser demo / demo')
"

# A worker left over from an earlier run that was killed hard would consume tasks with old code.
mkdir -p "$RUN_DIR"
stop_worker "$(tr -dc '0-9' 2>/dev/null <"$WORKER_PID" || true)"
say "starting celery worker (log $WORKER_LOG) ..."
: >"$WORKER_LOG"
celery -A jobtriage worker -l info --concurrency 2 >>"$WORKER_LOG" 2>&1 &
WORKER=$!
echo "$WORKER" >"$WORKER_PID"
for ((i = 0; ; i++)); do
    grep -q ' ready\.' "$WORKER_LOG" 2>/dev/null && break
    if ! kill -0 "$WORKER" 2>/dev/null; then
        tail -n 40 "$WORKER_LOG" >&2; WORKER=""; die "celery worker exited during startup (log above)"
    fi
    if ((i >= 120)); then tail -n 40 "$WORKER_LOG" >&2; die "celery worker not ready after 60s (log above)"; fi
    sleep 0.5
done
say "celery worker ready (pid $WORKER)"

if [[ "${DEV_SKIP_INGEST:-0}" != 1 ]]; then
    say "ingesting the demo data set (demo/) through the pipeline ..."
    python manage.py ingest_dir demo --shift-to-now --wait   # as if the demo's six weeks had just ended
    say "demo teams, members, a manager and triage decisions (demo/judgments.json) ..."
    python manage.py demo_triage
fi

cat >&2 <<EOF

[dev] ready in $((SECONDS - T0))s
[dev]   open   http://${DEV_ADDR}/
[dev]   login  demo / demo
[dev]   worker log  $WORKER_LOG
[dev] Ctrl-C to stop.

EOF
# Not exec: the EXIT trap must stop the worker when runserver ends.
python manage.py runserver "$DEV_ADDR"
