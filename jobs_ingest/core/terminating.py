"""Choose the failure that ended the job among those a log shows: the last one, unless it is only
the shell's death notice of a failure printed just before, or a wrapper (torchrun's ChildFailedError,
subprocess errors, multiprocessing re-raises) around a child's failure, whose root error (on the
rank torchrun names as the root cause) is then the answer.
"""
from __future__ import annotations

import re

from .tracebacks import LogFailure

# The shell's or the C runtime's report of a process dying; it explains nothing when a failure
# was printed just before it (terminate called ... / a traceback, then "Aborted (core dumped)").
_DEATH_REPORT = re.compile(r"^(?:Aborted|Segmentation fault|Bus error)\b|core dumped", re.I)


def terminating_failure(failures: list[LogFailure], lines: list[str]) -> LogFailure | None:
    """The failure that ended the job: the last one, unless it only wraps a child's failure."""
    if not failures:
        return None
    failures = [f for f in failures if not f.suppressed] or failures
    while (len(failures) > 1 and failures[-1].kind == "Fatal" and _DEATH_REPORT.search(failures[-1].message)
           and failures[-1].line_index - failures[-2].line_index <= 40):
        failures = failures[:-1]
    last = failures[-1]
    if not last.is_wrapper:
        return last
    root_rank = _root_cause_rank(lines, last.line_index)
    earlier = [f for f in failures[:-1] if not f.is_wrapper]
    if root_rank:
        ranked = [f for f in earlier if f.rank == root_rank]
        earlier = ranked or earlier
    if earlier:
        return earlier[-1]
    return last


_ROOT_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)")


def _root_cause_rank(lines: list[str], start: int) -> str:
    """The rank named in torchrun's "Root Cause (first observed failure)" section, if present."""
    in_root = False
    for line in lines[start:start + 60]:
        if "Root Cause" in line:
            in_root = True
        elif in_root:
            m = _ROOT_RANK.match(line)
            if m:
                return m.group(1)
    return ""


def root_cause_exit_code(lines: list[str], start: int) -> int | None:
    """Exit code from torchrun's root-cause section (-9 means the rank was SIGKILLed)."""
    for line in lines[start:start + 60]:
        # "exitcode  : -9" on its own line, or glued to the rank when the summary is flattened.
        m = re.search(r"(?:^|[\s)])exitcode\s*:\s*(-?\d+)", line)
        if m:
            return int(m.group(1))
    return None
