"""Similar failures, log search, POST /api/v1/similar and `manage.py similar`, against the real Elasticsearch.

Documents are analysed with the real core and shaped like search.projection.failure_documents output (the mapping is
strict, so only contract fields), then bulk indexed through the alias."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from bench import search_docs
from jobs_ingest.core import analyse_text
from jobs_ingest.search import index as search_index, logs, query, similar

ROOT = Path(__file__).resolve().parents[2]

OOM_LOG = """Epoch 3: 41%|####      | 410/1000 [02:11<03:09, 3.1it/s]
Traceback (most recent call last):
  File "/home/alice/bert/train.py", line 131, in train_one_epoch
    loss.backward()
  File "/opt/conda/lib/python3.10/site-packages/torch/_tensor.py", line 522, in backward
    torch.autograd.backward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.05 GiB is free.
"""
OOM_OTHER = """Traceback (most recent call last):
  File "/home/bob/vit/fit.py", line 40, in evaluate
    out = model(batch)
RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 1; 15.90 GiB total capacity)
"""
MISSING = """Traceback (most recent call last):
  File "/home/carol/data/load.py", line 12, in load_data
    with open(path) as f:
FileNotFoundError: [Errno 2] No such file or directory: '/mnt/data/train-00001.parquet'
"""
NCCL = """Traceback (most recent call last):
  File "/home/dan/ddp/main.py", line 77, in main
    dist.all_reduce(t)
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error, NCCL version 2.19.3
"""
XSS = """Traceback (most recent call last):
  File "/home/eve/web/render.py", line 5, in render
    html = template(page)
