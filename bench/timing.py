"""Shared by the benchmarks: the percentile they report, the result row each measurement becomes (a
figure next to a baseline measured in the same run), and process memory read from /proc.

A ratio is always the measured cost over the baseline's cost (time over time, baseline rate over
measured rate, memory over memory): 1.0x costs the same as the baseline, 30x costs thirty times more,
0.5x half as much.
"""
from __future__ import annotations

import json
import os
from pathlib import Path


def percentile(values: list[float], p: float) -> float:
    """Nearest rank; 0.0 for no values."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else 0.0


def ratio_text(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    return f"{ratio:.2f}x" if ratio < 2 else f"{ratio:.1f}x"


def row(what: str, figure: str, baseline: str, ratio: float | None, **values) -> dict:
    """One measured line: what was measured, its figure, the same-run baseline, the ratio of their
    costs, and the raw numbers behind them (for the JSON results)."""
    return {"what": what, "figure": figure, "baseline": baseline, "ratio": ratio, "values": values}


def markdown_table(rows: list[dict]) -> str:
    lines = ["| measured | figure | baseline (same run) | cost vs baseline |", "|---|---|---|---:|"]
    lines += [f"| {r['what']} | {r['figure']} | {r['baseline']} | {ratio_text(r['ratio'])} |" for r in rows]
    return "\n".join(lines)


def emit(benchmark: str, rows: list[dict], *, markdown: bool, notes: list[str] = ()) -> None:
    """Print a benchmark's results: a Markdown table, or JSON for bench/run_all.py."""
    if markdown:
        print("\n".join([*notes, "", markdown_table(rows)] if notes else [markdown_table(rows)]))
    else:
        print(json.dumps({"benchmark": benchmark, "notes": list(notes), "rows": rows}, default=str))


# -- process memory (Linux /proc) ---------------------------------------------------------------------
def proc_status_kb(pid: int, field: str) -> int | None:
    """A memory line of /proc/<pid>/status in kB (VmRSS: resident now, VmHWM: peak resident)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM to the current RSS (``echo 5 > /proc/<pid>/clear_refs``), so the next peak read
    covers only what follows. False when the kernel or permissions do not allow it."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def child_pids(pid: int) -> list[int]:
    """Direct children of a process (e.g. a Celery prefork pool or gunicorn's workers)."""
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may hold spaces; the parent pid is the second field after it.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            children.append(int(entry))
    return sorted(children)


def size_text(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.2f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.0f} MiB"


def drop_from_page_cache(path) -> None:
    """Evict one file's pages from the OS page cache (only this file: the machine is shared), so that
    a baseline read really reads the disk rather than memory."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
