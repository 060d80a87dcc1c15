#!/usr/bin/env python3
"""p95 of every analytics chart's aggregation and of the weekly report, at the current database size
(issue #5: every chart p95 < 300 ms at 1M jobs on this machine).

    eval "$(scripts/servers.sh env)"
    DATABASE_URL=.../jobtriage_bench .venv/bin/python bench/bench_charts.py [--runs 20] [--week 2026-W47] [--markdown]

Each chart runs `--runs` times with no filter (the heaviest case: all time, all teams) and with a one-team
filter; the weekly report (organisation, without and with its charts) for the given week (default: the
week of the newest failure). Times are wall clock of the Python call, i.e. the SQL plus building the rows.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.timing import percentile  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobtriage.settings")


def timed(fn, runs: int) -> list[float]:
    fn()  # warm-up (connection, plan cache)
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--week", help="ISO week for the report (default: week of the newest failure)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table for BENCHMARKS.md")
    args = parser.parse_args()

    import django
    django.setup()
    from django.db import connection
    from django.db.models import Max

    from jobs_ingest.models import Failure, Job
    from triage import analytics, reports

    jobs, failures = Job.objects.count(), Failure.objects.count()
    top_team = (analytics.by_team(analytics.ChartFilters()).rows or [None])[0]
    newest = Failure.objects.aggregate(m=Max("job__ended_at"))["m"]
    week = reports.Week.parse(args.week) if args.week else (reports.Week.of(newest.date()) if newest else None)
    print(f"database {connection.settings_dict['NAME']} ({connection.vendor}): {jobs:,} jobs, {failures:,} failures; "
          f"{args.runs} runs each", file=sys.stderr)

    results = []
    scopes = [("all", analytics.ChartFilters())]
    if top_team and top_team.key:
        scopes.append((f"team={top_team.key}", analytics.ChartFilters(team=top_team.key)))
    for scope, filters in scopes:
        for name, fn in analytics.CHARTS.items():
            times = timed(lambda: analytics.figure(fn(filters)), args.runs)
            results.append((f"chart {name}", scope, times))
            print(f"  {name:16} {scope:14} p50 {statistics.median(times):7.1f} ms  p95 {percentile(times, 95):7.1f} ms",
                  file=sys.stderr)
        times = timed(lambda: analytics.totals(filters), args.runs)
        results.append(("page totals", scope, times))
    if week:
        for label, charts in (("weekly report (numbers)", False), ("weekly report (with charts)", True)):
            times = timed(lambda: reports.build(week, charts=charts), max(5, args.runs // 2))
            results.append((f"{label} {week}", "all", times))
            print(f"  {label} {week}: p95 {percentile(times, 95):.1f} ms", file=sys.stderr)

    worst = max(percentile(t, 95) for n, _, t in results if n.startswith("chart"))
    if args.markdown:
        print(f"\nAnalytics at {jobs:,} jobs / {failures:,} failures (PostgreSQL, {args.runs} runs):\n")
        print("| aggregation | scope | p50 ms | p95 ms |\n|---|---|---:|---:|")
        for name, scope, times in results:
            print(f"| {name} | {scope} | {statistics.median(times):.1f} | {percentile(times, 95):.1f} |")
    print(f"{len(results)} aggregations timed at {jobs:,} jobs; slowest chart p95 {worst:.1f} ms "
          f"({'within' if worst < 300 else 'OVER'} the 300 ms target)")


if __name__ == "__main__":
    main()
