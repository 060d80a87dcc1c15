#!/usr/bin/env python3
"""End-to-end ingest throughput: `ingest_dir` -> Redis -> Celery worker(s) -> PostgreSQL + Elasticsearch.

    eval "$(scripts/servers.sh env)"; .venv/bin/python bench/bench_ingest.py [--jobs 1000] [--markdown]

Uses the local servers (scripts/servers.sh) with a database of its own (jobtriage_bench, dropped and
re-created for each worker count), Redis database 1 and index prefix `bench`, so the development
data is untouched. Jobs are generated: the composed job logs of bench/devset/job_logs.jsonl,
repeated with new ids. Reported for 1 and 2 worker processes, each timed until every job is
analysed and indexed, against the baseline measured in the same run: reading the same log files
from disk (cold or warm cache, whatever the machine gives; it is the floor any ingestion pays).
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
sys.path.insert(0, str(ROOT))
PYTHON = sys.executable

from bench.timing import child_pids, drop_from_page_cache, emit, row  # noqa: E402


def bench_env(database: str = "jobtriage_bench", redis_db: int = 1, es_prefix: str = "bench") -> dict:
    """The environment of a benchmark's processes: its own database, Redis database and index prefix,
    production-like settings (no DEBUG query log)."""
    env = dict(os.environ)
    base = env.get("DATABASE_URL", "postgres://jobtriage:jobtriage@127.0.0.1:55432/jobtriage")
    env["DATABASE_URL"] = base.rsplit("/", 1)[0] + "/" + database
    env["CELERY_BROKER_URL"] = env.get("CELERY_BROKER_URL", "redis://127.0.0.1:56379/0").rsplit("/", 1)[0] + f"/{redis_db}"
    env["ES_INDEX_PREFIX"] = es_prefix
    env["DJANGO_DEBUG"] = "0"
    env["DJANGO_SECRET_KEY"] = "bench-only"
    env["DJANGO_SECURE_SSL_REDIRECT"] = "0"
    return env


def manage(env, *args, **kwargs):
    return subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, **kwargs)


def recreate_database(env) -> None:
    """Drop and create the benchmark's database (its name must contain 'bench'), migrate it, and
    empty its Redis database, so every run starts from the same state."""
    url = env["DATABASE_URL"]
    name = url.rsplit("/", 1)[1]
    if "bench" not in name:
        raise SystemExit(f"refusing to drop database {name!r}: benchmark databases have 'bench' in their name")
    import psycopg
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    manage(env, "migrate", "-v", "0")
    import redis
    redis.Redis.from_url(env["CELERY_BROKER_URL"]).flushdb()


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


def run(env, folder: Path, workers: int) -> float:
    recreate_database(env)
    manage(env, "ensure_search_index", stdout=subprocess.DEVNULL)
    worker = subprocess.Popen([PYTHON, "-m", "celery", "-A", "jobtriage", "worker", "-c", str(workers), "-l", "warning",
                               "--without-gossip", "--without-mingle"], cwd=ROOT, env=env, stdout=sys.stderr)
    try:
        # Timing starts once the pool processes exist (a loaded machine can take several seconds to start them).
        deadline = time.monotonic() + 120
        while len(child_pids(worker.pid)) < workers and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)
        t0 = time.perf_counter()
        manage(env, "ingest_dir", str(folder), "--wait", "--timeout", "3600", stdout=sys.stderr)
        return time.perf_counter() - t0
    finally:
        worker.terminate()
        worker.wait(60)


def read_baseline(folder: Path) -> float:
    """Seconds to read every log of the folder from disk (evicted from the page cache first), in 1 MiB reads."""
    for path in (folder / "logs").iterdir():
        drop_from_page_cache(path)
    t0 = time.perf_counter()
    for path in (folder / "logs").iterdir():
        with open(path, "rb") as f:
            while f.read(1024 * 1024):
                pass
    return time.perf_counter() - t0


def analysis_only(folder: Path) -> float:
    """Seconds `manage.py tag_logs` (the pure analysis, one process, no server) takes for the same logs,
    fed as JSON Lines on stdin as its users do: the rate the pipeline is compared with."""
    lines = folder / "tag_logs.jsonl"
    with open(lines, "w") as out:
        for path in sorted((folder / "logs").iterdir(), key=lambda p: int(p.stem)):
            out.write(json.dumps({"id": path.stem, "log": path.read_text(encoding="utf-8")}) + "\n")
    env = {**bench_env(), "DJANGO_SETTINGS_MODULE": "jobtriage.settings"}
    with open(lines, "rb") as stdin:
        t0 = time.perf_counter()
        subprocess.run([PYTHON, "manage.py", "tag_logs"], cwd=ROOT, env=env, stdin=stdin, stdout=subprocess.DEVNULL,
                       check=True)
        return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker process counts to measure")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table (default: JSON for run_all.py)")
    args = parser.parse_args()
    env = bench_env()
    folder = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        size = make_folder(folder, args.jobs)
        baseline = read_baseline(folder)
        analysis = analysis_only(folder)
        results = {}
        for workers in args.workers:
            print(f"bench_ingest: {args.jobs} jobs, {workers} worker process(es)", file=sys.stderr)
            results[workers] = run(env, folder, workers)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = [row(f"ingest end to end, {args.jobs:,} jobs ({size / 1e6:.1f} MB of logs), {workers} worker "
                f"process{'es' if workers > 1 else ''}",
                f"{args.jobs / seconds:,.0f} jobs/s ({seconds:.1f} s)",
                f"reading the same logs from disk: {args.jobs / baseline:,.0f} jobs/s ({baseline * 1000:.0f} ms)",
                seconds / baseline, jobs=args.jobs, log_bytes=size, workers=workers, seconds=seconds,
                baseline_seconds=baseline)
            for workers, seconds in results.items()]
    rows += [row(f"ingest end to end vs the analysis alone (tag_logs, one process) of the same {args.jobs:,} logs, "
                 f"{workers} worker process{'es' if workers > 1 else ''}",
                 f"{args.jobs / seconds:,.0f} jobs/s = {100 * analysis / seconds:.0f}% of the analysis-only rate",
                 f"tag_logs: {args.jobs / analysis:,.0f} jobs/s ({analysis:.1f} s)",
                 seconds / analysis, jobs=args.jobs, workers=workers, seconds=seconds, analysis_seconds=analysis)
             for workers, seconds in results.items()]
    emit("ingest", rows, markdown=args.markdown,
         notes=["Jobs are generated from bench/devset/job_logs.jsonl; timed until every job is analysed and indexed."])


if __name__ == "__main__":
    main()
