"""The search page and the similar-failures panel, on the real Elasticsearch."""
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.urls import reverse

from jobs_ingest import search_index, services as ingest
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure
from triage import services
from triage.roles import ENGINEERS

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir" / "logs"


def make_job(external_id, log, **fields):
    data = {"platform": "slurm", "external_id": external_id, "status": "failed", "gpus": 4, "name": "bert",
            "team": "nlp", "submitter": "alice", "started_at": "2026-11-16T08:00:00Z",
            "ended_at": "2026-11-16T09:00:00Z", **fields}
    with open(LOGS / log, "rb") as stream:
        job = ingest.receive_job(parse_job(data), stream).job
    ingest.analyse(job.pk, index_now=True)
    return Failure.objects.get(job=job)


@pytest.fixture
def engineer(transactional_db):
    user = User.objects.create_user("erin", password="x")
    user.groups.add(Group.objects.get(name=ENGINEERS))
    return user


@pytest.fixture
def indexed(es, log_dir, engineer):
    oom = make_job("1", "oom-node7.log")
    make_job("2", "oom-node3.log", team="vision")
    missing = make_job("3", "missing-data.log")
    services.judge(oom.signature, engineer, root_cause="inappropriate_model_params",
                   fix_description="halve the batch size")
    ingest.index_failures(list(Failure.objects.values_list("pk", flat=True)))  # the judgment, as the task would
    es.indices.refresh(index=search_index.alias_name(settings.ES_INDEX_PREFIX))
    return {"oom": oom, "missing": missing}


def search(client, **data):
    return client.post(reverse("search"), data)


def test_pasted_log_finds_the_same_signature_first_with_its_fix(client, engineer, indexed):
    client.force_login(engineer)
    text = (LOGS / "oom-node3.log").read_text().replace("bob", "zoe")
    page = search(client, q=text).content.decode()

    first_row = page.split("<tbody>")[1].split("</tr>")[0]
    assert "same signature" in first_row and "OutOfMemoryError" in first_row
    assert "halve the batch size" in first_row and "Inappropriate model parameters" in first_row


def test_failure_page_shows_similar_failures_panel(client, engineer, indexed, log_dir):
    client.force_login(engineer)
    page = client.get(reverse("job-detail", args=[indexed["missing"].job_id])).content.decode()
    panel = page.split("Similar past failures, and how they were fixed")[1].split("Why grouped")[0]
    # The other signature (the judged OOM) is listed with its fix; the page's own signature is not.
    assert "OutOfMemoryError" in panel and "halve the batch size" in panel
    assert "FileNotFoundError" not in panel


def test_log_search_highlights_and_filters(client, engineer, indexed):
    client.force_login(engineer)
    page = search(client, q="imagenet", mode="logs").content.decode()
    assert "1 failure match" in page and "<em>imagenet</em>" in page
    assert "0 failures match" in search(client, q="imagenet", mode="logs", team="vision").content.decode()


@pytest.mark.parametrize("text", ["", "   ", '"(]{*~ AND OR /', "\x00\x01 binary \xff", "word " * 200_000])
def test_bad_or_odd_queries_never_fail(client, engineer, indexed, text):
    client.force_login(engineer)
    for mode in ("similar", "logs"):
        response = search(client, q=text, mode=mode)
        assert response.status_code in (200, 400), (mode, response.status_code)


def test_search_unavailable_is_explained(client, engineer, indexed, settings):
    settings.ELASTICSEARCH_URL = "http://127.0.0.1:1"
    client.force_login(engineer)
    response = search(client, q="CUDA out of memory")
    assert response.status_code == 503
    assert "Search is unavailable" in response.content.decode()
    page = client.get(reverse("job-detail", args=[indexed["oom"].job_id]))
    assert page.status_code == 200 and "unavailable right now" in page.content.decode()


def test_one_representative_document_per_signature(es, log_dir, engineer):
    first = make_job("1", "oom-node7.log")
    second = make_job("2", "oom-node3.log")
    make_job("3", "missing-data.log")
    alias = search_index.alias_name(settings.ES_INDEX_PREFIX)

    def representatives():
        es.indices.refresh(index=alias)
        hits = es.search(index=alias, query={"term": {"representative": True}}, size=10)["hits"]["hits"]
        return sorted(h["_id"] for h in hits)

    assert representatives() == sorted([str(first.pk), str(Failure.objects.get(job__external_id="3").pk)])
    from jobs_ingest import similar
    hits = similar.similar_failures(es, settings.ES_INDEX_PREFIX, (LOGS / "oom-node3.log").read_text())
    assert hits[0].same_fingerprint and hits[0].count == 2  # the signature's counts cover all its failures

    # Job 1's log now shows another failure: job 2 becomes the OOM signature's representative.
    with open(log_dir.parent / "other.log", "w") as other:
        other.write("KeyError: 'lr'\n")
    with open(log_dir.parent / "other.log", "rb") as stream:
        ingest.receive_job(parse_job({"platform": "slurm", "external_id": "1", "status": "failed"}), stream)
    ingest.analyse(first.job_id, index_now=True)
    ingest.index_failures([second.pk])  # what the task queued on commit does
    assert str(second.pk) in representatives()
