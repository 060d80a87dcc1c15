"""A worker killed (SIGKILL) while it analyses a large log: the task is delivered again (`acks_late`;
the whole worker: after the broker's visibility timeout, set to a few seconds here; only its pool
process: at once, `task_reject_on_worker_lost`) and the result is the same as one clean run: one
job, one failure, signature counters not doubled, one search document."""
import os
import signal
import time
from pathlib import Path

import pytest

from .stack import wait_for

RETRIED = b"2026-11-16 08:00:01 WARNING NCCL watchdog: retrying after error: ConnectionResetError (attempt 3)\n"


@pytest.fixture(scope="module")
def slow_log(tmp_path_factory) -> Path:
    """~60 MB whose every window mentions an error the parser must read and skip (retried errors),
    with the real failure at the very start: the analysis takes seconds (3.4 s on a machine that reads 1,500
    development logs a second), long enough to be killed."""
    path = tmp_path_factory.mktemp("slow") / "slow.log"
    with open(path, "wb") as f:
        f.write(b"Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                b"KeyError: 'learning_rate'\n")
        block = RETRIED * 10_000
        for _ in range(60 * 1024 * 1024 // len(block)):
            f.write(block)
    return path


def pool_children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@pytest.mark.parametrize("victim", ["whole worker", "pool process"])
def test_task_of_a_killed_worker_is_redelivered_and_counted_once(stack_factory, slow_log, victim):
    stack = stack_factory(CELERY_VISIBILITY_TIMEOUT=6)
    stack.start_api()
    worker = stack.start_worker()
    metadata = {k: v for k, v in stack.job("big-1", "").items() if k != "log_text"}
    status, body, _ = stack.send_file(metadata, slow_log)
    assert status == 202, body

    wait_for(lambda: "analyse_jobs[" in stack.log_of("worker") and " received" in stack.log_of("worker"),
             timeout=60, what="the worker to take the analysis task")
    time.sleep(0.3)   # inside the analysis; a fixed 1.5 s outlasted the whole of a 30 MB one on a fast machine
    assert stack.counts().analysed == 0, "the analysis finished before the kill: make the log larger"
    if victim == "whole worker":
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        stack.start_worker("worker2")  # the unacknowledged task comes back after the visibility timeout
        logs = ("worker", "worker2")
    else:
        children = pool_children(worker.pid)
        assert len(children) == 1
        os.kill(children[0], signal.SIGKILL)
        logs = ("worker",)

    final = wait_for(lambda: (c := stack.counts()).indexed == 1 and c.analysed == 1 and c, timeout=180,
                     what="the redelivered analysis")
    assert (final.jobs, final.failures, final.distinct_failures) == (1, 1, 1)
    assert (final.documents, final.distinct_documents) == (1, 1)
    assert final.miscounted_signatures == []
    (gpu_seconds, category), = stack.servers.sql(
        "SELECT f.gpu_seconds, f.category FROM jobs_ingest_failure f JOIN jobs_ingest_job j ON j.id = f.job_id"
        " WHERE j.platform = %s", stack.platform)
    assert gpu_seconds == 4 * 3600  # 4 GPUs for one hour, counted once
    deliveries = sum(stack.log_of(name).count("analyse_jobs[") and stack.log_of(name).count(" received")
                     for name in logs)
    assert deliveries >= 2, "the task was not delivered a second time"
    stack.check_alive(logs[-1])
