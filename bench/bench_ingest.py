#!/usr/bin/env python3
"""End-to-end ingest throughput: `ingest_dir` -> Redis -> Celery worker(s) -> PostgreSQL + Elasticsearch.

    eval "$(scripts/servers.sh env)"; .venv/bin/python bench/bench_ingest.py [--jobs 2000] [--markdown]

Uses the local servers (scripts/servers.sh) with a separate database (jobtriage_bench), Redis
database 1 and index prefix `bench`, so the development data is untouched. Jobs are generated: the
composed job logs of bench/devset/job_logs.jsonl, repeated with new ids. Reported for 1 and 2 worker
processes, against the baseline of reading the same log files from disk.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


def bench_env() -> dict:
    env = dict(os.environ)
    base = env.get("DATABASE_URL", "postgres://jobtriage:jobtriage@127.0.0.1:55432/jobtriage")
    env["DATABASE_URL"] = base.rsplit("/", 1)[0] + "/jobtriage_bench"
    env["CELERY_BROKER_URL"] = env.get("CELERY_BROKER_URL", "redis://127.0.0.1:56379/0").rsplit("/", 1)[0] + "/1"
    env["ES_INDEX_PREFIX"] = "bench"
    env["DJANGO_DEBUG"] = "0"
    env["DJANGO_SECRET_KEY"] = "bench-only"
    env["DJANGO_SECURE_SSL_REDIRECT"] = "0"
    return env


def manage(env, *args, **kwargs):
    return subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, **kwargs)


def make_folder(folder: Path, jobs: int) -> int:
    records = [json.loads(line) for line in open(ROOT / "bench/devset/job_logs.jsonl", encoding="utf-8")]
    (folder / "logs").mkdir(parents=True)
    total = 0
    with open(folder / "manifest.jsonl", "w") as manifest:
        for i in range(jobs):
            record = records[i % len(records)]
            log = folder / "logs" / f"{i}.log"
            # Vary the text so that logs are distinct files (content-addressed storage).
            log.write_text(f"job {i} starting\n" + record["log"], encoding="utf-8")
            total += log.stat().st_size
            manifest.write(json.dumps({"platform": "bench", "external_id": str(i), "status": "failed", "gpus": 8,
                                       "exit_code": record.get("exit_code") or 1,
                                       "started_at": "2026-11-16T08:00:00Z", "ended_at": "2026-11-16T09:00:00Z",
                                       "log": f"logs/{i}.log"}) + "\n")
    return total


def reset(env) -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-p", env["DATABASE_URL"].split(":")[-1].split("/")[0], "-U", "jobtriage",
                    "-d", "postgres", "-qc", "DROP DATABASE IF EXISTS jobtriage_bench WITH (FORCE)",
                    "-c", "CREATE DATABASE jobtriage_bench"], check=True, env={**env, "PGPASSWORD": "jobtriage"})
    manage(env, "migrate", "-v", "0")
    subprocess.run(["redis-cli", "-u", env["CELERY_BROKER_URL"], "FLUSHDB"], check=True, capture_output=True)


def run(env, folder: Path, workers: int, jobs: int) -> float:
    reset(env)
    manage(env, "ensure_search_index", stdout=subprocess.DEVNULL)
    worker = subprocess.Popen([PYTHON, "-m", "celery", "-A", "jobtriage", "worker", "-c", str(workers), "-l", "warning",
                               "--without-gossip", "--without-mingle"], cwd=ROOT, env=env)
    try:
        time.sleep(3)
        t0 = time.perf_counter()
        manage(env, "ingest_dir", str(folder), "--wait", "--timeout", "3600")
        return time.perf_counter() - t0
    finally:
        worker.terminate()
        worker.wait(60)


def read_baseline(folder: Path) -> float:
    t0 = time.perf_counter()
    for path in (folder / "logs").iterdir():
        with open(path, "rb") as f:
            while f.read(1024 * 1024):
                pass
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    env = bench_env()
    folder = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        size = make_folder(folder, args.jobs)
        baseline = read_baseline(folder)
        results = {w: run(env, folder, w, args.jobs) for w in (1, 2)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = ["| workload | jobs/s | baseline: read the logs from disk | ratio |", "|---|---|---|---|"]
    for workers, seconds in results.items():
        rows.append(f"| {args.jobs} jobs ({size / 1e6:.1f} MB of logs), {workers} worker process{'es' if workers > 1 else ''} | "
                    f"{args.jobs / seconds:,.0f} jobs/s ({seconds:.1f} s) | {args.jobs / baseline:,.0f} jobs/s "
                    f"({baseline * 1000:.0f} ms) | {baseline / seconds:.3f}x |")
    print("\n".join(rows) if args.markdown else json.dumps({"seconds": results, "baseline": baseline}))


if __name__ == "__main__":
    main()
