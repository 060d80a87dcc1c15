import json
import sys

from django.core.management.base import BaseCommand, CommandError

from jobs_ingest.core.configs import GROUPING_CONFIGS, TAGGING_CONFIGS, UnknownConfig
from jobs_ingest.core.jsonl import tag_jsonl


class Command(BaseCommand):
    help = ('Tag logs read as JSON Lines {"id", "log"[, "exit_code"]} on stdin; write one JSON line per input '
            "with the category, dimension, confidence, rule, failure line, exception type, fingerprint, stage, "
            "retry advice and the ids of the grouping and tagging configs used. Needs no database and no "
            "running server.")
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--grouping-config", metavar="ID",
                            help=f"grouping config id (default: the newest, {GROUPING_CONFIGS[-1].id}); "
                                 f"known: {', '.join(c.id for c in GROUPING_CONFIGS)}")
        parser.add_argument("--tagging-config", metavar="ID",
                            help=f"tagging config id (default: the newest, {TAGGING_CONFIGS[-1].id}); "
                                 f"known: {', '.join(c.id for c in TAGGING_CONFIGS)}")

    def handle(self, *args, **options):
        try:
            results = tag_jsonl(self._stdin(), grouping=options["grouping_config"], tagging=options["tagging_config"])
        except UnknownConfig as exc:
            raise CommandError(str(exc)) from exc
        count = errors = 0
        for result in results:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            count += 1
            errors += "error" in result
        self.stderr.write(f"tag_logs: {count} logs tagged, {errors} errors")

    @staticmethod
    def _stdin():
        return open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
