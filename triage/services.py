"""Triage actions. Each writes PostgreSQL first, records history, then queues the search-index update
on commit, so a slow or down Elasticsearch never loses a click."""
from __future__ import annotations

from datetime import timedelta
from typing import Iterable

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from jobs_ingest.core.taxonomy import CATEGORIES, ROOT_CAUSES
from jobs_ingest.jobspec import SUCCESS_STATUSES
from jobs_ingest.models import Failure, Job, Signature
from jobs_ingest.search.tasks import enqueue_indexing
from triage import effective
from triage.diffs import parse_diff
from triage.models import FailureOverride, JudgmentEvent, SignatureTriage

State = SignatureTriage.State
JUDGED_FIELDS = ("category", "root_cause", "notes", "fix_description", "fix_diff")


class JudgmentError(ValueError):
    """A judgment that cannot be recorded as given (unknown category, invalid diff, ...)."""


def triage_of(signature: Signature, *, lock: bool = False) -> SignatureTriage:
    triage, _ = SignatureTriage.objects.get_or_create(signature=signature)
    if lock:
        triage = SignatureTriage.objects.select_for_update().get(pk=triage.pk)
    return triage


def _validate(changes: dict) -> None:
    if changes.get("category") and changes["category"] not in CATEGORIES:
        raise JudgmentError(f"unknown category '{changes['category']}'")
    if changes.get("root_cause") and changes["root_cause"] not in ROOT_CAUSES:
        raise JudgmentError(f"unknown root cause '{changes['root_cause']}'")
    if changes.get("fix_diff"):
        parse_diff(changes["fix_diff"])  # DiffError is a ValueError with a clear message


def _record(signature_id, user, field, old, new, failure_id=None) -> None:
    JudgmentEvent.objects.create(signature_id=signature_id, failure_id=failure_id, user=user, field=field,
                                 old_value="" if old is None else str(old), new_value="" if new is None else str(new))


def _set_state(triage: SignatureTriage, state: str, user) -> None:
    if triage.state != state:
        _record(triage.signature_id, user, "state", triage.state, state)
        triage.state = state
        if state == State.RESOLVED:
            triage.resolved_at = timezone.now()


def _save_judgment(triage: SignatureTriage, user) -> None:
    """Stamp who judged and when, save, and re-index the signature once the transaction commits."""
    triage.triaged_at = triage.triaged_at or timezone.now()
    triage.updated_by = user
    triage.save()
    push_signatures_on_commit([triage.signature_id])


def judge(signature: Signature, user, *, from_cluster: bool = False, **changes) -> SignatureTriage:
    """Confirm or correct the category, set root cause, notes, fix description and diff. Empty
    strings clear a field; absent keys are left alone. A judged new/regressed signature becomes
    triaged; one with a fix becomes resolved."""
    unknown = set(changes) - set(JUDGED_FIELDS) - {"state"}
    if unknown:
        raise JudgmentError(f"unknown fields {sorted(unknown)}")
    _validate(changes)
    with transaction.atomic():
        # The signature row first, as the analysis transaction does: no deadlock with a regression, and
        # the analytics rollups recount a failure analysed meanwhile (triage/rollups.py).
        list(Signature.objects.select_for_update(no_key=True).filter(pk=signature.pk).values_list("pk"))
        triage = triage_of(signature, lock=True)
        changed = False
        for field in JUDGED_FIELDS:
            if field in changes and changes[field] is not None and getattr(triage, field) != changes[field]:
                _record(signature.pk, user, field, getattr(triage, field), changes[field])
                setattr(triage, field, changes[field])
                changed = True
        state = changes.get("state")
        if state:
            if state not in State.values:
                raise JudgmentError(f"unknown state '{state}'")
            _set_state(triage, state, user)
        elif changed:
            if (triage.fix_diff or triage.fix_description) and triage.state != State.IGNORED:
                _set_state(triage, State.RESOLVED, user)
            elif triage.state in (State.NEW, State.REGRESSED):
                _set_state(triage, State.TRIAGED, user)
        if changed or state:
            # A judgment made on the signature itself overrides its cluster's from now on.
            triage.judged_on_cluster = from_cluster
            _save_judgment(triage, user)
    return triage


