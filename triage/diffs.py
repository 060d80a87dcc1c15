"""Validate and describe a unified diff (pure; no Django)."""
from __future__ import annotations

import re
from dataclasses import dataclass

MAX_DIFF_BYTES = 1024 * 1024
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class DiffError(ValueError):
    pass


@dataclass(frozen=True)
class DiffLine:
    kind: str   # file | hunk | add | del | context | meta
    text: str


@dataclass(frozen=True)
class Diff:
    files: list[str]
    added: int
    removed: int
    lines: list[DiffLine]


def parse_diff(text: str) -> Diff:
    """Parse a unified diff (as from `git diff` or `diff -u`); DiffError says what is wrong."""
    if len(text.encode("utf-8", errors="replace")) > MAX_DIFF_BYTES:
        raise DiffError(f"the diff is larger than {MAX_DIFF_BYTES // 1024} KB")
    if "\x00" in text:
        raise DiffError("the diff contains NUL bytes (binary data?)")
    raw = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    lines: list[DiffLine] = []
    files: list[str] = []
    added = removed = 0
    old_left = new_left = 0
    hunks = 0
    for number, line in enumerate(raw, 1):
        if old_left > 0 or new_left > 0:
            if line.startswith("+"):
                new_left -= 1
                added += 1
                lines.append(DiffLine("add", line))
            elif line.startswith("-"):
                old_left -= 1
                removed += 1
                lines.append(DiffLine("del", line))
            elif line.startswith(" ") or line == "":
                old_left -= 1
                new_left -= 1
                lines.append(DiffLine("context", line))
            elif line.startswith("\\"):
                lines.append(DiffLine("meta", line))
            else:
                raise DiffError(f"line {number}: the hunk above ends early (expected more +, - or context lines)")
            if old_left < 0 or new_left < 0:
                raise DiffError(f"line {number}: more lines than the hunk header announced")
            continue
        if line.startswith("+++ "):
            files.append(_file_name(line[4:]))
            lines.append(DiffLine("file", line))
        elif line.startswith(("--- ", "diff ", "index ", "new file", "deleted file", "similarity", "rename ", "old mode",
                              "new mode", "Binary files")):
            lines.append(DiffLine("file" if line.startswith(("---", "diff ")) else "meta", line))
        elif m := _HUNK.match(line):
            if not files:
                raise DiffError(f"line {number}: a hunk before any '+++ file' header")
            old_left = int(m.group(2)) if m.group(2) is not None else 1
            new_left = int(m.group(4)) if m.group(4) is not None else 1
            hunks += 1
            lines.append(DiffLine("hunk", line))
        elif line.startswith("\\"):
            lines.append(DiffLine("meta", line))
        elif not line.strip():
            lines.append(DiffLine("context", line))
        elif hunks and line[:1] in "+- ":
            raise DiffError(f"line {number}: more lines than the hunk header above announced")
        else:
            raise DiffError(f"line {number}: not part of a unified diff: {line[:80]!r}")
    if old_left > 0 or new_left > 0:
        raise DiffError("the last hunk is shorter than its header announced (was the diff cut?)")
    if not hunks:
        raise DiffError("no hunks found: paste a unified diff (git diff, diff -u) with '---', '+++' and '@@' lines")
    return Diff(files, added, removed, lines)


def _file_name(header: str) -> str:
    name = header.split("\t", 1)[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name
