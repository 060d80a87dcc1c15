#!/usr/bin/env python3
"""*.src.txt (hand-transcribed blocks in heldout3's format) -> cases.jsonl, one labelled held-out case per line.

heldout4 is a second held-out set (README.md): sampled by repository with heldout3's query templates, from
repositories no earlier set used as strata, labelled before any tagger ran, never tuned on. Evaluate it with
heldout3's script:

    .venv/bin/python bench/heldout4/build.py
    .venv/bin/python bench/heldout3/evaluate.py --cases bench/heldout4/cases.jsonl \\
        --predictions bench/heldout4/predictions.jsonl --markdown
"""
from __future__ import annotations

import collections
import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The block parser and label check are heldout3's (same format).
_spec = importlib.util.spec_from_file_location("case_blocks", HERE.parent / "heldout3" / "build.py")
case_blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(case_blocks)


def main() -> None:
    cases = []
    for src in sorted(HERE.glob("*.src.txt")):
        cases += [case_blocks.labelled(c) for c in case_blocks.parse(src.read_text(encoding="utf-8"))]
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate case ids")
    urls = collections.Counter(c["url"] for c in cases)
    if any(n > 1 for n in urls.values()):
        raise SystemExit(f"threads used twice: {[u for u, n in urls.items() if n > 1]}")
    with (HERE / "cases.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    by_framework = collections.Counter(c["framework"] for c in cases)
    print(f"{len(cases)} cases, {len(set(c['reason_group'] for c in cases))} reason groups, "
          f"{len(set(c['repo'] for c in cases))} repositories -> {HERE / 'cases.jsonl'}")
    print("  " + ", ".join(f"{f} {n}" for f, n in by_framework.most_common()))


if __name__ == "__main__":
    main()
