"""Find every failure a log shows (the study's "error evidence"): Python tracebacks and exception
lines, fatal native and launcher errors, argparse usage errors, OOM kills, and exceptions only named
inside a line; and mark or drop what did not end the job (warnings, exceptions ignored in
destructors, handled and retried errors). terminating.py then chooses the one that ended it.
"""
from __future__ import annotations

import re

from .tracebacks import (CHAIN_MARKERS, EXCEPTION_LINE, FRAME, IGNORED_BLOCK, IPY_FRAME, TRACEBACK_HEADER, Frame,
                         LogFailure, parse_traceback, rank_of, starts_record, strip_prefixes)

_SYNTAX_TYPES = ("SyntaxError", "IndentationError", "TabError")
_RETRIED = re.compile(r"\bretry(?:ing)?\b|will retry|attempt \d+ of \d+|retrying in", re.I)

# Native and launcher errors that end a job without a Python exception line.
_NATIVE = [
    (re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'"), "cpp"),
    (re.compile(r"slurmstepd: error: .*oom[-_ ]kill", re.I), "OOMKilled"),
    (re.compile(r"\bOOMKilled\b|Memory cgroup out of memory|Out of memory: Killed process", re.I), "OOMKilled"),
    (re.compile(r"(?:^|\s)Killed(?:\s+\S.*)?$|\bkilled by signal: Killed\b|Signal 9 \(SIGKILL\)"
                # IDEs and shells report a SIGKILLed process by its exit status (128 + 9).
                r"|\bexit(?:ed with)? code 137\b|interrupted by signal 9\b"), "Killed"),
    (re.compile(r"^(?:Fatal Python error: .*|Segmentation fault.*|Bus error.*|Aborted \(core dumped\).*)$"), "Fatal"),
    (re.compile(r"^F\d{4} .*\] .*|Check failed: .*"), "CheckFailed"),
    # argparse's "prog: error: message"; prog is the script, or any `prog=` name (it may hold spaces).
    (re.compile(r"^(?P<prog>[\w./-]+\.py|[\w.-]+|[\w.-][\w. /-]{0,60}?): error: (?P<msg>.+)$"), "argparse"),
    (re.compile(r"^(?:/bin/\w+|bash|sh): (?:line \d+: )?\S+: (?:command not found|No such file or directory)$"), "Shell"),
    (re.compile(r"\bloss\b[^\n]{0,40}\b(?:nan|inf)\b[^\n]{0,60}\b(?:stop|abort|exit|terminat|diverg|halt)", re.I), "LossNaN"),
    # CUDA errors logged as plain text (`print(e)`, `logger.error(str(e))`, C++ launchers): the
    # message of torch's OOM / CUDA runtime errors without an exception type in front.
    (re.compile(r"^(?:CUDA out of memory\.|CUDA error: \w|cuda runtime error \(\d+\) ?: \w|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+"
                r"|[Cc][Uu][Dd][Aa] failed with error \d+)"), "CudaError"),
    # The interpreter itself: `python train.py` run from the wrong folder never starts the script.
    (re.compile(r"^\S*?python[\d.]*(?:\.exe)?:? can't open file\b"), "FileNotFoundError"),
]
# Something every _NATIVE pattern needs, checked first: most lines of a long log are training
# progress, and one search per line is much cheaper than eleven.
_NATIVE_HINTS = ("terminate called", "slurmstepd", "oom", "out of memory", "killed", "signal 9", "fatal",
                 "segmentation", "bus error", "aborted", "check failed", ": error: ", "command not found",
                 "no such file", "cuda", "cublas", "cudnn", "can't open file")


def _native_hint(line: str) -> bool:
    lower = line.lower()
    return (any(h in lower for h in _NATIVE_HINTS) or line[:1] == "F"
            or "loss" in lower and ("nan" in lower or "inf" in lower))
# Lua (Torch7) errors: "<interpreter>: <file>.lua:<line>: <message>" followed by "stack traceback:".
_LUA_TRACEBACK = "stack traceback:"
_LUA_INTERPRETER = re.compile(r"^\S*?(?:lua\w*|th|luajit): ")
# A logger's warning line right before a traceback: the traceback was logged, not raised
# (logger.warning(..., exc_info=True)); it did not end the job unless nothing else did.
_WARNING_LEVELS = ("WARN", "WARNING")
# An exception named inside a line rather than at its start: "报错：ImportError: ...",
# pytest's "E   ValueError: ...", "[stderr] KeyError: 'x'". Used only when nothing else is found.
_EMBEDDED_EXCEPTION = re.compile(
    r"(?:^|[\s:：>\]|)])(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)):\s(?P<msg>\S.*)$")


def find_failures(lines: list[str]) -> list[LogFailure]:
    """All candidate failures in order of appearance, chained exceptions folded into the last one.

    When several ranks print at once (torchrun, srun --label, mpirun --tag-output) their lines
    interleave; each rank's lines (and the unprefixed ones) are then parsed on their own, so every
    traceback is read whole, and indices are mapped back to the log's lines."""
    ranks = [rank_of(line) for line in lines]
    if len(set(ranks) - {""}) < 2:
        return _find_failures(lines)
    groups: dict[str, list[int]] = {}
    for k, rank in enumerate(ranks):
        groups.setdefault(rank, []).append(k)
    failures: list[LogFailure] = []
    for indices in groups.values():
        for f in _find_failures([lines[k] for k in indices]):
            for g in (f, *f.chain):
                g.line_index, g.start_index = indices[g.line_index], indices[g.start_index]
            failures.append(f)
    failures.sort(key=lambda f: f.line_index)
    return failures


def _find_failures(lines: list[str]) -> list[LogFailure]:
    parsed = [strip_prefixes(line) for line in lines]
    bodies = [p[0] for p in parsed]
    records = [starts_record(line, p[1]) for line, p in zip(lines, parsed)]
    ranks = [p[2] for p in parsed]
    failures: list[LogFailure] = []
    covered: set[int] = set()
    i, n = 0, len(bodies)
    pending_chain: list[LogFailure] = []
    ignored_until = -10  # index of the last "Exception ignored in" line
    while i < n:
        body = bodies[i]
        if IGNORED_BLOCK.match(body):
            ignored_until = i + 1  # the traceback that follows was ignored by Python
        if TRACEBACK_HEADER.match(body):
            failure, end = parse_traceback(bodies, i, records, ranks)
            if failure is not None:
                covered.update(range(i, end))
                failure.rank = parsed[failure.line_index][2]
                if i <= ignored_until + 1:
                    pass  # an "Exception ignored in ..." block: not what ended the job
                else:
                    failure.suppressed = _after_warning(parsed, i)
                    chained = any(c in bodies[k] for k in range(end, min(end + 3, n)) for c in CHAIN_MARKERS)
                    if chained:
                        pending_chain.append(failure)
                    else:
                        failure.chain, pending_chain = pending_chain, []
                        failures.append(failure)
                i = max(end, i + 1)
                continue
        i += 1
    if pending_chain:  # a chain whose last traceback we could not read: keep what we have
        last = pending_chain.pop()
        last.chain = pending_chain
        failures.append(last)

    # Exception lines and native errors outside any parsed traceback.
    for k, (body, level, rank) in enumerate(parsed):
        if k in covered or not body:
            continue
        stripped = body.strip()
        m = EXCEPTION_LINE.match(stripped) if not body[:1].isspace() else None
        if m and m.group("msg") is not None and (not _looks_like_prose(m.group("type"))
                                                 or _after_rich_box(bodies, k)):
            failure = LogFailure(m.group("type"), (m.group("msg") or "").strip(), k, k, rank=rank)
            if failure.short_type in _SYNTAX_TYPES:
                _attach_syntax_location(failure, bodies)
            failures.append(failure)
            continue
        if k + 1 < n and bodies[k + 1].strip() == _LUA_TRACEBACK:
            failures.append(LogFailure("LuaError", _LUA_INTERPRETER.sub("", stripped, count=1), k, k,
                                    kind="lua", rank=rank))
            continue
        if not _native_hint(stripped):
            continue
        for pattern, kind in _NATIVE:
            nm = pattern.search(stripped)
            if not nm:
                continue
            if kind == "cpp":
                what = _what_line(bodies, k)
                failures.append(LogFailure(nm.group("type"), what, k, k, kind="cpp", rank=rank))
            elif kind == "argparse":
                if not _is_argparse(bodies, k) and not _ARGPARSE_MESSAGE.match(nm.group("msg")):
                    continue
                failures.append(LogFailure("argparse.ArgumentError", nm.group("msg"), k, _usage_start(bodies, k),
                                        kind="argparse", rank=rank))
            else:
                failures.append(LogFailure(kind, stripped, k, k, kind=kind, rank=rank))
            break
    if not failures:
        failures = _embedded_failures(parsed)
    failures.sort(key=lambda f: f.line_index)
    for f in failures:
        # "optional dependency missing, falling back to the slow path" right after it: handled.
        # (A cue line ending in ":" or naming a traceback introduces the next one instead.)
        if f.kind == "python" and any(_HANDLED_CUE.search(b) and not b.rstrip().endswith(":")
                                      and "traceback" not in b.lower()
                                      for b in _lines_after(f, bodies, 2)):
            f.suppressed = True
    return [f for f in failures if not _is_retried(f, bodies)]


def _after_warning(parsed: list[tuple[str, str, str]], k: int) -> bool:
    """Is the line before the traceback at `k` (the logger's message) a warning, or a message saying
    the program handled it ("Could not load checkpoint, starting from scratch:")?"""
    for j in range(k - 1, max(-1, k - 3), -1):
        if parsed[j][0].strip():
            body = parsed[j][0].rstrip()
            return parsed[j][1] in _WARNING_LEVELS or body.endswith(":") and bool(_HANDLED_CUE.search(body))
    return False


_HANDLED_CUE = re.compile(r"\b(?:continuing|ignor(?:e|ed|ing)|skipp(?:ed|ing)|from scratch|fall(?:ing)? ?back"
                          r"|retrying|using (?:the )?defaults?)\b", re.I)


def _after_rich_box(bodies: list[str], k: int) -> bool:
    """A rich-style traceback box ended just before line `k`: the line is its exception, even
    when its type is a bare `Exception` (as raised by tokenizers and many Rust bindings)."""
    for j in range(k - 1, max(-1, k - 3), -1):
        if bodies[j].strip():
            return bodies[j].lstrip().startswith("╰")
    return False


def _embedded_failures(parsed: list[tuple[str, str, str]]) -> list[LogFailure]:
    found = []
    for k, (body, level, rank) in enumerate(parsed):
        head = body[:MAX_EMBEDDED_SCAN]
        m = _OP_REQUIRES.search(head)
        if m:  # TF's kernel log of the status its Python exception will carry (even at W level)
            etype = "".join(w.capitalize() for w in m.group("status").split()) + "Error"
            found.append(LogFailure(etype, m.group("msg").strip(), k, k, kind="embedded", rank=rank))
            continue
        if _STATE_DICT_BODY.match(head):
            found.append(LogFailure("RuntimeError", head.strip(), k, k, kind="embedded", rank=rank))
            continue
        if level in _WARNING_LEVELS or "Error" not in body and "Exception" not in body:
            continue
        m = _EMBEDDED_EXCEPTION.search(head)
        if m and not _looks_like_prose(m.group("type")):
            found.append(LogFailure(m.group("type"), m.group("msg").strip(), k, k, kind="embedded", rank=rank))
        elif (m := _REPR_EXCEPTION.search(head)) and not _looks_like_prose(m.group("type")):
            found.append(LogFailure(m.group("type"), m.group("msg").strip(), k, k, kind="embedded", rank=rank))
        elif (m := _BARE_EXCEPTION.match(head)) and not _HANDLED_CUE.search(head) and not _RETRIED.search(head):
            found.append(LogFailure("Exception", m.group("msg").strip(), k, k, kind="embedded", rank=rank))
    return found


# A logged repr of an exception: "error occurred in the train loop: RuntimeError('CUDA out of memory ...')".
_REPR_EXCEPTION = re.compile(
    r"(?:^|[\s:：>\]|)])(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))\((?P<msg>['\"]\S.*)$")
# Python's line for `raise Exception("...")` (the type alone reads like prose elsewhere in a log).
_BARE_EXCEPTION = re.compile(r"^Exception: (?P<msg>\S.*)$")
# TensorFlow logs a failing kernel's status before raising it: "OP_REQUIRES failed at
# save_restore_v2_ops.cc:109 : Permission denied: /models" (status names map to tf.errors classes).
_OP_REQUIRES = re.compile(r"OP_REQUIRES failed at \S+ : (?P<status>[A-Z][a-z]+(?: [a-z]+){0,3}): (?P<msg>.*)$")
# The body of load_state_dict's error quoted without its first line.
_STATE_DICT_BODY = re.compile(r"^\s*(?:Missing key\(s\) in state_dict: |Unexpected key\(s\) in state_dict: "
                              r"|size mismatch for [\w.]+: )")


MAX_EMBEDDED_SCAN = 2000


def _attach_syntax_location(failure: LogFailure, bodies: list[str]) -> None:
    """A SyntaxError printed without a traceback still names its place just above:
    '  File "model.py", line 3' (or '  Cell In[3], line 5'), the offending line and a caret."""
    k = failure.line_index
    for j in range(k - 1, max(-1, k - 6), -1):
        m = FRAME.match(bodies[j]) or IPY_FRAME.match(bodies[j].strip())
        if m:
            d = m.groupdict()
            code = next((b.strip() for b in bodies[j + 1:k] if b.strip() and b.strip()[:1] not in ("^", "~")), "")
            failure.frames = [Frame(d.get("file") or d.get("nbfile") or "<cell>",
                                    int(d.get("line") or d.get("cline") or 0), "", code[:300])]
            failure.start_index = j
            return


def _looks_like_prose(exc_type: str) -> bool:
    # "Error" or "Exception" alone at the start of a sentence is a log message, not an exception.
    return exc_type in ("Error", "Exception") or exc_type.lower().endswith("warning")


def _what_line(bodies: list[str], k: int) -> str:
    for body in bodies[k + 1:k + 4]:
        if "what():" in body:
            return body.split("what():", 1)[1].strip()
    return ""


# Messages only argparse prints: enough on their own when the usage lines were not quoted.
_ARGPARSE_MESSAGE = re.compile(r"unrecognized arguments: |the following arguments are required: "
                               r"|argument [-\w/]+: (?:invalid \w+ value|invalid choice|expected (?:one|\d+) argument)")


def _is_argparse(bodies: list[str], k: int) -> bool:
    return any(b.lstrip().startswith("usage:") for b in bodies[max(0, k - 30):k])


def _usage_start(bodies: list[str], k: int) -> int:
    for j in range(k, max(-1, k - 30), -1):
        if bodies[j].lstrip().startswith("usage:"):
            return j
    return k


def _is_retried(failure: LogFailure, bodies: list[str]) -> bool:
    """An error that the program caught and retried is followed by a retry message."""
    return failure.kind == "python" and any(_RETRIED.search(b) for b in _lines_after(failure, bodies, 3))


def _lines_after(failure: LogFailure, bodies: list[str], count: int) -> list[str]:
    """The `count` lines after the failure's message (its own continuation lines, such as TF's
    "0 derived errors ignored.", say nothing about whether the program went on)."""
    end = failure.line_index + max(1, len(failure.message.splitlines()))
    return bodies[end:end + count]
