#!/usr/bin/env python3
"""Build cases.jsonl / dev.jsonl / heldout.jsonl from cases.src.txt (hand-transcribed excerpts).

Source format: blocks
  @@@ case
  source: <thread URL>
  repo: owner/name
  category: <taxonomy id>
  group: <same-failure group id>
  note: <one line>
  log:
  <verbatim log lines ...>
  @@@ end
Trailing whitespace on each log line is stripped; nothing else is changed.
Split: a group goes to heldout iff sha256("jobtriage-issues-v1:" + group) first byte is even.
"""
import hashlib, json, os, re, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
CATS = """gpu_oom cpu_oom framework_api_misuse tensor_mismatch loss_nan path_not_found library_not_found
permission_denied illegal_argument type_mismatch key_not_found null_reference attribute_not_found syntax_error
illegal_index undefined_variable not_implemented division_by_zero corrupt_data unexpected_encoding unclassified""".split()

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

def heldout(group):
    return hashlib.sha256(("jobtriage-issues-v1:" + group).encode()).digest()[0] % 2 == 0

def main():
    cases = parse(open(os.path.join(HERE, "cases.src.txt"), encoding="utf-8").read())
    out, seen_logs = [], set()
    for i, c in enumerate(cases, 1):
        for k in ("source", "repo", "category", "group", "note"):
            assert c.get(k), (i, k, c.get("source"))
        assert c["category"] in CATS, (i, c["category"])
        assert c["log"], (i, c["source"])
        assert c["source"].startswith("https://github.com/" + c["repo"] + "/"), (i, c["source"], c["repo"])
        key = c["log"]
        assert key not in seen_logs, ("duplicate log", i, c["source"])
        seen_logs.add(key)
        out.append({"id": f"iss-{i:04d}", "log": c["log"], "category": c["category"], "source": c["source"],
                    "repo": c["repo"], "group": c["group"], "note": c["note"]})
    # a group must have one category
    gcat = {}
    for c in out:
        assert gcat.setdefault(c["group"], c["category"]) == c["category"], ("group with 2 categories", c["group"])
    srcs = Counter(c["source"] for c in out)
    dup = [s for s, n in srcs.items() if n > 1]
    if dup:
        print("note: sources used more than once:", dup, file=sys.stderr)
    def dump(name, rows):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    dump("cases.jsonl", out)
    ho = [c for c in out if heldout(c["group"])]
    dv = [c for c in out if not heldout(c["group"])]
    dump("heldout.jsonl", ho)
    dump("dev.jsonl", dv)
    cc = Counter(c["category"] for c in out)
    print(f"{len(out)} cases, {len(gcat)} groups, {len(set(c['repo'] for c in out))} repos; "
          f"heldout {len(ho)} cases / {len(set(c['group'] for c in ho))} groups, dev {len(dv)}")
    for k in CATS:
        h = sum(1 for c in ho if c["category"] == k)
        print(f"  {k:22s} {cc.get(k,0):4d}  (heldout {h})")

if __name__ == "__main__":
    main()
