#!/usr/bin/env python3
"""The ingestion API under load, on loopback only: gunicorn (as in production) and a Celery worker on the
local servers, then

1. steady: jobs sent at a fixed total rate (default 50 jobs/s) for a while; reports the ingest lag, from
   accepted (the job row's received_at) to searchable (its failure's indexed_at), p50/p95/p99;
2. load: N concurrent senders (default 50) posting as fast as they are answered for D seconds (default 60);
   reports the accepted rate, latency p50/p95/p99, answers by status (5xx must be 0);

then waits for the worker and checks in PostgreSQL and Elasticsearch: every accepted job stored, analysed
and indexed exactly once (0 lost, 0 duplicated).

    eval "$(scripts/servers.sh env)"; .venv/bin/python bench/load_api.py [--senders 50] [--seconds 60]
        [--steady-rate 50] [--steady-seconds 30] [--markdown]

Bounded: at most --max-requests requests, and each phase stops at its time. Database
jobtriage_bench_load (dropped and re-created), Redis database 1, index prefix bench-load; the per-token rate
limit is switched off for the run (JOBTRIAGE_RATE_LIMIT_PER_TOKEN=0), so the figures are the server's.
"""
from __future__ import annotations

import argparse
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_ingest import PYTHON, bench_env, manage, recreate_database  # noqa: E402
from bench.timing import emit, percentile, row  # noqa: E402

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def sample_logs() -> list[str]:
    records = [json.loads(line) for line in open(ROOT / "bench/devset/job_logs.jsonl", encoding="utf-8")]
    return [r["log"] for r in records[:200]]


class Sender(threading.Thread):
    """Posts jobs over one keep-alive connection until `stop_at`, optionally paced to `interval` seconds."""

    def __init__(self, n: int, port: int, token: str, logs: list[str], stop_at: float, prefix: str,
                 interval: float = 0.0, budget: list | None = None):
        super().__init__(daemon=True)
        self.n, self.port, self.token, self.logs, self.stop_at = n, port, token, logs, stop_at
        self.prefix, self.interval, self.budget = prefix, interval, budget
        self.latencies: list[float] = []
        self.statuses: Counter = Counter()
        self.accepted: list[str] = []

    def run(self) -> None:
        conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=60)
        i, next_at = 0, time.monotonic()
        while time.monotonic() < self.stop_at:
            if self.budget is not None:
                with LOCK:
                    if self.budget[0] <= 0:
                        return
                    self.budget[0] -= 1
            external_id = f"{self.prefix}-{self.n}-{i}"
            body = json.dumps({"platform": "load", "external_id": external_id, "status": "failed", "gpus": 8,
                               "exit_code": 1, "team": f"team{self.n % 4}", "started_at": "2026-11-16T08:00:00Z",
                               "ended_at": "2026-11-16T09:00:00Z", "log_text": self.logs[(self.n * 7 + i) % len(self.logs)]})
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/api/v1/jobs", body=body, headers={
                    "Content-Type": "application/json", "Authorization": f"Token {self.token}"})
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                status = "connection error"
                conn.close()
                conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=60)
            self.latencies.append(time.perf_counter() - t0)
            self.statuses[status] += 1
            if status == 202:
                self.accepted.append(external_id)
            i += 1
            if self.interval:
                next_at += self.interval
                time.sleep(max(0.0, next_at - time.monotonic()))
        conn.close()


LOCK = threading.Lock()


def run_senders(count, port, token, logs, seconds, prefix, interval=0.0, budget=None) -> list[Sender]:
    stop_at = time.monotonic() + seconds
    senders = [Sender(n, port, token, logs, stop_at, prefix, interval, budget) for n in range(count)]
    for s in senders:
        s.start()
    for s in senders:
        s.join(seconds + 120)
    return senders


def sql(env, query: str) -> list[tuple]:
    import psycopg
    with psycopg.connect(env["DATABASE_URL"]) as conn:
        return conn.execute(query).fetchall()


