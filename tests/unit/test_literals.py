"""Literal gates (jobs_ingest/core/literals.py): the words a pattern needs, and gates that never change a search."""
import json
import re
from pathlib import Path

import pytest

from jobs_ingest.core import literals, tagger

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("pattern, words", [
    (r"no module named", {"no module named"}),
    (r"\bout of memory\b", {"out of memory"}),
    (r"cuda error: (?:out of memory|device-side assert)", {"out of memory", "device-side assert"}),
    (r"size mismatch.{0,40}copying a param", {"copying a param"}),  # the longer of two runs
    (r"(?:expected|got) \d+ channels", {" channels"}),              # a branch with a short word loses to the run
    (r"ab(?:cde)+", {"cde"}),                                         # a repeated word is needed at least once
    (r"abc(?:def)?", {"abc"}),                                        # an optional part is not needed
    (r"[abc]+\d", None),                                              # classes name no word
    (r"foo|", None),                                                  # an empty branch needs nothing
    (r"(?i)abc", None),                                               # a literal is not exact when case is ignored
    (r"abc(?i:def)", {"abc"}),
])
def test_required_words(pattern, words):
    found = literals.required_words(pattern)
    assert (set(found) if found is not None else None) == words


def test_every_released_rule_has_a_gate_that_agrees_with_its_pattern():
    """Every message rule of every released rule set, gated and ungated, on the lower-cased last lines of the development
    logs and on each rule's own words (where a gate lets the text through): the same match, or none, every time."""
    rule_sets = [getattr(tagger, name) for name in dir(tagger) if re.fullmatch(r"RULES_V\d+", name)]
    patterns = {fast.pattern.pattern: fast for rules in rule_sets for fast in rules.fast if hasattr(fast, "words")}
    assert len(patterns) >= 100 and all(hasattr(fast, "words") for rules in rule_sets for fast in rules.fast)
    texts = []
    for path in sorted((ROOT / "bench" / "devset").glob("*.jsonl"))[:3]:
        for k, line in enumerate(path.open(encoding="utf-8")):
            if k % 3 == 0 and line.strip():
                texts.append("\n".join(json.loads(line)["log"].lower().splitlines()[-6:]))
    texts += [" ".join(fast.words) for fast in patterns.values()]
    assert len(texts) > 300
    for fast in patterns.values():
        for text in texts:
            gated, plain = fast.search(text), fast.pattern.search(text)
            assert (gated and gated.span()) == (plain and plain.span()), (fast.pattern.pattern, text)
