"""The filters every chart shares, kept in the URL."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone as dt_timezone
from urllib.parse import urlencode

from django.urls import reverse

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.jobspec import parse_time


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
    def whole_days(self) -> bool:
        """True when the range starts and ends at UTC midnight, so daily rollups answer it exactly."""
        return all(moment is None or moment.astimezone(dt_timezone.utc).timetz() == time(0, tzinfo=dt_timezone.utc)
                   for moment in (self.since, self.until))

    def queue_url(self, **extra) -> str:
        """The triage queue showing the failures behind a bar: these filters plus the bar's own."""
        params = {"state": "all", **self.params(), **{k: v for k, v in extra.items() if v}}
        return reverse("queue") + "?" + urlencode(params)
