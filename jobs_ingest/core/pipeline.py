"""The analysis pipeline: from a failed job's log to an Analysis (analysis.py).

Find the failures the log shows (evidence.py, reading tracebacks with tracebacks.py), choose the one
that ended the job (terminating.py), then tag it and its stage with a tagging config and group it
with a grouping config (configs.py), and attach what the hook captured (capture.py).

Pure functions over text; no Django, no servers. The log is read tail first in bounded windows
(see logread), so a 1 GB log costs one 256 KiB read when its failure is near the end, as it nearly
always is.
"""
from __future__ import annotations

import dataclasses
import re
import os
from typing import BinaryIO

from . import collectors, configs, frameworks, infra, learned, normalise, trailers
from . import stage as stages
from .analysis import Analysis
from .capture import HOOK_STAGES, find_capture
from .configs import GroupingConfig, TaggingConfig
from .evidence import find_failures
from .logread import LINE_COUNT_BYTES, LogSource, split_lines
from .tagger import Tag
from .taxonomy import CATEGORIES, fault
from .terminating import root_cause_exit_code, terminating_failure
from .tracebacks import CHAIN_MARKERS, WRAPPERS, LogFailure, rank_of, strip_prefixes, user_frame

MAX_SCAN_BYTES = 64 * 1024 * 1024   # walk back at most this far looking for a failure


class _FailureHint:
    """Windows before the tail are parsed only if they contain one of these words: every failure the
    parser recognises names at least one (exception names end in Error/Exception/Exit/Failure/...).
    Substring tests on the lower-cased bytes run at memory speed; a regex alternation does not."""
    WORDS = (b"error", b"exception", b"traceback", b"killed", b"fault", b"abort", b"fatal", b"terminat",
             b"interrupt", b"exit", b"fail", b"oom", b"out of memory", b"not found", b"no such", b"stopiteration",
             b"nan", b"non-finite", b"infinite", b"inf loss", b"loss is inf", "报错".encode())

    def search(self, data: bytes) -> bool:
        lowered = data.lower()
        return any(word in lowered for word in self.WORDS)


FAILURE_HINT = _FailureHint()
EXCERPT_BEFORE, EXCERPT_AFTER = 30, 12
MAX_TRACEBACK_LINES = 120
MAX_MESSAGE_CHARS = 4000
# Exit codes and signals that mean the kernel (or the scheduler) killed the process: usually memory.
_KILL_EXIT_CODES = {137, -9, 247}
_KILL_SIGNALS = {"9", "SIGKILL", "KILL"}
# A failure this many lines before the end of a log that then went on is not what ended the job
# when the scheduler says the process was killed.
_FAR_FROM_END = 200
_CHAIN_OVERRIDES_BELOW = 0.8
_TAIL_GUESS_LINES = 3  # a log without a parsed failure: how many last lines a rule may read
_TRUNCATED_CONTEXT = 8  # lines before a cut traceback that may hold the error it raises


def analyse_log(source: str | bytes | os.PathLike | BinaryIO, *, exit_code: int | None = None,
                signal: int | str | None = None, grouping_config: str | GroupingConfig | None = None,
                tagging_config: str | TaggingConfig | None = None) -> Analysis:
    """Analyse a job log given as a path (str or PathLike), its bytes, or a seekable binary file.

    `exit_code` and `signal` come from the scheduler's metadata when known: a job killed with
    SIGKILL (exit 137) and no error in its log ran out of CPU memory. `grouping_config` and
    `tagging_config` select a config by id (configs.py); None means the newest. An unknown id raises
    configs.UnknownConfig (a ValueError).
    """
    grouping, tagging = configs.grouping_config(grouping_config), configs.tagging_config(tagging_config)
    with LogSource(source) as log:
        tail, found, views, tail_views = None, None, None, None
        for window in log.windows(hint=FAILURE_HINT):
            views = _views(window.lines, tagging)
            if tail is None:
                tail, tail_views = window, views
            failures = find_failures(views[1])
            if failures:
                found = window
                break
            if log.size - window.start > MAX_SCAN_BYTES:
                break
        # No failure anywhere: what the job printed last is what the page should show.
        window = found or tail
        start = window.start if window else 0
        counted = start <= LINE_COUNT_BYTES
        line_offset = log.line_number_at(start) - 1 if counted and start else 0
    stored = window.lines if window else []
    platform_lines, lines = (views if found else tail_views) or _views(stored, tagging)
    analysis = _analyse_lines(lines, failures if found else [], line_offset, exit_code, signal, grouping, tagging,
                              stored_lines=stored, platform_lines=platform_lines)
    return analysis if counted else dataclasses.replace(analysis, line_numbers_from=start)


