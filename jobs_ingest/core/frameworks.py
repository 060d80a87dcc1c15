"""Reading failures that other frameworks and launchers wrap or cut short (tagging config 2026-11c, #14.5).

- TensorFlow's "N root error(s) found." wrapper: the first sub-error "(0) <Code>: message" decides.
- Launcher summaries (torchrun/elastic ChildFailedError, torch.multiprocessing.spawn, DeepSpeed's runner,
  accelerate's CalledProcessError) whose only cause is an exit code or a signal: said plainly, and a
  SIGKILL is CPU OOM only with memory evidence in the log.
- Logs that end inside a traceback (frames, no exception line): judged from the error context before
  the traceback and the deepest frame, with a low confidence that says so.
- TF 1.x "NotFoundError (see above for traceback): message" exception lines.

Pure functions over log lines; pipeline.py calls them only when the tagging config enables them, so
released configs keep their output.
"""
from __future__ import annotations

import re
from typing import Callable

from .tracebacks import (_EXC_NAME, _RICH_FRAME, CHAIN_MARKERS, FRAME, IPY_FRAME, TRACEBACK_HEADER, Frame, LogFailure,
                         strip_prefixes)

# --- TensorFlow root errors -------------------------------------------------------------------------
# tensorflow/core/common_runtime (and tf.errors): "2 root error(s) found.\n  (0) INVALID_ARGUMENT: ..."
# (TF >= 2.9 prints the code in upper case; older releases "(0) Invalid argument: ...").
_ROOT_ERRORS = re.compile(r"\b\d+ root error\(s\) found\.")
_SUB_ERROR = re.compile(r"\(0\)\s+(?P<code>[A-Za-z][A-Za-z_ ]*?)\s*:\s*(?P<msg>.*)", re.S)
# Status codes (tensorflow/core/protobuf/error_codes.proto) -> the Python class tf.errors raises.
_TF_CODES = {
    "cancelled": "CancelledError", "unknown": "UnknownError", "invalid argument": "InvalidArgumentError",
    "deadline exceeded": "DeadlineExceededError", "not found": "NotFoundError",
    "already exists": "AlreadyExistsError", "permission denied": "PermissionDeniedError",
    "resource exhausted": "ResourceExhaustedError", "failed precondition": "FailedPreconditionError",
    "aborted": "AbortedError", "out of range": "OutOfRangeError", "unimplemented": "UnimplementedError",
    "internal": "InternalError", "unavailable": "UnavailableError", "data loss": "DataLossError",
    "unauthenticated": "UnauthenticatedError",
}


def tf_root_error(message: str) -> tuple[str, str] | None:
    """(exception type, message) of the first sub-error of a TF root-error wrapper, or None."""
    m = _ROOT_ERRORS.search(message)
    if not m:
        return None
    sub = _SUB_ERROR.search(message, m.end())
    if not sub:
        return "", ""
    etype = _TF_CODES.get(sub.group("code").replace("_", " ").strip().lower())
    if etype is None:
        return "", ""
    # The sub-error's text ends where the next sub-error or TF's footer starts.
    text = re.split(r"\n\s*\(1\)\s|\n\s*\d+ successful operations", sub.group("msg"))[0].strip()
    return etype, text


def with_root_errors(lines: list[str], failure: LogFailure) -> str:
    """The failure's message, with the root-error block that follows its line when the parser stopped
    before it (a bare "InvalidArgumentError: Graph execution error:" line without a traceback)."""
    after = "\n".join(lines[failure.line_index + 1:failure.line_index + 40])
    if _ROOT_ERRORS.search(failure.message or ""):
        return failure.message if "(0)" in failure.message else failure.message + "\n" + after
    m = _ROOT_ERRORS.search(after)
    if m and not after[:m.start()].strip(" \t\n:").count("\n") > 2:
        return (failure.message or "") + "\n" + after
    return failure.message


# Keras' re-raised layer error (keras/utils/traceback_utils.py, keras/src/utils/traceback_utils.py): the header line,
# a blank line, the error itself, a blank line, then the call's arguments. The parser leaves the error out of the
# message (a blank line ends a message); tagger.RuleSetV18 reads the same two markers inside AutoGraph's message.
KERAS_CALL_HEADER = re.compile(r"^Exception encountered when calling\b")
KERAS_CALL_ARGUMENTS = re.compile(r"^\s*(?:Call a|A)rguments received by\b", re.M)
KERAS_ERROR_LINES = 20


