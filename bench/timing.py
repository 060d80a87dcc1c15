"""Shared by the benchmarks: the percentile they report (nearest rank; 0.0 for no values)."""


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else 0.0
