import uuid

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_celery_queue():
    """Tasks that tests enqueue go to a queue of their own, so that a development worker running
    on the same Redis never picks them up (and a test never picks up theirs)."""
    from jobtriage.celery import app

    queue = f"test-session-{uuid.uuid4().hex[:8]}"
    app.conf.task_default_queue = queue
    yield queue
    try:
        with app.connection_for_write() as connection:
            connection.default_channel.client.delete(queue)
    except Exception:  # Redis may not run for pure unit-test sessions
        pass


@pytest.fixture
def es_prefix(settings):
    """A fresh Elasticsearch index prefix for one test, on the real server; its indices and templates
    (failures and signatures) are removed afterwards."""
    from jobs_ingest.search import index as search_index

    prefix = f"test-{uuid.uuid4().hex[:8]}"
    settings.ES_INDEX_PREFIX = prefix
    client = search_index.make_client(settings.ELASTICSEARCH_URL)
    if not search_index.health(client):
        pytest.fail(f"Elasticsearch is not answering at {settings.ELASTICSEARCH_URL}: run scripts/test.sh")
    yield prefix
    quiet = client.options(ignore_status=404)
    for name in quiet.indices.get(index=f"{prefix}-*") or {}:
        quiet.indices.delete(index=name)  # by name: wildcard deletes may be refused
    for kind in search_index.KINDS:
        quiet.indices.delete_index_template(name=search_index.template_name(prefix, kind))
