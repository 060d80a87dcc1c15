"""Prefixes that a log's collector puts on every line, rewritten to the forms the parser reads (tagging:2026-11k).

The program printed a traceback; what reaches us is often that traceback as a collector wrote it down:

- Docker's json-file logging driver (the default; also Kubernetes nodes on dockershim, and Fluentd / Fluent Bit
  records): '{"log":"Traceback ...\\n","stream":"stderr","time":"..."}', one record per printed line;
- containerd / CRI-O log files (what Fluent Bit, Filebeat and Vector ship from /var/log/pods):
  "2024-05-01T10:00:00.123456789Z stderr F Traceback ..." (time, stream, F for a full line, P for a partial one),
  and `kubectl logs --timestamps` / `docker logs -t`: "2024-05-01T10:00:00.123456789Z Traceback ...";
- `kubectl logs --prefix`: "[pod/train-worker-0/pytorch] Traceback ...";
- Open MPI's --tag-output as SageMaker runs it: "[1,mpirank:3,algo-2]<stderr>:Traceback ...";
- Ray's relayed worker output: "(RayTrainWorker pid=1193, ip=10.244.4.193) Traceback ...", "(raylet) ...", and its
  deduplication suffix " [repeated 7x across cluster]";
- Docker Compose ("trainer-1  | ..."), pm2 ("0|train  | ...") and pdsh, through which DeepSpeed's multi-node runner
  launches ("node2: ...", read only when one host prefix is on several lines).

Each line is rewritten on its own (line numbers stay those of the stored log): a collector's prefix becomes nothing,
or the form the parser already reads (Open MPI's "[1,3]<stderr>: ", which keeps the rank), and a
line left with only a prefix and no words becomes blank, as the program printed it. Host names in the prefixes are
read from the lines as stored (nodes.py), not from these.
"""
from __future__ import annotations

import json
import re
from collections import Counter

from .logread import clean_line
from .nodes import PDSH_PREFIX
from .tracebacks import LAUNCHER_PREFIX, strip_launcher_prefixes

# The collector's clock, not the program's (which a parser reads as the start of a new record): CRI's time, stream
# and tag, or the RFC 3339 nanosecond time that kubectl --timestamps and docker logs -t print.
_COLLECTOR_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [FP](?: |$)"
                             r"|^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(?:Z|[+-]\d\d:\d\d)(?: |$)")
# Open MPI's --tag-output ("[1,3]<stderr>:", Horovod's too; SageMaker's "[1,mpirank:3,algo-2]<stderr>:") is
# followed by the line as printed, with no space: the parser's prefix would eat a space of a frame's indentation.
_OPEN_MPI = re.compile(r"^\[(\d+),(?:mpirank:)?(\d+)(?:,[^\]\s]+)?\]<(stdout|stderr)>:")
_DROPPED = re.compile(
    r"^\[pod/[^/\]\s]+/[^\]\s]+\] ?"                                  # kubectl logs --prefix
    r"|^\((?:[\w.:<>-]+ )?pid=\d+(?:, ip=[\w.:-]+)?\) ?"              # Ray worker / actor / task
    r"|^\((?:raylet|gcs_server|dashboard_agent|monitor|autoscaler(?: \+[\w.]+)?)(?:, ip=[\w.:-]+)?\) ?"  # Ray daemons
    r"|^[A-Za-z0-9][\w.-]*[-_]\d+\s+\| ?"                             # Docker Compose "service-1  | "
    r"|^\d+\|[\w.-]+\s*\| ?")                                         # pm2 "0|app  | "
_ANY = re.compile("|".join(f"(?:{p.pattern})" for p in (_OPEN_MPI, _COLLECTOR_TIME, _DROPPED)))
_RAY_REPEATED = re.compile(r" \[repeated \d+x across cluster\]$")
_PDSH = re.compile(PDSH_PREFIX)
_PDSH_MIN_LINES = 3
_MAYBE_BARE_PREFIX = 40   # longer lines always hold words
_PREFIX_ENDS = (":", "|")   # how a launcher's prefix ends


def canonical_lines(lines: list[str]) -> list[str]:
    """The lines with collectors' prefixes rewritten (one output line per input line); `lines` itself when none
    was."""
    pdsh = Counter(m.group(1) for line in lines if line[:1].islower() and (m := _PDSH.match(line)))
    pdsh_hosts = {host for host, count in pdsh.items() if count >= _PDSH_MIN_LINES}
    out, changed = [], False
    for line in lines:                 # most lines carry no collector's prefix: one anchored match each
        if pdsh_hosts or _ANY.match(line) or line.startswith('{"') or line.endswith("across cluster]"):
            new = _canonical(line, pdsh_hosts)
        else:
            new = "" if _bare_prefix(line) else line
        changed = changed or new != line
        out.append(new)
    return out if changed else lines   # the same list when nothing was rewritten


def _canonical(line: str, pdsh_hosts: set[str]) -> str:
    if line.startswith('{"') and line.endswith("}"):
        line = _json_record(line)
    if line.startswith("[") and (m := _OPEN_MPI.match(line)):   # once: the space it adds is not the program's
        rest = line[m.end():]
        return f"[{m.group(1)},{m.group(2)}]<{m.group(3)}>: {rest}" if rest.strip() else ""
    for _ in range(3):             # kubectl's prefix before CRI's, a Ray prefix inside a pod's line
        before = line
        line = _COLLECTOR_TIME.sub("", line, count=1)
        line = _DROPPED.sub("", line, count=1)
        if pdsh_hosts and (m := _PDSH.match(line)) and m.group(1) in pdsh_hosts:
            line = line[m.end():]
        if line == before:
            break
    if line.endswith("across cluster]"):
        line = _RAY_REPEATED.sub("", line)
    return "" if _bare_prefix(line) else line


def _bare_prefix(line: str) -> bool:
    """A launcher's rank prefix with nothing after it ("[rank1]:", "[1,3]<stderr>: ", "worker-0 |")."""
    return len(line) < _MAYBE_BARE_PREFIX and line.rstrip()[-1:] in _PREFIX_ENDS and bool(
        LAUNCHER_PREFIX.fullmatch(line.rstrip() + " "))


def _json_record(line: str) -> str:
    """The printed line of a json-file record ({"log": ..., "stream": ...}); other JSON lines as they are."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    text = record.get("log") if isinstance(record, dict) and "stream" in record else None
    return clean_line(text.replace("\n", " ")) if isinstance(text, str) else line   # as a plain log's line is read


# A log pasted into an issue, a ticket or a mail is often quoted whole ("> Traceback ...", a bare ">" for a blank
# line): Markdown's and e-mail's blockquote. Read only where most lines are quoted, as a collector's prefix is on
# every line; a Python prompt (">>> ") is not a quote.
_QUOTE = re.compile(r"^>(?:[ \t]|$)")


def unquoted(lines: list[str]) -> list[str]:
    """The lines without one level of blockquote ("> ", ">") where at least half of the non-blank ones carry it;
    `lines` itself otherwise."""
    quoted = sum(1 for line in lines if _QUOTE.match(line))
    if not quoted or 2 * quoted < sum(1 for line in lines if line.strip()):
        return lines
    return [_QUOTE.sub("", line, count=1) for line in lines]


def launcher_bodies(lines: list[str]) -> list[str]:
    """The lines without the launchers' rank prefixes ("[rank0]: ", "[1,0]<stderr>:", srun's "3: "), for reading
    the last words of a log with no parsed failure; a record's time and level stay."""
    return [strip_launcher_prefixes(line) for line in lines]
