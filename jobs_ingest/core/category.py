"""What a failure category is, shared by the study's taxonomy (taxonomy.py) and the platform's own
failures (infra.py), so neither imports the other to describe a category."""
from __future__ import annotations

from dataclasses import dataclass

RETRY = "retry"
RETRY_WITH_CHANGE = "retry_with_change"
DO_NOT_RETRY = "do_not_retry"


@dataclass(frozen=True)
class Category:
    id: str
    name: str
    dimension: str
    study_count: int  # Table 1 of the study: failures of this category among 4,960
    retry_advice: str
    likely_root_cause: str  # pre-selection for triage, from the study's Figure 3
