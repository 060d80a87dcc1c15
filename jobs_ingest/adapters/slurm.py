"""Slurm `sacct` records -> job metadata (pure; no Django).

Two inputs, one result:
- `sacct --json` (Slurm 21.08+). The schema changed across versions: 21.08/22.05 (data_parser
  v0.0.37/38) give plain numbers and `state.current` as a string; 23.02+ (v0.0.39+) wrap numbers as
  `{"set", "infinite", "number"}` and give state/exit status as lists. Both are read. The Slurm
  version is read from `meta`: before 23.02 the JSON reports every exit that is not a signal as
  `SUCCESS` / 0 (seen on a real 22.05.8), so those exit codes are stored as unknown, never as 0.
- `sacct --parsable2` (`-P`): `|`-separated with a header line, any column order, e.g.
  `sacct -a -X -D -P --format=JobID,JobIDRaw,JobName,User,UID,Account,Partition,State,ExitCode,Submit,Start,End,AllocTRES,ReqTRES,NodeList,WorkDir,SubmitLine`
  (every field exists from 22.05 on; `Restarts` does not exist in 22.05 and is read when present).

One record per job allocation (`-X`); step rows (`123.batch`, `123.0`) are ignored. With
`--duplicates` (`-D`) sacct prints every requeued incarnation of a job: they become its attempts.
Array tasks (`123_4`) are jobs of their own. Pending and running jobs are skipped (not finished).
Times in `--parsable2` are the cluster's local time: run sacct with `TZ=UTC`.
A signalled run has no exit code (`0:9` is stored as exit code unknown, signal 9) in both formats.
Log files come from slurm_logs.LogIndex; slurm_merge.keep_known_facts merges a new report of a job into
what is already stored (re-ingesting never flips what was known).
"""
from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Iterator

from . import Adapted, Rejected, Skipped
from .slurm_logs import LogIndex

PLATFORM = "slurm"

# sacct state -> jobtriage status. Anything not listed (PENDING, RUNNING, SUSPENDED, REQUEUED as a
# last state, RESIZING, REVOKED...) is a job that has not finished here: skipped.
STATUSES = {
    "COMPLETED": "completed",
    "FAILED": "failed",
    "OUT_OF_MEMORY": "out_of_memory",
    "TIMEOUT": "timeout",
    "DEADLINE": "timeout",
    "NODE_FAIL": "node_fail",
    "BOOT_FAIL": "node_fail",
    "CANCELLED": "cancelled",
    "PREEMPTED": "preempted",
}
# States an earlier incarnation of a requeued job ends in (only meaningful as an attempt status).
ATTEMPT_STATUSES = {**STATUSES, "REQUEUED": "requeued"}
_GPU_TRES = re.compile(r"^gres/gpu(?::(?P<type>[^=]+))?$")
_UNKNOWN_TIMES = {"", "unknown", "none", "n/a", "0"}
# Before this version `sacct --json` reports every non-signal exit as SUCCESS / return_code 0.
JSON_EXIT_CODES_FROM = (23, 2)


class SlurmRecordError(ValueError):
    pass


# ---------------------------------------------------------------- small field parsers

def parse_state(text: str) -> tuple[str, str]:
    """'CANCELLED by 1234' -> ('CANCELLED', '1234'); 'FAILED' -> ('FAILED', '')."""
    parts = (text or "").strip().split()
    if not parts:
        raise SlurmRecordError("State is empty")
    state = parts[0].upper().rstrip("+")
    by = parts[2] if len(parts) >= 3 and parts[1].lower() == "by" else ""
    return state, by


def parse_exit_code(text: str) -> tuple[int | None, str]:
    """sacct ExitCode 'return:signal' -> (return code, signal number as text or '').
    '1:0' is a plain exit 1. '0:9' is a process killed by signal 9 (often the OOM killer): it has no
    exit code, so (None, '9'), as `sacct --json` says it. A second part above 64 is not a signal but a
    Slurm marker (0:125 on OUT_OF_MEMORY, 0:53 on some cancels): (None, '')."""
    text = (text or "").strip()
    if not text:
        return None, ""
    match = re.fullmatch(r"(\d+)(?::(\d+))?", text)
    if not match:
        raise SlurmRecordError(f"ExitCode '{text}' is not 'return:signal'")
    code, signal = int(match.group(1)), int(match.group(2) or 0)
    if signal:
        return None, str(signal) if signal <= 64 else ""
    return code, ""


