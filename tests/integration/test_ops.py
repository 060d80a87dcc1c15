"""Operators' endpoints on the real servers: /healthz reports PostgreSQL, Redis and Elasticsearch
separately; /metrics is Prometheus text for a bearer token or a staff login only."""
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from jobs_ingest import services
from jobs_ingest.jobspec import parse_job

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "ingest_dir" / "logs"
CLOSED = "127.0.0.1:9"   # the discard port: nothing listens there on this machine


@pytest.mark.django_db
def test_healthz_reports_each_server(client):
    response = client.get("/healthz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok"
    assert {name: check["ok"] for name, check in body["checks"].items()} == {
        "postgresql": True, "redis": True, "elasticsearch": True}


@pytest.mark.django_db
def test_healthz_names_the_server_that_is_down_and_nothing_else(client, settings):
    settings.CELERY_BROKER_URL = f"redis://{CLOSED}/0"
    settings.ELASTICSEARCH_URL = f"http://{CLOSED}"
    response = client.get("/healthz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert (checks["postgresql"]["ok"], checks["redis"]["ok"], checks["elasticsearch"]["ok"]) == (True, False, False)
    assert CLOSED not in response.content.decode()   # no URL or error text leaks


@pytest.fixture
def metrics_token(settings):
    settings.JOBTRIAGE_METRICS_TOKEN = "metrics-secret-for-tests"
    return settings.JOBTRIAGE_METRICS_TOKEN


@pytest.mark.django_db
def test_metrics_are_refused_without_the_token_or_a_staff_login(client, metrics_token):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    client.force_login(User.objects.create_user("plain", password="x"))
    assert client.get("/metrics").status_code == 401


def gauge(text: str, name: str, labels: str = "") -> float:
    match = re.search(rf"^{name}{re.escape(labels)} (\S+)$", text, re.M)
    assert match, f"{name}{labels} not in the metrics"
    return float(match.group(1))


@pytest.mark.django_db
def test_metrics_report_the_pipeline(client, metrics_token, log_dir):
    for n in range(3):   # stored, never analysed: their analysis is queued only on commit
        with open(LOGS / "oom-node7.log", "rb") as stream:
            services.receive_job(parse_job({"platform": "slurm", "external_id": f"m{n}", "status": "failed"}), stream)
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert gauge(text, "jobtriage_jobs_awaiting_analysis") == 3
    assert gauge(text, "jobtriage_indexing_backlog") == 0
    assert gauge(text, "jobtriage_jobs_analysis_failed") == 0
    assert gauge(text, "jobtriage_ingest_lag_oldest_seconds") >= 0
    assert gauge(text, "jobtriage_queue_depth", '{queue="celery"}') >= 0
    assert "django_http_requests_total_by_method_total" in text   # django-prometheus's own


@pytest.mark.django_db
def test_staff_can_read_metrics(client):
    client.force_login(User.objects.create_user("ops", password="x", is_staff=True))
    assert client.get("/metrics").status_code == 200
