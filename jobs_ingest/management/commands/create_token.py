from django.core.management.base import BaseCommand

from jobs_ingest.models import IngestToken


class Command(BaseCommand):
    help = "Issue an ingestion API token (printed once; only its hash is stored)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--platform", default="", help="limit the token to one platform")
        parser.add_argument("--team", default="", help="limit the token to one team")

    def handle(self, name, platform, team, **options):
        token, key = IngestToken.issue(name, platform=platform, team=team)
        self.stderr.write(f"token '{token.name}' issued (scope: platform={platform or 'any'}, team={team or 'any'})")
        self.stdout.write(key)
