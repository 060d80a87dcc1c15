from django.contrib import admin

from triage.models import AlertDelivery, AlertSubscription, FailureOverride, JudgmentEvent, SignatureTriage, Team


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name",)
    filter_horizontal = ("members",)
    search_fields = ("name",)


@admin.register(SignatureTriage)
class SignatureTriageAdmin(admin.ModelAdmin):
    list_display = ("signature", "state", "category", "root_cause", "updated_by", "updated_at")
    list_filter = ("state", "category", "root_cause")
    raw_id_fields = ("signature", "fixed_by", "updated_by")


@admin.register(JudgmentEvent)
class JudgmentEventAdmin(admin.ModelAdmin):
    """History is append-only: readable here, never editable."""
    list_display = ("at", "user", "signature", "failure", "field", "old_value", "new_value")
    list_filter = ("field",)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


admin.site.register(FailureOverride)


@admin.register(AlertSubscription)
class AlertSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("kind", "user", "team", "min_gpu_hours", "spike_factor", "email", "webhook_url", "active")
    list_filter = ("kind", "active")


@admin.register(AlertDelivery)
class AlertDeliveryAdmin(admin.ModelAdmin):
    """The delivery log: read-only, like history."""
    list_display = ("created_at", "kind", "key", "channel", "target", "state", "attempts", "last_error", "sent_at")
    list_filter = ("state", "kind", "channel")
    search_fields = ("key", "target", "subject")

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
