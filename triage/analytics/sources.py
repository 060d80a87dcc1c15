"""Where the charts' numbers come from: RawSource groups the failure and job tables, RollupSource reads
the daily rollups (whole-day ranges only); source_for picks one. Each answers the same questions in the
same shapes, so a chart never knows which one it asked."""
from __future__ import annotations

from datetime import date, datetime, timezone as dt_timezone

from django.db import connection
from django.db.models import (Aggregate, Count, DurationField, ExpressionWrapper, F, FloatField, Func, QuerySet, Sum,
                              Value)
from django.db.models.functions import Coalesce, Greatest, TruncWeek

from jobs_ingest.models import Attempt, Failure
from triage import effective, rollups
from triage.analytics.filters import ChartFilters
from triage.models import (DailyCategoryRollup, DailyDurationRollup, DailyJobRollup, DailySignatureRollup,
                           DailySubmitterRollup)

HOUR = 3600.0


def _filter(qs: QuerySet, filters: ChartFilters, prefix: str = "") -> QuerySet:
    """`prefix` is the path from the queryset's model to Failure ("" or "job__failure__")."""
    job = "job__"  # Failure.job and Attempt.job alike
    conditions = {}
    if filters.since:
        conditions[f"{job}ended_at__gte"] = filters.since
    if filters.until:
        conditions[f"{job}ended_at__lt"] = filters.until
    if filters.team:
        conditions[f"{job}team"] = filters.team
    if filters.platform:
        conditions[f"{job}platform"] = filters.platform
    qs = qs.filter(**conditions)
    if filters.category:
        qs = qs.alias(_eff_filter=effective.category_expression(prefix)).filter(_eff_filter=filters.category)
    return qs


def failures(filters: ChartFilters) -> QuerySet:
    return _filter(Failure.objects.all(), filters)


def attempt_gpu_seconds():
    """GPUs x wall time of one attempt, in the database (0 for missing or inverted times)."""
    wall = ExpressionWrapper(F("ended_at") - F("started_at"), output_field=DurationField())
    epoch = Func(wall, template="EXTRACT(EPOCH FROM %(expressions)s)", output_field=FloatField()) \
        if connection.vendor == "postgresql" else Value(0.0)
    return Coalesce(Greatest(F("gpus") * epoch, Value(0.0)), Value(0.0), output_field=FloatField())


def _durations_in_python(qs) -> list[tuple[str, int, float, dict[int, float]]]:
    """RawSource.durations for the SQLite zero-setup default, which has no percentile_cont: small
    installations only (PostgreSQL computes this in the database)."""
    groups: dict[str, list[tuple[float, float]]] = {}
    for key, started, ended, gpu in (qs.annotate(_key=effective.category_expression())
                                     .values_list("_key", "job__started_at", "job__ended_at", "gpu_seconds")):
        groups.setdefault(key, []).append(((ended - started).total_seconds(), gpu or 0.0))
    rows = []
    for key in sorted(groups):
        walls = sorted(w for w, _ in groups[key])
        rows.append((key, len(walls), sum(g for _, g in groups[key]) / HOUR,
                     {p: bucket_percentile([(1, w) for w in walls], p / 100) / HOUR for p in PERCENTILES}))
    return rows


class PercentileCont(Aggregate):
    """PostgreSQL's ordered-set aggregate: percentile_cont(p) WITHIN GROUP (ORDER BY expr)."""
    function = "PERCENTILE_CONT"
    template = "%(function)s(%(percentile)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, percentile: float, **extra):
        super().__init__(expression, percentile=float(percentile), **extra)


PERCENTILES = (10, 25, 50, 75, 90)
BY_COST = ("-gpu", "-n")  # then the key: the order of every bar chart


