"""Triage: pages, permissions, judgments, states, history, regressions, and the push to Elasticsearch."""
import io
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.urls import reverse

from jobs_ingest import failures as analysis, services as ingest
from jobs_ingest.search import index as search_index
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure, Job, Signature
from triage import services
from triage.models import JudgmentEvent, SignatureTriage
from triage.roles import ENGINEERS, MANAGERS
from triage.search_fields import TriageSearchFields

from .conftest import wait_for

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir" / "logs"
DIFF = """--- a/train.py
+++ b/train.py
@@ -1,2 +1,2 @@
-batch_size = 64
+batch_size = 16
 model = build()
"""


def make_job(external_id, log="oom-node7.log", **fields):
    """A job ingested synchronously through the real services (the worker path is tested elsewhere)."""
    data = {"platform": "slurm", "external_id": external_id, "status": "failed", "gpus": 8, "name": "bert",
            "submitter": "alice", "team": "nlp", "started_at": "2026-11-16T08:00:00Z",
            "ended_at": "2026-11-16T09:00:00Z", **fields}
    with open(LOGS / log, "rb") as stream:
        job = ingest.receive_job(parse_job(data), stream if log else None).job
    analysis.analyse(job.pk)
    return Job.objects.get(pk=job.pk)


def user_in(group, name):
    user = User.objects.create_user(name, password="pw-" + name)
    user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def engineer(db):
    return user_in(ENGINEERS, "erin")


@pytest.fixture
def manager(db):
    return user_in(MANAGERS, "mona")


@pytest.fixture
def oom(db, log_dir):
    make_job("1")
    make_job("2", submitter="bob", log="oom-node3.log")
    return Signature.objects.get(failures__job__external_id="1")


def test_every_page_needs_a_login(client, oom):
    failure = oom.failures.first()
    for url in (reverse("queue"), reverse("signature-detail", args=[oom.pk]), reverse("job-detail", args=[failure.job_id]),
                reverse("job-log", args=[failure.job_id]), reverse("search")):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url


def test_the_job_page_says_why_a_failure_is_unclassified(client, engineer, oom, log_dir):
    client.force_login(engineer)
    silent = make_job("9", log="killed.log")
    page = client.get(reverse("job-detail", args=[silent.pk])).content.decode()
    assert "why: the log shows no failure" in page
    tagged = client.get(reverse("job-detail", args=[oom.failures.first().job_id])).content.decode()
    assert "why-unclassified" not in tagged


def test_queue_lists_open_signatures_by_gpu_hours_with_filters(client, engineer, oom, log_dir):
    make_job("3", log="missing-data.log", team="vision", gpus=1)
    client.force_login(engineer)

    page = client.get(reverse("queue")).content.decode()
    assert page.index("OutOfMemoryError") < page.index("FileNotFoundError")  # 16 GPU h before 1 GPU h
    assert "nlp" in page and "vision" in page
    only_vision = client.get(reverse("queue"), {"team": "vision"}).content.decode()
    assert "FileNotFoundError" in only_vision and "OutOfMemoryError" not in only_vision
    by_category = client.get(reverse("queue"), {"category": "gpu_oom", "state": "all"}).content.decode()
    assert "OutOfMemoryError" in by_category and "FileNotFoundError" not in by_category
    assert client.get(reverse("queue"), {"since": "garbage", "new_days": "x", "state": "nope"}).status_code == 200


def test_manager_reads_but_cannot_triage(client, manager, oom):
    client.force_login(manager)
    assert client.get(reverse("signature-detail", args=[oom.pk])).status_code == 200
    for url, data in ((reverse("judge", args=[oom.pk]), {"category": "cpu_oom"}),
                      (reverse("bulk-confirm"), {"signature": [oom.pk]}),
                      (reverse("set-state", args=[oom.pk]), {"state": "ignored"}),
                      (reverse("fixed-by", args=[oom.pk]), {"job": "1"}),
                      (reverse("override", args=[oom.failures.first().job_id]), {"category": "cpu_oom"})):
        assert client.post(url, data).status_code == 403, url
    assert not SignatureTriage.objects.exists() and not JudgmentEvent.objects.exists()


