from django.apps import AppConfig


class JobsIngestConfig(AppConfig):
    name = "jobs_ingest"
    verbose_name = "Jobs and failures (facts)"
