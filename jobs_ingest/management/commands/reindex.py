import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from jobs_ingest.search import index, projection, sync
from jobs_ingest.models import Failure
from jobs_ingest.progress import Progress


class Command(BaseCommand):
    help = ("Rebuild the Elasticsearch failures and signatures indices from PostgreSQL (the source of truth) "
            "into new indices, then switch each alias atomically: searches keep working throughout. With "
            "--pending, only index failures not yet indexed (after an Elasticsearch outage). With "
            "--signatures-only, rebuild only the signatures index.")

    def add_arguments(self, parser):
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--pending", action="store_true", help="index only failures not yet indexed")
        mode.add_argument("--signatures-only", action="store_true",
                          help="rebuild only the signatures index (one document per signature)")
        parser.add_argument("--chunk-size", type=int, default=1000)

    def handle(self, pending, signatures_only, chunk_size, **options):
        started, began = timezone.now(), time.monotonic()
        client = sync.es_client()
        prefix = settings.ES_INDEX_PREFIX
        stream = getattr(self.stderr, "_out", self.stderr)
        failures = projection.failures_for_index()
        summary = []
        try:
            if pending:
                failures = failures.filter(indexed_at__isnull=True)
                ids = list(failures.values_list("pk", flat=True))
                with Progress(len(ids), "reindex", stream) as bar:
                    for start in range(0, len(ids), chunk_size):
                        sync.index_failures(ids[start:start + chunk_size])
                        bar.advance(len(ids[start:start + chunk_size]))
                summary.append(f"{len(ids)} failures indexed into {index.alias_name(prefix)}")
            else:
                if not signatures_only:
                    with Progress(failures.count(), "reindex failures", stream) as bar:
                        docs = projection.failure_documents(failures.iterator(chunk_size=chunk_size))
                        result = index.rebuild(client, prefix, docs, progress=bar.set, chunk_size=chunk_size,
                                               **sync.layout())
                    summary.append(f"{result['count']} failures indexed into {result['index']}")
                with Progress(projection.signatures_with_failures_count(), "reindex signatures", stream) as bar:
                    result = index.rebuild(client, prefix, projection.all_signature_documents(),
                                           progress=bar.set, chunk_size=chunk_size, kind=index.SIGNATURES,
                                           **sync.layout())
                summary.append(f"{result['count']} signatures indexed into {result['index']}")
                if not signatures_only:
                    Failure.objects.filter(analysed_at__lte=started).update(indexed_at=timezone.now())
                # Writes that went through the aliases while we loaded landed in the old, now deleted,
                # indices: push what changed since we started again (with their signatures).
                changed = list(Failure.objects.filter(analysed_at__gt=started).values_list("pk", flat=True))
                for start in range(0, len(changed), chunk_size):
                    sync.index_failures(changed[start:start + chunk_size])
        except index.IndexingError as exc:
            raise CommandError(f"reindex failed, the previous index is untouched: {exc}") from exc
        self.stdout.write(f"reindex: {', '.join(summary)} in {time.monotonic() - began:.1f} s")