def confirm(signatures: Iterable[Signature], user) -> int:
    """Confirm the automatic category of each signature (bulk action of the queue)."""
    count = 0
    for signature in signatures:
        triage = triage_of(signature)
        category = effective.category(None, triage, signature.category)
        move_on = triage.state in (State.NEW, State.REGRESSED)
        if triage.category != category or move_on:
            judge(signature, user, category=category, state=State.TRIAGED if move_on else None)
            count += 1
    return count


def link_fixed_by(signature: Signature, user, job: Job | None) -> SignatureTriage:
    """Link the job that ran the fixed version (or unlink with None); linking resolves."""
    with transaction.atomic():
        triage = triage_of(signature, lock=True)
        old = triage.fixed_by
        if old == job:
            return triage
        _record(signature.pk, user, "fixed_by", old.pk if old else "", job.pk if job else "")
        triage.fixed_by = job
        if job is not None:
            _set_state(triage, State.RESOLVED, user)
        elif triage.state == State.RESOLVED and not (triage.fix_diff or triage.fix_description):
            _set_state(triage, State.TRIAGED, user)
        _save_judgment(triage, user)
    return triage


def override_failure(failure: Failure, user, *, category: str = "", root_cause: str = "", notes: str = "") -> None:
    """Per-job exception to the signature's judgment; all blank removes the override."""
    _validate({"category": category, "root_cause": root_cause})
    with transaction.atomic():
        current = FailureOverride.objects.select_for_update().filter(failure=failure).first()
        old = {f: getattr(current, f) if current else "" for f in ("category", "root_cause", "notes")}
        new = {"category": category, "root_cause": root_cause, "notes": notes}
        for field in new:
            if old[field] != new[field]:
                _record(failure.signature_id, user, field, old[field], new[field], failure_id=failure.pk)
        if any(new.values()):
            FailureOverride.objects.update_or_create(failure=failure, defaults=new)
        elif current:
            current.delete()
        transaction.on_commit(lambda: _push_failures([failure.pk]))


def find_job(reference: str) -> Job | None:
    """A job from what a person pastes: our id, our URL (/jobs/<id>/), or platform:external_id."""
    reference = reference.strip()
    if not reference:
        return None
    if "/jobs/" in reference:
        tail = reference.split("/jobs/", 1)[1].strip("/").split("/")[0]
        return Job.objects.filter(pk=int(tail)).first() if tail.isdigit() else None
    if ":" in reference:
        platform, external_id = reference.split(":", 1)
        return Job.objects.filter(platform=platform.strip(), external_id=external_id.strip()).first()
    if reference.isdigit():
        return Job.objects.filter(pk=int(reference)).first()
    return Job.objects.filter(external_id=reference).order_by("-pk").first()


def fixed_by_candidates(signature: Signature, limit: int = 8) -> list[tuple[Job, str]]:
    """Later successful jobs that probably ran the fix, best first, each with why it was suggested:
    same submitter and job name first, then the same job name in the same team. A candidate ended after
    the latest failure of its (owner, name) pair: a success before that failure did not fix it. Looks at
    the signature's 20 latest failures; each lookup is one indexed range scan per (owner, name) pair."""
    failures = list(signature.failures.select_related("job").order_by("-pk")[:20])
    if not failures:
        return []
    failed_ids = {f.job_id for f in failures}
    later = Job.objects.filter(status__in=SUCCESS_STATUSES).exclude(pk__in=failed_ids).order_by("ended_at")
    found: dict[int, tuple[int, Job, str]] = {}
    for rank, field, why in ((0, "submitter", "same submitter and job name, succeeded later"),
                             (1, "team", "same team and job name, succeeded later")):
        last_failed: dict[tuple[str, str], object] = {}
        for f in failures:
            key = (getattr(f.job, field), f.job.name)
            when = _ended(f.job)
            if key[0] and key[1] and when and (key not in last_failed or when > last_failed[key]):
                last_failed[key] = when
        for (owner, name), when in list(last_failed.items())[:10]:
            for job in later.filter(**{field: owner, "name": name, "ended_at__gt": when})[:limit]:
                found.setdefault(job.pk, (rank, job, why))
    ranked = sorted(found.values(), key=lambda r: (r[0], r[1].ended_at))
    return [(job, why) for _, job, why in ranked[:limit]]