def gpus_from_tres(text: str) -> int | None:
    """GPUs in a TRES string ('cpu=8,gres/gpu=4,mem=64G' or 'gres/gpu:a100=8'); None if it has no GPU.
    The untyped `gres/gpu` is the total when present; otherwise the typed counts are summed."""
    total, typed = None, 0
    for item in (text or "").split(","):
        name, _, count = item.strip().partition("=")
        match = _GPU_TRES.match(name.strip())
        if not match:
            continue
        try:
            number = int(count)
        except ValueError:
            raise SlurmRecordError(f"TRES '{item}' has no GPU count") from None
        if match.group("type"):
            typed += number
        else:
            total = number
    return total if total is not None else (typed or None)


def gpus_from_gres(text: str) -> int | None:
    """GPUs in the older GRES columns (AllocGRES / ReqGRES): 'gpu:4', 'gpu:a100:4(IDX:0-3)', 'gpu:2,craynetwork:1'."""
    total = None
    for item in (text or "").split(","):
        match = re.match(r"^\s*gpu(?::[^:(]+)?:(\d+)", item)
        if match:
            total = (total or 0) + int(match.group(1))
    return total


def gpus_from_tres_list(items) -> int | None:
    """GPUs in sacct --json `tres.allocated` / `tres.requested` ([{type, name, count}, ...])."""
    if not isinstance(items, list):
        return None
    as_text = ",".join(f"{i.get('type')}/{i.get('name')}={_number(i.get('count'))}" for i in items
                       if isinstance(i, dict) and i.get("type") == "gres" and i.get("name"))
    return gpus_from_tres(as_text)


def parse_sacct_time(text: str) -> str | None:
    """sacct time text ('2026-11-16T08:00:00', 'Unknown', 'None') -> ISO text or None."""
    text = (text or "").strip()
    if text.lower() in _UNKNOWN_TIMES:
        return None
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise SlurmRecordError(f"time '{text}' is not YYYY-MM-DDTHH:MM:SS") from None
    return text


def _number(value):
    """A data_parser number: plain (21.08/22.05) or {"set", "infinite", "number"} (23.02+)."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        return value.get("number")
    return value


def _epoch(value) -> str | None:
    number = _number(value)
    if number in (None, 0, "") or isinstance(number, bool):
        return None
    if not isinstance(number, (int, float)):
        raise SlurmRecordError(f"time {value!r} is not a Unix timestamp")
    return datetime.fromtimestamp(number, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _first(value) -> str:
    """23.02+ gives state/status as a list of flags; 21.08 as one string."""
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return str(value or "")


# ---------------------------------------------------------------- one incarnation of a job

@dataclass
class _Run:
    """One sacct record (one incarnation of a job), normalised from either format."""
    job_id: str
    raw_id: str
    where: str
    state: str
    name: str = ""
    user: str = ""
    account: str = ""
    partition: str = ""
    cancelled_by: str = ""        # a user name
    cancelled_by_uid: str = ""    # what `CANCELLED by <uid>` printed
    exit_code: int | None = None
    exit_code_unknown: str = ""   # why there is no exit code when the source had one to give
    signal: str = ""
    submit: str | None = None
    start: str | None = None
    end: str | None = None
    gpus: int | None = None
    restarts: int = 0
    nodes: str = ""
    command: str = ""
    workdir: str = ""


def _is_step(job_id: str) -> bool:
    return "." in job_id


def _rejoin_submit_line(cells: list[str], header: list[str]) -> list[str]:
    """SubmitLine is printed as typed, `|` included (`sbatch --wrap "a | b"`): put its pieces back
    together when a row has more fields than the header. Any other surplus stays an error."""
    surplus = len(cells) - len(header)
    if surplus <= 0 or "SubmitLine" not in header:
        return cells
    at = header.index("SubmitLine")
    return cells[:at] + ["|".join(cells[at:at + surplus + 1])] + cells[at + surplus + 1:]


def _cancelled_by(by: str, row_user: str, row_uid: str) -> tuple[str, str]:
    """(user name, uid) of who cancelled, from `CANCELLED by <uid>`: the name is known when the uid
    is the job's own (the UID column) or 0 (root). --json gives the name (`kill_request_user`)."""
    if not by.isdigit():
        return by, ""
    if by == "0":
        return "root", by
    return (row_user if row_uid and by == row_uid else ""), by


