"""The Nodes page (#15.4): hosts ranked by the platform failures that blame them and the GPU hours those
failures lost, over a window; and one node's history. Every logged-in user may read them."""
import re
from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils import timezone

from triage import nodes

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,252}$")


@login_required
def node_list(request):
    window = request.GET.get("days") if request.GET.get("days") in nodes.WINDOWS else "7"
    start = timezone.now() - timedelta(days=nodes.WINDOWS[window])
    rows = nodes.ranking(start)
    last = None if rows else nodes.last_blame(start)   # an empty window says when the last blame was, and where
    wider = next((w for w, days in nodes.WINDOWS.items() if last and last[0] >= timezone.now() - timedelta(days=days)),
                 None)
    min_failures, min_jobs, span = nodes.threshold()
    return render(request, "triage/nodes.html", {
        "rows": rows, "window": window, "windows": list(nodes.WINDOWS), "last_blame": last, "wider_window": wider,
        "suspects": sum(r.suspect for r in rows), "gpu_hours": sum(r.gpu_hours for r in rows),
        "min_failures": min_failures, "min_jobs": min_jobs, "span_hours": span.total_seconds() / 3600})


@login_required
def node_detail(request, host: str):
    if not _HOST.match(host):
        raise Http404("No such node.")
    failures = nodes.history(host)
    if not failures:
        raise Http404("No failure ran on or blamed this node in the last %d days." % nodes.HISTORY_DAYS)
    count, jobs = nodes.suspect_counts({host})[host]
    min_failures, min_jobs, span = nodes.threshold()
    rows = [{"failure": f, "when": nodes.when(f), "blamed": host in nodes.blamed(f),
             "from_text": host in (f.suspect_nodes or [])} for f in failures]
    return render(request, "triage/node.html", {
        "host": host, "rows": rows, "suspect": nodes.is_suspect(count, jobs), "recent_failures": count,
        "recent_jobs": jobs, "min_failures": min_failures, "min_jobs": min_jobs,
        "span_hours": span.total_seconds() / 3600, "history_days": nodes.HISTORY_DAYS,
        "platform": sum(r["blamed"] for r in rows), "gpu_hours": sum(r["failure"].gpu_hours for r in rows if r["blamed"])})
