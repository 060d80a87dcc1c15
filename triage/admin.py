from django.contrib import admin

from triage.models import FailureOverride, JudgmentEvent, SignatureTriage, Team


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
