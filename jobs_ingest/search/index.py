"""The Elasticsearch indices: templates, aliases, bulk indexing and zero-downtime rebuilds.

Two kinds of index, each behind its own alias:
- FAILURES: one document per failure (`_id` = failure id), alias `{prefix}-failures`, concrete indices
  `{prefix}-failures-<UTC timestamp>`. Log search and job-level filters (time range) read it.
- SIGNATURES: one document per signature (`_id` = signature id) with its counters, teams, platforms,
  judgment and latest failure, alias `{prefix}-signatures`. Similar-failure search reads it: one
  document per signature already, so no collapse and ~10x fewer documents to score at 1M failures.
  Its concrete indices are `{prefix}-failures-signatures-<UTC timestamp>`: under the failures' name
  pattern on purpose, so whatever lists or deletes `{prefix}-failures-*` (test and benchmark
  clean-ups) takes them too; its own template has a higher priority, so it wins for these names.

No Django here: callers pass the client and the index prefix. Readers and writers always go through
the aliases; concrete indices are only ever swapped behind them. PostgreSQL is the source of truth,
so any index can be rebuilt from it.

Every function raises IndexingError when Elasticsearch is unreachable or failing (callers retry or
report); per-document rejections are returned, not raised, except by rebuild, which is all or nothing.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch, NotFoundError, helpers

log = logging.getLogger(__name__)

FAILURES = "failures"
SIGNATURES = "signatures"
KINDS = (FAILURES, SIGNATURES)
# Bump when a mapping changes; shown in the template and index _meta.
MAPPING_VERSION = 2
SIGNATURE_MAPPING_VERSION = 1
# Above the built-in stack templates (priority 100) in case a prefix ever overlaps their patterns;
# the signatures' template above the failures' one, whose pattern also covers its indices.
TEMPLATE_PRIORITY = {FAILURES: 200, SIGNATURES: 201}
ID_FIELD = {FAILURES: "failure_id", SIGNATURES: "signature_id"}

KEYWORD_FIELDS = (
    "failure_id", "job_id", "signature_id", "fingerprint", "platform", "external_id", "submitter", "team",
    "status", "user_frame", "stage", "category", "dimension", "rule", "retry_advice", "tagger_version",
    "normaliser_version", "confirmed_category", "root_cause", "triage_state", "cluster",
)
TEXT_FIELDS = ("message", "failure_line", "traceback", "excerpt")
INTEGER_FIELDS = ("gpus", "attempts", "failure_line_number")
FLOAT_FIELDS = ("gpu_hours", "confidence")
DATE_FIELDS = ("submitted_at", "started_at", "ended_at", "ingested_at")
SIGNATURE_KEYWORD_FIELDS = (
    "signature_id", "fingerprint", "normaliser_version", "category", "confirmed_category", "effective_category",
    "root_cause", "triage_state", "teams", "platforms", "cluster",
)
# The signature's latest failure, shown as its example hit: stored, not searched.
LATEST_FAILURE_FIELDS = ("failure_id", "job_id", "platform", "external_id", "job_name", "team", "message",
                         "failure_line", "stage", "ended_at")
# Keywords longer than this are not indexed (still in _source): a huge log-derived value must not
# reject the whole document (Lucene's term limit is 32766 bytes).
IGNORE_ABOVE = 1024


class IndexingError(Exception):
    """Elasticsearch is unreachable, failing, or (for rebuild) rejected documents."""


class translate_errors:
    """Turn transport failures and server-side errors into IndexingError with a readable message."""

    def __init__(self, doing: str):
        self.doing = doing

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, IndexingError):
            return False
        if isinstance(exc, TransportError):  # connection refused, timeout, TLS, serialisation
            raise IndexingError(f"{self.doing}: Elasticsearch unreachable ({exc})") from exc
        if isinstance(exc, ApiError):
            raise IndexingError(f"{self.doing}: Elasticsearch answered {exc.meta.status}: {exc.message}") from exc
        return False


def make_client(url: str, timeout: float = 10) -> Elasticsearch:
    # Few retries: an unreachable server should surface quickly so Celery can back off instead.
    return Elasticsearch(url, request_timeout=timeout, max_retries=1, retry_on_timeout=False)


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown index kind {kind!r}; known: {', '.join(KINDS)}")
    return kind


def alias_name(prefix: str, kind: str = FAILURES) -> str:
    return f"{prefix}-{_kind(kind)}"


def template_name(prefix: str, kind: str = FAILURES) -> str:
    return f"{prefix}-{_kind(kind)}"


def _index_stem(prefix: str, kind: str) -> str:
    return f"{prefix}-failures" if _kind(kind) == FAILURES else f"{prefix}-failures-signatures"


def new_index_name(prefix: str, kind: str = FAILURES) -> str:
    # Index names must be lower case, hence no "T"/"Z" in the timestamp.
    return f"{_index_stem(prefix, kind)}-{datetime.now(timezone.utc):%Y%m%d-%H%M%S-%f}"


def mappings(kind: str = FAILURES) -> dict:
    if _kind(kind) == SIGNATURES:
        return signature_mappings()
    keyword = {"type": "keyword", "ignore_above": IGNORE_ABOVE}
    text = {"type": "text", "analyzer": "standard"}
    properties = {name: dict(keyword) for name in KEYWORD_FIELDS}
    properties.update({name: dict(text) for name in TEXT_FIELDS})
    properties.update({name: {"type": "integer"} for name in INTEGER_FIELDS})
    properties.update({name: {"type": "float"} for name in FLOAT_FIELDS})
    properties.update({name: {"type": "date"} for name in DATE_FIELDS})
    # The first failure of each signature: similar-failure search without job-level filters scores
    # one document per signature instead of every failure.
    properties["representative"] = {"type": "boolean"}
    properties["job_name"] = {**text, "fields": {"keyword": dict(keyword)}}
    # simple (letters only, lower-cased) rather than standard: the standard tokenizer keeps dotted names
    # whole ("torch.outofmemoryerror"), so "OutOfMemoryError" would not find torch.OutOfMemoryError.
    properties["exception_type"] = {**keyword, "fields": {"text": {"type": "text", "analyzer": "simple"}}}
    properties["masked_message"] = {**text, "fields": {"shingles": {"type": "text", "analyzer": "shingles"}}}
    return {
        # strict: the document is built in one place (search.projection) from CONTRACTS.md, so an
        # unmapped field is a bug. strict makes it fail loudly in tests and in rebuild (which then rolls
        # back) instead of being silently stored unsearchable, as dynamic=false would do.
        "dynamic": "strict",
        "_meta": {"mapping_version": MAPPING_VERSION},
        "properties": properties,
    }


def signature_mappings() -> dict:
    keyword = {"type": "keyword", "ignore_above": IGNORE_ABOVE}
    properties: dict[str, Any] = {name: dict(keyword) for name in SIGNATURE_KEYWORD_FIELDS}
    properties["exception_type"] = {**keyword, "fields": {"text": {"type": "text", "analyzer": "simple"}}}
    properties["masked_message"] = {"type": "text", "analyzer": "standard",
                                    "fields": {"shingles": {"type": "text", "analyzer": "shingles"}}}
    properties["failure_count"] = {"type": "integer"}
    properties["gpu_hours"] = {"type": "float"}
    properties["first_seen"] = {"type": "date"}
    properties["last_seen"] = {"type": "date"}
    # Display only: kept in _source, nothing indexed (so its fields need no mapping).
    properties["latest_failure"] = {"type": "object", "enabled": False}
    return {"dynamic": "strict", "_meta": {"mapping_version": SIGNATURE_MAPPING_VERSION},
            "properties": properties}


def signature_document(*, signature_id, fingerprint: str, normaliser_version: str, exception_type: str,
                       masked_message: str, category: str, confirmed_category: str = "", root_cause: str = "",
                       triage_state: str = "", failure_count: int, gpu_hours: float, first_seen=None,
                       last_seen=None, teams: Iterable[str] = (), platforms: Iterable[str] = (),
                       latest_failure: dict | None = None, cluster: str = "") -> dict:
    """The one place a signature document is shaped, beside its strict mapping (search.projection
    builds it from PostgreSQL; tests and bench/search_docs.py from failure documents)."""
    latest = latest_failure or {}
    return {
        "signature_id": str(signature_id), "fingerprint": fingerprint, "normaliser_version": normaliser_version,
        "exception_type": exception_type, "masked_message": masked_message, "category": category,
        "cluster": cluster or "", "confirmed_category": confirmed_category or "", "root_cause": root_cause or "",
        "triage_state": triage_state or "", "effective_category": confirmed_category or category,
        "failure_count": int(failure_count), "gpu_hours": round(float(gpu_hours or 0.0), 3),
        "first_seen": first_seen, "last_seen": last_seen,
        "teams": sorted({t for t in teams if t}), "platforms": sorted({p for p in platforms if p}),
        "latest_failure": {name: (str(latest[name]) if name in ("failure_id", "job_id") and latest.get(name)
                                  is not None else latest.get(name)) for name in LATEST_FAILURE_FIELDS},
    }


def index_settings(*, shards: int = 1, replicas: int = 0) -> dict:
    return {
        "number_of_shards": shards,
        "number_of_replicas": replicas,
        "analysis": {
            # Only core analysis exists on the integ-test distribution: standard tokenizer plus the
            # lowercase and shingle filters. Word 2-3-grams find near-identical masked messages.
            "filter": {"shingle_2_3": {"type": "shingle", "min_shingle_size": 2, "max_shingle_size": 3}},
            "analyzer": {"shingles": {"type": "custom", "tokenizer": "standard",
                                      "filter": ["lowercase", "shingle_2_3"]}},
        },
    }


def index_template_body(prefix: str, *, shards: int = 1, replicas: int = 0, kind: str = FAILURES) -> dict:
    # No aliases in the template: every index it creates would join the alias at once, which would
    # break the controlled swap in rebuild().
    return {
        "index_patterns": [f"{_index_stem(prefix, kind)}-*"],
        "priority": TEMPLATE_PRIORITY[kind],
        "version": MAPPING_VERSION if kind == FAILURES else SIGNATURE_MAPPING_VERSION,
        "_meta": {"managed_by": "jobtriage", "alias": alias_name(prefix, kind)},
        "template": {"settings": index_settings(shards=shards, replicas=replicas), "mappings": mappings(kind)},
    }


def put_template(client: Elasticsearch, prefix: str, *, shards: int = 1, replicas: int = 0,
                 kind: str = FAILURES) -> None:
    with translate_errors(f"putting the {kind} index template"):
        client.indices.put_index_template(name=template_name(prefix, kind),
                                          **index_template_body(prefix, shards=shards, replicas=replicas, kind=kind))


def alias_indices(client: Elasticsearch, prefix: str, kind: str = FAILURES) -> list[str]:
    """Concrete indices behind the alias (empty if it does not exist), sorted oldest first."""
    with translate_errors("reading the alias"):
        try:
            return sorted(client.indices.get_alias(name=alias_name(prefix, kind)))
        except NotFoundError:
            return []


def _write_index(client: Elasticsearch, prefix: str, kind: str = FAILURES) -> str | None:
    alias = alias_name(prefix, kind)
    with translate_errors("reading the alias"):
        try:
            found = client.indices.get_alias(name=alias)
        except NotFoundError:
            return None
    writers = [name for name, body in found.items() if body["aliases"][alias].get("is_write_index")]
    return (writers or sorted(found))[-1]


def _create_index(client: Elasticsearch, prefix: str, kind: str = FAILURES, **body) -> str:
    """Create a fresh concrete index from the template; retried on the (microsecond) name clash."""
    for _ in range(3):
        name = new_index_name(prefix, kind)
        try:
            client.indices.create(index=name, **body)
            return name
        except ApiError as exc:
            if exc.error != "resource_already_exists_exception":
                raise
    raise IndexingError(f"could not find a free index name for {alias_name(prefix, kind)}")


def _set_replicas(client: Elasticsearch, name: str, replicas: int) -> None:
    """The replica count is dynamic: an existing index follows the configured one (ES_REPLICAS)."""
    current = client.indices.get_settings(index=name, name="index.number_of_replicas")
    if int(current[name]["settings"]["index"]["number_of_replicas"]) != replicas:
        client.indices.put_settings(index=name, settings={"index": {"number_of_replicas": replicas}})


def ensure_index(client: Elasticsearch, prefix: str, *, shards: int = 1, replicas: int = 0) -> str:
    """Templates in place, both aliases (failures and signatures) pointing at a concrete index;
    returns the failures' index. Idempotent and safe to race (see ensure_one)."""
    failures = ensure_one(client, prefix, FAILURES, shards=shards, replicas=replicas)
    ensure_one(client, prefix, SIGNATURES, shards=shards, replicas=replicas)
    return failures