def analyse_text(text: str, *, exit_code: int | None = None, signal: int | str | None = None,
                 grouping_config: str | GroupingConfig | None = None,
                 tagging_config: str | TaggingConfig | None = None) -> Analysis:
    """Analyse a log held in memory as text (small logs, tests, the tag_logs command)."""
    grouping, tagging = configs.grouping_config(grouping_config), configs.tagging_config(tagging_config)
    lines = split_lines(text)
    if lines and lines[-1] == "" and text.endswith("\n"):  # as analyse_log reads it
        lines.pop()
    platform_lines, parsed = _views(lines, tagging)
    return _analyse_lines(parsed, find_failures(parsed), 0, exit_code, signal, grouping, tagging, stored_lines=lines,
                          platform_lines=platform_lines)


def _views(lines: list[str], tagging: TaggingConfig) -> tuple[list[str], list[str]]:
    """(the lines the platform's rules read, the lines the program's analysis reads), one line for one so line numbers
    hold: collectors' prefixes rewritten (collectors.py), and for the program's analysis, the chatter tools print after
    a failure read as blank lines (trailers.py), where the tagging config says so."""
    lines = collectors.unquoted(lines) if tagging.quoted_pastes else lines
    canonical = collectors.canonical_lines(lines) if tagging.collector_prefixes else lines
    return canonical, (trailers.quiet(canonical) if tagging.trailers else canonical)


def _one_rank(lines: list[str], failures: list[LogFailure]) -> list[str]:
    """Where lines carry two ranks or more, the failing rank's lines and the unprefixed ones, the others blank (one line
    for one); the failing rank is the terminal failure's, else that of the last prefixed line."""
    ranks = [rank_of(line) if line else "" for line in lines]
    if len(set(ranks) - {""}) < 2:
        return lines
    terminal = terminating_failure(failures, lines)
    rank = terminal.rank if terminal is not None and terminal.rank else next(r for r in reversed(ranks) if r)
    return [line if not r or r == rank else "" for line, r in zip(lines, ranks)]


def _as_stored(analysis: Analysis, stored: list[str], line_offset: int) -> Analysis:
    """The failure line and the excerpt shown as the log stores them (collectors' prefixes on), where the parser
    read a rewritten view of the same lines."""
    changes: dict = {}
    if analysis.failure_line_number is not None:
        changes["failure_line"] = stored[analysis.failure_line_number - line_offset - 1]
    if analysis.excerpt:
        start = analysis.excerpt_start_line - line_offset - 1
        changes["excerpt"] = "\n".join(stored[start:start + analysis.excerpt.count("\n") + 1])
    return dataclasses.replace(analysis, **changes)


def _killed(exit_code, signal) -> bool:
    return (exit_code is not None and int(exit_code) in _KILL_EXIT_CODES) or (
        signal is not None and str(signal).upper().removeprefix("SIG") in {s.removeprefix("SIG") for s in _KILL_SIGNALS})


