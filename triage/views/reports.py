"""The weekly report of an ISO week, for everyone or one team, as a page or a CSV download. The numbers
come from triage/reports.py; this view only renders them."""
import re
from urllib.parse import urlencode

from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone

from triage.analytics.charts import by_team
from triage.reports import Week, build, csv_rows, latest_week_with_data
from triage.views.access import reports_required
from triage.views.analytics import chart_context
from triage.views.export import csv_response


@reports_required
def report_index(request):
    """The last complete ISO week (the one the Monday email is about), or the latest week with failures."""
    return redirect("weekly-report", week=str(latest_week_with_data(timezone.now().date())))


@reports_required
def weekly_report(request, week: str, team: str = ""):
    try:
        parsed = Week.parse(week)
    except ValueError as exc:
        raise Http404(str(exc))
    report = build(parsed, team)
    if request.GET.get("format") == "csv":
        header, rows = csv_rows(report)
        suffix = "-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", team) if team else ""
        return csv_response(f"jobtriage-report-{parsed}{suffix}.csv", header, rows)
    week_teams = [r.key for r in by_team(report.filters).rows if r.key] if not team else []
    return render(request, "triage/report.html", {
        "report": report, "charts": [chart_context(c, "r-") for c in report.charts],
        "teams": week_teams, "previous_week": str(parsed.previous()), "next_week": str(parsed.next()),
        "queue_url": report.filters.queue_url(), "analytics_query": urlencode(report.filters.params()),
        "csv_base": None,
    })
