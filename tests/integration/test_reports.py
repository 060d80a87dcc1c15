"""Weekly reports (triage/reports.py): totals and week-over-week change, ranks, new signatures, triage
progress, mix against the study, the page, CSV, and the email sent to a REAL SMTP server (aiosmtpd's
Controller on a free localhost port), never a mocked mail backend."""
import csv
import email
import io
import socket
from email import policy

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.urls import reverse

from jobs_ingest.models import Signature
from triage import report_email, reports, services
from triage.models import Team
from triage.roles import ENGINEERS, MANAGERS

from .test_analytics import build_dataset, user_in

W47 = reports.Week.parse("2026-W47")


@pytest.fixture
def dataset(db, log_dir):
    build_dataset()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtp_sink(settings):
    """aiosmtpd's real SMTP server on localhost; Django's SMTP backend points at it."""
    from aiosmtpd.controller import Controller

    class Sink:
        def __init__(self):
            self.messages = []

        async def handle_DATA(self, server, session, envelope):
            self.messages.append((list(envelope.rcpt_tos),
                                  email.message_from_bytes(envelope.original_content, policy=policy.default)))
            return "250 Message accepted"

    sink, port = Sink(), free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS = "127.0.0.1", port, False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.JOBTRIAGE_BASE_URL = "https://jobtriage.example"
    try:
        yield sink
    finally:
        controller.stop()


def test_week_parsing():
    assert (W47.start.isoformat(), W47.end.isoformat()) == ("2026-11-16T00:00:00+00:00", "2026-11-23T00:00:00+00:00")
    assert str(W47.previous()) == "2026-W46" and str(reports.Week.parse("2026-W53").next()) == "2027-W01"
    for bad in ("2026-47", "2026-W54", "2025-W53", "x"):
        with pytest.raises(ValueError):
            reports.Week.parse(bad)


def test_totals_change_ranks_and_new_signatures(dataset):
    report = reports.build(W47)
    t, p = report.totals, report.previous
    assert (t.failed_jobs, t.gpu_hours, t.all_gpu_hours) == (3, 44.5, 124.5)  # 44.5 failed + 80 succeeded
    assert round(t.share_lost, 2) == 35.74
    assert (p.failed_jobs, p.gpu_hours, p.share_lost) == (1, 4.0, 100.0)
    assert report.changes["gpu_hours"].delta == 40.5 and report.changes["failed_jobs"].pct == 200.0
    assert [(s.gpu_hours, s.rank, s.previous_rank, s.rank_change) for s in report.top] == \
        [(32.0, 1, 1, "same"), (12.0, 2, None, "new this week"), (0.5, 3, None, "new this week")]
    assert report.new_count == 2 and {s.category for s in report.new} == {"Path Not Found", "Illegal Argument"}
    assert (report.retry_gpu_hours, report.retry_wasted_gpu_hours) == (24.0, 24.0)  # all program failures
    stage = {m.key: m for m in report.mix["stage"]}
    assert (stage["training"].failure_share, stage["training"].gpu_share) == (33.3, 71.9)
    assert (stage["evaluation"].study_failure_share, stage["evaluation"].study_gpu_share) == (24.3, 84.8)
    dims = {m.key: m for m in report.mix["dimension"]}
    assert dims["execution_environment"].study_failure_share == 48.0
    assert [c.name for c in report.charts] == ["trend", "category", "fault", "stage", "pareto", "retry", "team"]
    assert (report.platform.failures, report.platform.gpu_hours, report.platform.categories) == (0, 0.0, [])

    vision = reports.build(W47, "vision")
    assert (vision.totals.failed_jobs, vision.totals.gpu_hours, vision.totals.all_gpu_hours) == (2, 44.0, 124.0)
    assert vision.previous.failed_jobs == 0 and vision.previous.share_lost is None
    assert not reports.build(W47, "speech").has_failures


def test_triage_progress(dataset):
    assert (reports.build(W47).triage.signatures, reports.build(W47).triage.confirmed) == (3, 0)
    engineer = user_in(ENGINEERS, "erin")
    services.judge(Signature.objects.get(category="path_not_found"), engineer, category="path_not_found",
                   root_cause="environment_difference", fix_description="parameterise the data path")
    progress = reports.build(W47).triage
    assert (progress.signatures, progress.confirmed, progress.with_fix, progress.triaged_count) == (3, 1, 1, 1)
    assert round(progress.confirmed_share) == 33 and progress.median_hours_to_triage > 0


