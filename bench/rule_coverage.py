#!/usr/bin/env python3
"""Count, for each alternative of each message rule, the development examples it matches (#14.7 rule review).

    python bench/rule_coverage.py                 # alternatives matching exactly one dev example
    python bench/rule_coverage.py --all           # every alternative with its count
    python bench/rule_coverage.py --drop-check    # for each single-example alternative: without it, is the
                                                  # example still right (another rule or the learned fallback)?
    python bench/rule_coverage.py --json          # machine-readable

Development examples: bench/devset (the files eval_tagger.py reads by default) and the dev split of
tests/fixtures (logs/*.log, frameworks/ and infra/ cases with "split": "dev"). Held-out sets
(bench/heldout3, bench/devset/issues_heldout2, the held-out splits of the fixtures) are never read.
An alternative "matches" an example when it matches the text the tagger reads for it: "Type: message" of the
terminating failure (as analysed by the default tagging config), or the last lines of a log without one.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jobs_ingest.core import analyse_text, configs, tagger  # noqa: E402

DEVSET = ROOT / "bench" / "devset"
DEV_FILES = [DEVSET / "issues" / "dev.jsonl", DEVSET / "issues2" / "dev.jsonl", DEVSET / "notebook_crashes.jsonl",
             DEVSET / "programs.jsonl", DEVSET / "job_logs.jsonl", DEVSET / "issues" / "heldout.jsonl"]
FIXTURES = ROOT / "tests" / "fixtures"


def dev_examples() -> list[dict]:
    out = []
    for path in DEV_FILES:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            out.append({"id": r["id"], "log": r["log"], "category": r["category"], "exit_code": r.get("exit_code")})
    for path in sorted((FIXTURES / "logs").glob("*.log")):
        out.append({"id": f"logs/{path.name}", "log": path.read_text(errors="replace"), "category": None})
    for kind in ("frameworks", "infra"):
        for line in (FIXTURES / kind / "cases.jsonl").read_text().splitlines():
            c = json.loads(line)
            if c.get("split") == "dev":
                out.append({"id": f"{kind}/{c['file']}", "log": (FIXTURES / kind / c["file"]).read_text(errors="replace"),
                            "category": c.get("category")})
    return out


def alternatives(source: str) -> list[str]:
    """Top-level "|" alternatives of a regex source (outside groups and character classes)."""
    parts, depth, in_class, start, i = [], 0, False, 0, 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if source[i + 1:i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(source[start:i])
            start = i + 1
        i += 1
    parts.append(source[start:])
    return parts


def texts(example: dict, config) -> list[str]:
    a = analyse_text(example["log"], exit_code=example.get("exit_code"), tagging_config=config)
    if a.found and a.exception_type:
        short = a.exception_type.rsplit(".", 1)[-1]
        return [f"{short}: {a.message}"[:tagger.MAX_TAG_CHARS]]
    lines = [ln.strip() for ln in example["log"].splitlines() if ln.strip()]
    return lines[-3:] + ([a.message] if a.message else [])


def coverage(examples: list[dict], ruleset) -> list[dict]:
    seen = [(e, texts(e, None)) for e in examples]
    rows = []
    for rid, category, _conf, pattern in ruleset.message_rules:
        for alt in alternatives(pattern.pattern):
            compiled = re.compile(alt, re.I | re.S)
            hits = [e["id"] for e, ts in seen if any(compiled.search(t) for t in ts)]
            rows.append({"rule": rid, "category": category, "alternative": alt, "count": len(hits), "examples": hits})
    return rows


def without(ruleset, rid: str, alt: str):
    rules = []
    for r, category, conf, pattern in ruleset.message_rules:
        if r == rid:
            parts = alternatives(pattern.pattern)
            parts.remove(alt)
            pattern = re.compile("|".join(parts) if parts else r"(?!x)x", re.I | re.S)
        rules.append((r, category, conf, pattern))
    return type(ruleset)(ruleset.version + "-review", rules, ruleset.type_defaults)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--drop-check", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    examples = dev_examples()
    by_id = {e["id"]: e for e in examples}
    default = configs.tagging_config()
    ruleset = tagger.RULES_V5
    rows = coverage(examples, ruleset)
    shown = rows if args.all else [r for r in rows if r["count"] == 1]
    for row in shown:
        if args.drop_check and row["count"] == 1:
            e = by_id[row["examples"][0]]
            trial = dataclasses.replace(default, id=default.id + "-review", tag=without(ruleset, row["rule"], row["alternative"]).tag)
            before = analyse_text(e["log"], exit_code=e.get("exit_code"))
            after = analyse_text(e["log"], exit_code=e.get("exit_code"), tagging_config=trial)
            row.update(label=e["category"], before=before.category, after=after.category, after_rule=after.rule,
                       covered=e["category"] is not None and after.category == e["category"])
    if args.json:
        print(json.dumps(shown, indent=1))
        return
    for row in shown:
        extra = ""
        if "covered" in row:
            extra = f"  label={row['label']} before={row['before']} without={row['after']} ({row['after_rule']})"
        print(f"{row['count']:4d}  {row['rule']:<40} {row['alternative'][:90]!r}  {','.join(row['examples'][:3])}{extra}")
    single = sum(1 for r in rows if r["count"] == 1)
    print(f"# {len(examples)} dev examples, {len(rows)} alternatives, {single} match exactly one example, "
          f"{sum(1 for r in rows if r['count'] == 0)} match none", file=sys.stderr)


if __name__ == "__main__":
    main()
