"""What the training-side hook captured when it stopped a job: the newest "[jobtriage] capture={json}"
line of the log, cleaned to the known fields with bounded sizes (a log is untrusted input).
"""
from __future__ import annotations

import json
import math

from .taxonomy import STAGES

# What the hook prints when it stops a job (jobtriage_client, docs/hook.md): one line of JSON, kept
# under logread.MAX_LINE_CHARS by the client so the reader never cuts it.
_CAPTURE_PREFIX = "[jobtriage] capture="
HOOK_STAGES = set(STAGES) - {"unknown"}
MAX_CAPTURE_CHARS = 32_000  # stored per failure


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
    if _text(raw.get("stage"), 40) in HOOK_STAGES:
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
