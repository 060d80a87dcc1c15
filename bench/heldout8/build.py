#!/usr/bin/env python3
"""*.src.txt (hand-transcribed blocks in heldout3's format) -> cases.jsonl, one labelled held-out case per line.

heldout8 is a sixth held-out set (README.md): sampled by repository with heldout3's query templates, from
repositories no earlier set used as strata (each helper chose its own by kind and popularity, before querying),
labelled before any tagger ran, never tuned on. Evaluate it with heldout3's script:

    .venv/bin/python bench/heldout8/build.py
    .venv/bin/python bench/heldout3/evaluate.py --cases bench/heldout8/cases.jsonl \\
        --predictions bench/heldout8/predictions.jsonl --markdown
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "devset"))

from case_blocks import build  # noqa: E402

if __name__ == "__main__":
    build(HERE, "cases.jsonl")
