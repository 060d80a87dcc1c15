"""Bring the search documents in step with PostgreSQL after a change: index_failures (a new or
re-analysed failure, with its signature's document) and index_signatures (after a judgment).

PostgreSQL is the source of truth: a failure counts as indexed (indexed_at) only once Elasticsearch
took its document; whatever is not is retried (tasks, `reindex --pending`).
"""
from __future__ import annotations

import logging
from typing import Iterable

from django.conf import settings
from django.utils import timezone
from elasticsearch import NotFoundError

from jobs_ingest.models import Failure, Signature
from jobs_ingest.search import fields, index
from jobs_ingest.search.projection import (failure_documents, failures_for_index, latest_failure, platforms_of,
                                           signature_document)

log = logging.getLogger(__name__)

# A signature document is read, merged and written back with if_seq_no: a concurrent writer makes the
# write fail with 409 and it is redone from fresh data (Elasticsearch here has no scripted updates).
SIGNATURE_WRITE_ATTEMPTS = 5

_clients: dict[str, object] = {}
_ensured: set[tuple[str, str]] = set()


def layout() -> dict:
    """Shards and replicas of new indices (and replicas of existing ones), from settings."""
    return {"shards": settings.ES_SHARDS, "replicas": settings.ES_REPLICAS}


def es_client():
    """One client (and connection pool) per process and URL."""
    url = settings.ELASTICSEARCH_URL
    if url not in _clients:
        _clients[url] = index.make_client(url)
    return _clients[url]


def _ensure_index_once(client) -> None:
    """Create the template/index/alias the first time this process indexes (not on every task)."""
    key = (settings.ELASTICSEARCH_URL, settings.ES_INDEX_PREFIX)
    if key not in _ensured:
        index.ensure_index(client, settings.ES_INDEX_PREFIX, **layout())
        _ensured.add(key)


def index_failures(failure_ids: list[int], signature_ids: list[int] | None = None) -> int:
    """Push these failures (their current database state) to Elasticsearch, with the documents of
    their signatures in the same bulk request; mark them indexed. signature_ids: more signatures
    whose documents are recounted from scratch (one a failure left). Returns the failures indexed."""
    failures = list(failures_for_index().filter(pk__in=failure_ids)) if failure_ids else []
    if not failures and not signature_ids:
        return 0
    started = timezone.now()
    client = es_client()
    _ensure_index_once(client)
    prefix = settings.ES_INDEX_PREFIX
    failure_docs = list(failure_documents(failures))
    ok, errors = _write_with_signatures(client, prefix, failure_docs, failures, signature_ids or [])
    if errors and all(_status(e) == 404 for e in errors):
        # The index was deleted behind our back (or by a test): create it again and retry once.
        index.ensure_index(client, prefix, **layout())
        ok, errors = _write_with_signatures(client, prefix, failure_docs, failures, signature_ids or [])
    if errors:
        log.error("indexing errors for failures %s: %s", failure_ids, errors[:3])
    failed = {str(_item(e).get("_id")) for e in errors} if errors else set()
    done = [f.pk for f in failures if str(f.pk) not in failed]
    # Only mark what was not changed again since we read it (a newer analysis re-queues itself).
    Failure.objects.filter(pk__in=done, analysed_at__lte=started).update(indexed_at=timezone.now())
    return ok


def index_signatures(signature_ids: list[int]) -> int:
    """Rewrite these signatures' documents from PostgreSQL (after a judgment). Returns how many."""
    if not signature_ids:
        return 0
    client = es_client()
    _ensure_index_once(client)
    _, errors = _write_with_signatures(client, settings.ES_INDEX_PREFIX, [], [], list(signature_ids))
    if errors:
        raise index.IndexingError(f"signature documents rejected: {errors[:3]}")
    return len(signature_ids)


def _item(error: dict) -> dict:
    return next(iter(error.values()), {}) if isinstance(error, dict) else {}


def _status(error: dict) -> int | None:
    return _item(error).get("status")


