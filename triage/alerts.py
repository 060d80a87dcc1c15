"""Alerts (issue #17): people and teams hear about what matters without opening the page.

Four kinds of trigger: a new signature above N GPU hours, a regressed signature, a spike (a signature's
failures in the last hour >= k times its hourly rate over the week before), and a node marked suspect
(the `node_marked_suspect` signal of the Nodes work).

Flow: a failure is analysed -> `schedule_check` queues one `check_alerts` task per transaction -> the
task finds the triggers and, for each subscription that matches, creates an AlertDelivery row whose
unique key (subscription, kind, thing, window, channel) is the deduplication: one alert per thing per
window, however many failures, workers or redeliveries -> `deliver_alert` sends it by email or webhook,
retried with backoff, every attempt written to the row that admins read as the delivery log.
"""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone as dt_timezone

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

EPOCH = datetime(1970, 1, 1, tzinfo=dt_timezone.utc)


class DeliveryError(Exception):
    """A delivery attempt failed in a way worth retrying (SMTP refused, webhook answered 5xx, timeout)."""


# ------------------------------------------------------------------ pure decisions (unit-tested)

@dataclass(frozen=True)
class Trigger:
    """Something worth an alert. `key` names the thing (deduplication); `teams` scope it ([] = every team)."""
    kind: str
    key: str
    title: str
    text: str
    url: str
    teams: tuple[str, ...] = ()
    gpu_hours: float = 0.0
    ratio: float = 0.0
    facts: dict = field(default_factory=dict)


def window_start(now: datetime, hours: int) -> datetime:
    """Start of the fixed window of `hours` that holds `now` (windows are aligned on the epoch)."""
    span = timedelta(hours=max(1, hours))
    return EPOCH + ((now - EPOCH) // span) * span


def spike_ratio(last_hour: int, week_before: int, hours_before: float = 167.0) -> float:
    """How many times its usual hourly rate a signature failed in the last hour. The usual rate is taken
    over the week before that hour, with a floor of one failure per week so a quiet signature's first
    burst gives a large but finite ratio."""
    return last_hour * hours_before / max(week_before, 1)


def backoff_seconds(attempt: int, base: int = 30, cap: int = 3600) -> int:
    """Delay before retry number `attempt` (1, 2, ...): base, 2*base, 4*base, ... capped."""
    return int(min(cap, base * 2 ** max(0, attempt - 1)))


def slack_payload(trigger: Trigger) -> dict:
    """A generic JSON body that Slack's incoming webhooks accept (`text`, `blocks`), with the structured
    facts beside them for any other receiver."""
    return {
        "text": f"{trigger.title}\n{trigger.url}",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn",
                                                 "text": f"*<{trigger.url}|{trigger.title}>*\n{trigger.text}"}}],
        "jobtriage": {"kind": trigger.kind, "key": trigger.key, "url": trigger.url, "teams": list(trigger.teams),
                      "gpu_hours": round(trigger.gpu_hours, 2), **trigger.facts},
    }


def subscription_matches(sub, trigger: Trigger) -> bool:
    """Does this subscription want this trigger? Team-scoped subscriptions see only their team's things;
    platform-wide things (a suspect node) have no team and reach every subscription of their kind."""
    if not sub.active or sub.kind != trigger.kind:
        return False
    if sub.team_id and trigger.teams and sub.team.name not in trigger.teams:
        return False
    if trigger.kind == "new_signature" and trigger.gpu_hours < sub.min_gpu_hours:
        return False
    if trigger.kind == "spike" and trigger.ratio < sub.spike_factor:
        return False
    return True


# ------------------------------------------------------------------ finding triggers

def _signature_url(signature_id: int) -> str:
    return f"{settings.JOBTRIAGE_BASE_URL}/signatures/{signature_id}/"


