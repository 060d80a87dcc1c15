"""jobs_ingest.search.index against the real Elasticsearch (ELASTICSEARCH_URL); nothing is mocked.
Each test owns a fresh index prefix and removes its indices and template afterwards.
Run alone with: .venv/bin/python -m pytest tests/integration/test_search_index.py -q -p no:django"""
import os
import threading
import time
import uuid
from datetime import datetime, timezone

import pytest

from bench import search_docs
from jobs_ingest.search import index as search_index
from jobs_ingest.search.index import IndexingError

ES_URL = os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:59200")


@pytest.fixture(autouse=True)
def _require_postgresql():
    """Overrides the autouse check in tests/integration/conftest.py: these tests use no database
    and no Django settings, so they also run with `-p no:django`."""


@pytest.fixture(scope="module")
def es():
    client = search_index.make_client(ES_URL)
    if not search_index.health(client):
        pytest.fail(f"Elasticsearch is not answering at {ES_URL} (ELASTICSEARCH_URL): start it with "
                    f"scripts/servers.sh start")
    return client


@pytest.fixture
def prefix(es):
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    yield prefix
    # Explicit names, not a wildcard delete: servers with destructive_requires_name refuse those.
    names = list(es.indices.get(index=f"{prefix}-failures*", expand_wildcards="all"))
    if names:
        es.indices.delete(index=",".join(names))
    for kind in search_index.KINDS:
        es.options(ignore_status=404).indices.delete_index_template(name=search_index.template_name(prefix, kind))


def failure_doc(failure_id, **overrides):
    doc = {
        "failure_id": str(failure_id), "job_id": str(1000 + int(failure_id)), "signature_id": "7",
        "fingerprint": "ab12cd34", "platform": "slurm", "external_id": f"81{failure_id:04d}",
        "submitter": "alice", "team": "nlp", "status": "failed", "job_name": "bert-pretrain",
        "exception_type": "torch.OutOfMemoryError", "user_frame": "bert/train.py:131 in train_one_epoch",
        "stage": "training", "category": "gpu_oom", "dimension": "resources", "rule": "cuda-oom",
        "retry_advice": "retry_with_changes", "tagger_version": "2", "normaliser_version": "1",
        "confirmed_category": None, "root_cause": None, "triage_state": "new",
        "message": "CUDA out of memory. Tried to allocate 2.00 GiB",
        "masked_message": "CUDA out of memory. Tried to allocate <num> GiB",
        "failure_line": "torch.OutOfMemoryError: CUDA out of memory.", "traceback": "Traceback ...",
        "excerpt": "epoch 3 step 1200", "gpus": 8, "attempts": 1, "gpu_hours": 16.0, "confidence": 0.95,
        "failure_line_number": 15, "submitted_at": datetime(2026, 11, 16, 8, tzinfo=timezone.utc),
        "started_at": "2026-11-16T08:01:00Z", "ended_at": "2026-11-16T10:01:00Z",
        "ingested_at": datetime.now(timezone.utc),
    }
    doc.update(overrides)
    return doc


def concrete_indices(es, prefix, kind=search_index.FAILURES):
    signatures = f"{prefix}-failures-signatures-"
    return sorted(name for name in es.indices.get(index=f"{prefix}-failures-*")
                  if name.startswith(signatures) == (kind == search_index.SIGNATURES))


def alias_targets(es, prefix, kind=search_index.FAILURES):
    return sorted(es.indices.get_alias(name=search_index.alias_name(prefix, kind)))


def search_ids(es, prefix, query):
    hits = es.search(index=search_index.alias_name(prefix), query=query)["hits"]["hits"]
    return sorted(hit["_id"] for hit in hits)


