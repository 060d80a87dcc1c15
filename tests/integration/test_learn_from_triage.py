"""Learning from triage (#14.2) through the real code path: a failure analysed by the worker's batch code,
judged by a person, indexed in the real Elasticsearch; a later failure of the same reason from other code
(another signature) takes the judged category, says so, and links the judged signature."""
import io

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job
from jobs_ingest.search.sync import index_signatures
from triage import services as triage_services


def log(path, function, shard):
    return (f"step 10 loss 0.3\nTraceback (most recent call last):\n  File \"{path}\", line 40, in {function}\n"
            f"    check(shard)\nShardManifestError: manifest of shard '{shard}' lists 512 samples, found 498\n").encode()


def ingest(external_id, text):
    job = services.receive_job(parse_job({"platform": "slurm", "external_id": external_id, "status": "failed"}),
                               io.BytesIO(text)).job
    return failures.analyse(job.pk, index_now=True)


@pytest.fixture
def judged(transactional_db, log_dir, es, settings):
    first = ingest("a1", log("/home/ann/loader.py", "load_shards", "/data/a/007.tar"))
    assert first.rule.startswith("learned.") or first.category == "unclassified"
    person = User.objects.create_user("erin")
    triage_services.judge(first.signature, person, category="unexpected_encoding", notes="writer bug")
    index_signatures([first.signature_id])
    es.indices.refresh(index=f"{settings.ES_INDEX_PREFIX}-*")
    return first


def test_a_new_signature_of_a_judged_reason_takes_the_judged_category(judged, client):
    later = ingest("b1", log("/srv/bob/train.py", "make_loader", "/mnt/b/123.tar"))
    assert later.signature_id != judged.signature_id  # other code: another exact signature
    assert later.category == "unexpected_encoding" and later.rule == "judged.unexpected_encoding"
    assert later.judged_like_id == judged.signature_id and f"signature {judged.signature_id}" in later.evidence

    client.force_login(User.objects.create_user("reader"))
    page = client.get(reverse("job-detail", args=[later.job_id])).content.decode()
    assert reverse("signature-detail", args=[judged.signature_id]) in page


def test_an_unrelated_failure_learns_nothing(judged):
    other = ingest("c1", b"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n"
                         b"QuotaServiceError: tenant 'vision' has no staging budget left\n")
    assert not other.rule.startswith("judged.") and other.judged_like_id is None


def test_without_elasticsearch_the_rules_answer_stands(judged, settings):
    settings.ELASTICSEARCH_URL = "http://127.0.0.1:1"  # nothing listens there
    later = ingest("b2", log("/srv/bob/train.py", "make_loader", "/mnt/b/124.tar"))
    assert later.pk and not later.rule.startswith("judged.")


def test_it_can_be_switched_off(judged, settings):
    settings.JOBTRIAGE_LEARN_FROM_TRIAGE = False
    later = ingest("b3", log("/srv/bob/train.py", "make_loader", "/mnt/b/125.tar"))
    assert not later.rule.startswith("judged.")