ValueError: bad markup <script>alert('x')</script> in page title & body
"""


def doc(n, log, *, signature=None, platform="slurm", team="nlp", ended_at=None, triage_state="new",
        root_cause="", confirmed_category="", gpu_hours=1.0, external_id=None):
    a = analyse_text(log)
    return {
        "failure_id": str(n), "job_id": str(n), "signature_id": str(signature or a.fingerprint), "fingerprint": a.fingerprint,
        "platform": platform, "external_id": external_id or f"job-{n}", "submitter": "alice", "team": team,
        "status": "failed", "job_name": f"run-{n}", "exception_type": a.exception_type, "user_frame": a.user_frame,
        "stage": a.stage, "category": a.category, "dimension": a.dimension, "rule": a.rule,
        "retry_advice": a.retry_advice, "tagger_version": a.tagger_version, "normaliser_version": a.normaliser_version,
        "confirmed_category": confirmed_category, "root_cause": root_cause, "triage_state": triage_state,
        "message": a.message, "masked_message": a.masked_message, "failure_line": a.failure_line,
        "traceback": a.traceback, "excerpt": a.excerpt, "gpus": 8, "attempts": 1, "gpu_hours": gpu_hours,
        "confidence": a.confidence, "failure_line_number": a.failure_line_number,
        "submitted_at": None, "started_at": None,
        "ended_at": ended_at or f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:00:00Z", "ingested_at": None,
    }


INDEXED: dict[str, dict[str, dict]] = {}


def index(es, prefix, docs):
    """Failure documents, and their signatures' documents aggregated from every failure document this
    test indexed (as search.sync.index_failures keeps them from PostgreSQL)."""
    ok, errors = search_docs.bulk_index(es, prefix, docs, refresh=True)
    assert not errors and ok == len(docs), errors[:1]
    known = INDEXED.setdefault(prefix, {})
    known.update({d["failure_id"]: d for d in docs})
    signatures = search_docs.signature_documents_from_failures(known.values())
    ok, errors = search_docs.bulk_index(es, prefix, signatures, refresh=True, kind=search_index.SIGNATURES)
    assert not errors and ok == len(signatures), errors[:1]


@pytest.fixture
def corpus(es, es_prefix):
    """30 failures of the OOM signature (ids 1-30), one of a similar OOM, one missing file, one NCCL."""
    docs = [doc(n, OOM_LOG, signature="100", gpu_hours=2.0, team="nlp" if n % 2 else "vision",
                ended_at=f"2026-10-{n:02d}T12:00:00Z") for n in range(1, 31)]
    docs += [doc(40, OOM_OTHER, signature="200", team="vision", platform="k8s", triage_state="resolved",
                 root_cause="inappropriate_model_params", ended_at="2026-06-01T00:00:00Z"),
             doc(50, MISSING, signature="300", team="data", ended_at="2026-10-15T00:00:00Z"),
             doc(60, NCCL, signature="400", team="infra", ended_at="2026-10-16T00:00:00Z")]
    index(es, es_prefix, docs)
    return docs


def test_same_signature_first_then_a_similar_message(es, es_prefix, corpus):
    hits = similar.similar_failures(es, es_prefix, OOM_LOG)

    assert hits[0].signature_id == "100" and hits[0].same_fingerprint
    assert hits[1].signature_id == "200" and not hits[1].same_fingerprint
    assert hits[0].score > hits[1].score
    assert hits[0].category == "gpu_oom" and hits[0].exception_type == "torch.OutOfMemoryError"
    assert "300" not in [h.signature_id for h in hits[:2]]


def test_a_pasted_message_alone_finds_the_signature(es, es_prefix, corpus):
    hits = similar.similar_failures(es, es_prefix, "CUDA out of memory. Tried to allocate 1.50 GiB")
    assert {hits[0].signature_id, hits[1].signature_id} == {"100", "200"}
    hits = similar.similar_failures(es, es_prefix, "No such file or directory: '/data/x.parquet'")
    assert hits[0].signature_id == "300"


def test_one_hit_per_signature_with_its_count_and_gpu_hours(es, es_prefix, corpus):
    hits = similar.similar_failures(es, es_prefix, OOM_LOG, top=10)

    signatures = [h.signature_id for h in hits]
    assert len(signatures) == len(set(signatures))
    assert hits[0].count == 30 and hits[0].gpu_hours == pytest.approx(60.0)
    assert hits[1].count == 1


def test_filters(es, es_prefix, corpus):
    def sigs(**filters):
        return [h.signature_id for h in similar.similar_failures(es, es_prefix, OOM_LOG, filters=filters)]

    assert sigs(platform="k8s") == ["200"]
    assert sigs(team=["data", "infra"]) in (["300", "400"], ["400", "300"], ["300"], ["400"])
    assert "100" in sigs(team="nlp") and "200" not in sigs(team="nlp")
    assert sigs(category="path_not_found") in (["300"], [])
    assert sigs(ended_before="2026-07-01") == ["200"]
    assert "200" not in sigs(ended_after="2026-09-01T00:00:00Z")
    # A failure confirmed as another category is found under that category, not its automatic one.
    index(es, es_prefix, [doc(70, MISSING, signature="300", confirmed_category="cpu_oom", team="data")])
    assert "300" in [h.signature_id for h in similar.similar_failures(es, es_prefix, MISSING,
                                                                        filters={"category": "cpu_oom"})]
    with pytest.raises(query.BadQuery):
        sigs(colour="red")
    with pytest.raises(query.BadQuery):
        sigs(ended_after="last tuesday")


def test_only_resolved_shows_the_fix(es, es_prefix, corpus):
    hits = similar.similar_failures(es, es_prefix, OOM_LOG, filters={"only_resolved": True})

    assert [h.signature_id for h in hits] == ["200"]
    assert hits[0].triage_state == "resolved" and hits[0].root_cause == "inappropriate_model_params"


def test_similar_to_an_indexed_failure(es, es_prefix, corpus):
    hits = similar.similar_to_failure(es, es_prefix, "1")
    assert hits[0].signature_id == "200"
    assert "100" not in [h.signature_id for h in hits]
    assert similar.similar_to_failure(es, es_prefix, "999999") == []


@pytest.mark.parametrize("strategy", query.STRATEGIES)
def test_every_strategy_answers(es, es_prefix, corpus, strategy):
    hits = similar.similar_failures(es, es_prefix, OOM_LOG, strategy=strategy)
    assert hits
    if strategy != "bm25_raw":  # the baseline: the raw log against raw messages ranks poorly
        assert hits[0].signature_id in ("100", "200")


@pytest.mark.parametrize("text", [
    "", "   \n\t ", "\x00\x00\x00", b"\x00\x01\x02\xff\xfe", "(]{*~", '"(]{*~ \\ / AND OR NOT +-=&&||><!^:?',
    "RuntimeError: CUDA out of memory (]{*~ \x00 \ud800", "x" * 1_000_000, ("CUDA out of memory " * 60_000),
    OOM_LOG * 3000,
])
def test_bad_queries_give_bad_query_or_a_sane_answer(es, es_prefix, corpus, text):
    try:
        hits = similar.similar_failures(es, es_prefix, text)
    except query.BadQuery as exc:
        assert str(exc)
        return
    assert isinstance(hits, list)
    if "CUDA" in (text if isinstance(text, str) else ""):
        assert hits and hits[0].signature_id in ("100", "200")


def test_empty_text_is_a_bad_query(es, es_prefix):
    with pytest.raises(query.BadQuery, match="empty"):
        similar.similar_failures(es, es_prefix, "")
    with pytest.raises(ValueError):
        logs.search_logs(es, es_prefix, "  ")


def test_no_index_yet_is_no_hits():
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    assert similar.similar_failures(client, "test-no-such-prefix", OOM_LOG) == []


# ------------------------------------------------------------------------------------------------ log search

def test_log_search_highlights_are_html_escaped(es, es_prefix, corpus):
    index(es, es_prefix, [doc(80, XSS, signature="500")])
    page = logs.search_logs(es, es_prefix, "markup")

    assert [h.failure_id for h in page.hits] == ["80"] and page.total == 1
    fragments = " ".join(f for fs in page.hits[0].highlights.values() for f in fs)
    assert "<em>markup</em>" in fragments
    assert "<script>" not in fragments and "&lt;script&gt;" in fragments
    assert "&amp;" in fragments


def test_log_search_filters_and_syntax_characters(es, es_prefix, corpus):
    hits, _, total = logs.search_logs(es, es_prefix, "CUDA memory", filters={"platform": "k8s"})
    assert [h.failure_id for h in hits] == ["40"] and total == 1
    for text in ['"(]{*~', "NCCL AND (", "memory~~ ^^ \\", "-", 'train-00001.parquet"']:
        page = logs.search_logs(es, es_prefix, text) if any(c.isalnum() for c in text) else None
        assert page is None or isinstance(page.total, int)
    with pytest.raises(query.BadQuery):
        logs.search_logs(es, es_prefix, "(]{*~")  # nothing searchable in it
    with pytest.raises(query.BadQuery):
        logs.search_logs(es, es_prefix, "memory", search_after=["not", "valid", "cursor"])
    with pytest.raises(query.BadQuery):
        logs.search_logs(es, es_prefix, "memory", search_after="%%%garbage")


def test_search_after_walks_every_result_once(es, es_prefix):
    # 57 matches, many sharing an ended_at (ties broken by failure_id), a few without one (sorted last).
    docs = [doc(n, MISSING, signature="300", ended_at=None if n % 19 == 0 else f"2026-10-{1 + n % 5:02d}T00:00:00Z")
            for n in range(1, 58)]
    for d in docs:
        if d["failure_id"] in ("19", "38", "57"):
            d["ended_at"] = None
    index(es, es_prefix, docs + [doc(100, NCCL, signature="400")])
    seen, cursor, pages = [], None, 0
    while True:
        page = logs.search_logs(es, es_prefix, "No such file", size=7, search_after=cursor)
        assert page.total == 57
        seen += [h.failure_id for h in page.hits]
        pages += 1
        if page.next_search_after is None:
            break
        cursor = logs.encode_cursor(page.next_search_after) if pages % 2 else page.next_search_after
    assert len(seen) == len(set(seen)) == 57 and pages == 9
    assert seen[-3:] == ["19", "38", "57"]  # no ended_at: last, by failure_id
    ended = [d["ended_at"] for d in sorted(docs, key=lambda d: d["failure_id"]) if d["ended_at"]]
    assert sorted(ended, reverse=True)[0] == next(d["ended_at"] for d in docs if d["failure_id"] == seen[0])


# ------------------------------------------------------------------------------------------------ API

def post(client, body, token=None, **extra):
    headers = {"HTTP_AUTHORIZATION": f"Token {token}"} if token else {}
    return client.post("/api/v1/similar", data=body if isinstance(body, (str, bytes)) else json.dumps(body),
                       content_type="application/json", **headers, **extra)


def test_api_requires_authentication(client, db, es, es_prefix):
    assert post(client, {"text": OOM_LOG}).status_code == 401
    assert post(client, {"text": OOM_LOG}, token="jt_wrong").status_code == 401


def test_api_with_a_token(client, api_token, es, es_prefix, corpus):
    response = post(client, {"text": OOM_LOG, "top": 3}, token=api_token)

    assert response.status_code == 200, response.content
    hits = response.json()["hits"]
    assert len(hits) == 3 and hits[0]["signature_id"] == "100" and hits[0]["count"] == 30
    assert {"platform", "external_id", "category", "root_cause", "triage_state", "score", "gpu_hours",
            "signature_url", "job_url"} <= set(hits[0])
    resolved = post(client, {"text": OOM_LOG, "filters": {"only_resolved": True}}, token=api_token).json()["hits"]
    assert [h["signature_id"] for h in resolved] == ["200"]


@pytest.mark.parametrize("body", ["{not json", "[1, 2]", json.dumps({"text": 3}), json.dumps({"text": ""}),
                                  json.dumps({"text": "x", "filters": []}), json.dumps({"text": "oom", "top": "many"}),
                                  json.dumps({"text": "oom", "filters": {"colour": "red"}}),
                                  json.dumps({"text": "oom", "strategy": "magic"}), b"\xff\xfe\x00"])
def test_api_bad_input_is_a_400(client, api_token, es, es_prefix, body):
    response = post(client, body, token=api_token)
    assert response.status_code == 400, response.content
    assert response.json()["error"]


def test_api_survives_huge_binary_and_syntax_texts(client, api_token, es, es_prefix, corpus):
    for text in ["(]{*~", "\x00\x01 binary \x02 CUDA out of memory", "CUDA out of memory " * 60_000]:
        response = post(client, {"text": text}, token=api_token)
        assert response.status_code in (200, 400), response.content
        assert "hits" in response.json() or "error" in response.json()


def test_api_token_scope_limits_results(client, transactional_db, es, es_prefix, corpus):
    from jobs_ingest.models import IngestToken
    _, key = IngestToken.issue("k8s only", platform="k8s")
    hits = post(client, {"text": OOM_LOG}, token=key).json()["hits"]
    assert [h["platform"] for h in hits] == ["k8s"]
    assert post(client, {"text": OOM_LOG, "filters": {"platform": "slurm"}}, token=key).json()["hits"] == []


def test_api_with_a_session_user(client, db, es, es_prefix, corpus):
    user = get_user_model().objects.create_user("triager", password="pw-12345")
    client.force_login(user)
    response = post(client, {"text": MISSING})
    assert response.status_code == 200 and response.json()["hits"][0]["signature_id"] == "300"
    assert client.get("/api/v1/similar").status_code == 405


# ------------------------------------------------------------------------------------------------ command

def test_similar_command_output(es, es_prefix, corpus):
    lines = [{"id": "a", "text": OOM_LOG}, {"id": 2, "text": MISSING}, {"id": "empty", "text": ""}]
    stdin = "\n".join(json.dumps(x) for x in lines) + "\nnot json\n"
    env = {**os.environ, "ES_INDEX_PREFIX": es_prefix, "ELASTICSEARCH_URL": settings.ELASTICSEARCH_URL}
    proc = subprocess.run([sys.executable, "manage.py", "similar", "--top", "2"], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)

    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["id"] for o in out] == ["a", 2, "empty", None]
    assert len(out[0]["hits"]) == 2
    assert set(out[0]["hits"][0]) == {"platform", "external_id", "signature", "category", "score"}
    assert out[0]["hits"][0]["signature"] == "100" and out[0]["hits"][0]["category"] == "gpu_oom"
    assert out[1]["hits"][0]["signature"] == "300"
    assert "error" in out[2] and "error" in out[3]
    assert "4 inputs, 2 errors" in proc.stderr


def test_elasticsearch_down_is_search_unavailable_and_a_503(client, api_token, settings):
    down = search_index.make_client("http://127.0.0.1:9", timeout=2)
    with pytest.raises(query.SearchUnavailable):
        similar.similar_failures(down, "jobtriage", OOM_LOG)
    with pytest.raises(query.SearchUnavailable):
        logs.search_logs(down, "jobtriage", "memory")
    settings.ELASTICSEARCH_URL = "http://127.0.0.1:9"
    response = post(client, {"text": OOM_LOG}, token=api_token)
    assert response.status_code == 503 and response.json()["error"]


# ------------------------------------------------------------------------------------ signatures index

def test_signature_level_filters():
    clauses = query.signature_filter_clauses({"team": "nlp", "platform": ["k8s", "slurm"], "category": "gpu_oom",
                                                "only_resolved": "1"})
    assert clauses == [{"terms": {"teams": ["nlp"]}}, {"terms": {"platforms": ["k8s", "slurm"]}},
                       {"terms": {"effective_category": ["gpu_oom"]}}, {"term": {"triage_state": "resolved"}}]
    with pytest.raises(ValueError):
        query.signature_filter_clauses({"ended_after": "2026-01-01"})
    with pytest.raises(query.BadQuery):
        query.signature_filter_clauses({"team": 3})


def test_both_indices_rank_alike_and_the_failures_index_stands_in(es, es_prefix, corpus):
    by_signatures = similar.search_probe(es, es_prefix, query.probe(OOM_LOG), index="signatures")
    by_failures = similar.search_probe(es, es_prefix, query.probe(OOM_LOG), index="failures")
    assert [h.signature_id for h in by_signatures] == [h.signature_id for h in by_failures]
    assert [(h.count, h.gpu_hours) for h in by_signatures] == [(h.count, h.gpu_hours) for h in by_failures]
    assert by_signatures[0].failure_id == "30"  # the signature's latest failure is shown
    with pytest.raises(query.BadQuery):
        similar.search_probe(es, es_prefix, query.probe(OOM_LOG), index="signatures",
                             filters={"ended_after": "2026-01-01"})

    # Signatures index lost (or not built yet after an upgrade): the failures index answers.
    for name in search_index.alias_indices(es, es_prefix, search_index.SIGNATURES):
        es.indices.delete(index=name)
    assert [h.signature_id for h in similar.similar_failures(es, es_prefix, OOM_LOG)] == \
        [h.signature_id for h in by_failures]
