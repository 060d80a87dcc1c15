"""The weekly failure report (per ISO week, for the organisation or one team), built from querysets into
plain dataclasses that both the page (triage/views/reports.py) and the email (triage/report_email.py)
render. Every number is an aggregate computed in PostgreSQL, from the daily
rollups of triage/rollups.py (a week is whole days).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone as dt_timezone

from django.db import connection
from django.db.models import Count, DurationField, ExpressionWrapper, F, FloatField, Func, Q

from jobs_ingest.core.taxonomy import CATEGORIES, DIMENSIONS, STAGES, fault
from jobs_ingest.models import Signature
from triage import effective, nodes, rollups, services
from triage.analytics import sources
from triage.analytics.charts import CHARTS, retry_waste, weekly_trend
from triage.analytics.filters import ChartFilters
from triage.analytics.sources import HOUR, PercentileCont
from triage.models import JudgmentEvent, SignatureTriage

WEEK_RE = re.compile(r"^(\d{4})-W(\d{2})$")
STUDY_TOTAL = sum(c.study_count for c in CATEGORIES.values())  # 4,960 failed jobs
# Share of failures and of wasted GPU time per stage in the study (docs/taxonomy.md).
STUDY_STAGES = {"initialization": (30.8, 0.9), "data_preprocessing": (30.0, 1.4), "training": (15.0, 12.9),
                "evaluation": (24.3, 84.8)}


@dataclass(frozen=True)
class Week:
    year: int
    week: int

    @classmethod
    def parse(cls, text: str) -> "Week":
        match = WEEK_RE.match(text or "")
        if not match:
            raise ValueError(f"'{text}' is not an ISO week such as 2026-W47")
        year, week = int(match[1]), int(match[2])
        try:
            date.fromisocalendar(year, week, 1)
        except ValueError:
            raise ValueError(f"{year} has no ISO week {week}") from None
        return cls(year, week)

    @classmethod
    def of(cls, day: date) -> "Week":
        year, week, _ = day.isocalendar()
        return cls(year, week)

    @property
    def monday(self) -> date:
        return date.fromisocalendar(self.year, self.week, 1)

    @property
    def start(self) -> datetime:
        return datetime.combine(self.monday, datetime.min.time(), tzinfo=dt_timezone.utc)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(days=7)

    def previous(self) -> "Week":
        return Week.of(self.monday - timedelta(days=7))

    def next(self) -> "Week":
        return Week.of(self.monday + timedelta(days=7))

    def __str__(self) -> str:
        return f"{self.year}-W{self.week:02d}"

    @property
    def days(self) -> str:
        return f"{self.monday:%a %d %b} – {self.monday + timedelta(days=6):%a %d %b %Y}"


def last_complete_week(today: date) -> Week:
    return Week.of(today - timedelta(days=7))


def latest_week_with_data(today: date) -> Week:
    """The last complete week if any failed job ended in it, else the latest earlier week in which one
    did (a demo or a quiet platform should not open on an empty week); the last complete week if none."""
    from jobs_ingest.models import Failure
    week = last_complete_week(today)
    latest = (Failure.objects.filter(job__ended_at__lt=week.end).order_by("-job__ended_at")
              .values_list("job__ended_at", flat=True).first())
    return Week.of(latest.date()) if latest and latest < week.start else week


@dataclass
class Change:
    current: float
    previous: float

    @property
    def delta(self) -> float:
        return self.current - self.previous

    @property
    def pct(self) -> float | None:
        return 100.0 * self.delta / self.previous if self.previous else None

    @property
    def direction(self) -> str:
        return "up" if self.delta > 0 else "down" if self.delta < 0 else "same"


@dataclass
class Totals:
    failed_jobs: int
    gpu_hours: float  # wasted by failed jobs (all attempts)
    all_gpu_hours: float  # used by every job that ended in the week, whatever its status

    @property
    def share_lost(self) -> float | None:
        return 100.0 * self.gpu_hours / self.all_gpu_hours if self.all_gpu_hours else None


@dataclass
class SignatureLine:
    signature_id: int
    message: str
    category: str
    failures: int
    gpu_hours: float
    rank: int = 0
    previous_rank: int | None = None  # None: not among last week's failures
    issue_url: str = ""  # the bug in the tracker (the signature's, else its cluster's)

    @property
    def rank_change(self) -> str:
        if self.previous_rank is None:
            return "new this week"
        moved = self.previous_rank - self.rank
        return "same" if moved == 0 else (f"up {moved}" if moved > 0 else f"down {-moved}")


@dataclass
class Triage:
    signatures: int
    confirmed: int
    with_fix: int
    median_hours_to_triage: float | None
    triaged_count: int

    @property
    def confirmed_share(self) -> float | None:
        return 100.0 * self.confirmed / self.signatures if self.signatures else None

    @property
    def fix_share(self) -> float | None:
        return 100.0 * self.with_fix / self.signatures if self.signatures else None


@dataclass
class MixLine:
    key: str
    label: str
    failure_share: float
    gpu_share: float
    study_failure_share: float | None
    study_gpu_share: float | None = None


@dataclass
class PlatformHealth:
    """The platform's own failures this week (infrastructure dimension, fault "platform")."""
    failures: int
    gpu_hours: float
    previous_gpu_hours: float
    share_of_lost: float | None            # % of this week's lost GPU hours
    categories: list[tuple[str, str, int, float]]   # (id, name, failures, GPU hours), costliest first
    retry_gpu_hours: float                 # retries of platform faults: useful, not waste
    nodes: list                            # nodes.NodeRow, most blamed first (top 5)
    suspect_nodes: int

    @property
    def change(self) -> "Change":
        return Change(self.gpu_hours, self.previous_gpu_hours)


