"""The charts: each a `Chart` of rows (key, label, failures, GPU hours, link to the matching failures in
the queue) built from a source's numbers. CHARTS names every chart of the analytics page."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.urls import reverse

from jobs_ingest.core.taxonomy import CATEGORIES, DIMENSIONS, ROOT_CAUSES, STAGES, fault
from jobs_ingest.models import Job, Signature
from triage import effective
from triage.analytics.filters import ChartFilters
from triage.analytics.sources import HOUR, PERCENTILES, source_for


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


def percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def totals(filters: ChartFilters, source=None) -> tuple[int, float]:
    return (source or source_for(filters)).totals(filters)


def _bars(name, title, caption, grouped, label, link, empty, shown=None) -> Chart:
    """`shown`: the first rows of `grouped` when not all are drawn; shares stay shares of the whole."""
    rows = [Row(key, label(key), n, gpu, link(key)) for key, n, gpu in (grouped if shown is None else shown)]
    chart = Chart(name, title, caption, "bars", rows, empty=empty,
                  extra_columns=[("failure_share", "failure_share_pct"), ("gpu_share", "gpu_share_pct")])
    chart.total_failures = sum(n for _, n, _ in grouped)
    chart.total_gpu_hours = sum(g for _, _, g in grouped)
    for r in rows:
        r.extra = {"failure_share": round(percent(r.failures, chart.total_failures), 1),
                   "gpu_share": round(percent(r.gpu_hours, chart.total_gpu_hours), 1)}
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
                 lambda k: filters.queue_url(root_cause=k or effective.NOT_RECORDED), NO_MATCH)



def _by_job_field(name, title, caption, filters, field_name, source, limit=None) -> Chart:
    grouped = (source or source_for(filters)).grouped(filters, field_name)
    return _bars(name, title, caption + (f" Top {limit} of {len(grouped)} by GPU hours."
                                         if limit and len(grouped) > limit else ""),
                 grouped, lambda k: k or f"(no {field_name})",
                 lambda k: filters.queue_url(**{field_name: k}) if k else "", NO_MATCH,
                 shown=grouped[:limit] if limit else None)


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
                        {"rank": i, "cumulative_share": round(percent(cumulative, total_gpu), 1)}))
    chart = Chart("pareto", f"Top {top} signatures by GPU hours (Pareto)",
                  "Each bar is one recurring error; the line shows how much of all wasted GPU time the top "
                  "signatures cover together, so fixing the first few bars saves the most.",
                  "pareto", rows, empty=NO_MATCH,
                  extra_columns=[("rank", "rank"), ("cumulative_share", "cumulative_gpu_share_pct")])
    chart.total_failures, chart.total_gpu_hours = n_total, total_gpu
    return chart


def retry_waste(filters: ChartFilters, source=None) -> Chart:
    """Retries of program failures are waste (the study, section 7.2: the job fails the same way again until
    its code or data changes); retries of platform faults are what they are for (infrastructure.md)."""
    out = []
    for key, n, gpu in (source or source_for(filters)).retries(filters):
        advice = CATEGORIES[key].retry_advice if key in CATEGORIES else ""
        out.append(Row(key, CATEGORIES[key].name if key in CATEGORIES else key, n, gpu,
                       filters.queue_url(category=key),
                       {"retry_advice": advice, "fault": fault(key), "cannot_help": fault(key) == "user"}))
    wasted = sum(r.gpu_hours for r in out if r.extra["cannot_help"])
    chart = Chart("retry", "GPU hours spent on retries",
                  f"Retries (attempts after the first) by category. Red bars are program failures, where a retry "
                  f"fails the same way until the code or data changes: {wasted:,.1f} GPU hours wasted in this view. "
                  f"Retries of platform faults (infrastructure) are useful and not counted as waste.",
                  "retry", out, empty="No failed job in this view was retried.",
                  extra_columns=[("retry_advice", "retry_advice"), ("fault", "fault"),
                                 ("cannot_help", "retry_cannot_help")])
    chart.total_failures = sum(r.failures for r in out)  # here: number of retry attempts
    chart.total_gpu_hours = sum(r.gpu_hours for r in out)
    chart.wasted_gpu_hours = wasted
    return chart


def by_fault(filters: ChartFilters, source=None) -> Chart:
    """Whose failure: the program's (user) or the platform's, folded from the effective categories."""
    per_fault: dict[str, list] = {}
    for key, n, gpu in (source or source_for(filters)).grouped(filters, "category"):
        acc = per_fault.setdefault(fault(key), [0, 0.0])
        acc[0] += n
        acc[1] += gpu
    grouped = sorted(((k, v[0], v[1]) for k, v in per_fault.items()), key=lambda r: (-r[2], -r[1], r[0]))
    return _bars("fault", "Whose failure",
                 "GPU hours lost to program failures (the user's code, data or environment) and to the "
                 "platform's faults (GPU hardware, interconnect, nodes, network, storage): the platform team "
                 "owns the second bar.",
                 grouped, lambda k: {"user": "Program (user)", "platform": "Platform"}.get(k, k),
                 lambda k: filters.queue_url(dimension="infrastructure") if k == "platform" else "", NO_MATCH)


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
    "fault": by_fault,
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



def filter_choices() -> dict[str, list[str]]:
    """Teams and platforms for the filter selects (DISTINCT over indexed/small columns)."""
    return {"teams": list(Job.objects.exclude(team="").order_by("team").values_list("team", flat=True).distinct()[:500]),
            "platforms": list(Job.objects.order_by("platform").values_list("platform", flat=True).distinct()[:100])}