def with_keras_call_error(lines: list[str], failure: LogFailure, text: str) -> str:
    """The text to tag, with the error that follows Keras' header line when the message is only that header: the lines
    after it up to Keras' list of the call's arguments (at most 20, and only if that list follows)."""
    header = (text or "").strip()
    if "\n" in header or not KERAS_CALL_HEADER.match(header):
        return text
    after = lines[failure.line_index + 1:failure.line_index + 1 + KERAS_ERROR_LINES]
    end = next((k for k, line in enumerate(after) if KERAS_CALL_ARGUMENTS.match(line)), None)
    return text if end is None else header + "\n\n" + "\n".join(after[:end]).strip()


# --- exit codes and signals of a launcher's child --------------------------------------------------
SIGNALS = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
           11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
_SIGNAL_NUMBERS = {v: k for k, v in SIGNALS.items()}
# The launchers' own words (torch/distributed/elastic/multiprocessing/errors/__init__.py and api.py,
# torch/multiprocessing/spawn.py, deepspeed/launcher/launch.py, subprocess.CalledProcessError).
EXIT_PATTERNS = [
    re.compile(r"Signal (?P<sig>\d+) \(SIG\w+\) received by PID"),
    re.compile(r"(?:^|[\s)])exitcode\s*:\s*(?P<code>-?\d+)"),            # ChildFailedError summary
    re.compile(r"failed \(exitcode: (?P<code>-?\d+)\)"),                    # elastic agent's log line
    re.compile(r"terminated with signal (?P<signame>SIG[A-Z]+)"),           # mp.spawn ProcessExitedException
    re.compile(r"terminated with exit code (?P<code>\d+)"),
    re.compile(r"exits with return code = (?P<code>-?\d+)"),                 # deepspeed launcher
    re.compile(r"returned non-zero exit status (?P<code>-?\d+)"),           # CalledProcessError
]
_WINDOWS_CRASH = {3221225477: "access violation (0xC0000005)", 3221225725: "stack overflow (0xC00000FD)"}
# Memory evidence for a SIGKILL: the kernel's OOM killer, a cgroup or container limit, the shell's
# "Killed", the allocators' own errors.
_MEMORY = re.compile(r"Out of memory: Kill|invoked oom-killer|oom[-_ ]kill|Memory cgroup out of memory|OOMKilled"
                     r"|^\s*Killed\s*$|\bMemoryError\b|Cannot allocate memory|std::bad_alloc|DefaultCPUAllocator"
                     r"|exceeded (?:its )?memory limit|memory limit exceeded", re.I)


# Tagging configs with `launcher_cut`: also CPython's CalledProcessError for a child a signal killed ("Command
# '[...]' died with <Signals.SIGKILL: 9>.", subprocess.py).
EXIT_PATTERNS_V2 = EXIT_PATTERNS + [re.compile(r"died with <Signals\.(?P<signame>SIG[A-Z]+):\s*\d+>")]
# The launchers' own files: a traceback of these frames only is the launcher going down, not the program.
_LAUNCHER_FILE = re.compile(r"(?:^|[/\\])(?:runpy\.py|torch[/\\]distributed[/\\](?:launch|run)\.py"
                            r"|torch[/\\]distributed[/\\](?:elastic|launcher)[/\\].+|torch[/\\]multiprocessing[/\\]spawn\.py"
                            r"|deepspeed[/\\]launcher[/\\].+|accelerate[/\\]commands[/\\].+|bin[/\\](?:torchrun|deepspeed|accelerate))$")


def child_exit(lines: list[str], start: int, end: int,
               patterns: list[re.Pattern] = EXIT_PATTERNS) -> tuple[int | None, int | None]:
    """(exit code, signal number) of the failed child as the launcher reports it between `start` and
    `end`, the root-cause section first. A negative exit code is a signal (Python's convention)."""
    window = lines[max(0, start):end]
    root = next((i for i, line in enumerate(window) if "Root Cause" in line), None)
    ordered = window[root:] + window[:root] if root is not None else window
    code = sig = None
    for line in ordered:
        for pattern in patterns:
            m = pattern.search(line)
            if not m:
                continue
            d = m.groupdict()
            if d.get("sig"):
                sig = int(d["sig"])
            elif d.get("signame"):
                sig = _SIGNAL_NUMBERS.get(d["signame"])
            elif d.get("code") and code is None:
                code = int(d["code"])
        if sig is not None:
            break
    if sig is None and code is not None and code < 0:
        sig = -code
    return code, sig


