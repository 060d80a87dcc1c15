"""Read a job log from its end, in bounded memory.

A failed job's terminating error is almost always in its last few kilobytes, while its log may be
gigabytes of training output. So we read a window from the end, walk further back only while no
failure has been found, and never hold more than one window (plus overlap) in memory.
"""
from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from typing import BinaryIO, Iterator

TAIL_BYTES = 256 * 1024          # first window: covers nearly every traceback
WINDOW_BYTES = 512 * 1024        # later windows, walking backwards (small: only windows the hint matches are parsed)
OVERLAP_BYTES = 64 * 1024        # so a traceback that straddles two windows is seen whole
MAX_LINE_CHARS = 4000            # a 1 MB single line is cut, not analysed whole
# Line numbers are counted at analysis only when the failure window starts this close to the start of the
# log (a C-speed scan of at most 8 MiB); deeper, they count from the window and the job page resolves
# them when someone opens it (jobs_ingest.failures.resolve_line_numbers), so analysis stays bounded.
LINE_COUNT_BYTES = 8 * 1024 * 1024

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Window:
    lines: list[str]       # cleaned lines of this window
    start: int             # byte offset of lines[0] in the log
    starts_at_zero: bool   # True when the window reaches the start of the log
    skipped: bool = False  # True when the hint found nothing here, so its lines were not decoded


def clean_line(raw: str) -> str:
    """Printable text of one log line: no ANSI colours, no control bytes, the last carriage-return
    segment only (what a terminal shows after a progress bar), capped in length."""
    if "\r" in raw:
        segments = [s for s in raw.split("\r") if s.strip()]
        raw = segments[-1] if segments else ""
    raw = _ANSI.sub("", raw)
    raw = _CONTROL.sub("", raw)
    if len(raw) > MAX_LINE_CHARS:
        raw = raw[:MAX_LINE_CHARS] + " …[line cut]"
    return raw.rstrip()


def decode(data: bytes) -> str:
    """Bytes to text: UTF-8 where valid, replacement characters where not (logs are often mixed)."""
    return data.decode("utf-8", errors="replace")


def split_lines(text: str) -> list[str]:
    return [clean_line(line) for line in text.split("\n")]


class LogSource:
    """A log given as a path, bytes, str or binary file object, read by byte offsets."""

    def __init__(self, source: str | bytes | os.PathLike | BinaryIO):
        """`source` is a path (str or PathLike), the log's bytes, or a seekable binary file."""
        self._owned = None
        if isinstance(source, (bytes, bytearray)):
            self._fh: BinaryIO = io.BytesIO(bytes(source))
        elif isinstance(source, (str, os.PathLike)):
            self._fh = self._owned = open(source, "rb")
        else:
            self._fh = source
        self._fh.seek(0, os.SEEK_END)
        self.size = self._fh.tell()

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()

    def __enter__(self) -> "LogSource":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def read(self, start: int, end: int) -> bytes:
        self._fh.seek(start)
        return self._fh.read(end - start)

    def line_number_at(self, offset: int) -> int:
        """1-based number of the line that starts at byte `offset`: counts the newlines before it,
        streamed 1 MiB at a time. The analysis calls it only below LINE_COUNT_BYTES."""
        count, pos = 0, 0
        while pos < offset:
            chunk = self.read(pos, min(offset, pos + 1024 * 1024))
            count += chunk.count(b"\n")
            pos += len(chunk)
        return count + 1

    def windows(self, hint=None) -> Iterator[Window]:
        """Windows from the end of the log backwards: the tail first, then larger steps. With a
        `hint` (anything with a `search(bytes)` method, e.g. a bytes regex), a window it does not match is yielded empty and `skipped`:
        megabytes of training output cost one C-speed scan instead of line-by-line parsing."""
        end, size = self.size, TAIL_BYTES
        in_long_line = False  # the later window lay inside one line, so it did not hold that line
        while True:
            start = max(0, end - size)
            data = self.read(start, min(self.size, end + (OVERLAP_BYTES if end < self.size else 0)))
            holds_a_line_start = True
            if start > 0:
                # Drop the partial first line; it is read whole by the next window back.
                cut = data.find(b"\n")
                if 0 <= cut and start + cut + 1 < end:
                    data, start = data[cut + 1:], start + cut + 1
                else:
                    # No line starts inside this window (it lies within one long line): yield nothing
                    # and keep moving back from `start`, or the loop would read this window forever.
                    data, holds_a_line_start = b"", False
            if end < self.size and not in_long_line:
                # The overlap into the later window may end inside a line: drop that partial line
                # (the later window holds it whole), or it could read as a cut-off exception.
                cut = data.rfind(b"\n")
                data = data[:cut + 1] if cut >= 0 else data
            # After a window inside a long line, keep that line's beginning here (lines are cut to
            # MAX_LINE_CHARS anyway): no other window holds it.
            in_long_line = not holds_a_line_start
            if hint is not None and end < self.size and not hint.search(data):
                yield Window([], start, start == 0, skipped=True)
            else:
                lines = split_lines(decode(data)) if data else []
                if lines and lines[-1] == "" and data.endswith(b"\n"):
                    lines.pop()
                yield Window(lines, start, start == 0)
            if start == 0:
                return
            end, size = start, WINDOW_BYTES
