#!/usr/bin/env python3
"""Build heldout.jsonl from cases.src.txt (hand-transcribed excerpts of public GitHub issue threads;
format in ../issue_cases.py).

Fresh held-out set v2: every case goes to heldout.jsonl (no dev split). Never used for tuning.
Checks, beyond the common ones: no duplicate source, at most 2 cases per repository, and no source listed
in excluded_sources.txt (threads already used by the earlier issue-based sets).
"""
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from issue_cases import CATS, load, write_jsonl  # noqa: E402

MAX_PER_REPO = 2


def norm_url(u):
    return u.strip().rstrip("/").lower()


def main():
    excluded = [l for l in open(os.path.join(HERE, "excluded_sources.txt"), encoding="utf-8")
                if l.strip() and not l.startswith("#")]
    out = load(HERE, "ho2", excluded, key=norm_url)
    sources = Counter(norm_url(c["source"]) for c in out)
    assert all(n == 1 for n in sources.values()), ("duplicate source", [s for s, n in sources.items() if n > 1])
    per_repo = Counter(c["repo"].lower() for c in out)
    over = {r: n for r, n in per_repo.items() if n > MAX_PER_REPO}
    assert not over, ("more than %d cases for a repository" % MAX_PER_REPO, over)
    write_jsonl(os.path.join(HERE, "heldout.jsonl"), out)
    cc = Counter(c["category"] for c in out)
    print(f"{len(out)} cases, {len(set(c['group'] for c in out))} groups, {len(per_repo)} repos -> heldout.jsonl")
    for k in CATS:
        print(f"  {k:22s} {cc.get(k, 0):4d}")


if __name__ == "__main__":
    main()
