#!/usr/bin/env python3
"""Would the learned fallback help more where the rules of the day failed? Leave one retired set out.

    .venv/bin/pip install -r requirements-train.txt
    .venv/bin/python bench/learned_loso.py

Cross-validation on the development corpus cannot answer this: the rules were written on it, so they leave few of
its logs unclassified. The retired held-out sets (heldout3-5) were measured out of sample by tagging:2026-11o, whose
rules were never tuned on them. This script takes two populations of those sets' logs:
- `no_rule`: a failure was parsed, and 11o's rules alone (without a model) found no category. This is where the
  model is asked today.
- `no_failure`: 11o (rules and model ml6) parsed no failure. Here the model is never asked.

For each set, the model (bench/train_learned.py's features and fit) is trained on everything else, with every
thread of the tested set removed from training. The script prints how many answers would be right if the model
answered at or above each probability threshold and said `unclassified` below it. Nothing here is shipped: it
measures whether to change the threshold, or to ask the model about logs without a parsed failure.
For `no_failure`, the model reads the log's last meaningful line as the message ("last line"), or the analysis as
it stands ("as is").
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import train_learned as T  # noqa: E402

from jobs_ingest.core import analyse_text, configs, learned  # noqa: E402
from jobs_ingest.core.pipeline import meaningful_tail, model_may_answer  # noqa: E402

THEN = "tagging:2026-11o"
THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def thread(rec: dict) -> str:
    return (rec.get("url") or rec.get("source") or "").split("#")[0]


def last_line_view(log: str) -> dict:
    tail = meaningful_tail(log.split("\n"), 4)
    last = tail[-1] if tail else ""
    return {"exception_type": "", "masked_message": last, "failure_line": last, "excerpt": "\n".join(tail),
            "excerpt_start_line": 1, "failure_line_number": len(tail)}


def main() -> None:
    rows = T.load_rows(T.TRAIN_FILES + T.RETIRED_HELDOUT)
    held = sorted(str(p.relative_to(ROOT)) for p in T.RETIRED_HELDOUT)
    rules_then = dataclasses.replace(configs.tagging_config(THEN), learned_model=None)
    populations: dict[str, dict[int, object]] = {"no_rule": {}, "no_failure (as is)": {}, "no_failure (last line)": {}}
    for i, row in enumerate(rows):
        if row["file"] not in held:
            continue
        log = row["rec"]["log"]
        alone = analyse_text(log, tagging_config=rules_then)
        if alone.category == "unclassified" and model_may_answer(alone, rules_then) and alone.dimension != "infrastructure":
            populations["no_rule"][i] = alone
        full = analyse_text(log, tagging_config=THEN)
        if full.rule == "unclassified.no_failure_in_log":
            populations["no_failure (as is)"][i] = full
            populations["no_failure (last line)"][i] = last_line_view(log)
    feats = [learned.features(r["analysis"], T.FEATURES) for r in rows]
    models = {}
    for held_file in held:
        test_threads = {thread(r["rec"]) for r in rows if r["file"] == held_file}
        train = [i for i, r in enumerate(rows) if r["file"] != held_file and thread(r["rec"]) not in test_threads]
        models[held_file] = T.fit([feats[i] for i in train], [rows[i]["rec"]["category"] for i in train], T.MODEL)
    print(f"| population | logs | labelled unclassified (right if the model abstains) | "
          + " | ".join(f"model at >= {t}" for t in THRESHOLDS) + " |")
    print("|---|---:|---:|" + "---:|" * len(THRESHOLDS))
    for name, population in populations.items():
        answers = {}
        for i, view in population.items():
            model, vec = models[rows[i]["file"]]
            proba = model.predict_proba(vec.transform([learned.features(view, T.FEATURES)]))[0]
            best = int(proba.argmax())
            answers[i] = (str(model.classes_[best]), float(proba[best]))
        truth = {i: rows[i]["rec"]["category"] for i in population}
        right = [sum((answers[i][0] if answers[i][1] >= t else "unclassified") == truth[i] for i in population)
                 for t in THRESHOLDS]
        print(f"| {name} | {len(population)} | {sum(v == 'unclassified' for v in truth.values())} | "
              + " | ".join(map(str, right)) + " |")


if __name__ == "__main__":
    main()
