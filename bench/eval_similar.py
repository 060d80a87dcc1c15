#!/usr/bin/env python3
"""Evaluate similar-failure search (jobs_ingest.search.similar) on real failures grouped by signature.

Every record of the grouped dev sets is analysed with the pure core (analyse_log with its exit code, as
ingestion does) and indexed as one failure document into a temporary index prefix on the live
Elasticsearch. Then, for each record whose group has at least one other member, its whole log is the
query (the record itself excluded) and we score the ranked hits (one per signature, as the product shows
them): a hit is relevant when the failure it displays belongs to the query's group.

    recall@k = share of queries with a relevant hit among the first k;  MRR = mean of 1/rank of the
    first relevant hit (0 if none in the top 10); "recall@5 per group" averages recall@5 over groups first,
    so one big group (notebook cluster 1431: 188 NameErrors) does not dominate.

Strategies compared (see jobs_ingest.search.query.ranking_query): combined (the product's default), shingles,
match, mlt (more_like_this, min_term_freq 1, min_doc_freq 1), bm25_raw (plain BM25: the raw log against
the raw message field, the baseline) and fingerprint (exact fingerprint only, the other baseline).

Two indices: the signatures index (one document per signature, what the product searches) and the
failures index (every failure, collapsed by signature: the path before the signatures index, still used
for date filters). On the signatures index the query's own failure cannot be left out of its signature,
so a signature is a hit when it holds another failure of the query's group, and the query's signature
is excluded when the query is its only failure. On the failures index a hit is the failure shown.

Data sets (each evaluated within itself: queries are filtered to their own data set, via `platform`):
  notebook_crashes.jsonl  groups = the study's `cluster_id`; negative ids (-100, -200: the study's
                          unclustered crashes) are no group: indexed as distractors, never queries
  job_logs.jsonl          groups = `group`
  issues/dev.jsonl + issues/heldout.jsonl (`--issues`) groups = `group`

    cd /work/main && eval "$(scripts/servers.sh env)" && .venv/bin/python bench/eval_similar.py --markdown
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import search_docs  # noqa: E402
from bench.timing import percentile  # noqa: E402
from jobs_ingest.core import analyse_log  # noqa: E402
from jobs_ingest.search import index as search_index, query as search_query, similar  # noqa: E402

DEVSET = ROOT / "bench" / "devset"
SETS = [("notebook_crashes", DEVSET / "notebook_crashes.jsonl", "cluster_id"),
        ("job_logs", DEVSET / "job_logs.jsonl", "group")]
ISSUE_SETS = [("issues", DEVSET / "issues" / "dev.jsonl", "group"),
              ("issues", DEVSET / "issues" / "heldout.jsonl", "group")]
TOP = 10


def group_of(record: dict, key: str) -> str | None:
    value = record.get(key)
    if value is None or value == "":
        return None
    if key == "cluster_id" and str(value).startswith("-"):
        return None  # the study's noise clusters: not a group of similar crashes
    return str(value)


def document(n: int, dataset: str, record: dict, analysis, signature_ids: dict) -> dict:
    """A failure document shaped like jobs_ingest.search.projection.failure_documents output (contract fields only)."""
    # Signatures per data set: each data set is evaluated within itself (a signature spanning two
    # would carry the other set's failures into its counts and platforms).
    signature_id = signature_ids.setdefault((dataset, analysis.fingerprint, analysis.normaliser_version),
                                            str(len(signature_ids) + 1))
    return {
        "failure_id": str(n), "job_id": str(n), "signature_id": signature_id, "fingerprint": analysis.fingerprint,
        "platform": dataset, "external_id": record["id"], "submitter": "bench", "team": "bench", "status": "failed",
        "job_name": record["id"], "exception_type": analysis.exception_type, "user_frame": analysis.user_frame,
        "stage": analysis.stage, "category": analysis.category, "dimension": analysis.dimension,
        "rule": analysis.rule, "retry_advice": analysis.retry_advice, "tagger_version": analysis.tagger_version,
        "normaliser_version": analysis.normaliser_version, "message": analysis.message,
        "masked_message": analysis.masked_message, "failure_line": analysis.failure_line,
        "traceback": analysis.traceback, "excerpt": analysis.excerpt, "gpus": 1, "attempts": 1, "gpu_hours": 1.0,
        "confidence": analysis.confidence, "failure_line_number": analysis.failure_line_number,
        "submitted_at": None, "started_at": None, "ended_at": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
        "ingested_at": None,
    }


def load(sets) -> list[dict]:
    records = []
    for dataset, path, key in sets:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                r["_dataset"], r["_group"] = dataset, group_of(r, key)
                records.append(r)
    return records


def runs_for(strategies: list[str]) -> list[tuple[str, str, str]]:
    """(row label, strategy, index) to evaluate: each strategy where the product would run it, and the
    product default on the failures index too (the path before the signatures index)."""
    runs = []
    for strategy in strategies:
        if strategy == "bm25_raw":  # the raw message exists only in failure documents
            runs.append((f"{strategy} (failures index)", strategy, "failures"))
            continue
        runs.append((f"{strategy} (signatures index)", strategy, "signatures"))
        if strategy in (search_query.DEFAULT_STRATEGY, "fingerprint"):
            runs.append((f"{strategy} (failures index)", strategy, "failures"))
    return runs


def evaluate(client, prefix: str, records: list[dict], docs: list[dict], runs: list[tuple[str, str, str]]) -> dict:
    by_group = collections.Counter((r["_dataset"], r["_group"]) for r in records if r["_group"])
    group_by_id = {str(i): (r["_dataset"], r["_group"]) for i, r in enumerate(records)}
    members: dict[str, set[str]] = collections.defaultdict(set)  # signature id -> failure ids
    for d in docs:
        members[d["signature_id"]].add(d["failure_id"])
    signature_of = {d["failure_id"]: d["signature_id"] for d in docs}
    queries = [(i, r) for i, r in enumerate(records) if r["_group"] and by_group[(r["_dataset"], r["_group"])] > 1]
    print(f"{len(queries)} queries over {len(records)} indexed failures ({len(members)} signatures)", file=sys.stderr)
    probes = {i: search_query.probe(r["log"]) for i, r in queries}
    results: dict = {}
    for label, strategy, index in runs:
        stats = collections.defaultdict(lambda: {"n": 0, "r1": 0, "r5": 0, "rr": 0.0, "ms": [],
                                                 "groups": collections.defaultdict(list)})
        for done, (i, r) in enumerate(queries, 1):
            want = (r["_dataset"], r["_group"])
            own = signature_of[str(i)]
            t0 = time.perf_counter()
            if index == "signatures":
                alone = members[own] == {str(i)}
                hits = similar.search_probe(client, prefix, probes[i], top=TOP, strategy=strategy, index=index,
                                            filters={"platform": r["_dataset"]}, exclude_signatures=[own] if alone else None)
            else:
                hits = similar.search_probe(client, prefix, probes[i], top=TOP, strategy=strategy, index=index,
                                            filters={"platform": r["_dataset"]}, exclude_ids=[str(i)], stats=False)
            elapsed = (time.perf_counter() - t0) * 1000
            if index == "signatures":
                rank = next((k for k, h in enumerate(hits, 1)
                             if any(group_by_id.get(m) == want for m in members[h.signature_id] - {str(i)})), None)
            else:
                rank = next((k for k, h in enumerate(hits, 1) if group_by_id.get(h.failure_id) == want), None)
            for key in (r["_dataset"], "all"):
                s = stats[key]
                s["n"] += 1
                s["r1"] += rank == 1
                s["r5"] += rank is not None and rank <= 5
                s["rr"] += 1 / rank if rank else 0.0
                s["ms"].append(elapsed)
                s["groups"][want].append(rank is not None and rank <= 5)
            if done % 200 == 0:
                print(f"  {label}: {done}/{len(queries)}", file=sys.stderr)
        results[label] = stats
    return results


def report(results: dict, markdown: bool) -> str:
    datasets = [d for d in next(iter(results.values())) if d != "all"] + ["all"]
    lines = []
    if markdown:
        lines += ["| data set | strategy (index) | queries (groups) | recall@1 | recall@5 | recall@5 per group | MRR | p50 ms | p95 ms |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for d in datasets:
        for strategy, stats in results.items():
            s = stats[d]
            n = s["n"] or 1
            groups = s["groups"].values()
            macro = sum(sum(g) / len(g) for g in groups) / max(len(groups), 1)
            row = (d, strategy, f"{s['n']} ({len(groups)})", s["r1"] / n, s["r5"] / n, macro, s["rr"] / n,
                   percentile(s["ms"], 50), percentile(s["ms"], 95))
            if markdown:
                lines.append("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.1f} | {:.1f} |".format(*row))
            else:
                lines.append("{:<17} {:<32} n={:<9} R@1={:.3f} R@5={:.3f} R@5/group={:.3f} MRR={:.3f} "
                             "p50={:.1f}ms p95={:.1f}ms".format(*row))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--issues", action="store_true", help="also the issue-thread sets (dev + held-out)")
    parser.add_argument("--strategy", action="append", choices=search_query.STRATEGIES,
                        help="only these strategies (repeatable); default all")
    parser.add_argument("--url", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:59200"))
    args = parser.parse_args(argv)

    records = load(SETS + (ISSUE_SETS if args.issues else []))
    client = search_index.make_client(args.url, timeout=60)
    prefix = f"bench-similar-{uuid.uuid4().hex[:8]}"
    try:
        search_index.ensure_index(client, prefix)
        signature_ids: dict = {}
        t0 = time.perf_counter()
        docs = [document(i, r["_dataset"], r, analyse_log(r["log"].encode("utf-8"), exit_code=r.get("exit_code")),
                         signature_ids) for i, r in enumerate(records)]
        ok, errors = search_docs.bulk_index(client, prefix, docs, refresh=True)
        signatures = search_docs.signature_documents_from_failures(docs)
        ok_signatures, signature_errors = search_docs.bulk_index(client, prefix, signatures, refresh=True,
                                                                  kind=search_index.SIGNATURES)
        if errors or signature_errors:
            print(f"{len(errors + signature_errors)} documents rejected, first: {(errors + signature_errors)[0]}",
                  file=sys.stderr)
            return 1
        print(f"indexed {ok} failures ({ok_signatures} signatures) in {time.perf_counter() - t0:.1f}s",
              file=sys.stderr)
        results = evaluate(client, prefix, records, docs, runs_for(args.strategy or list(search_query.STRATEGIES)))
    finally:
        # The signatures' indices are named {prefix}-failures-signatures-*: this pattern takes them too.
        for name in client.options(ignore_status=404).indices.get(index=f"{prefix}-failures-*") or {}:
            client.options(ignore_status=404).indices.delete(index=name)
        for kind in search_index.KINDS:
            client.options(ignore_status=404).indices.delete_index_template(name=search_index.template_name(prefix, kind))
    print(report(results, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
