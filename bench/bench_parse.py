#!/usr/bin/env python3
"""Parse + tag throughput of the pure core, on one core, against a baseline measured in the same run.

    .venv/bin/python bench/bench_parse.py [--markdown] [--big-mb 200]

1. Development-set logs (real failures, bench/devset/*.jsonl): logs/s and MB/s of `analyse_text`.
2. Large job logs written to a temporary folder (generated: training output lines with a real
   failure at the end, and one with the failure 10 MB before the end) analysed from disk with
   `analyse_log`, against the baseline of a plain regex scan of the whole file for "Error".
   Peak Python memory (tracemalloc) of the analysis is reported too.
Target (issue #2): >= 1,000 failed-job logs per second per core.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.timing import emit, row  # noqa: E402
from jobs_ingest.core import analyse_log, analyse_text  # noqa: E402

DEVSET_FILES = ["issues/dev.jsonl", "notebook_crashes.jsonl", "programs.jsonl", "job_logs.jsonl"]
TRAINING_LINE = (b"[rank0]: 2026-11-16 08:%02d:%02d INFO Epoch 3 step %6d loss 0.4817 lr 3.0e-04 "
                 b"grad_norm 1.02 throughput 812.4 samples/s\n")
FAILURE = (b"[rank0]: Traceback (most recent call last):\n"
           b'[rank0]:   File "/home/alice/bert/train.py", line 131, in train_one_epoch\n'
           b"[rank0]:     scaler.scale(loss).backward()\n"
           b"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB.\n")


def devset_logs() -> list[str]:
    logs = []
    for name in DEVSET_FILES:
        path = ROOT / "bench" / "devset" / name
        if path.exists():
            logs += [json.loads(line)["log"] for line in path.open(encoding="utf-8") if line.strip()]
    return logs


def bench_devset(logs: list[str], repeat: int) -> dict:
    total_bytes = sum(len(log.encode("utf-8")) for log in logs) * repeat
    t0 = time.process_time()
    for _ in range(repeat):
        for log in logs:
            analyse_text(log)
    cpu = time.process_time() - t0
    baseline = re.compile(r"Error|Exception|Traceback")
    t0 = time.process_time()
    for _ in range(repeat):
        for log in logs:
            baseline.findall(log)
    base_cpu = time.process_time() - t0
    n = len(logs) * repeat
    return {"logs": n, "mb": total_bytes / 1e6, "cpu_s": cpu, "logs_per_s": n / cpu, "mb_per_s": total_bytes / 1e6 / cpu,
            "baseline_logs_per_s": n / base_cpu, "median_kb": sorted(len(l) for l in logs)[len(logs) // 2] / 1024}


def write_big_log(path: Path, megabytes: int, failure_at_end: bool) -> None:
    line_count = 0
    with open(path, "wb") as out:
        target = megabytes * 1024 * 1024
        written = 0
        while written < target:
            chunk = b"".join(TRAINING_LINE % (i % 60, i % 60, line_count + i) for i in range(1000))
            out.write(chunk)
            written += len(chunk)
            line_count += 1000
            if not failure_at_end and written >= target - 10 * 1024 * 1024 and written - len(chunk) < target - 10 * 1024 * 1024:
                out.write(FAILURE)
        if failure_at_end:
            out.write(FAILURE)


def bench_big(path: Path) -> dict:
    size = path.stat().st_size
    tracemalloc.start()
    t0 = time.perf_counter()
    analysis = analyse_log(path)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    pattern = re.compile(rb"Error")
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        while chunk := f.read(4 * 1024 * 1024):
            pattern.findall(chunk)
    base = time.perf_counter() - t0
    return {"mb": size / 1e6, "seconds": seconds, "peak_mb": peak / 1e6, "category": analysis.category,
            "line": analysis.failure_line_number, "baseline_seconds": base}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="a Markdown table (default: JSON for run_all.py)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-mb", type=int, default=200)
    args = parser.parse_args()

    logs = devset_logs()
    print(f"bench_parse: {len(logs)} development-set logs x {args.repeat}", file=sys.stderr)
    dev = bench_devset(logs, args.repeat)
    big = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, at_end in (("failure at the end", True), ("failure 10 MB before the end", False)):
            path = Path(tmp) / "big.log"
            print(f"bench_parse: writing a {args.big_mb} MB log ({name})", file=sys.stderr)
            write_big_log(path, args.big_mb, at_end)
            big[name] = bench_big(path)
            os.unlink(path)

    rows = [row(f"parse + tag, 1 core: development-set logs ({dev['logs']:,} analyses, median {dev['median_kb']:.1f} KB)",
                f"{dev['logs_per_s']:,.0f} logs/s, {dev['mb_per_s']:.1f} MB/s",
                f"regex scan for Error, Exception or Traceback: {dev['baseline_logs_per_s']:,.0f} logs/s",
                dev["baseline_logs_per_s"] / dev["logs_per_s"], **dev)]
    for name, r in big.items():
        rows.append(row(f"parse + tag one {r['mb']:.0f} MB job log, {name} ({r['category']}, line {r['line']:,})",
                        f"{r['seconds'] * 1000:.0f} ms, peak {r['peak_mb']:.1f} MB Python memory",
                        f"regex scan of the whole file for Error: {r['baseline_seconds'] * 1000:.0f} ms",
                        r["seconds"] / r["baseline_seconds"], **r))
    emit("parse", rows, markdown=args.markdown,
         notes=["Target >= 1,000 failed-job logs per second per core; large logs are generated (training lines "
                "around a real failure)."])


if __name__ == "__main__":
    main()
