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
docs/platforms/slurm.md records successes too). The hook never fails the epilog: errors go to stderr
(slurmctld's log) and it exits 0. The log files must be readable from the controller (shared FS).
"""
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import datetime

JOBTRIAGE_URL = "http://jobtriage.example.org:8000"   # or write the URL in URL_FILE
URL_FILE = "/etc/slurm/jobtriage.url"
TOKEN_FILE = os.environ.get("JOBTRIAGE_TOKEN_FILE", "/etc/slurm/jobtriage.token")
SCONTROL = os.environ.get("JOBTRIAGE_SCONTROL", "/usr/bin/scontrol")
TAIL_BYTES = 2 * 1024 * 1024        # the failure is near the end; the API accepts far more
TIMEOUT_SECONDS = 10
STATUSES = {"COMPLETED": "completed", "FAILED": "failed", "OUT_OF_MEMORY": "out_of_memory", "TIMEOUT": "timeout",
            "DEADLINE": "timeout", "NODE_FAIL": "node_fail", "BOOT_FAIL": "node_fail", "CANCELLED": "cancelled",
            "PREEMPTED": "preempted"}


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


def local_time(text):
    """scontrol prints the controller's local time: send it with its offset."""
    if not text or text in ("Unknown", "None", "N/A"):
        return None
    try:
        return datetime.fromisoformat(text).astimezone().isoformat()
    except ValueError:
        return None


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


def build_job(env, fields):
    exit_code, _, signal = env.get("SLURM_JOB_EXIT_CODE2", "0:0").partition(":")
    state = (fields.get("JobState") or "").upper()
    if state not in STATUSES:  # still COMPLETING, or scontrol unavailable: judge by the exit code
        state = "COMPLETED" if (exit_code, signal) in (("0", "0"), ("0", "")) else "FAILED"
    if state == "COMPLETED":
        return None
    job_id = env["SLURM_JOB_ID"]
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        job_id = f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"   # as sacct's JobID: one job
    job = {
        "platform": "slurm", "external_id": job_id, "status": STATUSES[state], "name": env.get("SLURM_JOB_NAME"),
        "submitter": env.get("SLURM_JOB_USER"), "team": env.get("SLURM_JOB_ACCOUNT"),
        "exit_code": int(exit_code) if exit_code.isdigit() else None,
        "signal": signal if signal not in ("", "0") else None,
        "submitted_at": local_time(fields.get("SubmitTime")), "started_at": local_time(fields.get("StartTime")),
        "ended_at": local_time(fields.get("EndTime")), "gpus": gpus(fields), "command": fields.get("Command"),
        "partition": env.get("SLURM_JOB_PARTITION"), "nodes": env.get("SLURM_JOB_NODELIST"),
        "slurm_state": state, "slurm_job_id_raw": env["SLURM_JOB_ID"],
    }
    # Slurm 22.05+ passes the output paths; older versions: scontrol's StdOut/StdErr.
    stdout = env.get("SLURM_JOB_STDOUT") or fields.get("StdOut")
    stderr = env.get("SLURM_JOB_STDERR") or fields.get("StdErr")
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
