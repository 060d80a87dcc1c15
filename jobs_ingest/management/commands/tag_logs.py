import json
import sys

from django.core.management.base import BaseCommand

from jobs_ingest.core.batch import tag_jsonl


class Command(BaseCommand):
    help = ('Tag logs read as JSON Lines {"id", "log"[, "exit_code"]} on stdin; write one JSON line per input '
            "with the category, dimension, confidence, rule, failure line, exception type, fingerprint, stage "
            "and retry advice. Needs no database and no running server.")
    requires_system_checks = []
    requires_migrations_checks = False

    def handle(self, *args, **options):
        stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
        count = errors = 0
        for result in tag_jsonl(stdin):
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            count += 1
            errors += "error" in result
        self.stderr.write(f"tag_logs: {count} logs tagged, {errors} errors")
