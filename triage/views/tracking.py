"""Who owns a signature, and its bug in the team's issue tracker (the "new issue" button opens the
tracker's own pre-filled form: no API call, no token stored)."""
from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.models import Signature
from triage import effective, services
from triage.forms import AssignForm, IssueLinkForm
from triage.issue_links import IssueLinkError, issue_text, new_issue_url
from triage.models import Team
from triage.views.access import triage_required
from triage.views.signatures import EXTRA_CONTEXT, _signature, render_signature


def tracker_for(signature: Signature) -> str:
    """The tracker of the first of the signature's teams that has one, else the site's."""
    if signature.teams:
        for team in Team.objects.filter(name__in=signature.teams).exclude(issue_tracker="").order_by("name"):
            return team.issue_tracker
    return settings.JOBTRIAGE_ISSUE_TRACKER


def new_issue_link(signature: Signature, triage, request=None) -> str:
    latest = signature.failures.order_by("-pk").first()
    path = reverse("signature-detail", args=[signature.pk])
    link = request.build_absolute_uri(path) if request else settings.JOBTRIAGE_BASE_URL + path
    category = CATEGORIES[effective.category(None, triage, signature.category)].name
    title, body = issue_text(signature.masked_message, latest.failure_line if latest else "", link, category,
                             signature.failure_count, signature.gpu_seconds / 3600)
    try:
        return new_issue_url(tracker_for(signature), title, body)
    except IssueLinkError:  # a misconfigured tracker hides the button rather than breaking the page
        return ""


def _context(request, signature, triage):
    return {"issue_form": IssueLinkForm(initial={"issue_url": triage.issue_url if triage else ""}),
            "new_issue_url": new_issue_link(signature, triage, request),
            "assign_form": AssignForm(initial={
                "owner_user": triage.owner_user.get_username() if triage and triage.owner_user else "",
                "owner_team": triage.owner_team_id if triage else None})}


EXTRA_CONTEXT.append(_context)


@require_POST
@triage_required
def issue_link(request, signature_id: int):
    signature = _signature(signature_id)
    form = IssueLinkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_signature(request, signature, issue_form=form, status=400)
    services.set_issue_url(signature, request.user, form.cleaned_data["issue_url"])
    messages.success(request, "Issue link saved." if form.cleaned_data["issue_url"] else "Issue link removed.")
    return redirect("signature-detail", signature_id)


@require_POST
@triage_required
def assign(request, signature_id: int):
    signature = _signature(signature_id)
    form = AssignForm.from_request(request)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_signature(request, signature, assign_form=form, status=400)
    triage = services.assign(signature, request.user, form.cleaned_data["owner_user"], form.cleaned_data["owner_team"])
    owner = services.owner_text(triage.owner_user, triage.owner_team).strip(" /") or "nobody"
    messages.success(request, f"Assigned to {owner}.")
    return redirect("signature-detail", signature_id)
