#!/usr/bin/env python3
"""Build cases.jsonl / dev.jsonl / heldout.jsonl from cases.src.txt (hand-transcribed excerpts; format
in ../issue_cases.py).

Split: a group goes to heldout iff sha256("jobtriage-issues-v1:" + group) first byte is even.
"""
import hashlib
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from issue_cases import CATS, load, write_jsonl  # noqa: E402


def heldout(group):
    return hashlib.sha256(("jobtriage-issues-v1:" + group).encode()).digest()[0] % 2 == 0


def main():
    out = load(HERE, "iss")
    dup = [s for s, n in Counter(c["source"] for c in out).items() if n > 1]
    if dup:
        print("note: sources used more than once:", dup, file=sys.stderr)
    write_jsonl(os.path.join(HERE, "cases.jsonl"), out)
    ho = [c for c in out if heldout(c["group"])]
    dv = [c for c in out if not heldout(c["group"])]
    write_jsonl(os.path.join(HERE, "heldout.jsonl"), ho)
    write_jsonl(os.path.join(HERE, "dev.jsonl"), dv)
    cc = Counter(c["category"] for c in out)
    print(f"{len(out)} cases, {len(set(c['group'] for c in out))} groups, {len(set(c['repo'] for c in out))} repos; "
          f"heldout {len(ho)} cases / {len(set(c['group'] for c in ho))} groups, dev {len(dv)}")
    for k in CATS:
        h = sum(1 for c in ho if c["category"] == k)
        print(f"  {k:22s} {cc.get(k,0):4d}  (heldout {h})")


if __name__ == "__main__":
    main()
