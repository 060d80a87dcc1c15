"""Adapters from schedulers' native records to jobtriage's job metadata (pure; no Django).

Each platform module turns its records (Slurm `sacct`, Kubernetes objects, the Philly trace) into
`Adapted` jobs: a metadata dict that `jobs_ingest.jobspec.parse_job` accepts, plus the log files to
attach. A record that cannot be read becomes a `Rejected` naming it, so one bad record never stops
the others. The management commands (ingest_slurm, ingest_k8s, ingest_philly) store them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO


@dataclass(frozen=True)
class Adapted:
    where: str                       # the record, for messages: "sacct line 4", "pod default/x"
    metadata: dict                   # the job metadata format of docs/ingest.md
    logs: tuple[Path, ...] = ()      # log files, oldest first: the failure is looked for at the end


@dataclass(frozen=True)
class Rejected:
    where: str
    reason: str


@dataclass(frozen=True)
class Skipped:
    """A record that is fine but not a finished job (pending, running): nothing to store yet."""
    where: str
    reason: str


@dataclass
class LogBundle:
    """Several log files read as one stream, each introduced by a `==> name <==` line (the format
    of `tail` with several files), so a job's stdout, stderr and earlier restarts are stored as one
    log in bounded memory. The files are opened one at a time."""
    paths: tuple[Path, ...]
    _index: int = 0
    _current: BinaryIO | None = None
    _pending: bytes = b""
    _last: bytes = b"\n"

    def read(self, size: int = -1) -> bytes:
        out = bytearray()
        while size is None or size < 0 or len(out) < size:
            left = -1 if size is None or size < 0 else size - len(out)
            if self._pending:
                take = self._pending if left < 0 else self._pending[:left]
                self._pending = self._pending[len(take):]
                out += take
                continue
            if self._current is None:
                if self._index >= len(self.paths):
                    break
                path = self.paths[self._index]
                self._current, self._last = open(path, "rb"), b"\n"
                if len(self.paths) > 1:
                    self._pending = f"==> {path.name} <==\n".encode()
                continue
            data = self._current.read(left)
            if data:
                out += data
                self._last = data[-1:]
                continue
            self._current.close()
            self._current, self._index = None, self._index + 1
            if self._last != b"\n" and self._index < len(self.paths):
                self._pending = b"\n"  # the next file's header starts on its own line
        return bytes(out)

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
