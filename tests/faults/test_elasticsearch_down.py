"""Elasticsearch down during ingestion: jobs are stored and analysed in PostgreSQL meanwhile, and
their failures are indexed once Elasticsearch returns, by the retrying indexing task and beat's
`requeue_pending`; with no worker left, `manage.py reindex --pending` repairs what is left."""
from .stack import wait_for

LOG = "epoch 3 step 900 loss 0.41\nTraceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n" \
      "    batch = next(it)\nFileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0007.tar'\n"


def send_while_elasticsearch_is_down(stack, how_many):
    stack.servers.stop_elasticsearch()
    answers = [stack.send_json(stack.job(f"job-{n}", LOG)) for n in range(how_many)]
    assert [status for status, _, _ in answers] == [202] * how_many, answers
    counts = wait_for(lambda: (c := stack.counts()).failures == c.analysed == how_many and c, timeout=120,
                      what=f"{how_many} failures analysed with Elasticsearch down")
    assert (counts.jobs, counts.distinct_jobs, counts.analysed, counts.indexed) == (how_many, how_many, how_many, 0)
    assert counts.documents is None  # really down


def test_failures_are_indexed_by_the_workers_once_elasticsearch_returns(stack_factory):
    stack = stack_factory(JOBTRIAGE_REQUEUE_EVERY=3, JOBTRIAGE_REQUEUE_AFTER=3)
    stack.start_api()
    stack.start_worker()
    stack.start_beat()
    send_while_elasticsearch_is_down(stack, 12)

    stack.servers.start()  # Elasticsearch returns; nobody runs anything by hand
    final = wait_for(lambda: (c := stack.counts()).indexed == 12 and c, timeout=180,
                     what="the 12 failures indexed after Elasticsearch returned")

    assert (final.jobs, final.distinct_jobs, final.failures, final.distinct_failures) == (12, 12, 12, 12)
    assert (final.documents, final.distinct_documents) == (12, 12)
    assert final.miscounted_signatures == []


def test_reindex_pending_repairs_what_no_worker_indexed(stack_factory):
    stack = stack_factory()  # no beat: only the command will index
    stack.start_api()
    stack.start_worker()
    send_while_elasticsearch_is_down(stack, 8)
    stack.stop("worker")  # its indexing retries stay queued; nothing indexes until someone acts

    stack.servers.start()
    assert stack.counts().indexed == 0
    result = stack.manage("reindex", "--pending")

    assert result.returncode == 0, result.stdout + result.stderr
    final = stack.counts()
    assert (final.jobs, final.failures, final.indexed) == (8, 8, 8)
    assert (final.documents, final.distinct_documents) == (8, 8)
    again = stack.manage("reindex", "--pending")  # nothing left: a second run changes nothing
    assert again.returncode == 0 and stack.counts().documents == 8
