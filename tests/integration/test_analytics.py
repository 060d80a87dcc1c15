"""Analytics page and its selectors (triage/analytics/) on the real PostgreSQL: the numbers in every
chart match a small known data set, filters, effective categories, CSV, permissions, empty states."""
import csv
import io
import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse

from jobs_ingest import failures as analysis, services as ingest
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure, Job, Signature
from triage import services
from triage.analytics import charts
from triage.analytics.filters import ChartFilters
from triage.models import FailureOverride
from triage.roles import ENGINEERS, MANAGERS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOGS = {"oom": FIXTURES / "ingest_dir" / "logs" / "oom-node7.log",            # gpu_oom, training
        "missing": FIXTURES / "ingest_dir" / "logs" / "missing-data.log",     # path_not_found, data_preprocessing
        "argparse": FIXTURES / "logs" / "argparse_usage.log"}                 # illegal_argument, initialization


def make_job(external_id, log=None, attempts=None, **fields):
    data = {"platform": "slurm", "external_id": external_id, "status": "failed", "name": "train",
            "submitter": "alice", "team": "nlp", "gpus": 1, **fields}
    if attempts:
        data["attempts"] = [{"started_at": s, "ended_at": e} for s, e in attempts]
    stream = open(LOGS[log], "rb") if log else None
    try:
        job = ingest.receive_job(parse_job(data), stream).job
    finally:
        if stream:
            stream.close()
    analysis.analyse(job.pk)
    return Job.objects.get(pk=job.pk)


def build_dataset():
    """Four failed jobs and one success. GPU hours: a1 32 (2 attempts x 8 GPUs x 2 h; the retry is 16 h of
    gpu_oom, whose advice is 'retry with a change'), a2 12 (3 attempts x 4 GPUs x 1 h; 8 h of retries of
    path_not_found, 'do not retry'), a3 0.5, a4 4 (in the week before), a5 80 (succeeded)."""
    make_job("a1", "oom", team="vision", platform="k8s", gpus=8, submitter="vic",
             started_at="2026-11-17T08:00:00Z", ended_at="2026-11-17T12:00:00Z",
             attempts=[("2026-11-17T08:00:00Z", "2026-11-17T10:00:00Z"), ("2026-11-17T10:00:00Z", "2026-11-17T12:00:00Z")])
    make_job("a2", "missing", team="vision", gpus=4, submitter="vic",
             started_at="2026-11-18T09:00:00Z", ended_at="2026-11-18T12:00:00Z",
             attempts=[("2026-11-18T09:00:00Z", "2026-11-18T10:00:00Z"), ("2026-11-18T10:00:00Z", "2026-11-18T11:00:00Z"),
                       ("2026-11-18T11:00:00Z", "2026-11-18T12:00:00Z")])
    make_job("a3", "argparse", team="nlp", gpus=1, started_at="2026-11-19T08:00:00Z", ended_at="2026-11-19T08:30:00Z")
    make_job("a4", "oom", team="nlp", gpus=2, started_at="2026-11-10T08:00:00Z", ended_at="2026-11-10T10:00:00Z")
    make_job("a5", None, team="vision", platform="k8s", status="succeeded", gpus=8,
             started_at="2026-11-20T00:00:00Z", ended_at="2026-11-20T10:00:00Z")


def user_in(group, name):
    user = User.objects.create_user(name, password="pw-" + name)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def dataset(db, log_dir):
    build_dataset()
    assert sorted(Failure.objects.values_list("category", flat=True)) == \
        ["gpu_oom", "gpu_oom", "illegal_argument", "path_not_found"], "the fixture logs are tagged differently now"


@pytest.fixture
def manager(db):
    return user_in(MANAGERS, "mona")


def numbers(chart):
    return {r.key: (r.failures, round(r.gpu_hours, 3)) for r in chart.rows}


def test_counts_and_gpu_hours_match_the_database(dataset):
    f = ChartFilters()
    by_cat = numbers(charts.by_category(f))
    assert by_cat == {"gpu_oom": (2, 36.0), "path_not_found": (1, 12.0), "illegal_argument": (1, 0.5)}
    # The same numbers straight from the rows (a small set: loading it here is fine, never in the app).
    direct = {}
    for failure in Failure.objects.all():
        n, g = direct.get(failure.category, (0, 0.0))
        direct[failure.category] = (n + 1, round(g + failure.gpu_seconds / 3600, 3))
    assert by_cat == direct
    assert numbers(charts.by_dimension(f)) == {"dl_specific": (2, 36.0), "execution_environment": (1, 12.0),
                                                  "general_code_error": (1, 0.5)}
    assert numbers(charts.by_stage(f)) == {"training": (2, 36.0), "data_preprocessing": (1, 12.0),
                                              "initialization": (1, 0.5)}
    assert numbers(charts.by_team(f)) == {"vision": (2, 44.0), "nlp": (2, 4.5)}
    assert numbers(charts.by_platform(f)) == {"k8s": (1, 32.0), "slurm": (3, 16.5)}
    assert numbers(charts.by_submitter(f)) == {"vic": (2, 44.0), "alice": (2, 4.5)}
    assert numbers(charts.by_root_cause(f)) == {"": (4, 48.5)}
    assert numbers(charts.weekly_trend(f)) == {"2026-W46": (1, 4.0), "2026-W47": (3, 44.5)}


