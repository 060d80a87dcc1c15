"""Signals other apps listen to, so that jobs_ingest never imports them."""
from django.dispatch import Signal

# Sent once per analysed batch, inside its transaction, after the failures were stored.
# Arguments: failures (list of Failure, each with .job and .signature loaded), new_to_signature
# (dict failure pk -> bool: the job's failure was not in this signature before).
failures_analysed = Signal()
