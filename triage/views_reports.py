"""Pages for managers: the analytics page and the weekly reports (login + triage.view_reports).
The numbers come from triage/analytics/ and triage/reports.py; these views only render them."""
from __future__ import annotations

import csv
import re
from datetime import date
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.models import Failure
from triage import reports
from triage.analytics.charts import CHARTS, Chart, by_team, filter_choices, iso_week, totals
from triage.analytics.figures import figure
from triage.analytics.filters import ChartFilters


def reports_required(view):
    """Login first (a redirect), then the reports permission (a 403 for a logged-in user without it)."""
    @login_required
    def wrapper(request, *args, **kwargs):
        if not request.user.has_perm("triage.view_reports"):
            raise PermissionDenied("Reports need the view_reports permission (engineers and managers).")
        return view(request, *args, **kwargs)
    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    return wrapper


def _csv(filename: str, header: list[str], rows: list[list]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(header)
    for row in rows:
        writer.writerow([_safe_cell(v) for v in row])
    return response


def _safe_cell(value):
    """Spreadsheets run cells starting with = + - @ as formulas: prefix those texts with a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def chart_context(chart: Chart, prefix: str = "") -> dict:
    return {"chart": chart, "figure": figure(chart), "dom_id": f"fig-{prefix}{chart.name}",
            "table": chart.table()}


@reports_required
def analytics_page(request):
    filters = ChartFilters.from_query(request.GET)
    if request.GET.get("format") == "csv":
        name = request.GET.get("chart", "")
        if name not in CHARTS:
            raise Http404("unknown chart")
        chart = CHARTS[name](filters)
        header, rows = chart.table()
        return _csv(f"jobtriage-{name}.csv", header, rows)
    total_failures, total_gpu_hours = totals(filters)
    charts = [chart_context(fn(filters)) for fn in CHARTS.values()] if total_failures else []
    query = filters.params()
    return render(request, "triage/analytics.html", {
        "filters": filters, "charts": charts, "total_failures": total_failures,
        "total_gpu_hours": total_gpu_hours, "any_data": total_failures > 0 or Failure.objects.exists(),
        "categories": CATEGORIES.values(), **filter_choices(),
        "csv_base": "?" + urlencode({**query, "format": "csv"}),
        "this_week": iso_week(timezone.now().date()),
    })


@reports_required
def report_index(request):
    """The last complete ISO week (the one the Monday email is about)."""
    return redirect("weekly-report", week=str(reports.last_complete_week(timezone.now().date())))


@reports_required
def weekly_report(request, week: str, team: str = ""):
    try:
        parsed = reports.Week.parse(week)
    except ValueError as exc:
        raise Http404(str(exc))
    report = reports.build(parsed, team)
    if request.GET.get("format") == "csv":
        header, rows = reports.csv_rows(report)
        return _csv(f"jobtriage-report-{parsed}{'-' + re.sub(r'[^A-Za-z0-9_.-]+', '_', team) if team else ''}.csv",
                    header, rows)
    week_teams = [r.key for r in by_team(report.filters).rows if r.key] if not team else []
    return render(request, "triage/report.html", {
        "report": report, "charts": [chart_context(c, "r-") for c in report.charts],
        "teams": week_teams, "previous_week": str(parsed.previous()), "next_week": str(parsed.next()),
        "queue_url": report.filters.queue_url(), "analytics_query": urlencode(report.filters.params()),
        "csv_base": None,
    })
