"""Reason-level clusters (#14.3) for the signatures made before clusters were computed, from their exception
type and masked message (the raw message is on their failures; the masked one clusters the same way: the
cluster masks everything the signature's mask does, and more). In batches; a person's split is kept."""
from django.db import migrations

BATCH = 2000


def backfill(apps, schema_editor):
    from jobs_ingest.core.cluster import cluster_key

    Signature = apps.get_model("jobs_ingest", "Signature")
    last = 0
    while True:
        batch = list(Signature.objects.filter(cluster="", pk__gt=last).order_by("pk")
                     .only("pk", "exception_type", "masked_message")[:BATCH])
        if not batch:
            return
        for signature in batch:
            # masked_message starts with the short type ("KeyError: ..."); cluster_key adds it again.
            message = signature.masked_message
            short = signature.exception_type.rsplit(".", 1)[-1]
            if short and message.startswith(short + ": "):
                message = message[len(short) + 2:]
            signature.cluster, signature.cluster_message = cluster_key(signature.exception_type, message)
        Signature.objects.bulk_update(batch, ["cluster", "cluster_message"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [("jobs_ingest", "0011_failure_judged_like")]
    operations = [migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True)]
