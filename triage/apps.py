from django.apps import AppConfig


class TriageConfig(AppConfig):
    name = "triage"
    verbose_name = "Triage (judgments and pages)"

    def ready(self):
        # jobs_ingest never imports triage: triage plugs into its hooks here.
        from django.db.models.signals import post_migrate

        from jobs_ingest.search import fields
        from jobs_ingest.signals import failure_analysed
        from triage import receivers, roles, rollups
        from triage.search_fields import TriageSearchFields

        post_migrate.connect(roles.ensure_roles, sender=self, dispatch_uid="triage-roles")

        failure_analysed.connect(receivers.on_failure_analysed, dispatch_uid="triage-failure-analysed")
        rollups.connect_judgment_signals()
        fields.register(TriageSearchFields())
