"""The search page and the similar-failures panel, on the real Elasticsearch."""
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.urls import reverse

from jobs_ingest import failures, services as ingest
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure
from jobs_ingest.search import index as search_index, similar, sync
from triage import services
from triage.roles import ENGINEERS

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir" / "logs"


def make_job(external_id, log, **fields):
    data = {"platform": "slurm", "external_id": external_id, "status": "failed", "gpus": 4, "name": "bert",
            "team": "nlp", "submitter": "alice", "started_at": "2026-11-16T08:00:00Z",
            "ended_at": "2026-11-16T09:00:00Z", **fields}
    with open(LOGS / log, "rb") as stream:
        job = ingest.receive_job(parse_job(data), stream).job
    failures.analyse(job.pk, index_now=True)
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
    sync.index_failures(list(Failure.objects.values_list("pk", flat=True)))  # the judgment, as the task would
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
    es.indices.refresh(index=search_index.alias_name(settings.ES_INDEX_PREFIX, search_index.SIGNATURES))
    hits = similar.similar_failures(es, settings.ES_INDEX_PREFIX, (LOGS / "oom-node3.log").read_text())
    assert hits[0].same_fingerprint and hits[0].count == 2  # the signature's counts cover all its failures

    # Job 1's log now shows another failure: job 2 becomes the OOM signature's representative.
    with open(log_dir.parent / "other.log", "w") as other:
        other.write("KeyError: 'lr'\n")
    with open(log_dir.parent / "other.log", "rb") as stream:
        ingest.receive_job(parse_job({"platform": "slurm", "external_id": "1", "status": "failed"}), stream)
    failures.analyse(first.job_id, index_now=True)
    sync.index_failures([second.pk])  # what the task queued on commit does
    assert str(second.pk) in representatives()


# ----------------------------------------------------------- the signatures index, kept from PostgreSQL

def signature_source(es, signature_id):
    alias = search_index.alias_name(settings.ES_INDEX_PREFIX, search_index.SIGNATURES)
    es.indices.refresh(index=f"{alias},{search_index.alias_name(settings.ES_INDEX_PREFIX)}")
    found = es.options(ignore_status=404).get(index=alias, id=str(signature_id))
    return found["_source"] if found.get("found") else None


def test_signature_document_follows_new_failures(es, log_dir, engineer):
    first = make_job("1", "oom-node7.log", ended_at="2026-11-16T09:00:00Z")
    doc = signature_source(es, first.signature_id)
    assert (doc["failure_count"], doc["teams"], doc["platforms"]) == (1, ["nlp"], ["slurm"])
    assert doc["gpu_hours"] == pytest.approx(4.0) and doc["latest_failure"]["failure_id"] == str(first.pk)
    assert doc["fingerprint"] == first.signature.fingerprint and doc["effective_category"] == "gpu_oom"

    second = make_job("k-2", "oom-node3.log", platform="k8s", team="vision", started_at="2026-11-17T08:00:00Z",
                      ended_at="2026-11-17T10:00:00Z")
    assert second.signature_id == first.signature_id
    doc = signature_source(es, first.signature_id)
    assert (doc["failure_count"], doc["teams"], doc["platforms"]) == (2, ["nlp", "vision"], ["k8s", "slurm"])
    assert doc["gpu_hours"] == pytest.approx(12.0) and doc["last_seen"].startswith("2026-11-17T10:00:00")
    assert doc["latest_failure"]["external_id"] == "k-2"

    # An older job arriving late counts, but the latest failure shown stays the newest one.
    make_job("3", "oom-node7.log", started_at="2026-11-10T08:00:00Z", ended_at="2026-11-10T09:00:00Z")
    doc = signature_source(es, first.signature_id)
    assert doc["failure_count"] == 3 and doc["latest_failure"]["external_id"] == "k-2"
    assert doc["first_seen"].startswith("2026-11-10T09:00:00")

    hits = similar.similar_failures(es, settings.ES_INDEX_PREFIX, (LOGS / "oom-node3.log").read_text())
    assert hits[0].same_fingerprint and (hits[0].count, hits[0].gpu_hours) == (3, pytest.approx(16.0))
    # Filtered by team, the hit shows that team's failure, never another team's job.
    hits = similar.similar_failures(es, settings.ES_INDEX_PREFIX, (LOGS / "oom-node3.log").read_text(),
                                    filters={"team": "nlp"})
    assert hits[0].signature_id == str(first.signature_id) and hits[0].team == "nlp"
    assert hits[0].external_id in ("1", "3") and hits[0].count == 3
    assert similar.similar_failures(es, settings.ES_INDEX_PREFIX, "CUDA out of memory",
                                    filters={"platform": "lsf"}) == []