def ensure_one(client: Elasticsearch, prefix: str, kind: str, *, shards: int = 1, replicas: int = 0) -> str:
    """Template in place, alias pointing at a concrete index; returns that index. Safe to race:
    index creation carries the alias with is_write_index, and Elasticsearch refuses a second write
    index, so a loser of the race drops out and uses the winner's index."""
    put_template(client, prefix, shards=shards, replicas=replicas, kind=kind)
    with translate_errors(f"ensuring the {kind} index"):
        existing = _write_index(client, prefix, kind)
        if existing:
            _add_new_fields(client, existing, kind)
            _set_replicas(client, existing, replicas)
            return existing
        alias = {alias_name(prefix, kind): {"is_write_index": True}}
        try:
            return _create_index(client, prefix, kind, aliases=alias)
        except ApiError:
            # Lost the race: "alias has more than one write index" comes back as a 500
            # illegal_state_exception and nothing was created. Use the winner's index.
            existing = _write_index(client, prefix, kind)
            if not existing:
                raise
            return existing


def _add_new_fields(client: Elasticsearch, index: str, kind: str = FAILURES) -> None:
    # With strict mapping, a field added to the contract would reject every document until the next
    # rebuild; additive mapping changes can be applied in place. Incompatible ones need rebuild().
    try:
        client.indices.put_mapping(index=index, properties=mappings(kind)["properties"])
    except ApiError as exc:
        if exc.meta.status >= 500:
            raise
        log.warning("mapping of %s differs from the template and cannot be updated in place (%s); "
                    "run `manage.py reindex`", index, exc.message)


