from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from jobs_ingest import search_index, services


class Command(BaseCommand):
    help = "Create the Elasticsearch index template, index and alias if they are missing (idempotent)."

    def handle(self, *args, **options):
        try:
            index = search_index.ensure_index(services.es_client(), settings.ES_INDEX_PREFIX)
        except search_index.IndexingError as exc:
            raise CommandError(f"Elasticsearch at {settings.ELASTICSEARCH_URL} is not usable: {exc}") from exc
        self.stdout.write(f"ensure_search_index: alias {search_index.alias_name(settings.ES_INDEX_PREFIX)} -> {index}")
