"""POST /api/v1/jobs end to end: real PostgreSQL, a real Celery worker on Redis, real Elasticsearch."""
import io
import json
from pathlib import Path

import pytest
from django.conf import settings

from jobs_ingest.models import Failure, IngestToken, Job, Signature
from jobs_ingest.search import index as search_index

from .conftest import wait_for

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir" / "logs"
OOM_LOG = (FIXTURES / "oom-node7.log").read_text()


def job(external_id="812345", **extra):
    data = {"platform": "slurm", "external_id": external_id, "name": "bert-large", "submitter": "alice",
            "team": "nlp", "status": "failed", "gpus": 8, "exit_code": 1,
            "started_at": "2026-11-16T08:00:00Z", "ended_at": "2026-11-16T10:00:00Z"}
    data.update(extra)
    return data


def post_json(client, token, body, **headers):
    return client.post("/api/v1/jobs", data=json.dumps(body) if not isinstance(body, (str, bytes)) else body,
                       content_type="application/json", HTTP_AUTHORIZATION=f"Token {token}", **headers)


def analysed(job_id):
    return Failure.objects.filter(job_id=job_id, indexed_at__isnull=False).select_related("signature").first()


def es_search(**query):
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    alias = search_index.alias_name(settings.ES_INDEX_PREFIX)
    client.indices.refresh(index=alias)
    return client.search(index=alias, query=query)["hits"]["hits"]


def test_posted_job_is_analysed_stored_and_searchable(client, api_token, celery_worker):
    response = post_json(client, api_token, {**job(), "log_text": OOM_LOG})

    assert response.status_code == 202, response.content
    body = response.json()
    assert body["created"] is True
    assert body["url"].endswith(f"/jobs/{body['id']}/")
    failure = wait_for(lambda: analysed(body["id"]), what="analysis and indexing")
    assert failure.category == "gpu_oom"
    assert failure.stage == "training"
    assert failure.failure_line.startswith("[rank0]: torch.OutOfMemoryError: CUDA out of memory")
    assert failure.failure_line_number == 13
    assert failure.user_frame == "bert/train.py:131 in train_one_epoch"
    assert failure.gpu_seconds == 8 * 2 * 3600
    hits = es_search(match={"message": "CUDA out of memory"})
    assert [h["_source"]["external_id"] for h in hits] == ["812345"]
    assert hits[0]["_source"]["category"] == "gpu_oom"
    status = client.get(f"/api/v1/jobs/{body['id']}", HTTP_AUTHORIZATION=f"Token {api_token}").json()
    assert status["failure"]["category"] == "gpu_oom" and status["failure"]["indexed"] is True
    assert status["failure"]["why_unclassified"] == ""


def test_multipart_upload_of_a_log_file(client, api_token, celery_worker):
    log = io.BytesIO((FIXTURES / "missing-data.log").read_bytes())
    log.name = "job.log"
    response = client.post("/api/v1/jobs", data={"metadata": json.dumps(job("k-1", platform="k8s")), "log": log},
                           HTTP_AUTHORIZATION=f"Token {api_token}")

    assert response.status_code == 202, response.content
    failure = wait_for(lambda: analysed(response.json()["id"]), what="analysis")
    assert failure.category == "path_not_found"
    assert failure.exception_type == "FileNotFoundError"


def test_same_job_twice_is_one_job(client, api_token, celery_worker):
    first = post_json(client, api_token, {**job(), "log_text": OOM_LOG})
    wait_for(lambda: analysed(first.json()["id"]), what="first analysis")
    second = post_json(client, api_token, {**job(), "log_text": OOM_LOG})

    assert second.status_code == 202 and second.json()["created"] is False
    assert second.json()["id"] == first.json()["id"]
    wait_for(lambda: analysed(first.json()["id"]), what="second analysis")
    assert Job.objects.count() == 1 and Failure.objects.count() == 1
    assert Signature.objects.get().failure_count == 1
    assert len(es_search(match_all={})) == 1


