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

    class Meta:
        permissions = [("triage_failures", "Can confirm and correct labels, record root causes and fixes"),
                       ("view_reports", "Can read reports and analytics")]

    def __str__(self):
        return f"{self.signature_id}: {self.state}"


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
