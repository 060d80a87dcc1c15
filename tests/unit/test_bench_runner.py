"""bench/run_all.py and the pieces of the benchmarks that need no server: the machine description,
the results file, result rows and ratios, process memory from /proc, the 1 GB log's two variants,
and a real quick run of the parse benchmark through the runner."""
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import run_all
from bench.bench_big_log import write_logs
from bench.timing import child_pids, markdown_table, proc_status_kb, ratio_text, reset_peak_rss, row
from jobs_ingest.core import analyse_log

ROOT = Path(__file__).resolve().parents[2]


def test_machine_info_describes_this_machine():
    info = run_all.machine_info()
    assert info["cores"] == os.cpu_count() >= 1
    assert info["python"] == platform.python_version()
    assert info["ram_gib"] > 0
    assert info["cpu"] and info["os"] and platform.release() in info["os"]
    assert len(info["load_average"]) == 3


def test_server_versions_say_when_a_server_cannot_be_reached():
    nowhere = {"DATABASE_URL": "postgres://x:y@127.0.0.1:1/none", "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
               "ELASTICSEARCH_URL": "http://127.0.0.1:1"}
    versions = run_all.server_versions(nowhere)
    assert set(versions) == {"postgresql", "redis", "elasticsearch"}
    assert all(v.startswith("not reachable") for v in versions.values())


def test_ratio_is_the_cost_over_the_baseline_cost():
    assert ratio_text(None) == "-"
    assert ratio_text(0.25) == "0.25x"
    assert ratio_text(1.031) == "1.03x" and ratio_text(3.14159) == "3.1x"
    assert ratio_text(1880.4) == "1,880x"
    r = row("ingest, 1 worker", "16 jobs/s", "disk: 30,000 jobs/s", 1875.0, seconds=63.8)
    table = markdown_table([r])
    assert table.splitlines()[-1] == "| ingest, 1 worker | 16 jobs/s | disk: 30,000 jobs/s | 1,875x |"
    assert r["values"] == {"seconds": 63.8}


def _entry(name, status="ok", **run):
    return {"name": name, "title": f"title of {name}", "output": "json" if "rows" in run else "markdown",
            "started": "2026-11-23T12:00:00+00:00", "commit": "abc123", "mode": "quick", "seconds": 12.0,
            "status": status, "log": f"bench/results/logs/{name}.log", "runs": [{"command": f"python bench/{name}.py", **run}]}


def test_report_shows_machine_and_each_figure_next_to_its_baseline(tmp_path):
    report = {"command": "python bench/run_all.py --quick", "date": "2026-11-23 12:00", "commit": "abc123",
              "machine": {**run_all.machine_info(), "postgresql": "15.18", "redis": "7.0.15", "elasticsearch": "8.19.8"},
              "benchmarks": {
                  "parse": _entry("parse", rows=[row("parse + tag", "2,000 logs/s", "regex: 60,000 logs/s", 30.0)]),
                  "search": _entry("search", markdown="| query | p95 |\n|---|---:|\n| similar | 20 ms |"),
                  "pages": _entry("pages", status="failed", error="Traceback ...\nOperationalError: no database"),
              }}
    text = run_all.render_markdown(report)
    assert "| 15.18 | 7.0.15 | 8.19.8 |" in text and f"| {os.cpu_count()} |" in text
    assert "| parse + tag | 2,000 logs/s | regex: 60,000 logs/s | 30.0x |" in text
    assert "| similar | 20 ms |" in text  # a script's own table, verbatim
    assert "**FAILED**" in text and "OperationalError: no database" in text
    # Sections follow the runner's order, whatever the order of the report.
    assert text.index("(`parse`)") < text.index("(`pages`)") < text.index("(`search`)")


def test_a_partial_run_is_merged_into_the_previous_results(tmp_path):
    first = {"command": "a", "date": "d1", "commit": "c1", "machine": run_all.machine_info(),
             "benchmarks": {"parse": _entry("parse", rows=[]), "ingest": _entry("ingest", rows=[])}}
    run_all.write_report(first, "latest", tmp_path)
    second = {"command": "b", "date": "d2", "commit": "c2", "machine": run_all.machine_info(),
              "benchmarks": {"parse": {**_entry("parse", rows=[]), "commit": "c2"}}}
    md = run_all.write_report(second, "latest", tmp_path)
    saved = json.loads((tmp_path / "latest.json").read_text())
    assert set(saved["benchmarks"]) == {"parse", "ingest"}
    assert saved["benchmarks"]["parse"]["commit"] == "c2" and saved["benchmarks"]["ingest"]["commit"] == "abc123"
    assert "(`ingest`)" in md.read_text()


