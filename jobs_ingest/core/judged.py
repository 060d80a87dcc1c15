"""Learning from triage (pure): a new failure the rules are unsure about takes the category that people
gave its nearest judged neighbours, when those agree. Treeherder's auto-classification idea: a failure
line someone has classified before classifies the same line again.

The search for candidates (judged signatures ranked by the similar-failure query) is done by the caller
(jobs_ingest.search.neighbours); the decision here is plain text similarity, so it is explainable and
needs no server: the masked messages (quoted names, paths and numbers masked harder, as for the learned
model) must share most of their words, and the exception types must match.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from . import infra
from .analysis import Analysis
from .learned import mask
from .normalise import short_type
from .taxonomy import CATEGORIES, UNCLASSIFIED

RULE_PREFIX = "judged."
UNSURE_BELOW = 0.7      # rule confidences below this (and unclassified, and the learned model) are unsure
MIN_SIMILARITY = 0.6    # word-set Jaccard of the masked messages for a neighbour to count
CORRECTION_SIMILARITY = 0.8  # a confident tag yields only to a person's correction of that same tag this close
TIE_MARGIN = 0.05       # neighbours this close to the best one must agree with it


@dataclass(frozen=True)
class Neighbour:
    signature_id: str
    category: str        # what a person said
    exception_type: str
    masked_message: str
    fingerprint: str
    auto_category: str = ""  # what the tagger said for it before the person judged


def is_unsure(analysis: Analysis) -> bool:
    return (analysis.category == UNCLASSIFIED or analysis.rule.startswith("learned.")
            or analysis.confidence < UNSURE_BELOW)


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the word sets of two masked messages (0..1)."""
    words_a, words_b = set(mask(a).split()), set(mask(b).split())
    if not words_a or not words_b:
        return 0.0
    return len(words_a & words_b) / len(words_a | words_b)


def refine(analysis: Analysis, neighbours: list[Neighbour]) -> Analysis:
    """The analysis with its judged neighbours' category when its closest neighbours (same exception type,
    similar message) agree, and either the analysis is unsure or those neighbours are people's corrections
    of the very category it has (the tagger was wrong there before); else the analysis unchanged. A
    neighbour of the same fingerprint is the failure's own signature, whose judgment applies anyway."""
    unsure = is_unsure(analysis)
    if not unsure:
        neighbours = [n for n in neighbours if n.auto_category == analysis.category != n.category]
    kind = short_type(analysis.exception_type)
    scored = sorted(((similarity(analysis.masked_message, n.masked_message), n) for n in neighbours
                     if n.fingerprint != analysis.fingerprint and n.category in CATEGORIES
                     and n.category != UNCLASSIFIED and short_type(n.exception_type) == kind),
                    key=lambda pair: -pair[0])
    if not scored or scored[0][0] < (MIN_SIMILARITY if unsure else CORRECTION_SIMILARITY):
        return analysis
    best, closest = scored[0]
    agreeing = [n for s, n in scored if s >= best - TIE_MARGIN]
    if any(n.category != closest.category for n in agreeing):
        return analysis
    category = CATEGORIES[closest.category]
    return dataclasses.replace(
        analysis, category=category.id, dimension=category.dimension, retry_advice=category.retry_advice,
        confidence=round(0.5 + 0.4 * best, 2), rule=f"{RULE_PREFIX}{category.id}",
        evidence=f"judged {category.id} on signature {closest.signature_id} "
                 f"({len(agreeing)} agreeing, similarity {best:.2f}): {closest.masked_message[:200]}",
        fault=infra.PLATFORM if category.dimension == infra.INFRASTRUCTURE else infra.USER,
        suspect_nodes=analysis.suspect_nodes if category.dimension == infra.INFRASTRUCTURE else (),
        judged_like=closest.signature_id)
