"""Merge and split: an engineer corrects the automatic grouping; the rule also applies to future
failures and re-analyses (triage/regroup.py, jobs_ingest/grouping.py)."""
from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from jobs_ingest.models import GroupingRule, Signature
from triage import regroup
from triage.forms import MergeForm, SplitForm
from triage.views.access import local_next, triage_required
from triage.views.signatures import EXTRA_CONTEXT, _signature, render_signature


def _context(request, signature, triage):
    return {"merge_form": MergeForm(), "split_form": SplitForm(),
            "rules": GroupingRule.objects.filter(target=signature).select_related("created_by").order_by("-pk")[:20],
            "merged_into": GroupingRule.objects.filter(kind=GroupingRule.Kind.MERGE, active=True,
                                                       fingerprint=signature.fingerprint,
                                                       normaliser_version=signature.normaliser_version)
                                               .exclude(target=signature).select_related("target").first()}


EXTRA_CONTEXT.append(_context)


def _done(request, moved_now: int) -> None:
    if moved_now == 0:
        messages.info(request, "The failures are being regrouped by the workers; refresh in a moment.")


@require_POST
@triage_required
def merge_into(request, signature_id: int):
    target = _signature(signature_id)
    form = MergeForm(request.POST)
    if form.is_valid() and form.cleaned_data["other"].pk == target.pk:
        form.add_error("other", "that is this signature")
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_signature(request, target, merge_form=form, status=400)
    source = form.cleaned_data["other"]
    _done(request, regroup.merge(target, [source], request.user, form.cleaned_data["note"]))
    messages.success(request, f"Merged signature {source.pk} into this one; its future failures come here too.")
    return redirect("signature-detail", signature_id)


@require_POST
@triage_required
def split(request, signature_id: int):
    signature = _signature(signature_id)
    form = SplitForm(request.POST)
    if form.is_valid():
        try:
            new, now = regroup.split(signature, form.cleaned_data["contains"], request.user, form.cleaned_data["note"])
        except regroup.RegroupError as exc:
            form.add_error("contains", str(exc))
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_signature(request, signature, split_form=form, status=400)
    _done(request, now)
    new.refresh_from_db()
    messages.success(request, f"Split off {new.failure_count if now else 'the matching'} failure(s) into a new signature; "
                     "future ones follow the rule.")
    return redirect("signature-detail", new.pk)


@require_POST
@triage_required
def merge_selected(request):
    """The queue's bulk merge: the selected signatures go into the one with the most failures."""
    ids = [int(i) for i in request.POST.getlist("signature") if i.isdigit()]
    selected = list(Signature.objects.filter(pk__in=ids).order_by("-failure_count", "-gpu_seconds", "pk"))
    if len(selected) < 2:
        messages.error(request, "Select at least two signatures to merge.")
        return redirect(local_next(request, "queue"))
    target = selected[0]
    _done(request, regroup.merge(target, selected[1:], request.user, "merged from the queue"))
    messages.success(request, f"Merged {len(selected) - 1} signature(s) into signature {target.pk} "
                     f"({target.masked_message[:80]}).")
    return redirect("signature-detail", target.pk)