def test_report_page_csv_and_print_stylesheet(client, dataset):
    client.force_login(user_in(MANAGERS, "mona"))
    page = client.get(reverse("weekly-report", args=["2026-W47"])).content.decode()
    assert "Weekly failure report 2026-W47" in page and "35.7%" in page and "44.5" in page
    assert "new this week" in page and 'id="fig-r-pareto"' in page and "vision" in page
    assert client.get(reverse("report-index"))["Location"].startswith("/reports/")
    team_page = client.get(reverse("weekly-report-team", args=["2026-W47", "nlp"])).content.decode()
    assert "team nlp" in team_page and 'id="fig-r-team"' not in team_page
    empty = client.get(reverse("weekly-report", args=["2026-W40"])).content.decode()
    assert "No failed jobs ended in 2026-W40" in empty and "application/json" not in empty
    assert client.get("/reports/2026-W99/").status_code == 404

    response = client.get(reverse("weekly-report", args=["2026-W47"]), {"format": "csv"})
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["section", "item", "label", "metric", "value"]
    assert ["totals", "gpu_hours_wasted", "this week", "gpu_hours_wasted", "44.5"] in rows
    assert ["totals", "failed_jobs", "previous week", "failed_jobs", "1"] in rows
    css = open("static/css/jobtriage.css").read()
    assert "@media print" in css


def test_weekly_report_email_through_a_real_smtp_server(dataset, smtp_sink, django_user_model):
    vision, nlp, speech = (Team.objects.create(name=n) for n in ("vision", "nlp", "speech"))
    vision.members.add(django_user_model.objects.create_user("v1", "v1@example.com"),
                       django_user_model.objects.create_user("v2", "v2@example.com"))
    nlp.members.add(django_user_model.objects.create_user("n1", "n1@example.com"))
    speech.members.add(django_user_model.objects.create_user("s1", "s1@example.com"))  # no failures: no email
    manager = django_user_model.objects.create_user("m1", "m1@example.com")
    manager.groups.add(Group.objects.get(name=MANAGERS))
    out = io.StringIO()
    call_command("weekly_report", "--week", "2026-W47", stdout=out)

    assert "3 report(s) sent, 1 without failures, 0 without recipients" in out.getvalue()
    by_recipient = {tuple(sorted(to)): message for to, message in smtp_sink.messages}
    assert set(by_recipient) == {("v1@example.com", "v2@example.com"), ("n1@example.com",), ("m1@example.com",)}
    assert str(by_recipient[("m1@example.com",)]["Subject"]).startswith("Failed jobs 2026-W47: ")  # all teams
    message = by_recipient[("v1@example.com", "v2@example.com")]
    assert message.get_content_type() == "multipart/related"  # text + HTML, and the charts' images
    assert str(message["Subject"]).strip() == "Failed jobs 2026-W47 · vision: 2 failures, 44 GPU hours wasted"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "GPU hours wasted:            44.0" in text and "https://jobtriage.example/reports/2026-W47/vision/" in text
    assert "<table" in html and "https://jobtriage.example/signatures/" in html and "35.5%" in html


def test_dry_run_prints_and_sends_nothing(dataset, smtp_sink, django_user_model):
    Team.objects.create(name="nlp").members.add(django_user_model.objects.create_user("n1", "n1@example.com"))
    out = io.StringIO()
    call_command("weekly_report", "--week", "2026-W47", "--team", "nlp", "--dry-run", stdout=out)
    assert "--- 2026-W47 nlp → n1@example.com" in out.getvalue() and "Failed jobs:                 1" in out.getvalue()
    assert smtp_sink.messages == []
    call_command("weekly_report", "--week", "2026-W47", "--team", "nlp", stdout=io.StringIO())
    assert len(smtp_sink.messages) == 1


