"""Scale-out on the existing engines (#16.6): two worker processes with different host names share one
queue; every job is analysed and indexed once, by whichever worker took its batch, and both took some.
The API and the workers run with PostgreSQL connection pooling (DATABASE_POOL=1)."""
import json
import subprocess
import sys

from .stack import REPO, wait_for

POOL_PROBE = ("import django; django.setup(); from django.db import connection; connection.ensure_connection(); "
              "print(type(connection.pool).__name__)")

LOG = "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\nKeyError: 'feature_{n}'\n"
JOBS, PER_REQUEST = 1000, 100


def test_two_workers_with_different_host_names_share_the_queue(stack_factory):
    # many batches, so that both workers get some; every process on a psycopg connection pool
    stack = stack_factory(JOBTRIAGE_BATCH_SIZE=25, DATABASE_POOL=1, DATABASE_POOL_MAX_SIZE=4)
    probe = subprocess.run([sys.executable, "-c", POOL_PROBE], cwd=REPO, capture_output=True, text=True, timeout=60,
                           env=stack.env | {"DJANGO_SETTINGS_MODULE": "jobtriage.settings"})
    assert probe.stdout.strip() == "ConnectionPool", probe.stderr
    stack.start_api()
    stack.start_worker("worker-a")
    stack.start_worker("worker-b")
    for start in range(0, JOBS, PER_REQUEST):
        batch = [stack.job(f"scale-{n}", LOG.format(n=n % 7)) for n in range(start, start + PER_REQUEST)]
        status, body, _ = stack.post(json.dumps(batch).encode(), "application/json")
        assert status == 202 and body["accepted"] == PER_REQUEST, body

    final = wait_for(lambda: (c := stack.counts()).indexed == JOBS and c.analysed == JOBS and c, timeout=240,
                     what=f"all {JOBS} jobs analysed and indexed by two workers")
    assert (final.jobs, final.distinct_jobs, final.failures, final.distinct_failures) == (JOBS,) * 4
    assert (final.documents, final.distinct_documents) == (JOBS, JOBS)
    assert final.miscounted_signatures == []
    for name in ("worker-a", "worker-b"):
        log = stack.log_of(name)
        assert "jobs_ingest.tasks.analyse_jobs[" in log and "succeeded" in log, f"{name} analysed no batch"
