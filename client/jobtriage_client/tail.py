"""The last bytes of a command's output, kept in a temporary file of bounded size.

A training job may print gigabytes; the failure that ended it is nearly always in the last lines.
Writes append to a file; once it holds twice the limit, its last `limit` bytes are moved to the
front, so each byte is copied at most once more on average and the file never exceeds 2 x limit.
"""
from __future__ import annotations

import os
import tempfile
import threading

DEFAULT_LIMIT = 2 * 1024 * 1024


class TailBuffer:
    def __init__(self, limit: int = DEFAULT_LIMIT, directory: str | None = None):
        if limit <= 0:
            raise ValueError("limit must be positive")
        self.limit = limit
        self.total = 0          # bytes written since the start, kept or not
        self._lock = threading.Lock()  # stdout and stderr are pumped by two threads
        self._file = tempfile.TemporaryFile(prefix="jobtriage-tail-", dir=directory)
        self._size = 0

    def write(self, data: bytes) -> None:
        if not data:
            return
        with self._lock:
            self.total += len(data)
            if len(data) >= self.limit:  # one huge chunk: only its end can survive
                data = data[-self.limit:]
                self._file.seek(0)
                self._file.truncate()
                self._size = 0
            self._file.seek(0, os.SEEK_END)
            self._file.write(data)
            self._size += len(data)
            if self._size >= 2 * self.limit:
                self._compact()

    def _compact(self) -> None:
        self._file.seek(self._size - self.limit)
        keep = self._file.read(self.limit)
        self._file.seek(0)
        self._file.write(keep)
        self._file.truncate(self.limit)
        self._size = self.limit

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def getvalue(self) -> bytes:
        """The kept tail: the last `limit` bytes, starting at a line boundary when cut."""
        with self._lock:
            start = max(0, self._size - self.limit)
            self._file.seek(start)
            data = self._file.read()
        if self.total > len(data):
            newline = data.find(b"\n")
            if 0 <= newline < len(data) - 1:
                data = data[newline + 1:]  # a partial first line would only confuse the reader
        return data

    def close(self) -> None:
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
