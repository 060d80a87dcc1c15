#!/usr/bin/env python3
"""Latency of similar-failure queries and log searches against a loaded index (issue #4: p95 < 50 ms
for similar-failure queries at 1M failures).

    eval "$(scripts/servers.sh env)"
    .venv/bin/python bench/load_workload.py --jobs 1000000 --failed-share 1 --es-prefix bench1m ...
    .venv/bin/python bench/bench_search.py --es-prefix bench1m [--queries 200] [--markdown]

Queries are real failure logs of the development set (bench/devset/*.jsonl), pasted whole, as a user
would; log searches use words from them. The indexed failures are generated (bench/workload.py).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.timing import percentile  # noqa: E402
from jobs_ingest import search_index, similar  # noqa: E402

WORDS = ["CUDA out of memory", "No such file or directory", "state_dict", "KeyError", "NCCL", "nan loss",
         "ModuleNotFoundError", "Permission denied", "shape mismatch", "UnicodeDecodeError", "checkpoint",
         "DataLoader worker", "ChildFailedError", "index out of range", "NoneType"]


def timed(fn, runs: list) -> list[float]:
    times = []
    for args in runs:
        t0 = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--es-prefix", required=True)
    parser.add_argument("--url", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:59200"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    client = search_index.make_client(args.url, timeout=30)
    documents = search_index.count(client, args.es_prefix)
    rng = random.Random(11)
    logs = []
    for name in ("job_logs.jsonl", "notebook_crashes.jsonl", "issues2/dev.jsonl"):
        logs += [json.loads(line)["log"] for line in open(ROOT / "bench/devset" / name, encoding="utf-8")]
    pasted = rng.sample(logs, min(args.queries, len(logs)))
    team_filter = {"team": "team-03"}

    for text in pasted[:10]:  # warm caches, as a running service would be
        similar.similar_failures(client, args.es_prefix, text)
    results = {
        "similar failures (a pasted log, top 10, with signature counts)":
            timed(lambda t: similar.similar_failures(client, args.es_prefix, t), [(t,) for t in pasted]),
        "similar failures (as the pages ask: counts read from PostgreSQL, not aggregated)":
            timed(lambda t: similar.similar_failures(client, args.es_prefix, t, stats=False), [(t,) for t in pasted]),
        "similar failures, filtered by team":
            timed(lambda t: similar.similar_failures(client, args.es_prefix, t, filters=team_filter),
                  [(t,) for t in pasted]),
        "log search (words, first page of 20, highlighted)":
            timed(lambda q: similar.search_logs(client, args.es_prefix, q), [(rng.choice(WORDS),) for _ in pasted]),
    }
    page = similar.search_logs(client, args.es_prefix, "error", size=20)
    cursors = []
    for _ in range(20):  # deep pagination with search_after
        if not page.next_search_after:
            break
        cursors.append(page.next_search_after)
        page = similar.search_logs(client, args.es_prefix, "error", size=20, search_after=page.next_search_after)
    results["log search, next pages (search_after)"] = timed(
        lambda c: similar.search_logs(client, args.es_prefix, "error", size=20, search_after=c), [(c,) for c in cursors])
    rows = [f"Index `{args.es_prefix}-failures`: {documents:,} failure documents (generated).", "",
            "| query | n | p50 | p95 |", "|---|---:|---:|---:|"]
    for name, times in results.items():
        rows.append(f"| {name} | {len(times)} | {statistics.median(times):.0f} ms | {percentile(times, 95):.0f} ms |")
        print(f"bench_search: {name}: p50 {statistics.median(times):.1f} ms p95 {percentile(times, 95):.1f} ms",
              file=sys.stderr)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
