"""Pages: the triage queue, signature and failure pages, judgments. Every page needs a login;
changing anything needs the triage permission (engineers); managers read."""
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from jobs_ingest.core.capture import clean_capture
from jobs_ingest.core.taxonomy import CATEGORIES, DIMENSIONS, RETRY_ADVICE, ROOT_CAUSES, STAGES
from jobs_ingest.models import Failure, Job, Signature
from triage import effective, search_views, selectors, services
from triage.diffs import DiffError, parse_diff
from triage.forms import FixedByForm, JudgmentForm, OverrideForm
from triage.models import FailureOverride, JudgmentEvent, SignatureTriage
from triage.roles import can_triage


def triage_required(view):
    """Login, then the triage permission, enforced on the server for every change."""
    @login_required
    def wrapper(request, *args, **kwargs):
        if not can_triage(request.user):
            raise PermissionDenied("Only engineers can triage.")
        return view(request, *args, **kwargs)
    wrapper.__name__ = view.__name__
    return wrapper


def local_next(request, default: str) -> str:
    """The `next` the form asked for if it stays on this site (no open redirect), else `default`."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return default


@login_required
def queue(request):
    filters = selectors.QueueFilters.from_query(request.GET)
    page = Paginator(selectors.queue(filters), 50).get_page(request.GET.get("page"))
    signatures = list(page.object_list)
    rows = []
    for signature in signatures:
        triage = getattr(signature, "triage", None)
        rows.append({"signature": signature, "triage": triage, "teams": signature.teams,
                     "state": triage.state if triage else "new",
                     "category": CATEGORIES[effective.category(None, triage, signature.category)],
                     "confirmed": bool(triage and triage.category)})
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
        "diff": _diff(triage.fix_diff) if triage and triage.fix_diff else None,
        "failures": failures.get_page(request.GET.get("page")), "latest": latest,
        "excerpt": _excerpt(latest) if latest else [],
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


@login_required
def job_detail(request, job_id: int):
    job = get_object_or_404(Job.objects.prefetch_related("attempts"), pk=job_id)
    failure = Failure.objects.select_related("signature", "signature__triage").filter(job=job).first()
    context = {"job": job, "failure": failure, "can_triage": can_triage(request.user),
               "capture": _hook_capture(failure, job)}
    if failure:
        triage = getattr(failure.signature, "triage", None)
        override = FailureOverride.objects.filter(failure=failure).first()
        context.update({
            "triage": triage, "override": override, "state": triage.state if triage else "new",
            "auto_category": CATEGORIES[failure.category],
            "category": CATEGORIES[effective.category(override, triage, failure.category)],
            "stage": STAGES.get(failure.stage), "retry_advice": RETRY_ADVICE.get(failure.retry_advice),
            "excerpt": _excerpt(failure), "traceback": _traceback(failure),
            "override_form": OverrideForm(initial={"category": override.category, "root_cause": override.root_cause,
                                                   "notes": override.notes} if override else None),
            "others": failure.signature.failures.exclude(pk=failure.pk).select_related("job").order_by("-job__ended_at")[:20],
            "history": JudgmentEvent.objects.filter(signature=failure.signature_id).select_related("user", "failure__job")[:100],
            "diff": _diff(triage.fix_diff) if triage and triage.fix_diff else None,
            **search_views.similar_panel(failure),
        })
    return render(request, "triage/job_detail.html", context)


def _hook_capture(failure: Failure | None, job: Job) -> dict | None:
    """What the training-side hook captured: from the log (stored on the failure), else from the job's
    metadata (the `jobtriage run` wrapper sends it too). Metadata is raw client input: cleaned alike."""
    capture = (failure.capture if failure else None) or clean_capture(job.extra.get("capture"))
    if not capture:
        return None
    artifacts = dict(capture.get("artifacts", {}))
    if artifacts.get("seeds"):
        artifacts["seeds"] = dict(sorted(artifacts["seeds"].items()))  # jsonb does not keep key order
    return {**capture, "artifacts": artifacts, "stage_label": STAGES.get(capture.get("stage", ""), ""),
            "stages": [{**s, "label": STAGES.get(s["stage"], s["stage"])} for s in capture.get("stages", [])]}


@require_POST
@triage_required
def override(request, job_id: int):
    failure = get_object_or_404(Failure, job_id=job_id)
    form = OverrideForm(request.POST)
    if form.is_valid():
        services.override_failure(failure, request.user, **form.cleaned_data)
        messages.success(request, "Override saved for this job." if any(form.cleaned_data.values())
                         else "Override removed: the job follows its signature again.")
    else:
        messages.error(request, "Nothing was saved: invalid override.")
    return redirect("job-detail", job_id)


@login_required
def job_log(request, job_id: int):
    """The whole log, as plain text (never rendered as HTML), streamed from disk."""
    job = get_object_or_404(Job, pk=job_id)
    if not job.log_path:
        raise Http404("This job was sent without a log.")
    path = Path(settings.JOBTRIAGE_LOG_DIR) / job.log_path
    if not path.is_file():
        raise Http404("The log file is missing from the log store.")
    download = request.GET.get("download") == "1"
    response = FileResponse(open(path, "rb"), as_attachment=download, content_type="text/plain; charset=utf-8",
                            filename=f"{job.platform}-{job.external_id}.log".replace("/", "_"))
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


def _excerpt(failure: Failure) -> list[tuple[int, str, bool]]:
    return [(failure.excerpt_start_line + i, text, failure.excerpt_start_line + i == failure.failure_line_number)
            for i, text in enumerate(failure.excerpt.split("\n"))]


def _traceback(failure: Failure) -> list[tuple[str, bool]]:
    """Traceback lines, with the innermost frame of user code marked."""
    lines = failure.traceback.split("\n") if failure.traceback else []
    marker = ""
    if failure.user_frame and ":" in failure.user_frame:
        path, _, rest = failure.user_frame.rpartition(":")
        number = rest.split(" ", 1)[0]
        marker = f'{path.split("/")[-1]}", line {number}'
    hit = max((i for i, line in enumerate(lines) if marker and marker in line), default=None)
    return [(line, i == hit) for i, line in enumerate(lines)]


def _diff(text: str):
    try:
        return parse_diff(text)
    except DiffError:
        return None

