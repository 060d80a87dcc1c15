"""Judgments: what people decided about failures. Facts stay in jobs_ingest.

A judgment is made once per signature and inherited by all its failures, past and future, unless
someone overrides one job. Every change is recorded in JudgmentEvent and never deleted.
"""
from django.conf import settings
from django.db import models

from jobs_ingest.core.taxonomy import ROOT_CAUSES
from jobs_ingest.models import CATEGORY_CHOICES, Failure, Job, Signature

ROOT_CAUSE_CHOICES = list(ROOT_CAUSES.items())


class Team(models.Model):
    """A team as named in job metadata (`team`), with its members and report recipients."""
    name = models.CharField(max_length=150, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="teams")
    issue_tracker = models.CharField(
        max_length=500, blank=True,
        help_text="where this team files bugs: github:owner/repo, gitlab:https://host/group/project, "
                  "jira:https://host/secure/CreateIssueDetails!init.jspa?pid=10000&issuetype=1, or a URL with "
                  "{title} and {body}; blank = the site's JOBTRIAGE_ISSUE_TRACKER")

    def __str__(self):
        return self.name


class SignatureTriage(models.Model):
    class State(models.TextChoices):
        NEW = "new", "New"
        TRIAGED = "triaged", "Triaged"
        RESOLVED = "resolved", "Resolved"
        REGRESSED = "regressed", "Regressed"
        IGNORED = "ignored", "Ignored"

    signature = models.OneToOneField(Signature, on_delete=models.CASCADE, primary_key=True, related_name="triage")
    state = models.CharField(max_length=16, choices=State.choices, default=State.NEW, db_index=True)
    category = models.CharField(max_length=32, choices=CATEGORY_CHOICES, blank=True,
                                help_text="confirmed or corrected category; blank = not yet confirmed")
    root_cause = models.CharField(max_length=40, choices=ROOT_CAUSE_CHOICES, blank=True)
    notes = models.TextField(blank=True)
    fix_description = models.TextField(blank=True)
    fix_diff = models.TextField(blank=True)
    fixed_by = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="fixes")
    triaged_at = models.DateTimeField(null=True, blank=True, help_text="first judgment")
    resolved_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    issue_url = models.URLField(max_length=500, blank=True, help_text="the bug in the team's issue tracker")
    owner_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="owned_signatures")
    owner_team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="owned_signatures")
    # A judgment made on the signature itself overrides its cluster's; until then the cluster's applies.
    judged_on_cluster = models.BooleanField(default=False, help_text="category etc. came from the cluster's judgment")

    class Meta:
        permissions = [("triage_failures", "Can confirm and correct labels, record root causes and fixes"),
                       ("view_reports", "Can read reports and analytics")]

    def __str__(self):
        return f"{self.signature_id}: {self.state}"


class ClusterTriage(models.Model):
    """A judgment, owner and issue link for a whole reason-level cluster (Signature.cluster). Its judgment
    is copied onto every signature of the cluster that has no judgment of its own (services.judge_cluster)."""
    cluster = models.CharField(max_length=64, primary_key=True)
    category = models.CharField(max_length=32, choices=CATEGORY_CHOICES, blank=True)
    root_cause = models.CharField(max_length=40, choices=ROOT_CAUSE_CHOICES, blank=True)
    notes = models.TextField(blank=True)
    fix_description = models.TextField(blank=True)
    issue_url = models.URLField(max_length=500, blank=True)
    owner_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="owned_clusters")
    owner_team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="owned_clusters")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")


class Comment(models.Model):
    """A comment on a signature; `@username` mentions are emailed once, when it is posted."""
    signature = models.ForeignKey(Signature, on_delete=models.CASCADE, related_name="comments")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    body = models.TextField(max_length=20_000)
    mentions = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="mentioned_in")
    mentions_sent_at = models.DateTimeField(null=True, blank=True,
                                            help_text="when the mention emails went out (a redelivered task skips)")

    class Meta:
        ordering = ["at", "pk"]


