"""The weekly report by email: its charts drawn as bars a mail client can show, the rendered message,
and the delivery to each team's members (the weekly_report command and the Celery beat task), at most
once per week and team."""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from dataclasses import dataclass
from email.mime.image import MIMEImage

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from triage.analytics.figures import BLUE, ORANGE, RED, plotly_figure
from triage.models import Team
from triage.reports import Report, Week, build, last_complete_week

EMAIL_CHARTS = ("trend", "category", "stage", "retry", "team")
IMAGE_WIDTH = 760
log = logging.getLogger("triage.reports")


def _draw_png(figures: list) -> list[bytes]:
    """PNGs of plotly figures, drawn by kaleido in one session of the machine's Chromium. In a thread of
    its own, so that it also works where an event loop already runs."""
    import kaleido

    async def draw():
        async with kaleido.Kaleido(n=1) as k:
            return [await k.calc_fig(fig, opts={"format": "png", "width": IMAGE_WIDTH, "height": fig.layout.height,
                                                 "scale": 1}) for fig in figures]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, draw()).result(timeout=settings.JOBTRIAGE_EMAIL_CHART_TIMEOUT)


def chart_images(report: Report) -> dict[str, bytes]:
    """The email's charts as PNG images by chart name; {} (the email falls back to table bars) when they
    are turned off or kaleido cannot run, e.g. no Chromium on the worker."""
    if not settings.JOBTRIAGE_EMAIL_CHART_IMAGES:
        return {}
    charts = [c for c in report.charts if c.name in EMAIL_CHARTS and not c.is_empty]
    if not charts:
        return {}
    try:
        return dict(zip((c.name for c in charts), _draw_png([plotly_figure(c) for c in charts])))
    except Exception as exc:  # noqa: BLE001 -- an email with table bars beats no email
        log.warning("weekly email charts drawn as table bars, not images: %s", exc)
        return {}


@dataclass
class EmailBar:
    label: str
    failures: int
    gpu_hours: float
    failures_width: int  # percent of the widest bar of its column, for a CSS width
    gpu_width: int
    color: str = BLUE
    link: str = ""


def email_charts(report: Report, base_url: str = "", images: dict | None = None) -> list[dict]:
    """The report's charts for an email: the embedded image's content id where there is one, and always
    the rows of bars a client can draw without it (table cells with a percent width)."""
    out = []
    for chart in report.charts:
        if chart.name not in EMAIL_CHARTS or chart.is_empty:
            continue
        rows = chart.rows[:12]
        top_n = max((r.failures for r in rows), default=0) or 1
        top_gpu = max((r.gpu_hours for r in rows), default=0) or 1
        bars = [EmailBar(r.label if len(r.label) <= 48 else r.label[:46] + "…", r.failures, r.gpu_hours,
                         round(100 * r.failures / top_n), round(100 * r.gpu_hours / top_gpu),
                         RED if r.extra.get("cannot_help") else BLUE,
                         base_url + r.link if r.link.startswith("/") else r.link)
                for r in rows]
        count_label = "Retry attempts" if chart.kind == "retry" else "Failed jobs"
        out.append({"title": chart.title, "caption": chart.caption, "bars": bars, "count_label": count_label,
                    "more": len(chart.rows) - len(rows), "image_width": IMAGE_WIDTH,
                    "image_cid": f"chart-{chart.name}@jobtriage" if chart.name in (images or {}) else ""})
    return out


def render_email(report: Report, base_url: str | None = None, images: dict | None = None) -> tuple[str, str, str]:
    """(subject, plain text, HTML) of a report's email. Links are absolute (JOBTRIAGE_BASE_URL)."""
    base_url = (base_url if base_url is not None else settings.JOBTRIAGE_BASE_URL).rstrip("/")
    path = (reverse("weekly-report-team", args=[str(report.week), report.team]) if report.team
            else reverse("weekly-report", args=[str(report.week)]))
    t = report.totals
    subject = (f"Failed jobs {report.week}{' · ' + report.team if report.team else ''}: {t.failed_jobs} failures, "
               f"{t.gpu_hours:,.0f} GPU hours wasted")
    context = {"report": report, "base_url": base_url, "page_url": base_url + path, "subject": subject,
               "email_charts": email_charts(report, base_url, images), "orange": ORANGE}
    return (subject, render_to_string("email/weekly_report.txt", context),
            render_to_string("email/weekly_report.html", context))


