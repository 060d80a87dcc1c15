#!/usr/bin/env python3
"""The Philly trace's size through `ingest_philly --wait`: 117,325 jobs (the published cluster_job_log's count)
stored in batches, analysed by the worker and indexed, with a GENERATED file in the trace's layout (the
8 records of tests/fixtures/adapters/philly/cluster_job_log repeated with new job ids and shifted times;
the real trace is ~1 GB and not redistributed here).

    eval "$(scripts/servers.sh env)"; .venv/bin/python bench/bench_philly.py [--jobs 117325] [--workers 2] [--markdown]

Database jobtriage_bench_philly (dropped and re-created), Redis database 1, index prefix bench-philly.
Baseline in the same run: only reading and adapting the file (philly.read_trace), no storing.
"""
from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_ingest import PYTHON, bench_env, manage, recreate_database  # noqa: E402
from bench.timing import child_pids, emit, row  # noqa: E402

FIXTURE = ROOT / "tests/fixtures/adapters/philly/cluster_job_log"
FORMATS = ("%Y-%m-%d %H:%M:%S",)


def shifted(text: str | None, minutes: int) -> str | None:
    for fmt in FORMATS:
        try:
            return (datetime.strptime(text, fmt) + timedelta(minutes=minutes)).strftime(fmt)
        except (TypeError, ValueError):
            continue
    return text  # None, "None" or a value the reader handles as it is


def make_trace(path: Path, jobs: int) -> None:
    # The fixture also holds records the adapter must reject (a running job, a bad time): not templates.
    records = [r for r in json.loads(FIXTURE.read_text()) if r["status"] in ("Pass", "Failed", "Killed")
               and all("/" not in str(a.get("start_time")) for a in r.get("attempts", []))]
    with open(path, "w") as out:
        out.write("[\n")
        for i in range(jobs):
            record = copy.deepcopy(records[i % len(records)])
            minutes = (i // len(records)) * 7
            record["jobid"] = f"application_bench_{i}"
            record["submitted_time"] = shifted(record.get("submitted_time"), minutes)
            for attempt in record.get("attempts", []):
                attempt["start_time"] = shifted(attempt.get("start_time"), minutes)
                attempt["end_time"] = shifted(attempt.get("end_time"), minutes)
            out.write(("," if i else "") + json.dumps(record) + "\n")
        out.write("]\n")


def read_only(path: Path) -> float:
    code = ("import sys,time; sys.path.insert(0, '.');\n"
            "from jobs_ingest.adapters import philly\n"
            f"t=time.perf_counter(); n=sum(1 for _ in philly.read_trace(open({str(path)!r}, 'rb'), None)); "
            "print(time.perf_counter()-t)")
    out = subprocess.run([PYTHON, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=117_325)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    env = bench_env("jobtriage_bench_philly", es_prefix="bench-philly")
    folder = Path(tempfile.mkdtemp(prefix="bench-philly-"))
    trace = folder / "cluster_job_log"
    make_trace(trace, args.jobs)
    baseline = read_only(trace)
    recreate_database(env)
    manage(env, "ensure_search_index", stdout=subprocess.DEVNULL)
    worker = subprocess.Popen([PYTHON, "-m", "celery", "-A", "jobtriage", "worker", "-c", str(args.workers), "-l",
                               "warning", "--without-gossip", "--without-mingle"], cwd=ROOT, env=env, stdout=sys.stderr)
    try:
        deadline = time.monotonic() + 120
        while len(child_pids(worker.pid)) < args.workers and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)
        t0 = time.perf_counter()
        manage(env, "ingest_philly", str(trace), "--wait", "--timeout", "3600", stdout=sys.stderr)
        seconds = time.perf_counter() - t0
    finally:
        worker.terminate()
        worker.wait(60)
        trace.unlink(missing_ok=True)
        folder.rmdir()
    emit("philly", [row(f"ingest_philly --wait, {args.jobs:,} jobs (GENERATED, Philly layout), {args.workers} worker "
                        "processes: stored, analysed, indexed",
                        f"{args.jobs / seconds:,.0f} jobs/s ({seconds / 60:.1f} min)",
                        f"reading and adapting the file only: {args.jobs / baseline:,.0f} jobs/s ({baseline:.1f} s)",
                        seconds / baseline, jobs=args.jobs, seconds=seconds, baseline_seconds=baseline)],
         markdown=args.markdown, notes=["Target (issue #16): the trace's 117k jobs in <= 10 minutes."])


if __name__ == "__main__":
    main()
