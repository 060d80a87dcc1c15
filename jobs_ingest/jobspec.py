"""Validate job metadata from the API or a manifest line (pure; no Django).

The format is documented in docs/ingest.md. Errors name the field and say what is wrong, so a
scheduler integration can be fixed from the error alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from jobs_ingest.core.nodes import expand_nodelist

SUCCESS_STATUSES = {"succeeded", "success", "completed", "complete", "pass", "passed", "ok", "done"}
MAX_ATTEMPTS = 1000
MAX_GPUS = 1_000_000
MAX_EXTRA_CHARS = 20_000
_PLATFORM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TEXT_LIMITS = {"platform": 64, "external_id": 255, "name": 255, "submitter": 150, "team": 150, "status": 32,
                "code_version": 255, "image": 512, "command": 20_000, "log": 1024, "signal": 16}
_TIMES = ("submitted_at", "started_at", "ended_at")
_KNOWN = {"platform", "external_id", "name", "submitter", "team", "status", "submitted_at", "started_at",
          "ended_at", "gpus", "exit_code", "signal", "command", "code_version", "image", "log", "log_text",
          "attempts", "nodes"}
MAX_JOB_NODES = 4096


class JobSpecError(ValueError):
    """Invalid job metadata; `fields` maps each bad field to what is wrong with it."""

    def __init__(self, fields: dict[str, str]):
        self.fields = fields
        super().__init__("; ".join(f"{k}: {v}" for k, v in fields.items()))


@dataclass(frozen=True)
class AttemptSpec:
    number: int
    started_at: datetime | None
    ended_at: datetime | None
    gpus: int
    exit_code: int | None
    status: str


@dataclass(frozen=True)
class JobSpec:
    platform: str
    external_id: str
    status: str
    name: str = ""
    submitter: str = ""
    team: str = ""
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    gpus: int = 0
    exit_code: int | None = None
    signal: str = ""
    command: str = ""
    code_version: str = ""
    image: str = ""
    log: str = ""                      # manifest only: log path relative to the manifest's folder
    attempts: tuple[AttemptSpec, ...] = ()
    nodes: tuple[str, ...] = ()        # the hosts the scheduler gave the job (Slurm NodeList expanded)
    extra: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status not in SUCCESS_STATUSES


def parse_job(data) -> JobSpec:
    """A JobSpec from decoded JSON, or JobSpecError listing every bad field."""
    if not isinstance(data, dict):
        raise JobSpecError({"metadata": "must be a JSON object"})
    errors: dict[str, str] = {}
    values: dict = {}

    for name in ("platform", "external_id", "status"):
        if data.get(name) in (None, ""):
            errors[name] = "is required"
    for name, limit in _TEXT_LIMITS.items():
        value = data.get(name)
        if value is None or name in errors:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            errors[name] = "must be a string"
            continue
        value = str(value).strip()
        if len(value) > limit:
            errors[name] = f"is longer than {limit} characters"
        elif "\x00" in value:
            errors[name] = "contains a NUL character"
        else:
            values[name] = value
    if "platform" in values and not _PLATFORM.match(values["platform"]):
        errors["platform"] = "must be 1-64 letters, digits, '_', '.' or '-'"
    if "status" in values:
        values["status"] = values["status"].lower()
    for name in _TIMES:
        if data.get(name) not in (None, ""):
            try:
                values[name] = parse_time(data[name])
            except ValueError as exc:
                errors[name] = str(exc)
    for name, low, high in (("gpus", 0, MAX_GPUS), ("exit_code", -(2 ** 31), 2 ** 31 - 1)):
        if data.get(name) is not None:
            try:
                values[name] = parse_int(data[name], low, high)
            except ValueError as exc:
                errors[name] = str(exc)
    if values.get("started_at") and values.get("ended_at") and values["ended_at"] < values["started_at"]:
        errors["ended_at"] = "is before started_at"

    attempts: list[AttemptSpec] = []
    raw_attempts = data.get("attempts")
    if raw_attempts is not None:
        if not isinstance(raw_attempts, list):
            errors["attempts"] = "must be a list of objects"
        elif len(raw_attempts) > MAX_ATTEMPTS:
            errors["attempts"] = f"has more than {MAX_ATTEMPTS} entries"
        else:
            for i, raw in enumerate(raw_attempts):
                try:
                    attempts.append(_parse_attempt(raw, i + 1, values.get("gpus", 0)))
                except ValueError as exc:
                    errors[f"attempts[{i}]"] = str(exc)

    if data.get("nodes") not in (None, "", []):
        try:
            values["nodes"] = parse_nodes(data["nodes"])
        except ValueError as exc:
            errors["nodes"] = str(exc)

    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    if len(repr(extra)) > MAX_EXTRA_CHARS:
        errors["metadata"] = f"unknown fields take more than {MAX_EXTRA_CHARS} characters"
    if errors:
        raise JobSpecError(errors)
    if not attempts and (values.get("started_at") or values.get("ended_at")):
        # No attempt list: the job's own times and GPUs are its one attempt.
        attempts = [AttemptSpec(1, values.get("started_at"), values.get("ended_at"), values.get("gpus", 0),
                                values.get("exit_code"), values["status"])]
    return JobSpec(attempts=tuple(attempts), extra=extra, **values)


def parse_nodes(value) -> tuple[str, ...]:
    """A Slurm hostlist ("gpu[01-04],cpu7"), or a list of host names / addresses -> host names, in order."""
    if isinstance(value, str):
        names = expand_nodelist(value, limit=MAX_JOB_NODES)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = list(dict.fromkeys(v.strip() for v in value if v.strip()))
    else:
        raise ValueError("must be a Slurm hostlist string or a list of host names")
    if len(names) > MAX_JOB_NODES:
        raise ValueError(f"names more than {MAX_JOB_NODES} nodes")
    bad = next((n for n in names if not _NODE_NAME.fullmatch(n)), None)
    if bad is not None:
        raise ValueError(f"{bad[:80]!r} is not a host name or address")
    return tuple(names)


_NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,252}")


def _parse_attempt(raw, number: int, job_gpus: int) -> AttemptSpec:
    if not isinstance(raw, dict):
        raise ValueError("must be an object")
    started = parse_time(raw["started_at"]) if raw.get("started_at") else None
    ended = parse_time(raw["ended_at"]) if raw.get("ended_at") else None
    if started and ended and ended < started:
        raise ValueError("ended_at is before started_at")
    gpus = parse_int(raw["gpus"], 0, MAX_GPUS) if raw.get("gpus") is not None else job_gpus
    exit_code = parse_int(raw["exit_code"], -(2 ** 31), 2 ** 31 - 1) if raw.get("exit_code") is not None else None
    status = str(raw.get("status") or "")[:32]
    return AttemptSpec(number, started, ended, gpus, exit_code, status)


def parse_time(value) -> datetime:
    """ISO 8601 text (naive times are UTC) or a Unix timestamp in seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not 0 <= value < 32503680000:
            raise ValueError("is not a plausible Unix time")
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if not isinstance(value, str) or len(value) > 40:
        raise ValueError("must be an ISO 8601 time such as 2026-11-16T08:00:00Z")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"'{value}' is not an ISO 8601 time such as 2026-11-16T08:00:00Z") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def parse_int(value, low: int, high: int) -> int:
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError("must be an integer") from None
    if isinstance(value, float) and value != number:
        raise ValueError("must be an integer")
    if not low <= number <= high:
        raise ValueError(f"must be between {low} and {high}")
    return number


