"""Token scope on every token API, read and write (issue #12): each API against an unscoped, a
platform-scoped, a team-scoped and a revoked token, on the real PostgreSQL and Elasticsearch.

The attack that opened the issue: a token made with `--team team-a` read a team-b job and took it over
by POSTing the same platform + external id with `"team": "team-a"`."""
import json
from pathlib import Path

import pytest
from django.utils import timezone

from jobs_ingest import failures, services
from jobs_ingest.search import sync
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import IngestToken, Job

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir" / "logs"
OOM_LOG = (LOGS / "oom-node7.log").read_text()
SCOPES = {"unscoped": {}, "platform": {"platform": "slurm"}, "team": {"team": "team-a"}}


def spec(external_id, platform, team, **extra):
    return {"platform": platform, "external_id": external_id, "team": team, "name": "bert", "submitter": "alice",
            "status": "failed", "gpus": 8, "exit_code": 1, "started_at": "2026-11-16T08:00:00Z",
            "ended_at": "2026-11-16T10:00:00Z", **extra}


@pytest.fixture
def jobs(db, log_dir, es, es_prefix):
    """Three analysed and indexed jobs with the same failure: slurm/team-a, slurm/team-b, k8s/team-a."""
    made = {}
    for key, platform, team in (("a", "slurm", "team-a"), ("b", "slurm", "team-b"), ("k", "k8s", "team-a")):
        with open(LOGS / "oom-node7.log", "rb") as stream:
            job = services.receive_job(parse_job(spec(f"ext-{key}", platform, team)), stream).job
        failures.analyse(job.pk)
        made[key] = Job.objects.get(pk=job.pk)
    sync.index_failures([j.failure.pk for j in made.values()])
    es.indices.refresh(index=f"{es_prefix}-*")
    return made


def token_for(scope: str) -> str:
    if scope == "revoked":
        token, key = IngestToken.issue("revoked")
        IngestToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
        return key
    return IngestToken.issue(scope, **SCOPES[scope])[1]


def get_job(client, key, job_id):
    return client.get(f"/api/v1/jobs/{job_id}", HTTP_AUTHORIZATION=f"Token {key}")


def post_job(client, key, body):
    return client.post("/api/v1/jobs", data=json.dumps(body), content_type="application/json",
                       HTTP_AUTHORIZATION=f"Token {key}")


def similar(client, key, **filters):
    return client.post("/api/v1/similar", data=json.dumps({"text": OOM_LOG, "filters": filters}),
                       content_type="application/json", HTTP_AUTHORIZATION=f"Token {key}")


# ---------------------------------------------------------------- GET /api/v1/jobs/<id>

READABLE = {"unscoped": {"a", "b", "k"}, "platform": {"a", "b"}, "team": {"a", "k"}, "revoked": set()}


@pytest.mark.parametrize("scope", ["unscoped", "platform", "team", "revoked"])
def test_job_status_reads_only_jobs_in_scope(client, jobs, scope):
    key = token_for(scope)
    missing = get_job(client, key, max(j.pk for j in jobs.values()) + 1000)
    for name, job in jobs.items():
        response = get_job(client, key, job.pk)
        if scope == "revoked":
            assert response.status_code == 401
        elif name in READABLE[scope]:
            assert response.status_code == 200 and response.json()["external_id"] == job.external_id
        else:
            # Outside the scope looks exactly like a job that does not exist.
            assert (response.status_code, response.json()) == (404, missing.json()) == (404, {"error": "no such job"})


# ---------------------------------------------------------------- POST /api/v1/jobs

@pytest.mark.parametrize("scope", ["unscoped", "platform", "team", "revoked"])
def test_submit_creates_jobs_only_in_scope(client, db, log_dir, scope):
    key = token_for(scope)
    for platform, team in (("slurm", "team-a"), ("slurm", "team-b"), ("k8s", "team-a")):
        external_id = f"new-{platform}-{team}"
        response = post_job(client, key, spec(external_id, platform, team, log_text=OOM_LOG))
        allowed = scope != "revoked" and IngestToken(**SCOPES.get(scope, {})).allows(platform, team)
        expected = 401 if scope == "revoked" else 202 if allowed else 403
        assert response.status_code == expected, (platform, team, response.content)
        assert Job.objects.filter(external_id=external_id).exists() == allowed


@pytest.mark.parametrize("scope", ["unscoped", "platform", "team", "revoked"])
def test_submit_never_takes_over_a_job_outside_scope(client, jobs, scope):
    """Same platform + external id as an existing job, claiming a team/platform the token may use."""
    key = token_for(scope)
    victim = jobs["b"]   # slurm / team-b: in the platform scope, outside the team scope
    before = Job.objects.values().get(pk=victim.pk)
    response = post_job(client, key, spec(victim.external_id, "slurm", "team-a", log_text="stolen\n"))
    after = Job.objects.values().get(pk=victim.pk)
    if scope == "team":
        assert response.status_code == 409, response.content
        assert "outside this token's scope" in response.json()["error"]
        assert after == before   # team, log, state: nothing changed
    elif scope == "revoked":
        assert response.status_code == 401 and after == before
    else:  # unscoped and slurm-scoped tokens may update slurm jobs of any team
        assert response.status_code == 202 and response.json()["created"] is False
        assert after["team"] == "team-a"


@pytest.mark.parametrize("scope", ["unscoped", "platform", "team"])
def test_resending_a_job_in_scope_stays_idempotent(client, db, log_dir, scope):
    key = token_for(scope)
    first = post_job(client, key, spec("resend-1", "slurm", "team-a", log_text=OOM_LOG))
    second = post_job(client, key, spec("resend-1", "slurm", "team-a", log_text=OOM_LOG))
    assert (first.status_code, second.status_code) == (202, 202)
    assert (first.json()["created"], second.json()["created"]) == (True, False)
    assert first.json()["id"] == second.json()["id"]
    assert Job.objects.filter(external_id="resend-1").count() == 1


# ---------------------------------------------------------------- POST /api/v1/similar

@pytest.mark.parametrize("scope", ["unscoped", "platform", "team", "revoked"])
def test_similar_hits_show_only_jobs_in_scope(client, jobs, scope):
    key = token_for(scope)
    response = similar(client, key)
    if scope == "revoked":
        assert response.status_code == 401
        return
    assert response.status_code == 200, response.content
    hits = response.json()["hits"]
    assert hits, "the three jobs share one signature: there is always a hit"
    allowed = IngestToken(**SCOPES[scope])
    for hit in hits:
        assert allowed.allows(hit["platform"], hit["team"]), hit
        job = Job.objects.get(pk=int(hit["job_id"]))
        assert allowed.allows(job.platform, job.team)


@pytest.mark.parametrize("scope", ["platform", "team"])
def test_similar_refuses_to_widen_the_scope_by_filter(client, jobs, scope):
    key = token_for(scope)
    outside = {"platform": {"platform": "k8s"}, "team": {"team": "team-b"}}[scope]
    response = similar(client, key, **outside)
    assert response.status_code == 200 and response.json()["hits"] == []
