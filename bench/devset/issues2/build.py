#!/usr/bin/env python3
"""Build dev.jsonl from cases.src.txt (a second set of hand-transcribed issue-tracker excerpts; format
in ../issue_cases.py). All cases are development data (no held-out split).
"""
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from issue_cases import CATS, load, write_jsonl  # noqa: E402


def main():
    excluded = set()
    if os.path.exists("/tmp/excluded_issue_urls.txt"):
        excluded = {l.strip() for l in open("/tmp/excluded_issue_urls.txt") if l.strip()}
    out = load(HERE, "iss2", excluded)
    dup = [s for s, n in Counter(c["source"] for c in out).items() if n > 1]
    if dup:
        print("note: sources used more than once:", dup, file=sys.stderr)
    write_jsonl(os.path.join(HERE, "dev.jsonl"), out)
    cc = Counter(c["category"] for c in out)
    print(f"{len(out)} cases, {len(set(c['group'] for c in out))} groups, "
          f"{len(set(c['repo'] for c in out))} repos -> dev.jsonl")
    for k in CATS:
        print(f"  {k:22s} {cc.get(k, 0):4d}")


if __name__ == "__main__":
    main()
