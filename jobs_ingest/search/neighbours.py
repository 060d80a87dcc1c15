"""The nearest judged signatures of analysed failures (learning from triage, core/judged.py decides).

One multi-search request per batch, over the signatures index, restricted to signatures a person has
judged (`confirmed_category` set, by triage's search fields), ranked by the similar-failure query. No
Django here: callers pass the client and the index prefix."""
from __future__ import annotations

from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch

from jobs_ingest.core.analysis import Analysis
from jobs_ingest.core.judged import Neighbour
from jobs_ingest.search.index import SIGNATURES, alias_name
from jobs_ingest.search.query import MAX_QUERY_CHARS, Probe, SearchUnavailable, cap, ranking_query

NEIGHBOURS = 5
JUDGED = {"bool": {"filter": [{"exists": {"field": "confirmed_category"}}],
                   "must_not": [{"term": {"confirmed_category": ""}}]}}


def corrected_categories(client: Elasticsearch, prefix: str) -> set[str]:
    """The automatic categories that people corrected on at least one signature (one small aggregation):
    only analyses with such a category, or unsure ones, are worth a neighbour search."""
    try:
        result = client.search(index=alias_name(prefix, SIGNATURES), size=0, query=JUDGED, ignore_unavailable=True,
                               aggs={"auto": {"terms": {"field": "category", "size": 100},
                                              "aggs": {"judged": {"terms": {"field": "confirmed_category",
                                                                            "size": 100}}}}})
    except (ApiError, TransportError) as exc:
        raise SearchUnavailable(f"judged neighbours: {exc}") from exc
    return {b["key"] for b in result.get("aggregations", {}).get("auto", {}).get("buckets", [])
            if any(j["key"] != b["key"] for j in b["judged"]["buckets"])}


def judged_neighbours(client: Elasticsearch, prefix: str, analyses: dict) -> dict:
    """{key: [Neighbour, ...]} for {key: Analysis}; raises SearchUnavailable when Elasticsearch fails."""
    keys = [k for k, a in analyses.items() if a.masked_message.strip()]  # callers pass the ones worth asking
    if not keys:
        return {}
    index = alias_name(prefix, SIGNATURES)
    searches: list[dict] = []
    for key in keys:
        a: Analysis = analyses[key]
        p = Probe(a.found, a.exception_type, cap(a.masked_message, MAX_QUERY_CHARS), a.fingerprint, a.category, "")
        searches += [{"index": index, "ignore_unavailable": True},
                     {"query": {"bool": {"must": [ranking_query(p)], "filter": [JUDGED]}}, "size": NEIGHBOURS,
                      "_source": ["signature_id", "confirmed_category", "category", "exception_type",
                                  "masked_message", "fingerprint"], "track_total_hits": False}]
    try:
        responses = client.msearch(searches=searches)["responses"]
    except (ApiError, TransportError) as exc:
        raise SearchUnavailable(f"judged neighbours: {exc}") from exc
    found = {}
    for key, response in zip(keys, responses):
        hits = response.get("hits", {}).get("hits", []) if "error" not in response else []
        found[key] = [Neighbour(signature_id=str(h["_source"].get("signature_id", h.get("_id", ""))),
                                category=h["_source"].get("confirmed_category") or "",
                                exception_type=h["_source"].get("exception_type") or "",
                                masked_message=h["_source"].get("masked_message") or "",
                                fingerprint=h["_source"].get("fingerprint") or "",
                                auto_category=h["_source"].get("category") or "") for h in hits]
    return found
