"""From a failed job's log to an Analysis: find the terminating failure, its stage, tag and signature.

Pure functions over text; no Django, no servers. The log is read tail first in bounded windows
(see logread), so a 1 GB log costs one 256 KiB read when its failure is near the end, as it nearly
always is.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from typing import BinaryIO

from . import normalise, parser, tagger
from .analysis import Analysis
from .logread import LogSource, split_lines
from .taxonomy import CATEGORIES, STAGES

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

_LIBRARY_PATH = re.compile(r"[\\/](?:site|dist)-packages[\\/]|[\\/]lib[\\/]python\d|^<frozen |[\\/]lib64?[\\/]python"
                           r"|^<(?:string|__array_function__|decorator)")

# Stage from the names of functions on the stack, innermost first (most specific wins).
_STAGE_BY_FUNCTION = [
    ("evaluation", re.compile(r"eval|valid|(?:^|_)test(?:_|$)|predict|infer|score|metric|benchmark", re.I)),
    ("data_preprocessing", re.compile(r"__getitem__|__next__|collate|load_data|dataset|dataloader|preprocess"
                                      r"|tokeni[sz]|transform|augment|read_(?:csv|data|image)|prepare_data|_worker_loop"
                                      r"|fetch|get_batch|make_data|build_data|encode|vocab", re.I)),
    ("training", re.compile(r"train|fit\b|(?:^|_)fit|backward|optimi[sz]er?_?step|training_step|run_epoch|(?:^|_)step$"
                            r"|_one_epoch|epoch", re.I)),
    ("initialization", re.compile(r"^<module>$|__init__|setup|build_model|create_model|get_model|load_model"
                                  r"|from_pretrained|parse_args|init_process_group|load_checkpoint|load_state_dict|^build_"
                                  r"|configure|main_worker|init", re.I)),
]
# Stage from the source line Python printed under a user frame, when function names say nothing
# (scripts and notebooks run at module level): what the failing statement was doing.
_STAGE_BY_CODE = [
    ("training", re.compile(r"\.backward\(|\bloss\b\s*=|_loss\(|cross_entropy\(|criterion\(|optimi[sz]er\.step"
                            r"|\.fit\(|\btrainer\.|\.train\(|train_(?:step|epoch|one)"
                            r"|\bout(?:puts?)?\s*=\s*(?:self\.)?(?:model|net|emb\w*)\(", re.I)),
    ("evaluation", re.compile(r"\beval|predict|accuracy|\bmetrics?\b|\bscore\(|\.evaluate\(", re.I)),
    ("data_preprocessing", re.compile(r"\bopen\(|json\.loads?\(|pickle\.loads?\(|np\.load|pd\.read_|read_csv"
                                      r"|Image\.open|imread|DataLoader\(|\bloader\b|dataset|\bds\[|tokeni[sz]|zipfile"
                                      r"|gzip|\bcsv\.|listdir|glob\(|\.astype\(|for \w+ in f\b|\bfeatures\b|\bimages\b"
                                      r"|\bsamples\b|transform|preprocess|normali[sz]e|\.split\(", re.I)),
    ("initialization", re.compile(r"^import |^from \S+ import|parse_args|load_state_dict|torch\.load|from_pretrained"
                                  r"|build_|\bconfig\b|\bcfg\b|\.to\(device\)|\.cuda\(\)", re.I)),
]
# Stage from lines the job printed before failing, newest first. The training-side hook writes
# "[jobtriage] stage=<name>" and wins over everything else.
_HOOK_MARKER = re.compile(r"\[jobtriage\] stage[=:]\s*(initialization|data_preprocessing|training|evaluation)")
# Start-up lines that print the run's parameters mention "training" and "evaluation" without
# either having started (HF's "Training/evaluation parameters TrainingArguments(...)").
_PARAMETER_DUMP = re.compile(r"parameters|arguments|\bargs\b|Namespace\(|\bconfig\b|\b\w+: (?:True|False)\b", re.I)
_STAGE_BY_LOG = [
    ("evaluation", re.compile(r"\b(?:Evaluat(?:e|ing|ion)|Validat(?:e|ing|ion)|Testing|Running (?:eval|predict|test)"
                              r"|eval_loss|val_loss|val_acc|\*\*\*\*\* Running Evaluation|Predicting)\b", re.I)),
    ("training", re.compile(r"\b(?:Epoch\s*[\[:]?\s*\d+|epoch \d+/\d+|step[ =:]+\d+|iter(?:ation)?[ =:]+\d+|loss[ =:]+[\d.]"
                            r"|Training|\*\*\*\*\* Running training|it/s\]|s/it\])", re.I)),
    ("data_preprocessing", re.compile(r"\b(?:Loading (?:the )?(?:data|dataset)|Preprocess|Tokeniz|Map:|Building "
                                      r"(?:the )?(?:dataset|vocab)|Downloading (?:data|dataset)|Generating \w+ split)", re.I)),
    ("initialization", re.compile(r"\b(?:Loading (?:model|checkpoint|weights|config)|Initializ|Building model"
                                  r"|Using device|world_size|Setting up|Downloading model)", re.I)),
]
# What the hook prints when it stops a job (jobtriage_client, docs/hook.md): one line of JSON, kept
# under logread.MAX_LINE_CHARS by the client so the reader never cuts it.
_CAPTURE_PREFIX = "[jobtriage] capture="
_HOOK_STAGES = set(STAGES) - {"unknown"}
MAX_CAPTURE_CHARS = 32_000  # stored per failure
_TAIL_GUESS_LINES = 3
# Categories that can only happen before training starts, when nothing else tells the stage.
_INITIALIZATION_CATEGORIES = {"syntax_error"}
_LIKELY_INITIALIZATION = {"library_not_found"}


def analyse_log(source: str | bytes | os.PathLike | BinaryIO, *, exit_code: int | None = None,
                signal: int | str | None = None) -> Analysis:
    """Analyse a job log given as a path (str or PathLike), its bytes, or a seekable binary file.

    `exit_code` and `signal` come from the scheduler's metadata when known: a job killed with
    SIGKILL (exit 137) and no error in its log ran out of CPU memory.
    """
    with LogSource(source) as log:
        tail, found = None, None
        for window in log.windows(hint=FAILURE_HINT):
            tail = tail or window
            failures = parser.find_failures(window.lines)
            if failures:
                found = window
                break
            if log.size - window.start > MAX_SCAN_BYTES:
                break
        # No failure anywhere: what the job printed last is what the page should show.
        window = found or tail
        line_offset = log.line_number_at(window.start) - 1 if window and window.start else 0
    lines = window.lines if window else []
    return _analyse_lines(lines, failures if found else [], line_offset, exit_code, signal)


def analyse_text(text: str, *, exit_code: int | None = None, signal: int | str | None = None) -> Analysis:
    """Analyse a log held in memory as text (small logs, tests, the tag_logs command)."""
    lines = split_lines(text)
    if lines and lines[-1] == "" and text.endswith("\n"):  # as analyse_log reads it
        lines.pop()
    return _analyse_lines(lines, parser.find_failures(lines), 0, exit_code, signal)


def _killed(exit_code, signal) -> bool:
    return (exit_code is not None and int(exit_code) in _KILL_EXIT_CODES) or (
        signal is not None and str(signal).upper().removeprefix("SIG") in {s.removeprefix("SIG") for s in _KILL_SIGNALS})


def _analyse_lines(lines: list[str], failures: list[parser.Failure], line_offset: int,
                   exit_code, signal) -> Analysis:
    terminal = parser.terminating_failure(failures, lines)
    killed = _killed(exit_code, signal)
    if terminal is not None and killed and _nonblank_after(lines, terminal.line_index) > _FAR_FROM_END:
        terminal = None  # the job went on after that error; the kill ended it
    if terminal is None:
        return _with_capture(_without_failure(lines, line_offset, exit_code, signal, killed), lines)

    context = lines[max(0, terminal.start_index - 8):terminal.start_index]
    tag = tagger.tag(terminal.exception_type, terminal.message, context)
    # In a chain ("During handling of the above exception..."), a generic last exception often
    # hides a specific first one: prefer the specific meaning.
    # Only when the last exception's type says little (unclassified, or a weak type default such as
    # ValueError / OSError): a TypeError raised while handling an internal KeyError is a type error.
    if not tag.specific and tag.confidence < _CHAIN_OVERRIDES_BELOW:
        for earlier in reversed(terminal.chain):
            chained = tagger.tag(earlier.exception_type, earlier.message)
            if chained.specific:
                tag = tagger.Tag(chained.category, round(chained.confidence - 0.05, 2), chained.rule + ".chained",
                                 chained.evidence)
                break
    if terminal.is_wrapper and not tag.specific and parser.root_cause_exit_code(lines, terminal.line_index) == -9:
        tag = tagger.Tag("cpu_oom", 0.8, "cpu_oom.child_sigkill", terminal.message.splitlines()[0] if terminal.message else "")

    frames = terminal.frames or next((f.frames for f in reversed(terminal.chain) if f.frames), [])
    user = _user_frame(frames)
    stage = _stage(frames, lines, terminal.start_index, tag.category)
    if terminal.kind == "argparse" and not _hook_stage(lines, terminal.start_index):
        stage = "initialization"  # arguments are parsed at start-up
    message = terminal.message[:MAX_MESSAGE_CHARS]
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
        tagger_version=tagger.TAGGER_VERSION,
        masked_message=normalise.masked_message(terminal.exception_type, message),
        fingerprint=normalise.fingerprint(terminal.exception_type, message, _fingerprint_location(user)),
        normaliser_version=normalise.NORMALISER_VERSION,
    ), lines)


def _without_failure(lines, line_offset, exit_code, signal, killed) -> Analysis:
    """No failure the parser recognises: the scheduler's exit status, or else the last lines' words."""
    last = max((i for i, line in enumerate(lines) if line.strip()), default=None)
    evidence_index = last
    if killed:
        exception_type, category, confidence, rule = "OOMKilled", "cpu_oom", 0.7, "cpu_oom.exit_code_sigkill"
        how = ", ".join(f"{k} {v}" for k, v in (("exit code", exit_code), ("signal", signal)) if v is not None)
        message = f"process killed ({how}) with no error in its log"
    else:
        exception_type, category, confidence, rule = "", "unclassified", 0.1, "unclassified.no_failure_in_log"
        message = f"no failure found in the log (exit code {exit_code})" if exit_code is not None else \
            "no failure found in the log"
        # Logs cut short (a quoted excerpt, a truncated upload) often end on the line that names the
        # problem without an exception line: let a specific message rule read the last lines, with
        # a confidence that says it is a guess.
        for index in [i for i, line in enumerate(lines) if line.strip()][-_TAIL_GUESS_LINES:][::-1]:
            guess = tagger.tag("", lines[index].strip())
            if guess.specific:
                category, rule, evidence_index = guess.category, guess.rule + ".unparsed_tail", index
                confidence = round(min(0.6, guess.confidence - 0.3), 2)
                message = lines[index].strip()
                break
    category_ = CATEGORIES[category]
    return Analysis(
        found=False, failure_line=lines[evidence_index] if evidence_index is not None else "",
        failure_line_number=line_offset + evidence_index + 1 if evidence_index is not None else None,
        exception_type=exception_type, message=message, traceback="", user_frame="",
        excerpt="\n".join(lines[-EXCERPT_BEFORE:]), excerpt_start_line=line_offset + max(0, len(lines) - EXCERPT_BEFORE) + 1,
        stage=_stage([], lines, len(lines), category), category=category, dimension=category_.dimension,
        confidence=confidence, rule=rule, evidence=message, retry_advice=category_.retry_advice,
        tagger_version=tagger.TAGGER_VERSION,
        masked_message=normalise.masked_message(exception_type, message),
        fingerprint=normalise.fingerprint(exception_type, message), normaliser_version=normalise.NORMALISER_VERSION,
    )


def _nonblank_after(lines: list[str], index: int) -> int:
    return sum(1 for line in lines[index + 1:] if line.strip())


def _is_user_frame(frame: parser.Frame) -> bool:
    return not _LIBRARY_PATH.search(frame.file)


def _fingerprint_location(frame: parser.Frame | None) -> str:
    """The user's innermost function names where a failure happened; code at module level or in a
    notebook cell has no such name, so its (masked) failing statement stands in for it, as Sentry
    uses a frame's context line. Otherwise two scripts' "SyntaxError: invalid syntax" would merge."""
    if frame is None:
        return ""
    if frame.function and not frame.function.startswith("<"):
        return frame.function
    return f"{frame.function}|{normalise.mask(frame.code)}" if frame.code else frame.function


def _user_frame(frames: list[parser.Frame]) -> parser.Frame | None:
    return next((f for f in reversed(frames) if _is_user_frame(f)), None)


def _hook_stage(lines: list[str], before: int) -> str:
    for line in reversed(lines[:before]):
        m = _HOOK_MARKER.search(line)
        if m:
            return m.group(1)
    return ""


def _stage(frames: list[parser.Frame], lines: list[str], before: int, category: str) -> str:
    hooked = _hook_stage(lines, before)
    if hooked:
        return hooked
    # Innermost user frames first: "evaluate -> model.forward" is evaluation, not training.
    user_frames = [f for f in reversed(frames) if _is_user_frame(f)]
    user_functions = [f.function for f in user_frames if f.function]
    for function in user_functions:
        if function.startswith("<"):  # <module>, <listcomp>, <lambda>: no meaning
            continue
        for stage, pattern in _STAGE_BY_FUNCTION:
            if pattern.search(function):
                return stage
    if category in _INITIALIZATION_CATEGORIES:
        return "initialization"  # compiled or imported at start-up, whatever the log said before
    # What the job said it was doing last, then what the failing statement does.
    for line in reversed(lines[max(0, before - 400):before]):
        if _PARAMETER_DUMP.search(line):
            continue
        for stage, pattern in _STAGE_BY_LOG:
            if pattern.search(line):
                return stage
    for frame in user_frames:
        for stage, pattern in _STAGE_BY_CODE:
            if frame.code and pattern.search(frame.code):
                return stage
    if category in _LIKELY_INITIALIZATION or (user_functions and set(user_functions) <= {"<module>", "main"}):
        return "initialization"
    return "unknown"


def _traceback_text(lines: list[str], failure: parser.Failure) -> str:
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
    if capture.get("stage") in _HOOK_STAGES:
        changes["stage"] = capture["stage"]
    if capture.get("guard") == "nan":
        category = CATEGORIES["loss_nan"]
        changes.update(category="loss_nan", dimension=category.dimension, confidence=0.99,
                       rule="loss_nan.hook_nan_guard", evidence=line.strip(), retry_advice=category.retry_advice)
    return dataclasses.replace(analysis, **changes)


def find_capture(lines: list[str]) -> tuple[str, dict]:
    """The newest "[jobtriage] capture={json}" line and its cleaned content; ("", {}) when there is
    none or it is not valid JSON (a log is untrusted input: never raises)."""
    for line in reversed(lines):
        at = line.find(_CAPTURE_PREFIX)
        if at < 0:
            continue
        try:
            raw = json.loads(line[at + len(_CAPTURE_PREFIX):])
        except (ValueError, RecursionError):
            continue
        capture = clean_capture(raw)
        if capture:
            return line, capture
    return "", {}


def _text(value, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _number(value) -> int | float | None:
    # json.loads accepts NaN and Infinity, which PostgreSQL's jsonb refuses.
    ok = isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and math.isfinite(value)
    return value if ok else None


def clean_capture(raw) -> dict:
    """Only the known fields, with their types checked and every string and list bounded, so that
    what a job printed can neither grow a row without limit nor smuggle in other structure."""
    if not isinstance(raw, dict):
        return {}
    capture = {key: _text(raw.get(key), limit) for key, limit in
               (("guard", 32), ("framework", 32), ("reason", 300), ("replay", 2000)) if _text(raw.get(key), limit)}
    for key in ("step", "epoch"):
        if _number(raw.get(key)) is not None:
            capture[key] = raw[key]
    if _text(raw.get("stage"), 40) in _HOOK_STAGES:
        capture["stage"] = raw["stage"]
    stages = raw.get("stages") if isinstance(raw.get("stages"), list) else []
    capture["stages"] = [{"stage": _text(s.get("stage"), 40), "at": _text(s.get("at"), 40),
                          "seconds": _number(s.get("seconds"))}
                         for s in stages if isinstance(s, dict) and _text(s.get("stage"), 40)][-50:]
    inputs = raw.get("inputs") if isinstance(raw.get("inputs"), list) else []
    capture["inputs"] = [{"step": _number(i.get("step")),
                          "files": [f[:500] for f in i.get("files", [])[:32] if isinstance(f, str)]
                          if isinstance(i.get("files"), list) else []}
                         for i in inputs if isinstance(i, dict)][-20:]
    artifacts = raw.get("artifacts") if isinstance(raw.get("artifacts"), dict) else {}
    capture["artifacts"] = {key: _text(artifacts.get(key), 1000) for key in ("dir", "batch", "checkpoint", "seeds_file")
                            if _text(artifacts.get(key), 1000)}
    seeds = artifacts.get("seeds") if isinstance(artifacts.get("seeds"), dict) else {}
    seeds = {str(k)[:32]: v if _number(v) is not None else _text(v, 64) for k, v in list(seeds.items())[:10]}
    if seeds:
        capture["artifacts"]["seeds"] = seeds
    while capture["inputs"] and len(json.dumps(capture)) > MAX_CAPTURE_CHARS:
        capture["inputs"].pop(0)  # the oldest batches matter least
    return capture if capture.get("guard") or capture["stages"] or capture["inputs"] or capture["artifacts"] else {}