def test_template_mappings_are_the_contract(es, prefix):
    index = search_index.ensure_index(es, prefix)
    mapping = es.indices.get_mapping(index=search_index.alias_name(prefix))[index]["mappings"]
    props = mapping["properties"]

    assert mapping["dynamic"] == "strict"
    assert props["category"]["type"] == "keyword"
    assert props["message"] == {"type": "text", "analyzer": "standard"}
    assert props["job_name"]["type"] == "text" and props["job_name"]["fields"]["keyword"]["type"] == "keyword"
    assert props["exception_type"]["type"] == "keyword"
    assert props["exception_type"]["fields"]["text"] == {"type": "text", "analyzer": "simple"}
    assert props["masked_message"]["fields"]["shingles"]["analyzer"] == "shingles"
    assert (props["gpus"]["type"], props["gpu_hours"]["type"], props["ingested_at"]["type"]) == \
        ("integer", "float", "date")
    contract = {"failure_id", "job_id", "signature_id", "fingerprint", "platform", "external_id", "submitter",
                "team", "status", "exception_type", "user_frame", "stage", "category", "dimension", "rule",
                "retry_advice", "tagger_version", "normaliser_version", "confirmed_category", "root_cause",
                "triage_state", "job_name", "message", "masked_message", "failure_line", "traceback",
                "excerpt", "gpus", "attempts", "gpu_hours", "confidence", "failure_line_number",
                "submitted_at", "started_at", "ended_at", "ingested_at", "representative", "cluster"}
    assert set(props) == contract

    tokens = es.indices.analyze(index=index, field="masked_message.shingles",
                                text="CUDA out of memory")["tokens"]
    assert {"cuda out", "out of memory"} <= {t["token"] for t in tokens}

    search_docs.bulk_index(es, prefix, [failure_doc(1), failure_doc(2, masked_message="out of range")],
                            refresh=True)
    assert search_ids(es, prefix, {"term": {"masked_message.shingles": "out of memory"}}) == ["1"]
    assert search_ids(es, prefix, {"term": {"job_name.keyword": "bert-pretrain"}}) == ["1", "2"]
    assert search_ids(es, prefix, {"match": {"exception_type.text": "OutOfMemoryError"}}) == ["1", "2"]
    assert search_ids(es, prefix, {"term": {"exception_type": "torch.OutOfMemoryError"}}) == ["1", "2"]


def test_ensure_index_is_idempotent_and_race_safe(es, prefix):
    first = search_index.ensure_index(es, prefix)
    assert search_index.ensure_index(es, prefix) == first

    other = f"test-{uuid.uuid4().hex[:8]}"
    try:
        results, errors = [], []

        def call():
            try:
                results.append(search_index.ensure_index(es, other))
            except Exception as exc:  # surfaced by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(set(results)) == 1 and concrete_indices(es, other) == results[:1]
        assert len(concrete_indices(es, other, search_index.SIGNATURES)) == 1  # one, whoever won
    finally:
        names = list(es.indices.get(index=f"{other}-failures*"))
        if names:
            es.indices.delete(index=",".join(names))
        for kind in search_index.KINDS:
            es.options(ignore_status=404).indices.delete_index_template(name=search_index.template_name(other, kind))

    assert concrete_indices(es, prefix) == [first]
    aliases = es.indices.get_alias(name=search_index.alias_name(prefix))
    assert aliases[first]["aliases"][search_index.alias_name(prefix)]["is_write_index"] is True


def test_reindexing_a_failure_overwrites_it(es, prefix):
    search_index.ensure_index(es, prefix)
    assert search_docs.bulk_index(es, prefix, [failure_doc(1, category="gpu_oom")], refresh=True) == (1, [])
    assert search_docs.bulk_index(es, prefix, [failure_doc(1, category="cpu_oom")], refresh=True) == (1, [])

    assert search_docs.count(es, prefix) == 1
    source = es.get(index=search_index.alias_name(prefix), id="1")["_source"]
    assert source["category"] == "cpu_oom"


def test_match_on_message_and_term_filter_on_category(es, prefix):
    search_index.ensure_index(es, prefix)
    docs = [failure_doc(1), failure_doc(2, message="No such file or directory: data/train.jsonl",
                                         category="path_not_found"),
            failure_doc(3, message="CUDA out of memory while allocating", category="cpu_oom")]
    assert search_docs.bulk_index(es, prefix, docs, refresh=True) == (3, [])

    assert search_ids(es, prefix, {"match": {"message": "train.jsonl"}}) == ["2"]
    assert search_ids(es, prefix, {"term": {"category": "path_not_found"}}) == ["2"]
    both = {"bool": {"must": {"match": {"message": "cuda memory"}}, "filter": {"term": {"category": "gpu_oom"}}}}
    assert search_ids(es, prefix, both) == ["1"]


def test_bulk_index_returns_rejected_docs_and_never_creates_an_unmapped_index(es, prefix):
    ok, errors = search_docs.bulk_index(es, prefix, [failure_doc(1)])
    assert ok == 0 and errors[0]["index"]["status"] == 404  # no alias yet: refused, not auto-created
    assert list(es.indices.get(index=f"{prefix}-failures*", allow_no_indices=True)) == []

    search_index.ensure_index(es, prefix)
    ok, errors = search_docs.bulk_index(es, prefix, [failure_doc(1), failure_doc(2, unmapped_field="x"),
                                                      failure_doc(3, gpus="eight")], refresh=True)
    assert ok == 1
    assert sorted(e["index"]["_id"] for e in errors) == ["2", "3"]
    assert {e["index"]["error"]["type"] for e in errors} == {"strict_dynamic_mapping_exception",
                                                             "document_parsing_exception"}


