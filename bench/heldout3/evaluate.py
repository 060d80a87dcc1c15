#!/usr/bin/env python3
"""The held-out measurement of issue #14 on heldout3 (sampled by repository and framework, labelled before the
tagger ran, never tuned on; README.md). Run it once per release of the configs, not while changing rules.

    .venv/bin/python bench/heldout3/build.py && .venv/bin/python bench/heldout3/evaluate.py [--markdown]

Pure (no servers): each case is analysed by the pipeline as `tag_logs` would (newest configs, no exit code:
the threads give none). Reports, with 95% intervals (Wilson for shares, group bootstrap for pairs):
- category accuracy overall, per framework and per labelled category; platform failures in the right dimension;
- `unclassified` answers: over all cases, and over the cases that have a category (the issue's "<= 2%");
- reason clusters against the labelled reason groups (pair precision and recall), and exact-fingerprint
  precision. Predictions are written to predictions.jsonl beside this file.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_grouping import bootstrap, scores  # noqa: E402
from bench.stats import wilson  # noqa: E402
from jobs_ingest.core.pipeline import analyse_text  # noqa: E402
from jobs_ingest.core.taxonomy import CATEGORIES  # noqa: E402

TARGETS = {"accuracy": 0.95, "unclassified": 0.02, "cluster_precision": 0.90, "cluster_recall": 0.80,
           "fingerprint_precision": 0.90}


_DOUBTFUL = re.compile(r"\b(?i:doubtful):\s*([a-z_]+)")


def _doubted(justification: str) -> str | None:
    """The alternative category a labeller named ("...; doubtful: framework_api_misuse (version)"), "" when the
    label is marked doubtful without a category named, None when it is not marked doubtful."""
    found = _DOUBTFUL.search(justification)
    if found is None:
        return None
    return found.group(1) if found.group(1) in CATEGORIES else ""


def share(k: int, n: int) -> str:
    low, high = wilson(k, n)
    return f"{100 * k / n:.1f}% [{100 * low:.1f}-{100 * high:.1f}] ({k}/{n})" if n else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=HERE / "cases.jsonl")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--tagging-config", default=None, help="a released tagging config (default: the newest)")
    parser.add_argument("--predictions", type=Path, default=HERE / "predictions.jsonl")
    args = parser.parse_args()

    cases = [json.loads(line) for line in args.cases.open(encoding="utf-8")]
    rows = []
    for case in cases:
        a = analyse_text(case["log"], tagging_config=args.tagging_config)
        rows.append({"id": case["id"], "framework": case["framework"], "label": case["category"],
                     "predicted": a.category, "right": a.category == case["category"],
                     "label_dimension": CATEGORIES[case["category"]].dimension, "dimension": a.dimension,
                     "confidence": a.confidence, "rule": a.rule, "reason_group": case["reason_group"],
                     "fingerprint": a.fingerprint, "cluster": a.cluster, "cluster_message": a.cluster_message,
                     "grouping_config": a.grouping_config, "tagging_config": a.tagging_config})
    with args.predictions.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")

    n, right = len(rows), sum(r["right"] for r in rows)
    lines = [f"{args.cases.parent.name}: {n} real failures from {len({c['repo'] for c in cases})} repositories "
             f"(configs {rows[0]['grouping_config']}, {rows[0]['tagging_config']}).", "",
             f"- category accuracy: {share(right, n)} (target >= {TARGETS['accuracy']:.0%})"]
    doubt = {c["id"]: _doubted(c.get("justification", "")) for c in cases}
    doubtful = [r for r in rows if doubt[r["id"]] is not None]
    if doubtful:
        sure = [r for r in rows if doubt[r["id"]] is None]
        either = sum(r["right"] or r["predicted"] == doubt[r["id"]] for r in doubtful)
        lines.append(f"- by the labeller's certainty: labels marked sure {share(sum(r['right'] for r in sure), len(sure))}; "
                     f"marked `doubtful:` {share(sum(r['right'] for r in doubtful), len(doubtful))}, or "
                     f"{share(either, len(doubtful))} counting the alternative the labeller named as right")
    labelled = [r for r in rows if r["label"] != "unclassified"]
    unclassified = sum(r["predicted"] == "unclassified" for r in labelled)
    lines.append(f"- answered `unclassified` where a category fits: {share(unclassified, len(labelled))} "
                 f"(target <= {TARGETS['unclassified']:.0%}); over all cases: "
                 f"{share(sum(r['predicted'] == 'unclassified' for r in rows), n)}; labelled `unclassified` "
                 f"(no category fits): {n - len(labelled)}, of which answered so "
                 f"{sum(r['right'] for r in rows if r['label'] == 'unclassified')}")
    platform = [r for r in rows if r["label_dimension"] == "infrastructure"]
    if platform:
        lines.append(f"- platform failures in the infrastructure dimension: "
                     f"{share(sum(r['dimension'] == 'infrastructure' for r in platform), len(platform))}")
    groups = [r["reason_group"] for r in rows]
    families = [g.split(":", 1)[0] for g in groups]   # the reason without the labeller's cause after ':'
    for name, key, target, labels, what in (
            ("reason cluster", "cluster", "cluster", groups, "labelled reason groups"),
            ("exact fingerprint", "fingerprint", "fingerprint", groups, "labelled reason groups"),
            ("reason cluster", "cluster", "cluster", families, "reason families (label before ':')")):
        keys = [r[key] for r in rows]
        p, rec = scores(labels, keys)
        (plo, phi), (rlo, rhi) = bootstrap(labels, keys)
        goal = f"targets P >= {TARGETS['cluster_precision']}, R >= {TARGETS['cluster_recall']}" if target == "cluster" \
            else f"target P >= {TARGETS['fingerprint_precision']}"
        lines.append(f"- {name} pairs vs {what}: precision {p:.3f} [{plo:.3f}-{phi:.3f}], recall "
                     f"{rec:.3f} [{rlo:.3f}-{rhi:.3f}] ({len(set(k for k in keys if k))} keys, "
                     f"{len(set(labels))} groups; {goal})")
    for title, field in (("framework", "framework"), ("labelled category", "label")):
        lines += ["", f"| {title} | cases | accuracy [95% CI] |", "|---|---:|---|"]
        counts = collections.Counter(r[field] for r in rows)
        for value, count in counts.most_common():
            k = sum(r["right"] for r in rows if r[field] == value)
            lines.append(f"| {value} | {count} | {share(k, count)} |")
    confusions = collections.Counter((r["label"], r["predicted"]) for r in rows if not r["right"])
    lines += ["", "Misses (label -> answer): " + ", ".join(f"{a} -> {b} x{c}" for (a, b), c in confusions.most_common())]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
