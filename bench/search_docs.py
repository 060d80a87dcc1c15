"""Search documents without the database, for tests and benchmarks (bench/eval_similar.py, bench_search.py):
they write failure documents straight into an index and count what is there. Not product code: the
product builds its documents from PostgreSQL (jobs_ingest.search.projection) and never needs these."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from elasticsearch import Elasticsearch, NotFoundError

from jobs_ingest.search import index


def bulk_index(client: Elasticsearch, prefix: str, docs: Iterable[dict], *, refresh: bool = False,
               chunk_size: int = 500, kind: str = index.FAILURES) -> tuple[int, list[dict]]:
    """Index (or overwrite) docs through the kind's alias. Returns (ok_count, errors)."""
    return index.bulk_write(client, index.index_actions(prefix, docs, kind), chunk_size=chunk_size,
                            refresh_aliases=[index.alias_name(prefix, kind)] if refresh else ())


def count(client: Elasticsearch, prefix: str, kind: str = index.FAILURES) -> int:
    with index.translate_errors("counting documents"):
        try:
            return client.count(index=index.alias_name(prefix, kind))["count"]
        except NotFoundError:
            return 0


def _date_key(value) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value or "")


def signature_documents_from_failures(failure_docs: Iterable[dict]) -> list[dict]:
    """Signature documents aggregated from failure documents (no database): for tests and the
    quality evaluation, which index failure documents directly. The judgment is the latest failure's."""
    groups: dict[str, list[dict]] = {}
    for doc in failure_docs:
        groups.setdefault(str(doc["signature_id"]), []).append(doc)
    out = []
    for signature_id, docs in groups.items():
        latest = max(docs, key=lambda d: (_date_key(d.get("ended_at")), int(d["failure_id"])))
        seen = sorted(_date_key(d.get("ended_at")) for d in docs if d.get("ended_at"))
        out.append(index.signature_document(
            signature_id=signature_id, fingerprint=latest["fingerprint"],
            normaliser_version=latest["normaliser_version"], exception_type=latest["exception_type"],
            masked_message=latest["masked_message"], category=latest["category"],
            confirmed_category=latest.get("confirmed_category") or "", root_cause=latest.get("root_cause") or "",
            triage_state=latest.get("triage_state") or "", failure_count=len(docs),
            gpu_hours=sum(d.get("gpu_hours") or 0.0 for d in docs), first_seen=seen[0] if seen else None,
            last_seen=seen[-1] if seen else None, teams=[d.get("team") for d in docs],
            platforms=[d.get("platform") for d in docs], latest_failure=latest))
    return out
