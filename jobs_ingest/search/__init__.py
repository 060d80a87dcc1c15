"""Elasticsearch, derived from PostgreSQL and rebuildable from it (`manage.py reindex`).

- index.py: the two indices (failures, signatures): mappings, templates, aliases, bulk writes, rebuilds.
- fields.py: the extension point through which other apps (triage) add fields to the documents.
- projection.py: documents from the facts in PostgreSQL. sync.py: pushes them after a change.
- tasks.py: the indexing task and enqueue_indexing.
- query.py: pasted text -> Probe, filters and ranking clauses. similar.py: similar past failures.
  logs.py: full-text log search. api.py: POST /api/v1/similar.

index, query, similar and logs import no Django: callers pass the client and the index prefix."""
