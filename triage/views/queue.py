"""The triage queue: signatures (or clusters of them) to look at, filtered, and the bulk confirmation
of their category. `view=cluster` in the URL groups the rows by reason-level cluster."""
from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from jobs_ingest.core.taxonomy import CATEGORIES, DIMENSIONS, STAGES
from jobs_ingest.models import Signature
from triage import effective, selectors, services, sparklines
from triage.models import ClusterTriage
from triage.roles import can_triage
from triage.views.access import local_next, triage_required


def _signature_row(signature, issues, daily, first_day):
    triage = getattr(signature, "triage", None)
    return {"signature": signature, "triage": triage, "teams": signature.teams,
            "state": triage.state if triage else "new",
            "category": CATEGORIES[effective.category(None, triage, signature.category)],
            "confirmed": bool(triage and triage.category), "issue_url": issues.get(signature.pk, ""),
            "spark": sparklines.svg(daily[signature.pk], first_day), "spark_counts": daily[signature.pk]}


@login_required
def queue(request):
    filters = selectors.QueueFilters.from_query(request.GET)
    by_cluster = request.GET.get("view") == "cluster"
    today = timezone.now().date()
    first_day = today - timedelta(days=sparklines.DAYS - 1)
    members: dict = {}
    if by_cluster:
        page = Paginator(selectors.cluster_queue(filters, request.user), 50).get_page(request.GET.get("page"))
        keys = [row["key"] for row in page.object_list]
        members = selectors.cluster_members(keys, filters, request.user)
        signatures = [s for group in members.values() for s in group]
    else:
        page = Paginator(selectors.queue(filters, request.user), 50).get_page(request.GET.get("page"))
        signatures = list(page.object_list)
    issues = services.issue_urls([s.pk for s in signatures])
    daily = sparklines.daily_failures([s.pk for s in signatures], today)
    rows = [_signature_row(s, issues, daily, first_day) for s in signatures]
    clusters = _cluster_rows(page.object_list, members, rows, first_day) if by_cluster else []
    query = request.GET.copy()
    query.pop("page", None)
    switch = query.copy()
    switch.pop("view", None)
    return render(request, "triage/queue.html", {
        "page": page, "rows": [] if by_cluster else rows, "clusters": clusters, "by_cluster": by_cluster,
        "filters": filters, "query": query.urlencode(), "switch_query": switch.urlencode(),
        "categories": CATEGORIES.values(), "dimensions": DIMENSIONS, "stages": STAGES,
        "states": selectors.STATE_FILTERS, "can_triage": can_triage(request.user),
    })


def _cluster_rows(groups, members, rows, first_day):
    by_signature = {r["signature"].pk: r for r in rows}
    cluster_triages = {c.cluster: c for c in ClusterTriage.objects.select_related("owner_user", "owner_team")
                       .filter(cluster__in=[g["key"] for g in groups])}
    out = []
    for group in groups:
        key = group["key"]
        signature_rows = [by_signature[s.pk] for s in members.get(key, [])]
        if not signature_rows:
            continue
        first = signature_rows[0]["signature"]
        daily = [sum(day) for day in zip(*[_series(r) for r in signature_rows])]
        out.append({**group, "solo": key.startswith(selectors.SOLO), "message": first.cluster_message
                    or first.masked_message, "members": signature_rows,
                    "teams": sorted({t for r in signature_rows for t in r["teams"]}),
                    "states": sorted({r["state"] for r in signature_rows}),
                    "triage": cluster_triages.get(key), "spark": sparklines.svg(daily, first_day)})
    return out


def _series(row):
    return row["spark_counts"]


@require_POST
@triage_required
def bulk_confirm(request):
    ids = [int(i) for i in request.POST.getlist("signature") if i.isdigit()]
    count = services.confirm(Signature.objects.filter(pk__in=ids), request.user)
    messages.success(request, f"Confirmed the automatic category of {count} signature{'s' if count != 1 else ''}.")
    return redirect(local_next(request, "queue"))
