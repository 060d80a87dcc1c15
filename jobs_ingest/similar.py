"""Similar past failures and log search, on the Elasticsearch indices.

No Django here: callers pass an Elasticsearch client and the index prefix (readers always go through
the aliases `{prefix}-signatures` and `{prefix}-failures`, see search_index).

- similar_failures(client, prefix, text, ...) -> list[Hit]: "has this happened before, what was it and how
  was it fixed?" A pasted message or whole log is analysed by the pure core (exception type, masked
  message, fingerprint), then ranked: same fingerprint first, then relevance of the masked message (words
  and word 2-3-grams) with the exception type boosted, then the same category; equal scores, the most
  recently seen first. One hit per signature, scored on the signatures index (one document per
  signature, with its counts), unless a filter needs each failure's own date (ended_after/before) or
  single failures are excluded: then on the failures index, collapsed by signature.
- similar_to_failure(client, prefix, failure_id, ...) -> list[Hit]: the same, for an indexed failure (the
  "similar failures" panel of a failure page), without re-analysing anything.
- search_logs(client, prefix, query, ...) -> LogPage: full-text search over message, failure line,
  traceback and excerpt, HTML-escaped highlights, pages walked with search_after (never from/size).

Errors: bad input (empty, nothing searchable, bad filters, a query Elasticsearch refuses) raises
BadQuery, a ValueError; an unreachable or failing Elasticsearch raises SearchUnavailable. Nothing else
escapes from Elasticsearch, so a web view maps BadQuery to 400 and SearchUnavailable to 503.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch, NotFoundError

from jobs_ingest.core import analyse_text
from jobs_ingest.core.normalise import masked_message as mask_message
from jobs_ingest.search_index import SIGNATURES, alias_name

STRATEGIES = ("combined", "shingles", "match", "mlt", "bm25_raw", "fingerprint")
DEFAULT_STRATEGY = "combined"

# Bounds on what a pasted text costs. Failures are at the end of a log, so a long paste is analysed
# from its tail; the query text itself is capped so a query never approaches Lucene's clause limits.
MAX_ANALYSED_CHARS = 64 * 1024
MAX_QUERY_CHARS = 2000
MAX_LOG_QUERY_CHARS = 1000
MAX_TOP = 100
MAX_PAGE_SIZE = 200
# The same fingerprint outranks any relevance score (BM25 scores of a capped query stay far below).
FINGERPRINT_BOOST = 10_000.0
FILTER_KEYS = ("team", "platform", "category", "ended_after", "ended_before", "only_resolved")
# Filters only the failures index can answer exactly: a signature's first/last seen do not tell
# whether one of its failures ended inside a range. Team and platform are exact on the signatures
# index (its teams/platforms lists), category and only_resolved are the signature's own.
FAILURE_LEVEL_FILTERS = ("ended_after", "ended_before")
SIGNATURE_SOURCE_FIELDS = ["signature_id", "fingerprint", "category", "confirmed_category", "root_cause",
                           "triage_state", "exception_type", "masked_message", "failure_count", "gpu_hours",
                           "last_seen", "latest_failure"]
LOG_FIELDS = ("message", "failure_line", "traceback", "excerpt")
SOURCE_FIELDS = ["failure_id", "job_id", "signature_id", "fingerprint", "platform", "external_id", "job_name", "team",
                 "submitter", "category", "confirmed_category", "root_cause", "triage_state", "exception_type",
                 "message", "masked_message", "failure_line", "stage", "gpu_hours", "ended_at", "retry_advice"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WORD = re.compile(r"\w", re.UNICODE)


class BadQuery(ValueError):
    """The query cannot be answered as given (empty, nothing searchable, bad filters or cursor)."""


class SearchUnavailable(Exception):
    """Elasticsearch is unreachable or failing; try again later."""


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


@dataclass
class LogHit:
    failure_id: str
    job_id: str
    signature_id: str
    platform: str
    external_id: str
    job_name: str
    team: str
    category: str
    exception_type: str
    message: str
    failure_line: str
    ended_at: str | None
    triage_state: str
    # field -> fragments: HTML-escaped by Elasticsearch (encoder "html"), matches wrapped in <em>...</em>,
    # so safe to render as HTML as they are. Fields without a match are absent.
    highlights: dict[str, list[str]] = field(default_factory=dict)
    sort: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class LogPage:
    hits: list[LogHit]
    next_search_after: list | None   # pass back as search_after for the next page; None on the last page
    total: int

    def __iter__(self):  # hits, next_search_after, total = search_logs(...)
        return iter((self.hits, self.next_search_after, self.total))


@dataclass(frozen=True)
class Probe:
    """What a pasted text is searched for."""
    found: bool
    exception_type: str
    masked_message: str
    fingerprint: str      # "" when the text shows no recognisable failure
    category: str
    raw: str              # cleaned text, capped, for the raw BM25 baseline


# ---------------------------------------------------------------------------------------------- input

def clean_text(text: str | bytes | None) -> str:
    """Decoded, without NUL/control bytes or lone surrogates, stripped. Never raises."""
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = str(text)
    text = text.encode("utf-8", errors="replace").decode("utf-8")  # lone surrogates -> "?"
    text = text.replace("\r\n", "\n").replace("\ufffd", " ")
    return _CONTROL.sub(" ", text).strip()


def _tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    newline = tail.find("\n")
    if 0 <= newline < limit // 2:
        return tail[newline + 1:]
    space = tail.find(" ")  # no line break: at least do not start inside a word
    return tail[space + 1:] if 0 <= space < limit // 2 else tail


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut


def probe(text: str | bytes | None) -> Probe:
    """Analyse a pasted message or log. Raises BadQuery when there is nothing to search for."""
    cleaned = clean_text(text)
    if not cleaned:
        raise BadQuery("the text is empty: paste an error message or a log")
    if not _WORD.search(cleaned):
        raise BadQuery("the text has no searchable words (letters or digits)")
    tail = _tail(cleaned, MAX_ANALYSED_CHARS)
    analysis = analyse_text(tail)
    raw = _cap(_tail(cleaned, MAX_QUERY_CHARS * 2), MAX_QUERY_CHARS)
    if analysis.found:
        return Probe(True, analysis.exception_type, _cap(analysis.masked_message, MAX_QUERY_CHARS),
                     analysis.fingerprint, analysis.category, raw)
    # No failure the parser knows (a fragment of a message, a scheduler line): the text itself is the
    # message; its last lines are the likeliest to name the failure.
    last = "\n".join(_tail(cleaned, MAX_QUERY_CHARS).splitlines()[-6:])
    return Probe(False, "", _cap(mask_message("", last), MAX_QUERY_CHARS), "", "", raw)


def _as_list(value, name: str) -> list[str]:
    if value is None or value == "" or value == []:
        return []
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, (list, tuple, set)) or not all(isinstance(v, str) for v in values):
        raise BadQuery(f"filter '{name}' must be a string or a list of strings")
    return [v for v in values if v]


def _date(value, name: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise BadQuery(f"filter '{name}' must be an ISO 8601 date or time, got {value[:40]!r}") from None
        return value
    raise BadQuery(f"filter '{name}' must be an ISO 8601 date or time")


def filter_clauses(filters: dict | None) -> list[dict]:
    """Elasticsearch filter clauses for {team, platform, category, ended_after, ended_before, only_resolved}.
    team/platform/category take a string or a list; category matches the confirmed or the automatic one."""
    if not filters:
        return []
    if not isinstance(filters, dict):
        raise BadQuery("filters must be an object")
    unknown = sorted(set(filters) - set(FILTER_KEYS))
    if unknown:
        raise BadQuery(f"unknown filter(s) {', '.join(unknown)}; known: {', '.join(FILTER_KEYS)}")
    clauses: list[dict] = []
    for name in ("team", "platform"):
        values = _as_list(filters.get(name), name)
        if values:
            clauses.append({"terms": {name: values}})
    categories = _as_list(filters.get("category"), "category")
    if categories:
        clauses.append({"bool": {"should": [{"terms": {"confirmed_category": categories}},
                                            {"bool": {"must": [{"terms": {"category": categories}}],
                                                      "must_not": [{"exists": {"field": "confirmed_category"}}]}},
                                            {"bool": {"must": [{"terms": {"category": categories}},
                                                               {"term": {"confirmed_category": ""}}]}}],
                                 "minimum_should_match": 1}})
    after, before = _date(filters.get("ended_after"), "ended_after"), _date(filters.get("ended_before"), "ended_before")
    if after or before:
        clauses.append({"range": {"ended_at": {k: v for k, v in (("gte", after), ("lte", before)) if v}}})
    only_resolved = filters.get("only_resolved")
    if only_resolved not in (None, False, True, "", "0", "1", "true", "false"):
        raise BadQuery("filter 'only_resolved' must be true or false")
    if only_resolved in (True, "1", "true"):
        clauses.append({"term": {"triage_state": "resolved"}})
    return clauses


def signature_filter_clauses(filters: dict | None) -> list[dict]:
    """The same filters on the signatures index (team/platform: a signature with at least one failure
    of them; category: its effective category, judged else automatic). Validates like filter_clauses;
    the date filters have no signature-level form (ValueError)."""
    filter_clauses(filters)  # validation and its BadQuery messages
    filters = filters or {}
    if any(filters.get(k) for k in FAILURE_LEVEL_FILTERS):
        raise ValueError("date filters need the failures index")
    clauses: list[dict] = []
    for name, field_name in (("team", "teams"), ("platform", "platforms"), ("category", "effective_category")):
        values = _as_list(filters.get(name), name)
        if values:
            clauses.append({"terms": {field_name: values}})
    if filters.get("only_resolved") in (True, "1", "true"):
        clauses.append({"term": {"triage_state": "resolved"}})
    return clauses


# ---------------------------------------------------------------------------------------- queries

def ranking_query(p: Probe, strategy: str = DEFAULT_STRATEGY) -> dict:
    """The scoring part of a similar-failures query for one strategy (see bench/eval_similar.py)."""
    masked, exc = p.masked_message, p.exception_type
    if strategy == "fingerprint":
        return {"term": {"fingerprint": p.fingerprint or "\x00none"}}
    if strategy == "bm25_raw":
        return {"match": {"message": {"query": p.raw}}}
    if strategy == "match":
        return {"match": {"masked_message": {"query": masked}}}
    if strategy == "mlt":
        return {"more_like_this": {"fields": ["masked_message"], "like": masked, "min_term_freq": 1,
                                   "min_doc_freq": 1, "max_query_terms": 50}}
    if strategy == "shingles":
        return {"bool": {"should": [{"match": {"masked_message": {"query": masked}}},
                                    {"match": {"masked_message.shingles": {"query": masked}}}],
                         "minimum_should_match": 1}}
    if strategy == "combined":
        relevance: list[dict] = [
            {"match": {"masked_message": {"query": masked}}},
            {"match": {"masked_message.shingles": {"query": masked}}},
        ]
        if p.fingerprint:
            relevance.append({"constant_score": {"filter": {"term": {"fingerprint": p.fingerprint}},
                                                 "boost": FINGERPRINT_BOOST}})
        if exc:
            relevance.append({"term": {"exception_type": {"value": exc, "boost": 5.0}}})
            relevance.append({"match": {"exception_type.text": {"query": exc, "boost": 2.0}}})
        query: dict = {"bool": {"must": [{"bool": {"should": relevance, "minimum_should_match": 1}}]}}
        if p.category and p.category != "unclassified":
            # Ties and weak matches: the same kind of failure before unrelated ones. Only a bonus: a
            # shared category alone is not a match.
            query["bool"]["should"] = [{"constant_score": {"filter": {"bool": {"should": [
                {"term": {"category": p.category}}, {"term": {"confirmed_category": p.category}}]}},
                "boost": 1.0}}]
        return query
    raise BadQuery(f"unknown strategy '{strategy}'; known: {', '.join(STRATEGIES)}")


class _IndexMissing(Exception):
    pass


def _search(client: Elasticsearch, prefix: str, kind: str = "failures", missing_ok: bool = True, **body) -> dict:
    try:
        return client.search(index=alias_name(prefix, kind), **body)
    except NotFoundError:
        if not missing_ok:
            raise _IndexMissing() from None
        return {"hits": {"hits": [], "total": {"value": 0}}}
    except ApiError as exc:
        status = getattr(exc.meta, "status", 500)
        if 400 <= status < 500:
            raise BadQuery(f"the search was refused: {str(exc.message)[:300]}") from exc
        raise SearchUnavailable(f"Elasticsearch answered {status}: {str(exc.message)[:300]}") from exc
    except TransportError as exc:
        raise SearchUnavailable(f"Elasticsearch unreachable: {exc}") from exc


def _signature_stats(client: Elasticsearch, prefix: str, signature_ids: list[str]) -> dict[str, tuple[int, float]]:
    if not signature_ids:
        return {}
    result = _search(client, prefix, size=0, query={"terms": {"signature_id": signature_ids}},
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
        result = _search(client, prefix, SIGNATURES, missing_ok=False, **body)
    except _IndexMissing:
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
    result = _search(client, prefix, query={"bool": {"filter": [{"terms": {"signature_id": ids}}, *clauses]}},
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
    result = _search(client, prefix, query=query, size=top, collapse={"field": "signature_id"},
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
                       top: int = 10, include_own_signature: bool = False, stats: bool = True) -> list[Hit]:
    """The similar-failures panel of a failure page: other signatures like this indexed failure, best
    first (its own signature too when include_own_signature). [] if the failure is not indexed."""
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
    p = Probe(True, s.get("exception_type") or "", _cap(masked, MAX_QUERY_CHARS), s.get("fingerprint") or "",
              s.get("confirmed_category") or s.get("category") or "", _cap(s.get("message") or "", MAX_QUERY_CHARS))
    if not _WORD.search(p.masked_message + p.exception_type):
        return []
    if include_own_signature:
        return search_probe(client, prefix, p, filters=filters, top=top, exclude_ids=[str(failure_id)], stats=stats)
    # Its whole signature is left out, so the failure itself needs no exclusion (which would force
    # the failures index instead of one document per signature).
    return search_probe(client, prefix, p, filters=filters, top=top, exclude_signatures=[s.get("signature_id", "")],
                        stats=stats)


# ------------------------------------------------------------------------------------- log search

def encode_cursor(search_after: list | None) -> str:
    """A URL-safe string for a search_after value (for ?after=... links)."""
    if not search_after:
        return ""
    return base64.urlsafe_b64encode(json.dumps(search_after, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> list | None:
    """The search_after value of encode_cursor; BadQuery if it was tampered with."""
    if not cursor:
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadQuery("invalid page cursor") from None
    return _check_search_after(value)


def _check_search_after(value) -> list:
    if (not isinstance(value, list) or len(value) != 2 or isinstance(value[0], bool)
            or not isinstance(value[0], (int, float, type(None))) or not isinstance(value[1], str)):
        raise BadQuery("invalid search_after: expected [ended_at sort value, failure_id]")
    return value


def search_logs(client: Elasticsearch, prefix: str, query: str, *, filters: dict | None = None, size: int = 20,
                search_after: list | str | None = None) -> LogPage:
    """Full-text search over message, failure line, traceback and excerpt, newest failure first.

    The query uses simple_query_string (all words must match; "quoted phrases", -exclusion, prefix*
    work; syntax characters never raise). Returns LogPage(hits, next_search_after, total), unpackable as a
    tuple; pass next_search_after (a list, or its encode_cursor string) back for the next page."""
    text = _cap(clean_text(query), MAX_LOG_QUERY_CHARS)
    if not text:
        raise BadQuery("the search is empty")
    if not _WORD.search(text):
        raise BadQuery("the search has no searchable words (letters or digits)")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise BadQuery("size must be a positive integer")
    size = min(size, MAX_PAGE_SIZE)
    if isinstance(search_after, str):
        search_after = decode_cursor(search_after)
    elif search_after is not None:
        search_after = _check_search_after(list(search_after) if isinstance(search_after, tuple) else search_after)
    body: dict[str, Any] = {
        "query": {"bool": {
            "must": [{"simple_query_string": {"query": text, "fields": list(LOG_FIELDS) + ["job_name", "exception_type.text"],
                                              "default_operator": "and", "lenient": True}}],
            "filter": filter_clauses(filters)}},
        "size": size,
        "sort": [{"ended_at": {"order": "desc", "missing": "_last"}}, {"failure_id": "asc"}],
        "source": SOURCE_FIELDS,
        "track_total_hits": True,
        "highlight": {"encoder": "html", "pre_tags": ["<em>"], "post_tags": ["</em>"],
                      "fields": {f: {"number_of_fragments": 3, "fragment_size": 160, "no_match_size": 0}
                                 for f in LOG_FIELDS}},
    }
    if search_after is not None:
        body["search_after"] = search_after
    result = _search(client, prefix, **body)
    hits = []
    for raw in result["hits"]["hits"]:
        s = raw.get("_source", {})
        hits.append(LogHit(
            failure_id=s.get("failure_id", raw.get("_id", "")), job_id=s.get("job_id") or "", signature_id=s.get("signature_id", ""),
            platform=s.get("platform", ""), external_id=s.get("external_id", ""), job_name=s.get("job_name") or "",
            team=s.get("team") or "", category=s.get("confirmed_category") or s.get("category", ""),
            exception_type=s.get("exception_type") or "", message=s.get("message") or "",
            failure_line=s.get("failure_line") or "", ended_at=s.get("ended_at"),
            triage_state=s.get("triage_state") or "", highlights=raw.get("highlight", {}), sort=raw.get("sort", [])))
    total = result["hits"].get("total", {}).get("value", len(hits))
    next_after = hits[-1].sort if len(hits) == size and hits[-1].sort else None
    return LogPage(hits, next_after, total)
