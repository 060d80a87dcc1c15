#!/usr/bin/env python3
"""Latency of similar-failure queries and log searches against loaded indices (issue #4: p95 < 50 ms
for similar-failure queries at 1M failures), each next to a baseline measured in the same run.

    eval "$(scripts/servers.sh env)"
    .venv/bin/python bench/load_workload.py --jobs 1000000 --failed-share 1 --es-prefix bench1m ...
    DATABASE_URL=.../jobtriage_bench_1m ES_INDEX_PREFIX=bench1m .venv/bin/python manage.py reindex --signatures-only
    .venv/bin/python bench/bench_search.py --es-prefix bench100k --es-prefix bench1m [--queries 200] [--runs 5] [--markdown]

Queries are real failure logs of the development set (bench/devset/*.jsonl), pasted whole, as a user
would (the client-side analysis, ~1 ms, is inside the timing); log searches use words from them. The
indexed failures are generated (bench/workload.py). Baselines, like for like: for similar failures, a
plain BM25 `match` of the same masked message (the product's analysis of the paste, computed before the
timing, so the baseline does not pay for it) over the same signatures index, top 10, the same team
filter; for log searches, a plain `match` of the same words on the failure message over the same
failures index (top 20). Each baseline query is sent right after its measured query, so both see the
same load. Each run measures every query once; the table gives the range over the runs.
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

from bench import search_docs  # noqa: E402
from bench.timing import percentile, ratio_text  # noqa: E402
from jobs_ingest.search import index as search_index, logs as log_search, query as search_query, similar  # noqa: E402

WORDS = ["CUDA out of memory", "No such file or directory", "state_dict", "KeyError", "NCCL", "nan loss",
         "ModuleNotFoundError", "Permission denied", "shape mismatch", "UnicodeDecodeError", "checkpoint",
         "DataLoader worker", "ChildFailedError", "index out of range", "NoneType"]
TEAM = "team-03"


def similar_baseline(client, prefix: str, masked: str, *, team: str | None = None) -> None:
    """The fair baseline of a similar-failure query: the same masked message (the probe's), plain BM25
    `match` on the same signatures index the product queries, top 10, the same team filter."""
    query: dict = {"match": {"masked_message": {"query": masked}}}
    if team:
        query = {"bool": {"must": [query], "filter": [{"terms": {"teams": [team]}}]}}
    client.search(index=search_index.alias_name(prefix, search_index.SIGNATURES), query=query, size=10,
                  track_total_hits=False)


def baseline(client, prefix: str, text: str, *, size: int = 10, team: str | None = None) -> None:
    query: dict = {"match": {"message": {"query": text}}}
    if team:
        query = {"bool": {"must": [query], "filter": [{"term": {"team": team}}]}}
    client.search(index=search_index.alias_name(prefix), query=query, size=size, track_total_hits=False)


def measure(cases: list, figure, base) -> tuple[list[float], list[float]]:
    """Each case timed through `figure`, then through `base` (interleaved: same load for both)."""
    figure_ms, base_ms = [], []
    for case in cases:
        t0 = time.perf_counter()
        figure(case)
        t1 = time.perf_counter()
        base(case)
        t2 = time.perf_counter()
        figure_ms.append((t1 - t0) * 1000)
        base_ms.append((t2 - t1) * 1000)
    return figure_ms, base_ms


def queries_for(client, prefix: str, pasted: list[str], words: list[str]) -> dict:
    masked = {t: search_query.probe(t).masked_message for t in pasted}  # the product's query text, precomputed
    page = log_search.search_logs(client, prefix, "error", size=20)
    cursors = []
    for _ in range(20):  # deep pagination with search_after
        if not page.next_search_after:
            break
        cursors.append(page.next_search_after)
        page = log_search.search_logs(client, prefix, "error", size=20, search_after=page.next_search_after)
    return {
        "similar failures (a pasted log, top 10, with counts)": (
            pasted, lambda t: similar.similar_failures(client, prefix, t),
            lambda t: similar_baseline(client, prefix, masked[t])),
        f"similar failures filtered by team ({TEAM})": (
            pasted, lambda t: similar.similar_failures(client, prefix, t, filters={"team": TEAM}),
            lambda t: similar_baseline(client, prefix, masked[t], team=TEAM)),
        "log search (words, first page of 20, highlighted, total)": (
            words, lambda q: log_search.search_logs(client, prefix, q), lambda q: baseline(client, prefix, q, size=20)),
        "log search, next pages (search_after)": (
            cursors, lambda c: log_search.search_logs(client, prefix, "error", size=20, search_after=c),
            lambda c: baseline(client, prefix, "error", size=20)),
    }


def span(values: list[float], fmt: str = "{:.0f}") -> str:
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}-{high}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--es-prefix", action="append", required=True, help="repeatable: one table row set each")
    parser.add_argument("--url", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:59200"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5, help="warm runs; the table shows their range")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    client = search_index.make_client(args.url, timeout=30)
    rng = random.Random(11)
    logs = []
    for name in ("job_logs.jsonl", "notebook_crashes.jsonl", "issues2/dev.jsonl"):
        logs += [json.loads(line)["log"] for line in open(ROOT / "bench/devset" / name, encoding="utf-8")]
    pasted = rng.sample(logs, min(args.queries, len(logs)))
    words = [rng.choice(WORDS) for _ in pasted]

    notes, rows = [], []
    for prefix in args.es_prefix:
        failures = search_docs.count(client, prefix)
        signatures = search_docs.count(client, prefix, search_index.SIGNATURES)
        notes.append(f"`{prefix}`: {failures:,} failure documents (generated), {signatures:,} signature documents.")
        if not signatures:
            notes.append(f"**`{prefix}` has no signatures index: similar-failure search falls back to the failures "
                         f"index.** Build it with `manage.py reindex --signatures-only` on the same database.")
        cases = queries_for(client, prefix, pasted, words)
        for items, figure, base in cases.values():  # warm caches, as a running service would be
            measure(items[:10], figure, base)
        per_run: dict[str, list[tuple[list[float], list[float]]]] = {name: [] for name in cases}
        for run in range(args.runs):
            for name, (items, figure, base) in cases.items():
                per_run[name].append(measure(items, figure, base))
            print(f"bench_search: {prefix} run {run + 1}/{args.runs} done", file=sys.stderr)
        for name, runs in per_run.items():
            p50 = [statistics.median(f) for f, _ in runs]
            p95 = [percentile(f, 95) for f, _ in runs]
            b50 = [statistics.median(b) for _, b in runs]
            b95 = [percentile(b, 95) for _, b in runs]
            ratios = [f / b for f, b in zip(p95, b95) if b]
            ratio = "-" if not ratios else "-".join(dict.fromkeys((ratio_text(min(ratios)), ratio_text(max(ratios)))))
            rows.append((f"{failures:,}", name, len(runs[0][0]), span(p50), span(b50), span(p95), span(b95), ratio))
            print(f"bench_search: {prefix}: {name}: p50 {span(p50)} ms (baseline {span(b50)}), "
                  f"p95 {span(p95)} ms (baseline {span(b95)})", file=sys.stderr)

    header = (f"{args.runs} warm runs, {len(pasted)} queries each; ranges over the runs. Baselines: similar failures, "
              f"plain BM25 `match` of the same masked message over the same signatures index (the product's "
              f"analysis excluded from the baseline's time); log search, plain `match` of the same words over the "
              f"same failures index; each sent right after its measured query.")
    if args.markdown:
        print("\n".join([header, *notes, "",
                         "| failures | query | n | p50 | baseline p50 | p95 | baseline p95 | p95 ratio |",
                         "|---:|---|---:|---:|---:|---:|---:|---:|"]
                        + ["| {} | {} | {} | {} ms | {} ms | {} ms | {} ms | {} |".format(*r) for r in rows]))
    else:
        print(json.dumps({"benchmark": "search", "notes": [header, *notes],
                          "rows": [dict(zip(("failures", "query", "n", "p50_ms", "baseline_p50_ms", "p95_ms",
                                             "baseline_p95_ms", "p95_ratio"), r)) for r in rows]}))


if __name__ == "__main__":
    main()
