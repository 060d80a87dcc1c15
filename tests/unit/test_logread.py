"""Log reader: cleaned lines, tail-first bounded windows, line numbers."""
import io
import itertools
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from jobs_ingest.core import logread  # noqa: E402
from jobs_ingest.core.logread import LogSource, clean_line, decode, split_lines  # noqa: E402


def test_carriage_return_keeps_last_segment():
    assert clean_line("10%|#   | 1/10\r50%|#####| 5/10\r") == "50%|#####| 5/10"


def test_ansi_and_control_bytes_removed():
    assert clean_line("\x1b[1;31mIndexError\x1b[0m: x\x00\x07") == "IndexError: x"


def test_long_line_is_cut():
    line = clean_line("a" * 1_000_000)
    assert len(line) < logread.MAX_LINE_CHARS + 20 and line.endswith("[line cut]")


def test_invalid_utf8_is_replaced():
    assert decode(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"


def test_split_lines():
    assert split_lines("a\r\nb\n") == ["a", "b", ""]


def _windows(data: bytes, monkeypatch, tail=64, window=256, overlap=32):
    monkeypatch.setattr(logread, "TAIL_BYTES", tail)
    monkeypatch.setattr(logread, "WINDOW_BYTES", window)
    monkeypatch.setattr(logread, "OVERLAP_BYTES", overlap)
    return list(LogSource(data).windows())


def test_windows_walk_back_and_cover_every_line(monkeypatch):
    lines = [f"line {i:04d}" for i in range(300)]
    data = ("\n".join(lines) + "\n").encode()
    windows = _windows(data, monkeypatch)
    assert windows[0].start > windows[-1].start == 0 and windows[-1].starts_at_zero
    seen = set()
    for w in windows:
        assert len(w.lines) * 10 <= 256 + 32 + 10  # bounded
        for j, line in enumerate(w.lines):
            assert line.startswith("line ")
            # each window line is whole and at the byte offset the window says
            seen.add(line)
        assert data[w.start:].startswith(w.lines[0].encode())
    assert seen == set(lines)


def test_line_number_at(monkeypatch):
    data = b"a\nb\nc\nd\n"
    log = LogSource(data)
    assert log.line_number_at(0) == 1
    assert log.line_number_at(4) == 3


def test_sources_path_bytes_fileobj(tmp_path):
    p = tmp_path / "x.log"
    p.write_bytes(b"one\ntwo\n")
    for source in (str(p), p, b"one\ntwo\n", io.BytesIO(b"one\ntwo\n")):
        with LogSource(source) as log:
            assert log.size == 8
            assert next(log.windows()).lines == ["one", "two"]


def test_empty_source():
    windows = list(LogSource(b"").windows())
    assert len(windows) == 1 and windows[0].lines == [] and windows[0].starts_at_zero


def test_a_last_line_longer_than_every_window_ends(tmp_path):
    # Regression: a window without any newline used to leave `start` where it was and loop forever.
    p = tmp_path / "one-line.log"
    p.write_bytes(b"step 1\n" + b"KeyError: '" + b"k" * (3 * 1024 * 1024) + b"'\n")
    with LogSource(p) as source:
        windows = list(itertools.islice(source.windows(), 100))  # bounded: the bug was an endless loop
    assert windows[-1].start == 0 and windows[-1].starts_at_zero
    assert any("step 1" in line for w in windows for line in w.lines)
    # and the long line's beginning is read once, even though no window holds it whole
    assert sum(line.startswith("KeyError: 'kkk") for w in windows for line in w.lines) == 1


def test_a_long_line_followed_by_short_ones_is_not_lost(tmp_path):
    p = tmp_path / "mid.log"
    p.write_bytes(b"step 1\n" * 1000 + b"KeyError: '" + b"k" * (1024 * 1024) + b"'\n" + b"step 2\n" * 100)
    with LogSource(p) as source:
        windows = list(itertools.islice(source.windows(), 100))
    assert windows[-1].starts_at_zero
    assert sum(line.startswith("KeyError: 'kkk") for w in windows for line in w.lines) == 1
