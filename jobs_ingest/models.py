"""Facts: what the platform told us about a job, and what we derived mechanically from its log.

People's judgments (confirmed labels, root causes, fixes) live in the triage app, never here.
"""
import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.db.models import Count, Max, Min, Sum

from jobs_ingest.core.configs import GROUPING_CONFIGS
from jobs_ingest.core.taxonomy import CATEGORIES, DIMENSIONS, RETRY_ADVICE, STAGES

CATEGORY_CHOICES = [(c.id, c.name) for c in CATEGORIES.values()]
DIMENSION_CHOICES = list(DIMENSIONS.items())
STAGE_CHOICES = list(STAGES.items())
RETRY_CHOICES = list(RETRY_ADVICE.items())


class Job(models.Model):
    class Ingest(models.TextChoices):
        QUEUED = "queued"
        ANALYSED = "analysed"
        ERROR = "error"

    platform = models.CharField(max_length=64)
    external_id = models.CharField(max_length=255)
    name = models.CharField(max_length=255, blank=True)
    submitter = models.CharField(max_length=150, blank=True, db_index=True)
    team = models.CharField(max_length=150, blank=True, db_index=True)
    status = models.CharField(max_length=32, db_index=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True, db_index=True)
    gpus = models.PositiveIntegerField(default=0)
    exit_code = models.IntegerField(null=True, blank=True)
    signal = models.CharField(max_length=16, blank=True)
    command = models.TextField(blank=True)
    code_version = models.CharField(max_length=255, blank=True)
    image = models.CharField(max_length=512, blank=True)
    log_path = models.CharField(max_length=1024, blank=True, help_text="relative to JOBTRIAGE_LOG_DIR")
    log_bytes = models.BigIntegerField(default=0)
    log_sha256 = models.CharField(max_length=64, blank=True)
    extra = models.JSONField(default=dict, blank=True, help_text="metadata fields we do not model")
    # Hosts the job ran on, from the scheduler's metadata (Slurm NodeList expanded, Kubernetes nodeName,
    # Philly machines): with the hosts a failure's text names, they let the Nodes page find a bad node.
    nodes = models.JSONField(default=list, db_default=[], blank=True)
    ingest_state = models.CharField(max_length=16, choices=Ingest.choices, default=Ingest.QUEUED, db_index=True)
    ingest_error = models.TextField(blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "external_id"], name="job_platform_external_id")]
        indexes = [models.Index(fields=["submitter", "name", "ended_at"]),
                   models.Index(fields=["team", "name", "ended_at"])]

    def __str__(self):
        return f"{self.platform}:{self.external_id}"

    @property
    def gpu_seconds(self) -> float:
        return sum(a.gpu_seconds for a in self.attempts.all())


class Attempt(models.Model):
    """One run of the job; retries and requeues are further attempts. GPU cost is summed over them."""
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    gpus = models.PositiveIntegerField(default=0)
    exit_code = models.IntegerField(null=True, blank=True)
    status = models.CharField(max_length=32, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["job", "number"], name="attempt_job_number")]

    @property
    def gpu_seconds(self) -> float:
        if not (self.started_at and self.ended_at) or self.ended_at < self.started_at:
            return 0.0
        return self.gpus * (self.ended_at - self.started_at).total_seconds()


