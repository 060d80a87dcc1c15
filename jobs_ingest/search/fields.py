"""The extension point for fields that other apps add to the search documents.

jobs_ingest never imports triage; triage registers a provider in its AppConfig.ready(). A provider
answers for whole batches, one call for failure documents and one for signature documents, keyed by
the ids it was given (an id it has nothing for may be left out)."""
from __future__ import annotations

from typing import Mapping, Protocol, Sequence

from jobs_ingest.models import Failure, Signature


class SearchFields(Protocol):
    def failure_fields(self, failures: Sequence[Failure]) -> Mapping[int, dict]:
        """{failure id: fields} for these failures' documents."""

    def signature_fields(self, signatures: Sequence[Signature]) -> Mapping[int, dict]:
        """{signature id: fields} for these signatures' documents."""


_providers: list[SearchFields] = []


def register(provider: SearchFields) -> None:
    """Add a provider once (ready() may run more than once, e.g. in tests)."""
    if not any(type(p) is type(provider) for p in _providers):
        _providers.append(provider)


def _merged(method: str, items: Sequence) -> dict[int, dict]:
    merged: dict[int, dict] = {}
    for provider in _providers:
        for key, fields in getattr(provider, method)(items).items():
            merged.setdefault(int(key), {}).update(fields)
    return merged


def failure_fields(failures: Sequence[Failure]) -> dict[int, dict]:
    return _merged("failure_fields", failures) if failures else {}


def signature_fields(signatures: Sequence[Signature]) -> dict[int, dict]:
    return _merged("signature_fields", signatures) if signatures else {}
