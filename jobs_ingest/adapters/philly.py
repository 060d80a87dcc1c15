"""The public Philly trace (`cluster_job_log`) -> job metadata (pure; no Django).

Format (msr-fiddle/philly-traces README): one JSON list of jobs
`{"status": "Pass|Failed|Killed", "vc", "jobid", "user", "submitted_time",
  "attempts": [{"start_time", "end_time", "detail": [{"ip", "gpus": ["gpu0", ...]}]}]}`;
times are "YYYY-MM-DD HH:MM:SS" or None (written "None" in the file). The real file is about 1 GB,
so it is read as a stream: one job object at a time, in bounded memory.
"""
from __future__ import annotations

import codecs
import json
import re
from datetime import datetime
from typing import BinaryIO, Iterator

from . import Adapted, Rejected

PLATFORM = "philly"
STATUSES = {"pass": "passed", "failed": "failed", "killed": "killed"}
CHUNK = 1024 * 1024
MAX_RECORD_BYTES = 16 * 1024 * 1024   # one job; the largest real ones are a few hundred KB
_WHITESPACE = " \t\r\n"
_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


class TraceFormatError(ValueError):
    """The file is not a JSON list of objects: reading cannot go on."""


def iter_records(stream: BinaryIO, chunk_size: int = CHUNK) -> Iterator[tuple[int, int, object]]:
    """(index, character offset, decoded value or the JSONDecodeError) for each element of a
    top-level JSON array, read incrementally: memory holds one chunk plus one element. A bad
    element is reported and skipped (to its closing brace); a broken list raises TraceFormatError."""
    decoder = json.JSONDecoder()
    reader = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer, consumed, eof = "", 0, False        # consumed: characters already dropped from the front

    def fill() -> bool:
        nonlocal buffer, eof
        if eof:
            return False
        data = stream.read(chunk_size)
        buffer += reader.decode(data, final=not data)
        eof = not data
        return bool(data)

    def next_char(pos: int) -> int:
        """Position of the next non-space character, reading more when needed (len(buffer) at EOF)."""
        while True:
            while pos < len(buffer) and buffer[pos] in _WHITESPACE:
                pos += 1
            if pos < len(buffer) or not fill():
                return pos

    pos = next_char(0)
    if pos >= len(buffer) or buffer[pos] != "[":
        raise TraceFormatError("the file does not start with '[': the Philly cluster_job_log is one JSON list")
    pos, index = next_char(pos + 1), 0
    if pos < len(buffer) and buffer[pos] == "]":
        return
    while True:
        pos = next_char(pos)
        if pos >= len(buffer):
            raise TraceFormatError(f"the list ends without ']' after {index} jobs (truncated file?)")
        try:
            value, end = decoder.raw_decode(buffer, pos)
        except json.JSONDecodeError:
            # Either the element goes on in the next chunk or it is broken: find its end by bracket
            # depth (reading more if needed), then decode exactly that much.
            end = _element_end(buffer, pos)
            while end is None and len(buffer) - pos < MAX_RECORD_BYTES and fill():
                end = _element_end(buffer, pos)
            if end is None:
                where = "the file ends inside" if eof else "cannot find the end of"
                raise TraceFormatError(f"{where} job {index} at character {consumed + pos} (truncated file?)") from None
            try:
                value, _ = decoder.raw_decode(buffer[:end], pos)
            except json.JSONDecodeError as exc:
                value = exc
        yield index, consumed + pos, value
        index += 1
        if end > chunk_size:   # drop what was read now and then (not per job: that copies the chunk each time)
            buffer, consumed, end = buffer[end:], consumed + end, 0
        pos = next_char(end)
        if pos >= len(buffer):
            raise TraceFormatError(f"the list ends without ']' after {index} jobs (truncated file?)")
        if buffer[pos] == "]":
            return
        if buffer[pos] != ",":
            raise TraceFormatError(f"expected ',' or ']' after job {index - 1} at character {consumed + pos}")
        pos += 1


