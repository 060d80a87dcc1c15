#!/usr/bin/env python3
"""Build heldout.jsonl from cases.src.txt (hand-transcribed excerpts of public GitHub issue threads).

Fresh held-out set v2: every case goes to heldout.jsonl (no dev split). Never used for tuning.

Source format: blocks (same as ../issues/build.py)
  @@@ case
  source: <thread URL>
  repo: owner/name
  category: <taxonomy id>
  group: <same-failure group id>
  note: <one line>
  log:
  <verbatim log lines ...>
  @@@ end
Lines outside blocks are ignored. Trailing whitespace on each log line is stripped; nothing else is changed.

Checks: required fields, known category, source URL belongs to repo, no duplicate log, no duplicate source,
one category per group, at most 2 cases per repository, and no source listed in excluded_sources.txt
(threads already used by the earlier issue-based sets).
"""
import json, os, re, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
CATS = """gpu_oom cpu_oom framework_api_misuse tensor_mismatch loss_nan path_not_found library_not_found
permission_denied illegal_argument type_mismatch key_not_found null_reference attribute_not_found syntax_error
illegal_index undefined_variable not_implemented division_by_zero corrupt_data unexpected_encoding unclassified""".split()
MAX_PER_REPO = 2


def parse(text):
    cases = []
    for m in re.finditer(r"^@@@ case\n(.*?)^@@@ end$", text, re.S | re.M):
        body = m.group(1)
        head, _, log = body.partition("log:\n")
        meta = {}
        for line in head.splitlines():
            if not line.strip():
                continue
            k, _, v = line.partition(":")
            meta[k.strip()] = v.strip()
        lines = [l.rstrip() for l in log.splitlines()]
        while lines and not lines[0]:
            lines.pop(0)
        while lines and not lines[-1]:
            lines.pop()
        meta["log"] = "\n".join(lines)
        cases.append(meta)
    return cases


def norm_url(u):
    return u.strip().rstrip("/").lower()


def main():
    cases = parse(open(os.path.join(HERE, "cases.src.txt"), encoding="utf-8").read())
    excluded = {norm_url(l) for l in open(os.path.join(HERE, "excluded_sources.txt"), encoding="utf-8")
                if l.strip() and not l.startswith("#")}
    out, seen_logs, seen_src = [], set(), set()
    for i, c in enumerate(cases, 1):
        for k in ("source", "repo", "category", "group", "note"):
            assert c.get(k), (i, k, c.get("source"))
        assert c["category"] in CATS, (i, c["category"])
        assert c["log"], (i, c["source"])
        assert c["source"].startswith("https://github.com/" + c["repo"] + "/"), (i, c["source"], c["repo"])
        assert norm_url(c["source"]) not in excluded, ("source is in excluded_sources.txt", i, c["source"])
        assert norm_url(c["source"]) not in seen_src, ("duplicate source", i, c["source"])
        seen_src.add(norm_url(c["source"]))
        assert c["log"] not in seen_logs, ("duplicate log", i, c["source"])
        seen_logs.add(c["log"])
        out.append({"id": f"ho2-{i:04d}", "log": c["log"], "category": c["category"], "source": c["source"],
                    "repo": c["repo"], "group": c["group"], "note": c["note"]})
    gcat = {}
    for c in out:
        assert gcat.setdefault(c["group"], c["category"]) == c["category"], ("group with 2 categories", c["group"])
    per_repo = Counter(c["repo"].lower() for c in out)
    over = {r: n for r, n in per_repo.items() if n > MAX_PER_REPO}
    assert not over, ("more than %d cases for a repository" % MAX_PER_REPO, over)
    with open(os.path.join(HERE, "heldout.jsonl"), "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    cc = Counter(c["category"] for c in out)
    print(f"{len(out)} cases, {len(gcat)} groups, {len(per_repo)} repos -> heldout.jsonl")
    for k in CATS:
        print(f"  {k:22s} {cc.get(k, 0):4d}")


if __name__ == "__main__":
    main()