def _analyse_lines(lines: list[str], failures: list[LogFailure], line_offset: int, exit_code, signal,
                   grouping: GroupingConfig, tagging: TaggingConfig, stored_lines: list[str] | None = None,
                   platform_lines: list[str] | None = None) -> Analysis:
    program_lines = _one_rank(lines, failures) if tagging.one_rank else lines
    analysis = _tagged(program_lines, failures, line_offset, exit_code, signal, grouping, tagging)
    analysis = _refined(analysis, lines if platform_lines is None else platform_lines, line_offset, exit_code, signal,
                        grouping, tagging, stored_lines)
    if stored_lines is not None and stored_lines is not program_lines:
        analysis = _as_stored(analysis, stored_lines, line_offset)
    if grouping.cluster is None:
        return analysis
    key, reason = grouping.cluster(*_reason(analysis, inner_error=grouping.cluster_inner_error))
    return dataclasses.replace(analysis, cluster=key, cluster_message=reason)


_LAUNCHER_RULES = re.compile(r"^(?:cpu_oom\.(?:child_sigkill_memory|signal_sigkill)|unclassified\.(?:signal_\w+|native_crash"
                             r"|child_exit_code))$")


_TYPED_EVIDENCE = re.compile(r"([A-Z]\w*(?:Error|Exception)): (.+)", re.S)


def _reason(analysis: Analysis, inner_error: bool = False) -> tuple[str, str]:
    """What a reason cluster is made of: the error that ended the job; but where only a launcher's summary
    ended it (no child error printed), the reason the tag states ("child killed by SIGSEGV (signal 11)"):
    the wrapper's own message names the command and ranks, not the reason. With `inner_error`, a TF root
    error the tag read under "N root error(s) found." (its evidence, "Type: message")."""
    if _LAUNCHER_RULES.match(analysis.rule):
        return "", analysis.evidence.split(";")[0]
    if inner_error and analysis.rule.endswith(".tf_root_error"):
        inner = _TYPED_EVIDENCE.match(analysis.evidence)
        if inner:
            return inner.group(1), inner.group(2)
    return analysis.exception_type, analysis.message


def _refined(analysis: Analysis, lines: list[str], line_offset: int, exit_code, signal,
             grouping: GroupingConfig, tagging: TaggingConfig, stored_lines: list[str] | None = None) -> Analysis:
    """What the newer tagging configs add after the rules: the platform's failures, then the learned
    fallback for an exception no rule knows. The hook's NaN guard is certain and stays. The stored lines go to the
    infrastructure rules too: a collector's prefix may name the node."""
    if analysis.rule == "loss_nan.hook_nan_guard":
        return analysis
    if tagging.infra_rules is not None:
        finding = tagging.infra_rules.detect(lines, exit_code=exit_code, signal=signal, host_lines=stored_lines)
        if finding is not None:
            return _as_infrastructure(analysis, finding, lines, line_offset, grouping)
    if tagging.learned_model and model_may_answer(analysis, tagging):
        answer = learned.fallback(analysis, rule_category=analysis.category, rule_confidence=analysis.confidence,
                                  model=learned.named_model(tagging.learned_model))
        if answer is not None:
            category = CATEGORIES[answer.category]
            analysis = dataclasses.replace(
                analysis, category=category.id, dimension=category.dimension, confidence=answer.probability,
                rule=answer.rule, evidence="; ".join(answer.evidence), retry_advice=category.retry_advice)
    return dataclasses.replace(analysis, fault=fault(analysis.category))


def model_may_answer(analysis: Analysis, tagging: TaggingConfig) -> bool:
    """Whether the learned fallback is asked about this analysis of the rules (bench/train_learned.py asks the same).
    A launcher's wrapper (ChildFailedError, CalledProcessError) says nothing of the cause: no guess there; nor
    where the rules said plainly why they cannot tell (a bare signal, a cut log, an empty wrapper)."""
    plainly = tagging.frameworks and (analysis.rule.startswith(("unclassified.", "cpu_oom.signal_sigkill"))
                                      and analysis.rule != "unclassified.no_rule")
    return analysis.found and not WRAPPERS.search(analysis.exception_type) and not plainly


