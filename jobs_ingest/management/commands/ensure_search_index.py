from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from jobs_ingest.search import index
from jobs_ingest.search.sync import es_client, layout


class Command(BaseCommand):
    help = ("Create the Elasticsearch index templates, indices and aliases (failures and signatures) if they "
            "are missing (idempotent).")

    def handle(self, *args, **options):
        prefix = settings.ES_INDEX_PREFIX
        try:
            failures = index.ensure_index(es_client(), prefix, **layout())
            signatures = index.alias_indices(es_client(), prefix, index.SIGNATURES)
        except index.IndexingError as exc:
            raise CommandError(f"Elasticsearch at {settings.ELASTICSEARCH_URL} is not usable: {exc}") from exc
        self.stdout.write(f"ensure_search_index: alias {index.alias_name(prefix)} -> {failures}, "
                          f"alias {index.alias_name(prefix, index.SIGNATURES)} -> {', '.join(signatures)}")
