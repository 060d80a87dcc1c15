"""The triage queue: signatures to look at, filtered, and the bulk confirmation of their category."""
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
from triage.roles import can_triage
from triage.views.access import local_next, triage_required


@login_required
def queue(request):
    filters = selectors.QueueFilters.from_query(request.GET)
    page = Paginator(selectors.queue(filters, request.user), 50).get_page(request.GET.get("page"))
    signatures = list(page.object_list)
    issues = services.issue_urls([s.pk for s in signatures])
    today = timezone.now().date()
    first_day = today - timedelta(days=sparklines.DAYS - 1)
    daily = sparklines.daily_failures([s.pk for s in signatures], today)
    rows = []
    for signature in signatures:
        triage = getattr(signature, "triage", None)
        rows.append({"signature": signature, "triage": triage, "teams": signature.teams,
                     "state": triage.state if triage else "new",
                     "category": CATEGORIES[effective.category(None, triage, signature.category)],
                     "confirmed": bool(triage and triage.category), "issue_url": issues.get(signature.pk, ""),
                     "spark": sparklines.svg(daily[signature.pk], first_day)})
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "triage/queue.html", {
        "page": page, "rows": rows, "filters": filters, "query": query.urlencode(),
        "categories": CATEGORIES.values(), "dimensions": DIMENSIONS, "stages": STAGES,
        "states": selectors.STATE_FILTERS, "can_triage": can_triage(request.user),
    })


@require_POST
@triage_required
def bulk_confirm(request):
    ids = [int(i) for i in request.POST.getlist("signature") if i.isdigit()]
    count = services.confirm(Signature.objects.filter(pk__in=ids), request.user)
    messages.success(request, f"Confirmed the automatic category of {count} signature{'s' if count != 1 else ''}.")
    return redirect(local_next(request, "queue"))
