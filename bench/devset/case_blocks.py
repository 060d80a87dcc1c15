"""Build a labelled case set from hand-transcribed `*.src.txt` blocks (heldout3's format) in one folder.

Shared by the sets sampled by repository (bench/devset/issues3, issues4, issues5, bench/heldout4): each folder's
build.py names its output and, for development sets, the prefix of `group` (the labelled reason group).
"""
from __future__ import annotations

import collections
import importlib.util
import json
from pathlib import Path

# The block parser and label check are heldout3's (same format); only its code is used, never its cases.
_spec = importlib.util.spec_from_file_location("heldout3_blocks", Path(__file__).resolve().parents[1] / "heldout3" / "build.py")
_blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_blocks)


def read(folder: Path) -> list[tuple[dict, dict]]:
    """(block as written, labelled case) for every block of every *.src.txt of `folder`, in file order; a case id
    or a thread used twice is an error. The block keeps keys the labelled case drops, for sets that add their own."""
    read_ = [(block, _blocks.labelled(block)) for src in sorted(folder.glob("*.src.txt"))
             for block in _blocks.parse(src.read_text(encoding="utf-8"))]
    ids = [case["id"] for _, case in read_]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate case ids")
    urls = collections.Counter(case["url"] for _, case in read_)
    if any(n > 1 for n in urls.values()):
        raise SystemExit(f"threads used twice: {[u for u, n in urls.items() if n > 1]}")
    return read_


def build(folder: Path, out_name: str, group_prefix: str | None = None) -> None:
    """Parse every *.src.txt of `folder`, check ids and threads are used once, write `out_name` (JSON Lines)."""
    cases = [case for _, case in read(folder)]
    with (folder / out_name).open("w", encoding="utf-8") as out:
        for case in cases:
            row = {**case, "group": f"{group_prefix}:{case['reason_group']}"} if group_prefix else case
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    by_framework = collections.Counter(c["framework"] for c in cases)
    print(f"{len(cases)} cases, {len(set(c['reason_group'] for c in cases))} reason groups, "
          f"{len(set(c['repo'] for c in cases))} repositories -> {folder / out_name}")
    print("  " + ", ".join(f"{f} {n}" for f, n in by_framework.most_common()))
