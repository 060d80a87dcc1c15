"""`ingest_slurm`, `ingest_k8s` and `ingest_philly` against the real PostgreSQL (and, with --wait,
the real Celery worker and Elasticsearch)."""
import io
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from jobs_ingest.models import Failure, Job

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "adapters"
SLURM, K8S, PHILLY = FIXTURES / "slurm", FIXTURES / "k8s", FIXTURES / "philly"


def run(command, *args, expect_error=False):
    out, err = io.StringIO(), io.StringIO()
    if expect_error:
        with pytest.raises(CommandError):
            call_command(command, *args, stdout=out, stderr=err)
    else:
        call_command(command, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_slurm_parsable2_with_logs_is_analysed_and_indexed(celery_worker):
    out, err = run("ingest_slurm", "--sacct", str(SLURM / "sacct-parsable2.txt"), "--logs", str(SLURM / "logs"),
                   "--wait", "--timeout", "90", expect_error=True)   # two bad rows make the exit non-zero

    assert ("8 jobs received (8 new, 0 updated), 2 rejected, 2 skipped (not finished); "
            "8 analysed and indexed") in out
    assert "ingest_slurm: receiving" in err
    assert "ingest_slurm: rejected sacct line 14: has 9 fields, the header has 15" in err
    assert "ingest_slurm: rejected sacct line 15 (job 812417): time 'yesterday'" in err
    categories = dict(Failure.objects.filter(job__platform="slurm").values_list("job__external_id", "category"))
    assert categories["812345"] == "gpu_oom"      # the traceback of the .err file, joined after the .out
    assert categories["812346"] == "cpu_oom"      # slurmstepd oom_kill event
    assert categories["812415"] == "cpu_oom"      # ExitCode 0:9 and a log that just stops
    requeued = Job.objects.get(platform="slurm", external_id="812345")
    assert requeued.attempts.count() == 2 and requeued.status == "failed" and requeued.team == "nlp"
    assert requeued.failure.gpu_seconds == 8 * (1838 + 420)   # the requeued run counts too
    stored = (Path(settings.JOBTRIAGE_LOG_DIR) / requeued.log_path).read_bytes()
    assert stored.startswith(b"==> slurm-812345.out <==\n") and b"==> bert-pretrain-812345.err <==\n" in stored
    assert Job.objects.get(external_id="812400_4").ingest_state == "analysed"   # completed: no failure
    assert not Failure.objects.filter(job__external_id="812400_4").exists()
    assert Job.objects.get(external_id="812410").extra["cancelled_by"] == "1042"


def test_slurm_json_from_standard_input_twice_is_idempotent(transactional_db, log_dir, monkeypatch):
    data = (SLURM / "sacct-23.11.json").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out, err = run("ingest_slurm", "--sacct", "-", "--logs", str(SLURM / "logs"), expect_error=True)
    assert "3 jobs received (3 new, 0 updated), 1 rejected, 1 skipped" in out
    assert "rejected jobs[4]: has no job_id" in err

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out, _ = run("ingest_slurm", "--sacct", "-", "--format", "json", "--logs", str(SLURM / "logs"),
                 expect_error=True)
    assert "(0 new, 3 updated)" in out
    assert Job.objects.filter(platform="slurm").count() == 3
    task = Job.objects.get(external_id="913000_2")
    assert task.log_bytes > 0 and task.gpus == 1 and task.command == "sbatch --array=0-7 sweep.sbatch"


def test_slurm_bad_input_is_refused_and_changes_nothing(transactional_db, log_dir, tmp_path):
    run("ingest_slurm", "--sacct", str(SLURM / "sacct-21.08.json"))
    before = list(Job.objects.order_by("pk").values_list("external_id", "status", "updated_at"))
    (tmp_path / "broken.json").write_text('{"jobs": [')
    _, err = run("ingest_slurm", "--sacct", str(tmp_path / "broken.json"), expect_error=True)
    assert "rejected sacct --json: invalid JSON" in err
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("ingest_slurm", "--sacct", str(SLURM / "sacct-21.08.json"), "--logs", str(tmp_path / "nope"))
    assert list(Job.objects.order_by("pk").values_list("external_id", "status", "updated_at")) == before


def test_k8s_jobs_pods_and_pytorchjob(transactional_db, log_dir):
    out, err = run("ingest_k8s", "--objects", str(K8S / "jobs-pods.json"), str(K8S / "pytorchjob.json"),
                   str(K8S / "pods-only.json"), "--logs", str(K8S / "logs"), expect_error=True)

    assert "7 jobs received (7 new, 0 updated), 1 rejected, 1 skipped" in out
    assert "rejected document 1 item 10: is not a Kubernetes object" in err
    oom = Job.objects.get(platform="k8s", external_id="vision/resnet-train/0b7e5d2c")
    assert oom.status == "out_of_memory" and oom.exit_code == 137 and oom.attempts.count() == 2
    stored = (Path(settings.JOBTRIAGE_LOG_DIR) / oom.log_path).read_bytes()
    assert stored.index(b"resnet-train-5g8hv.previous.log") < stored.index(b"==> resnet-train-5g8hv.log <==")
    pt = Job.objects.get(external_id="llm/llama-pt/9a8b7c6d")
    assert pt.gpus == 32 and pt.extra["failed_pod"] == "llama-pt-worker-1" and pt.log_bytes > 0
    assert Job.objects.get(external_id__startswith="vision/eval-nightly/").status == "succeeded"


def test_philly_trace_without_logs_gets_failures_with_gpu_cost(celery_worker, monkeypatch):
    from jobs_ingest.management import ingest_command
    monkeypatch.setattr(ingest_command, "WAIT_SLICE", 4)   # --wait counts in slices (6 jobs: two)
    out, err = run("ingest_philly", str(PHILLY / "cluster_job_log"), "--wait", "--timeout", "90",
                   expect_error=True)

    assert "6 jobs received (6 new, 0 updated), 2 rejected; 6 analysed and indexed" in out
    assert "rejected job 6 (application_1506638472019_900004): status 'Running'" in err
    failed = Failure.objects.get(job__external_id="application_1506638472019_900001")
    assert failed.gpu_seconds == 8 * 20 * 60 + 8 * 10 * 60 and failed.job.team == "b436b2"
    assert failed.job.attempts.count() == 2
    passed = Job.objects.get(external_id="application_1506638472019_14199")
    assert passed.status == "passed" and not Failure.objects.filter(job=passed).exists()
    assert sum(a.gpu_seconds for a in passed.attempts.all()) == 8 * (74 + 193182)
    assert Job.objects.get(external_id="application_1506638472019_15647").status == "killed"


def test_philly_limit_and_a_truncated_file_keep_what_was_read(transactional_db, log_dir, tmp_path):
    out, _ = run("ingest_philly", str(PHILLY / "cluster_job_log"), "--limit", "3")
    assert "3 jobs received (3 new, 0 updated), 0 rejected" in out

    data = (PHILLY / "cluster_job_log").read_bytes()
    cut = data.index(b'"application_1506638472019_900002"')
    (tmp_path / "cut").write_bytes(data[:cut])
    out, err = run("ingest_philly", str(tmp_path / "cut"), expect_error=True)
    assert "stopped reading: the file ends inside job 4" in err
    assert "4 jobs received (1 new, 3 updated)" in out
    assert Job.objects.filter(platform="philly").count() == 4


EPILOG = Path(__file__).resolve().parent.parent.parent / "docs" / "platforms" / "jobtriage_epilog_slurmctld.py"


def run_epilog(env):
    import subprocess
    return subprocess.run([sys.executable, str(EPILOG)], env=env, capture_output=True, text=True, timeout=60)


def test_slurm_epilog_hook_posts_a_failed_array_task_to_the_api(live_server, api_token, log_dir, tmp_path):
    (tmp_path / "token").write_text(api_token + "\n")
    env = {"SLURM_JOB_ID": "812403", "SLURM_ARRAY_JOB_ID": "812400", "SLURM_ARRAY_TASK_ID": "3",
           "SLURM_JOB_EXIT_CODE2": "1:0", "SLURM_JOB_USER": "carol", "SLURM_JOB_ACCOUNT": "vision",
           "SLURM_JOB_NAME": "sweep-lr", "SLURM_JOB_PARTITION": "a100", "SLURM_JOB_NODELIST": "gpu-a100-07",
           "SLURM_JOB_STDOUT": str(SLURM / "logs" / "slurm-812345.out"),
           "SLURM_JOB_STDERR": str(SLURM / "logs" / "bert-pretrain-812345.err"),
           "JOBTRIAGE_URL": live_server.url, "JOBTRIAGE_TOKEN_FILE": str(tmp_path / "token"),
           "JOBTRIAGE_SCONTROL": str(tmp_path / "no-scontrol-here")}
    result = run_epilog(env)

    assert result.returncode == 0 and "job 812400_3 sent" in result.stderr
    job = Job.objects.get(platform="slurm", external_id="812400_3")   # the id ingest_slurm uses too
    assert (job.status, job.team, job.submitter, job.exit_code) == ("failed", "vision", "carol", 1)
    assert job.extra["slurm_job_id_raw"] == "812403"
    stored = (Path(settings.JOBTRIAGE_LOG_DIR) / job.log_path).read_bytes()
    assert b"==> bert-pretrain-812345.err <==\n" in stored and b"torch.OutOfMemoryError" in stored

    result = run_epilog({**env, "SLURM_JOB_ID": "812404", "SLURM_ARRAY_TASK_ID": "4", "SLURM_JOB_EXIT_CODE2": "0:0"})
    assert result.returncode == 0 and not Job.objects.filter(external_id="812400_4").exists()  # success: not sent

    result = run_epilog({**env, "JOBTRIAGE_URL": "http://127.0.0.1:9"})   # nothing listens: the epilog still exits 0
    assert result.returncode == 0 and "not sent" in result.stderr

