#!/usr/bin/env python3
"""Server-side render time of the triage pages on a large database (issue #3: p95 < 300 ms at 100k
failed jobs; issue #6: at 1M jobs), against a minimal authenticated page measured in the same run.

    eval "$(scripts/servers.sh env)"
    DATABASE_URL=.../jobtriage_bench .venv/bin/python bench/load_workload.py --jobs 100000 --reset
    DATABASE_URL=.../jobtriage_bench .venv/bin/python bench/bench_pages.py [--requests 50] [--markdown]

Requests go through Django's full stack (middleware, session, auth, templates) with the test client,
against the real PostgreSQL; the jobs are generated (bench/workload.py). The baseline is Django's own
password-change form: the same stack, a login-required template page, no query of ours, so the ratio
shows what the triage pages' own work costs.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.timing import emit, percentile, row  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobtriage.settings")


def main() -> None:
    import django
    django.setup()
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from jobs_ingest.models import Failure, Job, Signature

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--markdown", action="store_true", help="a Markdown table (default: JSON for run_all.py)")
    args = parser.parse_args()
    setup_test_environment()  # lets the client render templates without a running server
    rng = random.Random(7)

    user, _ = User.objects.get_or_create(username="bench-engineer")
    user.groups.add(Group.objects.get(name="Engineers"))
    client = Client()
    client.force_login(user)
    jobs = Job.objects.count()
    failures = Failure.objects.count()
    top = list(Signature.objects.order_by("-gpu_seconds").values_list("pk", flat=True)[:20])
    failure_jobs = list(Failure.objects.order_by("?").values_list("job_id", flat=True)[:200])
    teams = list(Job.objects.exclude(team="").values_list("team", flat=True).distinct()[:10]) or [""]

    baseline_page = "minimal authenticated page (Django's password-change form)"
    pages = {
        baseline_page: lambda: "/accounts/password_change/",
        "queue (open, page 1)": lambda: "/",
        "queue (all states, page 3)": lambda: "/?state=all&page=3",
        "queue filtered (team + category)": lambda: f"/?state=all&team={rng.choice(teams)}&category=gpu_oom",
        "signature page (top 20 by GPU h)": lambda: f"/signatures/{rng.choice(top)}/",
        "failure page (random job)": lambda: f"/jobs/{rng.choice(failure_jobs)}/",
    }
    results = {}
    for name, url in pages.items():
        client.get(url())  # warm up
        times = []
        for _ in range(args.requests):
            t0 = time.perf_counter()
            response = client.get(url())
            times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, (name, response.status_code)
        results[name] = times
        print(f"bench_pages: {name}: p50 {statistics.median(times):.0f} ms, p95 {percentile(times, 95):.0f} ms",
              file=sys.stderr)
    base = results.pop(baseline_page)
    base_p50, base_p95 = statistics.median(base), percentile(base, 95)
    database = (f"{jobs:,} jobs, {failures:,} failures, {Signature.objects.count():,} signatures "
                f"(generated, {connection.vendor} {connection.settings_dict['NAME']})")
    rows = [row(f"page {name}, {database if i == 0 else 'same database'}",
                f"p50 {statistics.median(t):.0f} ms, p95 {percentile(t, 95):.0f} ms (target p95 300 ms)",
                f"password-change form: p50 {base_p50:.0f} ms, p95 {base_p95:.0f} ms",
                percentile(t, 95) / base_p95, page=name, requests=args.requests, p50_ms=statistics.median(t),
                p95_ms=percentile(t, 95), baseline_p50_ms=base_p50, baseline_p95_ms=base_p95, jobs=jobs,
                failures=failures)
            for i, (name, t) in enumerate(results.items())]
    emit("pages", rows, markdown=args.markdown,
         notes=[f"{args.requests} requests per page through the test client; baseline: {baseline_page}; "
                "ratio = page p95 / baseline p95."])


if __name__ == "__main__":
    main()