def signature_triggers(signature_ids, now: datetime | None = None) -> list[Trigger]:
    from jobs_ingest.models import Failure, Signature
    from triage.models import JudgmentEvent, SignatureTriage

    now = now or timezone.now()
    new_since = now - timedelta(days=settings.JOBTRIAGE_ALERT_NEW_DAYS)
    states = dict(SignatureTriage.objects.filter(signature_id__in=signature_ids).values_list("signature_id", "state"))
    triggers = []
    for sig in Signature.objects.filter(pk__in=signature_ids):
        teams, url, reason = tuple(sig.teams or ()), _signature_url(sig.pk), sig.masked_message[:200]
        gpu_hours = sig.gpu_seconds / 3600
        state = states.get(sig.pk, SignatureTriage.State.NEW)
        base = {"signature": sig.pk, "category": sig.category, "failures": sig.failure_count}
        if state == SignatureTriage.State.NEW and sig.first_seen and sig.first_seen >= new_since:
            triggers.append(Trigger("new_signature", f"signature:{sig.pk}",
                                    f"New failure signature, {gpu_hours:.1f} GPU h: {reason}",
                                    f"{sig.failure_count} failure(s) since {sig.first_seen:%Y-%m-%d %H:%M} UTC, "
                                    f"teams: {', '.join(teams) or '-'}", url, teams, gpu_hours, facts=base))
        if state == SignatureTriage.State.REGRESSED:
            # The regression's own history row names it: one alert per regression, not one per failure.
            event = (JudgmentEvent.objects.filter(signature=sig, field="state", new_value="regressed")
                     .order_by("-pk").values_list("pk", flat=True).first())
            triggers.append(Trigger("regressed", f"signature:{sig.pk}:regression:{event}",
                                    f"Regressed: {reason}", "A resolved failure signature failed again.",
                                    url, teams, gpu_hours, facts=base))
        if sig.first_seen and sig.first_seen < now - timedelta(hours=1):
            recent = Failure.objects.filter(signature=sig)
            last_hour = recent.filter(_ended_between(now - timedelta(hours=1), now)).count()
            if last_hour >= settings.JOBTRIAGE_ALERT_SPIKE_MIN_FAILURES:
                week_before = recent.filter(_ended_between(now - timedelta(days=7), now - timedelta(hours=1))).count()
                ratio = spike_ratio(last_hour, week_before)
                triggers.append(Trigger("spike", f"signature:{sig.pk}:spike",
                                        f"Spike x{ratio:.0f}: {reason}",
                                        f"{last_hour} failures in the last hour, {week_before} in the week before.",
                                        url, teams, gpu_hours, ratio, facts={**base, "last_hour": last_hour,
                                                                              "week_before": week_before}))
    return triggers


def _ended_between(start: datetime, end: datetime) -> Q:
    """When a failure happened: the job's end, else when we received it (schedulers may omit the end)."""
    return (Q(job__ended_at__gte=start, job__ended_at__lt=end)
            | Q(job__ended_at__isnull=True, job__received_at__gte=start, job__received_at__lt=end))


def node_trigger(host: str, failures: int, jobs: int, window_hours: float) -> Trigger:
    return Trigger("suspect_node", f"node:{host}", f"Suspect node {host}",
                   f"{failures} infrastructure failures from {jobs} jobs in {window_hours:g} h.",
                   f"{settings.JOBTRIAGE_BASE_URL}/nodes/{host}/", (),
                   facts={"host": host, "failures": failures, "jobs": jobs, "window_hours": window_hours})


# ------------------------------------------------------------------ fan-out and delivery

def _window_for(kind: str, now: datetime) -> datetime:
    # A new signature is new once; the others may come back, once per window at most.
    return EPOCH if kind == "new_signature" else window_start(now, settings.JOBTRIAGE_ALERT_WINDOW_HOURS)


def recipients(sub) -> list[str]:
    if sub.user_id:
        return [sub.user.email] if sub.user.email else []
    return sorted({email for email in sub.team.members.exclude(email="").values_list("email", flat=True)})


def fan_out(triggers: list[Trigger], now: datetime | None = None) -> list[int]:
    """Create the deliveries the triggers call for (at most one per subscription, thing, window and
    channel) and queue them on commit. Returns the ids of the deliveries created now."""
    from triage.models import AlertDelivery, AlertSubscription

    if not triggers:
        return []
    now = now or timezone.now()
    subs = list(AlertSubscription.objects.filter(active=True, kind__in={t.kind for t in triggers})
                .select_related("user", "team"))
    created = []
    for trigger in triggers:
        for sub in subs:
            if not subscription_matches(sub, trigger):
                continue
            channels = ([("email", ", ".join(recipients(sub)))] if sub.email else []) + \
                       ([("webhook", sub.webhook_url)] if sub.webhook_url else [])
            for channel, target in channels:
                if not target:
                    continue
                try:
                    with transaction.atomic():
                        delivery = AlertDelivery.objects.create(
                            subscription=sub, kind=trigger.kind, key=trigger.key, window=_window_for(trigger.kind, now),
                            channel=channel, target=target, subject=trigger.title[:255],
                            body=f"{trigger.text}\n\n{trigger.url}\n", payload=slack_payload(trigger))
                except IntegrityError:
                    continue  # already alerted for this thing in this window
                created.append(delivery.pk)
    if created:
        transaction.on_commit(lambda: _queue(created))
    return created


