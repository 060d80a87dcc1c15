"""A reason-level cluster's page (Signature.cluster): its signatures, one judgment for all of them, its
owner and issue link. A signature judged on its own page keeps its own judgment (it overrides)."""
import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.models import Signature
from triage import effective, services
from triage.forms import AssignForm, ClusterJudgmentForm, IssueLinkForm
from triage.models import ClusterTriage
from triage.roles import can_triage
from triage.views.access import triage_required

_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def _members(cluster: str) -> list[Signature]:
    if not _KEY.match(cluster):
        raise Http404("No such cluster.")
    signatures = list(Signature.objects.filter(cluster=cluster).select_related("triage").order_by("-gpu_seconds", "pk"))
    if not signatures:
        raise Http404("No such cluster.")
    return signatures


def render_cluster(request, cluster: str, *, status: int = 200, **forms):
    signatures = _members(cluster)
    ct = ClusterTriage.objects.select_related("owner_user", "owner_team").filter(cluster=cluster).first()
    rows = []
    for s in signatures:
        triage = getattr(s, "triage", None)
        rows.append({"signature": s, "state": triage.state if triage else "new",
                     "category": CATEGORIES[effective.category(None, triage, s.category)],
                     "own": not services.follows_cluster(triage)})
    context = {
        "cluster": cluster, "ct": ct, "rows": rows, "message": signatures[0].cluster_message or signatures[0].masked_message,
        "failures": sum(s.failure_count for s in signatures), "gpu_seconds": sum(s.gpu_seconds for s in signatures),
        "teams": sorted({t for s in signatures for t in s.teams}), "can_triage": can_triage(request.user),
        "form": ClusterJudgmentForm(initial={f: getattr(ct, f) for f in services.CLUSTER_FIELDS} if ct and ct.category
                                    else {"category": signatures[0].category}),
        "assign_form": AssignForm(initial={"owner_user": ct.owner_user.get_username() if ct and ct.owner_user else "",
                                           "owner_team": ct.owner_team_id if ct else None}),
        "issue_form": IssueLinkForm(initial={"issue_url": ct.issue_url if ct else ""}),
        "selected": set(), "split_note": "",
        **forms,
    }
    return render(request, "triage/cluster.html", context, status=status)


@login_required
def cluster_detail(request, cluster: str):
    return render_cluster(request, cluster)


@require_POST
@triage_required
def judge_cluster(request, cluster: str):
    _members(cluster)
    form = ClusterJudgmentForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_cluster(request, cluster, form=form, status=400)
    applied, kept = services.judge_cluster(cluster, request.user, **form.cleaned_data)
    messages.success(request, f"Cluster judgment saved: applied to {applied} signature{'s' if applied != 1 else ''}"
                     + (f"; {kept} with a judgment of their own kept it." if kept else "."))
    return redirect("cluster-detail", cluster)


@require_POST
@triage_required
def cluster_issue(request, cluster: str):
    _members(cluster)
    form = IssueLinkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_cluster(request, cluster, issue_form=form, status=400)
    services.set_cluster_issue_url(cluster, request.user, form.cleaned_data["issue_url"])
    messages.success(request, "Issue link saved." if form.cleaned_data["issue_url"] else "Issue link removed.")
    return redirect("cluster-detail", cluster)


@require_POST
@triage_required
def cluster_assign(request, cluster: str):
    _members(cluster)
    form = AssignForm.from_request(request)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_cluster(request, cluster, assign_form=form, status=400)
    services.assign_cluster(cluster, request.user, form.cleaned_data["owner_user"], form.cleaned_data["owner_team"])
    messages.success(request, "Cluster owner saved.")
    return redirect("cluster-detail", cluster)


@require_POST
@triage_required
def split_cluster(request, cluster: str):
    from triage import regroup
    members = _members(cluster)
    ids = {int(i) for i in request.POST.getlist("signature") if i.isdigit()}
    try:
        key = regroup.split_cluster(cluster, [s for s in members if s.pk in ids], request.user,
                                    request.POST.get("note", "")[:2000])
    except regroup.RegroupError as exc:
        messages.error(request, f"Nothing was changed: {exc}.")
        return render_cluster(request, cluster, selected=ids, split_note=request.POST.get("note", ""), status=400)
    messages.success(request, f"Moved {len(ids & {s.pk for s in members})} signature(s) to a cluster of their own; "
                     "they stay there for future failures.")
    return redirect("cluster-detail", key)