def looks_binary(sample: bytes) -> bool:
    """True for data that is not a text log (an image, an archive, a core dump): many NUL or
    control bytes in its first kilobytes. Invalid UTF-8 alone is still text."""
    if not sample:
        return False
    controls = sum(1 for b in sample if b == 0 or (b < 32 and b not in (9, 10, 13, 27, 12, 8)))
    return controls / len(sample) > 0.1


def shifted_to(records: list[dict], now: datetime) -> tuple[list[dict], int]:
    """The job records with every time (the job's and its attempts') moved by one number of whole days, so that the
    newest is one to two days before `now`: a recorded workload (the demo) read as if it had just run, its triage dated
    a day after a job still in the past. Hours and intervals are kept; a time that does not parse is left for
    parse_job to name; nothing moves earlier. The records given are not changed. Returns (records, days moved)."""
    copies, stamps = [], []     # stamps: (the dict holding a time, its key, the time)
    for record in records:
        if isinstance(record, dict):
            record = dict(record)
            if isinstance(record.get("attempts"), list):
                record["attempts"] = [dict(a) if isinstance(a, dict) else a for a in record["attempts"]]
            holders = [(record, _TIMES)] + [(a, ("started_at", "ended_at")) for a in record.get("attempts") or ()
                                            if isinstance(a, dict)]
            stamps += [(holder, key, t) for holder, keys in holders for key in keys
                       if (t := _parsed_or_none(holder.get(key))) is not None]
        copies.append(record)
    days = (now - timedelta(days=1) - max(t for _, _, t in stamps)).days if stamps else 0
    if days <= 0:
        return records, 0
    for holder, key, t in stamps:
        holder[key] = (t + timedelta(days=days)).isoformat()
    return copies, days


def _parsed_or_none(value) -> datetime | None:
    try:
        return parse_time(value) if value not in (None, "") else None
    except ValueError:
        return None
