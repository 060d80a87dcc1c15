"""Reason clusters (#14.3) stored on every signature, in PostgreSQL and Elasticsearch, through the worker's
batch code; and the backfill of signatures made before clusters (migration 0012)."""
import importlib
import io

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.urls import reverse

from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Signature
from jobs_ingest.search.index import SIGNATURES, alias_name
from jobs_ingest.search.sync import index_signatures


def log(path, function, attribute):
    return (f"Traceback (most recent call last):\n  File \"{path}\", line 40, in {function}\n    model.{attribute}()\n"
            f"AttributeError: 'DataParallel' object has no attribute '{attribute}'\n").encode()


def ingest(external_id, text, team="nlp"):
    job = services.receive_job(parse_job({"platform": "slurm", "external_id": external_id, "status": "failed",
                                          "team": team}), io.BytesIO(text)).job
    return failures.analyse(job.pk, index_now=True)


def test_one_reason_from_two_code_bases_is_two_signatures_in_one_cluster(transactional_db, log_dir, es, settings, client):
    a = ingest("a1", log("/home/ann/train.py", "train", "encoder"))
    b = ingest("b1", log("/srv/bob/generate.py", "sample", "generate"))
    sa, sb = Signature.objects.get(pk=a.signature_id), Signature.objects.get(pk=b.signature_id)
    assert sa.pk != sb.pk and sa.cluster and sa.cluster == sb.cluster
    assert sa.cluster_message == "AttributeError: <X> has no attribute <Q>"  # an attribute missing on any object: one reason

    index_signatures([sa.pk, sb.pk])
    es.indices.refresh(index=f"{settings.ES_INDEX_PREFIX}-*")
    hits = es.search(index=alias_name(settings.ES_INDEX_PREFIX, SIGNATURES), query={"term": {"cluster": sa.cluster}})
    assert {h["_source"]["signature_id"] for h in hits["hits"]["hits"]} == {str(sa.pk), str(sb.pk)}
    failure_hits = es.search(index=alias_name(settings.ES_INDEX_PREFIX), query={"term": {"cluster": sa.cluster}})
    assert failure_hits["hits"]["total"]["value"] == 2

    client.force_login(User.objects.create_superuser("root"))
    page = client.get(reverse("cluster-detail", args=[sa.cluster])).content.decode()
    assert reverse("signature-detail", args=[sa.pk]) in page and reverse("signature-detail", args=[sb.pk]) in page
    for url in (reverse("job-detail", args=[b.job_id]), reverse("signature-detail", args=[sb.pk])):
        assert reverse("cluster-detail", args=[sa.cluster]) in client.get(url).content.decode(), url


def test_a_signature_made_before_clusters_gets_one_and_a_persons_split_is_kept(transactional_db, log_dir, es):
    first = ingest("a1", log("/home/ann/train.py", "train", "encoder"))
    Signature.objects.filter(pk=first.signature_id).update(cluster="", cluster_message="")
    again = ingest("a2", log("/home/ann/train.py", "train", "encoder"))
    assert again.signature_id == first.signature_id and Signature.objects.get(pk=first.signature_id).cluster

    Signature.objects.filter(pk=first.signature_id).update(cluster="split-0123456789abcdef")
    ingest("a3", log("/home/ann/train.py", "train", "encoder"))
    assert Signature.objects.get(pk=first.signature_id).cluster == "split-0123456789abcdef"


def test_the_migration_backfills_clusters_from_the_masked_message(transactional_db):
    made = [Signature.objects.create(fingerprint=f"f{i}", normaliser_version="2", exception_type="FileNotFoundError",
                                     masked_message=f"FileNotFoundError: [Errno <NUM>] No such file or directory: "
                                                    f"'<PATH>/{name}'") for i, name in enumerate(["a.json", "b.tar"])]
    empty = Signature.objects.create(fingerprint="f9", normaliser_version="2", masked_message="")
    migration = importlib.import_module("jobs_ingest.migrations.0012_signature_cluster_backfill")
    migration.backfill(apps, None)
    got = [Signature.objects.get(pk=s.pk) for s in made]
    assert got[0].cluster and got[0].cluster == got[1].cluster
    assert got[0].cluster_message == "FileNotFoundError: [Errno <NUM>] No such file or directory: <Q>"
    assert Signature.objects.get(pk=empty.pk).cluster == ""
