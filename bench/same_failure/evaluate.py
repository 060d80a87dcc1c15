#!/usr/bin/env python3
"""Do exact signatures put reports of one failure together and keep look-alikes apart (#14's exact-fingerprint
precision)? Reason clusters are scored beside them.

    .venv/bin/python bench/same_failure/evaluate.py [--grouping-config ID ...] [--markdown]

Pure (no servers). Every pair of logs is one of:
- one failure: a seed and a report of its failure, or two reports of it (the helpers judged them the same);
- a judged look-alike: a seed (or a report of its failure) and a thread the helpers judged a different failure;
- across seeds: two logs found from different seeds (different searches, different messages: taken as different);
- unjudged: two look-alikes of one seed (each was judged against the seed only), left out of every figure.
Precision is the share of the judged and across-seed pairs that share a key which are one failure; recall, the share
of one-failure pairs that share a key. Reason clusters gather one reason across code, so a look-alike of the same
reason should share the seed's cluster: for them the families (reason_group before ':') are the reference too.
The candidates were found by searching for each seed's message, so this set is not for category accuracy.
"""
from __future__ import annotations

import argparse
import collections
import itertools
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from jobs_ingest.core.configs import GROUPING_CONFIGS  # noqa: E402
from jobs_ingest.core.pipeline import analyse_text  # noqa: E402


def kind(a: dict, b: dict) -> str:
    if a["group"] == b["group"]:
        return "one failure"
    if a["seed"] == b["seed"]:
        return "unjudged" if a["relation"] == b["relation"] == "different" else "judged look-alike"
    return "across seeds"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=HERE / "cases.jsonl")
    parser.add_argument("--grouping-config", nargs="*", default=None, help="default: the newest")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    cases = [json.loads(line) for line in args.cases.open(encoding="utf-8")]
    pairs = [(a, b, kind(a, b)) for a, b in itertools.combinations(cases, 2)]
    total = collections.Counter(k for _, _, k in pairs)
    relations = collections.Counter(c["relation"] for c in cases)
    lines = [f"{len(cases)} logs from {len({c['repo'] for c in cases})} repositories: {relations['seed']} seeds, "
             f"{relations['same']} reports of a seed's failure, {relations['different']} look-alikes judged different. "
             f"Pairs: {total['one failure']} of one failure, {total['judged look-alike']} judged look-alikes, "
             f"{total['across seeds']} across seeds, {total['unjudged']} unjudged (left out).", "",
             "| grouping config | key | one-failure pairs sharing it (recall) | judged look-alike pairs sharing it | "
             "across-seed pairs sharing it | precision | same family: pairs sharing the cluster / pairs |",
             "|---|---|---|---|---|---|---|"]
    for config in args.grouping_config or [GROUPING_CONFIGS[-1].id]:
        analyses = {c["id"]: analyse_text(c["log"], grouping_config=config) for c in cases}
        for name, field in (("exact fingerprint", "fingerprint"), ("reason cluster", "cluster")):
            keys = {i: getattr(a, field) for i, a in analyses.items()}

            def share_key(a: dict, b: dict, keys=keys) -> bool:
                return bool(keys[a["id"]]) and keys[a["id"]] == keys[b["id"]]

            shared = collections.Counter(k for a, b, k in pairs if share_key(a, b))
            claimed = shared["one failure"] + shared["judged look-alike"] + shared["across seeds"]
            precision = f"{shared['one failure'] / claimed:.2f} ({shared['one failure']}/{claimed})" if claimed \
                else "no pair shares a key"
            families = "-"
            if field == "cluster":
                family = [(a, b) for a, b, k in pairs if k != "unjudged"
                          and a["reason_group"].split(":")[0] == b["reason_group"].split(":")[0]]
                families = f"{sum(share_key(a, b) for a, b in family)}/{len(family)}"
            lines.append(f"| {config} | {name} | {shared['one failure']}/{total['one failure']} | "
                         f"{shared['judged look-alike']}/{total['judged look-alike']} | "
                         f"{shared['across seeds']}/{total['across seeds']} | {precision} | {families} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
