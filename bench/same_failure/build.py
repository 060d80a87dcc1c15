#!/usr/bin/env python3
"""*.src.txt (hand-transcribed blocks, README.md) -> cases.jsonl: groups of reports of one failure, and look-alikes.

Each block is heldout3's format plus three keys: `group` (the seed's id for the seed and the reports of the same
failure; a look-alike's own id), `relation` (seed, same, different) and `relation_evidence` (the threads' words that
decided it).

    .venv/bin/python bench/same_failure/build.py && .venv/bin/python bench/same_failure/evaluate.py --markdown
"""
from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "devset"))

from case_blocks import read  # noqa: E402  (heldout3's block parser and label check, ids and threads used once)

RELATIONS = ("seed", "same", "different")


def _seed(block: dict, seeds: list[str]) -> str:
    """The seed a candidate was found from: its query C<k> names its stratum's k-th seed (the last seed before
    it when k names none); the seed itself for a seed."""
    if block.get("relation") == "seed":
        return block["id"]
    query = block.get("query", "")
    k = int(query[1:]) if query[:1] == "C" and query[1:].isdigit() else 0
    return seeds[k - 1] if 0 < k <= len(seeds) else (seeds[-1] if seeds else "")


def main() -> None:
    cases = []
    seeds: dict[str, list[str]] = collections.defaultdict(list)     # stratum -> its seeds' ids, in order
    for block, case in read(HERE):
        stratum = block.get("stratum", "")
        if block.get("relation") == "seed":
            seeds[stratum].append(block["id"])
        relation, group = block.get("relation", ""), block.get("group", "")
        if relation not in RELATIONS or not group:
            raise SystemExit(f"{block['id']}: relation {relation!r} / group {group!r}")
        if (relation == "same") == (group == block["id"]) and relation != "seed":
            raise SystemExit(f"{block['id']}: a 'same' report joins its seed's group, a look-alike is its own")
        cases.append({**case, "group": group, "relation": relation, "seed": _seed(block, seeds[stratum]),
                      "relation_evidence": block.get("relation_evidence", "")})
    ids = {c["id"] for c in cases}
    unknown = [c["id"] for c in cases if c["group"] not in ids]
    if unknown:
        raise SystemExit(f"groups naming no case: {unknown}")
    with (HERE / "cases.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    relations = collections.Counter(c["relation"] for c in cases)
    sizes = collections.Counter(collections.Counter(c["group"] for c in cases).values())
    print(f"{len(cases)} logs ({', '.join(f'{r} {relations[r]}' for r in RELATIONS)}), "
          f"{len(set(c['repo'] for c in cases))} repositories; groups by size: {dict(sorted(sizes.items()))}")


if __name__ == "__main__":
    main()
