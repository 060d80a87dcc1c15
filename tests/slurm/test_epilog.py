"""The EpilogSlurmctld hook (docs/platforms/jobtriage_epilog_slurmctld.py) run for real: slurm.conf names it
(through the small wrapper scripts/slurm.sh writes, as an operator installs it), slurmctld runs it as each
job ends, and it posts to a live server of the product with a real token. What is stored is compared with
what sacct says about the same jobs; then the cron route (ingest_slurm) adds what the hook does not send."""
import io
import os
import pwd
import shutil
import sys
import time
from datetime import timezone
from pathlib import Path

import pytest
from django.core.management import call_command

from jobs_ingest.core.nodes import expand_nodelist
from jobs_ingest.models import Job
from tests.integration.conftest import wait_for
from tests.slurm import cluster

HOOK = Path(__file__).resolve().parents[2] / "docs" / "platforms" / "jobtriage_epilog_slurmctld.py"
# Every way a job ends, and what the hook sends for it (None: nothing, the job did not fail).
SENT = {"train-fail": "failed", "exit3": "failed", "success": None, "killed": "failed", "memory": "failed",
        "steps": "failed", "requeue": "failed", "timeout": "timeout", "cancel-running": "cancelled",
        "cancel-pending": None, "wrap-pipe": "failed"}


@pytest.fixture
def epilog_target(slurm_env, live_server, api_token):
    """Point the hook at this test's live server with a real token; switched off afterwards."""
    folder = slurm_env["folder"] / "epilog"
    hook, url, token = folder / HOOK.name, folder / "url", folder / "token"
    shutil.copy(HOOK, hook)   # installed as on a controller: this checkout's hook
    token.write_text(api_token + "\n")
    url.write_text(live_server.url + "\n")
    for path, mode in ((hook, 0o755), (url, 0o600), (token, 0o600)):
        shutil.chown(path, "slurm", "slurm")
        path.chmod(mode)
    try:
        yield live_server.url
    finally:
        for path in (url, token, hook):
            path.unlink(missing_ok=True)


def utc(text):
    from jobs_ingest.jobspec import parse_time
    return parse_time(text).astimezone(timezone.utc)


def test_epilog_hook_posts_each_failed_job_as_it_ends(epilog_target, slurm_env, log_dir, monkeypatch):
    jobs = cluster.JobSet("epilog", slurm_env["folder"] / "jobs" / f"epilog-{time.strftime('%H%M%S')}-{os.getpid()}",
                          slurm_env["user"]).submit()
    jobs.wait()
    failed = {k: jobs.id_of(k) for k, status in SENT.items() if status}
    failed["array"] = jobs.id_of("array", 1)
    wait_for(lambda: Job.objects.filter(platform="slurm", external_id__in=failed.values()).count() == len(failed),
             timeout=60, what=f"the hook's posts for {sorted(failed.values())} "
                              f"(hook log: {slurm_env['folder'] / 'log' / 'epilog.log'})")
    stored = {j.external_id: j for j in Job.objects.filter(platform="slurm", external_id__in=failed.values())}
    # What did not fail is not sent: the success, the array's good tasks, the job cancelled while pending.
    quiet = [jobs.id_of("success"), jobs.id_of("cancel-pending"), jobs.id_of("array", 0), jobs.id_of("array", 2)]
    assert not Job.objects.filter(platform="slurm", external_id__in=quiet).exists()

    # Every stored job against sacct's own record of its last run.
    sacct = {r["JobID"]: r for r in cluster.sacct_rows(jobs.ids, duplicates=False)}
    for kind, job_id in failed.items():
        job, row = stored[job_id], sacct[job_id]
        state = row["State"].split()[0]
        assert job.extra["slurm_state"] == state, kind
        assert job.status == (SENT.get(kind) or "failed"), kind
        code, _, signal = row["ExitCode"].partition(":")
        if signal != "0":
            assert (job.exit_code, job.signal) == (None, signal), kind   # signalled: no exit code
        else:
            assert (job.exit_code, job.signal) == (int(code), ""), kind
        assert (job.started_at, job.ended_at) == (utc(row["Start"]), utc(row["End"])), kind
        assert (job.submitter, job.team, job.nodes) == (row["User"], row["Account"], expand_nodelist(row["NodeList"])), kind

    assert stored[failed["train-fail"]].gpus == 1                               # the fake tesla
    train_log = read_log(stored[failed["train-fail"]])
    assert "epoch 0: loading the dataset" in train_log                          # StdOut, then StdErr
    assert train_log.rstrip().endswith("ValueError: expected input of shape (3, 224, 224), got (1, 224, 224)")
    assert "Exceeded job memory limit" in read_log(stored[failed["memory"]])
    assert "No such file or directory: eval.jsonl" in read_log(stored[failed["steps"]])
    assert stored[failed["timeout"]].extra["slurm_state"] == "TIMEOUT"        # scontrol said COMPLETING
    cancelled = stored[failed["cancel-running"]]
    assert (cancelled.extra["cancelled_by"], cancelled.extra["cancelled_by_uid"]) == (
        slurm_env["user"], str(pwd.getpwnam(slurm_env["user"]).pw_uid))   # cancelled by its own user
    requeued = stored[failed["requeue"]]
    assert requeued.extra["requeues_without_times"] == 1 and requeued.attempts.count() == 1
    assert failed["array"] == f"{jobs.submitted['array'].job_id}_1"           # sacct's JobID of the task
    assert stored[failed["wrap-pipe"]].command == ""                            # scontrol: Command=(null)

    # The cron route later: sacct -D adds the requeue's first run and the jobs the hook did not send,
    # and changes nothing the hook already stored about how each run ended.
    before = {j: (stored[j].status, stored[j].exit_code, stored[j].signal) for j in stored}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(cluster.sacct_parsable2(jobs.ids).encode())))
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest_slurm", "--sacct", "-", "--logs", str(jobs.folder), stdout=out, stderr=err)
    assert "13 jobs received (3 new, 10 updated), 0 rejected, 1 skipped" in out.getvalue(), err.getvalue()
    after = {j.external_id: j for j in Job.objects.filter(platform="slurm", external_id__in=failed.values())}
    assert {j: (after[j].status, after[j].exit_code, after[j].signal) for j in after} == before
    assert [a.status for a in after[failed["requeue"]].attempts.all()] == ["requeued", "failed"]
    assert "requeues_without_times" not in after[failed["requeue"]].extra
    assert Job.objects.get(platform="slurm", external_id=jobs.id_of("success")).status == "completed"


def read_log(job):
    from django.conf import settings
    return (settings.JOBTRIAGE_LOG_DIR / job.log_path).read_text() if job.log_path else ""