def _as_infrastructure(analysis: Analysis, finding: infra.InfraFinding, lines: list[str], line_offset: int,
                       grouping: GroupingConfig) -> Analysis:
    """The platform's failure: its category, advice and nodes. When the log showed no exception, the
    evidence line is the failure line, and the signature groups by its masked text (not by "no failure")."""
    category = CATEGORIES[finding.category]
    changes: dict = dict(category=category.id, dimension=category.dimension, confidence=finding.confidence,
                         rule=finding.rule, evidence=finding.evidence, retry_advice=category.retry_advice,
                         fault=infra.PLATFORM, suspect_nodes=tuple(finding.hosts))
    if not analysis.found and finding.evidence_index is not None:
        line = lines[finding.evidence_index]
        message = finding.evidence.strip()[:MAX_MESSAGE_CHARS]
        changes.update(failure_line=line, failure_line_number=line_offset + finding.evidence_index + 1,
                       exception_type="", message=message, masked_message=grouping.masked_message("", message),
                       fingerprint=grouping.fingerprint("", message, grouping.location(None)),
                       signature_basis="platform_line")
    return dataclasses.replace(analysis, **changes)


def _tagged(lines: list[str], failures: list[LogFailure], line_offset: int, exit_code, signal,
            grouping: GroupingConfig, tagging: TaggingConfig) -> Analysis:
    terminal = terminating_failure(failures, lines)
    killed = _killed(exit_code, signal)
    if terminal is not None and killed and _nonblank_after(lines, terminal.line_index) > _FAR_FROM_END:
        terminal = None  # the job went on after that error; the kill ended it
    if tagging.frameworks and not killed:
        terminal = _recovered(lines, terminal, headless=tagging.cut_statements)
    if terminal is None:
        return _with_capture(_without_failure(lines, line_offset, exit_code, signal, killed, grouping, tagging), lines)

    context = lines[max(0, terminal.start_index - 8):terminal.start_index]
    if terminal.kind == "truncated":
        first = tagging.launcher_cut == "first" and frameworks.cut_launcher_tag(lines, terminal, Tag)
        tag = first or frameworks.truncated_tag(lines, terminal, tagging.tag, Tag, skip_traces=tagging.location_traces,
                                                quoted=tagging.pasted_errors, statements=tagging.cut_statements)
        if tagging.launcher_cut == "last" and tag.category == "unclassified":
            tag = frameworks.cut_launcher_tag(lines, terminal, Tag) or tag
    elif tagging.frameworks:
        text = frameworks.with_root_errors(lines, terminal)
        if tagging.keras_call_errors:
            text = frameworks.with_keras_call_error(lines, terminal, text)
        if tagging.torchscript_messages and not text.strip():
            text = frameworks.message_below(lines, terminal)
        tag = tagging.tag(terminal.exception_type, text, context)
    else:
        tag = tagging.tag(terminal.exception_type, terminal.message, context)
    # In a chain ("During handling of the above exception..."), a generic last exception often
    # hides a specific first one: prefer the specific meaning.
    # Only when the last exception's type says little (unclassified, or a weak type default such as
    # ValueError / OSError): a TypeError raised while handling an internal KeyError is a type error.
    if not tag.specific and tag.confidence < _CHAIN_OVERRIDES_BELOW:
        for earlier in reversed(terminal.chain):
            chained = tagging.tag(earlier.exception_type, earlier.message)
            if chained.specific:
                tag = Tag(chained.category, round(chained.confidence - 0.05, 2), chained.rule + ".chained",
                          chained.evidence)
                break
    if tagging.frameworks:
        # A launcher's summary with no child error printed: its exit code or signal, said plainly.
        if frameworks.is_launcher_failure(terminal) and (not tag.specific or tag.rule == "cpu_oom.oom_killed"):
            exits = frameworks.EXIT_PATTERNS_V2 if tagging.launcher_cut else frameworks.EXIT_PATTERNS
            tag = frameworks.launcher_tag(lines, terminal, Tag, exits) or tag
        if tagging.launcher_tail and not tag.specific and not frameworks.is_launcher_failure(terminal):
            # another wrapper's words for a failed child: its exit status, said plainly
            tag = frameworks.child_exit_words_tag(terminal.message or "", lines, Tag) or tag
    elif terminal.is_wrapper and not tag.specific and root_cause_exit_code(lines, terminal.line_index) == -9:
        tag = Tag("cpu_oom", 0.8, "cpu_oom.child_sigkill", terminal.message.splitlines()[0] if terminal.message else "")

    frames = terminal.frames or next((f.frames for f in reversed(terminal.chain) if f.frames), [])
    user = user_frame(frames)
    stage = stages.stage(frames, lines, terminal.start_index, tag.category)
    if terminal.kind == "argparse" and not stages.hook_stage(lines, terminal.start_index):
        stage = "initialization"  # arguments are parsed at start-up
    message = terminal.message[:MAX_MESSAGE_CHARS]
    location = _location(grouping, user, frames, lines, terminal)
    return _with_capture(Analysis(
        found=True,
        failure_line=lines[terminal.line_index],
        failure_line_number=line_offset + terminal.line_index + 1,
        exception_type=terminal.exception_type,
        message=message,
        traceback=_traceback_text(lines, terminal),
        user_frame=user.describe() if user else "",
        excerpt="\n".join(lines[max(0, terminal.line_index - EXCERPT_BEFORE):terminal.line_index + EXCERPT_AFTER + 1]),
        excerpt_start_line=line_offset + max(0, terminal.line_index - EXCERPT_BEFORE) + 1,
        stage=stage,
        category=tag.category,
        dimension=tag.dimension,
        confidence=tag.confidence,
        rule=tag.rule,
        evidence=tag.evidence,
        retry_advice=tag.retry_advice,
        tagger_version=tagging.tagger_version,
        tagging_config=tagging.id,
        masked_message=grouping.masked_message(terminal.exception_type, message),
        fingerprint=grouping.fingerprint(terminal.exception_type, message, location),
        normaliser_version=grouping.normaliser_version,
        grouping_config=grouping.id,
        signature_basis=_basis(location, user),
    ), lines)