def _ended(job: Job):
    return job.ended_at or job.received_at


def fixed_by_warnings(signature: Signature, job: Job) -> list[str]:
    """Why `job` is probably not the run of the fixed version: it failed itself, or it ended before the
    signature's latest failure (the fix would have come after the last time it failed)."""
    warnings = []
    if job.status not in SUCCESS_STATUSES:
        warnings.append(f"job {job} did not succeed (status {job.status or 'unknown'})")
    last = (signature.failures.select_related("job").exclude(job=job)
            .order_by(F("job__ended_at").desc(nulls_last=True), "-pk").first())
    if last and _ended(job) and _ended(last.job) and _ended(job) < _ended(last.job):
        warnings.append(f"job {job} ended {_ended(job):%Y-%m-%d %H:%M}, before the latest failure "
                        f"({last.job}, {_ended(last.job):%Y-%m-%d %H:%M})")
    return warnings


def mark_regression(failure: Failure, signature: Signature, new_to_signature: bool) -> None:
    """A resolved signature that fails again after it was resolved has regressed."""
    triage = SignatureTriage.objects.filter(signature=signature).first()
    if triage is None or triage.state != State.RESOLVED or not new_to_signature:
        return
    seen = failure.job.ended_at or failure.job.received_at
    if triage.resolved_at and seen and seen < triage.resolved_at:
        return  # an old failure arriving late is not a regression
    _set_state(triage, State.REGRESSED, None)
    triage.save(update_fields=["state", "updated_at"])
    push_signatures_on_commit([signature.pk])


def push_signatures_on_commit(signature_ids: list[int]) -> None:
    transaction.on_commit(lambda: _push_signatures(signature_ids))


def _push_signatures(signature_ids: list[int]) -> None:
    from triage.tasks import push_signatures
    try:
        push_signatures.delay(signature_ids)
    except Exception:  # broker down: the judgment is stored; mark its failures for requeue_pending
        Failure.objects.filter(signature_id__in=signature_ids).update(indexed_at=None)


def _push_failures(failure_ids: list[int]) -> None:
    Failure.objects.filter(pk__in=failure_ids).update(indexed_at=None)
    enqueue_indexing(failure_ids)


# ------------------------------------------------------------------ issue links and owners (#17)

def set_issue_url(signature: Signature, user, url: str) -> SignatureTriage:
    """Attach (or with "" remove) the bug in the issue tracker; the caller has checked the URL."""
    with transaction.atomic():
        triage = triage_of(signature, lock=True)
        if triage.issue_url != url:
            _record(signature.pk, user, "issue_url", triage.issue_url, url)
            triage.issue_url = url
            triage.updated_by = user
            triage.save()
            push_signatures_on_commit([signature.pk])
    return triage


def owner_text(owner_user, owner_team) -> str:
    return (owner_user.get_username() if owner_user else "") + (f" / team {owner_team.name}" if owner_team else "")


def assign(signature: Signature, user, owner_user=None, owner_team=None) -> SignatureTriage:
    """Make a person and/or a team own the signature (both None: nobody)."""
    with transaction.atomic():
        triage = triage_of(signature, lock=True)
        old = owner_text(triage.owner_user, triage.owner_team)
        new = owner_text(owner_user, owner_team)
        if old != new:
            _record(signature.pk, user, "owner", old, new)
            triage.owner_user, triage.owner_team = owner_user, owner_team
            triage.updated_by = user
            triage.save()
    return triage


def auto_assign(signature: Signature, team_name: str) -> None:
    """Optional (settings.JOBTRIAGE_AUTO_ASSIGN_BY_TEAM): a signature nobody owns goes to the failing
    job's team, when that team is known here. Never replaces an owner someone chose."""
    from triage.models import Team
    team = Team.objects.filter(name=team_name).first() if team_name else None
    if team is None:
        return
    triage = triage_of(signature)
    if triage.owner_user_id is None and triage.owner_team_id is None:
        _record(signature.pk, None, "owner", "", owner_text(None, team))
        SignatureTriage.objects.filter(pk=triage.pk).update(owner_team=team)


