"""Line numbers of a failure deep in a big log (#16.5): the analysis numbers them from its window (no full
read); the job page counts the newlines before it once, and from then on shows and stores the whole
log's numbers. Real PostgreSQL, Elasticsearch and log directory."""
import io

from django.contrib.auth.models import User
from django.urls import reverse

from jobs_ingest import failures, services
from jobs_ingest.core.logread import LINE_COUNT_BYTES
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure

TRAINING = b"epoch 3 step 1200/5000 loss 0.4123 lr 0.0001 throughput 812.3 img/s\n"
TRACEBACK = b"Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\nKeyError: 'lr_schedule'\n"


def test_the_job_page_resolves_line_numbers_of_a_failure_deep_in_a_big_log(transactional_db, log_dir, es, client):
    lines_before = LINE_COUNT_BYTES // len(TRAINING) + 20_000
    log = TRAINING * lines_before + TRACEBACK
    job = services.receive_job(parse_job({"platform": "slurm", "external_id": "big", "status": "failed"}),
                               io.BytesIO(log)).job
    failure = failures.analyse(job.pk)
    assert failure.line_numbers_from > LINE_COUNT_BYTES  # numbered from its window: no full read
    assert failure.failure_line_number < lines_before

    client.force_login(User.objects.create_user("reader", password="x"))
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()

    failure = Failure.objects.get(pk=failure.pk)
    assert failure.line_numbers_from == 0 and failure.failure_line_number == lines_before + 3
    assert f"line {lines_before + 3} ended the job" in page
    # A second view does not shift them again.
    client.get(reverse("job-detail", args=[job.pk]))
    assert Failure.objects.get(pk=failure.pk).failure_line_number == lines_before + 3
