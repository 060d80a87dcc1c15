"""Grouping rules (pure): people's corrections of the automatic grouping, like Sentry's fingerprint rules
and LUCI Analysis's rule-based clusters. A rule sends the failures of one automatic fingerprint (under one
normaliser version) to a chosen signature:

* merge: every failure of that fingerprint (the grouping kept apart what is one problem);
* split: only the failures whose failure line or message contains a text (the grouping over-merged).

Split rules are more specific than merges, so they are tried first; then the oldest rule wins."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: int
    kind: str            # "merge" | "split"
    contains: str        # split: the text the failure line or message contains; "" for merges
    target: int          # the signature the matching failures go to


def choose(rules: list[Rule], failure_line: str, message: str) -> Rule | None:
    """The rule that applies to a failure with this text, among the rules of its fingerprint."""
    for rule in sorted(rules, key=lambda r: (r.kind != "split", r.id)):
        if rule.kind == "merge" or (rule.contains and (rule.contains in failure_line or rule.contains in message)):
            return rule
    return None