def test_identical_failures_on_different_machines_share_a_signature(client, api_token, celery_worker):
    other_node = (FIXTURES / "oom-node3.log").read_text()
    a = post_json(client, api_token, {**job("1"), "log_text": OOM_LOG}).json()["id"]
    b = post_json(client, api_token, {**job("2", submitter="bob", gpus=4), "log_text": other_node}).json()["id"]
    fa = wait_for(lambda: analysed(a), what="job 1")
    fb = wait_for(lambda: analysed(b), what="job 2")

    assert fa.signature_id == fb.signature_id
    signature = Signature.objects.get(pk=fa.signature_id)
    assert signature.failure_count == 2
    assert signature.gpu_seconds == (8 + 4) * 2 * 3600


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["", "Token", "Token nope", "Basic abc"])
def test_requests_without_a_valid_token_are_refused(client, header):
    response = client.post("/api/v1/jobs", data="{}", content_type="application/json", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert "error" in response.json()


@pytest.mark.django_db
def test_revoked_and_out_of_scope_tokens_are_refused(client):
    from django.utils import timezone
    token, key = IngestToken.issue("old")
    IngestToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    assert post_json(client, key, job()).status_code == 401
    _, k8s_only = IngestToken.issue("k8s", platform="k8s")
    response = post_json(client, k8s_only, job())
    assert response.status_code == 403
    assert Job.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("body, field", [
    ("{not json", "body"),
    ("[1, 2]", "body"),
    ('{"platform": "slurm"}', "external_id"),
    (json.dumps(job(gpus="eight")), "gpus"),
    (json.dumps(job(started_at="yesterday")), "started_at"),
    (json.dumps(job(log_text=12)), "log_text"),
    (json.dumps(job(platform="bad platform!")), "platform"),
    ("[" * 100_000 + "]" * 100_000, "body"),
])
def test_bad_metadata_gets_a_clear_400_and_stores_nothing(client, api_token, body, field):
    response = post_json(client, api_token, body)
    assert response.status_code == 400
    assert field in response.json()["fields"]
    assert Job.objects.count() == 0


@pytest.mark.django_db
def test_unsupported_content_type_and_method(client, api_token):
    response = client.post("/api/v1/jobs", data="x", content_type="text/plain", HTTP_AUTHORIZATION=f"Token {api_token}")
    assert response.status_code == 415
    assert client.get("/api/v1/jobs", HTTP_AUTHORIZATION=f"Token {api_token}").status_code == 405


def test_binary_log_is_refused_and_the_stored_job_is_untouched(client, api_token, celery_worker):
    first = post_json(client, api_token, {**job(), "log_text": OOM_LOG}).json()
    before = wait_for(lambda: analysed(first["id"]), what="analysis")
    png = io.BytesIO(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64)
    png.name = "x.png"
    response = client.post("/api/v1/jobs", data={"metadata": json.dumps(job(name="renamed")), "log": png},
                           HTTP_AUTHORIZATION=f"Token {api_token}")

    assert response.status_code == 400
    assert "binary" in response.json()["error"]
    stored = Job.objects.get(pk=first["id"])
    assert stored.name == "bert-large" and stored.log_sha256
    assert Failure.objects.get(job=stored).category == before.category == "gpu_oom"


def test_invalid_utf8_nul_bytes_and_empty_logs_ingest_cleanly(client, api_token, celery_worker):
    weird = io.BytesIO(b"step 1 loss 0.5\n\xff\xfe caf\xe9 \x00\nKeyError: 'learning_rate'\n")
    weird.name = "weird.log"
    empty = io.BytesIO(b"")
    empty.name = "empty.log"
    a = client.post("/api/v1/jobs", data={"metadata": json.dumps(job("w")), "log": weird},
                    HTTP_AUTHORIZATION=f"Token {api_token}")
    b = client.post("/api/v1/jobs", data={"metadata": json.dumps(job("e")), "log": empty},
                    HTTP_AUTHORIZATION=f"Token {api_token}")

    assert a.status_code == b.status_code == 202
    assert wait_for(lambda: analysed(a.json()["id"]), what="weird log").category == "key_not_found"
    empty_failure = wait_for(lambda: analysed(b.json()["id"]), what="empty log")
    assert empty_failure.category == "unclassified" and empty_failure.found is False


def test_oom_kill_from_exit_code_without_error_in_log(client, api_token, celery_worker):
    response = post_json(client, api_token, {**job(exit_code=137), "log_text": "epoch 1 step 5 loss 0.3\n"})
    failure = wait_for(lambda: analysed(response.json()["id"]), what="analysis")
    assert failure.category == "cpu_oom"
    assert failure.rule == "cpu_oom.exit_code_sigkill"


def test_succeeded_job_is_stored_without_a_failure(client, api_token, celery_worker):
    response = post_json(client, api_token, {**job(status="succeeded"), "log_text": "done\n"})
    wait_for(lambda: Job.objects.filter(pk=response.json()["id"], ingest_state="analysed").exists(), what="job")
    assert not Failure.objects.exists()


def test_signature_counters_follow_reanalysis(client, api_token, celery_worker):
    """Counters are kept incrementally: a re-sent job with more GPUs adjusts, a job whose log now
    shows another failure moves to the other signature and the first one is recounted."""
    a = post_json(client, api_token, {**job("1"), "log_text": OOM_LOG}).json()["id"]
    post_json(client, api_token, {**job("2", team="speech"), "log_text": OOM_LOG})
    wait_for(lambda: Failure.objects.filter(indexed_at__isnull=False).count() == 2, what="two failures")
    assert Signature.objects.get().teams == ["nlp", "speech"]
    oom = Signature.objects.get()
    assert (oom.failure_count, oom.gpu_seconds) == (2, 2 * 8 * 2 * 3600)

    post_json(client, api_token, {**job("1", gpus=16), "log_text": OOM_LOG})
    wait_for(lambda: Signature.objects.get(pk=oom.pk).gpu_seconds == (8 + 16) * 2 * 3600, what="GPU time adjusted")
    post_json(client, api_token, {**job("1"), "log_text": "KeyError: 'lr'\n"})
    moved = wait_for(lambda: Failure.objects.filter(job_id=a, category="key_not_found", indexed_at__isnull=False).first(),
                     what="re-analysis")
    oom.refresh_from_db()
    assert (oom.failure_count, oom.gpu_seconds) == (1, 8 * 2 * 3600)
    assert oom.teams == ["speech"]  # job 1 (nlp) moved to another signature
    assert moved.signature.failure_count == 1


@pytest.mark.django_db
def test_oversized_json_body_gets_413(client, api_token, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = post_json(client, api_token, {**job(), "log_text": "x" * 5000})
    assert response.status_code == 413 and "multipart" in response.json()["error"]
    assert Job.objects.count() == 0


@pytest.fixture
def rate_limits(settings):
    """Small limits and a key prefix of this test's own on the real Redis (counters of other runs
    never interfere); the counters are deleted afterwards."""
    import uuid

    import redis
    prefix = f"test-ratelimit-{uuid.uuid4().hex[:8]}"
    settings.JOBTRIAGE_RATE_LIMIT_KEY_PREFIX = prefix
    settings.JOBTRIAGE_RATE_LIMIT_PER_TOKEN = 3
    settings.JOBTRIAGE_RATE_LIMIT_ANONYMOUS = 2
    settings.JOBTRIAGE_RATE_LIMIT_WINDOW = 60
    settings.JOBTRIAGE_RATE_LIMIT_REDIS_URL = settings.CELERY_BROKER_URL
    server = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    yield server
    for key in server.scan_iter(f"{prefix}:*"):
        server.delete(key)


@pytest.mark.django_db
def test_each_token_has_its_own_rate_limit(client, rate_limits):
    _, key_a = IngestToken.issue("a")
    _, key_b = IngestToken.issue("b")
    answers = [post_json(client, key_a, job(str(n))) for n in range(5)]

    assert [r.status_code for r in answers] == [202, 202, 202, 429, 429]
    refused = answers[3]
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json()["retry_after"] == int(refused["Retry-After"])
    assert refused.json()["limit"] == 3 and "rate limit" in refused.json()["error"]
    assert set(Job.objects.values_list("external_id", flat=True)) == {"0", "1", "2"}  # refused = not stored
    assert post_json(client, key_b, job("b1")).status_code == 202  # another token is not affected
    # The counter lives in Redis (shared by every web process) and expires with its window.
    from django.conf import settings
    counters = list(rate_limits.scan_iter(f"{settings.JOBTRIAGE_RATE_LIMIT_KEY_PREFIX}:*:token:*"))
    assert len(counters) == 2
    assert sorted(int(rate_limits.get(k)) for k in counters) == [1, 5]
    assert all(0 < rate_limits.ttl(k) <= 60 for k in counters)


@pytest.mark.django_db
def test_failed_authentication_is_limited_per_client_address(client, rate_limits, api_token):
    answers = [post_json(client, "wrong-token", job(), REMOTE_ADDR="10.0.0.7") for _ in range(4)]
    assert [r.status_code for r in answers] == [401, 401, 429, 429]
    assert int(answers[2]["Retry-After"]) >= 1 and "address" in answers[2].json()["error"]
    assert post_json(client, "wrong-token", job(), REMOTE_ADDR="10.0.0.8").status_code == 401
    # A valid token from the limited address still gets in: only failed attempts count there.
    assert post_json(client, api_token, job(), REMOTE_ADDR="10.0.0.7").status_code == 202


@pytest.mark.django_db
def test_forwarded_address_is_used_only_behind_trusted_proxies(client, rate_limits, settings):
    settings.JOBTRIAGE_TRUSTED_PROXIES = 1
    spoofed = [post_json(client, "nope", job(), REMOTE_ADDR="10.0.0.1",
                         HTTP_X_FORWARDED_FOR=f"1.2.3.{n}, 192.0.2.9") for n in range(3)]
    # The proxy appended the real address (192.0.2.9); the forged left part changes nothing.
    assert [r.status_code for r in spoofed] == [401, 401, 429]
    assert post_json(client, "nope", job(), REMOTE_ADDR="10.0.0.1",
                     HTTP_X_FORWARDED_FOR="192.0.2.10").status_code == 401


@pytest.mark.django_db
def test_rate_limiter_fails_open_when_redis_is_unreachable(client, rate_limits, settings, api_token, caplog):
    import socket
    with socket.socket() as probe:  # a port nothing listens on: a real connection refusal
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.JOBTRIAGE_RATE_LIMIT_REDIS_URL = f"redis://127.0.0.1:{port}/0"
    from jobs_ingest import ratelimit
    ratelimit._last_outage_log = 0.0
    with caplog.at_level("WARNING", logger="jobs_ingest.ratelimit"):
        answers = [post_json(client, api_token, job(str(n))) for n in range(5)]

    assert [r.status_code for r in answers] == [202] * 5
    assert Job.objects.count() == 5
    outage_logs = [r for r in caplog.records if "cannot reach Redis" in r.getMessage()]
    assert len(outage_logs) == 1  # logged, but not once per request


@pytest.mark.django_db
def test_rate_limit_zero_means_unlimited(client, rate_limits, settings, api_token):
    settings.JOBTRIAGE_RATE_LIMIT_PER_TOKEN = 0
    assert {post_json(client, api_token, job(str(n))).status_code for n in range(6)} == {202}


def test_a_json_array_is_stored_as_one_batch_with_a_result_per_item(client, api_token, celery_worker):
    body = [{**job(f"b{n}"), "log_text": OOM_LOG} for n in range(3)] + [
        {**job("b0"), "log_text": OOM_LOG + "\n"},           # the same job again in the batch: the last copy wins
        {"platform": "slurm", "status": "failed"},            # no external_id
        "not an object"]
    response = post_json(client, api_token, body)
    assert response.status_code == 207, response.content
    result = response.json()
    assert (result["accepted"], result["rejected"]) == (4, 2)
    assert [r["status"] for r in result["results"]] == [202, 202, 202, 202, 400, 400]
    assert result["results"][4]["fields"] == {"external_id": "is required"}
    assert result["results"][0]["id"] == result["results"][3]["id"]
    assert Job.objects.filter(external_id__startswith="b").count() == 3
    wait_for(lambda: Failure.objects.filter(job__external_id__startswith="b", indexed_at__isnull=False).count() == 3,
             what="the batch analysed and indexed")
    assert Signature.objects.get().failure_count == 3  # one signature, counted once per job

    all_good = post_json(client, api_token, [job("b9")])
    assert all_good.status_code == 202 and all_good.json()["results"][0]["created"] is True


def test_bulk_items_outside_a_scoped_token_are_refused_one_by_one(client, db, log_dir):
    _, nlp_key = IngestToken.issue("nlp scheduler", team="nlp")
    _, vision_key = IngestToken.issue("vision scheduler", team="vision")
    assert post_json(client, vision_key, [job("v1", team="vision")]).status_code == 202
    response = post_json(client, nlp_key, [job("n1"), job("v2", team="vision"), job("v1", team="nlp")])
    statuses = [r["status"] for r in response.json()["results"]]
    assert response.status_code == 207 and statuses == [202, 403, 409]  # no takeover of vision's v1
    assert Job.objects.get(external_id="v1").team == "vision"
    assert not Job.objects.filter(external_id="v2").exists()


def test_too_many_jobs_in_one_request_is_a_clear_400(client, api_token, settings):
    settings.JOBTRIAGE_API_MAX_BATCH = 2
    response = post_json(client, api_token, [job("x1"), job("x2"), job("x3")])
    assert response.status_code == 400 and response.json()["fields"] == {"body": "at most 2 jobs per request"}
    assert not Job.objects.exists()
