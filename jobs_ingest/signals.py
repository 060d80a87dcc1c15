"""Signals other apps listen to, so that jobs_ingest never imports them."""
from django.dispatch import Signal

# Sent inside the analysis transaction, after a failure was stored.
# Arguments: failure, signature, new_to_signature (bool: the job's failure was not in this signature before).
failure_analysed = Signal()
