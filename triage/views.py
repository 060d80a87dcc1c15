"""Pages. For now: the list of ingested failures and one job's page (triage comes with issue #3)."""
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from jobs_ingest.core.taxonomy import CATEGORIES, RETRY_ADVICE, STAGES
from jobs_ingest.models import Failure, Job


@login_required
def failure_list(request):
    failures = Failure.objects.select_related("job", "signature").order_by("-job__received_at", "-pk")
    category = request.GET.get("category", "")
    if category in CATEGORIES:
        failures = failures.filter(category=category)
    page = Paginator(failures, 50).get_page(request.GET.get("page"))
    return render(request, "triage/failure_list.html", {
        "page": page, "categories": CATEGORIES.values(), "category": category,
        "pending": Job.objects.filter(ingest_state=Job.Ingest.QUEUED).count(),
    })


@login_required
def job_detail(request, job_id: int):
    job = get_object_or_404(Job.objects.prefetch_related("attempts"), pk=job_id)
    failure = Failure.objects.select_related("signature").filter(job=job).first()
    excerpt = []
    if failure:
        for offset, text in enumerate(failure.excerpt.split("\n")):
            number = failure.excerpt_start_line + offset
            excerpt.append((number, text, number == failure.failure_line_number))
    return render(request, "triage/job_detail.html", {
        "job": job, "failure": failure, "excerpt": excerpt,
        "category": CATEGORIES[failure.category] if failure else None,
        "stage": STAGES.get(failure.stage) if failure else None,
        "retry_advice": RETRY_ADVICE.get(failure.retry_advice) if failure else None,
        "others": failure.signature.failures.exclude(pk=failure.pk).select_related("job").order_by("-pk")[:20]
        if failure else [],
    })
