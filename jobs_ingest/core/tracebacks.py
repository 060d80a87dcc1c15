"""Read one failure out of a log's lines: launcher and logger prefixes, Python tracebacks (plain,
IPython/Jupyter, rich boxes), their frames and the exception line that ends them.

evidence.py uses this to find every failure a log shows; terminating.py chooses the one that
ended the job.
"""
from __future__ import annotations

import functools
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
# The launchers' own (rank, MPI, srun label, compose), not a record's time or level.
LAUNCHER_PREFIX = re.compile("|".join(f"(?:{p.pattern})" for p in _PREFIXES[:3] + _PREFIXES[6:]))
_LEVEL = re.compile(r"^(?:\[(?i:(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL))\]|(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b)"
                    r"(?:\s*[:|-]\s*|\s+)")

TRACEBACK_HEADER = re.compile(
    r"^\s*(?:Original )?Traceback \(most recent call last\):?\s*$"
    r"|^(?P<nbtype>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)"
    # rich / typer / transformers pretty tracebacks: a box whose top border names it.
    r"|^\s*╭─+ Traceback \(most recent call last\) ─+╮\s*$")
CHAIN_MARKERS = (
    "During handling of the above exception, another exception occurred",
    "The above exception was the direct cause of the following exception",
)
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
IPY_FRAME = re.compile(r"^(?:File (?P<file>\S+?):(?P<line>\d+)(?:, in (?P<func>.+))?"
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
# Exception types that only wrap the real failure of a child process or worker.
WRAPPERS = re.compile(
    r"(?:^|\.)(?:ChildFailedError|CalledProcessError|ProcessRaisedException|ProcessExitedException"
    r"|SystemExit|BrokenProcessPool|WorkerError|RayTaskError|BackendCompilerFailed)$")
_WRAPPER_MESSAGES = re.compile(
    r"exits with return code|returned non-zero exit status|process \d+ terminated with"
    r"|failed \(exitcode: |Caught \w+ in DataLoader worker", re.I)
IGNORED_BLOCK = re.compile(r"^(?:Exception ignored in|Error in atexit\._run_exitfuncs|Error in sys\.excepthook)")


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
class LogFailure:
    """A failure as the log states it (not models.Failure, the stored row): one candidate found in
    the log window, indices into the window's lines."""
    exception_type: str
    message: str
    line_index: int                     # the line stating the failure
    start_index: int                    # first line of its traceback (or the line itself)
    frames: list[Frame] = field(default_factory=list)
    chain: list["LogFailure"] = field(default_factory=list)  # earlier exceptions it was raised from
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


_LIBRARY_PATH = re.compile(r"[\\/](?:site|dist)-packages[\\/]|[\\/]lib[\\/]python\d|^<frozen |[\\/]lib64?[\\/]python"
                           r"|^<(?:string|__array_function__|decorator)")


def is_user_frame(frame: Frame) -> bool:
    """A frame of the user's own code, not of a library or the interpreter."""
    return not _LIBRARY_PATH.search(frame.file)


def user_frame(frames: list[Frame]) -> Frame | None:
    """The innermost frame of the user's own code."""
    return next((f for f in reversed(frames) if is_user_frame(f)), None)


_RANK = re.compile(r"^\[(?:rank|default)(\d+)\]:|^\[\d+,(\d+)\]<|^(\d{1,4}):\s")


def _strip_repeated(line: str, prefix: re.Pattern, times: int) -> str:
    """The line with `prefix` removed from its start as often as it is there, at most `times` times."""
    for _ in range(times):
        m = prefix.match(line)
        if not m or not m.end():
            break
        line = line[m.end():]
    return line


def strip_launcher_prefixes(line: str) -> str:
    """The line without the launchers' rank prefixes (LAUNCHER_PREFIX); a record's time and level stay."""
    return _strip_repeated(line, LAUNCHER_PREFIX, 3)


# Cached: the evidence pass and the cut-traceback pass read the same lines (the last 400, where a log is longer),
# and a training log repeats its lines; 1,024 lines of at most 4,000 characters bound the cache.
@functools.lru_cache(maxsize=1024)
def strip_prefixes(line: str) -> tuple[str, str, str]:
    """(body, level, rank) of a log line, with launcher and logger prefixes removed."""
    rank = ""
    m = _RANK.match(line)
    if m:
        rank = next(g for g in m.groups() if g is not None)
    line = _strip_repeated(line, _ANY_PREFIX, 8)
    level = ""
    m = _LEVEL.match(line)
    if m and not TRACEBACK_HEADER.match(line):
        level = (m.group(1) or m.group(2)).upper()
        line = line[m.end():]
    return line, level, rank


def _is_frame_line(body: str) -> bool:
    return (body.startswith((" ", "\t")) or bool(IPY_FRAME.match(body)) or body.startswith(("---->", "-->"))
            or body.lstrip().startswith(_RICH_BOX))


def parse_traceback(bodies: list[str], start: int,
                     records: list[bool] | None = None, ranks: list[str] | None = None) -> tuple[LogFailure | None, int]:
    """Parse the traceback whose header is at `start`. Returns (failure, index after it)."""
    header = TRACEBACK_HEADER.match(bodies[start])
    frames: list[Frame] = []
    i = start + 1
    n = len(bodies)
    while i < n:
        body = bodies[i]
        m = FRAME.match(body) or IPY_FRAME.match(body) or _RICH_FRAME.match(body)
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
            return LogFailure(header.group("nbtype"), bodies[i].strip(), i, start, frames), i + 1
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
        if (TRACEBACK_HEADER.match(body) or any(c in body for c in CHAIN_MARKERS)
                or IGNORED_BLOCK.match(body) or EXCEPTION_LINE.match(body.strip()) and not body[:1].isspace()):
            break
        # A blank line ends the message, unless the detail follows indented or the message so far
        # announces it ("Graph execution error:", "LookupError:" then the text below).
        if not body.strip() and (j + 1 >= n or not bodies[j + 1][:1].isspace()) and not (
                j == i + 1 and message_lines[-1].rstrip().endswith(":")):
            break
        message_lines.append(body)
        j += 1
    message = "\n".join(message_lines).strip()
    return LogFailure(m.group("type"), message, i, start, frames), j


_RECORD_PREFIX = re.compile("|".join(f"(?:{p.pattern})" for p in _PREFIXES[3:6]))
# Lines that start something else: another failure, or the launcher's own report of the exit
# ("srun: error: node-3: task 0: Exited with exit code 1", shell xtrace, the shell's death notices).
_MESSAGE_END = re.compile(r"^(?:usage:|terminate called after throwing|Exception ignored in|srun: |slurmstepd: "
                          r"|mpirun |\+ |[\w./-]+: error: |Killed$|Aborted|Segmentation fault)")


def starts_record(line: str, level: str) -> bool:
    """Does this raw line start a new log record (its own timestamp, glog header or level)?"""
    if level:
        return True
    m = _RANK.match(line)
    rest = line[m.end():].lstrip() if m else line
    return bool(_RECORD_PREFIX.match(rest))


MAX_MESSAGE_LINES = 150           # TF "in user code:" messages carry a whole stack before the error
MAX_NOTEBOOK_TRACEBACK_LINES = 3000


def rank_of(line: str) -> str:
    m = _RANK.match(line) if line[:1] in "[0123456789" else None
    return next((g for g in m.groups() if g is not None), "") if m else ""
