"""Tag many logs given as JSON Lines: the evaluation interface of the tagger (`manage.py tag_logs`)."""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from .analyse import analyse_text

OUTPUT_FIELDS = ("category", "dimension", "confidence", "rule", "failure_line", "exception_type",
                 "fingerprint", "stage", "retry_advice")


def tag_record(record: dict) -> dict:
    """{"id", "log"[, "exit_code", "signal"]} -> {"id", category, dimension, ...}."""
    log = record.get("log")
    if not isinstance(log, str):
        raise ValueError('"log" must be a string')
    analysis = analyse_text(log, exit_code=_int_or_none(record.get("exit_code")), signal=record.get("signal"))
    out = {"id": record.get("id")}
    out.update({name: getattr(analysis, name) for name in OUTPUT_FIELDS})
    return out


def tag_jsonl(lines: Iterable[str]) -> Iterator[dict]:
    """One output object per non-blank input line, in order. A bad line yields {"id", "error"}
    instead of stopping the batch."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("each line must be a JSON object")
        except ValueError as exc:
            yield {"id": None, "error": f"line {number}: invalid JSON: {exc}"}
            continue
        try:
            yield tag_record(record)
        except ValueError as exc:
            yield {"id": record.get("id"), "error": f"line {number}: {exc}"}


def _int_or_none(value) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
