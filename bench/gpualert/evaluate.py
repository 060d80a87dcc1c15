#!/usr/bin/env python3
"""GPUAlert's samples (README.md) read by the pipeline, against their classes read as our categories (mapping.json,
written before the tagger first ran on them). A third party's labels on logs nobody here tuned for; small and partly
paraphrased or synthetic, so a check of reading, not a real-world accuracy.

    .venv/bin/python bench/gpualert/evaluate.py [--tagging-config ID] [--grouping-config ID] [--markdown]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from bench.stats import wilson  # noqa: E402
from jobs_ingest.core import analyse_text  # noqa: E402

MAPPING = {k: v for k, v in json.loads((HERE / "mapping.json").read_text(encoding="utf-8")).items()
           if not k.startswith("_")}


def cases() -> list[dict]:
    """(set, name, class, exit code, log): the wild excerpts with their label file, the reference captures by name."""
    out = []
    for line in (HERE / "wild" / "wild_labels.tsv").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, mode, exit_code = line.split("\t")[:3]
        out.append({"set": "wild", "name": name, "class": mode, "exit_code": int(exit_code),
                    "log": (HERE / "wild" / f"{name}.log").read_text(encoding="utf-8")})
    for path in sorted((HERE / "reference").glob("*.log")):
        out.append({"set": "reference", "name": path.stem, "class": path.stem.removesuffix("_bare"),
                    "exit_code": None, "log": path.read_text(encoding="utf-8")})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tagging-config")
    parser.add_argument("--grouping-config")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = []
    for case in cases():
        a = analyse_text(case["log"], exit_code=case["exit_code"], tagging_config=args.tagging_config,
                         grouping_config=args.grouping_config)
        right = MAPPING[case["class"]]
        rows.append({**case, "category": a.category, "rule": a.rule, "config": a.tagging_config,
                     "right": None if right is None else a.category in right})
    lines = [f"GPUAlert samples read with {rows[0]['config']} (classes as our categories: mapping.json).", "",
             "| set | scored | right [95% CI] | `unclassified` where a category fits | not scored (no single category) |",
             "|---|---:|---|---|---|"]
    for name in ("wild", "reference"):
        chosen = [r for r in rows if r["set"] == name]
        scored = [r for r in chosen if r["right"] is not None]
        k, n = sum(r["right"] for r in scored), len(scored)
        lo, hi = wilson(k, n)
        fits = [r for r in scored if MAPPING[r["class"]] != ["unclassified"]]
        unc = sum(r["category"] == "unclassified" for r in fits)
        others = Counter(r["category"] for r in chosen if r["right"] is None)
        lines.append(f"| {name} | {n} | {k}/{n} = {100 * k / n:.1f}% [{100 * lo:.1f}-{100 * hi:.1f}] | "
                     f"{unc}/{len(fits)} | {len(chosen) - n}: " + ", ".join(f"{c} x{m}" for c, m in others.most_common()) + " |")
    lines += ["", "Misses (set, sample: class -> answer, rule):"]
    lines += [f"- {r['set']}, {r['name']}: {r['class']} -> {r['category']} ({r['rule']})" for r in rows if r["right"] is False]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
