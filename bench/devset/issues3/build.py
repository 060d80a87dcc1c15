#!/usr/bin/env python3
"""*.src.txt (hand-transcribed blocks in heldout3's format) -> dev.jsonl, one labelled development case per line:
{"id", "log", "category", "label", "group", "framework", "launcher", "stratum", "repo", "url", ...}.

These cases were sampled by repository and framework (never by message) with heldout3's query templates,
from threads that no earlier set used (heldout3's included), and labelled before any tagger ran on them.
Several repositories are also heldout3 strata (TensorFlow, MXNet, JAX, DeepSpeed, Lightning): the threads
differ, the frameworks' users are the same. They are development data: rules and the learned fallback may
be tuned on them. `group` is the labelled reason group (the same failure reason across code bases).

    .venv/bin/python bench/devset/issues3/build.py
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from case_blocks import build  # noqa: E402

if __name__ == "__main__":
    build(HERE, "dev.jsonl", group_prefix="i3")