def memory_evidence(lines: list[str]) -> str:
    return next((line.strip() for line in reversed(lines) if _MEMORY.search(line)), "")


def is_launcher_failure(failure: LogFailure) -> bool:
    """A failure that only reports a child's end: a wrapper exception, or torchrun's summary line."""
    return failure.is_wrapper or (failure.kind == "Killed" and "received by PID" in failure.message)


# torchrun's summary of a failed job (torch.distributed.elastic ChildFailedError.format_msg) is titled
# f"{name} FAILED", name being the entrypoint it launched: the one line of it that differs between programs.
_FAILED_ENTRYPOINT = re.compile(r"^(?P<name>[^\s:=]+) FAILED$")


def failed_entrypoint(lines: list[str]) -> str:
    """The base name of the entrypoint the last launcher summary in the log names as failed ('train.py'), or ''.
    The base name only: the same program run from another checkout is the same program."""
    for line in reversed(lines):
        m = _FAILED_ENTRYPOINT.match(strip_prefixes(line)[0].strip()) if "FAILED" in line else None
        if m:
            return m.group("name").replace("\\", "/").rsplit("/", 1)[-1]
    return ""


def launcher_tag(lines: list[str], failure: LogFailure, tag_cls: Callable,
                 patterns: list[re.Pattern] = EXIT_PATTERNS):
    """The tag a launcher's summary supports when no child error was printed, or None (no exit code)."""
    code, sig = child_exit(lines, failure.start_index - 40, failure.line_index + 60, patterns)
    return exit_status_tag(lines, code, sig, tag_cls)


def cut_launcher_tag(lines: list[str], failure: LogFailure, tag_cls: Callable):
    """Tagging configs with `launcher_cut`: a log that ends inside a traceback of the launcher's frames only
    (runpy, torch.distributed.run, the elastic agent), cut before its ChildFailedError line, is read by the
    child's exit the launcher reported just before it; None when those are not the frames or no exit is said."""
    if not failure.frames or not all(_LAUNCHER_FILE.search(f.file) for f in failure.frames):
        return None
    launched = launcher_tag(lines, failure, tag_cls, EXIT_PATTERNS_V2)
    return None if launched is None else _inside_launcher_traceback(launched, tag_cls)


def _inside_launcher_traceback(launched, tag_cls: Callable):
    """A launcher's exit-status tag, said of a log that ends inside the launcher's own traceback."""
    return tag_cls(launched.category, launched.confidence, launched.rule + ".truncated",
                   launched.evidence + "; the log ends inside the launcher's traceback")


# Tagging configs with `launcher_tail`: other wrappers' wording for a child that failed, e.g. DeepSpeed-Chat's
# "Step 1 exited with non-zero status 1", Accelerate's "... returned non-zero exit status 1." (subprocess).
CHILD_EXIT_WORDS = re.compile(r"exited with (?:a )?non-?zero (?:exit )?(?:status|code)(?: of)?:? (?P<code>-?\d+)", re.I)


def launcher_tail_tag(lines: list[str], tag_cls: Callable, last: int = 5):
    """A log whose last lines are a launcher's report of its child's exit (no error of the child printed):
    the tag its exit code or signal supports, or None."""
    said = [i for i, line in enumerate(lines) if line.strip()][-last:]
    if not said:
        return None
    code, sig = child_exit(lines, said[0], said[-1] + 1)
    if code is None and sig is None:
        return next(filter(None, (child_exit_words_tag(lines[i], lines, tag_cls) for i in reversed(said))), None)
    return exit_status_tag(lines, code, sig, tag_cls)


def child_exit_words_tag(text: str, lines: list[str], tag_cls: Callable):
    """The tag of the exit status in another wrapper's words for a failed child (CHILD_EXIT_WORDS), or None."""
    m = CHILD_EXIT_WORDS.search(text)
    if m is None:
        return None
    code = int(m.group("code"))
    return exit_status_tag(lines, code, -code if code < 0 else None, tag_cls)


