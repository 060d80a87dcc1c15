"""Cost-weighted analytics: every aggregation runs in PostgreSQL; no failure row is loaded into Python.
Each chart returns a `Chart` (rows of numbers, a caption, links to the matching failures) that the page
renders with Plotly and the CSV export writes.

Two sources give the same numbers: ROLLUPS reads the indexed daily rollups of triage/rollups.py (tens of
thousands of narrow rows instead of a million jobs: the default whenever the time range is whole UTC
days, as every URL-made range is), RAW groups the failure and job tables directly (a range with a time
of day, and the baseline of bench/bench_charts.py).

Counts and GPU hours always come together: the study's lesson is that counts mislead (initialization
failures are 30.8% of failures but 0.9% of the wasted GPU time).

The category everywhere is the *effective* one: a per-job override, else the signature's confirmed
category, else the automatic tag. Two LEFT JOINs (override, signature triage) on primary keys.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone as dt_timezone
from urllib.parse import urlencode

from django.db import connection
from django.db.models import (Aggregate, CharField, Count, DurationField, ExpressionWrapper, F, FloatField, Func,
                              QuerySet, Sum, Value)
from django.db.models.functions import Coalesce, Greatest, NullIf, TruncWeek
from django.urls import reverse

from jobs_ingest.core.taxonomy import CATEGORIES, DIMENSIONS, DO_NOT_RETRY, RETRY_ADVICE, ROOT_CAUSES, STAGES
from jobs_ingest.jobspec import parse_time
from jobs_ingest.models import Attempt, Failure, Signature
from triage import rollups
from triage.models import (DailyCategoryRollup, DailyDurationRollup, DailyJobRollup, DailySignatureRollup,
                           DailySubmitterRollup)

HOUR = 3600.0


# ---------------------------------------------------------------------------------------------- filters
@dataclass
class ChartFilters:
    """The filters every chart shares, kept in the URL: ?since=2026-11-01&until=2026-11-30&team=nlp&
    platform=slurm&category=gpu_oom. `until` is inclusive when given as a date. Malformed values are
    ignored (as in the triage queue), never an error page."""
    since: datetime | None = None
    until: datetime | None = None  # exclusive upper bound
    since_text: str = ""
    until_text: str = ""
    team: str = ""
    platform: str = ""
    category: str = ""

    @classmethod
    def from_query(cls, query) -> "ChartFilters":
        f = cls()
        for name in ("since", "until"):
            text = (query.get(name) or "").strip()
            if not text:
                continue
            try:
                moment = parse_time(text)
            except ValueError:
                continue
            if name == "until" and len(text) == 10:  # a date: the whole day counts
                moment += timedelta(days=1)
            setattr(f, name, moment)
            setattr(f, f"{name}_text", text)
        f.team = (query.get("team") or "").strip()[:150]
        f.platform = (query.get("platform") or "").strip()[:64]
        f.category = query.get("category") if query.get("category") in CATEGORIES else ""
        return f

    @classmethod
    def for_range(cls, start: datetime, end: datetime, team: str = "") -> "ChartFilters":
        return cls(since=start, until=end, since_text=start.date().isoformat(),
                   until_text=(end - timedelta(days=1)).date().isoformat(), team=team)

    def params(self) -> dict[str, str]:
        values = {"since": self.since_text, "until": self.until_text, "team": self.team,
                  "platform": self.platform, "category": self.category}
        return {k: v for k, v in values.items() if v}

    @property
    def active(self) -> bool:
        return bool(self.params())

    @property
    def whole_days(self) -> bool:
        """True when the range starts and ends at UTC midnight, so daily rollups answer it exactly."""
        return all(moment is None or moment.astimezone(dt_timezone.utc).timetz() == time(0, tzinfo=dt_timezone.utc)
                   for moment in (self.since, self.until))

    def queue_url(self, **extra) -> str:
        """The triage queue showing the failures behind a bar: these filters plus the bar's own."""
        params = {"state": "all", **self.params(), **{k: v for k, v in extra.items() if v}}
        return reverse("queue") + "?" + urlencode(params)


def effective_category(prefix: str = ""):
    return Coalesce(NullIf(F(f"{prefix}override__category"), Value("")),
                    NullIf(F(f"{prefix}signature__triage__category"), Value("")),
                    F(f"{prefix}category"), output_field=CharField())