def test_correcting_a_category_with_root_cause_and_diff_records_history(client, engineer, oom):
    client.force_login(engineer)
    response = client.post(reverse("judge", args=[oom.pk]), {
        "category": "cpu_oom", "root_cause": "inappropriate_model_params", "notes": "batch too large",
        "fix_description": "smaller batch, gradient accumulation", "fix_diff": DIFF})

    assert response.status_code == 302
    triage = SignatureTriage.objects.get(pk=oom.pk)
    assert (triage.category, triage.root_cause, triage.state) == ("cpu_oom", "inappropriate_model_params", "resolved")
    events = {(e.field, e.old_value, e.new_value) for e in JudgmentEvent.objects.filter(user=engineer)}
    assert ("category", "", "cpu_oom") in events and ("state", "new", "resolved") in events
    page = client.get(reverse("signature-detail", args=[oom.pk])).content.decode()
    assert "+1" in page and "−1" in page and "batch_size = 16" in page and "erin" in page


def test_an_invalid_diff_saves_nothing(client, engineer, oom):
    client.force_login(engineer)
    response = client.post(reverse("judge", args=[oom.pk]), {"category": "gpu_oom", "fix_diff": "not a diff"},
                           follow=True)
    assert "Not a valid unified diff" in response.content.decode()
    assert not SignatureTriage.objects.exists()


def test_bulk_confirm_moves_new_signatures_to_triaged(client, engineer, oom):
    client.force_login(engineer)
    client.post(reverse("bulk-confirm"), {"signature": [oom.pk]})
    triage = SignatureTriage.objects.get(pk=oom.pk)
    assert (triage.category, triage.state) == ("gpu_oom", "triaged")
    assert "OutOfMemoryError" not in client.get(reverse("queue")).content.decode()  # left the open queue


def test_fixed_by_candidates_and_link(client, engineer, oom):
    fixed = make_job("4", log="success.log", status="succeeded", started_at="2026-11-17T08:00:00Z",
                     ended_at="2026-11-17T09:00:00Z")
    make_job("5", log="success.log", status="succeeded", name="other", ended_at="2026-11-17T09:00:00Z")
    candidates = [job for job, _ in services.fixed_by_candidates(oom)]
    assert candidates == [fixed]

    client.force_login(engineer)
    client.post(reverse("fixed-by", args=[oom.pk]), {"job": f"http://x/jobs/{fixed.pk}/"})
    triage = SignatureTriage.objects.get(pk=oom.pk)
    assert triage.fixed_by == fixed and triage.state == "resolved"
    client.post(reverse("fixed-by", args=[oom.pk]), {"job": "slurm:nope"})
    assert SignatureTriage.objects.get(pk=oom.pk).fixed_by == fixed


def test_a_resolved_signature_failing_again_regresses(engineer, oom):
    services.judge(oom, engineer, fix_description="use 16 per GPU")
    assert SignatureTriage.objects.get(pk=oom.pk).state == "resolved"
    make_job("9", started_at="2030-01-01T00:00:00Z", ended_at="2030-01-01T01:00:00Z")
    triage = SignatureTriage.objects.get(pk=oom.pk)
    assert triage.state == "regressed"
    assert JudgmentEvent.objects.filter(signature=oom, field="state", new_value="regressed", user=None).exists()


def test_per_job_override(client, engineer, oom):
    job = oom.failures.get(job__external_id="2").job
    client.force_login(engineer)
    client.post(reverse("override", args=[job.pk]), {"category": "cpu_oom", "root_cause": "", "notes": "host issue"})
    fields = TriageSearchFields().failure_fields(list(Failure.objects.filter(signature=oom)))
    assert sorted(f["confirmed_category"] for f in fields.values()) == ["", "cpu_oom"]
    client.post(reverse("override", args=[job.pk]), {"category": "", "root_cause": "", "notes": ""})
    assert all(f["confirmed_category"] == "" for f in TriageSearchFields().failure_fields(list(oom.failures.all())).values())