def exit_status_tag(lines: list[str], code: int | None, sig: int | None, tag_cls: Callable):
    """What a child's exit code or signal says, when its own error is not in the log; None without either."""
    if sig == 9:
        memory = memory_evidence(lines)
        if memory:
            return tag_cls("cpu_oom", 0.85, "cpu_oom.child_sigkill_memory",
                           f"killed by SIGKILL (signal 9); memory evidence: {memory[:200]}")
        # taxonomy.md lists signal 9 / -9 under cpu_oom: the OOM killer is the usual sender. Without
        # memory evidence the tag says so and stays unsure.
        return tag_cls("cpu_oom", 0.5, "cpu_oom.signal_sigkill",
                       "killed by SIGKILL (signal 9); no memory evidence in the log (usually the kernel's OOM "
                       "killer, but a scheduler or a user may have sent it)")
    if sig is not None:
        name = SIGNALS.get(sig, f"signal {sig}")
        return tag_cls("unclassified", 0.3, f"unclassified.signal_{name.lower()}",
                       f"child killed by {name} (signal {sig}); the log does not say why")
    if code in _WINDOWS_CRASH:
        return tag_cls("unclassified", 0.3, "unclassified.native_crash",
                       f"child exited with {code}: Windows {_WINDOWS_CRASH[code]}; the log does not say why")
    if code is not None:
        return tag_cls("unclassified", 0.25, "unclassified.child_exit_code",
                       f"child exited with code {code}; its own error is not in the log")
    return None


# --- logs that end inside a traceback ---------------------------------------------------------------
_MAX_TRUNCATED_SCAN = 400
# A native backtrace after a framework's fatal message says where, not why: MXNet/dmlc "Stack trace returned
# 10 entries:" / "Stack trace:" and "[bt] (0) lib.so(...)", gdb/glibc "#3  0x7f...", c10's "frame #3: ...".
NATIVE_FRAME = re.compile(r"\[bt\] \(\d+\)|Stack trace(?: returned \d+ entries)?:\s*$|^\s*#\d+\s+0x[0-9a-fA-F]+|^\s*frame #\d+: ")
# TF 1.x appends where the failing op was created (python/framework/errors_impl.py, ops.py): "Original stack
# trace for 'save/RestoreV2':" and Python-style frames, after the error; and names the node: "[[node x (defined
# at ...) ]]", "[[{{node x}}]]". Neither is the error.
_TF_OP_TRACE = re.compile(r"^\s*Original stack trace for '[^']*':\s*$")
_TF_NODE = re.compile(r"^\s*\[\[(?:\{\{)?node ")


_CARETS = re.compile(r"^[~^\s]*\^[~^\s]*$")   # Python 3.11's markers under a frame's code


def _trailing_python_frames(lines: list[str]) -> int:
    """Where a run of Python frames that ends the log starts (len(lines) if none): "File ..., line N" lines, each
    with its code line and caret markers, printed below their message by tools that show the message first
    (ComfyUI's "Error occurred when executing X:", loggers that print the message, then the stack)."""
    k = len(lines)
    while k > 0:
        body = strip_prefixes(lines[k - 1])[0]
        if not body.strip() or _CARETS.match(body) or FRAME.match(body):
            k -= 1
        elif k >= 2 and FRAME.match(strip_prefixes(lines[k - 2])[0]):
            k -= 2   # a frame's code line, and its frame
        else:
            break
    return k if any(FRAME.match(strip_prefixes(line)[0]) for line in lines[k:]) else len(lines)


def said_lines(lines: list[str], count: int, python_frames: bool = False) -> list[int]:
    """Indexes of the last `count` lines that say something about the failure, in order: not blank, not a
    native backtrace's frame, not TF's node annotations, and not in a trailing TF op-creation trace (its frames
    say where, not why), nor (with `python_frames`) in a trailing run of Python frames with no traceback header.
    Read from the end: only the last few are ever wanted."""
    end = _trailing_python_frames(lines) if python_frames else len(lines)
    for k in range(len(lines) - 1, max(-1, len(lines) - _MAX_TRUNCATED_SCAN - 1), -1):
        if _TF_OP_TRACE.match(lines[k]):
            after = [strip_prefixes(line)[0] for line in lines[k + 1:] if line.strip()]
            if all(_frame_of(body) or body[:1] in (" ", "\t") for body in after):
                end = min(end, k)
            break
    said: list[int] = []
    for i in range(end - 1, -1, -1):
        if len(said) == count:
            break
        if lines[i].strip() and not NATIVE_FRAME.search(lines[i]) and not _TF_NODE.match(lines[i]):
            said.append(i)
    return said[::-1]


