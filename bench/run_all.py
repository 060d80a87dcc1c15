#!/usr/bin/env python3
"""Run every benchmark and write one results file: the machine, the date, the commit, and each
benchmark's figures next to the baseline it measured in the same run.

    scripts/servers.sh start                      # the servers; this command starts none of them
    .venv/bin/python bench/run_all.py --quick     # small N, a few minutes: a smoke test
    .venv/bin/python bench/run_all.py             # full size (pages, charts, search on the 100k sets)
    .venv/bin/python bench/run_all.py --scale 1m  # pages, charts and search on the 1M-job sets
    .venv/bin/python bench/run_all.py --only parse --only big_log   # some of them (merged into the file)

Results: bench/results/latest.md and latest.json (quick.md / quick.json for --quick). Each benchmark
runs as its own process, with the servers' environment (`scripts/servers.sh env`); its own progress
goes to bench/results/logs/<name>.log, and this command prints one line per benchmark on stderr.
The generated data sets the page, chart and search benchmarks need are used when they are there
and created with bench/load_workload.py (with progress) when they are not; they are never reset,
except the small quick set. A benchmark that fails is reported as failed; the others still run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PYTHON = sys.executable
RESULTS = ROOT / "bench" / "results"

from bench.timing import markdown_table  # noqa: E402


# -- data sets --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Dataset:
    """A generated data set in PostgreSQL (database) and Elasticsearch (index prefix), made by
    bench/load_workload.py from (jobs, seed, failed_share)."""
    database: str
    es_prefix: str
    jobs: int
    seed: int
    failed_share: float | None = None  # None: the Alibaba trace's share (about 26% of jobs fail)
    recreate: bool = False  # small sets are rebuilt on every run; big ones only created when missing

    def load_command(self, *extra: str) -> list[str]:
        command = [PYTHON, "bench/load_workload.py", "--jobs", str(self.jobs), "--seed", str(self.seed),
                   "--database-url", "{DATABASE_BASE}/" + self.database, "--es-prefix", self.es_prefix, *extra]
        if self.failed_share is not None:
            command += ["--failed-share", str(self.failed_share)]
        return command


DATASETS = {
    "quick": Dataset("jobtriage_bench_quick", "benchquick", 2_000, seed=1, recreate=True),
    "100k-failures": Dataset("jobtriage_bench_100k", "bench100k", 100_000, seed=0, failed_share=1),
    "1m-jobs": Dataset("jobtriage_bench_load", "benchload", 1_000_000, seed=1),
    "1m-failures": Dataset("jobtriage_bench_1m", "bench1m", 1_000_000, seed=0, failed_share=1),
}


# -- benchmarks -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Benchmark:
    name: str
    script: str
    title: str
    output: str  # "json": rows with baselines (bench/timing.py); "markdown": the script's own table, verbatim
    servers: bool  # needs PostgreSQL / Redis / Elasticsearch
    args: dict = field(default_factory=dict)  # mode ("quick", "full", "1m") -> arguments
    datasets: dict = field(default_factory=dict)  # mode -> data sets; one run per set, with its database and index
    uses_database: bool = True  # False: reads only the data set's index (no migration needed)

    def runs(self, mode: str) -> list[tuple[list[str], Dataset | None]]:
        """The commands to run for a mode: one per data set (or one without)."""
        names = self.datasets.get(mode, self.datasets.get("full", [])) if self.datasets else []
        args = self.args.get(mode, self.args.get("full", []))
        flag = ["--markdown"] if self.output == "markdown" else []
        if not names:
            return [([PYTHON, f"bench/{self.script}", *args, *flag], None)]
        return [([PYTHON, f"bench/{self.script}", *[a.format(es_prefix=DATASETS[n].es_prefix) for a in args], *flag],
                 DATASETS[n]) for n in names]


BENCHMARKS = [
    Benchmark("parse", "bench_parse.py", "Parse + tag throughput, one core", "json", servers=False,
              args={"quick": ["--big-mb", "20", "--repeat", "1"], "full": ["--big-mb", "200"]}),
    Benchmark("ingest", "bench_ingest.py", "End-to-end ingest (ingest_dir -> Redis -> Celery -> PostgreSQL + "
              "Elasticsearch)", "json", servers=True, args={"quick": ["--jobs", "100"], "full": ["--jobs", "1000"]}),
    Benchmark("philly", "bench_philly.py", "Bulk receiving: the Philly trace's size through ingest_philly", "json",
              servers=True, args={"quick": ["--jobs", "5000"], "full": []}),
    Benchmark("load", "load_api.py", "API under load: 50 concurrent senders, ingest lag at a steady rate", "json",
              servers=True, args={"quick": ["--senders", "10", "--seconds", "10", "--steady-seconds", "10"],
                                  "full": []}),
    Benchmark("burst", "burst.py", "A 10,000-job burst while the worker is killed and replaced", "json",
              servers=True, args={"quick": ["--jobs", "1000"], "full": []}),
    Benchmark("big_log", "bench_big_log.py", "Worker and API memory while ingesting a 1 GB log", "json",
              servers=True, args={"quick": ["--size-mb", "64"], "full": ["--size-mb", "1024"]}),
    Benchmark("pages", "bench_pages.py", "Page render time", "json", servers=True,
              args={"quick": ["--requests", "10"], "full": ["--requests", "40"]},
              datasets={"quick": ["quick"], "full": ["100k-failures"], "1m": ["1m-jobs"]}),
    Benchmark("charts", "bench_charts.py", "Charts and weekly report", "markdown", servers=True,
              args={"quick": ["--runs", "3"], "full": ["--runs", "20"]},
              datasets={"quick": ["quick"], "full": ["100k-failures"], "1m": ["1m-jobs"]}),
    Benchmark("search", "bench_search.py", "Similar-failure and log search latency", "markdown", servers=True,
              args={"quick": ["--es-prefix", "{es_prefix}", "--queries", "20"],
                    "full": ["--es-prefix", "{es_prefix}", "--queries", "200"]},
              datasets={"quick": ["quick"], "full": ["100k-failures"], "1m": ["100k-failures", "1m-failures"]},
              uses_database=False),
    Benchmark("tagger", "eval_tagger.py", "Tagger accuracy (development and held-out sets)", "markdown",
              servers=False, args={"quick": ["bench/devset/programs.jsonl"], "full": ["--heldout"]}),
    Benchmark("similar_quality", "eval_similar.py", "Similar-failure search quality", "markdown", servers=True,
              args={"quick": ["--strategy", "combined"], "full": ["--issues"]}),
]
NAMES = [b.name for b in BENCHMARKS]


# -- environment and machine ------------------------------------------------------------------------
def servers_env() -> dict:
    """This process's environment plus what `scripts/servers.sh env` exports (where not already set)."""
    env = dict(os.environ)
    out = subprocess.run(["bash", "scripts/servers.sh", "env"], cwd=ROOT, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            env.setdefault(key, shlex.split(value)[0] if value else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def servers_up() -> tuple[bool, str]:
    out = subprocess.run(["bash", "scripts/servers.sh", "status"], cwd=ROOT, capture_output=True, text=True)
    return out.returncode == 0, (out.stdout + out.stderr).strip()


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _git(*args: str) -> str:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else ""


def server_versions(env: dict) -> dict:
    """PostgreSQL, Redis and Elasticsearch versions as the servers report them ("not reachable" otherwise)."""
    versions = {}
    try:
        import psycopg
        with psycopg.connect(env["DATABASE_URL"], connect_timeout=5) as conn:
            versions["postgresql"] = conn.execute("SHOW server_version").fetchone()[0]
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable", reported as such
        versions["postgresql"] = f"not reachable ({type(exc).__name__})"
    try:
        import redis
        versions["redis"] = redis.Redis.from_url(env["CELERY_BROKER_URL"], socket_timeout=5).info("server")["redis_version"]
    except Exception as exc:  # noqa: BLE001
        versions["redis"] = f"not reachable ({type(exc).__name__})"
    try:
        from urllib.request import urlopen
        # The node's version (this distribution answers GET / with 405).
        with urlopen(env["ELASTICSEARCH_URL"].rstrip("/") + "/_cat/nodes?h=version", timeout=5) as response:
            versions["elasticsearch"] = response.read().decode().split()[0]
    except Exception as exc:  # noqa: BLE001
        versions["elasticsearch"] = f"not reachable ({type(exc).__name__})"
    return versions


def machine_info(env: dict | None = None) -> dict:
    cpuinfo = _read("/proc/cpuinfo")
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
                 platform.processor() or platform.machine())
    meminfo = _read("/proc/meminfo")
    mem_kb = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal:")), 0)
    os_release = dict(line.split("=", 1) for line in _read("/etc/os-release").splitlines() if "=" in line)
    info = {
        "cpu": model, "cores": os.cpu_count(), "ram_gib": round(mem_kb / 2**20, 1),
        "os": f"{os_release.get('PRETTY_NAME', platform.system()).strip(chr(34))}, kernel {platform.release()}",
        "python": platform.python_version(), "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if env is not None:
        info.update(server_versions(env))
    return info


def git_commit() -> str:
    commit = _git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return commit + (" (with uncommitted changes)" if dirty else "")


# -- data set preparation -----------------------------------------------------------------------------
def dataset_state(dataset: Dataset, env: dict) -> tuple[int | None, int, int | None]:
    """(jobs in the database or None if it does not exist, failures, documents in its index or None)."""
    import psycopg
    base = env["DATABASE_URL"].rsplit("/", 1)[0]
    with psycopg.connect(base + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [dataset.database]).fetchone():
            return None, 0, None
    with psycopg.connect(f"{base}/{dataset.database}") as conn:
        try:
            jobs = conn.execute("SELECT count(*) FROM jobs_ingest_job").fetchone()[0]
            failures = conn.execute("SELECT count(*) FROM jobs_ingest_failure").fetchone()[0]
        except psycopg.errors.UndefinedTable:
            return 0, 0, None
    from urllib.error import HTTPError
    from urllib.request import urlopen
    try:
        with urlopen(f"{env['ELASTICSEARCH_URL']}/{dataset.es_prefix}-failures/_count", timeout=30) as response:
            docs = json.loads(response.read())["count"]
    except HTTPError as exc:
        if exc.code != 404:
            raise
        docs = None
    return jobs, failures, docs


class DatasetError(RuntimeError):
    """A data set is there but not the one expected; it is left alone."""


def prepare_dataset(dataset: Dataset, env: dict, log, log_file, migrate: bool = True) -> dict:
    """Make sure the data set is there (create it if missing), migrated (if `migrate`: the benchmark
    reads the database through Django), and indexed; returns its env."""
    base = env["DATABASE_URL"].rsplit("/", 1)[0]
    ds_env = {**env, "DATABASE_URL": f"{base}/{dataset.database}", "ES_INDEX_PREFIX": dataset.es_prefix}
    if dataset.database in _PREPARED and _PREPARED[dataset.database] >= migrate:  # once per run (the quick set is rebuilt once)
        return ds_env
    jobs, failures, docs = dataset_state(dataset, env)
    if jobs is None:
        import psycopg
        with psycopg.connect(base + "/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dataset.database}"')
    # Migrations first: a data set made by an older commit lacks newer columns and indexes.
    if migrate or not jobs:
        subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=ds_env, check=True,
                       stdout=log_file, stderr=log_file)
    command = None
    if dataset.recreate or not jobs:
        command = dataset.load_command("--reset")
        log(f"data set {dataset.database}: loading {dataset.jobs:,} generated jobs (bench/load_workload.py)")
    elif jobs != dataset.jobs:
        raise DatasetError(f"data set {dataset.database} holds {jobs:,} jobs, not the {dataset.jobs:,} expected: "
                         f"reload it (bench/load_workload.py --reset, see bench/README.md) or drop it")
    elif docs != failures:
        command = dataset.load_command("--index-only")
        log(f"data set {dataset.database}: indexing its {failures:,} failures into {dataset.es_prefix}-failures "
            f"(index has {docs if docs is not None else 'no'} documents)")
    if command:
        command = [part.replace("{DATABASE_BASE}", base) for part in command]
        # The loader's progress bar goes straight to our stderr: loading 1M jobs takes minutes.
        subprocess.run(command, cwd=ROOT, env=ds_env, check=True, stdout=log_file)
    _PREPARED[dataset.database] = migrate or _PREPARED.get(dataset.database, False)
    return ds_env


_PREPARED: dict[str, bool] = {}  # data sets ready in this run -> whether they were migrated


# -- running ----------------------------------------------------------------------------------------
def run_benchmark(bench: Benchmark, mode: str, env: dict, log, out_dir: Path = RESULTS) -> dict:
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    entry = {"name": bench.name, "title": bench.title, "output": bench.output, "started": started.isoformat(timespec="seconds"),
             "commit": git_commit(), "mode": mode, "runs": [], "status": "ok"}
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{bench.name}.log"
    with open(log_path, "w") as log_file:
        for command, dataset in bench.runs(mode):
            shown = "python " + " ".join(shlex.quote(c) for c in command[1:])
            try:
                run_env = prepare_dataset(dataset, env, log, log_file, bench.uses_database) if dataset else env
            except (subprocess.CalledProcessError, DatasetError) as exc:
                log_file.flush()
                entry["runs"].append({"command": shown, "dataset": dataset.database, "exit_code": None,
                                      "error": f"preparing the data set failed ({exc})\n" + tail(log_path, 15)})
                entry["status"] = "failed"
                continue
            log_file.write(f"$ {shown}\n")
            log_file.flush()
            out = subprocess.run(command, cwd=ROOT, env=run_env, stdout=subprocess.PIPE, stderr=log_file, text=True)
            run = {"command": shown, "dataset": dataset.database if dataset else None, "exit_code": out.returncode}
            if out.returncode != 0:
                run["error"] = tail(log_path, 15)
                entry["status"] = "failed"
            elif bench.output == "json":
                try:
                    result = json.loads(out.stdout.strip().splitlines()[-1])
                    run.update(rows=result["rows"], notes=result.get("notes", []))
                except (ValueError, IndexError, KeyError) as exc:
                    run["error"] = f"unreadable output ({exc}): {out.stdout[-500:]}"
                    entry["status"] = "failed"
            else:
                run["markdown"] = out.stdout.strip()
            entry["runs"].append(run)
    entry["seconds"] = round(time.perf_counter() - t0, 1)
    entry["log"] = os.path.relpath(log_path, ROOT)
    return entry


def tail(path: Path, lines: int) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def summary_line(entry: dict) -> str:
    rows = sum(len(r.get("rows", [])) for r in entry["runs"])
    what = f"{rows} measurement{'s' if rows != 1 else ''}" if entry["output"] == "json" else "table"
    if entry["status"] != "ok":
        return f"{entry['name']}: FAILED after {entry['seconds']:.0f} s (see {entry['log']})"
    return f"{entry['name']}: ok in {entry['seconds']:.0f} s ({what}; log {entry['log']})"


# -- report -----------------------------------------------------------------------------------------
def render_markdown(report: dict) -> str:
    m = report["machine"]
    lines = [
        "# Benchmark results", "",
        f"Written by `{report['command']}` on {report['date']} (UTC), commit {report['commit']}. "
        "All jobs, logs and indices are GENERATED (bench/workload.py). Each figure is next to a baseline "
        "measured in the same run; the ratio is the figure's cost over the baseline's (see bench/README.md).", "",
        "## Machine", "",
        "| CPU | cores | RAM | OS | Python | PostgreSQL | Redis | Elasticsearch | load average (1, 5, 15 min) at start |",
        "|---|---:|---:|---|---|---|---|---|---|",
        f"| {m['cpu']} | {m['cores']} | {m['ram_gib']} GiB | {m['os']} | {m['python']} | {m.get('postgresql', '-')} | "
        f"{m.get('redis', '-')} | {m.get('elasticsearch', '-')} | {', '.join(str(x) for x in m['load_average'])} |", "",
    ]
    if m.get("load_average_end"):
        lines += [f"Load average at the end: {', '.join(str(x) for x in m['load_average_end'])} "
                  f"({m['cores']} cores: a load above {m['cores']} means other work shared the machine, so timings "
                  "are conservative).", ""]
    for name in NAMES:
        entry = report["benchmarks"].get(name)
        if entry is None:
            continue
        lines += [f"## {entry['title']} (`{name}`)", "",
                  f"{entry['started']}, commit {entry['commit']}, {entry['mode']} mode, {entry['seconds']:.0f} s"
                  f"{'' if entry['status'] == 'ok' else ', **FAILED**'}.", ""]
        for run in entry["runs"]:
            lines += [f"`{run['command']}`" + (f" on `{run['dataset']}`" if run.get("dataset") else ""), ""]
            if run.get("error"):
                lines += ["```", run["error"], "```", ""]
            elif "rows" in run:
                lines += [*run.get("notes", []), "", markdown_table(run["rows"]), ""]
            else:
                lines += [run["markdown"] or "(no output)", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_report(report: dict, stem: str, out_dir: Path) -> Path:
    """Write <stem>.json and <stem>.md. Benchmarks of an earlier run that this one did not repeat
    (--only) are kept, each with its own date and commit."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stem}.json"
    if json_path.exists():
        try:
            previous = json.loads(json_path.read_text())
            report["benchmarks"] = {**previous.get("benchmarks", {}), **report["benchmarks"]}
        except ValueError:
            pass  # an unreadable earlier file is replaced
    json_path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    md_path = out_dir / f"{stem}.md"
    md_path.write_text(render_markdown(report))
    return md_path


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N everywhere: a smoke test of a few minutes")
    parser.add_argument("--only", action="append", choices=NAMES, metavar="NAME",
                        help=f"run only this benchmark (repeatable): {', '.join(NAMES)}")
    parser.add_argument("--scale", choices=["100k", "1m"], default="100k",
                        help="data sets for pages, charts and search (default 100k; 1m creates the 1M-job "
                             "sets when missing, which takes several minutes)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder of the results files")
    args = parser.parse_args(argv)
    if args.quick and args.scale == "1m":
        parser.error("--quick and --scale 1m exclude each other")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    mode = "quick" if args.quick else ("1m" if args.scale == "1m" else "full")
    selected = [b for b in BENCHMARKS if not args.only or b.name in args.only]

    def log(message: str) -> None:
        print(f"[run_all {datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)

    env = servers_env()
    if any(b.servers for b in selected):
        up, status = servers_up()
        if not up:
            print(f"run_all: the servers are not all up; start them with `scripts/servers.sh start`.\n{status}",
                  file=sys.stderr)
            return 2
    stem = "quick" if args.quick else "latest"
    given = sys.argv[1:] if argv is None else list(argv)
    report = {"command": " ".join(["python bench/run_all.py", *given]),
              "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"), "commit": git_commit(),
              "machine": machine_info(env), "benchmarks": {}}
    log(f"{len(selected)} benchmark(s), {mode} mode: {', '.join(b.name for b in selected)} -> "
        f"{args.out / stem}.md")
    failed = 0
    for bench in selected:
        entry = run_benchmark(bench, mode, env, log, args.out)
        failed += entry["status"] != "ok"
        report["benchmarks"][bench.name] = entry
        log(summary_line(entry))
        write_report(report, stem, args.out)  # after each benchmark: a long run that dies keeps what it measured
    report["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    path = write_report(report, stem, args.out)
    log(f"{'all done' if not failed else f'{failed} FAILED'}: {os.path.relpath(path, ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
