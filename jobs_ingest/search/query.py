"""What a search looks for: pasted text cleaned and analysed into a Probe, filters and ranking as
Elasticsearch clauses, and the one call that runs a search with its errors mapped.

No Django here. Errors: bad input (empty, nothing searchable, bad filters, a query Elasticsearch refuses)
raises BadQuery, a ValueError; an unreachable or failing Elasticsearch raises SearchUnavailable. Nothing
else escapes from Elasticsearch, so a web view maps BadQuery to 400 and SearchUnavailable to 503.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch, NotFoundError

from jobs_ingest.core import analyse_text
from jobs_ingest.core.normalise import masked_message as mask_message
from jobs_ingest.search.index import FAILURES, alias_name

STRATEGIES = ("combined", "shingles", "match", "mlt", "bm25_raw", "fingerprint")
DEFAULT_STRATEGY = "combined"

# Bounds on what a pasted text costs. Failures are at the end of a log, so a long paste is analysed
# from its tail; the query text itself is capped so a query never approaches Lucene's clause limits.
MAX_ANALYSED_CHARS = 64 * 1024
MAX_QUERY_CHARS = 2000
# The same fingerprint outranks any relevance score (BM25 scores of a capped query stay far below).
FINGERPRINT_BOOST = 10_000.0
FILTER_KEYS = ("team", "platform", "category", "ended_after", "ended_before", "only_resolved")
# Filters only the failures index can answer exactly: a signature's first/last seen do not tell
# whether one of its failures ended inside a range. Team and platform are exact on the signatures
# index (its teams/platforms lists), category and only_resolved are the signature's own.
FAILURE_LEVEL_FILTERS = ("ended_after", "ended_before")
SOURCE_FIELDS = ["failure_id", "job_id", "signature_id", "fingerprint", "platform", "external_id", "job_name", "team",
                 "submitter", "category", "confirmed_category", "root_cause", "triage_state", "exception_type",
                 "message", "masked_message", "failure_line", "stage", "gpu_hours", "ended_at", "retry_advice"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
WORD = re.compile(r"\w", re.UNICODE)


class BadQuery(ValueError):
    """The query cannot be answered as given (empty, nothing searchable, bad filters or cursor)."""


class SearchUnavailable(Exception):
    """Elasticsearch is unreachable or failing; try again later."""

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


def cap(text: str, limit: int) -> str:
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
    if not WORD.search(cleaned):
        raise BadQuery("the text has no searchable words (letters or digits)")
    tail = _tail(cleaned, MAX_ANALYSED_CHARS)
    analysis = analyse_text(tail)
    raw = cap(_tail(cleaned, MAX_QUERY_CHARS * 2), MAX_QUERY_CHARS)
    if analysis.found:
        return Probe(True, analysis.exception_type, cap(analysis.masked_message, MAX_QUERY_CHARS),
                     analysis.fingerprint, analysis.category, raw)
    # No failure the parser knows (a fragment of a message, a scheduler line): the text itself is the
    # message; its last lines are the likeliest to name the failure.
    last = "\n".join(_tail(cleaned, MAX_QUERY_CHARS).splitlines()[-6:])
    return Probe(False, "", cap(mask_message("", last), MAX_QUERY_CHARS), "", "", raw)


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

class IndexMissing(Exception):
    """The alias does not exist (yet): only raised when the caller asked for it."""


def run_search(client: Elasticsearch, prefix: str, kind: str = FAILURES, missing_ok: bool = True, **body) -> dict:
    """client.search on the kind's alias; a missing index answers no hits unless missing_ok is False."""
    try:
        return client.search(index=alias_name(prefix, kind), **body)
    except NotFoundError:
        if not missing_ok:
            raise IndexMissing() from None
        return {"hits": {"hits": [], "total": {"value": 0}}}
    except ApiError as exc:
        status = getattr(exc.meta, "status", 500)
        if 400 <= status < 500:
            raise BadQuery(f"the search was refused: {str(exc.message)[:300]}") from exc
        raise SearchUnavailable(f"Elasticsearch answered {status}: {str(exc.message)[:300]}") from exc
    except TransportError as exc:
        raise SearchUnavailable(f"Elasticsearch unreachable: {exc}") from exc
