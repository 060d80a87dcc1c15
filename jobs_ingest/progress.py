"""A small progress bar for long commands (pure; writes to a text stream, usually stderr)."""
import sys
import time


class Progress:
    """`with Progress(total, "ingest") as p: p.advance()` draws a bar on a terminal and a line
    every few seconds elsewhere (CI logs), so long work always shows it is moving."""

    def __init__(self, total: int | None, label: str, stream=None, every_seconds: float = 5.0):
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.every = 0.1 if self.tty else every_seconds
        self.started = self._last = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.draw(force=True)
        if self.tty:
            self.stream.write("\n")

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.draw()

    def set(self, done: int) -> None:
        self.done = done
        self.draw()

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.every:
            return
        self._last = now
        rate = self.done / max(now - self.started, 1e-9)
        if self.total:
            filled = int(30 * min(self.done, self.total) / self.total)
            text = f"{self.label} [{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} ({rate:.1f}/s)"
        else:
            text = f"{self.label} {self.done} ({rate:.1f}/s)"
        self.stream.write(("\r" + text) if self.tty else text + "\n")
        self.stream.flush()