def _basis(location: str, user) -> str:
    """The signature_basis of a location _location made (Analysis.BASES)."""
    if not location:
        return "message"
    if user is not None:
        return "user_code"
    kind = location.split(":", 1)[0]
    return {"lib": "library_code", "entry": "entrypoint"}.get(kind, "program_output")


def _location(grouping: GroupingConfig, user, frames, lines: list[str], terminal: LogFailure) -> str:
    """What tells this failure's code apart from another's with the same message: the user's innermost
    frame; with `code_context`, where there is none, the innermost frame of any code (a library's file and
    function), else the failure's own lines above its message (argparse's usage line), else the masked lines
    the program printed just before it (a pasted error line alone keeps an empty location: nothing else can
    tell its code apart)."""
    location = grouping.location(user)
    if grouping.program_context and frameworks.is_launcher_failure(terminal):
        entry = frameworks.failed_entrypoint(lines)      # the launcher's frames are the same for every program
        if entry:
            return f"entry:{entry}"
    kinds = _CODE_KINDS | _PROGRAM_KINDS if grouping.program_context else _CODE_KINDS
    if location or not grouping.code_context or terminal.kind not in kinds:
        return location                                  # (before 2026-11i) a kill or a signal: not in the job's code
    if frames:
        inner = frames[-1]
        return f"lib:{inner.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{grouping.location(inner)}"
    mine = (lambda part: [line for line in part if rank_of(line) == terminal.rank]) \
        if grouping.rank_context and terminal.rank else (lambda part: part)
    if terminal.start_index < terminal.line_index:       # a block without frames (argparse's usage, a notebook cell)
        own = meaningful_tail(mine(lines[terminal.start_index:terminal.line_index]), 2, _body)
        return "block:" + " / ".join(grouping.mask_line(line) for line in own)
    first = terminal.chain[0].start_index if terminal.chain else terminal.start_index
    before = meaningful_tail(mine(lines[max(0, first - 50):first]), 2, _body)
    return "before:" + " / ".join(grouping.mask_line(line) for line in before) if before else ""


