from django.contrib import admin, messages

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
    fields = ("name", "platform", "team", "key_prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("key_prefix", "created_at", "last_used_at")
    actions = ["revoke"]

    def save_model(self, request, obj, form, change):
        """A new token gets its secret here; it is shown once, in the confirmation message."""
        if not change:
            key = IngestToken.new_key()
            obj.key_hash, obj.key_prefix = IngestToken.hash_key(key), key[:8]
            super().save_model(request, obj, form, change)
            self.message_user(request, f"Token for '{obj.name}' (copy it now, it is not shown again): {key}",
                              messages.WARNING)
        else:
            super().save_model(request, obj, form, change)

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        from django.utils import timezone
        queryset.update(revoked_at=timezone.now())
