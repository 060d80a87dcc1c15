"""The training-side hook: stage markers, input tracing, seeds and the capture written at failure time.

Everything here writes plain lines to the job's log, in the format jobtriage's log analyser reads
(jobs_ingest/core/stage.py, capture.py): `[jobtriage] stage=<stage>` and `[jobtriage] capture=<one line of JSON>`.
No framework is imported here; the PyTorch and Keras guards live in their own modules.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import shlex
import sys
import time
from collections import deque
from datetime import datetime, timezone
from typing import Callable, Iterable, Iterator, Optional

STAGES = ("initialization", "data_preprocessing", "training", "evaluation")
# logread.MAX_LINE_CHARS on the server is 4000: a longer line would be cut and its JSON lost.
MAX_CAPTURE_LINE = 3800
CAPTURE_FILE = "capture.json"
REPLAY_ENV = "JOBTRIAGE_REPLAY"      # set by `jobtriage replay DIR` to the capture folder
CAPTURE_DIR_ENV = "JOBTRIAGE_CAPTURE_DIR"

_started = time.monotonic()
_timeline: list = []          # [{"stage", "at", "seconds"}], in order
_seeds: dict = {}
_active: list = []            # stages of the `with stage(...)` blocks being run, outermost first


def _stream():
    # stderr: unbuffered enough to land in the log before a traceback (stdout is block-buffered
    # when redirected to a file, so its lines can appear after the error that followed them).
    return sys.stderr


def mark_stage(name: str, stream=None) -> None:
    """Write `[jobtriage] stage=<name>` to the log and add it to the stage timeline."""
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}: one of {', '.join(STAGES)}")
    _timeline.append({"stage": name, "at": _now(), "seconds": round(time.monotonic() - _started, 3)})
    del _timeline[:-50]
    out = stream or _stream()
    out.write(f"[jobtriage] stage={name}\n")
    out.flush()


@contextlib.contextmanager
def stage(name: str, stream=None):
    """`with stage("evaluation"): ...` marks the stage; when it ends normally inside another `with
    stage(...)`, the enclosing stage is marked again, so an error after an evaluation pass inside
    training is attributed to training. After an exception the marker stays: that is where it failed."""
    mark_stage(name, stream)
    _active.append(name)
    try:
        yield
    except BaseException:
        _active.pop()
        raise
    _active.pop()
    if _active and _active[-1] != name:
        mark_stage(_active[-1], stream)


def current_stage() -> str:
    return _timeline[-1]["stage"] if _timeline else ""


def timeline() -> list:
    return [dict(entry) for entry in _timeline]


class InputTracer:
    """Remembers which input files fed the last `keep` batches.

    Either wrap the batch iterable in the main process (works with DataLoader workers):
        for batch in tracer.wrap(loader, files_of=lambda b: b["path"]): ...
    or wrap a map-style dataset whose items come from files (main-process loading, num_workers=0):
        dataset = tracer.dataset(dataset, file_of=lambda index: files[index])
        for batch in tracer.wrap(DataLoader(dataset, batch_size=8)): ...
    or call tracer.record(files) yourself, once per batch (e.g. in a Keras data generator)."""

    def __init__(self, keep: int = 8):
        self.batches: deque = deque(maxlen=keep)
        self.step = 0           # batches seen
        self._pending: list = []

    def record(self, files: Iterable, step: Optional[int] = None) -> None:
        self.batches.append({"step": self.step if step is None else step,
                             "files": [str(f) for f in files]})
        self.step += 1

    def wrap(self, batches: Iterable, files_of: Optional[Callable] = None) -> Iterator:
        for batch in batches:
            if files_of is not None:
                files = files_of(batch)
                files = [files] if isinstance(files, (str, os.PathLike)) else list(files)
            else:
                files, self._pending = _unique(self._pending), []
            self.record(files)
            yield batch

    def dataset(self, dataset, file_of: Callable[[int], str]):
        return _TracedDataset(dataset, file_of, self)

    def as_capture(self) -> list:
        return [dict(batch) for batch in self.batches]


def _unique(items: list) -> list:
    return list(dict.fromkeys(items))


class _TracedDataset:
    """A map-style dataset that tells its tracer which file each item it returns came from."""

    def __init__(self, dataset, file_of, tracer: InputTracer):
        self.dataset, self._file_of, self._tracer = dataset, file_of, tracer

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        item = self.dataset[index]
        self._tracer._pending.append(str(self._file_of(index)))
        del self._tracer._pending[:-10_000]  # bounded if wrap() is never used
        return item

    def __getattr__(self, name):
        return getattr(self.dataset, name)


def seed_everything(seed: Optional[int] = None) -> int:
    """Seed Python, and NumPy and PyTorch when the script has imported them (call it after your
    imports: importing torch only to seed it would cost seconds), and remember the seed for the capture.

    Under `jobtriage replay DIR` the seed recorded in DIR is used instead, so the run repeats."""
    replayed = replay_capture()
    if replayed and "python" in replayed.get("artifacts", {}).get("seeds", {}):
        seed = int(replayed["artifacts"]["seeds"]["python"])
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little")
    random.seed(seed)
    _seeds["python"] = seed
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2 ** 32)
        _seeds["numpy"] = seed % 2 ** 32
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
        _seeds["torch"] = seed
    return seed


def seeds() -> dict:
    """Seeds to record: those set by seed_everything, else the frameworks' own initial seeds."""
    recorded = dict(_seeds)
    torch = sys.modules.get("torch")
    if torch is not None and "torch" not in recorded:
        recorded["torch"] = int(torch.initial_seed())
    return recorded


