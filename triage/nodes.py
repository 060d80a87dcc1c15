"""Faulty nodes (#15.4): which hosts the platform's failures point at, ranked over a window, each node's
history, and the threshold that marks a node suspect (docs/infrastructure.md).

A platform failure (fault "platform", the infrastructure dimension) blames the hosts its own text names
(Failure.suspect_nodes: NCCL, Xid and scheduler lines); when the text names none, the nodes the scheduler
gave the job (Job.nodes). Program failures blame no node: a CUDA device-side assert on node 7 says nothing
about node 7. GPU hours lost are split evenly over the blamed nodes, so the column adds up to the total.

Host lists are JSON arrays, which SQLite (the zero-setup database) cannot search inside: failures are
read for the window (by time, indexed) and matched here, as the queue's sparklines do.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.dispatch import Signal
from django.utils import timezone

from jobs_ingest.models import Failure

# Sent once per node each time the threshold is crossed by a new failure: host, failures, jobs, window.
node_marked_suspect = Signal()

HISTORY_DAYS = 90
WINDOWS = {"1": 1, "7": 7, "30": 30}  # days the Nodes page offers


@dataclass
class NodeRow:
    host: str
    failures: int = 0
    jobs: set = field(default_factory=set)
    gpu_hours: float = 0.0
    last_seen: datetime | None = None
    categories: Counter = field(default_factory=Counter)
    suspect: bool = False

    @property
    def job_count(self) -> int:
        return len(self.jobs)

    @property
    def top_categories(self) -> list[tuple[str, int]]:
        return self.categories.most_common()


def blamed(failure: Failure) -> list[str]:
    """The hosts a platform failure blames (its text's, else its job's); none for a program failure."""
    if failure.fault != "platform":
        return []
    return list(failure.suspect_nodes or failure.job.nodes or [])


def when(failure: Failure) -> datetime:
    return failure.job.ended_at or failure.job.received_at


def _ended_since(start: datetime) -> Q:
    return Q(job__ended_at__gte=start) | Q(job__ended_at__isnull=True, job__received_at__gte=start)


def _platform_failures(since: datetime, until: datetime | None = None, team: str = ""):
    qs = Failure.objects.filter(_ended_since(since), fault="platform")
    if until is not None:
        qs = qs.filter(Q(job__ended_at__lt=until) | Q(job__ended_at__isnull=True, job__received_at__lt=until))
    if team:
        qs = qs.filter(job__team=team)
    return qs.select_related("job").only("pk", "fault", "category", "gpu_seconds", "suspect_nodes", "job__id",
                                         "job__nodes", "job__ended_at", "job__received_at")


def threshold() -> tuple[int, int, timedelta]:
    return (settings.JOBTRIAGE_SUSPECT_NODE_FAILURES, settings.JOBTRIAGE_SUSPECT_NODE_JOBS,
            timedelta(hours=settings.JOBTRIAGE_SUSPECT_NODE_WINDOW_HOURS))


def is_suspect(failures: int, jobs: int) -> bool:
    min_failures, min_jobs, _ = threshold()
    return failures >= min_failures and jobs >= min_jobs


def ranking(since: datetime, until: datetime | None = None, *, team: str = "",
            now: datetime | None = None) -> list[NodeRow]:
    """Nodes blamed by platform failures between `since` and `until` (of one team's jobs, if given), most
    failures first (then GPU hours lost); each says whether it is suspect now (the threshold over its own,
    shorter window, whoever's jobs)."""
    rows: dict[str, NodeRow] = {}
    for failure in _platform_failures(since, until, team):
        hosts = blamed(failure)
        for host in hosts:
            row = rows.setdefault(host, NodeRow(host))
            row.failures += 1
            row.jobs.add(failure.job.pk)
            row.gpu_hours += failure.gpu_seconds / 3600 / len(hosts)
            row.categories[failure.category] += 1
            seen = when(failure)
            row.last_seen = max(row.last_seen, seen) if row.last_seen else seen
    for host, (failures, jobs) in suspect_counts(set(rows), now).items():
        rows[host].suspect = is_suspect(failures, jobs)
    return sorted(rows.values(), key=lambda r: (-r.failures, -r.gpu_hours, r.host))


def last_blame(before: datetime) -> tuple[datetime, str] | None:
    """When the newest platform failure that blames a node ended, and its first node, of those within HISTORY_DAYS
    before `before`: what an empty window points to."""
    for failure in _platform_failures(before - timedelta(days=HISTORY_DAYS), before).order_by(
            "-job__ended_at", "-job__received_at")[:200]:
        if hosts := blamed(failure):
            return when(failure), hosts[0]
    return None


def suspect_counts(hosts: set[str], now: datetime | None = None) -> dict[str, tuple[int, int]]:
    """(platform failures, distinct jobs) of each host within the suspect window."""
    now = now or timezone.now()
    _, _, window = threshold()
    counts: dict[str, tuple[int, set]] = {h: (0, set()) for h in hosts}
    for failure in _platform_failures(now - window):
        for host in blamed(failure):
            if host in counts:
                n, jobs = counts[host]
                jobs.add(failure.job.pk)
                counts[host] = (n + 1, jobs)
    return {h: (n, len(jobs)) for h, (n, jobs) in counts.items()}


def history(host: str, now: datetime | None = None) -> list[Failure]:
    """Every failure on this node in the last HISTORY_DAYS, newest first: the platform failures that blame
    it and the program failures of jobs that ran on it (context: a bad node also breaks programs)."""
    now = now or timezone.now()
    failures = (Failure.objects.filter(_ended_since(now - timedelta(days=HISTORY_DAYS)))
                .select_related("job", "signature").order_by("-pk"))
    found = [f for f in failures if host in blamed(f) or host in (f.job.nodes or [])]
    return sorted(found, key=when, reverse=True)


def check_suspects(failures: list[Failure], now: datetime | None = None) -> list[tuple[str, int, int]]:
    """After a batch: the hosts these failures blame that the threshold now marks suspect; the signal is
    sent for each (alerts deliver at most once per node and alert window)."""
    hosts = {h for f in failures for h in blamed(f)}
    if not hosts:
        return []
    _, _, window = threshold()
    marked = [(h, n, jobs) for h, (n, jobs) in sorted(suspect_counts(hosts, now).items()) if is_suspect(n, jobs)]
    for host, n, jobs in marked:
        node_marked_suspect.send(sender=Failure, host=host, failures=n, jobs=jobs, window=window)
    return marked
