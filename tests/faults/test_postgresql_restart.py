"""PostgreSQL restarts while the API and a worker run: the API answers 503 with Retry-After while
it is down (nothing half-stored: the scheduler sends the job again), tasks that hit the outage are
retried, and in the end every job sent is stored, analysed and indexed exactly once."""
import threading
import time
import urllib.error
from collections import Counter

from .stack import wait_for

LOG = "step 1200 loss nan\nValueError: Expected input batch_size (32) to match target batch_size (16).\n"
JOBS = 30


def test_no_job_is_lost_across_a_postgresql_restart(stack_factory):
    stack = stack_factory(JOBTRIAGE_REQUEUE_EVERY=3, JOBTRIAGE_REQUEUE_AFTER=5)
    stack.start_api()
    stack.start_worker()
    stack.start_beat()
    seen = Counter()
    restarted = threading.Event()

    def restart():
        stack.servers.stop_postgresql()
        time.sleep(5)
        stack.servers.start()
        restarted.set()

    restarter = None
    for n in range(JOBS):
        if n == 10:
            restarter = threading.Thread(target=restart)
            restarter.start()
            time.sleep(0.5)
        deadline = time.monotonic() + 120
        while True:  # what a scheduler does: send again until accepted
            try:
                status, body, headers = stack.send_json(stack.job(f"job-{n}", LOG), timeout=30)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                status, body, headers = f"connection error {type(exc).__name__}", {}, {}
            seen[status] += 1
            if status == 202:
                break
            assert status == 503 and int(headers["Retry-After"]) > 0 and "database" in body["error"], (status, body)
            assert time.monotonic() < deadline, "the API did not recover after PostgreSQL restarted"
            time.sleep(0.5)  # shorter than Retry-After, to keep the test quick
    restarter.join(timeout=120)
    assert restarted.is_set()

    assert seen[202] == JOBS and seen[503] >= 1, seen  # the outage was really hit
    final = wait_for(lambda: (c := stack.counts()).indexed == JOBS and c, timeout=180,
                     what=f"the {JOBS} jobs analysed and indexed")
    assert (final.jobs, final.distinct_jobs, final.analysed) == (JOBS, JOBS, JOBS)
    assert (final.failures, final.distinct_failures) == (JOBS, JOBS)
    assert (final.documents, final.distinct_documents) == (JOBS, JOBS)
    assert final.miscounted_signatures == []
    stack.check_alive("worker")
    stack.check_alive("api")
