#!/usr/bin/env python3
"""*.src.txt (hand-transcribed blocks in heldout3's format) -> dev.jsonl, one labelled development case per line:
{"id", "log", "category", "label", "group", "framework", "launcher", "stratum", "repo", "url", ...}.

These cases were sampled by repository and framework (never by message) with heldout3's query templates,
from threads that no earlier set used (heldout3's included), and labelled before any tagger ran on them.
Several repositories are also heldout3 strata (TensorFlow, MXNet, JAX, DeepSpeed, Lightning): the threads
differ, the frameworks' users are the same. They are development data: rules and the learned fallback may
be tuned on them. `group` is the labelled reason group (the same failure reason across code bases).

    .venv/bin/python bench/devset/issues5/build.py
"""
from __future__ import annotations

import collections
import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The block parser and label check are heldout3's (same format); only its code is used, never its cases.
_spec = importlib.util.spec_from_file_location("case_blocks", HERE.parents[1] / "heldout3" / "build.py")
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
    with (HERE / "dev.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps({**case, "group": f"i5:{case['reason_group']}"}, ensure_ascii=False) + "\n")
    by_framework = collections.Counter(c["framework"] for c in cases)
    print(f"{len(cases)} cases, {len(set(c['reason_group'] for c in cases))} reason groups, "
          f"{len(set(c['repo'] for c in cases))} repositories -> {HERE / 'dev.jsonl'}")
    print("  " + ", ".join(f"{f} {n}" for f, n in by_framework.most_common()))


if __name__ == "__main__":
    main()
