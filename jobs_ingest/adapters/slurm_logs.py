"""Slurm's log files in the operator's folder, found by the job id in their names (pure; no Django)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from ..core.paths import OutsideRoot, resolve_inside

LOG_SUFFIXES = (".out", ".log", ".err")   # the order logs are joined in: stderr last, nearest the end
_LOG_NAME = re.compile(r"^(?:.*?[-_.])?(?P<id>\d+(?:_\d+)?)\.(?:out|err|log)$")


class LogIndex:
    """Slurm log files in a folder, by the job id in their name: `slurm-%j.out`, `slurm-%A_%a.out`,
    `%x-%j.err`, `%j.log`... (%j is the raw id: for array task 123_4 it is another number).

    Only files that resolve inside the folder are read: a symlink pointing out of it (`-> /etc/shadow`,
    `-> ../../x`) is named in `refused` and never opened. The resolved path is kept, so a link
    changed after this check still cannot lead out."""

    def __init__(self, folder: Path, files: Iterable[Path] | None = None):
        self.folder = folder
        self._by_id: dict[str, list[Path]] = {}
        self.refused: list[str] = []
        for path in files if files is not None else folder.rglob("*"):
            match = _LOG_NAME.match(path.name)
            if not match or not path.is_file():
                continue
            try:
                resolved = resolve_inside(folder, path, found_under_root=True)
            except OutsideRoot as exc:
                self.refused.append(str(exc))
                continue
            self._by_id.setdefault(match.group("id"), []).append(resolved)

    def find(self, job_id: str, raw_id: str = "") -> tuple[Path, ...]:
        paths = {*self._by_id.get(job_id, ()), *(self._by_id.get(raw_id, ()) if raw_id else ())}
        return tuple(sorted(paths, key=lambda p: (LOG_SUFFIXES.index(p.suffix) if p.suffix in LOG_SUFFIXES
                                                   else len(LOG_SUFFIXES), p.name)))
