"""Tag many logs given as JSON Lines (one {"id", "log"} object a line): the evaluation interface of
the tagger, behind `manage.py tag_logs`."""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from .configs import GroupingConfig, TaggingConfig, grouping_config, tagging_config
from .pipeline import analyse_text
from .taxonomy import why_unclassified

# The config ids come last so that outputs of one config compare line by line with older outputs.
ANALYSIS_FIELDS = ("category", "dimension", "confidence", "rule", "failure_line", "exception_type",
                   "fingerprint", "stage", "retry_advice", "grouping_config", "tagging_config", "fault",
                   "suspect_nodes", "cluster", "cluster_message")
OUTPUT_FIELDS = ANALYSIS_FIELDS + ("why_unclassified",)   # "" when the rules gave a category


def tag_record(record: dict, *, grouping: str | GroupingConfig | None = None,
               tagging: str | TaggingConfig | None = None) -> dict:
    """{"id", "log"[, "exit_code", "signal"]} -> {"id", category, dimension, ...}, with the configs
    selected by id (None: the newest)."""
    log = record.get("log")
    if not isinstance(log, str):
        raise ValueError('"log" must be a string')
    analysis = analyse_text(log, exit_code=_int_or_none(record.get("exit_code")), signal=record.get("signal"),
                            grouping_config=grouping, tagging_config=tagging)
    out = {"id": record.get("id")}
    out.update({name: getattr(analysis, name) for name in ANALYSIS_FIELDS})
    out["why_unclassified"] = why_unclassified(analysis.rule)
    return out


def tag_jsonl(lines: Iterable[str], *, grouping: str | GroupingConfig | None = None,
              tagging: str | TaggingConfig | None = None) -> Iterator[dict]:
    """One output object per non-blank input line, in order. A bad line yields {"id", "error"}
    instead of stopping the batch. An unknown config id raises configs.UnknownConfig before any
    line is read."""
    grouping, tagging = grouping_config(grouping), tagging_config(tagging)
    return _tag_lines(lines, grouping, tagging)


def _tag_lines(lines: Iterable[str], grouping: GroupingConfig, tagging: TaggingConfig) -> Iterator[dict]:
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
            yield tag_record(record, grouping=grouping, tagging=tagging)
        except ValueError as exc:
            yield {"id": record.get("id"), "error": f"line {number}: {exc}"}


def _int_or_none(value) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
