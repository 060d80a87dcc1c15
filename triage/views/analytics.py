"""The analytics page (charts of failures and wasted GPU hours) and each chart's CSV download. The numbers
come from triage/analytics/; this view only renders them."""
from urllib.parse import urlencode

from django.http import Http404
from django.shortcuts import render
from django.utils import timezone

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.models import Failure
from triage.analytics.charts import CHARTS, Chart, filter_choices, iso_week, totals
from triage.analytics.figures import figure
from triage.analytics.filters import ChartFilters
from triage.views.access import reports_required
from triage.views.export import csv_response


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
        return csv_response(f"jobtriage-{name}.csv", header, rows)
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
