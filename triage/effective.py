"""The effective category and root cause of a failure, in one place.

The rule: the job's override, else its signature's judgment, else the automatic tag (for the category;
a root cause is only ever recorded by a person, so it falls back to blank). A blank field does not
count: it means "not set", never "set to nothing".

The same rule in the four forms its users need: a Python resolver (pages, search documents), an ORM
expression (charts), Q filters (the queue) and an SQL fragment (the rollups' raw SQL).
"""
from __future__ import annotations

from django.db.models import CharField, F, Q, Value
from django.db.models.functions import Coalesce, NullIf

NOT_RECORDED = "none"  # root-cause filter value: failures without a recorded root cause


# ---------------------------------------------------------------------------------------------- Python
def category(override, triage, automatic: str) -> str:
    """`override` is a FailureOverride or None, `triage` a SignatureTriage or None."""
    return (override and override.category) or (triage and triage.category) or automatic


def root_cause(override, triage) -> str:
    return (override and override.root_cause) or (triage and triage.root_cause) or ""


# ---------------------------------------------------------------------------------------------- ORM
def category_expression(prefix: str = ""):
    """For a queryset whose path to Failure is `prefix` ("" on Failure itself)."""
    return Coalesce(NullIf(F(f"{prefix}override__category"), Value("")),
                    NullIf(F(f"{prefix}signature__triage__category"), Value("")),
                    F(f"{prefix}category"), output_field=CharField())


def signature_category_expression():
    """On Signature: its judged category, else its automatic one (no per-job override at this level)."""
    return Coalesce(NullIf(F("triage__category"), Value("")), F("category"), output_field=CharField())


def root_cause_expression(prefix: str = ""):
    return Coalesce(NullIf(F(f"{prefix}override__root_cause"), Value("")),
                    NullIf(F(f"{prefix}signature__triage__root_cause"), Value("")),
                    Value(""), output_field=CharField())


# ---------------------------------------------------------------------------------------------- Q
def signature_category_q(categories: list[str]) -> Q:
    """Signatures whose judged category, or else automatic category, is one of these (a signature has
    no per-job override: this is the rule one level up)."""
    unjudged = Q(triage__isnull=True) | Q(triage__category="")
    return Q(triage__category__in=categories) | (unjudged & Q(category__in=categories))


def root_cause_q(value: str) -> Q:
    """Failures whose effective root cause is `value`, or that have none for NOT_RECORDED."""
    no_override = Q(override__isnull=True) | Q(override__root_cause="")
    if value == NOT_RECORDED:
        return no_override & (Q(signature__triage__isnull=True) | Q(signature__triage__root_cause=""))
    return Q(override__root_cause=value) | (no_override & Q(signature__triage__root_cause=value))


# ---------------------------------------------------------------------------------------------- SQL
def category_sql(override: str, triage: str, automatic: str) -> str:
    """A column expression given the aliases of the LEFT JOINed override and signature-triage rows and
    the automatic category's column."""
    return f"COALESCE(NULLIF({override}.category, ''), NULLIF({triage}.category, ''), {automatic})"


def root_cause_sql(override: str, triage: str) -> str:
    return f"COALESCE(NULLIF({override}.root_cause, ''), NULLIF({triage}.root_cause, ''), '')"
