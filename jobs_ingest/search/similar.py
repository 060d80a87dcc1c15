"""Similar past failures: "has this happened before, what was it and how was it fixed?"

No Django here: callers pass an Elasticsearch client and the index prefix (readers always go through
the aliases `{prefix}-signatures` and `{prefix}-failures`, see search.index).

- similar_failures(client, prefix, text, ...) -> list[Hit]: a pasted message or whole log is analysed by
  the pure core (exception type, masked message, fingerprint; see search.query.probe), then ranked: same
  fingerprint first, then relevance of the masked message (words and word 2-3-grams) with the exception
  type boosted, then the same category; equal scores, the most recently seen first. One hit per
  signature, scored on the signatures index (one document per signature, with its counts), unless a
  filter needs each failure's own date (ended_after/before) or single failures are excluded: then on the
  failures index, collapsed by signature.
- similar_to_failure(client, prefix, failure_id, ...) -> list[Hit]: the same, for an indexed failure (the
  "similar failures" panel of a failure page), without re-analysing anything.

Errors: BadQuery and SearchUnavailable, see search.query.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch, NotFoundError

from jobs_ingest.core.normalise import masked_message as mask_message
from jobs_ingest.search.index import SIGNATURES, alias_name
from jobs_ingest.search.query import (DEFAULT_STRATEGY, FAILURE_LEVEL_FILTERS, MAX_QUERY_CHARS, SOURCE_FIELDS,
                                      STRATEGIES, WORD, BadQuery, IndexMissing, Probe, SearchUnavailable, cap,
                                      filter_clauses, probe, ranking_query, run_search, signature_filter_clauses)

MAX_TOP = 100
SIGNATURE_SOURCE_FIELDS = ["signature_id", "fingerprint", "category", "confirmed_category", "root_cause",
                           "triage_state", "exception_type", "masked_message", "failure_count", "gpu_hours",
                           "last_seen", "latest_failure"]


@dataclass
class Hit:
    signature_id: str
    failure_id: str
    platform: str
    external_id: str
    fingerprint: str
    category: str
    confirmed_category: str
    root_cause: str
    triage_state: str
    score: float
    message: str
    exception_type: str
    masked_message: str = ""
    job_id: str = ""
    job_name: str = ""
    team: str = ""
    failure_line: str = ""
    stage: str = ""
    ended_at: str | None = None
    same_fingerprint: bool = False
    # The signature across the whole index (not only failures matching the filters).
    count: int = 0
    gpu_hours: float = 0.0

    @property
    def effective_category(self) -> str:
        return self.confirmed_category or self.category

    def as_dict(self) -> dict:
        return asdict(self)

def _signature_stats(client: Elasticsearch, prefix: str, signature_ids: list[str]) -> dict[str, tuple[int, float]]:
    if not signature_ids:
        return {}
    result = run_search(client, prefix, size=0, query={"terms": {"signature_id": signature_ids}},
                     aggs={"sig": {"terms": {"field": "signature_id", "size": len(signature_ids)},
                                   "aggs": {"gpu": {"sum": {"field": "gpu_hours"}}}}})
    buckets = result.get("aggregations", {}).get("sig", {}).get("buckets", [])
    return {b["key"]: (b["doc_count"], float(b["gpu"]["value"] or 0.0)) for b in buckets}


def _hit(raw: dict, fingerprint: str) -> Hit:
    s = raw.get("_source", {})
    return Hit(
        signature_id=s.get("signature_id", ""), failure_id=s.get("failure_id", raw.get("_id", "")),
        platform=s.get("platform", ""), external_id=s.get("external_id", ""), fingerprint=s.get("fingerprint", ""),
        category=s.get("category", ""), confirmed_category=s.get("confirmed_category") or "",
        root_cause=s.get("root_cause") or "", triage_state=s.get("triage_state") or "",
        score=round(float(raw.get("_score") or 0.0), 4), message=s.get("message") or "",
        exception_type=s.get("exception_type") or "", masked_message=s.get("masked_message") or "",
        job_id=s.get("job_id") or "", job_name=s.get("job_name") or "", team=s.get("team") or "", failure_line=s.get("failure_line") or "",
        stage=s.get("stage") or "", ended_at=s.get("ended_at"),
        same_fingerprint=bool(fingerprint) and s.get("fingerprint") == fingerprint)

def _top(top) -> int:
    if isinstance(top, bool) or not isinstance(top, int):
        try:
            top = int(top)
        except (TypeError, ValueError):
            raise BadQuery("top must be an integer") from None
    if top < 1:
        raise BadQuery("top must be at least 1")
    return min(top, MAX_TOP)

RESCORE_WINDOW = 50
TIE_SLACK = 10


def search_probe(client: Elasticsearch, prefix: str, p: Probe, *, filters: dict | None = None, top: int = 10,
                 strategy: str = DEFAULT_STRATEGY, exclude_ids: list[str] | None = None,
                 exclude_signatures: list[str] | None = None, stats: bool = True,
                 index: str = "auto") -> list[Hit]:
    """Ranked hits for a probe. index: "signatures", "failures" or "auto" (signatures unless a date
    filter, exclude_ids or the raw-message baseline needs the failures index; failures too while the
    signatures index is missing or still empty, e.g. before the first `reindex` after an upgrade)."""
    top = _top(top)
    clauses = filter_clauses(filters)
    needs_failures = (bool(exclude_ids) or strategy == "bm25_raw"
                      or any((filters or {}).get(k) for k in FAILURE_LEVEL_FILTERS))
    if index not in ("auto", "signatures", "failures"):
        raise BadQuery(f"unknown index '{index}'")
    if index == "signatures" or (index == "auto" and not needs_failures):
        if index == "signatures" and needs_failures:
            raise BadQuery("date filters, excluded failures and the raw-message baseline need the failures index")
        hits = _search_signatures(client, prefix, p, filters, top, strategy, exclude_signatures)
        if hits is not None or index == "signatures":
            return hits or []
    return _search_failures(client, prefix, p, clauses, top, strategy, exclude_ids, exclude_signatures, stats)


def _search_signatures(client: Elasticsearch, prefix: str, p: Probe, filters: dict | None, top: int,
                       strategy: str, exclude_signatures: list[str] | None) -> list[Hit] | None:
    """One document per signature: no collapse, counts in the document. None when the signatures
    index is missing or empty (then the caller asks the failures index)."""
    query: dict = {"bool": {"must": [ranking_query(p, strategy)], "filter": signature_filter_clauses(filters)}}
    if exclude_signatures:
        query["bool"]["must_not"] = [{"terms": {"signature_id": [str(s) for s in exclude_signatures]}}]
    # Sorted by score alone, so Elasticsearch can skip blocks of documents that cannot reach the top
    # (a second sort key disables that: p50 x1.5, p95 x3 at 84k signatures). Ties are ordered by
    # recency below, among TIE_SLACK extra hits.
    body: dict[str, Any] = dict(query=query, size=min(top + TIE_SLACK, MAX_TOP + TIE_SLACK),
                                source=SIGNATURE_SOURCE_FIELDS, track_total_hits=False)
    if strategy == "combined" and p.masked_message:
        # The word 2-3-gram clause costs most (long postings of common pairs): it only rescores the
        # best RESCORE_WINDOW by the other clauses, which adds it to their scores (the same sum).
        relevance = query["bool"]["must"][0]["bool"]["must"][0]["bool"]["should"]
        shingles = {"match": {"masked_message.shingles": {"query": p.masked_message}}}
        relevance.remove(shingles)
        body["rescore"] = {"window_size": max(RESCORE_WINDOW, body["size"]), "query": {
            "rescore_query": shingles, "query_weight": 1.0, "rescore_query_weight": 1.0}}
    try:
        result = run_search(client, prefix, SIGNATURES, missing_ok=False, **body)
    except IndexMissing:
        return None
    # Equal scores (equally close messages): the most recently seen signature first.
    raw = sorted(result["hits"]["hits"], key=lambda h: (-(h.get("_score") or 0.0),
                                                        _later_first(h["_source"].get("last_seen"))))[:top]
    if not raw:
        # No match at all, or an index not filled yet: only the latter is worth a failures query.
        try:
            empty = client.count(index=alias_name(prefix, SIGNATURES))["count"] == 0
        except (ApiError, TransportError):
            empty = True
        return None if empty else []
    hits = [_signature_hit(h, p.fingerprint) for h in raw]
    job_level = filter_clauses({k: v for k, v in (filters or {}).items() if k in ("team", "platform")})
    if job_level:
        hits = _with_matching_failures(client, prefix, hits, job_level)
    return hits


def _later_first(value) -> float:
    """Sort key: later dates first, missing or unreadable ones last."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return float("inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return -moment.timestamp()


