"""Log search: full-text search over message, failure line, traceback and excerpt, with HTML-escaped
highlights, pages walked with search_after (never from/size). No Django here.

search_logs(client, prefix, query, ...) -> LogPage. Errors: BadQuery and SearchUnavailable, see search.query.
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from jobs_ingest.search.query import SOURCE_FIELDS, WORD, BadQuery, cap, clean_text, filter_clauses, run_search

MAX_LOG_QUERY_CHARS = 1000
MAX_PAGE_SIZE = 200
LOG_FIELDS = ("message", "failure_line", "traceback", "excerpt")


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
    text = cap(clean_text(query), MAX_LOG_QUERY_CHARS)
    if not text:
        raise BadQuery("the search is empty")
    if not WORD.search(text):
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
    result = run_search(client, prefix, **body)
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