def test_pareto_retry_waste_and_time_to_failure(dataset):
    f = ChartFilters()
    pareto = charts.pareto(f)
    assert [(r.failures, r.gpu_hours, r.extra["cumulative_share"]) for r in pareto.rows] == \
        [(2, 36.0, 74.2), (1, 12.0, 99.0), (1, 0.5, 100.0)]
    assert pareto.rows[0].link == reverse("signature-detail", args=[Signature.objects.get(category="gpu_oom").pk])

    retry = charts.retry_waste(f)
    assert numbers(retry) == {"gpu_oom": (1, 16.0), "path_not_found": (2, 8.0)}  # failures = retry attempts here
    assert retry.wasted_gpu_hours == 24.0  # program failures: a retry fails the same way (the study, 7.2)
    assert "24.0 GPU hours" in retry.caption

    ttf = {r.key: r.extra for r in charts.time_to_failure(f).rows}
    assert ttf["gpu_oom"]["p50_hours"] == 3.0 and ttf["gpu_oom"]["p25_hours"] == 2.5  # runs of 4 h and 2 h
    assert ttf["path_not_found"]["p50_hours"] == 3.0 and ttf["illegal_argument"]["p50_hours"] == 0.5
    # Judged a platform fault, the GPU OOM job's retries become useful ones, and its GPU hours the platform's.
    services.judge(Signature.objects.get(category="gpu_oom"), user_in(ENGINEERS, "erin"),
                   category="collective_communication")
    retry = charts.retry_waste(f)
    assert retry.wasted_gpu_hours == 8.0 and {r.key: r.extra["fault"] for r in retry.rows} == {
        "collective_communication": "platform", "path_not_found": "user"}
    assert numbers(charts.by_fault(f)) == {"platform": (2, 36.0), "user": (2, 12.5)}


def test_filters_from_the_url(dataset):
    week = ChartFilters.from_query({"since": "2026-11-16", "until": "2026-11-22"})
    assert numbers(charts.by_category(week))["gpu_oom"] == (1, 32.0)  # a4 ended the week before
    assert numbers(charts.by_team(ChartFilters.from_query({"team": "nlp"}))) == {"nlp": (2, 4.5)}
    assert numbers(charts.by_platform(ChartFilters.from_query({"platform": "k8s"}))) == {"k8s": (1, 32.0)}
    only_oom = ChartFilters.from_query({"category": "gpu_oom", "team": "nlp"})
    assert numbers(charts.by_stage(only_oom)) == {"training": (1, 4.0)}
    junk = ChartFilters.from_query({"since": "yesterday", "category": "nope", "until": "2026-13-45"})
    assert not junk.params() and numbers(charts.by_team(junk)) == {"vision": (2, 44.0), "nlp": (2, 4.5)}
    # Links carry the filters plus the bar's own value to the queue.
    link = charts.by_category(week).rows[0].link
    assert link.startswith("/?") and "state=all" in link and "category=gpu_oom" in link and "since=2026-11-16" in link


def test_confirmed_category_and_override_win_over_the_automatic_tag(dataset):
    engineer = user_in(ENGINEERS, "erin")
    services.judge(Signature.objects.get(category="path_not_found"), engineer, category="permission_denied",
                   root_cause="environment_difference")
    FailureOverride.objects.create(failure=Failure.objects.get(job__external_id="a4"), category="cpu_oom")
    f = ChartFilters()
    assert numbers(charts.by_category(f)) == {"gpu_oom": (1, 32.0), "permission_denied": (1, 12.0),
                                                 "cpu_oom": (1, 4.0), "illegal_argument": (1, 0.5)}
    assert numbers(charts.by_root_cause(f)) == {"": (3, 36.5), "environment_difference": (1, 12.0)}
    assert numbers(charts.by_team(ChartFilters.from_query({"category": "cpu_oom"}))) == {"nlp": (1, 4.0)}


