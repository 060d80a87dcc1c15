"""A burst of jobs while the worker is killed and replaced: nothing accepted is lost or counted twice.

The jobs are sent as bulk API requests (100 per request) while a worker analyses them in batches; the whole
worker is killed with SIGKILL in the middle of the burst and a new one started. Its unacknowledged batches
come back after the broker's visibility timeout; ids still waiting in the analysis buffer are drained by the
new worker, and beat's requeue_pending catches anything between the two. The full 10,000-job version is
bench/burst.py (RELIABILITY.md); this is the same path at 500 jobs."""
import json
import os
import signal

from .stack import wait_for

LOGS = ["Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
        f"KeyError: 'feature_{n}'\n" for n in range(5)] + [
        "step 10 loss 2.1\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total)\n"]
JOBS, PER_REQUEST = 500, 100


def test_burst_with_the_worker_killed_and_replaced_loses_nothing(stack_factory):
    stack = stack_factory(CELERY_VISIBILITY_TIMEOUT=6, JOBTRIAGE_REQUEUE_EVERY=5, JOBTRIAGE_REQUEUE_AFTER=20)
    stack.start_api()
    worker = stack.start_worker()
    stack.start_beat()
    for start in range(0, JOBS, PER_REQUEST):
        batch = [stack.job(f"burst-{n}", LOGS[n % len(LOGS)]) for n in range(start, start + PER_REQUEST)]
        status, body, _ = stack.post(json.dumps(batch).encode(), "application/json")
        assert status == 202 and body["accepted"] == PER_REQUEST, body
        if start == 2 * PER_REQUEST:
            wait_for(lambda: stack.counts().analysed > 0, timeout=60, what="the first batches analysed")
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
            stack.start_worker("worker2")

    final = wait_for(lambda: (c := stack.counts()).indexed == JOBS and c.analysed == JOBS and c, timeout=240,
                     what=f"all {JOBS} jobs analysed and indexed after the worker was replaced")
    assert (final.jobs, final.distinct_jobs, final.failures, final.distinct_failures) == (JOBS,) * 4
    assert (final.documents, final.distinct_documents) == (JOBS, JOBS)
    assert final.miscounted_signatures == []
    stack.check_alive("worker2")
