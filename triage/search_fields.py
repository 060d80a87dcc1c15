"""The judgment fields triage adds to the search documents (jobs_ingest.search.fields.SearchFields,
registered in TriageConfig.ready()). `confirmed_category` is what a person said, blank when nobody has:
the automatic tag is a field of its own in the documents."""
from __future__ import annotations

from typing import Sequence

from jobs_ingest.models import Failure, Signature
from triage import effective
from triage.models import FailureOverride, SignatureTriage

State = SignatureTriage.State


def _judgment(override, triage) -> dict:
    return {"confirmed_category": effective.category(override, triage, ""),
            "root_cause": effective.root_cause(override, triage),
            "triage_state": triage.state if triage else State.NEW}


class TriageSearchFields:
    def failure_fields(self, failures: Sequence[Failure]) -> dict[int, dict]:
        """A job's override, else its signature's judgment."""
        triages = {t.signature_id: t for t in
                   SignatureTriage.objects.filter(signature_id__in={f.signature_id for f in failures})}
        overrides = {o.failure_id: o for o in FailureOverride.objects.filter(failure_id__in=[f.pk for f in failures])}
        return {f.pk: _judgment(overrides.get(f.pk), triages.get(f.signature_id)) for f in failures}

    def signature_fields(self, signatures: Sequence[Signature]) -> dict[int, dict]:
        """The signature's own judgment."""
        triages = {t.signature_id: t for t in
                   SignatureTriage.objects.filter(signature_id__in=[s.pk for s in signatures])}
        return {s.pk: _judgment(None, triages.get(s.pk)) for s in signatures}
