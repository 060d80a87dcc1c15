"""A signature's page and what engineers record on it: judgment, state, the job that ran the fix.

A form with an error is drawn again on the same page (status 400) with everything typed and the error
beside its field: a redirect would lose what the engineer typed."""
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


def _signature(signature_id: int) -> Signature:
    return get_object_or_404(Signature.objects.select_related("triage", "triage__fixed_by"), pk=signature_id)


def render_signature(request, signature: Signature, *, status: int = 200, **forms):
    """The signature page; `forms` replaces the blank forms with bound ones (an error to show again)."""
    triage = getattr(signature, "triage", None)
    category = effective.category(None, triage, signature.category)
    initial = {"category": category,
               "root_cause": effective.root_cause(None, triage) or CATEGORIES[category].likely_root_cause,
               "notes": triage.notes if triage else "", "fix_description": triage.fix_description if triage else "",
               "fix_diff": triage.fix_diff if triage else ""}
    failures = Paginator(signature.failures.select_related("job").order_by("-job__ended_at", "-pk"), 25)
    latest = signature.failures.select_related("job").order_by("-job__ended_at", "-pk").first()
    context = {
        "signature": signature, "triage": triage, "state": triage.state if triage else "new",
        "auto_category": CATEGORIES[signature.category], "category": CATEGORIES[category],
        "root_cause": ROOT_CAUSES.get(triage.root_cause) if triage else None,
        "form": JudgmentForm(initial=initial), "fixed_by_form": FixedByForm(),
        "candidates": services.fixed_by_candidates(signature) if can_triage(request.user) else [],
        "fixed_by_warnings": services.fixed_by_warnings(signature, triage.fixed_by) if triage and triage.fixed_by else [],
        "diff": diff(triage.fix_diff) if triage and triage.fix_diff else None,
        "failures": failures.get_page(request.GET.get("page")), "latest": latest,
        "excerpt": excerpt(latest) if latest else [],
        "history": signature.judgment_events.select_related("user", "failure__job")[:200],
        "can_triage": can_triage(request.user), "states": SignatureTriage.State,
    }
    for extra in EXTRA_CONTEXT:
        context.update(extra(request, signature, triage))
    context.update(forms)
    return render(request, "triage/signature.html", context, status=status)


# Other areas of the signature page (issue links, owners, comments) add their context here.
EXTRA_CONTEXT: list = []


@login_required
def signature_detail(request, signature_id: int):
    return render_signature(request, _signature(signature_id))


@require_POST
@triage_required
def judge(request, signature_id: int):
    signature = _signature(signature_id)
    form = JudgmentForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_signature(request, signature, form=form, status=400)
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
    """Link the job that ran the fix. A job that failed, or ended before the signature's last failure,
    is probably not the fix: the form comes back with the warning, and "Link anyway" confirms."""
    signature = _signature(signature_id)
    data = request.POST.copy()
    # The suggested-job radio and the manual field share the name "job": take the one filled in.
    data["job"] = next((v for v in request.POST.getlist("job") if v.strip()), "")
    form = FixedByForm(data)
    if form.is_valid() and form.cleaned_data["unlink"]:
        services.link_fixed_by(signature, request.user, None)
        messages.success(request, "Fixed-by link removed.")
        return redirect("signature-detail", signature_id)
    job = services.find_job(form.cleaned_data["job"]) if form.is_valid() else None
    if job is None:
        if form.is_valid():
            form.add_error("job", "No such job: give a suggested job, our job id, its URL, or platform:external_id.")
        return render_signature(request, signature, fixed_by_form=form, status=400)
    warnings = services.fixed_by_warnings(signature, job)
    if warnings and not form.cleaned_data["confirm"]:
        return render_signature(request, signature, fixed_by_form=form, fixed_by_pending=job,
                                fixed_by_pending_warnings=warnings)
    services.link_fixed_by(signature, request.user, job)
    if warnings:
        messages.warning(request, f"Linked job {job} although " + "; ".join(warnings) + ".")
    else:
        messages.success(request, f"Linked the fixed version: job {job}.")
    return redirect("signature-detail", signature_id)