def issue_urls(signature_ids) -> dict[int, str]:
    """Each signature's issue link, else its cluster's (for search hits and reports: one query each)."""
    from triage.models import ClusterTriage
    rows = list(Signature.objects.filter(pk__in=list(signature_ids)).values_list("pk", "cluster", "triage__issue_url"))
    clusters = {c for _, c, url in rows if c and not url}
    by_cluster = dict(ClusterTriage.objects.filter(cluster__in=clusters).exclude(issue_url="")
                      .values_list("cluster", "issue_url")) if clusters else {}
    return {pk: url or by_cluster.get(cluster, "") for pk, cluster, url in rows if url or by_cluster.get(cluster)}


# ------------------------------------------------------------------ clusters (#17)

CLUSTER_FIELDS = ("category", "root_cause", "notes", "fix_description")


def follows_cluster(triage: SignatureTriage | None) -> bool:
    """A signature takes its cluster's judgment until someone judges the signature itself."""
    return (triage is None or triage.judged_on_cluster
            or not any(getattr(triage, f) for f in JUDGED_FIELDS))


def cluster_triage(cluster: str):
    from triage.models import ClusterTriage
    return ClusterTriage.objects.get_or_create(cluster=cluster)[0]


def judge_cluster(cluster: str, user, **changes) -> tuple[int, int]:
    """One judgment for a whole cluster: stored on the cluster and copied to each of its signatures that
    has no judgment of its own (those keep theirs: they override). Returns (applied, kept)."""
    from triage.models import ClusterTriage
    unknown = set(changes) - set(CLUSTER_FIELDS)
    if unknown:
        raise JudgmentError(f"unknown fields {sorted(unknown)}")
    _validate(changes)
    applied = kept = 0
    with transaction.atomic():
        ct, _ = ClusterTriage.objects.select_for_update().get_or_create(cluster=cluster)
        for field, value in changes.items():
            setattr(ct, field, value)
        ct.updated_by = user
        ct.save()
        for signature in Signature.objects.filter(cluster=cluster).select_related("triage").order_by("pk"):
            if follows_cluster(getattr(signature, "triage", None)):
                judge(signature, user, from_cluster=True, **changes)
                applied += 1
            else:
                kept += 1
    return applied, kept


def apply_cluster_judgment(signature: Signature) -> None:
    """A signature new to a judged cluster takes the cluster's judgment (called at analysis)."""
    from triage.models import ClusterTriage
    if not signature.cluster:
        return
    triage = SignatureTriage.objects.filter(signature=signature).first()
    if triage is not None and (triage.judged_on_cluster or not follows_cluster(triage)):
        return  # already follows the cluster (judge_cluster keeps it current), or overrides it
    ct = ClusterTriage.objects.filter(cluster=signature.cluster).exclude(category="").first()
    if ct is not None:
        judge(signature, None, from_cluster=True, **{f: getattr(ct, f) for f in CLUSTER_FIELDS})


def set_cluster_issue_url(cluster: str, user, url: str) -> None:
    with transaction.atomic():
        ct = cluster_triage(cluster)
        if ct.issue_url != url:
            for pk in Signature.objects.filter(cluster=cluster).values_list("pk", flat=True):
                _record(pk, user, "cluster issue_url", ct.issue_url, url)
            ct.issue_url, ct.updated_by = url, user
            ct.save()


def assign_cluster(cluster: str, user, owner_user=None, owner_team=None) -> None:
    with transaction.atomic():
        ct = cluster_triage(cluster)
        old, new = owner_text(ct.owner_user, ct.owner_team), owner_text(owner_user, owner_team)
        if old != new:
            for pk in Signature.objects.filter(cluster=cluster).values_list("pk", flat=True):
                _record(pk, user, "cluster owner", old, new)
            ct.owner_user, ct.owner_team, ct.updated_by = owner_user, owner_team, user
            ct.save()