_CODE_KINDS = frozenset({"python", "cpp", "argparse", "lua", "embedded", "truncated"})
# What happens to a program, not in a frame of it: told apart by what it printed before (program_context).
_PROGRAM_KINDS = frozenset({"Fatal", "Killed", "OOMKilled", "CudaError"})


def _body(line: str) -> str:
    return strip_prefixes(line)[0]


def _recovered(lines: list[str], terminal: LogFailure | None, headless: bool = False) -> LogFailure | None:
    """Tagging configs with `frameworks`: a TF 1.x "(see above for traceback)" line when nothing else was
    found, and a traceback the log ends inside, unless it only continues the terminal failure's chain. With
    `headless`, where nothing else was found, also the frames a log ends with when their header was not pasted, if
    the deepest shows the `raise` or `assert` statement that raised (other headless frames are left to the tail's
    readings, which read the error above them)."""
    if terminal is None:
        terminal = frameworks.see_above_failure(lines)
    cut = frameworks.truncated_traceback(lines)
    if cut is None and headless and terminal is None:
        cut = frameworks.truncated_traceback(lines, headless=True)
        if cut is not None and frameworks.raised_by_statement(cut.frames[-1].code or "") is None:
            cut = None
    if cut is None:
        return terminal
    if terminal is None:
        return cut
    # A failure just before the cut traceback (TF's "OP_REQUIRES failed" status) is what it raises.
    between = lines[terminal.line_index:cut.start_index]
    if cut.start_index - terminal.line_index > _TRUNCATED_CONTEXT and not any(
            m in line for line in between for m in CHAIN_MARKERS):
        return cut
    return terminal


def _tail_reading(lines: list[str], tagging: TaggingConfig) -> tuple[int, Tag, str] | None:
    """A log with no parsed failure that still says what failed at its end: TF's root-error report printed as a log
    record (its first sub-error is read), an exception line cut after a few letters of its name (the type is read),
    a CUDA kernel's assertion lines (read as the device-side assert, by their condition), or, where the config reads
    them, a bare exception name under a pasted frame or a glog FATAL record. (line index, tag as a guess, message),
    or None when none is there or the rules make nothing of it."""
    root = frameworks.tail_root_error(lines)
    if root is not None:
        index, kind, text = root
        found = tagging.tag(kind, text)
        if found.category != "unclassified":
            return index, Tag(found.category, round(min(0.6, found.confidence - 0.2), 2),
                              found.rule + ".tail_root_error", found.evidence), f"{kind}: {text}"[:MAX_MESSAGE_CHARS]
    cut = frameworks.cut_exception_name(lines, qualified=tagging.qualified_cut_names)
    if cut is not None:
        index, kind = cut
        found = tagging.tag(kind, "")
        if found.category != "unclassified":
            return index, Tag(found.category, round(min(0.5, found.confidence - 0.3), 2), found.rule + ".cut_name",
                              lines[index].strip()), f"{kind} (the log is cut inside its exception line: {lines[index].strip()!r})"
    kernel = frameworks.kernel_assert_line(lines) if tagging.kernel_asserts else None
    if kernel is not None:        # the device's assertion, before the host's "device-side assert triggered"
        index, condition = kernel
        found = tagging.tag("RuntimeError", f"CUDA error: device-side assert triggered (Assertion `{condition}` failed)")
        if found.category != "unclassified":
            return index, Tag(found.category, round(min(0.7, found.confidence - 0.1), 2), found.rule + ".kernel_assert",
                              lines[index].strip()[:300]), lines[index].strip()[:MAX_MESSAGE_CHARS]
    if not tagging.tail_fatal_lines:
        return None
    bare = frameworks.bare_exception_name(lines)
    if bare is not None:          # "AssertionError" alone under an unindented pasted frame
        index, kind = bare
        found = tagging.tag(kind, "")
        if found.category != "unclassified":
            return index, Tag(found.category, round(min(0.6, found.confidence - 0.1), 2), found.rule + ".bare_name",
                              lines[index].strip()), kind
    fatal = frameworks.glog_fatal_line(lines)
    if fatal is not None:         # glog's FATAL record, followed by its stack trace
        index, text = fatal
        found = tagging.tag("", text)
        if found.category != "unclassified":
            return index, Tag(found.category, round(min(0.7, found.confidence - 0.1), 2), found.rule + ".glog_fatal",
                              found.evidence), text[:MAX_MESSAGE_CHARS]
    return None