class RawSource:
    """GROUP BY over the failure and job tables (joined to the override and judgment for the effective
    labels). Exact for any time range; its cost grows with the number of failures."""
    name = "raw"
    KEYS = {"category": effective.category_expression(), "root_cause": effective.root_cause_expression(),
            "stage": F("stage"), "team": F("job__team"), "platform": F("job__platform"), "submitter": F("job__submitter")}

    def grouped(self, filters: ChartFilters, key: str) -> list[tuple[str, int, float]]:
        rows = (failures(filters).annotate(_key=self.KEYS[key]).values("_key")
                .annotate(n=Count("pk"), gpu=Sum("gpu_seconds")).order_by(*BY_COST, "_key"))
        return [(r["_key"] or "", r["n"], (r["gpu"] or 0.0) / HOUR) for r in rows]

    def totals(self, filters: ChartFilters) -> tuple[int, float]:
        agg = failures(filters).aggregate(n=Count("pk"), gpu=Sum("gpu_seconds"))
        return agg["n"] or 0, (agg["gpu"] or 0.0) / HOUR

    def weekly(self, filters: ChartFilters) -> list[tuple[date, int, float]]:
        rows = (failures(filters).filter(job__ended_at__isnull=False)
                .annotate(week=TruncWeek("job__ended_at")).values("week")
                .annotate(n=Count("pk"), gpu=Sum("gpu_seconds")).order_by("week"))
        return [(_as_date(r["week"]), r["n"], (r["gpu"] or 0.0) / HOUR) for r in rows]

    def signature_scope(self, filters: ChartFilters) -> QuerySet:
        """Rows with a `signature_id`, for ranking signatures (`ranked`) or listing them."""
        return failures(filters)

    def ranked(self, scope: QuerySet, limit: int) -> list[dict]:
        return list(scope.values("signature_id").annotate(n=Count("pk"), gpu=Sum("gpu_seconds"))
                    .order_by(*BY_COST, "signature_id")[:limit])

    def retries(self, filters: ChartFilters) -> list[tuple[str, int, float]]:
        qs = _filter(Attempt.objects.filter(number__gt=1, job__failure__isnull=False), filters, "job__failure__")
        rows = (qs.annotate(_key=effective.category_expression("job__failure__")).values("_key")
                .annotate(n=Count("pk"), gpu=Sum(attempt_gpu_seconds())).order_by(*BY_COST, "_key"))
        return [(r["_key"], r["n"], (r["gpu"] or 0.0) / HOUR) for r in rows]

    def durations(self, filters: ChartFilters) -> list[tuple[str, int, float, dict[int, float]]]:
        """Per effective category (by key): failures with start and end times, their GPU hours, and
        percentiles of the hours from start to failure."""
        qs = failures(filters).filter(job__started_at__isnull=False, job__ended_at__isnull=False)
        if connection.vendor != "postgresql":
            return _durations_in_python(qs)
        wall = ExpressionWrapper(F("job__ended_at") - F("job__started_at"), output_field=DurationField())
        seconds = Func(wall, template="EXTRACT(EPOCH FROM %(expressions)s)", output_field=FloatField())
        rows = (qs.annotate(_key=effective.category_expression()).values("_key")
                .annotate(n=Count("pk"), gpu=Sum("gpu_seconds"),
                          **{f"p{p}": PercentileCont(seconds, p / 100) for p in PERCENTILES}).order_by("_key"))
        return [(r["_key"], r["n"], (r["gpu"] or 0.0) / HOUR, {p: (r[f"p{p}"] or 0.0) / HOUR for p in PERCENTILES})
                for r in rows]

    def all_jobs_gpu_hours(self, filters: ChartFilters) -> float:
        """GPU hours of every job (any status) that ended in the range: category filters do not apply."""
        attempts = Attempt.objects.all()
        if filters.since:
            attempts = attempts.filter(job__ended_at__gte=filters.since)
        if filters.until:
            attempts = attempts.filter(job__ended_at__lt=filters.until)
        if filters.team:
            attempts = attempts.filter(job__team=filters.team)
        if filters.platform:
            attempts = attempts.filter(job__platform=filters.platform)
        return (attempts.aggregate(s=Sum(attempt_gpu_seconds()))["s"] or 0.0) / HOUR


