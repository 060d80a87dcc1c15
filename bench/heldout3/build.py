#!/usr/bin/env python3
"""cases.src.txt (hand-transcribed blocks, see README.md) -> cases.jsonl, one labelled case per line:
{"id", "log", "category", "infra_kind", "reason_group", "framework", "launcher", "stratum", "repo", "url", "date"}.

    .venv/bin/python bench/heldout3/build.py      # rewrites cases.jsonl; says how many cases and checks labels
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from jobs_ingest.core.taxonomy import CATEGORIES  # noqa: E402

# label_infra_kind (README's labelling conventions) -> the product's infrastructure category
INFRA_KINDS = {"collective": "collective_communication", "gpu_hardware": "gpu_hardware", "node_loss": "node_lost",
               "preemption": "preempted", "network": "network_rendezvous", "rendezvous": "network_rendezvous",
               "storage": "storage"}
HEADERS = ("stratum", "query", "rank", "repo", "url", "date", "framework", "launcher", "category", "infra_kind",
           "reason_group", "justification")


def parse(text: str) -> list[dict]:
    cases, case, log = [], None, None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("=== end") and case is not None:
            case["log"] = "\n".join(log) + "\n"
            cases.append(case)
            case, log = None, None
        elif line.startswith("=== ") and case is None:
            case = {"id": line[4:].strip()}
        elif case is not None and log is not None:
            log.append(line)
        elif case is not None and line == "--- log":
            log = []
        elif case is not None and ":" in line:
            key, _, value = line.partition(":")
            case[key.strip()] = value.strip()
        elif case is not None and line.strip():
            raise ValueError(f"line {number}: unexpected text in the header of {case['id']}: {line[:80]!r}")
    if case is not None:
        raise ValueError(f"{case['id']}: no '=== end'")
    return cases


def labelled(case: dict) -> dict:
    missing = [h for h in ("category", "reason_group", "framework", "url") if not case.get(h)]
    if missing:
        raise ValueError(f"{case['id']}: missing {', '.join(missing)}")
    category = case["category"]
    if category == "infrastructure":
        kind = case.get("infra_kind", "-")
        if kind not in INFRA_KINDS:
            raise ValueError(f"{case['id']}: infra_kind {kind!r} is not one of {', '.join(INFRA_KINDS)}")
        category = INFRA_KINDS[kind]
    if category not in CATEGORIES:
        raise ValueError(f"{case['id']}: category {category!r} is not a category id")
    return {"id": case["id"], "log": case["log"], "category": category, "label": case["category"],
            **{h: case.get(h, "") for h in HEADERS if h not in ("category",)}}


def main() -> None:
    cases = [labelled(c) for c in parse((HERE / "cases.src.txt").read_text(encoding="utf-8"))]
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate case ids")
    with (HERE / "cases.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases -> {HERE / 'cases.jsonl'}")


if __name__ == "__main__":
    main()