def _without_failure(lines, line_offset, exit_code, signal, killed, grouping: GroupingConfig,
                     tagging: TaggingConfig) -> Analysis:
    """No failure the parser recognises: the scheduler's exit status, or else the last lines' words (read without
    the launchers' rank prefixes where the config reads collectors' prefixes too)."""
    read = collectors.launcher_bodies(lines) if tagging.collector_prefixes else lines
    last = max((i for i, line in enumerate(lines) if line.strip()), default=None)
    evidence_index = last
    if killed:
        exception_type, category, confidence, rule = "OOMKilled", "cpu_oom", 0.7, _KILLED_RULE
        how = ", ".join(f"{k} {v}" for k, v in (("exit code", exit_code), ("signal", signal)) if v is not None)
        message = f"process killed ({how}) with no error in its log"
    else:
        exception_type, category, confidence, rule = "", "unclassified", 0.1, _NO_FAILURE_RULE
        message = f"no failure found in the log (exit code {exit_code})" if exit_code is not None else \
            "no failure found in the log"
        # Logs cut short (a quoted excerpt, a truncated upload) often end on the line that names the
        # problem without an exception line: let a specific message rule read the last lines, with
        # a confidence that says it is a guess.
        said = (frameworks.said_lines(read, _TAIL_GUESS_LINES, python_frames=tagging.pasted_errors) if tagging.location_traces
                else [i for i, line in enumerate(read) if line.strip()][-_TAIL_GUESS_LINES:])
        quoted = [i for i in frameworks.backticked_lines(read) if i not in said] if tagging.pasted_errors else []
        closer = _tail_reading(read, tagging) if tagging.tail_reading else None
        for index in ([] if closer else said[::-1] + quoted):   # each line read once
            if tagging.pasted_errors:
                guess = frameworks.said_tag(read[index], tagging.tag, quoted=True)
            else:
                guess = tagging.tag("", read[index].strip())
                guess = guess if guess.specific else None
            if guess is not None:
                category, rule, evidence_index = guess.category, guess.rule + ".unparsed_tail", index
                confidence = round(min(0.6, guess.confidence - 0.3), 2)
                message = read[index].strip()
                break
        else:
            launched = frameworks.launcher_tail_tag(read, Tag) if tagging.launcher_tail and not closer else None
            if launched is not None:   # the log ends on a launcher's report of its child's exit
                category, confidence, rule, message = launched.category, launched.confidence, launched.rule, launched.evidence
        if closer is not None:
            evidence_index, tag, message = closer
            category, rule, confidence = tag.category, tag.rule, tag.confidence
    signature_text, basis = message, "message"
    if grouping.tail_fingerprint and rule in (_NO_FAILURE_RULE, _KILLED_RULE):
        # Not one shared "no failure" signature: the log's own last words tell such failures apart.
        tail = meaningful_tail(read)
        if tail and rule == _NO_FAILURE_RULE:
            message = f"{message}; the log ends: {tail[-1]}"
        before = tail[:-1] if rule == _NO_FAILURE_RULE else tail
        signature_text = f"{message}\n(after: {' / '.join(before)})" if before else message
        basis = "log_tail" if tail else basis
    if grouping.program_context and rule not in (_NO_FAILURE_RULE, _KILLED_RULE):
        entry = frameworks.failed_entrypoint(read)     # a launcher's report of a child that printed no error
        if entry:
            signature_text, basis = f"{signature_text}\n(program: {entry})", "entrypoint"
    category_ = CATEGORIES[category]
    return Analysis(
        found=False, failure_line=lines[evidence_index] if evidence_index is not None else "",
        failure_line_number=line_offset + evidence_index + 1 if evidence_index is not None else None,
        exception_type=exception_type, message=message, traceback="", user_frame="",
        excerpt="\n".join(lines[-EXCERPT_BEFORE:]), excerpt_start_line=line_offset + max(0, len(lines) - EXCERPT_BEFORE) + 1,
        stage=stages.stage([], lines, len(lines), category), category=category, dimension=category_.dimension,
        confidence=confidence, rule=rule, evidence=message, retry_advice=category_.retry_advice,
        tagger_version=tagging.tagger_version, tagging_config=tagging.id,
        masked_message=grouping.masked_message(exception_type, signature_text),
        fingerprint=grouping.fingerprint(exception_type, signature_text, grouping.location(None)),
        normaliser_version=grouping.normaliser_version, grouping_config=grouping.id, signature_basis=basis,
    )


