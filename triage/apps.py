from django.apps import AppConfig


class TriageConfig(AppConfig):
    name = "triage"
    verbose_name = "Triage (judgments and pages)"

    def ready(self):
        # jobs_ingest never imports triage: triage plugs into its hooks here.
        from django.db.models.signals import post_migrate

        from jobs_ingest.search import fields
        from jobs_ingest.signals import failures_analysed
        from triage import alerts, nodes, receivers, roles, rollups
        from triage.search_fields import TriageSearchFields

        post_migrate.connect(roles.ensure_roles, sender=self, dispatch_uid="triage-roles")

        failures_analysed.connect(receivers.on_failures_analysed, dispatch_uid="triage-failures-analysed")
        nodes.node_marked_suspect.connect(alerts.on_node_marked_suspect, dispatch_uid="triage-suspect-node-alert")
        rollups.connect_judgment_signals()
        fields.register(TriageSearchFields())
