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


def build(folder: Path, out_name: str, group_prefix: str | None = None) -> None:
    """Parse every *.src.txt of `folder`, check ids and threads are used once, write `out_name` (JSON Lines)."""
    cases = []
    for src in sorted(folder.glob("*.src.txt")):
        cases += [_blocks.labelled(c) for c in _blocks.parse(src.read_text(encoding="utf-8"))]
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate case ids")
    urls = collections.Counter(c["url"] for c in cases)
    if any(n > 1 for n in urls.values()):
        raise SystemExit(f"threads used twice: {[u for u, n in urls.items() if n > 1]}")
    with (folder / out_name).open("w", encoding="utf-8") as out:
        for case in cases:
            row = {**case, "group": f"{group_prefix}:{case['reason_group']}"} if group_prefix else case
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    by_framework = collections.Counter(c["framework"] for c in cases)
    print(f"{len(cases)} cases, {len(set(c['reason_group'] for c in cases))} reason groups, "
          f"{len(set(c['repo'] for c in cases))} repositories -> {folder / out_name}")
    print("  " + ", ".join(f"{f} {n}" for f, n in by_framework.most_common()))