def test_quick_mode_runs_every_benchmark_small():
    for bench in run_all.BENCHMARKS:
        quick, full = bench.runs("quick"), bench.runs("full")
        assert quick and full and [c for c, _ in quick] != [c for c, _ in full], bench.name
        assert all(ds is None or ds.database == "jobtriage_bench_quick" for _, ds in quick), bench.name
        assert all(Path(ROOT / c[1]).exists() for c, _ in quick + full)
    # At 1M, search is measured at 100k and 1M failures, pages on the 1M-job set.
    pages = dict((b.name, b) for b in run_all.BENCHMARKS)
    assert [ds.jobs for _, ds in pages["search"].runs("1m")] == [100_000, 1_000_000]
    assert pages["search"].runs("1m")[1][0][3] == "bench1m"
    assert [ds.database for _, ds in pages["pages"].runs("1m")] == ["jobtriage_bench_load"]


def test_options_are_checked():
    with pytest.raises(SystemExit):
        run_all.parse_args(["--quick", "--scale", "1m"])
    with pytest.raises(SystemExit):
        run_all.parse_args(["--only", "nonsense"])
    assert run_all.parse_args(["--only", "parse", "--only", "pages"]).only == ["parse", "pages"]


def test_process_memory_from_proc():
    assert proc_status_kb(os.getpid(), "VmRSS") > 1000
    assert proc_status_kb(os.getpid(), "VmHWM") >= proc_status_kb(os.getpid(), "VmRSS") - 1000
    assert proc_status_kb(2**22 + 12345, "VmRSS") is None  # no such process
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in child_pids(os.getpid())
        ballast = bytearray(64 * 1024 * 1024)  # raise our peak, then reset it
        del ballast
        if reset_peak_rss(os.getpid()):
            assert proc_status_kb(os.getpid(), "VmHWM") < proc_status_kb(os.getpid(), "VmRSS") + 32 * 1024
    finally:
        child.kill()
        child.wait()


def test_big_log_variants_move_the_same_failure(tmp_path):
    size, before_end = 600_000, 100_000
    job, variants = write_logs(tmp_path, size, before_end, seed=1)
    (_, at_end), (_, before) = variants
    assert at_end.stat().st_size == before.stat().st_size
    assert abs(at_end.stat().st_size - size) < 2_000
    text_end, text_before = at_end.read_text(), before.read_text()
    assert sorted(text_end.splitlines()) == sorted(text_before.splitlines())  # same lines, failure moved
    failure_text = text_end[text_end.rindex("[rank1]: "):].split("\n", 1)[1]
    assert text_end.endswith(failure_text) and not text_before.endswith(failure_text)
    assert abs(len(text_before) - text_before.index(failure_text) - len(failure_text) - before_end) < 2_000
    for path in (at_end, before):
        analysis = analyse_log(path, exit_code=job["exit_code"])
        assert (analysis.category, analysis.fingerprint) == (job["failure"]["category"], job["failure"]["fingerprint"])


def test_quick_parse_benchmark_through_the_runner(tmp_path):
    """A real run of the cheapest piece of `run_all.py --quick` (no server needed)."""
    started = time.time()
    out = subprocess.run([sys.executable, "bench/run_all.py", "--quick", "--only", "parse", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    progress = [line for line in out.stderr.splitlines() if line.startswith("[run_all")]
    assert any("parse: ok in" in line for line in progress)
    saved = json.loads((tmp_path / "quick.json").read_text())
    entry = saved["benchmarks"]["parse"]
    rows = entry["runs"][0]["rows"]
    assert len(rows) == 3 and all(r["ratio"] > 0 and r["baseline"] for r in rows)
    assert rows[0]["values"]["logs_per_s"] > 0 and rows[1]["values"]["category"] == "gpu_oom"
    assert saved["machine"]["cores"] == os.cpu_count()
    md = (tmp_path / "quick.md").read_text()
    assert "## Machine" in md and "parse + tag, 1 core" in md and saved["commit"] in md
    assert (tmp_path / "logs" / "parse.log").stat().st_mtime >= started - 1


def test_runner_refuses_clearly_when_a_server_is_down(tmp_path):
    # Ports where nothing listens: `scripts/servers.sh status` reports them down (it only probes).
    env = {**os.environ, "PG_PORT": "1", "REDIS_PORT": "2"}
    out = subprocess.run([sys.executable, "bench/run_all.py", "--quick", "--only", "ingest", "--out", str(tmp_path)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "scripts/servers.sh start" in out.stderr and "127.0.0.1:1" in out.stderr
    assert not (tmp_path / "quick.md").exists()