def _platform_health(week: Week, team: str, source, cat: list, previous_cat: list, retry) -> PlatformHealth:
    mine = [(k, n, g) for k, n, g in cat if fault(k) == "platform"]
    lost = sum(g for _, _, g in cat)
    gpu = sum(g for _, _, g in mine)
    ranked = nodes.ranking(week.start, week.end, team=team)
    return PlatformHealth(
        failures=sum(n for _, n, _ in mine), gpu_hours=gpu,
        previous_gpu_hours=sum(g for k, _, g in previous_cat if fault(k) == "platform"),
        share_of_lost=round(100.0 * gpu / lost, 1) if lost else None,
        categories=[(k, CATEGORIES[k].name if k in CATEGORIES else k, n, g) for k, n, g in mine],
        retry_gpu_hours=sum(r.gpu_hours for r in retry.rows if r.extra["fault"] == "platform"),
        nodes=ranked[:5], suspect_nodes=sum(r.suspect for r in ranked))


@dataclass
class Report:
    week: Week
    team: str
    totals: Totals
    previous: Totals
    top: list[SignatureLine]
    new: list[SignatureLine]
    new_count: int
    regressed: list[SignatureLine]
    triage: Triage
    retry_gpu_hours: float
    retry_wasted_gpu_hours: float
    previous_retry_wasted_gpu_hours: float
    mix: dict[str, list[MixLine]]
    platform: PlatformHealth | None = None
    charts: list = field(default_factory=list)

    @property
    def has_failures(self) -> bool:
        return self.totals.failed_jobs > 0

    @property
    def scope(self) -> str:
        return f"team {self.team}" if self.team else "all teams"

    @property
    def changes(self) -> dict[str, Change]:
        return {"failed_jobs": Change(self.totals.failed_jobs, self.previous.failed_jobs),
                "gpu_hours": Change(self.totals.gpu_hours, self.previous.gpu_hours),
                "share_lost": Change(self.totals.share_lost or 0, self.previous.share_lost or 0),
                "retry_waste": Change(self.retry_wasted_gpu_hours, self.previous_retry_wasted_gpu_hours)}

    @property
    def filters(self) -> ChartFilters:
        return ChartFilters.for_range(self.week.start, self.week.end, self.team)


def _totals(week: Week, team: str, source) -> Totals:
    filters = ChartFilters.for_range(week.start, week.end, team)
    n, gpu = source.totals(filters)
    return Totals(n, gpu, source.all_jobs_gpu_hours(filters))


def _lines(ranked: list[dict]) -> list[SignatureLine]:
    info = {s["pk"]: s for s in Signature.objects.filter(pk__in=[r["signature_id"] for r in ranked])
            .annotate(effective_category=effective.signature_category_expression())
            .values("pk", "masked_message", "effective_category")}
    issues = services.issue_urls(info)
    lines = []
    for i, r in enumerate(ranked, 1):
        s = info.get(r["signature_id"], {})
        category = s.get("effective_category") or "unclassified"
        lines.append(SignatureLine(r["signature_id"], " ".join((s.get("masked_message") or "").split())[:160],
                                   CATEGORIES[category].name if category in CATEGORIES else category,
                                   r["n"], (r["gpu"] or 0.0) / HOUR, rank=i,
                                   issue_url=issues.get(r["signature_id"], "")))
    return lines


