"""A signature's page and what engineers record on it: judgment, state, the job that ran the fix."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from jobs_ingest.core.taxonomy import CATEGORIES, ROOT_CAUSES
from jobs_ingest.models import Signature
from triage import effective, services
from triage.forms import FixedByForm, JudgmentForm
from triage.models import SignatureTriage
from triage.roles import can_triage
from triage.views.access import triage_required
from triage.views.display import diff, excerpt


@login_required
def signature_detail(request, signature_id: int):
    signature = get_object_or_404(Signature.objects.select_related("triage", "triage__fixed_by"), pk=signature_id)
    triage = getattr(signature, "triage", None)
    category = effective.category(None, triage, signature.category)
    initial = {"category": category,
               "root_cause": effective.root_cause(None, triage) or CATEGORIES[category].likely_root_cause,
               "notes": triage.notes if triage else "", "fix_description": triage.fix_description if triage else "",
               "fix_diff": triage.fix_diff if triage else ""}
    failures = Paginator(signature.failures.select_related("job").order_by("-job__ended_at", "-pk"), 25)
    latest = signature.failures.select_related("job").order_by("-job__ended_at", "-pk").first()
    return render(request, "triage/signature.html", {
        "signature": signature, "triage": triage, "state": triage.state if triage else "new",
        "auto_category": CATEGORIES[signature.category], "category": CATEGORIES[category],
        "root_cause": ROOT_CAUSES.get(triage.root_cause) if triage else None,
        "form": JudgmentForm(initial=initial), "fixed_by_form": FixedByForm(),
        "candidates": services.fixed_by_candidates(signature) if can_triage(request.user) else [],
        "diff": diff(triage.fix_diff) if triage and triage.fix_diff else None,
        "failures": failures.get_page(request.GET.get("page")), "latest": latest,
        "excerpt": excerpt(latest) if latest else [],
        "history": signature.judgment_events.select_related("user", "failure__job")[:200],
        "can_triage": can_triage(request.user), "states": SignatureTriage.State,
    })


@require_POST
@triage_required
def judge(request, signature_id: int):
    signature = get_object_or_404(Signature, pk=signature_id)
    form = JudgmentForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: " + "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect("signature-detail", signature_id)
    data = form.cleaned_data
    services.judge(signature, request.user, **{k: data[k] for k in services.JUDGED_FIELDS})
    messages.success(request, "Judgment saved.")
    return redirect("signature-detail", signature_id)


@require_POST
@triage_required
def set_state(request, signature_id: int):
    signature = get_object_or_404(Signature, pk=signature_id)
    state = request.POST.get("state")
    if state not in (SignatureTriage.State.IGNORED, SignatureTriage.State.TRIAGED, SignatureTriage.State.RESOLVED):
        messages.error(request, "Unknown state.")
    else:
        services.judge(signature, request.user, state=state)
        messages.success(request, f"Marked {state}.")
    return redirect("signature-detail", signature_id)


@require_POST
@triage_required
def fixed_by(request, signature_id: int):
    signature = get_object_or_404(Signature, pk=signature_id)
    data = request.POST.copy()
    # The suggested-job radio and the manual field share the name "job": take the one filled in.
    data["job"] = next((v for v in request.POST.getlist("job") if v.strip()), "")
    form = FixedByForm(data)
    if form.is_valid() and form.cleaned_data["unlink"]:
        services.link_fixed_by(signature, request.user, None)
        messages.success(request, "Fixed-by link removed.")
    elif form.is_valid() and (job := services.find_job(form.cleaned_data["job"])):
        services.link_fixed_by(signature, request.user, job)
        messages.success(request, f"Linked the fixed version: job {job}.")
    else:
        messages.error(request, "No such job: give a suggested job, our job id, its URL, or platform:external_id.")
    return redirect("signature-detail", signature_id)
