"""Compatibility shim: delete once triage imports clean_capture from jobs_ingest.core.capture (issue #13)."""
from .capture import clean_capture  # noqa: F401