def wait_until_indexed(env, expected: int, timeout: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        (done,), = sql(env, "SELECT count(*) FROM jobs_ingest_failure f JOIN jobs_ingest_job j ON j.id = f.job_id "
                            "WHERE j.platform = 'load' AND f.indexed_at IS NOT NULL")
        if done >= expected:
            break
        time.sleep(0.5)
    return time.monotonic() - t0


def es_count(env, platform: str = "load") -> tuple[int, int]:
    from elasticsearch import Elasticsearch
    client = Elasticsearch(env.get("ELASTICSEARCH_URL", "http://127.0.0.1:59200"))
    alias = f"{env['ES_INDEX_PREFIX']}-failures"
    client.indices.refresh(index=alias)
    total = client.count(index=alias, query={"term": {"platform": platform}})["count"]
    distinct = client.search(index=alias, size=0, query={"term": {"platform": platform}},
                             aggs={"ids": {"cardinality": {"field": "external_id", "precision_threshold": 40000}}})
    return total, distinct["aggregations"]["ids"]["value"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--steady-rate", type=float, default=50)
    parser.add_argument("--steady-seconds", type=float, default=30)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--gunicorn-workers", type=int, default=3)
    parser.add_argument("--celery-workers", type=int, default=2)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    env = bench_env("jobtriage_bench_load", es_prefix="bench-load")
    env["JOBTRIAGE_RATE_LIMIT_PER_TOKEN"] = "0"
    env["DJANGO_ALLOWED_HOSTS"] = LOOPBACK
    env["JOBTRIAGE_LOG_DIR"] = str(Path(env.get("TMPDIR", "/tmp")) / "jobtriage-bench-load-logs")
    recreate_database(env)
    manage(env, "ensure_search_index", stdout=subprocess.DEVNULL)
    token = manage(env, "create_token", "load-test", capture_output=True, text=True).stdout.strip().split()[-1]
    port = free_port()
    web = subprocess.Popen([PYTHON, "-m", "gunicorn", "jobtriage.wsgi:application", "--bind", f"{LOOPBACK}:{port}",
                            "--workers", str(args.gunicorn_workers), "--log-level", "warning"],
                           cwd=ROOT, env=env, stdout=sys.stderr)
    worker = subprocess.Popen([PYTHON, "-m", "celery", "-A", "jobtriage", "worker", "-c", str(args.celery_workers),
                               "-l", "warning", "--without-gossip", "--without-mingle"], cwd=ROOT, env=env,
                              stdout=sys.stderr)
    logs, budget = sample_logs(), [args.max_requests]
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection((LOOPBACK, port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("gunicorn did not start")
                time.sleep(0.2)
        time.sleep(2)
        # 1. Steady rate: 10 senders, each paced to rate/10 jobs per second.
        steady = run_senders(10, port, token, logs, args.steady_seconds, "steady",
                             interval=10 / args.steady_rate, budget=budget)
        steady_accepted = sum(len(s.accepted) for s in steady)
        wait_until_indexed(env, steady_accepted, 120)
        lags = [r[0] for r in sql(env, "SELECT extract(epoch FROM f.indexed_at - j.received_at) FROM jobs_ingest_failure f "
                                       "JOIN jobs_ingest_job j ON j.id = f.job_id WHERE j.external_id LIKE 'steady-%%' "
                                       "AND f.indexed_at IS NOT NULL")]
        # 2. Load: N senders as fast as answered.
        t0 = time.monotonic()
        senders = run_senders(args.senders, port, token, logs, args.seconds, "load", budget=budget)
        elapsed = time.monotonic() - t0
        statuses = sum((s.statuses for s in senders), Counter())
        latencies = [x for s in senders for x in s.latencies]
        accepted = sum(len(s.accepted) for s in senders)
        total_accepted = accepted + steady_accepted
        drain = wait_until_indexed(env, total_accepted, 900)
        (jobs, distinct_jobs), = sql(env, "SELECT count(*), count(DISTINCT external_id) FROM jobs_ingest_job WHERE platform = 'load'")
        (failures, indexed), = sql(env, "SELECT count(*), count(f.indexed_at) FROM jobs_ingest_failure f "
                                        "JOIN jobs_ingest_job j ON j.id = f.job_id WHERE j.platform = 'load'")
        docs, distinct_docs = es_count(env)
    finally:
        web.terminate()
        worker.terminate()
        web.wait(60)
        worker.wait(60)
    accepted_ids = {i for s in [*steady, *senders] for i in s.accepted}
    lost = len(accepted_ids) - min(indexed, jobs)
    duplicated = (jobs - distinct_jobs) + (failures - jobs) + (docs - distinct_docs)
    five_xx = sum(n for status, n in statuses.items() if isinstance(status, int) and status >= 500)
    rows = [
        row(f"steady {args.steady_rate:g} jobs/s for {args.steady_seconds:g} s ({steady_accepted} jobs): ingest lag, "
            "accepted to searchable",
            f"p50 {percentile(lags, 50):.2f} s, p95 {percentile(lags, 95):.2f} s, p99 {percentile(lags, 99):.2f} s",
            "target: p95 <= 5 s", percentile(lags, 95) / 5, lag_p50=percentile(lags, 50), lag_p95=percentile(lags, 95),
            lag_p99=percentile(lags, 99), jobs=steady_accepted),
        row(f"{args.senders} concurrent senders for {elapsed:.0f} s (gunicorn {args.gunicorn_workers} workers, "
            f"Celery {args.celery_workers} processes)",
            f"{accepted / elapsed:,.0f} accepted jobs/s; latency p50 {1000 * percentile(latencies, 50):.0f} ms, "
            f"p95 {1000 * percentile(latencies, 95):.0f} ms, p99 {1000 * percentile(latencies, 99):.0f} ms",
            f"answers: {dict(sorted(statuses.items(), key=str))}; 5xx: {five_xx}", None,
            accepted=accepted, seconds=elapsed, statuses={str(k): v for k, v in statuses.items()}, five_xx=five_xx,
            p50=percentile(latencies, 50), p95=percentile(latencies, 95), p99=percentile(latencies, 99)),
        row("after the load: every accepted job stored, analysed and indexed once",
            f"{len(accepted_ids)} accepted, {jobs} stored, {failures} failures, {indexed} indexed, {docs} documents; "
            f"lost {lost}, duplicated {duplicated}",
            f"worker drained the backlog in {drain:.1f} s after the senders stopped", None,
            accepted=len(accepted_ids), jobs=jobs, failures=failures, indexed=indexed, documents=docs, lost=lost,
            duplicated=duplicated, drain_seconds=drain),
    ]
    emit("load_api", rows, markdown=args.markdown, notes=[
        "Loopback only; the per-token rate limit off for the run. Logs from bench/devset/job_logs.jsonl."])
    if five_xx or lost or duplicated:
        raise SystemExit("load test FAILED: 5xx answers, lost or duplicated jobs (see above)")


if __name__ == "__main__":
    main()