def _index_actions(index: str, docs: Iterable[dict], kind: str = FAILURES) -> Iterable[dict]:
    id_field = ID_FIELD[kind]
    for doc in docs:
        # The failure (signature) id as _id: re-indexing overwrites it, so retries are harmless.
        yield {"_op_type": "index", "_index": index, "_id": str(doc[id_field]), "_source": doc}


def index_actions(prefix: str, docs: Iterable[dict], kind: str = FAILURES) -> Iterable[dict]:
    """Bulk actions writing docs through the kind's alias (for bulk_write)."""
    return _index_actions(alias_name(prefix, kind), docs, kind)


def bulk_write(client: Elasticsearch, actions: Iterable[dict], *, refresh_aliases: Iterable[str] = (),
               chunk_size: int = 500) -> tuple[int, list[dict]]:
    """Send bulk actions (index_actions, or hand-made ones, e.g. with if_seq_no) in as few requests
    as chunk_size allows. Returns (ok_count, errors), errors being the bulk items that failed, e.g.
    {"index": {"_id": "42", "status": 400, "error": {...}}}."""
    ok_count, errors = 0, []
    with translate_errors("bulk indexing"):
        # require_alias: never let a write auto-create a dynamic-mapped index named like the alias.
        for ok, item in helpers.streaming_bulk(client, actions, chunk_size=chunk_size, raise_on_error=False,
                                               raise_on_exception=True, max_retries=3, require_alias=True):
            if ok:
                ok_count += 1
            else:
                errors.append(item)
        refresh = list(refresh_aliases)
        if refresh and ok_count:
            client.indices.refresh(index=",".join(refresh))
    return ok_count, errors