class Signature(models.Model):
    """Failures with the same fingerprint (one normaliser version) form one signature.

    Each grouping config (core/configs.py) has its own normaliser version, so (fingerprint,
    normaliser_version) names the config too: `grouping_config` reads it from there."""
    fingerprint = models.CharField(max_length=64)
    normaliser_version = models.CharField(max_length=16)
    exception_type = models.CharField(max_length=255, blank=True)
    masked_message = models.TextField()
    # The failure reason across code bases (LUCI Analysis's reason clusters): a hash of the exception type
    # and the message with identifiers, quoted names, paths and numbers masked. The exact fingerprint
    # still separates different code; many signatures share one cluster.
    cluster = models.CharField(max_length=64, blank=True, default="", db_default="", db_index=True)
    cluster_message = models.TextField(blank=True, default="", db_default="")
    # What besides the masked message told the signature apart (core.analysis.BASES): "message" means the message
    # alone, so failures of different programs may share it and one judgment may not fit them all.
    basis = models.CharField(max_length=16, blank=True, default="", db_default="")
    category = models.CharField(max_length=32, choices=CATEGORY_CHOICES, db_index=True,
                                help_text="automatic category of its latest failure")
    confidence = models.FloatField(default=0, help_text="confidence of that automatic category")
    first_seen = models.DateTimeField(null=True, db_index=True)
    last_seen = models.DateTimeField(null=True, db_index=True)
    failure_count = models.PositiveIntegerField(default=0)
    gpu_seconds = models.FloatField(default=0, db_index=True)
    # Teams whose jobs failed this way, kept at ingest: the queue shows them for 50 signatures at a
    # time, and collecting them from the failures costs a scan of every failure of each signature.
    teams = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["fingerprint", "normaliser_version"],
                                               name="signature_fingerprint_version")]

    def __str__(self):
        return f"{self.fingerprint} {self.masked_message[:60]}"

    @property
    def grouping_config(self) -> str:
        """Id of the grouping config whose fingerprints this signature groups ("" if older than configs)."""
        return next((c.id for c in GROUPING_CONFIGS if c.normaliser_version == self.normaliser_version), "")

    def refresh_stats(self) -> None:
        """Recount from its failures (idempotent: safe after a re-analysis moved a failure)."""
        stats = self.failures.aggregate(
            n=Count("id"), gpu=Sum("gpu_seconds"), first=Min("job__ended_at"), last=Max("job__ended_at"),
            first_received=Min("job__received_at"), last_received=Max("job__received_at"))
        Signature.objects.filter(pk=self.pk).update(
            failure_count=stats["n"], gpu_seconds=stats["gpu"] or 0,
            first_seen=stats["first"] or stats["first_received"], last_seen=stats["last"] or stats["last_received"])
        teams = sorted(set(self.failures.exclude(job__team="").values_list("job__team", flat=True).distinct()))
        Signature.objects.filter(pk=self.pk).update(teams=teams)
        self.refresh_from_db(fields=["failure_count", "gpu_seconds", "first_seen", "last_seen", "teams"])


class GroupingRule(models.Model):
    """A person's correction of the grouping (core/grouping_rules.py): the failures of one automatic
    fingerprint (all, or those containing a text) go to `target`. Applied at every analysis, so future
    failures and re-analyses follow it; never deleted, only deactivated (it is also the rule log)."""
    class Kind(models.TextChoices):
        MERGE = "merge", "Merge"
        SPLIT = "split", "Split"
        CLUSTER = "cluster", "Cluster split"  # `target` belongs to `cluster`, whatever the clustering says

    kind = models.CharField(max_length=8, choices=Kind.choices)
    fingerprint = models.CharField(max_length=64, help_text="the automatic fingerprint it matches")
    normaliser_version = models.CharField(max_length=16)
    contains = models.CharField(max_length=500, blank=True, help_text="split: text of the failure line or message")
    cluster = models.CharField(max_length=64, blank=True, help_text="cluster split: the cluster `target` belongs to")
    target = models.ForeignKey(Signature, on_delete=models.PROTECT, related_name="grouping_rules")
    active = models.BooleanField(default=True)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["fingerprint", "normaliser_version"], name="grouping_rule_match")]