def _element_end(buffer: str, start: int) -> int | None:
    """End of the object or list starting at `start`, by bracket depth outside strings; None when
    the buffer does not hold it all."""
    depth, in_string, escaped = 0, False, False
    for at in range(start, len(buffer)):
        char = buffer[at]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return at + 1
    return None


def parse_philly_time(value) -> str | None:
    """'2017-10-07 01:12:09' -> '2017-10-07T01:12:09' (None for a missing time)."""
    if value in (None, "", "None"):
        return None
    if not isinstance(value, str) or not _TIME.fullmatch(value):
        raise ValueError(f"time {value!r} is not 'YYYY-MM-DD HH:MM:SS'")
    try:
        return datetime.fromisoformat(value).isoformat()   # validates the date; C-fast unlike strptime
    except ValueError:
        raise ValueError(f"time {value!r} is not a valid date") from None


def attempt_gpus(attempt: dict) -> int:
    """GPUs of one attempt: the GPUs listed on each of its servers, summed."""
    total = 0
    for machine in attempt.get("detail") or []:
        gpus = machine.get("gpus") if isinstance(machine, dict) else None
        if not isinstance(gpus, list):
            raise ValueError(f"detail entry {machine!r} has no 'gpus' list")
        total += len(gpus)
    return total


def adapt_job(record, where: str) -> Adapted | Rejected:
    """One trace job -> metadata. Philly retries a job after a failed attempt; every attempt costs
    its GPUs x its wall time. The job's GPU count is its first attempt's (as in the trace's paper)."""
    if not isinstance(record, dict):
        return Rejected(where, "is not a JSON object")
    jobid = record.get("jobid")
    if not jobid:
        return Rejected(where, "has no jobid")
    where = f"{where} ({jobid})"
    status = STATUSES.get(str(record.get("status") or "").lower())
    if status is None:
        return Rejected(where, f"status {record.get('status')!r} is not Pass, Failed or Killed")
    try:
        raw_attempts = record.get("attempts") or []
        if not isinstance(raw_attempts, list):
            raise ValueError("attempts is not a list")
        attempts = []
        for number, raw in enumerate(raw_attempts, 1):
            if not isinstance(raw, dict):
                raise ValueError(f"attempt {number} is not an object")
            started, ended = parse_philly_time(raw.get("start_time")), parse_philly_time(raw.get("end_time"))
            if started and ended and ended < started:
                ended = None  # a logging error in the trace: keep the attempt, cost unknown
            last = number == len(raw_attempts)
            attempts.append({"started_at": started, "ended_at": ended, "gpus": attempt_gpus(raw),
                             "status": status if last else "retried"})
        submitted = parse_philly_time(record.get("submitted_time"))
    except ValueError as exc:
        return Rejected(where, str(exc))
    metadata = {
        "platform": PLATFORM, "external_id": str(jobid), "status": status, "submitter": record.get("user"),
        "team": record.get("vc"), "submitted_at": submitted,
        "started_at": next((a["started_at"] for a in attempts if a["started_at"]), None),
        "ended_at": attempts[-1]["ended_at"] if attempts else None,
        "gpus": attempts[0]["gpus"] if attempts else 0, "attempts": attempts,
        "nodes": sorted({m.get("ip") for a in raw_attempts for m in a.get("detail") or [] if m.get("ip")}),
    }
    return Adapted(where, {k: v for k, v in metadata.items() if v not in (None, "", [])})


def read_trace(stream: BinaryIO, limit: int | None = None) -> Iterator[Adapted | Rejected]:
    """Jobs of a cluster_job_log stream, in file order; stops after `limit` jobs when given."""
    for index, offset, value in iter_records(stream):
        if limit is not None and index >= limit:
            return
        where = f"job {index}"
        if isinstance(value, json.JSONDecodeError):
            yield Rejected(f"{where} (character {offset})", f"invalid JSON: {value.msg}")
        else:
            yield adapt_job(value, where)
