"""Redis (the Celery broker) down: the API keeps accepting jobs (202, stored in PostgreSQL first) and
nothing accepted is dropped. Redis keeps no data across a restart, so tasks queued before the
outage are lost with it; `requeue_pending` (run by beat) queues every stored-but-unanalysed job
again once the broker is back."""
import time

from .stack import wait_for

OOM = "step 10 loss 2.1\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total)\n"


def test_jobs_sent_while_redis_is_down_are_stored_and_analysed_when_it_returns(stack_factory):
    stack = stack_factory(JOBTRIAGE_REQUEUE_EVERY=2, JOBTRIAGE_REQUEUE_AFTER=2)
    stack.start_api()

    # 1. Queued but not yet consumed when Redis dies (no worker yet): their tasks die with Redis.
    before = [stack.send_json(stack.job(f"before-{n}", OOM)) for n in range(5)]
    assert [status for status, _, _ in before] == [202] * 5
    stack.servers.stop_redis()

    # 2. Sent while Redis is down: accepted and stored, answered promptly (the rate limiter fails
    #    open, publishing gives up after about a second).
    during, slowest = [], 0.0
    for n in range(10):
        started = time.monotonic()
        during.append(stack.send_json(stack.job(f"during-{n}", OOM), timeout=60))
        slowest = max(slowest, time.monotonic() - started)
    assert [status for status, _, _ in during] == [202] * 10, during
    assert slowest < 10, f"a request took {slowest:.1f}s with the broker down"
    stored = stack.counts()
    assert (stored.jobs, stored.distinct_jobs, stored.analysed) == (15, 15, 0)

    # 3. Redis returns (empty). A worker and beat start; requeue_pending finds the 15 stored jobs.
    stack.servers.start()
    stack.start_worker()
    stack.start_beat()
    final = wait_for(lambda: (c := stack.counts()).indexed == 15 and c, timeout=120,
                     what="all 15 jobs analysed and indexed after Redis returned")

    assert (final.jobs, final.distinct_jobs, final.analysed) == (15, 15, 15)
    assert (final.failures, final.distinct_failures) == (15, 15)
    assert (final.documents, final.distinct_documents) == (15, 15)
    # Re-queued more than once (every 2 s here) is harmless: one failure per job, counted once.
    assert final.miscounted_signatures == []
    assert "requeued" in stack.log_of("worker")