class FailureOverride(models.Model):
    """A per-job exception to its signature's judgment."""
    failure = models.OneToOneField(Failure, on_delete=models.CASCADE, primary_key=True, related_name="override")
    category = models.CharField(max_length=32, choices=CATEGORY_CHOICES, blank=True)
    root_cause = models.CharField(max_length=40, choices=ROOT_CAUSE_CHOICES, blank=True)
    notes = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)


class JudgmentEvent(models.Model):
    """One changed value of a judgment: who, when, old and new. Append-only."""
    signature = models.ForeignKey(Signature, on_delete=models.CASCADE, related_name="judgment_events")
    failure = models.ForeignKey(Failure, null=True, blank=True, on_delete=models.CASCADE, related_name="judgment_events",
                                help_text="set for per-job overrides")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                             help_text="empty for automatic changes (regression detected at ingest)")
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    field = models.CharField(max_length=32)
    old_value = models.TextField(blank=True)
    new_value = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-pk"]


# ------------------------------------------------------------------------------------------ rollups
# Analytics read these instead of scanning failures and jobs (issue #5: every chart fast at 1M jobs).
# triage/rollups.py keeps them up to date and rebuilds them; nothing else writes them.
# A ledger holds each failure's (each job's) current contribution, so a change subtracts exactly what
# was added before: the rollup rows are maintained by deltas without rescanning any source table.
# `day` is the UTC date the job ended (NULL when the scheduler gave no end time, as the charts' time
# filters exclude those jobs too).

class FailureRollupEntry(models.Model):
    """Ledger: one row per failure, its effective labels and costs as last counted in the rollups."""
    # No cascade: when a failure is deleted, triage/rollups.py subtracts this row from the rollups, then
    # deletes it (a cascade would delete it first, and its counts would stay in the rollups).
    failure = models.OneToOneField(Failure, on_delete=models.DO_NOTHING, db_constraint=False, primary_key=True,
                                   related_name="+")
    signature_id = models.BigIntegerField(db_index=True)
    day = models.DateField(null=True)
    team = models.CharField(max_length=150)
    platform = models.CharField(max_length=64)
    submitter = models.CharField(max_length=150)
    auto_category = models.CharField(max_length=32, help_text="the tagger's: a judgment relabels without the source")
    category = models.CharField(max_length=32, help_text="effective: override, else judgment, else automatic")
    stage = models.CharField(max_length=32)
    root_cause = models.CharField(max_length=40, help_text="effective; blank = not recorded")
    gpu_seconds = models.FloatField()
    retry_attempts = models.IntegerField(help_text="attempts after the first")
    retry_gpu_seconds = models.FloatField()
    ttf_bucket = models.SmallIntegerField(null=True, help_text="log-scale bucket of time to failure")
    ttf_seconds = models.FloatField(null=True, help_text="job end minus start; NULL when either is missing")


class _DailyRollup(models.Model):
    day = models.DateField(null=True)
    team = models.CharField(max_length=150)
    platform = models.CharField(max_length=64)
    category = models.CharField(max_length=32)
    failures = models.IntegerField()
    gpu_seconds = models.FloatField()

    KEYS: tuple[str, ...] = ()

    class Meta:
        abstract = True


def _rollup_meta(name: str, keys: tuple[str, ...]):
    # NULLS NOT DISTINCT: rows without an end day must still meet in one row (ON CONFLICT on the key).
    # The key's index starts with `day`, so it also serves the charts' date ranges.
    return type("Meta", (), {"constraints": [models.UniqueConstraint(fields=list(keys), name=name,
                                                                     nulls_distinct=False)]})


class DailyCategoryRollup(_DailyRollup):
    """Failures per day x team x platform x effective category x stage x effective root cause."""
    KEYS = ("day", "team", "platform", "category", "stage", "root_cause")
    stage = models.CharField(max_length=32)
    root_cause = models.CharField(max_length=40)
    retry_attempts = models.IntegerField()
    retry_gpu_seconds = models.FloatField()
    Meta = _rollup_meta("rollup_category_key", KEYS)