def runs_from_parsable2(lines: Iterable[str]) -> Iterator[_Run | Rejected]:
    """Records of `sacct --parsable2` text (first line = header)."""
    header: list[str] | None = None
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        cells = line.split("|")
        if header is None:
            header = [c.strip() for c in cells]
            missing = {"JobID", "State"} - set(header)
            if missing:
                yield Rejected(f"sacct line {number}", "the header line must name the columns (sacct --parsable2 "
                                                      f"prints one); missing {', '.join(sorted(missing))}")
                return
            continue
        where = f"sacct line {number}"
        cells = _rejoin_submit_line(cells, header)
        if len(cells) != len(header):
            yield Rejected(where, f"has {len(cells)} fields, the header has {len(header)}")
            continue
        row = dict(zip(header, cells))
        job_id = row["JobID"].strip()
        if not job_id:
            yield Rejected(where, "JobID is empty")
            continue
        if _is_step(job_id):
            continue
        try:
            state, by = parse_state(row["State"])
            exit_code, signal = parse_exit_code(row.get("ExitCode", ""))
            gpus = gpus_from_tres(row.get("AllocTRES", ""))
            if gpus is None:
                gpus = gpus_from_tres(row.get("ReqTRES", ""))
            if gpus is None:
                gpus = gpus_from_gres(row.get("AllocGRES", "") or row.get("ReqGRES", ""))
            restarts = row.get("Restarts", "").strip()
            user = row.get("User", "").strip()
            cancelled_by, cancelled_by_uid = _cancelled_by(by, user, row.get("UID", "").strip())
            yield _Run(job_id=job_id, raw_id=row.get("JobIDRaw", "").strip() or job_id,
                       name=row.get("JobName", "").strip(), user=user,
                       account=row.get("Account", "").strip(), partition=row.get("Partition", "").strip(),
                       state=state, cancelled_by=cancelled_by, cancelled_by_uid=cancelled_by_uid,
                       exit_code=exit_code, signal=signal,
                       submit=parse_sacct_time(row.get("Submit", "")), start=parse_sacct_time(row.get("Start", "")),
                       end=parse_sacct_time(row.get("End", "")), gpus=gpus,
                       restarts=int(restarts) if restarts.isdigit() else 0, nodes=row.get("NodeList", "").strip(),
                       command=row.get("SubmitLine", "").strip(), workdir=row.get("WorkDir", "").strip(),
                       where=f"{where} (job {job_id})")
        except SlurmRecordError as exc:
            yield Rejected(f"{where} (job {job_id})", str(exc))


def slurm_version(document) -> tuple[tuple[int, int] | None, str]:
    """((major, minor), release text) of the Slurm that wrote a `sacct --json` document, from its
    `meta` (`meta.Slurm` before 23.02, `meta.slurm` after; numbers or digit strings); (None, '') if absent."""
    meta = document.get("meta") if isinstance(document, dict) else None
    for key in ("slurm", "Slurm"):
        block = meta.get(key) if isinstance(meta, dict) else None
        version = block.get("version") if isinstance(block, dict) else None
        if isinstance(version, dict):
            try:
                major, minor = int(version.get("major")), int(version.get("minor"))
            except (TypeError, ValueError):
                continue
            release = str(block.get("release") or f"{major}.{minor:02d}")
            return (major, minor), release
    return None, ""