def _write_with_signatures(client, prefix: str, failure_docs: list[dict], failures: list[Failure],
                           recount_ids: list[int]) -> tuple[int, list[dict]]:
    """One bulk request: the failure documents and their signatures' documents. Returns (failure
    documents written, errors); signature write conflicts are redone here from fresh data."""
    signature_ids = sorted({f.signature_id for f in failures} | {int(s) for s in recount_ids})
    actions = list(index.index_actions(prefix, failure_docs))
    signature_errors: list[dict] = []
    ok_failures, failure_errors = 0, []
    for attempt in range(SIGNATURE_WRITE_ATTEMPTS):
        actions += signature_actions(client, prefix, signature_ids, failures, recount_ids=recount_ids)
        _, errors = index.bulk_write(client, actions)
        signature_errors = [e for e in errors if _is_signature_item(e)]
        if attempt == 0:
            failure_errors = [e for e in errors if not _is_signature_item(e)]
            ok_failures = len(failure_docs) - len(failure_errors)
        conflicts = sorted({int(_item(e)["_id"]) for e in signature_errors if _status(e) == 409})
        # Deleting a signature document that is not there is no error.
        signature_errors = [e for e in signature_errors if _status(e) != 409
                            and not (next(iter(e)) == "delete" and _status(e) == 404)]
        if not conflicts:
            break
        log.info("signature documents %s were changed concurrently; rewriting them", conflicts)
        signature_ids, actions = conflicts, []
    else:
        signature_errors.append({"index": {"_id": ",".join(map(str, signature_ids)), "status": 409,
                                           "error": "signature documents kept changing concurrently"}})
    return ok_failures, failure_errors + signature_errors


def _is_signature_item(error: dict) -> bool:
    name = _item(error).get("_index", "")
    return name.endswith(f"-{index.SIGNATURES}") or "-failures-signatures-" in name


def signature_actions(client, prefix: str, signature_ids: list[int], failures: list[Failure] = (),
                       *, recount_ids: Iterable[int] = ()) -> list[dict]:
    """Bulk actions that bring these signatures' documents up to date with PostgreSQL (see
    projection.signature_document); platforms = those already in the document + those of `failures`
    (a full recount for recount_ids and for documents not indexed yet). Written with if_seq_no (or
    create), so a concurrent writer's platform is never lost. A signature without failures is deleted."""
    if not signature_ids:
        return []
    alias = index.alias_name(prefix, index.SIGNATURES)
    recount = {int(s) for s in recount_ids}
    signatures = {s.pk: s for s in Signature.objects.filter(pk__in=signature_ids)}
    existing = {}
    with index.translate_errors("reading signature documents"):
        try:
            found = client.mget(index=alias, ids=[str(s) for s in signature_ids], source=["platforms"])
            existing = {int(d["_id"]): d for d in found["docs"] if d.get("found")}
        except NotFoundError:
            pass  # no signatures index yet: the bulk write reports 404 and index_failures creates it
    extras = fields.signature_fields(list(signatures.values()))
    by_signature: dict[int, list[Failure]] = {}
    for failure in failures:
        by_signature.setdefault(failure.signature_id, []).append(failure)
    actions = []
    for signature_id in signature_ids:
        signature = signatures.get(signature_id)
        if signature is None or signature.failure_count == 0:
            actions.append({"_op_type": "delete", "_index": alias, "_id": str(signature_id)})
            continue
        mine = by_signature.get(signature_id, [])
        current = existing.get(signature_id)
        if current is not None and signature_id not in recount:
            platforms = set(current["_source"].get("platforms") or [])
        elif signature.failure_count > len(mine):
            platforms = platforms_of(signature_id)
        else:
            platforms = set()
        platforms |= {f.job.platform for f in mine}
        latest = latest_failure(signature, mine if signature_id not in recount else [])
        doc = signature_document(signature, extras.get(signature_id, {}), platforms, latest)
        action = {"_index": alias, "_id": str(signature_id), "_source": doc}
        if current is None:
            action["_op_type"] = "create"  # fails with 409 if a concurrent writer created it first
        else:
            action.update(_op_type="index", if_seq_no=current["_seq_no"], if_primary_term=current["_primary_term"])
        actions.append(action)
    return actions
