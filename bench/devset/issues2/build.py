#!/usr/bin/env python3
"""Build dev.jsonl from cases.src.txt (a second set of hand-transcribed issue-tracker excerpts).

Same source format as ../issues/build.py: blocks
  @@@ case
  source: <thread URL>
  repo: owner/name
  category: <taxonomy id>
  group: <same-failure group id>
  note: <one line>
  log:
  <verbatim log lines ...>
  @@@ end
Trailing whitespace on each log line is stripped; nothing else is changed. Lines starting with "#"
outside blocks are comments. All cases are development data (no held-out split).
"""
import json, os, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "issues"))
from build import CATS, parse  # noqa: E402  (the same block parser and category list)


def main():
    cases = parse(open(os.path.join(HERE, "cases.src.txt"), encoding="utf-8").read())
    excluded = set()
    if os.path.exists("/tmp/excluded_issue_urls.txt"):
        excluded = {l.strip() for l in open("/tmp/excluded_issue_urls.txt") if l.strip()}
    out, seen_logs = [], set()
    for i, c in enumerate(cases, 1):
        for k in ("source", "repo", "category", "group", "note"):
            assert c.get(k), (i, k, c.get("source"))
        assert c["category"] in CATS, (i, c["category"])
        assert c["log"], (i, c["source"])
        assert c["source"].startswith("https://github.com/" + c["repo"] + "/"), (i, c["source"], c["repo"])
        assert c["source"] not in excluded, ("thread already used in ../issues", c["source"])
        assert c["log"] not in seen_logs, ("duplicate log", i, c["source"])
        seen_logs.add(c["log"])
        out.append({"id": f"iss2-{i:04d}", "log": c["log"], "category": c["category"], "source": c["source"],
                    "repo": c["repo"], "group": c["group"], "note": c["note"]})
    gcat = {}
    for c in out:
        assert gcat.setdefault(c["group"], c["category"]) == c["category"], ("group with 2 categories", c["group"])
    dup = [s for s, n in Counter(c["source"] for c in out).items() if n > 1]
    if dup:
        print("note: sources used more than once:", dup, file=sys.stderr)
    with open(os.path.join(HERE, "dev.jsonl"), "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    cc = Counter(c["category"] for c in out)
    print(f"{len(out)} cases, {len(gcat)} groups, {len(set(c['repo'] for c in out))} repos -> dev.jsonl")
    for k in CATS:
        print(f"  {k:22s} {cc.get(k, 0):4d}")


if __name__ == "__main__":
    main()