class Failure(models.Model):
    """The failure that terminated a job, as derived from its log by the pure core."""
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="failure")
    signature = models.ForeignKey(Signature, on_delete=models.PROTECT, related_name="failures")
    found = models.BooleanField(default=True, help_text="False when the log shows no failure")
    failure_line = models.TextField(blank=True)
    failure_line_number = models.PositiveIntegerField(null=True, blank=True)
    exception_type = models.CharField(max_length=255, blank=True, db_index=True)
    message = models.TextField(blank=True)
    traceback = models.TextField(blank=True)
    user_frame = models.CharField(max_length=512, blank=True)
    excerpt = models.TextField(blank=True)
    excerpt_start_line = models.PositiveIntegerField(default=1)
    stage = models.CharField(max_length=32, choices=STAGE_CHOICES, db_index=True)
    gpu_seconds = models.FloatField(default=0, help_text="GPUs x wall time, summed over all attempts")
    category = models.CharField(max_length=32, choices=CATEGORY_CHOICES, db_index=True)
    dimension = models.CharField(max_length=32, choices=DIMENSION_CHOICES, db_index=True)
    confidence = models.FloatField()
    rule = models.CharField(max_length=128)
    evidence = models.TextField(blank=True)
    tagger_version = models.CharField(max_length=16)
    # Ids of the configs (core/configs.py) that made this row: the tag (category ... retry_advice,
    # stage) and the signature. "" = analysed before configs had names (migration 0005).
    tagging_config = models.CharField(max_length=32, blank=True, default="", db_default="")
    grouping_config = models.CharField(max_length=32, blank=True, default="", db_default="")
    retry_advice = models.CharField(max_length=32, choices=RETRY_CHOICES)
    # Whose failure: "platform" for the infrastructure dimension, else "user"; and the nodes its text names
    # (platform faults only), from which the Nodes page finds the bad node.
    fault = models.CharField(max_length=16, choices=[("user", "User"), ("platform", "Platform")], default="user",
                             db_default="user", db_index=True)
    suspect_nodes = models.JSONField(default=list, db_default=[], blank=True)
    capture = models.JSONField(default=dict, blank=True,
                               help_text="what the training-side hook captured (stages, inputs, artifacts, replay)")
    grouping_rule = models.ForeignKey("GroupingRule", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="failures", help_text="the rule that chose its signature, if any")
    judged_like = models.ForeignKey(
        Signature, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="learning from triage: the judged signature whose category this failure took")
    line_numbers_from = models.BigIntegerField(
        default=0, db_default=0,
        help_text="byte offset the line numbers count from; 0 = whole log (resolved when the job page opens)")
    analysed_at = models.DateTimeField(auto_now=True)
    indexed_at = models.DateTimeField(null=True, blank=True, db_index=True,
                                      help_text="when Elasticsearch last received this version; null = pending")

    def __str__(self):
        return f"{self.job} {self.category}"

    @property
    def gpu_hours(self) -> float:
        return self.gpu_seconds / 3600


class IngestToken(models.Model):
    """A revocable API token for a scheduler or webhook, optionally limited to one platform or team.

    Only a hash of the token is stored; the token itself is shown once, when it is issued.
    """
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    key_prefix = models.CharField(max_length=8, help_text="first characters, to recognise a token")
    platform = models.CharField(max_length=64, blank=True, help_text="blank = any platform")
    team = models.CharField(max_length=150, blank=True, help_text="blank = any team")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.name} ({self.key_prefix}…)"

    @staticmethod
    def hash_key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    @staticmethod
    def new_key() -> str:
        return "jt_" + secrets.token_urlsafe(32)

    @classmethod
    def issue(cls, name: str, platform: str = "", team: str = "") -> tuple["IngestToken", str]:
        key = cls.new_key()
        token = cls.objects.create(name=name, key_hash=cls.hash_key(key), key_prefix=key[:8],
                                   platform=platform, team=team)
        return token, key

    @classmethod
    def authenticate(cls, key: str) -> "IngestToken | None":
        token = cls.objects.filter(key_hash=cls.hash_key(key), revoked_at__isnull=True).first()
        if token:
            cls.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
        return token

    def allows(self, platform: str, team: str) -> bool:
        return (not self.platform or self.platform == platform) and (not self.team or self.team == team)

    def scope(self) -> models.Q:
        """The jobs this token may read and write (a filter on Job): its platform and/or team, or all."""
        limits = {name: value for name, value in (("platform", self.platform), ("team", self.team)) if value}
        return models.Q(**limits)

    def visible_jobs(self):
        return Job.objects.filter(self.scope())