def rebuild(client: Elasticsearch, prefix: str, docs: Iterable[dict], *,
            progress: Callable[[int], object] | None = None, chunk_size: int = 1000,
            shards: int = 1, replicas: int = 0, kind: str = FAILURES) -> dict:
    """Load every doc into a new index, then swap the alias in one atomic call and drop the old
    indices. Searches through the alias keep answering from the old index until the swap.
    On any failure the new index is deleted, the alias and old data are untouched, and
    IndexingError is raised (errors from iterating docs propagate as they are).

    Writes made through the alias while this runs land in the old index and are dropped with it:
    re-push failures changed since the rebuild started (there is no _reindex API on this server)."""
    put_template(client, prefix, shards=shards, replicas=replicas, kind=kind)
    with translate_errors("creating the new index"):
        # No refreshes while loading (nobody searches the new index yet); restored before the swap.
        new = _create_index(client, prefix, kind, settings={"index": {"refresh_interval": "-1"}})
    done = 0
    try:
        with translate_errors(f"loading {new}"):
            for ok, item in helpers.streaming_bulk(client, _index_actions(new, docs, kind), chunk_size=chunk_size,
                                                   raise_on_error=False, raise_on_exception=True, max_retries=3):
                if not ok:
                    raise IndexingError(f"rebuild aborted, document rejected by {new}: {item}")
                done += 1
                if progress and done % chunk_size == 0:
                    progress(done)
            if progress:
                progress(done)
            client.indices.put_settings(index=new, settings={"index": {"refresh_interval": None}})
            client.indices.refresh(index=new)
        old = alias_indices(client, prefix, kind)
        alias = alias_name(prefix, kind)
        # must_exist on remove makes the swap a compare-and-swap: if a concurrent rebuild already
        # moved the alias, this one fails (and cleans up) instead of leaving two indices behind it.
        actions = [{"remove": {"index": name, "alias": alias, "must_exist": True}} for name in old]
        actions.append({"add": {"index": new, "alias": alias, "is_write_index": True}})
        with translate_errors("swapping the alias"):
            client.indices.update_aliases(actions=actions)
    except BaseException:
        try:
            client.options(ignore_status=404).indices.delete(index=new)
        except Exception as cleanup_exc:  # server gone: report the original error, not this one
            log.warning("could not delete the half-built index %s: %s", new, cleanup_exc)
        raise
    removed = []
    for name in old:
        try:
            client.options(ignore_status=404).indices.delete(index=name)
            removed.append(name)
        except Exception as exc:  # the swap is done; a leftover index only costs disk
            log.warning("could not delete old index %s after the alias swap: %s", name, exc)
    return {"index": new, "count": done, "removed": removed}


def health(client: Elasticsearch) -> bool:
    """True if the cluster answers and is not red. Uses _cluster/health, not ping(): the integ-test
    distribution has no `GET /` endpoint, so ping() is always False there."""
    try:
        return client.cluster.health(timeout="5s")["status"] in ("green", "yellow")
    except Exception:
        return False