def _frame_of(body: str) -> Frame | None:
    m = FRAME.match(body) or IPY_FRAME.match(body) or _RICH_FRAME.match(body)
    if not m:
        return None
    d = m.groupdict()
    return Frame(d.get("file") or d.get("nbfile") or "<cell>", int(d.get("line") or d.get("cline") or 0),
                 (d.get("func") or d.get("nbfunc") or "").strip())


def truncated_traceback(lines: list[str], headless: bool = False) -> LogFailure | None:
    """The traceback a log ends inside (header and frames, no exception line), or None. With `headless`, also the
    frames a log ends with when their header was not pasted (headless_start)."""
    bodies = [strip_prefixes(line)[0] for line in lines[-_MAX_TRUNCATED_SCAN:]]
    offset = len(lines) - len(bodies)
    header = next((k for k in range(len(bodies) - 1, -1, -1) if TRACEBACK_HEADER.match(bodies[k])), None)
    unheaded = header is None and headless     # frames pasted without their header: they start at the first frame
    if unheaded:
        header = headless_start(bodies)
    if header is None:
        return None
    first = header if unheaded else header + 1
    frames: list[Frame] = []
    last = header
    for k in range(first, len(bodies)):
        body = bodies[k]
        if not body.strip():
            continue
        frame = _frame_of(body)
        if frame:
            frames.append(frame)
        elif body[:1] in (" ", "\t", "│", "╰", "╭") or body.startswith(("[Previous line repeated", "---->", "-->")):
            if frames and not frames[-1].code and body.strip()[:1] not in ("^", "~", "│", "╰"):
                frames[-1].code = body.strip()[:300]
        elif unheaded and frames and not frames[-1].code and _frame_of(bodies[k - 1]):
            frames[-1].code = body.strip()[:300]   # a headless paste that lost its indentation
        elif unheaded and set(body.strip()) <= set("^~ "):
            pass
        else:
            return None   # an unindented line that is no frame: the traceback ended (or this is not one)
        last = k
    if not frames:
        return None
    deepest = frames[-1]
    message = f"log ends inside a traceback (no exception line); deepest frame: {deepest.describe()}"
    if deepest.code:
        message += f": {deepest.code}"
    return LogFailure("", message, offset + last, offset + header, frames, kind="truncated")


_THREAD_DUMP = re.compile(r"\(most recent call first\)|^\s*(?:Current )?[Tt]hread 0x[0-9a-f]+")


def headless_start(bodies: list[str]) -> int | None:
    """Index of the first of the Python frames (two or more, each with or without its code line under it, indented or
    not) that the last lines are, when the traceback's header was not pasted; None when the log does not end so, or
    when the frames are a thread dump (faulthandler's, most recent call first), which is no exception."""
    k = len(bodies) - 1
    while k >= 0 and not bodies[k].strip():
        k -= 1
    start, frames = None, 0
    while k >= 0:
        body = bodies[k]
        if _frame_of(body):
            start, frames = k, frames + 1
        elif body.strip() and not (set(body.strip()) <= set("^~ ") or (k > 0 and _frame_of(bodies[k - 1]))):
            break   # a frame's code is the line under it: anything else (an exception line) ends the frames
        k -= 1
    if frames < 2 or (k >= 0 and _THREAD_DUMP.search(bodies[k])):
        return None
    return start


# The statement a cut traceback's deepest frame shows raised the exception: `assert cond, "message"` raises an
# AssertionError, `raise Type("message")` a Type (a class name; `raise e` names no type).
_ASSERT_STATEMENT = re.compile(r"^assert\b")
_RAISE_STATEMENT = re.compile(r"^raise\s+(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)\s*(?:\(|$|\s+from\b)")
_STRING_LITERAL = re.compile(r"""(?:(?<!\w)[rRfFbBuU]{1,2})?(?P<q>["'])(?P<text>(?:\\.|(?!(?P=q)).)*)(?P=q)""")