def runs_from_json(document) -> Iterator[_Run | Rejected]:
    """Records of a decoded `sacct --json` document ({"jobs": [...]})."""
    jobs = document.get("jobs") if isinstance(document, dict) else None
    if not isinstance(jobs, list):
        yield Rejected("sacct --json", "has no 'jobs' list: is this `sacct --json` output?")
        return
    version, release = slurm_version(document)
    for index, job in enumerate(jobs):
        where = f"jobs[{index}]"
        try:
            if not isinstance(job, dict):
                raise SlurmRecordError("is not an object")
            yield _run_from_json(job, where, version, release)
        except (SlurmRecordError, TypeError, ValueError, AttributeError) as exc:
            yield Rejected(where, str(exc) or type(exc).__name__)


def _exit_from_json(exit_info, state: str, trusted: bool, release: str) -> tuple[int | None, str, str]:
    """(exit code, signal, why the exit code is unknown) of a --json `exit_code` object."""
    if not isinstance(exit_info, dict):
        if exit_info in (None, ""):
            return None, "", ""
        return (*parse_exit_code(str(exit_info)), "")
    signal = ""
    sig = exit_info.get("signal") or {}
    if isinstance(sig, dict):
        number = _number(sig.get("id", sig.get("signal_id")))
        signal = str(number) if number and 0 < int(number) <= 64 else ""
    status = _first(exit_info.get("status")).upper()
    code = _number(exit_info.get("return_code"))
    if signal or status == "SIGNALED":
        return None, signal, ""  # killed: no exit code (23.02+ prints return_code 0 beside the signal)
    if not trusted and state != "COMPLETED":  # COMPLETED is exit 0 by definition
        return None, "", f"sacct --json of Slurm {release or 'before 23.02'} reports every exit code as 0"
    return (int(code) if code is not None else None), "", ""


def _run_from_json(job: dict, where: str, version: tuple[int, int] | None = None, release: str = "") -> _Run:
    raw_id = _number(job.get("job_id"))
    if raw_id in (None, ""):
        raise SlurmRecordError("has no job_id")
    raw_id = str(raw_id)
    array = job.get("array") or {}
    array_job, task = _number(array.get("job_id")), _number(array.get("task_id"))
    job_id = f"{array_job}_{task}" if array_job and task is not None else raw_id
    where = f"{where} (job {job_id})"
    state_field = job.get("state") or {}
    current = state_field.get("current") if isinstance(state_field, dict) else state_field
    state, _ = parse_state(_first(current))
    # Without a version in `meta`, the schema tells: 23.02+ gives the state as a list.
    trusted = version >= JSON_EXIT_CODES_FROM if version else isinstance(current, list)
    exit_code, signal, unknown = _exit_from_json(job.get("exit_code"), state, trusted, release)
    times = job.get("time") or {}
    tres = job.get("tres") or {}
    gpus = gpus_from_tres_list(tres.get("allocated"))
    if gpus is None:
        gpus = gpus_from_tres_list(tres.get("requested"))
    association = job.get("association") or {}
    restarts = _number(job.get("restart_cnt")) or 0
    killer = str(job.get("kill_request_user") or "") if state == "CANCELLED" else ""
    return _Run(job_id=job_id, raw_id=raw_id, name=str(job.get("name") or ""),
                user=str(job.get("user") or association.get("user") or ""),
                account=str(job.get("account") or association.get("account") or ""),
                partition=str(job.get("partition") or ""), state=state,
                cancelled_by=killer, exit_code=exit_code, exit_code_unknown=unknown, signal=signal,
                submit=_epoch(times.get("submission")), start=_epoch(times.get("start")),
                end=_epoch(times.get("end")), gpus=gpus, restarts=int(restarts),
                nodes=str(job.get("nodes") or ""), command=str(job.get("submit_line") or ""),
                workdir=str(job.get("working_directory") or ""), where=where)


# ---------------------------------------------------------------- runs -> jobs

