from django import template

from jobs_ingest.core.analysis import BASES

register = template.Library()


@register.filter
def hours(seconds) -> str:
    """GPU seconds as GPU hours for display: 1 decimal below 100 h, whole hours above."""
    try:
        value = float(seconds or 0) / 3600
    except (TypeError, ValueError):
        return "—"
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


@register.filter
def basis_text(basis: str) -> str:
    """What besides its masked message told a signature apart (Signature.basis), in words; "" if not recorded."""
    return BASES.get(basis or "", "")