def email_message(report: Report, to: list[str]) -> EmailMultiAlternatives:
    """The report's email: plain text, HTML, and the charts as PNG parts the HTML shows (multipart/related)."""
    images = chart_images(report)
    subject, text, html = render_email(report, images=images)
    message = EmailMultiAlternatives(subject, text, to=to)
    message.attach_alternative(html, "text/html")
    if images:
        message.mixed_subtype = "related"
        for name, png in images.items():
            part = MIMEImage(png, "png")
            part.add_header("Content-ID", f"<chart-{name}@jobtriage>")
            part.add_header("Content-Disposition", "inline", filename=f"{name}.png")
            message.attach(part)
    return message


def recipients(team_name: str) -> list[str]:
    team = Team.objects.filter(name=team_name).first()
    if team is None:
        return []
    return sorted({u.email for u in team.members.filter(is_active=True) if u.email})


def _claim(week: Week, team: str) -> bool:
    """True the first time (week, team) is claimed: a Redis SET NX on the Celery broker, so that a task
    delivered twice does not email twice. Without Redis it answers True (better twice than never)."""
    try:
        from jobtriage.celery import app
        with app.connection_for_write() as connection:
            client = connection.default_channel.client
            return bool(client.set(f"jobtriage:weekly-report:{week}:{team}", "1", nx=True, ex=60 * 24 * 3600))
    except Exception:  # noqa: BLE001 -- any broker problem: send rather than lose the report
        return True


def manager_recipients() -> list[str]:
    """Managers (the Managers role) receive the all-teams report."""
    from django.contrib.auth.models import User
    from triage.roles import MANAGERS
    return sorted(set(User.objects.filter(groups__name=MANAGERS, is_active=True).exclude(email="")
                      .values_list("email", flat=True)))


ALL_TEAMS = ""  # the report of every team, for managers


def send_team_reports(week: Week | None = None, team: str | None = None, *, dry_run: bool = False,
                      once: bool = False, out=None) -> str:
    """Render and send each team's report (one team with `team`), then, for all teams, the all-teams
    report to the managers. Teams named on jobs become triage.Team rows first. A report with no failures
    in the week, or without recipients, gets no email. Returns a one-line summary."""
    from triage import teams
    week = week or last_complete_week(timezone.now().date())
    if team is None:
        teams.sync_from_jobs()
    names = [team] if team else list(Team.objects.order_by("name").values_list("name", flat=True)) + [ALL_TEAMS]
    sent = rendered = skipped_empty = skipped_nobody = 0
    for name in names:
        label = name or "all teams"
        report = build(week, name)  # with its charts: the email draws them as bars
        if not report.has_failures:
            skipped_empty += 1
            if out:
                out.write(f"{week} {label}: no failures, no email\n")
            continue
        to = recipients(name) if name else manager_recipients()
        subject, text, html = render_email(report)
        rendered += 1
        if dry_run:
            out and out.write(f"--- {week} {label} → {', '.join(to) or '(no recipients)'}\nSubject: {subject}\n\n{text}\n")
            continue
        if not to:
            skipped_nobody += 1
            out and out.write(f"{week} {label}: no {'member' if name else 'manager'} with an email address, not sent\n")
            continue
        if once and not _claim(week, name or "*all-teams*"):
            out and out.write(f"{week} {label}: already sent\n")
            continue
        email_message(report, to).send()
        sent += 1
        out and out.write(f"{week} {label}: sent to {len(to)} recipient(s)\n")
    verb = "rendered" if dry_run else "sent"
    return (f"{week}: {rendered if dry_run else sent} report(s) {verb}, "
            f"{skipped_empty} without failures, {skipped_nobody} without recipients")
