#!/usr/bin/env python3
"""Tag the framework fixtures (tests/fixtures/frameworks) in process and print accuracy per framework.

    python bench/eval_frameworks.py              # dev split (may be looked at while developing)
    python bench/eval_frameworks.py --heldout    # held-out split: run once, at the end, never tune after
    python bench/eval_frameworks.py --jsonl      # the dev split as eval_tagger/train_learned records

Wilson 95% intervals are printed beside each share.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.stats import wilson  # noqa: E402
FIXTURES = ROOT / "tests" / "fixtures" / "frameworks"




def cases(split: str) -> list[dict]:
    out = []
    for line in (FIXTURES / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["split"] == split:
            case["log"] = (FIXTURES / case["file"]).read_text()
            out.append(case)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heldout", action="store_true")
    ap.add_argument("--jsonl", action="store_true")
    ap.add_argument("--tagging-config", default=None)
    args = ap.parse_args()
    split = "heldout" if args.heldout else "dev"
    records = cases(split)
    if args.jsonl:
        for r in records:
            print(json.dumps({"id": r["id"], "log": r["log"], "category": r["category"],
                              "source": "frameworks:" + r["framework"]}, ensure_ascii=False))
        return
    from jobs_ingest.core import analyse_text
    per = collections.defaultdict(lambda: [0, 0])
    for r in records:
        a = analyse_text(r["log"], tagging_config=args.tagging_config)
        ok = a.category == r["category"]
        per[r["framework"]][0] += ok
        per[r["framework"]][1] += 1
        mark = "ok  " if ok else "MISS"
        print(f"{mark} {r['id']} {r['file']:<58} want {r['category']:<20} got {a.category:<20} {a.rule} ({a.confidence})")
    k, n = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    for fw, (a, b) in sorted(per.items()):
        print(f"  {fw:<12} {a}/{b}")
    lo, hi = wilson(k, n)
    print(f"{split}: {k}/{n} = {k / n:.1%} (Wilson 95% {lo:.1%}-{hi:.1%})")


if __name__ == "__main__":
    main()
