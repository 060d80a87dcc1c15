import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from jobs_ingest import search_index, services
from jobs_ingest.models import Failure
from jobs_ingest.progress import Progress


class Command(BaseCommand):
    help = ("Rebuild the Elasticsearch failures index from PostgreSQL (the source of truth) into a new "
            "index, then switch the alias atomically: searches keep working throughout. With --pending, "
            "only index failures not yet indexed (after an Elasticsearch outage).")

    def add_arguments(self, parser):
        parser.add_argument("--pending", action="store_true", help="index only failures not yet indexed")
        parser.add_argument("--chunk-size", type=int, default=1000)

    def handle(self, pending, chunk_size, **options):
        started, began = timezone.now(), time.monotonic()
        client = services.es_client()
        failures = services.failures_for_index()
        if pending:
            failures = failures.filter(indexed_at__isnull=True)
        total = failures.count()
        try:
            with Progress(total, "reindex", getattr(self.stderr, "_out", self.stderr)) as bar:
                if pending:
                    ids = list(failures.values_list("pk", flat=True))
                    for start in range(0, len(ids), chunk_size):
                        services.index_failures(ids[start:start + chunk_size])
                        bar.advance(len(ids[start:start + chunk_size]))
                    result = {"index": search_index.alias_name(settings.ES_INDEX_PREFIX), "count": len(ids)}
                else:
                    docs = services.failure_documents(failures.iterator(chunk_size=chunk_size))
                    result = search_index.rebuild(client, settings.ES_INDEX_PREFIX, docs,
                                                  progress=bar.set, chunk_size=chunk_size)
                    Failure.objects.filter(analysed_at__lte=started).update(indexed_at=timezone.now())
                    # Writes that went through the alias while we loaded landed in the old, now deleted,
                    # index: push what changed since we started again.
                    changed = list(Failure.objects.filter(analysed_at__gt=started).values_list("pk", flat=True))
                    for start in range(0, len(changed), chunk_size):
                        services.index_failures(changed[start:start + chunk_size])
        except search_index.IndexingError as exc:
            raise CommandError(f"reindex failed, the previous index is untouched: {exc}") from exc
        self.stdout.write(f"reindex: {result['count']} failures indexed into {result['index']} "
                          f"in {time.monotonic() - began:.1f} s")
