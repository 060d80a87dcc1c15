#!/usr/bin/env python3
"""Pairs of real failures to judge blind, for #14's exact-fingerprint precision.

    .venv/bin/python bench/fingerprint_pairs/build.py [--grouping-config ID] [--key PATH]

The pool is every labelled issue-thread log the project holds (development sets, retired and current held-out sets,
bench/same_failure), one log per thread: a thread used by two sets counts once, under the first file listed. Every
pair of logs from different threads that shares an exact fingerprint is a *fingerprint pair*. The judges also get
decoys, so that "they look alike" cannot stand for "same": a seeded sample of pairs that share the reason cluster
but not the fingerprint, and of pairs that share only the labelled category.

pairs.jsonl (for the judges) holds the two logs' last lines, the threads' addresses and the labellers' one-line
justifications, in a seeded random order and orientation; it says nothing of how a pair was chosen. key.jsonl (for
evaluate.py only; judges must not read it) says which kind each pair is, with its fingerprint and cluster;
key.strata.json, how many pairs of the pool each kind holds.
"""
from __future__ import annotations

import argparse
import collections
import itertools
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from jobs_ingest.core.pipeline import analyse_text  # noqa: E402

DEVSET = ROOT / "bench" / "devset"
POOL = ([DEVSET / "issues" / "dev.jsonl", DEVSET / "issues" / "heldout.jsonl", DEVSET / "issues_heldout2" / "heldout.jsonl"]
        + [DEVSET / f"issues{n}" / "dev.jsonl" for n in range(2, 8)]
        + [ROOT / "bench" / f"heldout{n}" / "cases.jsonl" for n in range(3, 7)]
        + [ROOT / "bench" / "same_failure" / "cases.jsonl"])
# Sets no tagging or grouping version has been tuned on (a pair with a log from one is out of sample).
UNTUNED = {"bench/heldout6/cases.jsonl", "bench/same_failure/cases.jsonl"}
CLUSTER_DECOYS, LABEL_DECOYS, SEED = 60, 20, 14
TAIL_LINES, TAIL_CHARS = 40, 2500


def tail(log: str) -> str:
    """The last lines of a log, where a failure usually is: at most TAIL_LINES lines and TAIL_CHARS characters."""
    text = "\n".join(log.rstrip("\n").split("\n")[-TAIL_LINES:])
    return text if len(text) <= TAIL_CHARS else "[...]" + text[-TAIL_CHARS:]


# The parse the set was built with: every tagging config from session 15's default to 2026-11zd reads these logs alike;
# 2026-11ze reads a blockquoted paste as printed, which gives a few logs their traceback's keys.
TAGGING_CONFIG = "tagging:2026-11zd"


def pool(grouping_config: str | None) -> list[dict]:
    """One entry per thread: where it is from, its label and its keys under the grouping config."""
    logs, threads = [], set()
    for path in POOL:
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            thread = (case.get("url") or case.get("source") or "").split("#")[0]
            if not case.get("log") or not thread or thread in threads:
                continue
            threads.add(thread)
            analysis = analyse_text(case["log"], grouping_config=grouping_config, tagging_config=TAGGING_CONFIG)
            logs.append({"file": str(path.relative_to(ROOT)), "id": case["id"], "thread": thread,
                         "repo": case.get("repo", ""), "label": case.get("label") or case.get("category", ""),
                         "justification": case.get("justification") or case.get("note", ""), "tail": tail(case["log"]),
                         "fingerprint": analysis.fingerprint, "cluster": analysis.cluster})
    return logs


def choose_pairs(logs: list[dict], rng: random.Random, sizes: dict | None = None) -> list[tuple[str, dict, dict]]:
    """The fingerprint pairs, and the decoys sampled from their strata; `sizes` gets each stratum's size."""
    by_fingerprint = collections.defaultdict(list)
    for log in logs:
        by_fingerprint[log["fingerprint"]].append(log)
    pairs = [("fingerprint", a, b) for group in by_fingerprint.values() for a, b in itertools.combinations(group, 2)]
    cluster_only = [(a, b) for a, b in itertools.combinations(logs, 2)
                    if a["cluster"] == b["cluster"] and a["fingerprint"] != b["fingerprint"]]
    label_only = [(a, b) for a, b in itertools.combinations(logs, 2)
                  if a["label"] == b["label"] and a["cluster"] != b["cluster"]]
    if sizes is not None:
        sizes.update(threads=len(logs), fingerprint=len(pairs), cluster_only=len(cluster_only), label_only=len(label_only))
    pairs += [("cluster_only", a, b) for a, b in rng.sample(cluster_only, min(CLUSTER_DECOYS, len(cluster_only)))]
    pairs += [("label_only", a, b) for a, b in rng.sample(label_only, min(LABEL_DECOYS, len(label_only)))]
    rng.shuffle(pairs)
    return [(kind, *((a, b) if rng.random() < 0.5 else (b, a))) for kind, a, b in pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grouping-config", default=None)
    parser.add_argument("--key", type=Path, default=HERE / "key.jsonl")
    parser.add_argument("--out", type=Path, default=HERE / "pairs.jsonl")
    args = parser.parse_args()
    logs = pool(args.grouping_config)
    sizes: dict = {}
    pairs = choose_pairs(logs, random.Random(SEED), sizes)
    side = ("id", "repo", "thread", "justification", "tail")
    with args.out.open("w", encoding="utf-8") as out, args.key.open("w", encoding="utf-8") as key:
        for n, (kind, a, b) in enumerate(pairs, 1):
            pair = f"p{n:03d}"
            out.write(json.dumps({"pair": pair, "a": {k: a[k] for k in side}, "b": {k: b[k] for k in side}}) + "\n")
            key.write(json.dumps({"pair": pair, "kind": kind, "a": a["id"], "b": b["id"],
                                  "files": [a["file"], b["file"]], "labels": [a["label"], b["label"]],
                                  "out_of_sample": a["file"] in UNTUNED or b["file"] in UNTUNED,
                                  "fingerprint": [a["fingerprint"], b["fingerprint"]],
                                  "cluster": [a["cluster"], b["cluster"]]}) + "\n")
    # The strata's sizes, so that evaluate.py can weigh the judged samples into recall estimates.
    args.key.with_name(args.key.stem + ".strata.json").write_text(json.dumps(sizes, indent=1) + "\n", encoding="utf-8")
    kinds = collections.Counter(kind for kind, _, _ in pairs)
    print(f"{len(logs)} threads, {len(pairs)} pairs: {dict(kinds)}", file=sys.stderr)


if __name__ == "__main__":
    main()
