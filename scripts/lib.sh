# Shared by scripts/servers.sh and scripts/slurm.sh (sourced, never run): messages, logs and processes.
# The caller sets LOG_TAG (the prefix of its messages), T0=$SECONDS and STOP_TIMEOUT before using them.
log() { printf '[%s %s +%3ss] %s\n' "$LOG_TAG" "$(date +%H:%M:%S)" "$((SECONDS - T0))" "$*" >&2; }
die() { printf '\n[%s] ERROR: %s\n' "$LOG_TAG" "$*" >&2; exit 1; }
show_log() { # file [lines]
    if [[ -f "$1" ]]; then
        printf -- '----- last %s lines of %s -----\n' "${2:-40}" "$1" >&2
        tail -n "${2:-40}" "$1" >&2 || true
        printf -- '----- end of %s -----\n' "$1" >&2
    else
        printf '(no log file at %s)\n' "$1" >&2
    fi
}
pid_alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }
read_pid() { [[ -s "$1" ]] && tr -dc '0-9' <"$1" || true; }
wait_gone() { # pid name: wait up to STOP_TIMEOUT seconds for a stopped process, then SIGKILL it
    local deadline=$((SECONDS + STOP_TIMEOUT))
    while pid_alive "$1"; do
        if ((SECONDS >= deadline)); then
            log "$2: still alive after ${STOP_TIMEOUT}s, sending SIGKILL to $1"
            kill -KILL "$1" 2>/dev/null || true
            sleep 1
            return
        fi
        sleep 0.2
    done
}