class RollupSource(RawSource):
    """The same aggregations over the daily rollups (triage/rollups.py). Needs whole-day ranges."""
    name = "rollups"

    @staticmethod
    def _rows(model, filters: ChartFilters, *, category=True) -> QuerySet:
        if not filters.whole_days:
            raise ValueError("the daily rollups answer whole-day ranges only")
        qs = model.objects.all()
        if filters.since:
            qs = qs.filter(day__gte=filters.since.astimezone(dt_timezone.utc).date())
        if filters.until:
            qs = qs.filter(day__lt=filters.until.astimezone(dt_timezone.utc).date())
        if filters.team:
            qs = qs.filter(team=filters.team)
        if filters.platform:
            qs = qs.filter(platform=filters.platform)
        if filters.category and category:
            qs = qs.filter(category=filters.category)
        return qs

    def grouped(self, filters: ChartFilters, key: str) -> list[tuple[str, int, float]]:
        model = DailySubmitterRollup if key == "submitter" else DailyCategoryRollup
        rows = (self._rows(model, filters).values(key).annotate(n=Sum("failures"), gpu=Sum("gpu_seconds"))
                .order_by(*BY_COST, key))
        return [(r[key] or "", r["n"], (r["gpu"] or 0.0) / HOUR) for r in rows]

    def totals(self, filters: ChartFilters) -> tuple[int, float]:
        agg = self._rows(DailyCategoryRollup, filters).aggregate(n=Sum("failures"), gpu=Sum("gpu_seconds"))
        return agg["n"] or 0, (agg["gpu"] or 0.0) / HOUR

    def weekly(self, filters: ChartFilters) -> list[tuple[date, int, float]]:
        rows = (self._rows(DailyCategoryRollup, filters).filter(day__isnull=False)
                .annotate(week=TruncWeek("day")).values("week")
                .annotate(n=Sum("failures"), gpu=Sum("gpu_seconds")).order_by("week"))
        return [(_as_date(r["week"]), r["n"], (r["gpu"] or 0.0) / HOUR) for r in rows]

    def signature_scope(self, filters: ChartFilters) -> QuerySet:
        return self._rows(DailySignatureRollup, filters)

    def ranked(self, scope: QuerySet, limit: int) -> list[dict]:
        return list(scope.values("signature_id").annotate(n=Sum("failures"), gpu=Sum("gpu_seconds"))
                    .order_by(*BY_COST, "signature_id")[:limit])

    def retries(self, filters: ChartFilters) -> list[tuple[str, int, float]]:
        rows = (self._rows(DailyCategoryRollup, filters).values("category")
                .annotate(n=Sum("retry_attempts"), gpu=Sum("retry_gpu_seconds")).filter(n__gt=0)
                .order_by(*BY_COST, "category"))
        return [(r["category"], r["n"], (r["gpu"] or 0.0) / HOUR) for r in rows]

    def durations(self, filters: ChartFilters) -> list[tuple[str, int, float, dict[int, float]]]:
        # One row per (category, bucket): at most ~400 buckets per category whatever the number of jobs.
        rows = (self._rows(DailyDurationRollup, filters).values("category", "ttf_bucket")
                .annotate(n=Sum("failures"), gpu=Sum("gpu_seconds"), seconds=Sum("ttf_seconds"))
                .order_by("category", "ttf_bucket"))
        per_category: dict[str, list] = {}
        for r in rows:
            per_category.setdefault(r["category"], []).append((r["n"], r["gpu"] or 0.0, r["seconds"] / r["n"]))
        out = []
        for key, buckets in per_category.items():
            n = sum(b[0] for b in buckets)
            out.append((key, n, sum(b[1] for b in buckets) / HOUR,
                        {p: bucket_percentile([(b[0], b[2]) for b in buckets], p / 100) / HOUR for p in PERCENTILES}))
        return out

    def all_jobs_gpu_hours(self, filters: ChartFilters) -> float:
        agg = self._rows(DailyJobRollup, filters, category=False).aggregate(s=Sum("gpu_seconds"))
        return (agg["s"] or 0.0) / HOUR


def bucket_percentile(buckets: list[tuple[int, float]], fraction: float) -> float:
    """percentile_cont over values given as (count, value) in ascending order: the value at position
    fraction x (n - 1), interpolated between its neighbours, as PostgreSQL computes it on the rows."""
    n = sum(count for count, _ in buckets)
    position = fraction * (n - 1)
    lower = int(position)

    def value_at(index: int) -> float:
        seen = 0
        for count, value in buckets:
            seen += count
            if index < seen:
                return value
        return buckets[-1][1]

    low = value_at(lower)
    weight = position - lower
    return low + weight * (value_at(lower + 1) - low) if weight else low


RAW, ROLLUPS = RawSource(), RollupSource()


def source_for(filters: ChartFilters):
    return ROLLUPS if filters.whole_days and rollups.supported() else RAW


def _as_date(value) -> date:
    return value.date() if isinstance(value, datetime) else value