def raised_by_statement(code_line: str) -> tuple[str, str] | None:
    """(exception type, message) that a `raise` or `assert` statement raises, the message being its first string
    literal (f-strings' fields kept as written; for an assert, the literal after the condition), or None."""
    code = code_line.strip()
    if _ASSERT_STATEMENT.match(code):
        literal = _STRING_LITERAL.search(code.split(",", 1)[1]) if "," in code else None
        return "AssertionError", literal.group("text") if literal else ""
    m = _RAISE_STATEMENT.match(code)
    if m is None:
        return None
    literal = _STRING_LITERAL.search(code[m.end():])
    return m.group("type"), literal.group("text") if literal else ""


# An exception line quoted inside a sentence, as people paste errors into issues and chats: "The error is
# `ValueError: too many values to unpack (expected 2).` and ...", "I get TypeError: Axis must be specified".
_QUOTED_EXCEPTION = re.compile(rf"(?:^|[\s`'\"(:])(?P<type>{_EXC_NAME}): (?P<msg>[^`\n]+)")


def quoted_exception(line: str) -> tuple[str, str] | None:
    """(exception type, message) of an exception line quoted in `line`, or None."""
    m = _QUOTED_EXCEPTION.search(line)
    return (m.group("type"), m.group("msg").strip().rstrip("`'\"")) if m else None


_BACKTICKED_EXCEPTION = re.compile(rf"`{_EXC_NAME}: [^`\n]+`")
_BACKTICK_SCAN_LINES = 80


def backticked_lines(lines: list[str]) -> list[int]:
    """Indexes of the last lines (newest first) that quote an exception line in backticks, as Markdown does; a log
    without a parsed failure that is a person's report names its error so, often above the log it pastes."""
    start = max(0, len(lines) - _BACKTICK_SCAN_LINES)
    return [i for i in range(len(lines) - 1, start - 1, -1) if "`" in lines[i] and _BACKTICKED_EXCEPTION.search(lines[i])]


def said_tag(line: str, tag: Callable, quoted: bool = False):
    """What a line that is not a parsed failure says: a specific rule over its words, or (with `quoted`) the tag of
    an exception line quoted in it, whose type alone may decide. None when it says nothing."""
    body = strip_prefixes(line)[0].strip()
    found = quoted_exception(body) if quoted else None
    if found is not None:   # the quoted message with its type: every message rule, then the type's default
        typed = tag(*found)
        if typed.category != "unclassified":
            return typed
    guess = tag("", body)
    return guess if guess.specific else None


def truncated_tag(lines: list[str], failure: LogFailure, tag: Callable, tag_cls: Callable, skip_traces: bool = False,
                  quoted: bool = False, statements: bool = False):
    """Judge a truncated traceback: the error context before it, then the deepest frame's code. A
    launcher's frame (raise ChildFailedError / CalledProcessError) reads the exit code before it.
    With `skip_traces`, a native backtrace or a TF op trace between the error and the traceback does not hide
    the error (said_lines); with `quoted`, an exception line quoted in a sentence before it is read too; with
    `statements`, a deepest frame whose code is a `raise` or `assert` statement is read first, as the exception it
    raises (raised_by_statement)."""
    deepest = failure.frames[-1]
    code_line = deepest.code or ""
    if re.search(r"raise (?:\w+\.)*(?:ChildFailedError|CalledProcessError|ProcessExitedException|ProcessRaisedException)",
                 code_line):
        wrapped = LogFailure("ChildFailedError", "", failure.line_index, failure.start_index)
        launched = launcher_tag(lines, wrapped, tag_cls)
        if launched is not None:
            return _inside_launcher_traceback(launched, tag_cls)
        return tag_cls("unclassified", 0.2, "unclassified.truncated_launcher",
                       f"the log ends inside the launcher's traceback ({deepest.describe()}); the child's error is not in the log")
    raised = raised_by_statement(code_line) if statements else None
    if raised is not None:
        guess = tag(*raised)
        if guess.category != "unclassified":
            return tag_cls(guess.category, round(min(0.5, guess.confidence - 0.1), 2), guess.rule + ".cut_statement",
                           f"log ends inside a traceback, at the statement that raised ({deepest.describe()}): "
                           f"{code_line[:200]}")
    if skip_traces:
        start = max(0, failure.start_index - _MAX_TRUNCATED_SCAN)
        context = [lines[start + i] for i in said_lines(lines[start:failure.start_index], 8)]
    else:
        context = [line for line in lines[max(0, failure.start_index - 8):failure.start_index] if line.strip()]
    for line in reversed(context):
        guess = said_tag(line, tag, quoted)
        if guess is not None:
            return tag_cls(guess.category, round(min(0.6, guess.confidence - 0.3), 2), guess.rule + ".truncated",
                           f"log ends inside a traceback; error before it: {line.strip()[:200]}")
    if code_line:
        guess = tag("", code_line)
        if guess.specific:
            return tag_cls(guess.category, round(min(0.5, guess.confidence - 0.4), 2), guess.rule + ".truncated",
                           f"log ends inside a traceback; deepest frame {deepest.describe()}: {code_line[:200]}")
    return tag_cls("unclassified", 0.15, "unclassified.truncated_traceback", failure.message)