def _triage(filters: ChartFilters, source) -> Triage:
    in_scope = Signature.objects.filter(pk__in=source.signature_scope(filters).values("signature_id"))
    counts = in_scope.aggregate(
        n=Count("pk"), confirmed=Count("pk", filter=Q(triage__category__gt="")),
        fixed=Count("pk", filter=Q(triage__fix_description__gt="") | Q(triage__fix_diff__gt="")
                    | Q(triage__fixed_by__isnull=False)),
        triaged=Count("pk", filter=Q(triage__triaged_at__isnull=False, first_seen__isnull=False)))
    median = None
    if counts["triaged"] and connection.vendor != "postgresql":  # SQLite default: no percentile_cont
        waits = sorted(max((t - f).total_seconds(), 0.0) for t, f in in_scope.filter(
            triage__triaged_at__isnull=False, first_seen__isnull=False).values_list("triage__triaged_at", "first_seen"))
        median = sources.bucket_percentile([(1, w) for w in waits], 0.5) / HOUR
    elif counts["triaged"]:
        wait = ExpressionWrapper(F("triage__triaged_at") - F("first_seen"), output_field=DurationField())
        seconds = Func(wait, template="GREATEST(EXTRACT(EPOCH FROM %(expressions)s), 0)", output_field=FloatField())
        value = in_scope.filter(triage__triaged_at__isnull=False, first_seen__isnull=False).aggregate(
            m=PercentileCont(seconds, 0.5))["m"]
        median = value / HOUR if value is not None else None
    return Triage(counts["n"], counts["confirmed"], counts["fixed"], median, counts["triaged"])


def _mix(filters: ChartFilters, source) -> dict[str, list[MixLine]]:
    cat = source.grouped(filters, "category")
    stage = source.grouped(filters, "stage")
    n_total = sum(n for _, n, _ in cat) or 1
    g_total = sum(g for _, _, g in cat) or 1
    dims: dict[str, list] = {}
    for key, n, g in cat:
        d = dims.setdefault(CATEGORIES[key].dimension if key in CATEGORIES else "unclassified", [0, 0.0])
        d[0] += n
        d[1] += g
    study_dim: dict[str, int] = {}
    for c in CATEGORIES.values():
        study_dim[c.dimension] = study_dim.get(c.dimension, 0) + c.study_count
    pct = lambda a, b: round(100.0 * a / b, 1)  # noqa: E731
    return {
        "dimension": [MixLine(k, DIMENSIONS.get(k, k), pct(dims.get(k, [0, 0])[0], n_total),
                              pct(dims.get(k, [0, 0])[1], g_total), pct(study_dim.get(k, 0), STUDY_TOTAL))
                      for k in DIMENSIONS],
        "category": [MixLine(k, CATEGORIES[k].name if k in CATEGORIES else k, pct(n, n_total), pct(g, g_total),
                             pct(CATEGORIES[k].study_count, STUDY_TOTAL) if k in CATEGORIES else None)
                     for k, n, g in cat],
        "stage": [MixLine(k, STAGES[k], pct(dict((s, n) for s, n, _ in stage).get(k, 0), n_total),
                          pct(dict((s, g) for s, _, g in stage).get(k, 0.0), g_total),
                          *STUDY_STAGES.get(k, (None, None))) for k in STAGES],
    }


REPORT_CHARTS = ("category", "fault", "stage", "pareto", "retry", "team")


def build(week: Week, team: str = "", *, charts: bool = True, top: int = 10, source=None) -> Report:
    """`source`: sources.ROLLUPS (the default: weeks are whole days) or sources.RAW (the benchmark's
    baseline); both give the same report."""
    source = source or (sources.ROLLUPS if rollups.supported() else sources.RAW)
    filters = ChartFilters.for_range(week.start, week.end, team)
    previous_filters = ChartFilters.for_range(week.previous().start, week.previous().end, team)
    current, previous = _totals(week, team, source), _totals(week.previous(), team, source)

    scope = source.signature_scope(filters)
    top_lines = _lines(source.ranked(scope, top))
    previous_ranks = {r["signature_id"]: i
                      for i, r in enumerate(source.ranked(source.signature_scope(previous_filters), 1000), 1)}
    for line in top_lines:
        line.previous_rank = previous_ranks.get(line.signature_id)

    first_seen_this_week = Signature.objects.filter(first_seen__gte=week.start, first_seen__lt=week.end).values("pk")
    new_scope = scope.filter(signature_id__in=first_seen_this_week)
    new_count = new_scope.values("signature_id").distinct().count()
    new_lines = _lines(source.ranked(new_scope, 10))

    regressed_ids = JudgmentEvent.objects.filter(field="state", new_value=SignatureTriage.State.REGRESSED,
                                                 at__gte=week.start, at__lt=week.end).values("signature_id")
    regressed_lines = _lines(source.ranked(scope.filter(signature_id__in=regressed_ids), 20))

    retry = retry_waste(filters, source)
    previous_retry = retry_waste(previous_filters, source)
    report = Report(week, team, current, previous, top_lines, new_lines, new_count, regressed_lines,
                    _triage(filters, source), retry.total_gpu_hours, retry.wasted_gpu_hours,
                    previous_retry.wasted_gpu_hours, _mix(filters, source))
    report.platform = _platform_health(week, team, source, source.grouped(filters, "category"),
                                       source.grouped(previous_filters, "category"), retry)
    if charts and report.has_failures:
        names = [n for n in REPORT_CHARTS if not (team and n == "team")]
        report.charts = [retry if n == "retry" else CHARTS[n](filters, source=source) for n in names]
        trend_filters = ChartFilters.for_range(week.start - timedelta(weeks=7), week.end, team)
        report.charts.insert(0, weekly_trend(trend_filters, source))
        report.charts[0].title = "Last 8 weeks"
    return report


