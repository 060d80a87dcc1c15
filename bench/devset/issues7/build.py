#!/usr/bin/env python3
"""issues7/*.src.txt -> dev.jsonl (development cases, `group` = "i7:<reason_group>"); README.md says how they were
sampled and labelled.

    .venv/bin/python bench/devset/issues7/build.py
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from case_blocks import build  # noqa: E402

if __name__ == "__main__":
    build(HERE, "dev.jsonl", group_prefix="i7")