# --- TF 1.x "Type (see above for traceback): message" ------------------------------------------------
_SEE_ABOVE = re.compile(r"^(?P<type>(?:[\w.]+\.)?[A-Z]\w*Error) \(see above for traceback\): (?P<msg>.*)$")


def see_above_failure(lines: list[str]) -> LogFailure | None:
    """TF 1.x session errors: "NotFoundError (see above for traceback): /tmp/x.tfrecord" (the last one)."""
    for k in range(len(lines) - 1, max(-1, len(lines) - _MAX_TRUNCATED_SCAN), -1):
        m = _SEE_ABOVE.match(strip_prefixes(lines[k])[0].strip())
        if m:
            return LogFailure(m.group("type"), m.group("msg").strip(), k, k, kind="python")
    return None


# --- a log with no parsed failure, read closer (tagging:2026-11h) -----------------------------------
_TAIL_ROOT_SCAN = 40
_MARKDOWN_QUOTE = re.compile(r"^\s*>\s?")


def tail_root_error(lines: list[str]) -> tuple[int, str, str] | None:
    """(line index, type, message) of the first sub-error of a TF root-error report among the last lines, printed as
    a log record rather than raised ("Exiting due to exception: 2 root error(s) found." then "(0) Invalid argument:
    ..." and TF's "0 derived errors ignored." footer), or None."""
    start = max(0, len(lines) - _TAIL_ROOT_SCAN)
    bodies = [_MARKDOWN_QUOTE.sub("", strip_prefixes(line)[0]) for line in lines[start:]]
    heads = [k for k, body in enumerate(bodies) if _ROOT_ERRORS.search(body)]
    if not heads:
        return None
    sub = tf_root_error("\n".join(bodies[heads[-1]:]))
    if not sub or not sub[0]:
        return None
    first = next((k for k in range(heads[-1], len(bodies)) if "(0)" in bodies[k]), heads[-1])
    return start + first, sub[0], sub[1]


# Exception names a cut last line may begin: Python's own, and the frameworks' most common.
KNOWN_EXCEPTION_NAMES = (
    "ArithmeticError", "AssertionError", "AttributeError", "BlockingIOError", "BrokenPipeError", "BufferError",
    "ChildProcessError", "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "EOFError", "FileExistsError", "FileNotFoundError", "FloatingPointError", "ImportError", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError",
    "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError", "NotImplementedError", "OSError",
    "OverflowError", "PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError", "RuntimeError",
    "StopIteration", "SyntaxError", "SystemError", "TabError", "TimeoutError", "TypeError", "UnboundLocalError",
    "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "ValueError", "ZeroDivisionError",
    "OutOfMemoryError", "InvalidArgumentError", "ResourceExhaustedError", "NotFoundError", "FailedPreconditionError",
    "UnimplementedError", "InternalError", "MXNetError", "ChildFailedError", "CalledProcessError",
)
_CUT_NAME = re.compile(r"^[A-Z][A-Za-z]{4,}$")


_QUALIFIED_CUT_NAME = re.compile(r"^(?:[a-z_]\w*\.)+(?P<name>[A-Z][A-Za-z]{4,})$")


