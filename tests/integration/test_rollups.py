"""The analytics rollups (triage/rollups.py) on the real PostgreSQL: after a realistic sequence of
ingests, re-analyses, moves between signatures, judgments and overrides, the incrementally maintained
tables equal a fresh rebuild from the source tables, and a rebuild from empty restores them."""
import io

import pytest
from django.core.management import call_command
from django.db import connection

from jobs_ingest import failures as analysis, services as ingest
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure, Job, Signature
from triage import rollups, services
from triage.models import DailyCategoryRollup, DailyJobRollup, DailySignatureRollup, FailureRollupEntry

from .test_analytics import LOGS, build_dataset, make_job, user_in


def state() -> dict[str, set[tuple]]:
    """Every rollup's rows (keys and rounded values), to compare an incremental state with a rebuild."""
    out = {}
    with connection.cursor() as cursor:
        for table, keys, values in [(r.table, r.keys, [c for c, _ in r.values]) for r in rollups.FAILURE_ROLLUPS] + \
                [(DailyJobRollup._meta.db_table, DailyJobRollup.KEYS, ["jobs", "gpu_seconds"])]:
            cols = ", ".join(tuple(keys) + tuple(f"ROUND({c}::numeric, 3)" for c in values))
            cursor.execute(f"SELECT {cols} FROM {table}")
            out[table] = set(cursor.fetchall())
    return out


def assert_equals_rebuild():
    incremental = state()
    rollups.rebuild()
    rebuilt = state()
    for table in rebuilt:
        assert incremental[table] == rebuilt[table], table
    return rebuilt


def reingest(external_id, log, **fields):
    data = {"platform": "slurm", "external_id": external_id, "status": "failed", "name": "train",
            "submitter": "alice", "team": "nlp", "gpus": 1, **fields}
    with open(LOGS[log], "rb") as stream:
        job = ingest.receive_job(parse_job(data), stream).job
    analysis.analyse(job.pk)


@pytest.mark.django_db
def test_incremental_rollups_equal_a_rebuild_after_a_realistic_sequence(log_dir):
    from triage.roles import ENGINEERS
    engineer = user_in(ENGINEERS, "erin")
    build_dataset()
    rebuilt = assert_equals_rebuild()
    assert sum(r[-4] for r in rebuilt["triage_dailycategoryrollup"]) == 4  # four failures counted once each
    assert len(rebuilt["triage_dailyjobrollup"]) == 5  # five jobs, five (day, team, platform) keys

    # Re-analysis of the same job: same signature, different cost (a third attempt).
    analysis.analyse(Job.objects.get(external_id="a3").pk)
    reingest("a3", "argparse", gpus=2, started_at="2026-11-19T08:00:00Z", ended_at="2026-11-19T09:30:00Z")
    # The same job sent again with another log and team: its failure moves to another signature.
    reingest("a4", "missing", team="vision", gpus=2, started_at="2026-11-10T08:00:00Z",
             ended_at="2026-11-11T10:00:00Z")
    assert Failure.objects.get(job__external_id="a4").category == "path_not_found"
    assert_equals_rebuild()

    oom = Signature.objects.get(category="gpu_oom")
    missing = Signature.objects.get(category="path_not_found")
    services.judge(missing, engineer, category="permission_denied", root_cause="environment_difference")
    services.override_failure(Failure.objects.get(job__external_id="a1"), engineer, category="cpu_oom",
                              root_cause="inappropriate_model_params")
    make_job("a6", "oom", team="vision", gpus=4, started_at="2026-11-20T08:00:00Z", ended_at="2026-11-20T09:00:00Z")
    services.judge(oom, engineer, root_cause="inappropriate_model_params")
    rebuilt = assert_equals_rebuild()
    categories = {}
    for key in rebuilt["triage_dailycategoryrollup"]:
        categories[key[3]] = categories.get(key[3], 0) + key[6]
    assert categories == {"permission_denied": 2, "cpu_oom": 1, "gpu_oom": 1, "illegal_argument": 1}

    # Un-judge and remove the override: back to the automatic tags.
    services.judge(missing, engineer, category="", root_cause="")
    services.judge(oom, engineer, root_cause="")
    services.override_failure(Failure.objects.get(job__external_id="a1"), engineer)
    rebuilt = assert_equals_rebuild()
    assert {k[5] for k in rebuilt["triage_dailycategoryrollup"]} == {""}  # no root cause recorded any more
    assert DailyCategoryRollup.objects.filter(category="permission_denied").count() == 0  # zero rows removed

    # A deleted job leaves the job rollup (its attempts and itself, through the triggers).
    before = DailyJobRollup.objects.filter(team="vision").count()
    Job.objects.get(external_id="a5").delete()
    assert DailyJobRollup.objects.filter(team="vision").count() == before - 1
    assert_equals_rebuild()


@pytest.mark.django_db
def test_rebuild_command_restores_emptied_rollups_and_shows_progress(log_dir):
    build_dataset()
    expected = state()
    FailureRollupEntry.objects.all().delete()
    DailySignatureRollup.objects.all().delete()
    DailyJobRollup.objects.all().delete()
    out = io.StringIO()
    call_command("rebuild_rollups", stdout=out)
    assert state() == expected
    text = out.getvalue()
    assert "[1/6] triage_failurerollupentry: 4 rows" in text and "triage_dailyjobrollup: 5 rows" in text


@pytest.mark.django_db(transaction=True)
def test_concurrent_analyses_judgments_and_overrides_lose_no_update(log_dir):
    """Real concurrent transactions (threads, one connection each) on the same rollup rows: analyses of
    failures of one signature while it is judged and one of its failures is overridden."""
    import threading

    from django.db import connection

    from triage.roles import ENGINEERS
    engineer = user_in(ENGINEERS, "erin")
    jobs = [Job.objects.create(platform="slurm", external_id=f"c{i}", status="failed", team="nlp", gpus=2,
                               exit_code=1, started_at="2026-11-17T08:00:00Z", ended_at="2026-11-17T10:00:00Z")
            for i in range(13)]
    first = analysis.analyse(jobs[0].pk)
    signature = first.signature
    barrier = threading.Barrier(5)
    errors = []

    def in_thread(work):
        def run():
            try:
                barrier.wait()
                work()
            except Exception as exc:  # reported below: a deadlock or lost update must fail the test
                errors.append(exc)
            finally:
                connection.close()
        return threading.Thread(target=run)

    def analyse(chunk):
        return lambda: [analysis.analyse(job.pk) for job in chunk]

    threads = [in_thread(analyse(jobs[1 + i::3])) for i in range(3)]
    threads.append(in_thread(lambda: services.judge(signature, engineer, category="cpu_oom",
                                                    root_cause="inappropriate_model_params")))
    threads.append(in_thread(lambda: services.override_failure(first, engineer, category="gpu_oom")))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []

    counted = {}
    for row in DailyCategoryRollup.objects.all():
        counted[row.category] = counted.get(row.category, 0) + row.failures
    assert counted == {"cpu_oom": 12, "gpu_oom": 1}  # every failure once, with the final labels
    assert_equals_rebuild()


@pytest.mark.django_db
def test_a_deleted_failed_job_leaves_the_rollups(log_dir):
    build_dataset()
    Job.objects.get(external_id="a1").delete()  # its attempts, failure and ledger row go with it
    assert FailureRollupEntry.objects.count() == Failure.objects.count() == 3
    rebuilt = assert_equals_rebuild()
    assert sum(r[6] for r in rebuilt["triage_dailycategoryrollup"]) == 3
