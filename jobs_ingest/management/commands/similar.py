import json
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from jobs_ingest.search import index, query, similar


class Command(BaseCommand):
    help = ('Find similar past failures for texts read as JSON Lines {"id", "text"} on stdin; write one line per '
            'input: {"id", "hits": [{"platform", "external_id", "signature", "category", "score"}, ...]} (or '
            '{"id", "error"} for an input that cannot be searched), against the live index.')
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--top", type=int, default=10, help="hits per input (default 10, at most 100)")
        parser.add_argument("--strategy", default=query.DEFAULT_STRATEGY, choices=query.STRATEGIES)

    def handle(self, *args, top, strategy, **options):
        if top < 1:
            raise CommandError("--top must be at least 1")
        client = index.make_client(settings.ELASTICSEARCH_URL)
        prefix = settings.ES_INDEX_PREFIX
        stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
        count = errors = 0
        started = time.perf_counter()
        for number, line in enumerate(stdin, 1):
            if not line.strip():
                continue
            count += 1
            out = self._one(client, prefix, number, line, top, strategy)
            errors += "error" in out
            self.stdout.write(json.dumps(out, ensure_ascii=False))
            if count % 100 == 0:
                self.stderr.write(f"similar: {count} inputs...")
        elapsed = time.perf_counter() - started
        self.stderr.write(f"similar: {count} inputs, {errors} errors, {elapsed:.1f}s "
                          f"({1000 * elapsed / max(count, 1):.1f} ms each), index {index.alias_name(prefix)}, "
                          f"strategy {strategy}")

    def _one(self, client, prefix, number, line, top, strategy) -> dict:
        try:
            item = json.loads(line)
        except ValueError as exc:
            return {"id": None, "line": number, "error": f"not valid JSON: {str(exc)[:200]}"}
        if not isinstance(item, dict):
            return {"id": None, "line": number, "error": "each line must be a JSON object {\"id\", \"text\"}"}
        ident = item.get("id")
        text = item.get("text")
        if not isinstance(text, str):
            return {"id": ident, "error": "'text' is required and must be a string"}
        try:
            hits = similar.similar_failures(client, prefix, text, top=top, strategy=strategy, stats=False)
        except query.BadQuery as exc:
            return {"id": ident, "error": str(exc)}
        except query.SearchUnavailable as exc:
            raise CommandError(str(exc)) from exc
        return {"id": ident, "hits": [{"platform": h.platform, "external_id": h.external_id,
                                       "signature": h.signature_id, "category": h.effective_category,
                                       "score": h.score} for h in hits]}