class DailySubmitterRollup(_DailyRollup):
    KEYS = ("day", "team", "platform", "category", "submitter")
    submitter = models.CharField(max_length=150)
    Meta = _rollup_meta("rollup_submitter_key", KEYS)


class DailySignatureRollup(_DailyRollup):
    KEYS = ("day", "team", "platform", "category", "signature_id")
    signature_id = models.BigIntegerField(db_index=True)
    Meta = _rollup_meta("rollup_signature_key", KEYS)


class DailyDurationRollup(_DailyRollup):
    """Failures with both start and end times, per time-to-failure bucket; the bucket's total seconds give
    its mean, from which percentiles are interpolated (exact when a bucket holds equal durations)."""
    KEYS = ("day", "team", "platform", "category", "ttf_bucket")
    ttf_bucket = models.SmallIntegerField()
    ttf_seconds = models.FloatField()
    Meta = _rollup_meta("rollup_duration_key", KEYS)


class DailyJobRollup(models.Model):
    """Every job (failed or not) per day x team x platform: the denominator of "share of GPU time lost".
    Kept by PostgreSQL triggers on the job and attempt tables (migration 0002), which see every write,
    including bulk inserts, and run inside the writing transaction."""
    KEYS = ("day", "team", "platform")
    day = models.DateField(null=True)
    team = models.CharField(max_length=150)
    platform = models.CharField(max_length=64)
    jobs = models.IntegerField()
    gpu_seconds = models.FloatField()
    Meta = _rollup_meta("rollup_job_key", KEYS)


# ------------------------------------------------------------------------------------------ alerts
# triage/alerts.py decides and sends; these rows are the subscriptions and the delivery log.

class AlertSubscription(models.Model):
    """Who hears about what. A person's subscription (`user`) is emailed to them, about every team's
    failures or only `team`'s; a team's subscription (`team` without `user`) is emailed to its members.
    Either may post to a webhook (admins only set those: the worker calls the URL)."""
    class Kind(models.TextChoices):
        NEW_SIGNATURE = "new_signature", "New signature above N GPU hours"
        REGRESSED = "regressed", "Regressed signature"
        SPIKE = "spike", "Spike: failures in the last hour >= k times the weekly rate"
        SUSPECT_NODE = "suspect_node", "Node marked suspect"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="alert_subscriptions")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE, related_name="alert_subscriptions",
                             help_text="only this team's failures; without a user, the team is the subscriber")
    min_gpu_hours = models.FloatField(default=10, help_text="new signatures: alert from this many GPU hours")
    spike_factor = models.FloatField(default=5, help_text="spikes: alert from this many times the weekly rate")
    email = models.BooleanField(default=True)
    webhook_url = models.URLField(blank=True, max_length=500, help_text="JSON POST, Slack-compatible")
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(user__isnull=False) | models.Q(team__isnull=False),
                                              name="alert_subscription_has_subscriber")]

    def __str__(self):
        return f"{self.get_kind_display()} → {self.user or self.team}"


class AlertDelivery(models.Model):
    """One alert to one subscription by one channel: the delivery log admins read. The unique key is the
    deduplication: one alert per subscription, thing and window, however often the thing recurs."""
    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed (gave up)"

    subscription = models.ForeignKey(AlertSubscription, on_delete=models.CASCADE, related_name="deliveries")
    kind = models.CharField(max_length=32)
    key = models.CharField(max_length=200, help_text="the thing alerted about, e.g. signature:12, node:gpu-07")
    window = models.DateTimeField(help_text="start of the deduplication window")
    channel = models.CharField(max_length=16, choices=[("email", "Email"), ("webhook", "Webhook")])
    target = models.TextField(help_text="addresses or URL")
    subject = models.CharField(max_length=255)
    body = models.TextField()
    payload = models.JSONField(default=dict)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["subscription", "kind", "key", "window", "channel"],
                                               name="alert_delivery_once_per_window")]

    def __str__(self):
        return f"{self.kind} {self.key} → {self.channel} ({self.state})"