def _with_matching_failures(client: Elasticsearch, prefix: str, hits: list[Hit], clauses: list[dict]) -> list[Hit]:
    """With a team or platform filter, each hit shows the signature's latest failure of that team or
    platform (never another team's job), read in one collapsed query over just these signatures."""
    ids = [h.signature_id for h in hits]
    result = run_search(client, prefix, query={"bool": {"filter": [{"terms": {"signature_id": ids}}, *clauses]}},
                     size=len(ids), collapse={"field": "signature_id"}, source=SOURCE_FIELDS, track_total_hits=False,
                     sort=[{"ended_at": {"order": "desc", "missing": "_last"}}, {"failure_id": "desc"}])
    shown = {h["_source"].get("signature_id"): h for h in result["hits"]["hits"]}
    out = []
    for hit in hits:
        failure = shown.get(hit.signature_id)
        if failure is None:  # the signature document is ahead of (or behind) the failures index
            continue
        f = _hit(failure, "")
        hit.failure_id, hit.job_id, hit.platform, hit.external_id = f.failure_id, f.job_id, f.platform, f.external_id
        hit.job_name, hit.team, hit.message, hit.failure_line = f.job_name, f.team, f.message, f.failure_line
        hit.stage, hit.ended_at = f.stage, f.ended_at
        out.append(hit)
    return out


