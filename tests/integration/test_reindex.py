"""`reindex` rebuilds Elasticsearch from PostgreSQL, the source of truth."""
import io
from pathlib import Path

from django.conf import settings
from django.core.management import call_command

from bench import search_docs
from jobs_ingest.models import Failure
from jobs_ingest.search import index as search_index

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir"


def run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_reindex_rebuilds_a_lost_index_and_switches_the_alias(celery_worker):
    run("ingest_dir", str(FIXTURE), "--wait", "--timeout", "60")
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    old = search_index.alias_indices(client, settings.ES_INDEX_PREFIX)
    client.indices.delete(index=old[0])  # the index is lost
    assert search_docs.count(client, settings.ES_INDEX_PREFIX) == 0

    out = run("reindex")

    assert "reindex: 4 failures indexed" in out
    new = search_index.alias_indices(client, settings.ES_INDEX_PREFIX)
    assert len(new) == 1 and new != old
    assert search_docs.count(client, settings.ES_INDEX_PREFIX) == Failure.objects.count() == 4
    hit = client.search(index=search_index.alias_name(settings.ES_INDEX_PREFIX),
                        query={"term": {"category": "path_not_found"}})["hits"]["hits"]
    assert [h["_source"]["external_id"] for h in hit] == ["resnet-7f9c2"]


def test_reindex_pending_sends_only_unindexed_failures(celery_worker):
    run("ingest_dir", str(FIXTURE), "--wait", "--timeout", "60")
    Failure.objects.filter(job__external_id="900101").update(indexed_at=None)

    out = run("reindex", "--pending")

    assert "reindex: 1 failures indexed" in out
    assert not Failure.objects.filter(indexed_at__isnull=True).exists()


def test_ensure_search_index_is_idempotent(transactional_db, es_prefix):
    first = run("ensure_search_index")
    second = run("ensure_search_index")
    assert first == second and f"{es_prefix}-failures ->" in first and f"{es_prefix}-signatures ->" in first


def test_reindex_replaces_the_previous_index(celery_worker):
    run("ingest_dir", str(FIXTURE), "--wait", "--timeout", "60")
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    old = search_index.alias_indices(client, settings.ES_INDEX_PREFIX)

    run("reindex")

    assert search_index.alias_indices(client, settings.ES_INDEX_PREFIX) != old
    assert not client.indices.exists(index=old[0])  # the previous index is dropped after the swap
    assert search_docs.count(client, settings.ES_INDEX_PREFIX) == 4


def signature_ids_indexed(client):
    alias = search_index.alias_name(settings.ES_INDEX_PREFIX, search_index.SIGNATURES)
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, size=100, source=["signature_id", "failure_count"])["hits"]["hits"]
    return {h["_source"]["signature_id"]: h["_source"]["failure_count"] for h in hits}


def test_reindex_rebuilds_the_signatures_index(celery_worker):
    from jobs_ingest.models import Signature
    run("ingest_dir", str(FIXTURE), "--wait", "--timeout", "60")
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    expected = {str(s.pk): s.failure_count for s in Signature.objects.filter(failure_count__gt=0)}
    assert signature_ids_indexed(client) == expected  # kept at ingest
    [old] = search_index.alias_indices(client, settings.ES_INDEX_PREFIX, search_index.SIGNATURES)
    client.indices.delete(index=old)  # the signatures index is lost

    out = run("reindex", "--signatures-only")

    assert f"reindex: {len(expected)} signatures indexed" in out
    [new] = search_index.alias_indices(client, settings.ES_INDEX_PREFIX, search_index.SIGNATURES)
    assert new != old and signature_ids_indexed(client) == expected
    failures = search_index.alias_indices(client, settings.ES_INDEX_PREFIX)
    out = run("reindex")  # both, each behind its alias
    assert "4 failures indexed" in out and f"{len(expected)} signatures indexed" in out
    assert search_index.alias_indices(client, settings.ES_INDEX_PREFIX) != failures
    assert search_index.alias_indices(client, settings.ES_INDEX_PREFIX, search_index.SIGNATURES) != [new]
    assert signature_ids_indexed(client) == expected


def test_indexing_recreates_a_deleted_signatures_index(celery_worker):
    from jobs_ingest.search import sync
    run("ingest_dir", str(FIXTURE), "--wait", "--timeout", "60")
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    for name in search_index.alias_indices(client, settings.ES_INDEX_PREFIX, search_index.SIGNATURES):
        client.indices.delete(index=name)

    failure = Failure.objects.get(job__external_id="900101")
    assert sync.index_failures([failure.pk]) == 1

    assert signature_ids_indexed(client) == {str(failure.signature_id): failure.signature.failure_count}


def test_requeue_pending_leaves_indexing_to_the_retrying_tasks_while_elasticsearch_is_down(
        transactional_db, log_dir, es, settings):
    from jobs_ingest import failures, services, tasks
    from jobs_ingest.jobspec import parse_job
    job = services.receive_job(parse_job({"platform": "k8s", "external_id": "late", "status": "failed"}),
                               io.BytesIO(b"KeyError: 'lr'\n")).job
    failures.analyse(job.pk)
    assert Failure.objects.filter(indexed_at__isnull=True).count() == 1

    settings.ELASTICSEARCH_URL = "http://127.0.0.1:1"  # nothing listens there
    assert "Elasticsearch unavailable" in tasks.requeue_pending.run(older_than_seconds=0)

    settings.ELASTICSEARCH_URL = es.transport.node_pool.get().base_url
    assert "1 failures for indexing" in tasks.requeue_pending.run(older_than_seconds=0)
