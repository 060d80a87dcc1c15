from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from jobs_ingest import search_index, services


class Command(BaseCommand):
    help = ("Create the Elasticsearch index templates, indices and aliases (failures and signatures) if they "
            "are missing (idempotent).")

    def handle(self, *args, **options):
        prefix = settings.ES_INDEX_PREFIX
        try:
            index = search_index.ensure_index(services.es_client(), prefix)
            signatures = search_index.alias_indices(services.es_client(), prefix, search_index.SIGNATURES)
        except search_index.IndexingError as exc:
            raise CommandError(f"Elasticsearch at {settings.ELASTICSEARCH_URL} is not usable: {exc}") from exc
        self.stdout.write(f"ensure_search_index: alias {search_index.alias_name(prefix)} -> {index}, "
                          f"alias {search_index.alias_name(prefix, search_index.SIGNATURES)} -> {', '.join(signatures)}")
