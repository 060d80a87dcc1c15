#!/usr/bin/env python3
"""Slurm EpilogSlurmctld hook: send each failed job and the end of its log to jobtriage's API.

Install on the slurmctld host (Python 3.8+, standard library only):
    cp jobtriage_epilog_slurmctld.py /etc/slurm/ && chmod 755 /etc/slurm/jobtriage_epilog_slurmctld.py
    python manage.py create_token slurm-epilog --platform slurm     # on the jobtriage host
    install -m 600 -o slurm /dev/stdin /etc/slurm/jobtriage.token <<< "<the token>"
    # slurm.conf:  EpilogSlurmctld=/etc/slurm/jobtriage_epilog_slurmctld.py   then: scontrol reconfigure
and set JOBTRIAGE_URL below (or write it in /etc/slurm/jobtriage.url). Slurm runs the epilog with its own
environment (SLURM_JOB_ID, SLURM_JOB_EXIT_CODE2, ...; no PATH), so nothing else is read from the shell.

Jobs that ended with exit 0:0 and state COMPLETED are not sent (the cron + sacct route of
docs/platforms/slurm.md records successes too), nor runs that end in a requeue (the last run is).
While the epilog runs, scontrol still says COMPLETING (seen on a real 22.05.8 for every job), so the
final state (FAILED, TIMEOUT, CANCELLED by <uid>...) is read from `sacct -j ID -X` when scontrol does
not give it; without sacct, scontrol's Reason and the exit code decide.
The hook never fails the epilog: errors go to stderr (slurmctld's log) and it exits 0. The log files
must be readable from the controller (shared FS).
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime

JOBTRIAGE_URL = "http://jobtriage.example.org:8000"   # or write the URL in URL_FILE
URL_FILE = "/etc/slurm/jobtriage.url"
TOKEN_FILE = os.environ.get("JOBTRIAGE_TOKEN_FILE", "/etc/slurm/jobtriage.token")
SCONTROL = os.environ.get("JOBTRIAGE_SCONTROL", "/usr/bin/scontrol")
SACCT = os.environ.get("JOBTRIAGE_SACCT", "/usr/bin/sacct")
SACCT_WAIT_SECONDS = 10             # the accounting record of the job's end arrives a moment later
TAIL_BYTES = 2 * 1024 * 1024        # the failure is near the end; the API accepts far more
TIMEOUT_SECONDS = 10
STATUSES = {"COMPLETED": "completed", "FAILED": "failed", "OUT_OF_MEMORY": "out_of_memory", "TIMEOUT": "timeout",
            "DEADLINE": "timeout", "NODE_FAIL": "node_fail", "BOOT_FAIL": "node_fail", "CANCELLED": "cancelled",
            "PREEMPTED": "preempted"}
# The run ended but the job goes on (a requeue): the run that ends the job is sent.
REQUEUE_STATES = {"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "PENDING"}


def scontrol_fields(job_id):
    """`scontrol show job -o ID` as a dict (empty if scontrol is missing or the job is gone)."""
    try:
        out = subprocess.run([SCONTROL, "show", "job", "-o", job_id], capture_output=True, text=True,
                             timeout=TIMEOUT_SECONDS).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return parse_scontrol(out)


def parse_scontrol(line):
    """'JobId=1 JobState=FAILED ...' -> {"JobId": "1", "JobState": "FAILED", ...}"""
    return dict(re.findall(r"(?:^|\s)(\w+)=(\S*)", line))


def sacct_state(job_id, wait=SACCT_WAIT_SECONDS):
    """(STATE, 'by' uid or '', 'R:S' exit code) of the job's last run from `sacct -j ID -X`, once
    accounting knows how it ended; None if sacct is missing or does not know in time."""
    deadline = time.monotonic() + wait
    while True:
        try:
            out = subprocess.run([SACCT, "-j", job_id, "-X", "-n", "-P", "--format=State,ExitCode"],
                                 capture_output=True, text=True, timeout=TIMEOUT_SECONDS).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        lines = [line for line in out.splitlines() if line.strip()]
        if lines:
            state_text, _, exit_code = lines[-1].partition("|")
            words = state_text.split()
            state = words[0].rstrip("+") if words else ""
            if state in STATUSES or state in REQUEUE_STATES - {"PENDING"}:
                return state, (words[2] if len(words) > 2 and words[1] == "by" else ""), exit_code
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.5)


def final_state(job_id, fields, exit_code, signal, ask_sacct=sacct_state):
    """(STATE, cancelled-by uid) of the job that just ended."""
    state = (fields.get("JobState") or "").upper()
    if state in STATUSES or state in REQUEUE_STATES:
        return state, ""
    found = ask_sacct(job_id)
    if found:
        return found[0], found[1]
    # No accounting: scontrol's Reason names time limits; otherwise the exit code decides.
    if fields.get("Reason") == "TimeLimit":
        return "TIMEOUT", ""
    return ("COMPLETED" if (exit_code, signal) in (("0", "0"), ("0", "")) else "FAILED"), ""


def local_time(text):
    """scontrol prints the controller's local time: send it with its offset."""
    if not text or text in ("Unknown", "None", "N/A"):
        return None
    try:
        return datetime.fromisoformat(text).astimezone().isoformat()
    except ValueError:
        return None


