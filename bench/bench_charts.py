#!/usr/bin/env python3
"""p95 of every analytics chart and of the weekly report, read from the daily rollups (triage/rollups.py),
next to a baseline measured in the same run: the same aggregation computed from the raw failure and job
tables (sources.RAW, the way it was done before the rollups). Issue #5: every chart p95 < 300 ms at
1M jobs on this machine.

    eval "$(scripts/servers.sh env)"
    DATABASE_URL=${DATABASE_URL%/*}/jobtriage_bench_load .venv/bin/python bench/bench_charts.py \
        [--runs 20] [--baseline-runs 5] [--week 2026-W47] [--markdown]

Scopes: all time and all teams (the heaviest), the team with the most failures, and the report's week.
Each chart is timed as the page does it (aggregation + Plotly figure). Both sources must give the same
counts and GPU hours: a mismatch is printed and makes the run fail. If the rollups are not built for
this database (a data set loaded with bench/load_workload.py bypasses the application), they are
rebuilt first, with progress.
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

from bench.timing import emit, percentile, row  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobtriage.settings")


def timed(fn, runs: int) -> list[float]:
    fn()  # warm-up (connection, plan cache)
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def comparable(chart) -> list[tuple]:
    """A chart's counts and GPU hours (what both sources must agree on; time-to-failure percentiles come
    from buckets in the rollups, so they are compared separately with a tolerance)."""
    return [(r.key, r.failures, round(r.gpu_hours, 1)) for r in chart.rows]


def percentiles_close(rollup_chart, raw_chart, relative: float = 0.05, absolute_hours: float = 0.01) -> bool:
    """Bucket means stand for their members (buckets ~4.4% wide), so a percentile may differ by a few
    percent; the rows are ordered by median, so near-equal medians may also swap places."""
    raw = {r.key: r.extra for r in raw_chart.rows}
    for r in rollup_chart.rows:
        for name, value in r.extra.items():
            exact = raw.get(r.key, {}).get(name)
            if exact is None or abs(value - exact) > relative * abs(exact) + absolute_hours:
                return False
    return True


def cpu_reference_ms() -> float:
    """The same fixed PostgreSQL work every run (count a million generated rows): on this shared machine
    it shows how loaded the run was, to compare runs taken at different times."""
    from django.db import connection
    with connection.cursor() as cursor:
        times = []
        for _ in range(5):
            start = time.perf_counter()
            cursor.execute("SELECT count(*) FROM generate_series(1, 1000000)")
            cursor.fetchone()
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per chart on the rollups")
    parser.add_argument("--baseline-runs", type=int, default=5, help="timed runs per chart on the raw tables")
    parser.add_argument("--week", help="ISO week for the report (default: week of the newest failure)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (default: JSON)")
    args = parser.parse_args()

    import django
    django.setup()
    from django.db import connection
    from django.db.models import Max

    from jobs_ingest.models import Failure, Job
    from triage import reports, rollups
    from triage.analytics import sources
    from triage.analytics.charts import CHARTS, by_team
    from triage.analytics.figures import figure
    from triage.analytics.filters import ChartFilters
    from triage.models import FailureRollupEntry

    jobs, failures = Job.objects.count(), Failure.objects.count()
    log(f"database {connection.settings_dict['NAME']}: {jobs:,} jobs, {failures:,} failures")
    if FailureRollupEntry.objects.count() != failures:
        log("the rollups do not cover every failure here: rebuilding them (manage.py rebuild_rollups)")
        rollups.rebuild(progress=log)

    newest = Failure.objects.aggregate(m=Max("job__ended_at"))["m"]
    week = reports.Week.parse(args.week) if args.week else (reports.Week.of(newest.date()) if newest else None)
    top_team = (by_team(ChartFilters()).rows or [None])[0]
    scopes = [("all time, all teams", ChartFilters())]
    if top_team and top_team.key:
        scopes.append((f"team {top_team.key}", ChartFilters(team=top_team.key)))
    if week:
        scopes.append((f"week {week}", ChartFilters.for_range(week.start, week.end)))

    reference_before = cpu_reference_ms()
    log(f"load gauge: SELECT count(*) FROM generate_series(1, 1000000) takes {reference_before:.0f} ms")
    rows, mismatches, chart_p95 = [], [], []
    for scope, filters in scopes:
        for name, fn in CHARTS.items():
            fast = timed(lambda: figure(fn(filters, source=sources.ROLLUPS)), args.runs)
            slow = timed(lambda: figure(fn(filters, source=sources.RAW)), args.baseline_runs)
            rollup_chart, raw_chart = fn(filters, source=sources.ROLLUPS), fn(filters, source=sources.RAW)
            if name == "time_to_failure":
                same = sorted(comparable(rollup_chart)) == sorted(comparable(raw_chart)) \
                    and percentiles_close(rollup_chart, raw_chart)
            else:
                same = comparable(rollup_chart) == comparable(raw_chart)
            if not same:
                mismatches.append(f"{name} ({scope})")
            p95, base = percentile(fast, 95), percentile(slow, 95)
            chart_p95.append(p95)
            rows.append(row(f"chart {name}, {scope}", f"p95 {p95:.1f} ms (p50 {statistics.median(fast):.1f})",
                            f"raw tables p95 {base:.1f} ms", p95 / base if base else None,
                            p95_ms=p95, baseline_p95_ms=base, runs=len(fast), baseline_runs=len(slow),
                            same_numbers=same))
            log(f"  {name:16} {scope:22} {p95:8.1f} ms | {base:8.1f} ms | {p95 / base if base else 0:5.2f}x"
                f"{'' if same else '  MISMATCH'}")
    if week:
        for label, charts in (("numbers", False), ("with charts", True)):
            runs, base_runs = max(5, args.runs // 2), max(3, args.baseline_runs)
            fast = timed(lambda: reports.build(week, charts=charts, source=sources.ROLLUPS), runs)
            slow = timed(lambda: reports.build(week, charts=charts, source=sources.RAW), base_runs)
            p95, base = percentile(fast, 95), percentile(slow, 95)
            rows.append(row(f"weekly report {week} ({label})", f"p95 {p95:.1f} ms", f"raw tables p95 {base:.1f} ms",
                            p95 / base if base else None, p95_ms=p95, baseline_p95_ms=base))
            log(f"  weekly report ({label:11}) {p95:8.1f} ms | {base:8.1f} ms | {p95 / base if base else 0:5.2f}x")

    worst = max(chart_p95, default=0.0)
    reference_after = cpu_reference_ms()
    notes = [f"Load gauge (the same fixed query every run; lower = less loaded): {reference_before:.0f} ms before, "
             f"{reference_after:.0f} ms after.",f"Analytics at {jobs:,} jobs / {failures:,} failures (PostgreSQL; {args.runs} runs on the rollups, "
             f"{args.baseline_runs} on the raw tables; ratio = rollups / raw).",
             f"Slowest chart p95 {worst:.1f} ms ({'within' if worst < 300 else 'OVER'} the 300 ms target); "
             f"rollup and raw numbers {'identical' if not mismatches else 'DIFFER: ' + ', '.join(mismatches)}."]
    emit("charts", rows, markdown=args.markdown, notes=notes)
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
