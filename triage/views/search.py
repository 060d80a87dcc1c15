"""Search pages: similar past failures (and how they were fixed) and full-text log search."""
import re

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils.html import escape
from django.utils.safestring import mark_safe

from jobs_ingest.core.taxonomy import CATEGORIES, ROOT_CAUSES
from jobs_ingest.models import Signature
from jobs_ingest.search import logs, similar
from jobs_ingest.search.query import BadQuery, SearchUnavailable
from jobs_ingest.search.sync import es_client
from triage import effective, services
from triage.models import SignatureTriage

_EM = re.compile(r"</?em>")


def safe_fragment(fragment: str) -> str:
    """Elasticsearch returns highlights HTML-escaped with <em> around matches; accept exactly that,
    and escape anything else, so a highlight can never inject markup."""
    if "<" in _EM.sub("", fragment) or ">" in _EM.sub("", fragment):
        return escape(_EM.sub("", fragment))
    return mark_safe(fragment)


def with_judgments(hits: list) -> list[dict]:
    """Hits with what PostgreSQL (the truth) holds: the signature's counts and GPU time, and what
    people recorded: fix, root cause, fixed-by link."""
    ids = [int(h.signature_id) for h in hits if str(h.signature_id).isdigit()]
    totals = {str(pk): (count, round(gpu_seconds / 3600, 3)) for pk, count, gpu_seconds in
              Signature.objects.filter(pk__in=ids).values_list("pk", "failure_count", "gpu_seconds")}
    for hit in hits:
        hit.count, hit.gpu_hours = totals.get(str(hit.signature_id), (hit.count, hit.gpu_hours))
    triages = {str(t.signature_id): t for t in SignatureTriage.objects.select_related("fixed_by")
               .filter(signature_id__in=ids)}
    issues = services.issue_urls(ids)
    rows = []
    for hit in hits:
        triage = triages.get(str(hit.signature_id))
        category = effective.category(None, triage, hit.effective_category)
        rows.append({"hit": hit, "triage": triage, "state": triage.state if triage else "new",
                     "category": CATEGORIES.get(category, CATEGORIES["unclassified"]),
                     "root_cause": ROOT_CAUSES.get(triage.root_cause) if triage and triage.root_cause else "",
                     "issue_url": issues.get(int(hit.signature_id)) if str(hit.signature_id).isdigit() else "",
                     "fix": (triage.fix_description or ("diff recorded" if triage.fix_diff else "")) if triage else ""})
    return rows


def similar_panel(failure) -> dict:
    """Context for the "similar failures, and how they were fixed" panel of a failure page."""
    try:
        hits = similar.similar_to_failure(es_client(), settings.ES_INDEX_PREFIX, failure.pk, top=8, stats=False)
    except (SearchUnavailable, BadQuery) as exc:
        return {"similar_error": f"Similar failures are unavailable right now ({exc})."}
    return {"similar": with_judgments(hits)}


def _filters(query) -> dict:
    filters = {}
    for name in ("team", "platform", "category"):
        if query.get(name):
            filters[name] = query.get(name).strip()[:150]
    if query.get("since"):
        filters["ended_after"] = query.get("since")
    if query.get("until"):
        filters["ended_before"] = query.get("until")
    if query.get("only_resolved"):
        filters["only_resolved"] = True
    return filters


@login_required
def search(request):
    source = request.POST if request.method == "POST" else request.GET
    text = (source.get("q") or "").strip()
    mode = source.get("mode") if source.get("mode") in ("similar", "logs") else "similar"
    context = {"search_query": text, "mode": mode, "categories": CATEGORIES.values(), "f": source}
    status = 200
    if text:
        try:
            filters = _filters(source)
            client = es_client()
            if mode == "similar":
                context["rows"] = with_judgments(similar.similar_failures(
                    client, settings.ES_INDEX_PREFIX, text[:2 * 1024 * 1024], filters=filters, top=20, stats=False))
            else:
                cursor = logs.decode_cursor(source.get("after"))
                page = logs.search_logs(client, settings.ES_INDEX_PREFIX, text, filters=filters, size=25,
                                           search_after=cursor)
                context["log_hits"] = [{"hit": h, "fragments": [(f, [safe_fragment(x) for x in frags])
                                                                for f, frags in h.highlights.items()]}
                                       for h in page.hits]
                context["total"] = page.total
                context["next_cursor"] = logs.encode_cursor(page.next_search_after) if page.next_search_after else ""
        except BadQuery as exc:
            context["error"], status = str(exc), 400
        except SearchUnavailable:
            context["error"], status = "Search is unavailable right now (Elasticsearch does not answer). Try again shortly.", 503
    return render(request, "triage/search.html", context, status=status)
