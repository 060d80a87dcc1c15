"""A failed job's page, its per-job override of the signature's judgment, and its whole log."""
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from jobs_ingest.core.capture import clean_capture
from jobs_ingest.core.taxonomy import CATEGORIES, RETRY_ADVICE, STAGES, why_unclassified
from jobs_ingest.failures import resolve_line_numbers
from jobs_ingest.models import Failure, Job
from triage import effective, nodes, services
from triage.forms import OverrideForm
from triage.models import FailureOverride, JudgmentEvent
from triage.roles import can_triage
from triage.views.access import triage_required
from triage.views.display import diff, excerpt, traceback
from triage.views.search import similar_panel


@login_required
def job_detail(request, job_id: int):
    return render_job(request, job_id)


def render_job(request, job_id: int, *, override_form: OverrideForm | None = None, status: int = 200):
    """The job page; a bound `override_form` with errors is drawn again as typed (never a redirect)."""
    job = get_object_or_404(Job.objects.prefetch_related("attempts"), pk=job_id)
    failure = Failure.objects.select_related("signature", "signature__triage").filter(job=job).first()
    if failure and failure.line_numbers_from:
        failure = resolve_line_numbers(failure)  # deep in a big log: counted once, now
    context = {"job": job, "failure": failure, "can_triage": can_triage(request.user),
               "capture": _hook_capture(failure, job)}
    if failure:
        triage = getattr(failure.signature, "triage", None)
        override = FailureOverride.objects.filter(failure=failure).first()
        context.update({
            "triage": triage, "override": override, "state": triage.state if triage else "new",
            "auto_category": CATEGORIES[failure.category], "why_unclassified": why_unclassified(failure.rule),
            "category": CATEGORIES[effective.category(override, triage, failure.category)],
            "stage": STAGES.get(failure.stage), "retry_advice": RETRY_ADVICE.get(failure.retry_advice),
            # the nodes a retry should avoid: the failure text's, else the scheduler's (as the Nodes page blames)
            "blamed_nodes": nodes.blamed(failure),
            "excerpt": excerpt(failure), "traceback": traceback(failure),
            "override_form": override_form or OverrideForm(initial={
                "category": override.category, "root_cause": override.root_cause, "notes": override.notes}
                if override else None),
            "others": failure.signature.failures.exclude(pk=failure.pk).select_related("job").order_by("-job__ended_at")[:20],
            "history": JudgmentEvent.objects.filter(signature=failure.signature_id).select_related("user", "failure__job")[:100],
            "diff": diff(triage.fix_diff) if triage and triage.fix_diff else None,
            "issue_url": services.issue_urls([failure.signature_id]).get(failure.signature_id, ""),
            **similar_panel(failure),
        })
    return render(request, "triage/job_detail.html", context, status=status)


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
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_job(request, job_id, override_form=form, status=400)
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
