#!/usr/bin/env python3
"""A burst of 10,000 jobs while the worker is killed (SIGKILL, the whole process group) and replaced: every
accepted job must end stored, analysed and indexed exactly once. Loopback only, on the local servers.

    eval "$(scripts/servers.sh env)"; .venv/bin/python bench/burst.py [--jobs 10000] [--markdown]

gunicorn + a Celery worker + beat (requeue_pending every 10 s for jobs queued over 30 s; the broker's
visibility timeout 10 s, so a killed worker's unacknowledged batches come back quickly). Jobs are sent as
bulk requests of 100 by 4 senders; the worker is killed once a third of the burst is accepted. Database
jobtriage_bench_burst (re-created), Redis database 1, index prefix bench-burst. The same path at 500 jobs
is the fault test tests/faults/test_burst_restart.py.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_ingest import PYTHON, bench_env, manage, recreate_database  # noqa: E402
from bench.load_api import LOOPBACK, es_count, free_port, sample_logs, sql  # noqa: E402
from bench.timing import emit, row  # noqa: E402


def start_worker(env, name: str) -> subprocess.Popen:
    return subprocess.Popen([PYTHON, "-m", "celery", "-A", "jobtriage", "worker", "-c", "2", "-n", f"{name}@%h",
                             "-l", "warning", "--without-gossip", "--without-mingle"], cwd=ROOT, env=env,
                            stdout=sys.stderr, start_new_session=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    env = bench_env("jobtriage_bench_burst", es_prefix="bench-burst")
    env.update(JOBTRIAGE_RATE_LIMIT_PER_TOKEN="0", DJANGO_ALLOWED_HOSTS=LOOPBACK, CELERY_VISIBILITY_TIMEOUT="10",
               JOBTRIAGE_REQUEUE_EVERY="10", JOBTRIAGE_REQUEUE_AFTER="30",
               JOBTRIAGE_LOG_DIR=str(Path(env.get("TMPDIR", "/tmp")) / "jobtriage-bench-burst-logs"))
    recreate_database(env)
    manage(env, "ensure_search_index", stdout=subprocess.DEVNULL)
    token = manage(env, "create_token", "burst", capture_output=True, text=True).stdout.strip().split()[-1]
    port = free_port()
    processes = {
        "web": subprocess.Popen([PYTHON, "-m", "gunicorn", "jobtriage.wsgi:application", "--bind", f"{LOOPBACK}:{port}",
                                 "--workers", "3", "--log-level", "warning"], cwd=ROOT, env=env, stdout=sys.stderr),
        "beat": subprocess.Popen([PYTHON, "-m", "celery", "-A", "jobtriage", "beat", "-l", "warning", "-s",
                                  str(Path(env["JOBTRIAGE_LOG_DIR"]).parent / "burst-beat-schedule")], cwd=ROOT,
                                 env=env, stdout=sys.stderr),
        "worker": start_worker(env, "burst1"),
    }
    logs = sample_logs()
    accepted, lock, killed_at = [], threading.Lock(), []
    requests = [list(range(start, min(start + 100, args.jobs))) for start in range(0, args.jobs, 100)]

    def sender(chunks):
        conn = http.client.HTTPConnection(LOOPBACK, port, timeout=120)
        for numbers in chunks:
            body = json.dumps([{"platform": "burst", "external_id": f"burst-{n}", "status": "failed", "gpus": 4,
                                "exit_code": 1, "started_at": "2026-11-16T08:00:00Z", "ended_at": "2026-11-16T09:00:00Z",
                                "log_text": logs[n % len(logs)]} for n in numbers])
            conn.request("POST", "/api/v1/jobs", body=body, headers={"Content-Type": "application/json",
                                                                      "Authorization": f"Token {token}"})
            response = conn.getresponse()
            result = json.loads(response.read())
            with lock:
                accepted.extend(r["external_id"] for r in result.get("results", []) if r["status"] == 202)
                if not killed_at and len(accepted) >= args.jobs // 3:
                    killed_at.append(len(accepted))
                    os.killpg(processes["worker"].pid, signal.SIGKILL)
                    processes["worker"].wait(10)
                    processes["worker"] = start_worker(env, "burst2")

    try:
        time.sleep(3)
        t0 = time.monotonic()
        threads = [threading.Thread(target=sender, args=(requests[i::4],)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        sent = time.monotonic() - t0
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            (indexed,), = sql(env, "SELECT count(f.indexed_at) FROM jobs_ingest_failure f JOIN jobs_ingest_job j "
                                   "ON j.id = f.job_id WHERE j.platform = 'burst'")
            if indexed >= len(accepted):
                break
            time.sleep(1)
        done = time.monotonic() - t0
        (jobs, distinct), = sql(env, "SELECT count(*), count(DISTINCT external_id) FROM jobs_ingest_job WHERE platform = 'burst'")
        (failures, indexed), = sql(env, "SELECT count(*), count(f.indexed_at) FROM jobs_ingest_failure f "
                                        "JOIN jobs_ingest_job j ON j.id = f.job_id WHERE j.platform = 'burst'")
        miscounted = sql(env, "SELECT count(*) FROM jobs_ingest_signature s WHERE s.failure_count <> "
                              "(SELECT count(*) FROM jobs_ingest_failure f WHERE f.signature_id = s.id)")[0][0]
        docs, distinct_docs = es_count(env, platform="burst")
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            process.wait(60)
    lost = len(set(accepted)) - indexed
    duplicated = (jobs - distinct) + (failures - jobs) + (docs - distinct_docs)
    emit("burst", [row(f"burst of {args.jobs:,} jobs (bulk requests of 100, 4 senders), worker SIGKILLed and "
                       f"replaced after {killed_at[0] if killed_at else '?'} accepted",
                       f"{len(accepted):,} accepted in {sent:.1f} s; all analysed and indexed {done:.1f} s after the "
                       f"start; lost {lost}, duplicated {duplicated}, miscounted signatures {miscounted}",
                       f"{jobs} jobs, {failures} failures, {indexed} indexed, {docs} documents", None,
                       accepted=len(accepted), jobs=jobs, failures=failures, indexed=indexed, documents=docs,
                       lost=lost, duplicated=duplicated, miscounted=miscounted, send_seconds=sent, total_seconds=done)],
         markdown=args.markdown)
    if lost or duplicated or miscounted:
        raise SystemExit("burst FAILED: lost, duplicated or miscounted (see above)")


if __name__ == "__main__":
    main()
