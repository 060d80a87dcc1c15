"""Integration fixtures: the real PostgreSQL, Redis-backed Celery worker and Elasticsearch that
scripts/test.sh starts. Nothing here is mocked; if a server is missing the tests fail and say so."""
import uuid

import pytest
from django.conf import settings

from jobs_ingest.search import index as search_index
from tests.waiting import wait_for  # noqa: F401  (imported by the tests from here)


@pytest.fixture(autouse=True)
def _require_postgresql():
    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" not in engine:
        pytest.fail(f"integration tests need the real PostgreSQL (DATABASE_URL), got {engine}: run scripts/test.sh")


@pytest.fixture
def log_dir(tmp_path, settings):
    settings.JOBTRIAGE_LOG_DIR = tmp_path / "logs"
    return settings.JOBTRIAGE_LOG_DIR


@pytest.fixture
def es(es_prefix, settings):
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    search_index.ensure_index(client, es_prefix)
    return client


@pytest.fixture
def celery_worker(transactional_db, log_dir, es_prefix):
    """A real Celery worker thread consuming a private queue on the real Redis broker."""
    from celery.contrib.testing.worker import start_worker

    from jobtriage.celery import app

    queue, previous = f"test-{uuid.uuid4().hex[:8]}", app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, queues=[queue],
                          shutdown_timeout=30) as worker:
            yield worker
    finally:
        app.conf.task_default_queue = previous


@pytest.fixture
def api_token(transactional_db):
    from jobs_ingest.models import IngestToken
    return IngestToken.issue("test scheduler")[1]
