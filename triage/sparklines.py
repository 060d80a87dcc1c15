"""Failures per day as a tiny inline SVG on each queue row (no script, no chart library): the counts
come from the daily signature rollups in one query for the whole page."""
from __future__ import annotations

from datetime import date, timedelta

from django.db.models import Sum
from django.utils.html import format_html

DAYS = 14
WIDTH, HEIGHT, PAD = 84, 18, 1.5


def daily_failures(signature_ids: list[int], today: date, days: int = DAYS) -> dict[int, list[int]]:
    """{signature id: [failures on each of the `days` days ending today]} (zeros for days without)."""
    from triage.models import DailySignatureRollup
    first = today - timedelta(days=days - 1)
    series = {pk: [0] * days for pk in signature_ids}
    rows = (DailySignatureRollup.objects.filter(signature_id__in=signature_ids, day__gte=first, day__lte=today)
            .values("signature_id", "day").annotate(n=Sum("failures")))
    for row in rows:
        series[row["signature_id"]][(row["day"] - first).days] += row["n"]
    return series


def points(counts: list[int], width: float = WIDTH, height: float = HEIGHT, pad: float = PAD) -> str:
    """SVG polyline points: x spread evenly, the busiest day at the top, zero on the baseline (pure)."""
    if not counts:
        return ""
    top = max(max(counts), 1)
    step = (width - 2 * pad) / max(len(counts) - 1, 1)
    return " ".join(f"{pad + i * step:.1f},{height - pad - (height - 2 * pad) * n / top:.1f}"
                    for i, n in enumerate(counts))


def svg(counts: list[int], first_day: date) -> str:
    total = sum(counts)
    label = (f"{total} failure{'s' if total != 1 else ''} in the {len(counts)} days from {first_day:%Y-%m-%d}; "
             f"busiest day {max(counts) if counts else 0}")
    return format_html(
        '<svg class="spark" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}"><title>{}</title>'
        '<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="{}"/></svg>',
        WIDTH, HEIGHT, WIDTH, HEIGHT, label, label, points(counts))