def _queue(delivery_ids: list[int]) -> None:
    from triage.tasks import deliver_alert
    for pk in delivery_ids:
        try:
            deliver_alert.delay(pk)
        except Exception:  # noqa: BLE001 -- broker down: the row stays pending; `retry_pending_alerts` sends it
            pass


def send(delivery) -> None:
    """One attempt. Raises DeliveryError when it should be retried."""
    if delivery.channel == "email":
        to = [a.strip() for a in delivery.target.split(",") if a.strip()]
        try:
            EmailMessage(f"[jobtriage] {delivery.subject}", delivery.body, to=to).send()
        except OSError as exc:  # smtplib.SMTPException is an OSError
            raise DeliveryError(f"SMTP: {exc}") from exc
        return
    request = urllib.request.Request(delivery.target, data=json.dumps(delivery.payload).encode(),
                                     headers={"Content-Type": "application/json", "User-Agent": "jobtriage-alerts"},
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=settings.JOBTRIAGE_ALERT_WEBHOOK_TIMEOUT) as response:
            response.read(1024)
    except urllib.error.HTTPError as exc:
        raise DeliveryError(f"webhook answered HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise DeliveryError(f"webhook: {getattr(exc, 'reason', exc)}") from exc


def attempt(delivery_id: int) -> tuple[str, int | None]:
    """Try one delivery and write the outcome to its row. Returns (state, seconds until the next try or
    None). Idempotent: a delivery already sent or given up is left alone (a redelivered task)."""
    from triage.models import AlertDelivery

    with transaction.atomic():
        delivery = AlertDelivery.objects.select_for_update().get(pk=delivery_id)
        if delivery.state != AlertDelivery.State.PENDING:
            return delivery.state, None
        delivery.attempts += 1
        try:
            send(delivery)
        except DeliveryError as exc:
            delivery.last_error = str(exc)[:2000]
            if delivery.attempts >= settings.JOBTRIAGE_ALERT_MAX_ATTEMPTS:
                delivery.state = AlertDelivery.State.FAILED
                delivery.save(update_fields=["attempts", "last_error", "state"])
                return delivery.state, None
            wait = backoff_seconds(delivery.attempts, settings.JOBTRIAGE_ALERT_RETRY_BASE_SECONDS)
            delivery.next_attempt_at = timezone.now() + timedelta(seconds=wait)
            delivery.save(update_fields=["attempts", "last_error", "next_attempt_at"])
            return delivery.state, wait
        delivery.state, delivery.sent_at, delivery.last_error = AlertDelivery.State.SENT, timezone.now(), ""
        delivery.save(update_fields=["attempts", "state", "sent_at", "last_error"])
        return delivery.state, None


# ------------------------------------------------------------------ hooks

_pending = threading.local()


def schedule_check(signature_id: int) -> None:
    """Called for each analysed failure inside its transaction: one check task per transaction, after
    commit, for all the signatures it touched (a batch of 500 failures queues one task, not 500)."""
    connection = transaction.get_connection()
    ids = getattr(_pending, "ids", None)
    # Our callback is gone from the connection when the transaction rolled back: start a new set.
    if ids is not None and any(entry[1] is _flush for entry in connection.run_on_commit):
        ids.add(signature_id)
        return
    _pending.ids = {signature_id}
    transaction.on_commit(_flush)  # outside a transaction this runs at once


def _flush() -> None:
    from triage.models import AlertSubscription
    from triage.tasks import check_alerts

    ids, _pending.ids = sorted(getattr(_pending, "ids", None) or ()), None
    if not ids or not AlertSubscription.objects.filter(active=True).exclude(kind="suspect_node").exists():
        return
    try:
        check_alerts.delay(ids)
    except Exception:  # noqa: BLE001 -- broker down: alerts are best effort, the failure is stored
        pass


def on_node_marked_suspect(sender, host: str, failures: int, jobs: int, window=None, **kwargs) -> None:
    hours = window.total_seconds() / 3600 if isinstance(window, timedelta) else float(window or 24)
    fan_out([node_trigger(host, failures, jobs, hours)])
