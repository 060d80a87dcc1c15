"""Read queries for the pages (the views stay thin)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import (Case, CharField, Count, Exists, F, Max, Min, OuterRef, Q, QuerySet, Sum, Value,
                              When)
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from jobs_ingest.core.taxonomy import CATEGORIES, DIMENSIONS, ROOT_CAUSES, STAGES
from jobs_ingest.jobspec import parse_time
from jobs_ingest.models import Failure, Signature
from triage import effective
from triage.models import SignatureTriage

State = SignatureTriage.State
OPEN = "open"  # the default queue: new and regressed signatures
STATE_FILTERS = {OPEN: "Open (new + regressed)", **dict(State.choices), "all": "All"}
ROOT_CAUSE_FILTERS = {**ROOT_CAUSES, effective.NOT_RECORDED: "Not recorded yet"}


@dataclass
class QueueFilters:
    state: str = OPEN
    category: str = ""
    dimension: str = ""
    stage: str = ""
    team: str = ""
    submitter: str = ""
    platform: str = ""
    root_cause: str = ""
    since: datetime | None = None
    until: datetime | None = None
    until_is_date: bool = False  # `until` given as a date: that whole day counts
    new_days: int | None = None
    owner: str = ""  # "me": assigned to the viewer, or to a team the viewer belongs to

    @classmethod
    def from_query(cls, query) -> "QueueFilters":
        """Filters from the URL; unknown or malformed values are ignored, never an error page."""
        f = cls()
        f.state = query.get("state") if query.get("state") in STATE_FILTERS else OPEN
        f.category = query.get("category") if query.get("category") in CATEGORIES else ""
        f.dimension = query.get("dimension") if query.get("dimension") in DIMENSIONS else ""
        f.stage = query.get("stage") if query.get("stage") in STAGES else ""
        f.root_cause = query.get("root_cause") if query.get("root_cause") in ROOT_CAUSE_FILTERS else ""
        for name in ("team", "submitter", "platform"):
            setattr(f, name, (query.get(name) or "").strip()[:150])
        for name in ("since", "until"):
            try:
                setattr(f, name, parse_time(query.get(name)) if query.get(name) else None)
            except ValueError:
                continue
            if name == "until" and f.until and len(query.get(name).strip()) == 10:
                f.until_is_date = True
        days = query.get("new_days") or ""
        f.new_days = int(days) if days.isdigit() and 0 < int(days) <= 3650 else None
        f.owner = "me" if query.get("owner") == "me" else ""
        return f

    @property
    def root_cause_choices(self) -> dict[str, str]:
        return ROOT_CAUSE_FILTERS

    @property
    def until_exclusive(self) -> datetime | None:
        return self.until + timedelta(days=1) if self.until and self.until_is_date else self.until


def assigned_to_q(user, prefix: str = "triage__") -> Q:
    """Owned by `user` or by one of the user's teams."""
    from triage.models import Team
    return (Q(**{f"{prefix}owner_user": user})
            | Q(**{f"{prefix}owner_team__in": Team.objects.filter(members=user).values("pk")}))


def queue(filters: QueueFilters, user=None) -> QuerySet:
    # A signature merged into another (or emptied by a split) has no failures left: not in the queue.
    qs = Signature.objects.select_related("triage", "triage__owner_user", "triage__owner_team").filter(failure_count__gt=0)
    if filters.owner == "me" and user is not None and user.is_authenticated:
        from triage.models import ClusterTriage
        mine = ClusterTriage.objects.filter(assigned_to_q(user, prefix="")).values("cluster")
        qs = qs.filter(assigned_to_q(user) | Q(cluster__in=mine))
    if filters.state == OPEN:
        qs = qs.filter(Q(triage__isnull=True) | Q(triage__state__in=[State.NEW, State.REGRESSED]))
    elif filters.state == State.NEW:
        qs = qs.filter(Q(triage__isnull=True) | Q(triage__state=State.NEW))
    elif filters.state != "all":
        qs = qs.filter(triage__state=filters.state)
    if filters.category:
        qs = qs.filter(effective.signature_category_q([filters.category]))
    if filters.dimension:
        in_dimension = [c.id for c in CATEGORIES.values() if c.dimension == filters.dimension]
        qs = qs.filter(effective.signature_category_q(in_dimension))
    job_filters = {f"job__{name}": getattr(filters, name) for name in ("submitter", "platform")
                   if getattr(filters, name)}
    if filters.team:
        if connection.vendor == "postgresql":  # JSONB containment on the signature row itself
            qs = qs.filter(teams__contains=[filters.team])
        else:
            job_filters["job__team"] = filters.team
    if filters.stage:
        job_filters["stage"] = filters.stage
    # The time range selects failures by when their job ended (as the charts do); the signature's
    # first/last seen only narrow the candidates cheaply first.
    if filters.since:
        qs = qs.filter(last_seen__gte=filters.since)
        job_filters["job__ended_at__gte"] = filters.since
    if filters.until_exclusive:
        qs = qs.filter(first_seen__lt=filters.until_exclusive)
        job_filters["job__ended_at__lt"] = filters.until_exclusive
    failure_q = effective.root_cause_q(filters.root_cause) if filters.root_cause else Q()
    if job_filters or filters.root_cause:
        qs = qs.filter(Exists(Failure.objects.filter(failure_q, signature=OuterRef("pk"), **job_filters)))
    if filters.new_days:
        qs = qs.filter(first_seen__gte=timezone.now() - timedelta(days=filters.new_days))
    return qs.order_by("-gpu_seconds", "-pk")


# A signature without a cluster stands alone in the cluster view, under a key of its own.
SOLO = "sig-"


def cluster_key():
    return Case(When(cluster="", then=Concat(Value(SOLO), Cast("pk", CharField()))), default=F("cluster"),
                output_field=CharField())


def cluster_queue(filters: QueueFilters, user=None) -> QuerySet:
    """The queue grouped by cluster: one row per cluster of the signatures the filters keep, with their
    counts, failures, GPU time and first/last seen, by GPU time."""
    return (queue(filters, user).order_by().annotate(key=cluster_key()).values("key")
            .annotate(signatures=Count("pk"), failures=Sum("failure_count"), gpu_seconds=Sum("gpu_seconds"),
                      first_seen=Min("first_seen"), last_seen=Max("last_seen"))
            .order_by("-gpu_seconds", "key"))


def cluster_members(keys: list[str], filters: QueueFilters, user=None) -> dict[str, list[Signature]]:
    """The signatures of each cluster row of a page (those the filters keep), by GPU time."""
    solo = [int(k[len(SOLO):]) for k in keys if k.startswith(SOLO) and k[len(SOLO):].isdigit()]
    clusters = [k for k in keys if not k.startswith(SOLO)]
    members: dict[str, list[Signature]] = {k: [] for k in keys}
    for signature in queue(filters, user).filter(Q(cluster__in=clusters) | Q(pk__in=solo, cluster="")):
        members.setdefault(signature.cluster or f"{SOLO}{signature.pk}", []).append(signature)
    return members
