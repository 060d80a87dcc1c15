"""Find the failure that terminated a job, in the lines of its log.

Follows the study's method: look for error evidence (Python tracebacks, exception lines, fatal native
errors, argparse usage errors, OOM kills), drop what did not end the job (warnings, exceptions ignored
in destructors, retried errors), then take the last failure, looking through wrappers (torchrun's
ChildFailedError, subprocess errors, multiprocessing re-raises) to the root error underneath.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Prefixes that launchers and loggers put before each line. Removed before parsing; the original
# line is kept for display. Applied repeatedly (a timestamp may precede a rank prefix).
_PREFIXES = [
    re.compile(r"^\[(?:rank|default)\d+\]:\s?"),                        # torchrun --tee / torch 2.x
    re.compile(r"^\[\d+,\d+\]<(?:stderr|stdout)>:\s?"),                  # Open MPI --tag-output
    re.compile(r"^\d{1,4}:\s(?=\S|\s{2,})"),                            # srun --label "3: "
    re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s?"),  # ISO time
    re.compile(r"^\[\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]\s?"),
    re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w.:-]+\]\s?"),  # glog (TF, XLA)
    re.compile(r"^(?:[\w.-]+-)?(?:worker|master|launcher|node)[-\d]*\s?\|\s?"),  # compose / kubeflow
]
# Upper-case or bracketed levels only: a lower-case "error: ..." is the exception line of a
# `cv2.error` / `socket.error` traceback, not a logger's level.
_ANY_PREFIX = re.compile("|".join(f"(?:{p.pattern})" for p in _PREFIXES))
_LEVEL = re.compile(r"^(?:\[(?i:(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL))\]|(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b)"
                    r"(?:\s*[:|-]\s*|\s+)")

TRACEBACK_HEADER = re.compile(
    r"^\s*(?:Original )?Traceback \(most recent call last\):?\s*$"
    r"|^(?P<nbtype>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)"
    # rich / typer / transformers pretty tracebacks: a box whose top border names it.
    r"|^\s*╭─+ Traceback \(most recent call last\) ─+╮\s*$")
_CHAIN_MARKERS = (
    "During handling of the above exception, another exception occurred",
    "The above exception was the direct cause of the following exception",
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
_IPY_FRAME = re.compile(r"^(?:File (?P<file>\S+?):(?P<line>\d+)(?:, in (?P<func>.+))?"
                        r"|Cell In\s*\[\d*\], line (?P<cline>\d+)|(?P<nbfile>\S+\.py) in (?P<nbfunc>.+))$")
_EXC_NAME = (r"(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault)"
             r"|StopIteration|KeyboardInterrupt|GeneratorExit|Exception|Error)")
EXCEPTION_LINE = re.compile(rf"^(?P<type>{_EXC_NAME})(?::\s?(?P<msg>.*)|\s*)$")
# At the end of a traceback Python prints "type: message" whatever the class is called
# (zipfile.BadZipFile, socket.timeout, re.error, tokenizers' bare Exception), so there any
# dotted identifier followed by a colon is the exception.
_TB_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*):(?:\s(?P<msg>.*))?$")
# A frame of a rich-style traceback: "│ /path/to/file.py:113 in from_pretrained          │".
_RICH_FRAME = re.compile(r"^\s*│\s*(?P<file>\S+?\.\w+):(?P<line>\d+) in (?P<func>\S+)\s*│?\s*$")
_RICH_BOX = ("│", "╭", "╰")
_IPY_ARROW = re.compile(r"^-*-> ?\s*\d+\s(.*)$")
_IPY_CONTEXT = re.compile(r"^\s+\d+\s")
_SYNTAX_TYPES = ("SyntaxError", "IndentationError", "TabError")
# Exception types that only wrap the real failure of a child process or worker.
WRAPPERS = re.compile(
    r"(?:^|\.)(?:ChildFailedError|CalledProcessError|ProcessRaisedException|ProcessExitedException"
    r"|SystemExit|BrokenProcessPool|WorkerError|RayTaskError|BackendCompilerFailed)$")
_WRAPPER_MESSAGES = re.compile(
    r"exits with return code|returned non-zero exit status|process \d+ terminated with"
    r"|failed \(exitcode: |Caught \w+ in DataLoader worker", re.I)
_IGNORED_BLOCK = re.compile(r"^(?:Exception ignored in|Error in atexit\._run_exitfuncs|Error in sys\.excepthook)")
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
# The shell's or the C runtime's report of a process dying; it explains nothing when a failure
# was printed just before it (terminate called ... / a traceback, then "Aborted (core dumped)").
_DEATH_REPORT = re.compile(r"^(?:Aborted|Segmentation fault|Bus error)\b|core dumped", re.I)
# An exception named inside a line rather than at its start: "报错：ImportError: ...",
# pytest's "E   ValueError: ...", "[stderr] KeyError: 'x'". Used only when nothing else is found.
_EMBEDDED_EXCEPTION = re.compile(
    r"(?:^|[\s:：>\]|)])(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)):\s(?P<msg>\S.*)$")


@dataclass
class Frame:
    file: str
    line: int
    function: str
    code: str = ""   # the source line Python printed under the frame, when it did

    def describe(self) -> str:
        tail = "/".join(self.file.replace("\\", "/").split("/")[-2:])
        return f"{tail}:{self.line} in {self.function}" if self.function else f"{tail}:{self.line}"


@dataclass
class Failure:
    """One candidate failure found in the log window (indices are into the window's lines)."""
    exception_type: str
    message: str
    line_index: int                     # the line stating the failure
    start_index: int                    # first line of its traceback (or the line itself)
    frames: list[Frame] = field(default_factory=list)
    chain: list["Failure"] = field(default_factory=list)  # earlier exceptions it was raised from
    kind: str = "python"                # python | cpp | argparse | OOMKilled | Killed | ... | exit_code
    rank: str = ""                      # rank prefix of the line, when the launcher added one
    suppressed: bool = False            # logged as a warning: terminal only if nothing else is

    @property
    def short_type(self) -> str:
        return self.exception_type.rsplit(".", 1)[-1]

    @property
    def is_wrapper(self) -> bool:
        return bool(WRAPPERS.search(self.exception_type)) or bool(
            self.kind == "python" and _WRAPPER_MESSAGES.search(self.message or "")
            and self.short_type in ("RuntimeError", "Exception", "ChildFailedError"))


_RANK = re.compile(r"^\[(?:rank|default)(\d+)\]:|^\[\d+,(\d+)\]<|^(\d{1,4}):\s")


def strip_prefixes(line: str) -> tuple[str, str, str]:
    """(body, level, rank) of a log line, with launcher and logger prefixes removed."""
    rank = ""
    m = _RANK.match(line)
    if m:
        rank = next(g for g in m.groups() if g is not None)
    for _ in range(8):
        m = _ANY_PREFIX.match(line)
        if not m or not m.end():
            break
        line = line[m.end():]
    level = ""
    m = _LEVEL.match(line)
    if m and not TRACEBACK_HEADER.match(line):
        level = (m.group(1) or m.group(2)).upper()
        line = line[m.end():]
    return line, level, rank


def _is_frame_line(body: str) -> bool:
    return (body.startswith((" ", "\t")) or bool(_IPY_FRAME.match(body)) or body.startswith(("---->", "-->"))
            or body.lstrip().startswith(_RICH_BOX))


def _parse_traceback(bodies: list[str], start: int,
                     records: list[bool] | None = None, ranks: list[str] | None = None) -> tuple[Failure | None, int]:
    """Parse the traceback whose header is at `start`. Returns (failure, index after it)."""
    header = TRACEBACK_HEADER.match(bodies[start])
    frames: list[Frame] = []
    i = start + 1
    n = len(bodies)
    while i < n:
        body = bodies[i]
        m = _FRAME.match(body) or _IPY_FRAME.match(body) or _RICH_FRAME.match(body)
        if m:
            d = m.groupdict()
            file = d.get("file") or d.get("nbfile") or "<cell>"
            line = int(d.get("line") or d.get("cline") or 0)
            func = (d.get("func") or d.get("nbfunc") or "").strip()
            frames.append(Frame(file, line, func))
        elif not body.strip() or _is_frame_line(body) or body.startswith("[Previous line repeated"):
            arrow = _IPY_ARROW.match(body)
            if frames and arrow:  # IPython marks the failing line of a frame with an arrow
                frames[-1].code = arrow.group(1).strip()[:300]
            elif (frames and not frames[-1].code and body.startswith("    ") and not _IPY_CONTEXT.match(body)
                  and body.strip()[:1] not in ("^", "~")):
                frames[-1].code = body.strip()[:300]
        elif body.startswith("-" * 10):
            pass
        else:
            break
        i += 1
    nbtype = header.group("nbtype") if header else None
    if nbtype and i < n and not bodies[i].startswith(nbtype):
        # IPython/Jupyter tracebacks name the type in their header and show frames in several
        # shapes (".so in f()", "~\\dir with spaces\\x.py in f()"): the exception line is the
        # first unindented one that starts with that type.
        for k in range(i, min(n, i + MAX_NOTEBOOK_TRACEBACK_LINES)):
            if bodies[k].startswith(nbtype) and bodies[k][len(nbtype):len(nbtype) + 1] in (":", ""):
                i = k
                break
            if TRACEBACK_HEADER.match(bodies[k]):
                break
    if i >= n:
        return None, i
    m = EXCEPTION_LINE.match(bodies[i].strip()) or _TB_EXCEPTION_LINE.match(bodies[i].strip())
    if not m:
        # A traceback ending in a line we cannot read as "Type: message" (e.g. a bare "Killed")
        # still tells us the job failed there; say what the line says.
        if header and header.group("nbtype"):
            return Failure(header.group("nbtype"), bodies[i].strip(), i, start, frames), i + 1
        return None, i
    message_lines = [m.group("msg") or ""]
    j = i + 1
    # Messages continue over following lines (TF, ChildFailedError, state_dict errors).
    while j < n and j - i < MAX_MESSAGE_LINES:
        body = bodies[j]
        # A new log record (timestamp, glog or level prefix, another rank's line) or the start of
        # another kind of failure is not part of this message.
        if records is not None and (records[j] or ranks[j] != ranks[i]) or _MESSAGE_END.match(body):
            break
        if (TRACEBACK_HEADER.match(body) or any(c in body for c in _CHAIN_MARKERS)
                or _IGNORED_BLOCK.match(body) or EXCEPTION_LINE.match(body.strip()) and not body[:1].isspace()):
            break
        # A blank line ends the message, unless the detail follows indented or the message so far
        # announces it ("Graph execution error:", "LookupError:" then the text below).
        if not body.strip() and (j + 1 >= n or not bodies[j + 1][:1].isspace()) and not (
                j == i + 1 and message_lines[-1].rstrip().endswith(":")):
            break
        message_lines.append(body)
        j += 1
    message = "\n".join(message_lines).strip()
    return Failure(m.group("type"), message, i, start, frames), j


_RECORD_PREFIX = re.compile("|".join(f"(?:{p.pattern})" for p in _PREFIXES[3:6]))
# Lines that start something else: another failure, or the launcher's own report of the exit
# ("srun: error: node-3: task 0: Exited with exit code 1", shell xtrace, the shell's death notices).
_MESSAGE_END = re.compile(r"^(?:usage:|terminate called after throwing|Exception ignored in|srun: |slurmstepd: "
                          r"|mpirun |\+ |[\w./-]+: error: |Killed$|Aborted|Segmentation fault)")


def _starts_record(line: str, level: str) -> bool:
    """Does this raw line start a new log record (its own timestamp, glog header or level)?"""
    if level:
        return True
    m = _RANK.match(line)
    rest = line[m.end():].lstrip() if m else line
    return bool(_RECORD_PREFIX.match(rest))


MAX_MESSAGE_LINES = 150           # TF "in user code:" messages carry a whole stack before the error
MAX_NOTEBOOK_TRACEBACK_LINES = 3000


def find_failures(lines: list[str]) -> list[Failure]:
    """All candidate failures in order of appearance, chained exceptions folded into the last one.

    When several ranks print at once (torchrun, srun --label, mpirun --tag-output) their lines
    interleave; each rank's lines (and the unprefixed ones) are then parsed on their own, so every
    traceback is read whole, and indices are mapped back to the log's lines."""
    ranks = [_rank_of(line) for line in lines]
    if len(set(ranks) - {""}) < 2:
        return _find_failures(lines)
    groups: dict[str, list[int]] = {}
    for k, rank in enumerate(ranks):
        groups.setdefault(rank, []).append(k)
    failures: list[Failure] = []
    for indices in groups.values():
        for f in _find_failures([lines[k] for k in indices]):
            for g in (f, *f.chain):
                g.line_index, g.start_index = indices[g.line_index], indices[g.start_index]
            failures.append(f)
    failures.sort(key=lambda f: f.line_index)
    return failures


def _rank_of(line: str) -> str:
    m = _RANK.match(line) if line[:1] in "[0123456789" else None
    return next((g for g in m.groups() if g is not None), "") if m else ""


def _find_failures(lines: list[str]) -> list[Failure]:
    parsed = [strip_prefixes(line) for line in lines]
    bodies = [p[0] for p in parsed]
    records = [_starts_record(line, p[1]) for line, p in zip(lines, parsed)]
    ranks = [p[2] for p in parsed]
    failures: list[Failure] = []
    covered: set[int] = set()
    i, n = 0, len(bodies)
    pending_chain: list[Failure] = []
    ignored_until = -10  # index of the last "Exception ignored in" line
    while i < n:
        body = bodies[i]
        if _IGNORED_BLOCK.match(body):
            ignored_until = i + 1  # the traceback that follows was ignored by Python
        if TRACEBACK_HEADER.match(body):
            failure, end = _parse_traceback(bodies, i, records, ranks)
            if failure is not None:
                covered.update(range(i, end))
                failure.rank = parsed[failure.line_index][2]
                if i <= ignored_until + 1:
                    pass  # an "Exception ignored in ..." block: not what ended the job
                else:
                    failure.suppressed = _after_warning(parsed, i)
                    chained = any(c in bodies[k] for k in range(end, min(end + 3, n)) for c in _CHAIN_MARKERS)
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
            failure = Failure(m.group("type"), (m.group("msg") or "").strip(), k, k, rank=rank)
            if failure.short_type in _SYNTAX_TYPES:
                _attach_syntax_location(failure, bodies)
            failures.append(failure)
            continue
        if k + 1 < n and bodies[k + 1].strip() == _LUA_TRACEBACK:
            failures.append(Failure("LuaError", _LUA_INTERPRETER.sub("", stripped, count=1), k, k,
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
                failures.append(Failure(nm.group("type"), what, k, k, kind="cpp", rank=rank))
            elif kind == "argparse":
                if not _is_argparse(bodies, k) and not _ARGPARSE_MESSAGE.match(nm.group("msg")):
                    continue
                failures.append(Failure("argparse.ArgumentError", nm.group("msg"), k, _usage_start(bodies, k),
                                        kind="argparse", rank=rank))
            else:
                failures.append(Failure(kind, stripped, k, k, kind=kind, rank=rank))
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


def _embedded_failures(parsed: list[tuple[str, str, str]]) -> list[Failure]:
    found = []
    for k, (body, level, rank) in enumerate(parsed):
        head = body[:MAX_EMBEDDED_SCAN]
        m = _OP_REQUIRES.search(head)
        if m:  # TF's kernel log of the status its Python exception will carry (even at W level)
            etype = "".join(w.capitalize() for w in m.group("status").split()) + "Error"
            found.append(Failure(etype, m.group("msg").strip(), k, k, kind="embedded", rank=rank))
            continue
        if _STATE_DICT_BODY.match(head):
            found.append(Failure("RuntimeError", head.strip(), k, k, kind="embedded", rank=rank))
            continue
        if level in _WARNING_LEVELS or "Error" not in body and "Exception" not in body:
            continue
        m = _EMBEDDED_EXCEPTION.search(head)
        if m and not _looks_like_prose(m.group("type")):
            found.append(Failure(m.group("type"), m.group("msg").strip(), k, k, kind="embedded", rank=rank))
        elif (m := _REPR_EXCEPTION.search(head)) and not _looks_like_prose(m.group("type")):
            found.append(Failure(m.group("type"), m.group("msg").strip(), k, k, kind="embedded", rank=rank))
        elif (m := _BARE_EXCEPTION.match(head)) and not _HANDLED_CUE.search(head) and not _RETRIED.search(head):
            found.append(Failure("Exception", m.group("msg").strip(), k, k, kind="embedded", rank=rank))
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


def _attach_syntax_location(failure: Failure, bodies: list[str]) -> None:
    """A SyntaxError printed without a traceback still names its place just above:
    '  File "model.py", line 3' (or '  Cell In[3], line 5'), the offending line and a caret."""
    k = failure.line_index
    for j in range(k - 1, max(-1, k - 6), -1):
        m = _FRAME.match(bodies[j]) or _IPY_FRAME.match(bodies[j].strip())
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


def _is_retried(failure: Failure, bodies: list[str]) -> bool:
    """An error that the program caught and retried is followed by a retry message."""
    return failure.kind == "python" and any(_RETRIED.search(b) for b in _lines_after(failure, bodies, 3))


def _lines_after(failure: Failure, bodies: list[str], count: int) -> list[str]:
    """The `count` lines after the failure's message (its own continuation lines, such as TF's
    "0 derived errors ignored.", say nothing about whether the program went on)."""
    end = failure.line_index + max(1, len(failure.message.splitlines()))
    return bodies[end:end + count]


def terminating_failure(failures: list[Failure], lines: list[str]) -> Failure | None:
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