def replay_capture() -> Optional[dict]:
    """The capture being replayed (`jobtriage replay DIR` sets JOBTRIAGE_REPLAY), else None."""
    folder = os.environ.get(REPLAY_ENV)
    if not folder:
        return None
    return load_capture(folder)


def load_capture(folder: str) -> dict:
    with open(os.path.join(folder, CAPTURE_FILE), encoding="utf-8") as f:
        return json.load(f)


def capture_dir(explicit: Optional[str] = None) -> str:
    """Where to save a capture: the argument, $JOBTRIAGE_CAPTURE_DIR, or ./jobtriage-capture; one
    sub-folder per failure (time and pid) so that ranks and retries never overwrite each other."""
    base = explicit or os.environ.get(CAPTURE_DIR_ENV) or "jobtriage-capture"
    folder = os.path.abspath(os.path.join(base, f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"))
    os.makedirs(folder, exist_ok=True)
    return folder


def write_capture(folder: str, *, guard: str, framework: str, reason: str, step: Optional[int],
                  epoch: Optional[int] = None, tracer: Optional[InputTracer] = None, artifacts: Optional[dict] = None,
                  replay: Optional[str] = None, stream=None) -> dict:
    """Save capture.json in `folder` and print the one-line capture to the log; returns the capture."""
    stage_now = current_stage() or ("training" if guard == "nan" else "")
    capture = {
        "v": 1, "guard": guard, "framework": framework, "reason": reason, "step": step, "epoch": epoch,
        "stage": stage_now, "stages": timeline(), "inputs": tracer.as_capture() if tracer else [],
        "artifacts": {"dir": folder, "seeds_file": os.path.join(folder, CAPTURE_FILE), "seeds": seeds(),
                      **(artifacts or {})},
        "replay": replay or f"jobtriage replay {shlex.quote(folder)}",
        "command": [sys.executable] + sys.argv, "cwd": os.getcwd(), "at": _now(),
    }
    with open(os.path.join(folder, CAPTURE_FILE), "w", encoding="utf-8") as f:
        json.dump(capture, f, indent=2, default=str)
    out = stream or _stream()
    out.write(capture_line(capture) + "\n")
    out.flush()
    return capture


def capture_line(capture: dict, limit: int = MAX_CAPTURE_LINE) -> str:
    """`[jobtriage] capture={json}` in at most `limit` characters: the oldest traced batches, then
    long file lists and strings, give way first (capture.json keeps everything)."""
    line_capture = {k: v for k, v in capture.items() if k not in ("command", "cwd", "at")}
    line_capture["inputs"] = [dict(batch) for batch in line_capture.get("inputs", [])]

    def render():
        return "[jobtriage] capture=" + json.dumps(line_capture, separators=(",", ":"), default=str)

    line = render()
    while len(line) > limit and len(line_capture["inputs"]) > 1:
        line_capture["inputs"].pop(0)
        line = render()
    for batch in line_capture["inputs"]:
        while len(line) > limit and len(batch["files"]) > 1:
            batch["files"] = batch["files"][:len(batch["files"]) // 2]
            line = render()
    if len(line) > limit:  # a few enormous strings: cut them all
        line_capture = json.loads(json.dumps(line_capture, default=str), object_hook=_shorten)
        line = render()
    if len(line) > limit:
        line_capture = {k: line_capture.get(k) for k in ("v", "guard", "framework", "reason", "step", "stage")}
        line = render()
    return line


def _shorten(mapping: dict) -> dict:
    return {k: (v[:200] if isinstance(v, str) else [s[:200] if isinstance(s, str) else s for s in v]
                if isinstance(v, list) else v) for k, v in mapping.items()}


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def is_finite_number(value: float) -> bool:
    return value == value and value not in (float("inf"), float("-inf"))
