from django.contrib import admin

from jobs_ingest.models import Attempt, Failure, IngestToken, Job, Signature


class AttemptInline(admin.TabularInline):
    model = Attempt
    extra = 0


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("platform", "external_id", "name", "submitter", "team", "status", "gpus", "ingest_state")
    list_filter = ("platform", "status", "ingest_state", "team")
    search_fields = ("external_id", "name", "submitter")
    inlines = [AttemptInline]


@admin.register(Failure)
class FailureAdmin(admin.ModelAdmin):
    list_display = ("job", "category", "confidence", "stage", "exception_type", "indexed_at")
    list_filter = ("category", "dimension", "stage")
    raw_id_fields = ("job", "signature")


@admin.register(Signature)
class SignatureAdmin(admin.ModelAdmin):
    list_display = ("fingerprint", "category", "failure_count", "gpu_seconds", "last_seen")
    search_fields = ("fingerprint", "masked_message")


@admin.register(IngestToken)
class IngestTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "key_prefix", "platform", "team", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("key_hash", "key_prefix", "last_used_at")
    actions = ["revoke"]

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        from django.utils import timezone
        queryset.update(revoked_at=timezone.now())