def expand_output_path(pattern, env):
    """SLURM_JOB_STDOUT/STDERR hold sbatch's pattern as given (`slurm-%j.out`, seen on 22.05.8):
    the file names scontrol prints are expanded, these are not. Relative names are in the work dir."""
    if not pattern:
        return None
    values = {"j": env.get("SLURM_JOB_ID", ""), "J": env.get("SLURM_JOB_ID", ""),
              "A": env.get("SLURM_ARRAY_JOB_ID") or env.get("SLURM_JOB_ID", ""),
              "a": env.get("SLURM_ARRAY_TASK_ID", ""), "x": env.get("SLURM_JOB_NAME", ""),
              "u": env.get("SLURM_JOB_USER", ""), "N": env.get("SLURM_JOB_NODELIST", "").split(",")[0], "%": "%"}
    path = re.sub(r"%(\d*)([jJAaxuN%])", lambda m: values[m.group(2)].zfill(int(m.group(1) or 0)), pattern)
    return os.path.join(env.get("SLURM_JOB_WORK_DIR", "/"), path)


def gpus(fields):
    for key in ("AllocTRES", "TRES", "ReqTRES"):
        found = re.search(r"gres/gpu=(\d+)", fields.get(key, ""))
        if found:
            return int(found.group(1))
        typed = re.findall(r"gres/gpu:[^=,]+=(\d+)", fields.get(key, ""))
        if typed:
            return sum(map(int, typed))
    return None


def log_tail(paths):
    """The end of the job's stdout then stderr, `==> name <==` between them (as ingest_slurm joins them)."""
    paths = [p for i, p in enumerate(paths) if p and p not in paths[:i] and os.path.isfile(p)]
    parts = []
    for path in paths:
        with open(path, "rb") as handle:
            handle.seek(max(os.path.getsize(path) - TAIL_BYTES, 0))
            text = handle.read().decode("utf-8", errors="replace")
        parts.append((f"==> {os.path.basename(path)} <==\n" if len(paths) > 1 else "") + text)
    return "\n".join(parts) if parts else None


def build_job(env, fields, ask_sacct=sacct_state):
    exit_code, _, signal = env.get("SLURM_JOB_EXIT_CODE2", "0:0").partition(":")
    state, by = final_state(env["SLURM_JOB_ID"], fields, exit_code, signal, ask_sacct)
    if state == "COMPLETED" or state in REQUEUE_STATES:
        return None
    job_id = env["SLURM_JOB_ID"]
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        job_id = f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"   # as sacct's JobID: one job
    killed = signal not in ("", "0")
    command = fields.get("Command")
    job = {
        "platform": "slurm", "external_id": job_id, "status": STATUSES[state], "name": env.get("SLURM_JOB_NAME"),
        "submitter": env.get("SLURM_JOB_USER"), "team": env.get("SLURM_JOB_ACCOUNT"),
        # A signalled run has no exit code (sacct's '0:9' is not an exit 0).
        "exit_code": int(exit_code) if exit_code.isdigit() and not killed else None,
        "signal": signal if killed and signal.isdigit() and int(signal) <= 64 else None,
        "submitted_at": local_time(fields.get("SubmitTime")), "started_at": local_time(fields.get("StartTime")),
        "ended_at": local_time(fields.get("EndTime")), "gpus": gpus(fields),
        "command": command if command not in ("(null)", "") else None,
        "partition": env.get("SLURM_JOB_PARTITION"), "nodes": env.get("SLURM_JOB_NODELIST"),
        "slurm_state": state, "slurm_job_id_raw": env["SLURM_JOB_ID"],
    }
    if by:   # as ingest_slurm stores it: a user name when it is known
        job["cancelled_by_uid"] = by
        job["cancelled_by"] = ("root" if by == "0" else
                               env.get("SLURM_JOB_USER") if by == env.get("SLURM_JOB_UID") else by)
    restarts = env.get("SLURM_JOB_RESTART_COUNT") or fields.get("Restarts") or "0"
    if restarts.isdigit() and int(restarts) > 0:
        job["requeues_without_times"] = int(restarts)   # earlier runs: counted, their times unknown here
    # scontrol's StdOut/StdErr are expanded file names; the environment's are sbatch's patterns.
    stdout = fields.get("StdOut") or expand_output_path(env.get("SLURM_JOB_STDOUT"), env)
    stderr = fields.get("StdErr") or expand_output_path(env.get("SLURM_JOB_STDERR"), env)
    job["log_text"] = log_tail([stdout, stderr])
    return {k: v for k, v in job.items() if v not in (None, "")}


def post(job, url, token):
    request = urllib.request.Request(url.rstrip("/") + "/api/v1/jobs", data=json.dumps(job).encode(), method="POST",
                                     headers={"Authorization": f"Token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
        return json.loads(response.read())


def main(env):
    if not env.get("SLURM_JOB_ID"):
        print("jobtriage epilog: SLURM_JOB_ID is not set (run me as EpilogSlurmctld)", file=sys.stderr)
        return 0
    try:
        job = build_job(env, scontrol_fields(env["SLURM_JOB_ID"]))
        if job is None:
            return 0
        url = env.get("JOBTRIAGE_URL") or (open(URL_FILE).read().strip() if os.path.isfile(URL_FILE) else JOBTRIAGE_URL)
        answer = post(job, url, open(TOKEN_FILE).read().strip())
        print(f"jobtriage epilog: job {job['external_id']} sent: {answer.get('url', '')}", file=sys.stderr)
    except urllib.error.HTTPError as exc:
        print(f"jobtriage epilog: job {env['SLURM_JOB_ID']} refused ({exc.code}): {exc.read()[:500]!r}", file=sys.stderr)
    except Exception as exc:  # never fail the epilog because jobtriage is unreachable
        print(f"jobtriage epilog: job {env['SLURM_JOB_ID']} not sent: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(dict(os.environ)))
