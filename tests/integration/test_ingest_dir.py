"""`manage.py ingest_dir` with a real worker, PostgreSQL and Elasticsearch."""
import io
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from jobs_ingest.failures import resolve_line_numbers
from jobs_ingest.models import Failure, Job

from .conftest import wait_for

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir"


def ingest(path, *args):
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest_dir", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_folder_with_manifest_is_ingested_analysed_and_indexed(celery_worker):
    out, err = ingest(FIXTURE, "--wait", "--timeout", "60")

    assert "5 jobs received (5 new, 0 updated), 0 rejected; 5 analysed and indexed" in out
    assert "ingest_dir: receiving" in err  # progress was shown
    categories = dict(Failure.objects.values_list("job__external_id", "category"))
    assert categories == {"900101": "gpu_oom", "900102": "gpu_oom", "resnet-7f9c2": "path_not_found",
                          "resnet-oom-1": "cpu_oom"}
    first = Job.objects.get(external_id="900101")
    assert first.attempts.count() == 2
    assert first.failure.gpu_seconds == 8 * (30 + 7) * 60  # retries count
    assert Failure.objects.get(job__external_id="resnet-7f9c2").stage in ("data_preprocessing", "initialization")
    assert Job.objects.get(external_id="resnet-ok-2").ingest_state == "analysed"
    assert Failure.objects.get(job__external_id="900101").signature.teams == ["nlp"]


def test_ingesting_the_same_folder_twice_changes_nothing(celery_worker):
    ingest(FIXTURE, "--wait", "--timeout", "60")
    before = sorted(Failure.objects.values_list("job__external_id", "category", "signature__fingerprint"))
    out, _ = ingest(FIXTURE, "--wait", "--timeout", "60")

    assert "(0 new, 5 updated)" in out
    assert Job.objects.count() == 5
    assert sorted(Failure.objects.values_list("job__external_id", "category", "signature__fingerprint")) == before


def test_a_recorded_workload_is_moved_to_now_keeping_its_hours_and_costs(celery_worker):
    from datetime import timedelta

    from django.utils import timezone

    out, _ = ingest(FIXTURE, "--shift-to-now", "--wait", "--timeout", "60")

    assert "moved every job's times" in out and "5 jobs received (5 new" in out
    newest = Job.objects.order_by("-ended_at").first().ended_at
    assert timedelta(days=1) <= timezone.now() - newest < timedelta(days=2)
    first = Job.objects.get(external_id="900101")
    assert (first.ended_at.hour, first.ended_at.minute) == (8, 7)
    assert first.failure.gpu_seconds == 8 * (30 + 7) * 60   # the attempts moved with the job


def test_bad_manifest_lines_are_reported_and_the_rest_ingested(tmp_path, celery_worker):
    shutil.copytree(FIXTURE / "logs", tmp_path / "logs")
    good = (FIXTURE / "manifest.jsonl").read_text().splitlines()[2]
    (tmp_path / "manifest.jsonl").write_bytes("\n".join([
        good,
        "{broken json",
        '{"platform": "k8s", "status": "failed"}',
        '{"platform": "k8s", "external_id": "x", "status": "failed", "log": "logs/nope.log"}',
        "",
    ]).encode() + b"\xff\xfe\n")

    with pytest.raises(CommandError):
        out, err = ingest(tmp_path, "--wait", "--timeout", "60")
    assert Job.objects.count() == 1
    assert wait_for_category("resnet-7f9c2") == "path_not_found"


def test_bad_manifest_messages_name_the_line(tmp_path, transactional_db, log_dir):
    (tmp_path / "manifest.jsonl").write_text('{broken\n{"platform": "k8s", "status": "failed"}\n')
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("ingest_dir", str(tmp_path), stdout=io.StringIO(), stderr=err)
    assert "manifest.jsonl:1: invalid JSON" in err.getvalue()
    assert "manifest.jsonl:2: external_id: is required" in err.getvalue()


def test_folder_without_manifest_takes_every_log(tmp_path, celery_worker):
    shutil.copy(FIXTURE / "logs" / "missing-data.log", tmp_path / "a.log")
    (tmp_path / "notes.md").write_text("not a log")
    out, _ = ingest(tmp_path, "--wait", "--timeout", "60")

    assert "1 jobs received" in out
    assert Failure.objects.get(job__external_id="a.log", job__platform="dir").category == "path_not_found"


def test_a_log_over_100_mb_is_ingested_in_bounded_memory(tmp_path, celery_worker):
    log = tmp_path / "big.log"
    line = b"[rank0]: Epoch 3 step 12345 loss 0.4817 lr 0.0003 grad_norm 1.02 throughput 812.4 samples/s\n"
    with open(log, "wb") as out:
        for _ in range(105 * 1024 * 1024 // (len(line) * 1000) + 1):
            out.write(line * 1000)
        out.write((FIXTURE / "logs" / "oom-node7.log").read_bytes())
    (tmp_path / "manifest.jsonl").write_text(
        '{"platform": "slurm", "external_id": "big", "status": "failed", "gpus": 8, "log": "big.log"}\n')

    out, _ = ingest(tmp_path, "--wait", "--timeout", "120")

    failure = Failure.objects.get(job__external_id="big")
    assert failure.category == "gpu_oom"
    # 105 MB deep: numbered from the failure's window at ingest (no full read), resolved when the page asks
    assert failure.line_numbers_from > 100 * 1024 * 1024
    failure = resolve_line_numbers(failure)
    assert failure.line_numbers_from == 0 and failure.failure_line_number == sum(1 for _ in open(log, "rb"))
    assert Job.objects.get(external_id="big").log_bytes > 100 * 1024 * 1024


def wait_for_category(external_id):
    return wait_for(lambda: Failure.objects.filter(job__external_id=external_id, indexed_at__isnull=False)
                    .values_list("category", flat=True).first(), what=external_id)