def test_search_fields_of_a_signature_are_its_own_judgment(client, engineer, oom):
    job = oom.failures.get(job__external_id="2").job
    client.force_login(engineer)
    client.post(reverse("override", args=[job.pk]), {"category": "cpu_oom", "root_cause": "exceptional_data", "notes": ""})
    assert TriageSearchFields().signature_fields([oom]) == {
        oom.pk: {"confirmed_category": "", "root_cause": "", "triage_state": "new"}}
    services.judge(oom, engineer, category="gpu_oom", root_cause="inappropriate_model_params")
    by_failure = TriageSearchFields().failure_fields(list(oom.failures.all()))
    assert by_failure[oom.failures.get(job=job).pk]["confirmed_category"] == "cpu_oom"
    assert TriageSearchFields().signature_fields([oom]) == {
        oom.pk: {"confirmed_category": "gpu_oom", "root_cause": "inappropriate_model_params", "triage_state": "triaged"}}


def test_whole_log_is_served_as_plain_text(client, engineer, oom):
    client.force_login(engineer)
    job = oom.failures.first().job
    response = client.get(reverse("job-log", args=[job.pk]))
    assert response["Content-Type"].startswith("text/plain") and response["X-Content-Type-Options"] == "nosniff"
    assert b"CUDA out of memory" in b"".join(response.streaming_content)
    assert "attachment" in client.get(reverse("job-log", args=[job.pk]), {"download": "1"})["Content-Disposition"]


def test_html_in_logs_names_notes_and_diffs_is_escaped(client, engineer, log_dir, tmp_path):
    payload = "<script>alert(1)</script>"
    data = {"platform": "k8s", "external_id": "x", "status": "failed", "name": payload}
    job = ingest.receive_job(parse_job(data), io.BytesIO(f"KeyError: '{payload}'\n".encode())).job
    analysis.analyse(job.pk)
    signature = Failure.objects.get(job=job).signature
    services.judge(signature, engineer, notes=payload,
                   fix_diff=f"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-{payload}\n+ok\n")
    client.force_login(engineer)
    for url in (reverse("job-detail", args=[job.pk]), reverse("signature-detail", args=[signature.pk]), reverse("queue") + "?state=all"):
        page = client.get(url).content.decode()
        assert payload not in page, url
        assert "&lt;script&gt;" in page, url


def test_judgments_reach_elasticsearch_after_commit(engineer, celery_worker, es):
    make_job("1")
    signature = Signature.objects.get()
    services.judge(signature, engineer, category="cpu_oom", root_cause="inappropriate_model_params")

    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    alias = search_index.alias_name(settings.ES_INDEX_PREFIX)

    def indexed():
        client.indices.refresh(index=alias)
        hits = client.search(index=alias, query={"term": {"confirmed_category": "cpu_oom"}})["hits"]["hits"]
        return hits and hits[0]["_source"]

    doc = wait_for(indexed, what="the judgment in Elasticsearch")
    assert doc["triage_state"] == "triaged" and doc["root_cause"] == "inappropriate_model_params"


def test_reindex_carries_judgments(engineer, celery_worker, es):
    make_job("1")
    services.judge(Signature.objects.get(), engineer, category="cpu_oom")
    call_command("reindex", stdout=io.StringIO(), stderr=io.StringIO())
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    hits = client.search(index=search_index.alias_name(settings.ES_INDEX_PREFIX),
                         query={"term": {"confirmed_category": "cpu_oom"}})["hits"]["hits"]
    assert len(hits) == 1


def test_admin_issues_a_token_once_and_it_works(client, db):
    from jobs_ingest.models import IngestToken
    admin = User.objects.create_superuser("root", password="pw")
    client.force_login(admin)
    response = client.post("/admin/jobs_ingest/ingesttoken/add/", {"name": "slurm hook", "platform": "slurm", "team": ""},
                           follow=True)
    text = response.content.decode()
    key = text.split("not shown again): ")[1].split("<")[0].strip()
    assert IngestToken.authenticate(key).name == "slurm hook"
    assert IngestToken.objects.get().key_hash != key  # only the hash is stored