def test_beat_schedule_sends_on_monday_morning(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["weekly-reports"]
    assert entry["task"] == "triage.tasks.send_weekly_reports"
    assert entry["schedule"].hour == {7} and entry["schedule"].minute == {0} and entry["schedule"].day_of_week == {1}


def test_email_embeds_its_charts_as_png_images(dataset, smtp_sink, django_user_model):
    """kaleido draws the plotly figures with Debian's Chromium; each <img src="cid:..."> has its PNG part."""
    import re
    import struct
    from pathlib import Path

    Team.objects.create(name="vision").members.add(django_user_model.objects.create_user("v1", "v1@example.com"))
    call_command("weekly_report", "--week", "2026-W47", "--team", "vision", stdout=io.StringIO())
    (_, message), = smtp_sink.messages
    html = message.get_body(("html",)).get_content()
    cids = re.findall(r'<img src="cid:([^"]+)"', html)
    parts = {part["Content-ID"].strip("<>"): part.get_payload(decode=True)
             for part in message.walk() if part.get_content_type() == "image/png"}
    drawn = [c for c in reports.build(W47, "vision").charts if c.name in report_email.EMAIL_CHARTS and not c.is_empty]
    assert len(cids) == len(drawn) >= 3 and set(cids) == set(parts)
    png = parts["chart-category@jobtriage"]
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24])[0] == 760
    assert len(png) > 5_000  # drawn bars and labels, not an empty canvas
    shots = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    (shots / "weekly-email-chart-category.png").write_bytes(png)  # to look at
    assert "<script" not in html.lower() and "GPU hours spent on retries" in html


def test_email_html_draws_the_charts_as_bars_without_images(dataset, smtp_sink, django_user_model, settings):
    settings.JOBTRIAGE_EMAIL_CHART_IMAGES = False  # e.g. a worker without Chromium
    Team.objects.create(name="vision").members.add(django_user_model.objects.create_user("v1", "v1@example.com"))
    call_command("weekly_report", "--week", "2026-W47", "--team", "vision", stdout=io.StringIO())
    (_, message), = smtp_sink.messages
    html = message.get_body(("html",)).get_content()
    text = message.get_body(("plain",)).get_content()
    assert "<script" not in html.lower() and "<img" not in html.lower() and "plotly" not in html.lower()
    assert "GPU hours spent on retries" in html and "Last 8 weeks" in html and "Failure categories" in html
    # vision in W47: gpu_oom 32 GPU h (the widest bar) and path_not_found 12 GPU h, one failure each.
    report = reports.build(W47, "vision")
    bars = {b.label: b for c in report_email.email_charts(report) if c["title"] == "Failure categories" for b in c["bars"]}
    assert (bars["GPU Out of Memory"].gpu_width, bars["Path Not Found"].gpu_width) == (100, 38)
    assert (bars["GPU Out of Memory"].failures_width, bars["Path Not Found"].failures_width) == (100, 100)
    assert 'width="38%"' in html
    retry = {b.label: b for c in report_email.email_charts(report) if c["count_label"] == "Retry attempts" for b in c["bars"]}
    assert retry["Path Not Found"].color == retry["GPU Out of Memory"].color == "#d92d20"  # red: program failures
    assert "https://jobtriage.example/?state=all" in html  # bars link to the queue, absolute
    assert "Top signatures by GPU hours" in text and "https://jobtriage.example/reports/2026-W47/vision/" in text


def test_regressed_signatures_in_the_weekly_report(dataset, django_user_model, log_dir):
    from datetime import datetime, timezone as dt_timezone

    from triage.models import JudgmentEvent, SignatureTriage
    from .test_analytics import make_job

    engineer = user_in(ENGINEERS, "erin")
    missing = Signature.objects.get(category="path_not_found")
    services.judge(missing, engineer, fix_description="parameterise the data path")  # resolved
    resolved_at = datetime(2026, 11, 18, 13, 0, tzinfo=dt_timezone.utc)  # after a2 failed, within W47
    SignatureTriage.objects.filter(signature=missing).update(resolved_at=resolved_at)
    assert reports.build(W47).regressed == []

    make_job("a7", "missing", team="vision", gpus=2, started_at="2026-11-20T08:00:00Z", ended_at="2026-11-20T10:00:00Z")
    assert SignatureTriage.objects.get(signature=missing).state == SignatureTriage.State.REGRESSED
    event = JudgmentEvent.objects.get(signature=missing, field="state", new_value="regressed")
    JudgmentEvent.objects.filter(pk=event.pk).update(at=datetime(2026, 11, 20, 10, 5, tzinfo=dt_timezone.utc))

    report = reports.build(W47)
    assert [(s.signature_id, s.failures, s.gpu_hours) for s in report.regressed] == [(missing.pk, 2, 16.0)]
    assert reports.build(W47, "nlp").regressed == []  # not this team's failure
    assert reports.build(W47.previous()).regressed == []  # regressed this week, not the week before
    subject, text, html = report_email.render_email(report, "https://jobtriage.example")
    assert "Regressed signatures: 1" in text and f"/signatures/{missing.pk}/" in html
    rows = reports.csv_rows(report)[1]
    assert ["regressed_signatures", missing.pk, report.regressed[0].message, "failures", 2] in rows
