#!/usr/bin/env python3
"""Grouping quality (#14.3, #14.4): do exact signatures and reason clusters gather the failures that people
labelled as one failure reason, and only those?

    .venv/bin/python bench/eval_grouping.py [--data FILE ...] [--grouping-config ID] [--markdown]

Pure (no servers): each labelled log is analysed by the pipeline (analyse_text with its exit code), and the
pairs of logs are counted. Precision: of the pairs that share a key (fingerprint, or cluster), the share that
share a label group. Recall: of the pairs that share a label group, the share that share a key. Label groups:
`reason_group` (held-out sets), `group` (job logs, issues: the same failure in other wrappers or threads) or
`cluster_id` (notebook crashes, the study's clusters; negative ids are unclustered and left out). The 95%
intervals come from 1,000 bootstrap resamples of the label groups (fixed seed). On the development data these
figures are training figures: the grouping code was written while looking at it.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jobs_ingest.core.pipeline import analyse_text  # noqa: E402

DEV = ["bench/devset/job_logs.jsonl", "bench/devset/notebook_crashes.jsonl", "bench/devset/issues/dev.jsonl",
       "bench/devset/issues2/dev.jsonl", "bench/devset/issues3/dev.jsonl", "bench/devset/issues4/dev.jsonl",
       "bench/devset/issues5/dev.jsonl", "bench/devset/issues6/dev.jsonl",
       "bench/devset/issues7/dev.jsonl"]
LABEL_FIELDS = ("reason_group", "group", "cluster_id")


def labelled(paths: list[str]) -> list[dict]:
    out = []
    for path in paths:
        for number, line in enumerate(open(ROOT / path, encoding="utf-8")):
            record = json.loads(line)
            label = next((record[f] for f in LABEL_FIELDS if record.get(f) not in (None, "")), None)
            if label is None or _unclustered(label) or not record.get("log"):
                continue
            out.append({"id": f"{path}:{record.get('id', number)}", "log": record["log"],
                        "exit_code": record.get("exit_code"), "group": f"{path}|{label}"})
    return out


def _unclustered(label) -> bool:
    """The study's unclustered rows (cluster ids -100, -200; stored as strings) join no group."""
    text = str(label)
    return text.lstrip("-").isdigit() and int(text) < 0


SYNONYMS = json.loads((ROOT / "bench/family_synonyms.json").read_text(encoding="utf-8"))


def harmonised(family: str) -> str:
    """A family as one canonical name: `path|key_error` and `path|missing_key` are one family (same data file)."""
    path, _, name = family.rpartition("|")
    return f"{path}|{SYNONYMS.get(name, name)}"


def pair_counts(groups: list[str], keys: list[str]) -> tuple[int, int, int]:
    """(pairs sharing a key, of those sharing a group too, pairs sharing a group), in O(n)."""
    def pairs(counter: Counter) -> int:
        return sum(c * (c - 1) // 2 for c in counter.values())
    same_key = pairs(Counter(k for k in keys if k))
    both = pairs(Counter((g, k) for g, k in zip(groups, keys) if k))
    return same_key, both, pairs(Counter(groups))


def scores(groups: list[str], keys: list[str]) -> tuple[float, float]:
    same_key, both, same_group = pair_counts(groups, keys)
    return (both / same_key if same_key else 1.0), (both / same_group if same_group else 1.0)


def _pairs(counter: Counter) -> int:
    return sum(c * (c - 1) // 2 for c in counter.values())


def bootstrap(groups: list[str], keys: list[str], reps: int = 1000, seed: int = 11) -> tuple[tuple, tuple]:
    """Percentile intervals over resampled label groups. A group drawn twice is two groups; the pairs between
    its two copies (the same logs twice) are not counted at all."""
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    names, rng = sorted(members), random.Random(seed)
    ps, rs = [], []
    for _ in range(reps):
        by_key, by_group_key, by_copy_key, by_copy = Counter(), Counter(), Counter(), Counter()
        for copy, name in enumerate(rng.choices(names, k=len(names))):
            for i in members[name]:
                by_copy[copy] += 1
                if keys[i]:
                    by_key[keys[i]] += 1
                    by_group_key[name, keys[i]] += 1
                    by_copy_key[copy, keys[i]] += 1
        both = _pairs(by_copy_key)
        same_key = _pairs(by_key) - (_pairs(by_group_key) - both)
        same_group = _pairs(by_copy)
        ps.append(both / same_key if same_key else 1.0), rs.append(both / same_group if same_group else 1.0)
    ps.sort(), rs.sort()
    lo, hi = int(0.025 * reps), int(0.975 * reps) - 1
    return (ps[lo], ps[hi]), (rs[lo], rs[hi])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="*", default=DEV)
    parser.add_argument("--grouping-config", default=None)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--family", action="store_true",
                        help="also score against reason families: a label's part before ':' (missing_module for "
                             "missing_module:package_not_installed), for sets whose labels name a reason and a cause")
    parser.add_argument("--harmonised", action="store_true",
                        help="with --family: also score against families whose synonyms (one reason that different "
                             "labellers named differently, bench/family_synonyms.json) are read as one family")
    args = parser.parse_args()

    records = labelled(args.data)
    analyses = []
    for done, r in enumerate(records, 1):
        analyses.append(analyse_text(r["log"], exit_code=r["exit_code"], grouping_config=args.grouping_config))
        if done % 200 == 0 or done == len(records):
            print(f"analysed {done}/{len(records)}", file=sys.stderr)
    config = analyses[0].grouping_config if analyses else "-"
    lines = [f"Grouping config {config}; {len(records)} labelled logs.", "",
             "| data | logs | label groups | key | distinct keys | pair precision [95% CI] | pair recall [95% CI] |",
             "|---|---:|---:|---|---:|---|---|"]
    for path in args.data:
        chosen = [i for i, r in enumerate(records) if r["id"].startswith(path + ":")]
        if not chosen:
            continue
        labellings = [("", [records[i]["group"] for i in chosen])]
        if args.family and any(":" in records[i]["group"].split("|", 1)[1] for i in chosen):
            families = [records[i]["group"].split(":", 1)[0] for i in chosen]
            labellings.append((" (families)", families))
            if args.harmonised:
                labellings.append((" (families, harmonised)", [harmonised(f) for f in families]))
        for suffix, groups in labellings:
            for name, keys in (("exact fingerprint", [analyses[i].fingerprint for i in chosen]),
                               ("reason cluster", [analyses[i].cluster for i in chosen])):  # "" never pairs
                p, r = scores(groups, keys)
                (plo, phi), (rlo, rhi) = bootstrap(groups, keys)
                lines.append(f"| {Path(path).parent.name}/{Path(path).name}{suffix} | {len(chosen)} | {len(set(groups))} | "
                             f"{name} | {len(set(k for k in keys if k))} | {p:.3f} [{plo:.3f}-{phi:.3f}] | "
                             f"{r:.3f} [{rlo:.3f}-{rhi:.3f}] |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
