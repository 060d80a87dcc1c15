"""Compatibility shim, to delete once triage/views.py imports jobs_ingest.core.capture (issue #13)."""
from .capture import clean_capture, find_capture  # noqa: F401
from .pipeline import analyse_log, analyse_text  # noqa: F401
