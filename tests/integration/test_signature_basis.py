"""A signature records what told it apart besides its message (Signature.basis), and its page warns when that was
the message alone: failures of different programs may then share it (bench/fingerprint_pairs)."""
import io

from django.contrib.auth.models import User
from django.urls import reverse

from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Signature


def ingest(external_id, text):
    job = services.receive_job(parse_job({"platform": "slurm", "external_id": external_id, "status": "failed",
                                          "team": "nlp"}), io.BytesIO(text.encode())).job
    return Signature.objects.get(pk=failures.analyse(job.pk, index_now=False).signature_id)


def test_a_crash_line_alone_is_grouped_by_its_message_and_the_page_says_so(transactional_db, log_dir, client):
    alone = ingest("a1", "Segmentation fault (core dumped)\n")
    after_output = ingest("b1", "loading shards\nbuilding the index\nSegmentation fault (core dumped)\n")
    in_code = ingest("c1", 'Traceback (most recent call last):\n  File "/home/ann/train.py", line 9, in main\n'
                           "    step()\nValueError: learning rate must be positive\n")
    assert (alone.basis, after_output.basis, in_code.basis) == ("message", "program_output", "user_code")
    assert ingest("a2", "Segmentation fault (core dumped)\n").pk == alone.pk    # another program's: same signature

    client.force_login(User.objects.create_superuser("root"))
    page = client.get(reverse("signature-detail", args=[alone.pk])).content.decode()
    assert "Grouped by the message alone." in page
    page = client.get(reverse("signature-detail", args=[in_code.pk])).content.decode()
    assert "Grouped by the masked message and the innermost frame of the job&#x27;s own code." in page
    assert "message alone" not in page


def test_a_signature_made_before_bases_gets_one(transactional_db, log_dir):
    first = ingest("a1", "loading shards\nSegmentation fault (core dumped)\n")
    Signature.objects.filter(pk=first.pk).update(basis="")
    again = ingest("a2", "loading shards\nSegmentation fault (core dumped)\n")
    assert again.pk == first.pk and again.basis == "program_output"


def test_the_job_page_says_why_its_failure_was_grouped(transactional_db, log_dir, client):
    signature = ingest("c1", 'Traceback (most recent call last):\n  File "/home/ann/train.py", line 9, in main\n'
                             "    step()\nValueError: learning rate must be positive\n")
    alone = ingest("a1", "Segmentation fault (core dumped)\n")
    client.force_login(User.objects.create_superuser("root"))
    job = signature.failures.get().job_id
    page = client.get(reverse("job-detail", args=[job])).content.decode()
    assert "by the innermost frame of the job&#x27;s own code." in page and "message alone" not in page
    page = client.get(reverse("job-detail", args=[alone.failures.get().job_id])).content.decode()
    assert "Grouped by the message alone" in page