def cut_exception_name(lines: list[str], names: tuple[str, ...] = KNOWN_EXCEPTION_NAMES,
                       qualified: bool = False) -> tuple[int, str] | None:
    """(line index, exception type) when the log's last line is an exception name cut short ("ModuleNotFoun",
    "AttributeErro": a log truncated inside its exception line), naming exactly one known type; else None. With
    `qualified`, also a name cut after its module path ("tensorflow.python.framework.errors_impl.InvalidA")."""
    last = max((i for i, line in enumerate(lines) if line.strip()), default=None)
    if last is None:
        return None
    body = _MARKDOWN_QUOTE.sub("", strip_prefixes(lines[last])[0]).strip()
    qualified_name = _QUALIFIED_CUT_NAME.match(body) if qualified else None
    if qualified_name:
        body = qualified_name.group("name")
    elif not _CUT_NAME.match(body):
        return None
    matches = [name for name in names if name.startswith(body) and name != body]
    return (last, matches[0]) if len(matches) == 1 else None


def message_below(lines: list[str], failure: LogFailure) -> str:
    """The line under an exception line whose message is empty, when it is unindented text ending with a colon and not a
    frame: TorchScript's errors print "RuntimeError: " and their message on the next line ("object has no attribute
    x:", then the source it compiled). Read for the tag only."""
    below = next((line for line in lines[failure.line_index + 1:failure.line_index + 3] if line.strip()), "")
    body = strip_prefixes(below)[0]
    if (body[:1] in (" ", "\t", "") or not body.rstrip().endswith(":") or _frame_of(body) or TRACEBACK_HEADER.match(body)
            or any(marker in body for marker in CHAIN_MARKERS)):
        return ""   # TorchScript's message ends with a colon, above the source it cites
    return body.strip()


# glog's FATAL record ("F20220801 07:29:34.701110  2256 fs_coordinator.cc:42] Invalid tracker path: root://x/", or
# without the year, "F0801 ..."), which aborts the process (glog then prints "*** Check failure stack trace: ***"),
# and TF's own form of it ("2019-04-04 15:36:40.879050: F tensorflow/core/kernels/x.cc:577] ...").
_GLOG_FATAL = re.compile(r"^(?:F(?:\d{4})?\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+"
                         r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: F )[\w./-]+:\d+\] (?P<msg>\S.*)$")  # glog's; TF's own
_TAIL_WINDOW = 15


def _last_in_tail(lines: list[str], find: Callable[[str], re.Match | None]) -> tuple[int, re.Match] | None:
    """(line index, match) of the last of the log's last _TAIL_WINDOW lines that `find` matches, or None."""
    for index in range(len(lines) - 1, max(-1, len(lines) - 1 - _TAIL_WINDOW), -1):
        m = find(lines[index])
        if m:
            return index, m
    return None


def glog_fatal_line(lines: list[str]) -> tuple[int, str] | None:
    """(line index, message) of the last glog FATAL record among the log's last lines, or None."""
    found = _last_in_tail(lines, lambda line: _GLOG_FATAL.match(strip_prefixes(line)[0].strip()))
    return (found[0], found[1].group("msg").strip()) if found else None


# A CUDA kernel's own assertion, printed by the device for each failing thread before the host's "device-side assert
# triggered" error: "../aten/src/ATen/native/cuda/Loss.cu:115: operator(): block: [130,0,0], thread: [91,0,0] Assertion
# `input_val >= zero && input_val <= one` failed." A log may end among these lines, before the host's error.
_KERNEL_ASSERT = re.compile(r"\.cuh?:\d+: .*Assertion `(?P<cond>[^`\n]+)` failed")


def kernel_assert_line(lines: list[str]) -> tuple[int, str] | None:
    """(line index, asserted condition) of the last CUDA kernel assertion among the log's last lines, or None."""
    found = _last_in_tail(lines, _KERNEL_ASSERT.search)
    return (found[0], found[1].group("cond")) if found else None


def bare_exception_name(lines: list[str], names: tuple[str, ...] = KNOWN_EXCEPTION_NAMES) -> tuple[int, str] | None:
    """(line index, exception type) when the log ends on a known exception's bare name ("AssertionError") within
    three lines of a traceback frame (`File "x.py", line 3, in f`), pasted without the indentation that would make
    it a traceback; else None."""
    said: list[int] = []                 # the last four non-blank lines, newest first
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip():
            said.append(index)
            if len(said) == 4:
                break
    if not said:
        return None
    body = _MARKDOWN_QUOTE.sub("", strip_prefixes(lines[said[0]])[0]).strip()
    if body not in names or not any(FRAME.match(lines[i]) for i in said[1:]):
        return None
    return said[0], body