def test_a_failure_moving_signature_recounts_both(es, log_dir, engineer):
    from jobs_ingest.models import Signature
    first = make_job("1", "oom-node7.log")
    second = make_job("2", "oom-node3.log", platform="k8s")
    oom = first.signature_id
    assert signature_source(es, oom)["failure_count"] == 2

    # Job 2's log now shows another failure: it leaves the OOM signature.
    with open(log_dir.parent / "other.log", "w") as other:
        other.write("KeyError: 'lr'\n")
    with open(log_dir.parent / "other.log", "rb") as stream:
        ingest.receive_job(parse_job({"platform": "k8s", "external_id": "2", "status": "failed"}), stream)
    failures.analyse(second.job_id, index_now=True)
    sync.index_failures([], signature_ids=[oom])  # what the task queued on commit does (no worker here)

    moved = Failure.objects.get(pk=second.pk)
    assert moved.signature_id != oom
    doc = signature_source(es, oom)
    assert (doc["failure_count"], doc["platforms"], doc["teams"]) == (1, ["slurm"], ["nlp"])
    assert doc["latest_failure"]["failure_id"] == str(first.pk)
    assert signature_source(es, moved.signature_id)["failure_count"] == 1

    # The last failure leaving a signature removes its document.
    Failure.objects.filter(pk=first.pk).update(signature=moved.signature)
    Signature.objects.get(pk=oom).refresh_stats()
    sync.index_failures([], signature_ids=[oom])
    assert signature_source(es, oom) is None


def test_judgments_reach_the_signature_document_when_pushed(es, log_dir, engineer):
    from triage.tasks import push_signatures
    oom = make_job("1", "oom-node7.log")
    make_job("2", "missing-data.log")
    text = (LOGS / "oom-node3.log").read_text()
    assert similar.similar_failures(es, settings.ES_INDEX_PREFIX, text, filters={"only_resolved": True}) == []

    services.judge(oom.signature, engineer, category="cpu_oom", root_cause="inappropriate_model_params",
                   fix_description="halve the batch size")
    push_signatures([oom.signature_id])  # the task, run here

    doc = signature_source(es, oom.signature_id)
    assert (doc["confirmed_category"], doc["effective_category"], doc["category"]) == ("cpu_oom", "cpu_oom", "gpu_oom")
    assert (doc["root_cause"], doc["triage_state"]) == ("inappropriate_model_params", "resolved")
    es.indices.refresh(index=search_index.alias_name(settings.ES_INDEX_PREFIX))
    hits = similar.similar_failures(es, settings.ES_INDEX_PREFIX, text, filters={"only_resolved": True})
    assert [h.signature_id for h in hits] == [str(oom.signature_id)] and hits[0].root_cause
    assert [h.signature_id for h in similar.similar_failures(
        es, settings.ES_INDEX_PREFIX, text, filters={"category": "cpu_oom"})] == [str(oom.signature_id)]
    assert similar.similar_failures(es, settings.ES_INDEX_PREFIX, text, filters={"category": "gpu_oom"}) == []


def test_concurrent_signature_writes_conflict_instead_of_losing_a_platform(es, log_dir, engineer):
    first = make_job("1", "oom-node7.log")
    stale = sync.signature_actions(es, settings.ES_INDEX_PREFIX, [first.signature_id], [first])
    make_job("k-2", "oom-node3.log", platform="k8s")  # another writer updates the document meanwhile

    _, errors = search_index.bulk_write(es, stale)

    assert [e["index"]["status"] for e in errors] == [409]
    assert signature_source(es, first.signature_id)["platforms"] == ["k8s", "slurm"]


def test_equal_scores_put_the_most_recent_signature_first(es, log_dir, engineer):
    older = make_job("1", "missing-data.log", started_at=None, ended_at="2026-11-01T00:00:00Z")
    with open(log_dir.parent / "missing2.log", "w") as log:
        log.write((LOGS / "missing-data.log").read_text().replace("FileNotFoundError", "FileNotFound2Error"))
    with open(log_dir.parent / "missing2.log", "rb") as stream:
        job = ingest.receive_job(parse_job({"platform": "slurm", "external_id": "2", "status": "failed",
                                            "ended_at": "2026-11-20T00:00:00Z"}), stream).job
    failures.analyse(job.pk, index_now=True)
    newer = Failure.objects.get(job=job)
    assert newer.signature_id != older.signature_id
    alias = search_index.alias_name(settings.ES_INDEX_PREFIX, search_index.SIGNATURES)
    es.indices.refresh(index=alias)

    # Words both signatures share equally, nothing that tells them apart.
    hits = similar.similar_failures(es, settings.ES_INDEX_PREFIX, "No such file or directory")
    assert hits[0].score == hits[1].score
    assert [h.signature_id for h in hits[:2]] == [str(newer.signature_id), str(older.signature_id)]