def jobs_from_runs(runs: Iterable[_Run | Rejected], logs: "LogIndex | None" = None) -> Iterator[Adapted | Rejected | Skipped]:
    """Group incarnations by job id (sacct -D prints one per requeue) and build each job."""
    grouped: "OrderedDict[str, list[_Run]]" = OrderedDict()
    for run in runs:
        if isinstance(run, Rejected):
            yield run
        else:
            grouped.setdefault(run.job_id, []).append(run)
    for job_id, incarnations in grouped.items():
        try:
            yield _job(job_id, incarnations, logs)
        except SlurmRecordError as exc:
            yield Rejected(incarnations[-1].where, str(exc))


NO_NODES = ("None assigned", "(null)")


def _job(job_id: str, runs: list[_Run], logs: "LogIndex | None") -> Adapted | Skipped:
    for run in runs:
        if run.nodes == "None assigned":
            run.start = None   # never ran: 22.05 prints Start = End for a job cancelled while held
    runs = sorted(runs, key=lambda r: (r.start or r.submit or "", r.end or ""))
    last = runs[-1]
    status = STATUSES.get(last.state)
    if status is None:
        return Skipped(last.where, f"state {last.state} is not a finished job")
    if last.state == "CANCELLED" and not any(r.start for r in runs):
        return Skipped(last.where, "cancelled before it started: nothing ran, nothing to triage")
    attempts = []
    for run in runs:
        if run.start is None and run is not last:
            continue  # an incarnation that never ran cost nothing
        attempts.append({"started_at": run.start, "ended_at": run.end, "gpus": run.gpus or 0,
                         "exit_code": run.exit_code,
                         "status": ATTEMPT_STATUSES.get(run.state, run.state.lower())})
    metadata = {
        "platform": PLATFORM, "external_id": job_id, "status": status, "name": last.name,
        "submitter": last.user, "team": last.account, "submitted_at": runs[0].submit,
        "started_at": next((r.start for r in runs if r.start), None), "ended_at": last.end,
        "gpus": max((r.gpus or 0 for r in runs), default=0), "exit_code": last.exit_code,
        "signal": last.signal or None, "command": last.command or None, "attempts": attempts,
        "slurm_state": last.state, "slurm_job_id_raw": last.raw_id,
    }
    if last.partition:
        metadata["partition"] = last.partition
    if last.nodes and last.nodes not in NO_NODES:
        metadata["nodes"] = last.nodes
    if last.cancelled_by or last.cancelled_by_uid:
        metadata["cancelled_by"] = last.cancelled_by or last.cancelled_by_uid   # a name when known
    if last.cancelled_by_uid:
        metadata["cancelled_by_uid"] = last.cancelled_by_uid
    if last.exit_code is None and last.exit_code_unknown:
        metadata["exit_code_unknown"] = last.exit_code_unknown
    # Requeues sacct reports but did not print as their own records (no -D): counted, times unknown.
    unseen = max(last.restarts - (len(runs) - 1), 0)
    if unseen:
        metadata["requeues_without_times"] = unseen
    if last.workdir:
        metadata["workdir"] = last.workdir
    metadata = {k: v for k, v in metadata.items() if v not in (None, "")}
    found = logs.find(job_id, last.raw_id) if logs is not None else ()
    return Adapted(last.where, metadata, found)


def read_sacct(text_or_lines, fmt: str, logs: LogIndex | None = None) -> Iterator[Adapted | Rejected | Skipped]:
    """Jobs from sacct output. `fmt` is 'json' or 'parsable2'; 'auto' looks at the first character."""
    if fmt == "auto":
        text = text_or_lines if isinstance(text_or_lines, str) else "".join(text_or_lines)
        fmt, text_or_lines = ("json" if text.lstrip().startswith("{") else "parsable2"), text
    if fmt == "json":
        text = text_or_lines if isinstance(text_or_lines, str) else "".join(text_or_lines)
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as exc:
            yield Rejected("sacct --json", f"invalid JSON: {str(exc)[:200]}")
            return
        yield from jobs_from_runs(runs_from_json(document), logs)
    elif fmt == "parsable2":
        lines = text_or_lines.splitlines() if isinstance(text_or_lines, str) else text_or_lines
        yield from jobs_from_runs(runs_from_parsable2(lines), logs)
    else:
        raise ValueError(f"unknown sacct format {fmt!r}: use json or parsable2")