def test_page_shows_every_chart_with_figures_embedded_safely(client, manager, dataset):
    client.force_login(manager)
    page = client.get(reverse("analytics")).content.decode()
    for name in charts.CHARTS:
        assert f'id="chart-{name}"' in page, name
    figures = dict(re.findall(r'<script id="fig-(\w+)" type="application/json">(.*?)</script>', page, re.S))
    category = json.loads(figures["category"])
    counts, hours = category["data"]
    assert counts["x"] == [2, 1, 1] and hours["x"] == [36.0, 12.0, 0.5]  # counts and GPU hours side by side
    assert counts["y"] == ["GPU Out of Memory", "Path Not Found", "Illegal Argument"]
    assert counts["customdata"][0] == "/?state=all&category=gpu_oom"
    assert "48.5" in page and "static/plotly/plotly.min.js" in page and "cdn" not in page.lower()


def test_csv_download_of_a_chart(client, manager, dataset):
    client.force_login(manager)
    response = client.get(reverse("analytics"), {"format": "csv", "chart": "team", "since": "2026-11-16"})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][:4] == ["key", "label", "failures", "gpu_hours"]
    assert [r[:4] for r in rows[1:]] == [["vision", "vision", "2", "44.0"], ["nlp", "nlp", "1", "0.5"]]
    assert client.get(reverse("analytics"), {"format": "csv", "chart": "nope"}).status_code == 404


def test_login_and_view_reports_permission_are_required(client, dataset):
    urls = [reverse("analytics"), reverse("analytics") + "?format=csv&chart=category",
            reverse("weekly-report", args=["2026-W47"]), reverse("weekly-report-team", args=["2026-W47", "nlp"])]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    client.force_login(user_in(None, "nobody"))
    for url in urls:
        assert client.get(url).status_code == 403, url
    assert "Analytics" not in client.get(reverse("queue")).content.decode()
    client.force_login(user_in(ENGINEERS, "erin"))
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_empty_states_are_explained(client, manager, log_dir):
    client.force_login(manager)
    page = client.get(reverse("analytics")).content.decode()
    assert "No failed jobs have been received yet" in page and "js-plotly" not in page
    build_dataset()
    page = client.get(reverse("analytics"), {"since": "2030-01-01"}).content.decode()
    assert "No failures match these filters in this time range" in page and 'type="application/json"' not in page
    page = client.get(reverse("analytics"), {"team": "nlp"}).content.decode()  # nlp never retried
    assert "No failed job in this view was retried." in page


def queue_signatures(client, url) -> set[str]:
    response = client.get(url)
    assert response.status_code == 200
    return {r["signature"].category for r in response.context["rows"]}


def test_drill_down_filters_the_queue_by_when_the_failures_happened(client, manager, dataset):
    client.force_login(manager)
    # gpu_oom failed on 11-10 (a4) and 11-17 (a1): its first/last seen span 11-11..11-15, but no failure
    # of it happened then, so a bar for those days must not lead to it.
    quiet = ChartFilters.from_query({"since": "2026-11-11", "until": "2026-11-15"})
    assert charts.by_category(quiet).rows == []
    assert queue_signatures(client, quiet.queue_url()) == set()
    week = ChartFilters.from_query({"since": "2026-11-16", "until": "2026-11-22"})
    link = charts.by_category(week).rows[0].link  # gpu_oom in that week: a1
    assert queue_signatures(client, link) == {"gpu_oom"}
    assert queue_signatures(client, week.queue_url()) == {"gpu_oom", "path_not_found", "illegal_argument"}
    # `until` as a date includes that whole day (a3 ended 11-19 08:30).
    assert queue_signatures(client, ChartFilters.from_query({"since": "2026-11-19", "until": "2026-11-19"})
                            .queue_url()) == {"illegal_argument"}
    trend_w46 = next(r for r in charts.weekly_trend(ChartFilters()).rows if r.key == "2026-W46")
    assert queue_signatures(client, trend_w46.link) == {"gpu_oom"}


def test_root_cause_bars_drill_down_to_the_queue(client, manager, dataset):
    engineer = user_in(ENGINEERS, "erin")
    services.judge(Signature.objects.get(category="path_not_found"), engineer, root_cause="environment_difference")
    services.override_failure(Failure.objects.get(job__external_id="a3"), engineer,
                              root_cause="common_programming_error")
    client.force_login(manager)
    links = {r.key: r.link for r in charts.by_root_cause(ChartFilters()).rows}
    assert set(links) == {"", "environment_difference", "common_programming_error"}
    assert queue_signatures(client, links["environment_difference"]) == {"path_not_found"}
    assert queue_signatures(client, links["common_programming_error"]) == {"illegal_argument"}
    assert "root_cause=none" in links[""]
    assert queue_signatures(client, links[""]) == {"gpu_oom"}  # a1 and a4: nothing recorded
    page = client.get(links["environment_difference"]).content.decode()
    assert '<option value="environment_difference" selected>' in page