def csv_rows(report: Report) -> tuple[list[str], list[list]]:
    """The report as one flat table: section, item, label, metric, value."""
    rows: list[list] = []
    t, p = report.totals, report.previous
    for metric, cur, prev in (("failed_jobs", t.failed_jobs, p.failed_jobs),
                              ("gpu_hours_wasted", round(t.gpu_hours, 3), round(p.gpu_hours, 3)),
                              ("gpu_hours_all_jobs", round(t.all_gpu_hours, 3), round(p.all_gpu_hours, 3)),
                              ("share_of_gpu_time_lost_pct", _r(t.share_lost), _r(p.share_lost)),
                              ("retry_gpu_hours_cannot_help", round(report.retry_wasted_gpu_hours, 3),
                               round(report.previous_retry_wasted_gpu_hours, 3))):
        rows.append(["totals", metric, "this week", metric, cur])
        rows.append(["totals", metric, "previous week", metric, prev])
    for section, lines in (("top_signatures", report.top), ("new_signatures", report.new),
                           ("regressed_signatures", report.regressed)):
        for line in lines:
            rows.append([section, line.signature_id, line.message, "failures", line.failures])
            rows.append([section, line.signature_id, line.message, "gpu_hours", round(line.gpu_hours, 3)])
            if section == "top_signatures":
                rows.append([section, line.signature_id, line.message, "rank", line.rank])
                rows.append([section, line.signature_id, line.message, "previous_rank", line.previous_rank or ""])
    ph = report.platform
    if ph is not None:
        for metric, value in (("failures", ph.failures), ("gpu_hours", round(ph.gpu_hours, 3)),
                              ("previous_gpu_hours", round(ph.previous_gpu_hours, 3)),
                              ("share_of_lost_gpu_hours_pct", _r(ph.share_of_lost)),
                              ("retry_gpu_hours_useful", round(ph.retry_gpu_hours, 3)),
                              ("suspect_nodes", ph.suspect_nodes)):
            rows.append(["platform_health", metric, "", metric, value])
        for key, name, n, gpu in ph.categories:
            rows.append(["platform_health", key, name, "failures", n])
            rows.append(["platform_health", key, name, "gpu_hours", round(gpu, 3)])
        for node in ph.nodes:
            rows.append(["platform_nodes", node.host, "suspect" if node.suspect else "", "failures", node.failures])
            rows.append(["platform_nodes", node.host, "suspect" if node.suspect else "", "gpu_hours",
                         round(node.gpu_hours, 3)])
    tr = report.triage
    for metric, value in (("signatures", tr.signatures), ("confirmed_share_pct", _r(tr.confirmed_share)),
                          ("median_hours_to_triage", _r(tr.median_hours_to_triage)),
                          ("fix_recorded_share_pct", _r(tr.fix_share))):
        rows.append(["triage", metric, "", metric, value])
    for kind, lines in report.mix.items():
        for m in lines:
            rows.append([f"mix_{kind}", m.key, m.label, "failure_share_pct", m.failure_share])
            rows.append([f"mix_{kind}", m.key, m.label, "gpu_share_pct", m.gpu_share])
            if m.study_failure_share is not None:
                rows.append([f"mix_{kind}", m.key, m.label, "study_failure_share_pct", m.study_failure_share])
            if m.study_gpu_share is not None:
                rows.append([f"mix_{kind}", m.key, m.label, "study_gpu_share_pct", m.study_gpu_share])
    return ["section", "item", "label", "metric", "value"], rows


def _r(value):
    return "" if value is None else round(value, 2)