def effective_root_cause(prefix: str = ""):
    return Coalesce(NullIf(F(f"{prefix}override__root_cause"), Value("")),
                    NullIf(F(f"{prefix}signature__triage__root_cause"), Value("")),
                    Value(""), output_field=CharField())


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
        qs = qs.alias(_eff_filter=effective_category(prefix)).filter(_eff_filter=filters.category)
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
    for key, started, ended, gpu in (qs.annotate(_key=effective_category())
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


# ---------------------------------------------------------------------------------------------- sources
class RawSource:
    """GROUP BY over the failure and job tables (joined to the override and judgment for the effective
    labels). Exact for any time range; its cost grows with the number of failures."""
    name = "raw"
    KEYS = {"category": effective_category(), "root_cause": effective_root_cause(), "stage": F("stage"),
            "team": F("job__team"), "platform": F("job__platform"), "submitter": F("job__submitter")}

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
        rows = (qs.annotate(_key=effective_category("job__failure__")).values("_key")
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
        rows = (qs.annotate(_key=effective_category()).values("_key")
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


# ---------------------------------------------------------------------------------------------- charts
@dataclass
class Row:
    key: str
    label: str
    failures: int
    gpu_hours: float
    link: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class Chart:
    name: str
    title: str
    caption: str
    kind: str  # "bars" (horizontal, one row per value), "trend", "pareto", "box", "retry"
    rows: list[Row]
    empty: str = ""  # why there is nothing to show (plain words)
    extra_columns: list[tuple[str, str]] = field(default_factory=list)  # (key in Row.extra, CSV header)
    total_failures: int = 0
    total_gpu_hours: float = 0.0

    @property
    def is_empty(self) -> bool:
        return not self.rows

    def table(self) -> tuple[list[str], list[list]]:
        header = ["key", "label", "failures", "gpu_hours"] + [h for _, h in self.extra_columns]
        body = [[r.key, r.label, r.failures, round(r.gpu_hours, 3)] + [r.extra.get(k, "") for k, _ in self.extra_columns]
                for r in self.rows]
        return header, body


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def totals(filters: ChartFilters, source=None) -> tuple[int, float]:
    return (source or source_for(filters)).totals(filters)


def _bars(name, title, caption, grouped, label, link, empty) -> Chart:
    rows = [Row(key, label(key), n, gpu, link(key)) for key, n, gpu in grouped]
    chart = Chart(name, title, caption, "bars", rows, empty=empty)
    chart.total_failures = sum(r.failures for r in rows)
    chart.total_gpu_hours = sum(r.gpu_hours for r in rows)
    chart.extra_columns = [("failure_share", "failure_share_pct"), ("gpu_share", "gpu_share_pct")]
    for r in rows:
        r.extra = {"failure_share": round(_pct(r.failures, chart.total_failures), 1),
                   "gpu_share": round(_pct(r.gpu_hours, chart.total_gpu_hours), 1)}
    return chart


NO_MATCH = "No failures match these filters."


def by_category(filters: ChartFilters, source=None) -> Chart:
    grouped = (source or source_for(filters)).grouped(filters, "category")
    return _bars("category", "Failure categories",
                 "What broke, by category (confirmed by an engineer where triaged, else the automatic tag): "
                 "the longest GPU-hours bar is where fixing pays most.",
                 grouped, lambda k: CATEGORIES[k].name if k in CATEGORIES else k,
                 lambda k: filters.queue_url(category=k), NO_MATCH)


def by_dimension(filters: ChartFilters, source=None) -> Chart:
    per_dim: dict[str, list] = {}
    for key, n, gpu in (source or source_for(filters)).grouped(filters, "category"):  # <= 21 rows: fold here
        dim = CATEGORIES[key].dimension if key in CATEGORIES else "unclassified"
        acc = per_dim.setdefault(dim, [0, 0.0])
        acc[0] += n
        acc[1] += gpu
    grouped = sorted(((k, v[0], v[1]) for k, v in per_dim.items()), key=lambda r: (-r[2], -r[1], r[0]))
    return _bars("dimension", "Failure dimensions",
                 "The four families of the study (environment, code, deep-learning specific, data): "
                 "compare how often each fails with how many GPU hours it burns.",
                 grouped, lambda k: DIMENSIONS.get(k, k), lambda k: filters.queue_url(dimension=k), NO_MATCH)


def by_stage(filters: ChartFilters, source=None) -> Chart:
    return _bars("stage", "Job stage at failure",
                 "Where in the job it failed: early failures are frequent but cheap, late ones (evaluation) "
                 "waste the most GPU time.",
                 (source or source_for(filters)).grouped(filters, "stage"), lambda k: STAGES.get(k, k),
                 lambda k: filters.queue_url(stage=k), NO_MATCH)


def by_root_cause(filters: ChartFilters, source=None) -> Chart:
    return _bars("root_cause", "Root causes (recorded by engineers)",
                 "Why it broke, as recorded during triage; \"not recorded yet\" shrinks as signatures are triaged.",
                 (source or source_for(filters)).grouped(filters, "root_cause"),
                 lambda k: ROOT_CAUSES.get(k, "Not recorded yet" if not k else k),
                 lambda k: filters.queue_url(root_cause=k or NOT_RECORDED), NO_MATCH)


NOT_RECORDED = "none"  # the queue's root_cause value for "no root cause recorded yet" (selectors.NOT_RECORDED)


def _by_job_field(name, title, caption, filters, field_name, source, limit=None) -> Chart:
    grouped = (source or source_for(filters)).grouped(filters, field_name)
    shown = grouped[:limit] if limit else grouped
    chart = _bars(name, title, caption + (f" Top {limit} of {len(grouped)} by GPU hours."
                                          if limit and len(grouped) > limit else ""),
                  shown, lambda k: k or f"(no {field_name})",
                  lambda k: filters.queue_url(**{field_name: k}) if k else "", NO_MATCH)
    chart.total_failures = sum(n for _, n, _ in grouped)
    chart.total_gpu_hours = sum(g for _, _, g in grouped)
    for r in chart.rows:
        r.extra = {"failure_share": round(_pct(r.failures, chart.total_failures), 1),
                   "gpu_share": round(_pct(r.gpu_hours, chart.total_gpu_hours), 1)}
    return chart


def by_team(filters: ChartFilters, source=None) -> Chart:
    return _by_job_field("team", "Teams", "Which teams' jobs fail, and how much GPU time those failures cost.",
                         filters, "team", source, limit=25)


def by_submitter(filters: ChartFilters, source=None) -> Chart:
    return _by_job_field("submitter", "Submitters", "Whose jobs fail most expensively.", filters, "submitter",
                         source, limit=25)


def by_platform(filters: ChartFilters, source=None) -> Chart:
    return _by_job_field("platform", "Platforms", "Failures and wasted GPU hours per scheduler or cluster.",
                         filters, "platform", source, limit=25)


def iso_week(day) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def weekly_trend(filters: ChartFilters, source=None) -> Chart:
    out = []
    for monday, n, gpu in (source or source_for(filters)).weekly(filters):
        sunday = monday + timedelta(days=6)
        link = ChartFilters(team=filters.team, platform=filters.platform, category=filters.category,
                            since_text=monday.isoformat(), until_text=sunday.isoformat()).queue_url()
        out.append(Row(iso_week(monday), iso_week(monday), n, gpu, link, {"week_start": monday.isoformat()}))
    chart = Chart("trend", "Weekly trend",
                  "Failed jobs and wasted GPU hours per ISO week (Monday to Sunday, by the time the job ended).",
                  "trend", out, empty=NO_MATCH, extra_columns=[("week_start", "week_start")])
    chart.total_failures = sum(r.failures for r in out)
    chart.total_gpu_hours = sum(r.gpu_hours for r in out)
    return chart


PARETO_TOP = 30


def pareto(filters: ChartFilters, top: int = PARETO_TOP, source=None) -> Chart:
    source = source or source_for(filters)
    n_total, total_gpu = source.totals(filters)
    ranked = source.ranked(source.signature_scope(filters), top)
    labels = dict(Signature.objects.filter(pk__in=[r["signature_id"] for r in ranked])
                  .values_list("pk", "masked_message"))
    rows, cumulative = [], 0.0
    for i, r in enumerate(ranked, 1):
        gpu = (r["gpu"] or 0.0) / HOUR
        cumulative += gpu
        message = " ".join((labels.get(r["signature_id"]) or "").split())
        rows.append(Row(str(r["signature_id"]), message[:140], r["n"], gpu,
                        reverse("signature-detail", args=[r["signature_id"]]),
                        {"rank": i, "cumulative_share": round(_pct(cumulative, total_gpu), 1)}))
    chart = Chart("pareto", f"Top {top} signatures by GPU hours (Pareto)",
                  "Each bar is one recurring error; the line shows how much of all wasted GPU time the top "
                  "signatures cover together, so fixing the first few bars saves the most.",
                  "pareto", rows, empty=NO_MATCH,
                  extra_columns=[("rank", "rank"), ("cumulative_share", "cumulative_gpu_share_pct")])
    chart.total_failures, chart.total_gpu_hours = n_total, total_gpu
    return chart


def retry_waste(filters: ChartFilters, source=None) -> Chart:
    out = []
    for key, n, gpu in (source or source_for(filters)).retries(filters):
        advice = CATEGORIES[key].retry_advice if key in CATEGORIES else ""
        out.append(Row(key, CATEGORIES[key].name if key in CATEGORIES else key, n, gpu,
                       filters.queue_url(category=key),
                       {"retry_advice": advice, "cannot_help": advice == DO_NOT_RETRY}))
    wasted = sum(r.gpu_hours for r in out if r.extra["cannot_help"])
    chart = Chart("retry", "GPU hours spent on retries",
                  f"Retries (attempts after the first) by category; red bars are categories where retrying "
                  f"cannot help because the job fails the same way again: {wasted:,.1f} GPU hours in this view.",
                  "retry", out, empty="No failed job in this view was retried.",
                  extra_columns=[("retry_advice", "retry_advice"), ("cannot_help", "retry_cannot_help")])
    chart.total_failures = sum(r.failures for r in out)  # here: number of retry attempts
    chart.total_gpu_hours = sum(r.gpu_hours for r in out)
    chart.wasted_gpu_hours = wasted
    return chart


def time_to_failure(filters: ChartFilters, source=None) -> Chart:
    out = []
    for key, n, gpu, hours in (source or source_for(filters)).durations(filters):
        extra = {f"p{p}_hours": round(hours[p], 3) for p in PERCENTILES}
        out.append(Row(key, CATEGORIES[key].name if key in CATEGORIES else key, n, gpu,
                       filters.queue_url(category=key), extra))
    out.sort(key=lambda r: -r.extra.get("p50_hours", 0))
    caption = ("How long jobs ran before they failed, per category: the box spans the middle half of the jobs, "
               "the line inside is the median, whiskers reach the 10th and 90th percentiles; late failures waste "
               "the most.")
    chart = Chart("time_to_failure", "Time to failure", caption, "box", out,
                  empty="No failed job in this view has both a start and an end time.",
                  extra_columns=[(f"p{p}_hours", f"p{p}_hours") for p in PERCENTILES])
    chart.total_failures = sum(r.failures for r in out)
    chart.total_gpu_hours = sum(r.gpu_hours for r in out)
    return chart


CHARTS = {
    "category": by_category,
    "dimension": by_dimension,
    "stage": by_stage,
    "trend": weekly_trend,
    "pareto": pareto,
    "retry": retry_waste,
    "time_to_failure": time_to_failure,
    "root_cause": by_root_cause,
    "team": by_team,
    "submitter": by_submitter,
    "platform": by_platform,
}


# ---------------------------------------------------------------------------------------------- figures
BLUE, ORANGE, RED, GREY = "#2855d8", "#e8892b", "#d92d20", "#98a2b3"


def _fmt(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _count_ticks(values) -> dict:
    """Whole-number ticks on a count axis (no "0.5 failures")."""
    return {"dtick": 1, "tick0": 0} if max(values, default=0) <= 8 else {"tickformat": ",d"}


def _hbar_pair(chart: Chart, left_title="Failures (count)", right_title="GPU hours wasted",
               right_colors=None) -> dict:
    labels = [r.label if len(r.label) <= 42 else r.label[:40] + "…" for r in chart.rows]
    links = [r.link or None for r in chart.rows]
    n_total, g_total = chart.total_failures or 1, chart.total_gpu_hours or 1
    data = [
        {"type": "bar", "orientation": "h", "name": left_title, "y": labels, "x": [r.failures for r in chart.rows],
         "text": [f"{r.failures:,} ({_pct(r.failures, n_total):.0f}%)" for r in chart.rows],
         "textposition": "auto", "marker": {"color": ORANGE}, "customdata": links, "xaxis": "x", "yaxis": "y",
         "hovertemplate": "%{y}<br>%{x:,} " + left_title.split(" (")[0].lower() + "<extra></extra>"},
        {"type": "bar", "orientation": "h", "name": right_title, "y": labels,
         "x": [round(r.gpu_hours, 2) for r in chart.rows],
         "text": [f"{_fmt(r.gpu_hours)} h ({_pct(r.gpu_hours, g_total):.0f}%)" for r in chart.rows],
         "textposition": "auto", "marker": {"color": right_colors or BLUE}, "customdata": links,
         "xaxis": "x2", "yaxis": "y", "hovertemplate": "%{y}<br>%{x:,.1f} GPU hours<extra></extra>"},
    ]
    layout = {
        "height": 90 + 26 * max(len(labels), 3), "margin": {"l": 10, "r": 20, "t": 30, "b": 30},
        "showlegend": False, "bargap": 0.25,
        "xaxis": {"domain": [0, 0.46], "title": {"text": ""}, "automargin": True, "rangemode": "tozero",
                  **_count_ticks(r.failures for r in chart.rows)},
        "xaxis2": {"domain": [0.54, 1], "anchor": "y", "automargin": True, "rangemode": "tozero"},
        "yaxis": {"autorange": "reversed", "automargin": True, "ticksuffix": " "},
        "annotations": [
            {"text": f"<b>{left_title}</b>", "xref": "paper", "yref": "paper", "x": 0.0, "y": 1.0,
             "xanchor": "left", "yanchor": "bottom", "showarrow": False},
            {"text": f"<b>{right_title}</b>", "xref": "paper", "yref": "paper", "x": 0.54, "y": 1.0,
             "xanchor": "left", "yanchor": "bottom", "showarrow": False}],
    }
    return {"data": data, "layout": layout}


def figure(chart: Chart) -> dict | None:
    """A Plotly figure as plain dicts (JSON-ready), or None when the chart is empty."""
    if chart.is_empty:
        return None
    if chart.kind == "bars":
        return _hbar_pair(chart)
    if chart.kind == "retry":
        colors = [RED if r.extra.get("cannot_help") else GREY for r in chart.rows]
        return _hbar_pair(chart, "Retry attempts", "GPU hours on retries", colors)
    if chart.kind == "trend":
        weeks = [r.label for r in chart.rows]
        links = [r.link for r in chart.rows]
        data = [
            {"type": "bar", "name": "Failed jobs", "x": weeks, "y": [r.failures for r in chart.rows],
             "marker": {"color": ORANGE}, "customdata": links, "xaxis": "x", "yaxis": "y",
             "hovertemplate": "%{x}<br>%{y:,} failed jobs<extra></extra>"},
            {"type": "bar", "name": "GPU hours wasted", "x": weeks,
             "y": [round(r.gpu_hours, 2) for r in chart.rows], "marker": {"color": BLUE}, "customdata": links,
             "xaxis": "x2", "yaxis": "y2", "hovertemplate": "%{x}<br>%{y:,.1f} GPU hours<extra></extra>"},
        ]
        layout = {"height": 300, "margin": {"l": 50, "r": 20, "t": 30, "b": 50}, "showlegend": False,
                  "xaxis": {"domain": [0, 0.46], "type": "category"},
                  "xaxis2": {"domain": [0.54, 1], "type": "category", "anchor": "y2"},
                  "yaxis": {"rangemode": "tozero", **_count_ticks(r.failures for r in chart.rows)},
                  "yaxis2": {"anchor": "x2", "rangemode": "tozero"},
                  "annotations": [
                      {"text": "<b>Failed jobs per week</b>", "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                       "xanchor": "left", "yanchor": "bottom", "showarrow": False},
                      {"text": "<b>GPU hours wasted per week</b>", "xref": "paper", "yref": "paper", "x": 0.54,
                       "y": 1, "xanchor": "left", "yanchor": "bottom", "showarrow": False}]}
        return {"data": data, "layout": layout}
    if chart.kind == "pareto":
        ranks = [f"#{r.extra['rank']}" for r in chart.rows]
        hover = [r.label[:100] for r in chart.rows]
        links = [r.link for r in chart.rows]
        data = [
            {"type": "bar", "name": "GPU hours wasted", "x": ranks, "y": [round(r.gpu_hours, 2) for r in chart.rows],
             "marker": {"color": BLUE}, "customdata": links, "hovertext": hover, "xaxis": "x", "yaxis": "y",
             "hovertemplate": "%{x} %{hovertext}<br>%{y:,.1f} GPU hours<extra></extra>"},
            {"type": "scatter", "mode": "lines+markers", "name": "Cumulative share of GPU hours", "x": ranks,
             "y": [r.extra["cumulative_share"] for r in chart.rows], "marker": {"color": RED}, "line": {"color": RED},
             "xaxis": "x", "yaxis": "y3", "hovertemplate": "top %{x}: %{y:.0f}% of all GPU hours<extra></extra>"},
            {"type": "bar", "name": "Failures", "x": ranks, "y": [r.failures for r in chart.rows],
             "marker": {"color": ORANGE}, "customdata": links, "hovertext": hover, "xaxis": "x", "yaxis": "y2",
             "hovertemplate": "%{x} %{hovertext}<br>%{y:,} failures<extra></extra>"},
        ]
        layout = {"height": 460, "margin": {"l": 60, "r": 60, "t": 30, "b": 40}, "showlegend": True,
                  "legend": {"orientation": "h", "y": -0.12},
                  "xaxis": {"type": "category", "anchor": "y2"},
                  "yaxis": {"domain": [0.42, 1], "title": {"text": "GPU hours"}, "rangemode": "tozero"},
                  "yaxis3": {"overlaying": "y", "side": "right", "range": [0, 105], "ticksuffix": "%", "dtick": 25,
                             "title": {"text": "cumulative"}},
                  "yaxis2": {"domain": [0, 0.32], "title": {"text": "Failures"}, "rangemode": "tozero",
                             **_count_ticks(r.failures for r in chart.rows)}}
        return {"data": data, "layout": layout}
    if chart.kind == "box":
        labels = [r.label for r in chart.rows]
        links = [r.link for r in chart.rows]
        if not chart.rows[0].extra:
            return _hbar_pair(chart)
        get = lambda p: [r.extra[f"p{p}_hours"] for r in chart.rows]  # noqa: E731
        data = [
            {"type": "box", "orientation": "h", "name": "Hours until failure", "y": labels, "q1": get(25),
             "median": get(50), "q3": get(75), "lowerfence": get(10), "upperfence": get(90),
             "marker": {"color": BLUE}, "xaxis": "x", "yaxis": "y", "customdata": links},
            {"type": "bar", "orientation": "h", "name": "Failures", "y": labels, "x": [r.failures for r in chart.rows],
             "text": [f"{r.failures:,}" for r in chart.rows], "textposition": "auto", "marker": {"color": ORANGE},
             "customdata": links, "xaxis": "x2", "yaxis": "y", "hovertemplate": "%{y}<br>%{x:,} failures<extra></extra>"},
            {"type": "bar", "orientation": "h", "name": "GPU hours", "y": labels,
             "x": [round(r.gpu_hours, 2) for r in chart.rows], "text": [_fmt(r.gpu_hours) for r in chart.rows],
             "textposition": "auto", "marker": {"color": BLUE}, "customdata": links, "xaxis": "x3", "yaxis": "y",
             "hovertemplate": "%{y}<br>%{x:,.1f} GPU hours<extra></extra>"},
        ]
        layout = {"height": 90 + 30 * max(len(labels), 3), "margin": {"l": 10, "r": 20, "t": 30, "b": 30},
                  "showlegend": False,
                  "xaxis": {"domain": [0, 0.56], "rangemode": "tozero", "ticksuffix": " h"},
                  "xaxis2": {"domain": [0.6, 0.78], "anchor": "y", "rangemode": "tozero",
                             **_count_ticks(r.failures for r in chart.rows)},
                  "xaxis3": {"domain": [0.82, 1], "anchor": "y", "rangemode": "tozero"},
                  "yaxis": {"autorange": "reversed", "automargin": True, "ticksuffix": " "},
                  "annotations": [
                      {"text": "<b>Hours until failure</b>", "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                       "xanchor": "left", "yanchor": "bottom", "showarrow": False},
                      {"text": "<b>Failures</b>", "xref": "paper", "yref": "paper", "x": 0.6, "y": 1,
                       "xanchor": "left", "yanchor": "bottom", "showarrow": False},
                      {"text": "<b>GPU hours</b>", "xref": "paper", "yref": "paper", "x": 0.82, "y": 1,
                       "xanchor": "left", "yanchor": "bottom", "showarrow": False}]}
        return {"data": data, "layout": layout}
    raise ValueError(f"unknown chart kind {chart.kind}")


def filter_choices() -> dict[str, list[str]]:
    """Teams and platforms for the filter selects (DISTINCT over indexed/small columns)."""
    from jobs_ingest.models import Job
    return {"teams": list(Job.objects.exclude(team="").order_by("team").values_list("team", flat=True).distinct()[:500]),
            "platforms": list(Job.objects.order_by("platform").values_list("platform", flat=True).distinct()[:100])}