def _signature_hit(raw: dict, fingerprint: str) -> Hit:
    s = raw.get("_source", {})
    latest = s.get("latest_failure") or {}
    return Hit(
        signature_id=s.get("signature_id", raw.get("_id", "")), failure_id=str(latest.get("failure_id") or ""),
        platform=latest.get("platform") or "", external_id=latest.get("external_id") or "",
        fingerprint=s.get("fingerprint", ""), category=s.get("category", ""),
        confirmed_category=s.get("confirmed_category") or "", root_cause=s.get("root_cause") or "",
        triage_state=s.get("triage_state") or "", score=round(float(raw.get("_score") or 0.0), 4),
        message=latest.get("message") or s.get("masked_message") or "", exception_type=s.get("exception_type") or "",
        masked_message=s.get("masked_message") or "", job_id=str(latest.get("job_id") or ""),
        job_name=latest.get("job_name") or "", team=latest.get("team") or "",
        failure_line=latest.get("failure_line") or "", stage=latest.get("stage") or "", ended_at=latest.get("ended_at"),
        same_fingerprint=bool(fingerprint) and s.get("fingerprint") == fingerprint,
        count=int(s.get("failure_count") or 0), gpu_hours=round(float(s.get("gpu_hours") or 0.0), 3))


def _search_failures(client: Elasticsearch, prefix: str, p: Probe, clauses: list[dict], top: int, strategy: str,
                     exclude_ids: list[str] | None, exclude_signatures: list[str] | None, stats: bool) -> list[Hit]:
    """Every failure scored, collapsed to the best one per signature (the path for date filters)."""
    query = {"bool": {"must": [ranking_query(p, strategy)], "filter": clauses}}
    must_not = []
    if exclude_ids:
        must_not.append({"ids": {"values": [str(i) for i in exclude_ids]}})
    if exclude_signatures:
        must_not.append({"terms": {"signature_id": [str(s) for s in exclude_signatures]}})
    if must_not:
        query["bool"]["must_not"] = must_not
    result = run_search(client, prefix, query=query, size=top, collapse={"field": "signature_id"},
                     source=SOURCE_FIELDS, track_total_hits=False,
                     sort=[{"_score": "desc"}, {"ended_at": {"order": "desc", "missing": "_last"}}])
    hits = [_hit(h, p.fingerprint) for h in result["hits"]["hits"]]
    if stats and hits:
        counts = _signature_stats(client, prefix, [h.signature_id for h in hits])
        for h in hits:
            h.count, h.gpu_hours = counts.get(h.signature_id, (0, 0.0))
            h.gpu_hours = round(h.gpu_hours, 3)
    return hits


def similar_failures(client: Elasticsearch, prefix: str, text: str | bytes, *, filters: dict | None = None,
                     top: int = 10, strategy: str = DEFAULT_STRATEGY, exclude_ids: list[str] | None = None,
                     stats: bool = True) -> list[Hit]:
    """Past failures like a pasted error message or log, best first, one per signature.

    filters: {"team", "platform", "category": str or list, "ended_after", "ended_before": ISO date/time,
    "only_resolved": bool}. exclude_ids: failure ids never returned. stats: fill count/gpu_hours of each
    hit's signature when the failures index answers (one more small aggregation request; the signatures
    index has them anyway). Raises BadQuery or SearchUnavailable."""
    if strategy not in STRATEGIES:
        raise BadQuery(f"unknown strategy '{strategy}'; known: {', '.join(STRATEGIES)}")
    return search_probe(client, prefix, probe(text), filters=filters, top=top, strategy=strategy,
                        exclude_ids=exclude_ids, stats=stats)


def similar_to_failure(client: Elasticsearch, prefix: str, failure_id, *, filters: dict | None = None,
                       top: int = 10, stats: bool = True) -> list[Hit]:
    """The similar-failures panel of a failure page: other signatures like this indexed failure, best
    first. [] if the failure is not indexed."""
    try:
        doc = client.get(index=alias_name(prefix), id=str(failure_id), source=SOURCE_FIELDS)
    except NotFoundError:
        return []
    except ApiError as exc:
        raise SearchUnavailable(f"Elasticsearch answered {exc.meta.status}: {exc.message}") from exc
    except TransportError as exc:
        raise SearchUnavailable(f"Elasticsearch unreachable: {exc}") from exc
    s = doc["_source"]
    masked = s.get("masked_message") or mask_message(s.get("exception_type", ""), s.get("message", ""))
    p = Probe(True, s.get("exception_type") or "", cap(masked, MAX_QUERY_CHARS), s.get("fingerprint") or "",
              s.get("confirmed_category") or s.get("category") or "", cap(s.get("message") or "", MAX_QUERY_CHARS))
    if not WORD.search(p.masked_message + p.exception_type):
        return []
    # Its whole signature is left out, so the failure itself needs no exclusion (which would force
    # the failures index instead of one document per signature).
    return search_probe(client, prefix, p, filters=filters, top=top, exclude_signatures=[s.get("signature_id", "")],
                        stats=stats)