_NO_FAILURE_RULE, _KILLED_RULE = "unclassified.no_failure_in_log", "cpu_oom.exit_code_sigkill"
_PROGRESS = re.compile(r"\d+%\|| [\d.]+(?:it/s|s/it)\b|\[\d+:\d+<")  # tqdm and friends
_LETTERS = re.compile(r"[A-Za-z]")
TAIL_LINES, TAIL_LINE_CHARS = 3, 200


def meaningful_tail(lines: list[str], count: int = TAIL_LINES, clean=None) -> list[str]:
    """The last `count` lines that say something (oldest first, stripped, capped): not blank, not a
    separator or a bare number, not a progress bar. `clean` (e.g. launcher prefixes off) is applied to
    the lines read, from the end, until enough are found."""
    tail: list[str] = []
    for line in reversed(lines):
        text = (clean(line) if clean else line).strip()
        if len(_LETTERS.findall(text)) >= 3 and not _PROGRESS.search(text):
            tail.append(text[:TAIL_LINE_CHARS])
            if len(tail) == count:
                break
    return tail[::-1]


def _nonblank_after(lines: list[str], index: int) -> int:
    return sum(1 for line in lines[index + 1:] if line.strip())


def _traceback_text(lines: list[str], failure: LogFailure) -> str:
    first = failure.chain[0].start_index if failure.chain else failure.start_index
    end = failure.line_index + 1 + min(len(failure.message.splitlines()) - 1, 30) if failure.message else failure.line_index + 1
    block = lines[first:max(end, failure.line_index + 1)]
    if len(block) > MAX_TRACEBACK_LINES:
        block = block[:20] + [f"... {len(block) - MAX_TRACEBACK_LINES} lines omitted ..."] + block[-(MAX_TRACEBACK_LINES - 20):]
    return "\n".join(block)


def _with_capture(analysis: Analysis, lines: list[str]) -> Analysis:
    """Attach the hook's last capture line, if any. A NaN/Inf guard that stopped the job is certain
    evidence, so it decides the category (loss_nan) and, with the hook's own stage, the stage."""
    line, capture = find_capture(lines)
    if not capture:
        return analysis
    changes: dict = {"capture": capture}
    if capture.get("stage") in HOOK_STAGES:
        changes["stage"] = capture["stage"]
    if capture.get("guard") == "nan":
        category = CATEGORIES["loss_nan"]
        changes.update(category="loss_nan", dimension=category.dimension, confidence=0.99,
                       rule="loss_nan.hook_nan_guard", evidence=line.strip(), retry_advice=category.retry_advice)
    return dataclasses.replace(analysis, **changes)
