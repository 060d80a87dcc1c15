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
