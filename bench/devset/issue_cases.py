"""The issue-tracker case sets (bench/devset/issues*/): their source format, checks and output.

Source format of each set's cases.src.txt: blocks
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
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from jobs_ingest.core.taxonomy import CATEGORIES  # noqa: E402

CATS = list(CATEGORIES)


def parse(text):
    cases = []
    for m in re.finditer(r"^@@@ case\n(.*?)^@@@ end$", text, re.S | re.M):
        head, _, log = m.group(1).partition("log:\n")
        meta = {}
        for line in head.splitlines():
            if line.strip():
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


def load(folder, id_prefix, excluded=(), key=lambda source: source):
    """The checked cases of folder/cases.src.txt as output rows, ids `<id_prefix>-0001`...: required
    fields, a known category, a source inside its repository, no source in `excluded` (compared by
    `key`), no log twice, one category per group. A failed check stops with an AssertionError."""
    cases = parse(open(os.path.join(folder, "cases.src.txt"), encoding="utf-8").read())
    excluded = {key(s) for s in excluded}
    out, seen_logs = [], set()
    for i, c in enumerate(cases, 1):
        for k in ("source", "repo", "category", "group", "note"):
            assert c.get(k), (i, k, c.get("source"))
        assert c["category"] in CATS, (i, c["category"])
        assert c["log"], (i, c["source"])
        assert c["source"].startswith("https://github.com/" + c["repo"] + "/"), (i, c["source"], c["repo"])
        assert key(c["source"]) not in excluded, ("source already used elsewhere", i, c["source"])
        assert c["log"] not in seen_logs, ("duplicate log", i, c["source"])
        seen_logs.add(c["log"])
        out.append({"id": f"{id_prefix}-{i:04d}", "log": c["log"], "category": c["category"], "source": c["source"],
                    "repo": c["repo"], "group": c["group"], "note": c["note"]})
    categories = {}
    for c in out:
        assert categories.setdefault(c["group"], c["category"]) == c["category"], ("group with 2 categories", c["group"])
    return out


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