def test_rebuild_swaps_the_alias_while_searches_keep_answering(es, prefix):
    old = search_index.ensure_index(es, prefix)
    search_docs.bulk_index(es, prefix, [failure_doc(i) for i in range(1, 4)], refresh=True)
    alias = search_index.alias_name(prefix)

    seen_counts, search_errors, stop = set(), [], threading.Event()

    def keep_searching():
        while not stop.is_set():
            try:
                seen_counts.add(es.count(index=alias)["count"])
            except Exception as exc:
                search_errors.append(exc)

    during_load = []

    def progress(done):
        # Mid-load the alias still serves the old index, untouched.
        during_load.append((done, es.count(index=alias)["count"], alias_targets(es, prefix)))

    searcher = threading.Thread(target=keep_searching)
    searcher.start()
    try:
        result = search_index.rebuild(es, prefix, (failure_doc(i) for i in range(1, 26)),
                                      progress=progress, chunk_size=10)
        time.sleep(0.2)
    finally:
        stop.set()
        searcher.join()

    assert search_errors == []
    assert seen_counts <= {3, 25} and 25 in seen_counts  # never empty, never a mix
    assert during_load[:2] == [(10, 3, [old]), (20, 3, [old])] and during_load[-1][0] == 25
    assert result == {"index": result["index"], "count": 25, "removed": [old]}
    assert result["index"] != old
    assert alias_targets(es, prefix) == concrete_indices(es, prefix) == [result["index"]]
    assert search_docs.count(es, prefix) == 25
    assert search_ids(es, prefix, {"term": {"failure_id": "25"}}) == ["25"]
    # The new index takes writes through the alias and refreshes normally again.
    search_docs.bulk_index(es, prefix, [failure_doc(26)], refresh=True)
    assert search_docs.count(es, prefix) == 26
    settings = es.indices.get_settings(index=result["index"])[result["index"]]["settings"]["index"]
    assert "refresh_interval" not in settings


def test_failed_rebuild_leaves_the_old_index_serving(es, prefix):
    old = search_index.ensure_index(es, prefix)
    search_docs.bulk_index(es, prefix, [failure_doc(1), failure_doc(2)], refresh=True)

    bad_docs = [failure_doc(i) for i in range(1, 5)] + [failure_doc(5, not_in_contract=True)]
    with pytest.raises(IndexingError, match="strict_dynamic_mapping_exception"):
        search_index.rebuild(es, prefix, bad_docs, chunk_size=2)
    assert alias_targets(es, prefix) == concrete_indices(es, prefix) == [old]
    assert search_docs.count(es, prefix) == 2

    def broken_source():  # e.g. the database going away mid-rebuild
        yield failure_doc(3)
        raise RuntimeError("database connection lost")

    with pytest.raises(RuntimeError, match="database connection lost"):
        search_index.rebuild(es, prefix, broken_source())
    assert alias_targets(es, prefix) == concrete_indices(es, prefix) == [old]
    assert search_docs.count(es, prefix) == 2


def test_first_rebuild_creates_the_alias(es, prefix):
    result = search_index.rebuild(es, prefix, [failure_doc(1)])
    assert result["removed"] == [] and alias_targets(es, prefix) == [result["index"]]
    assert search_index.ensure_index(es, prefix) == result["index"]


def test_unreachable_server_raises_indexing_error_quickly():
    client = search_index.make_client("http://127.0.0.1:1", timeout=2)
    started = time.monotonic()
    with pytest.raises(IndexingError, match="unreachable"):
        search_docs.bulk_index(client, "test-unreachable", [failure_doc(1)])
    with pytest.raises(IndexingError):
        search_index.ensure_index(client, "test-unreachable")
    with pytest.raises(IndexingError):
        search_index.rebuild(client, "test-unreachable", [failure_doc(1)])
    with pytest.raises(IndexingError):
        search_docs.count(client, "test-unreachable")
    assert search_index.health(client) is False
    assert time.monotonic() - started < 5


# ------------------------------------------------------------------------------------------ signatures index

def signature_doc(signature_id, **overrides):
    doc = search_index.signature_document(
        signature_id=signature_id, fingerprint=f"fp{signature_id}", normaliser_version="1",
        exception_type="torch.OutOfMemoryError", masked_message="CUDA out of memory. Tried to allocate <num> GiB",
        category="gpu_oom", failure_count=3, gpu_hours=12.5, first_seen="2026-11-01T00:00:00Z",
        last_seen="2026-11-16T10:01:00Z", teams=["nlp", "vision", ""], platforms=["slurm"],
        latest_failure={"failure_id": 9, "job_id": 19, "platform": "slurm", "external_id": "812345"})
    doc.update(overrides)
    return doc


def test_ensure_index_creates_the_strict_signatures_index_beside_the_failures_one(es, prefix):
    failures = search_index.ensure_index(es, prefix)
    [signatures] = alias_targets(es, prefix, search_index.SIGNATURES)

    assert signatures != failures and signatures.startswith(f"{prefix}-failures-signatures-")
    assert concrete_indices(es, prefix) == [failures]
    mapping = es.indices.get_mapping(index=signatures)[signatures]["mappings"]
    assert mapping["dynamic"] == "strict" and mapping["_meta"]["mapping_version"] == 1
    assert set(mapping["properties"]) == {
        "signature_id", "fingerprint", "normaliser_version", "category", "confirmed_category", "effective_category",
        "root_cause", "triage_state", "teams", "platforms", "exception_type", "masked_message", "failure_count",
        "gpu_hours", "first_seen", "last_seen", "latest_failure", "cluster"}
    assert mapping["properties"]["masked_message"]["fields"]["shingles"]["analyzer"] == "shingles"
    assert search_index.ensure_index(es, prefix) == failures  # idempotent
    assert alias_targets(es, prefix, search_index.SIGNATURES) == [signatures]

    ok, errors = search_docs.bulk_index(es, prefix, [signature_doc(7)], refresh=True, kind=search_index.SIGNATURES)
    assert (ok, errors) == (1, [])
    source = es.get(index=search_index.alias_name(prefix, search_index.SIGNATURES), id="7")["_source"]
    assert source["teams"] == ["nlp", "vision"] and source["effective_category"] == "gpu_oom"
    assert source["latest_failure"]["failure_id"] == "9"
    rejected = search_docs.bulk_index(es, prefix, [signature_doc(8, not_in_contract=1)],
                                       kind=search_index.SIGNATURES)[1]
    assert rejected and "strict_dynamic_mapping_exception" in str(rejected[0])


def test_rebuild_of_the_signatures_index_leaves_the_failures_index_alone(es, prefix):
    failures = search_index.ensure_index(es, prefix)
    search_docs.bulk_index(es, prefix, [failure_doc(1)], refresh=True)
    [old] = alias_targets(es, prefix, search_index.SIGNATURES)

    result = search_index.rebuild(es, prefix, (signature_doc(i) for i in range(1, 6)), kind=search_index.SIGNATURES)

    assert result["removed"] == [old] and alias_targets(es, prefix, search_index.SIGNATURES) == [result["index"]]
    assert search_docs.count(es, prefix, search_index.SIGNATURES) == 5
    assert alias_targets(es, prefix) == [failures] and search_docs.count(es, prefix) == 1


def test_signature_documents_from_failure_documents():
    docs = [failure_doc(1, gpu_hours=2.0, ended_at="2026-11-01T00:00:00Z", team="nlp"),
            failure_doc(2, gpu_hours=3.0, ended_at="2026-11-03T00:00:00Z", team="vision", platform="k8s",
                        confirmed_category="cpu_oom", triage_state="resolved"),
            failure_doc(3, signature_id="8", ended_at=None)]

    by_id = {d["signature_id"]: d for d in search_docs.signature_documents_from_failures(docs)}

    seven = by_id["7"]
    assert (seven["failure_count"], seven["gpu_hours"]) == (2, 5.0)
    assert (seven["first_seen"], seven["last_seen"]) == ("2026-11-01T00:00:00Z", "2026-11-03T00:00:00Z")
    assert seven["teams"] == ["nlp", "vision"] and seven["platforms"] == ["k8s", "slurm"]
    assert seven["latest_failure"]["failure_id"] == "2" and seven["effective_category"] == "cpu_oom"
    assert by_id["8"]["failure_count"] == 1 and by_id["8"]["last_seen"] is None


def test_the_replica_count_is_applied_to_new_and_existing_indices(es, prefix):
    """ES_REPLICAS (docs/scaling.md, passed in by sync.layout()): applied when the index is made and
    to an index that exists."""
    def replicas():
        names = (search_index.alias_indices(es, prefix)
                 + search_index.alias_indices(es, prefix, search_index.SIGNATURES))
        got = es.indices.get_settings(index=",".join(names), name="index.number_of_replicas")
        assert len(got) == 2
        return {int(v["settings"]["index"]["number_of_replicas"]) for v in got.values()}

    search_index.ensure_index(es, prefix)
    assert replicas() == {0}
    search_index.ensure_index(es, prefix, replicas=1)
    assert replicas() == {1}  # (yellow on one node: the replica has nowhere to go, the data stays searchable)
