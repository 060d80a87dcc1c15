#!/usr/bin/env python3
"""Memory of the API and of a Celery worker while a 1 GB job log is ingested, against their idle RSS.

    eval "$(scripts/servers.sh env)"; .venv/bin/python bench/bench_big_log.py [--size-mb 1024] [--markdown]

A GENERATED job log (bench/workload.py: a failed job's real failure text after realistic trainer
output) of --size-mb is written to a temporary folder in two variants: the failure at the very end,
and the failure --before-end-mb (10) before the end, followed by the other ranks' output. Each is
sent through the real API (a gunicorn process, one sync worker: `POST /api/v1/jobs`, multipart,
streamed from disk in 1 MiB pieces with a Content-Length) and analysed and indexed by a real
`celery worker` (prefork pool, one child). Reported: the peak RSS (VmHWM, reset just before each
upload) of the gunicorn worker and of the Celery pool child, against the same processes' RSS when
idle after a small warm-up job; the upload time and the time until the failure is analysed and
indexed, against reading the same file from disk. The 1 GB files and the stored logs are deleted.

Own database (jobtriage_bench_biglog, re-created), Redis database 2, index prefix `benchbiglog`.
"""
from __future__ import annotations

import argparse
import http.client
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PYTHON = sys.executable

from bench.bench_ingest import bench_env, manage, recreate_database  # noqa: E402
from bench.timing import child_pids, drop_from_page_cache, emit, proc_status_kb, reset_peak_rss, row, size_text  # noqa: E402
from bench.workload import Workload  # noqa: E402

MIB = 1024 * 1024


def write_logs(folder: Path, size: int, before_end: int, seed: int) -> tuple[dict, list[tuple[str, Path]]]:
    """The two variants of one generated failed job's log. The log with the failure before the end is
    generated once; the other is derived from it by moving the failure text to the end, which saves
    generating a second gigabyte."""
    workload = Workload(200, seed=seed)
    job = next(j for j in workload.jobs() if j["failure"] and j["failure"]["category"] == "gpu_oom")
    failure = workload.failure_text(job).rstrip("\n")
    before = folder / "failure-before-end.log"
    offset = encoded = None
    with open(before, "wb") as out:
        for chunk in workload.log_chunks(job, size_bytes=size, failure_before_end=before_end):
            data = chunk.encode("utf-8")
            if chunk.rstrip("\n") == failure:
                offset, encoded = out.tell(), data
            out.write(data)
    at_end = folder / "failure-at-end.log"
    shutil.copyfile(before, at_end)
    with open(at_end, "r+b") as f:
        f.seek(offset + len(encoded))
        after = f.read()  # the other ranks' output: --before-end-mb, held by this client only
        f.truncate(offset)
        f.seek(offset)
        f.write(after)
        f.write(encoded)
    return job, [("failure at the end", at_end), (f"failure {before_end / MIB:.0f} MB before the end", before)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    def __init__(self, port: int, token: str):
        self.port, self.token = port, token

    def _connection(self, timeout: float = 30) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def upload(self, metadata: dict, path: Path) -> dict:
        """POST the job with its log as a multipart file, streamed from disk (bounded client memory)."""
        boundary = uuid.uuid4().hex
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{json.dumps(metadata)}\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="log"; filename="{path.name}"\r\n'
                f"Content-Type: text/plain\r\n\r\n").encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        conn = self._connection(timeout=3600)
        conn.putrequest("POST", "/api/v1/jobs")
        conn.putheader("Authorization", f"Token {self.token}")
        conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        conn.putheader("Content-Length", str(len(head) + path.stat().st_size + len(tail)))
        conn.endheaders()
        conn.send(head)
        with open(path, "rb") as f:
            while chunk := f.read(MIB):
                conn.send(chunk)
        conn.send(tail)
        response = conn.getresponse()
        body = json.loads(response.read())
        conn.close()
        if response.status != 202:
            raise RuntimeError(f"the API answered {response.status}: {body}")
        return body

    def status(self, job_id: int) -> dict | None:
        try:
            conn = self._connection()
            conn.request("GET", f"/api/v1/jobs/{job_id}", headers={"Authorization": f"Token {self.token}"})
            response = conn.getresponse()
            body = response.read()
            conn.close()
            return json.loads(body) if response.status == 200 else None
        except OSError:
            return None

    def wait_analysed(self, job_id: int, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.status(job_id)
            if body and body["ingest_state"] == "error":
                raise RuntimeError(f"job {job_id} failed to ingest: {body['ingest_error']}")
            if body and body["ingest_state"] == "analysed" and body["failure"] and body["failure"]["indexed"]:
                return body
            time.sleep(0.1)
        raise TimeoutError(f"job {job_id} not analysed and indexed within {timeout:.0f} s")


class RssSampler(threading.Thread):
    """Samples VmRSS of some processes every 20 ms: a cross-check of VmHWM, and the peak when the
    kernel does not let us reset VmHWM."""

    def __init__(self, pids: dict[str, int]):
        super().__init__(daemon=True)
        self.pids, self.peak, self.running = pids, {name: 0 for name in pids}, True

    def run(self):
        while self.running:
            for name, pid in self.pids.items():
                self.peak[name] = max(self.peak[name], proc_status_kb(pid, "VmRSS") or 0)
            time.sleep(0.02)

    def stop(self) -> dict[str, int]:
        self.running = False
        self.join()
        return self.peak


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s")


def read_seconds(path: Path) -> float:
    """Seconds to read the file from disk (evicted from the page cache first)."""
    drop_from_page_cache(path)
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        while f.read(MIB):
            pass
    return time.perf_counter() - t0


def metadata(external_id: str) -> dict:
    return {"platform": "bench-biglog", "external_id": external_id, "status": "failed", "gpus": 8, "exit_code": 1,
            "started_at": "2026-11-16T08:00:00Z", "ended_at": "2026-11-16T20:00:00Z",
            "name": "generated 1 GB log (bench/bench_big_log.py)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="log size in MiB (1024 = the 1 GB log)")
    parser.add_argument("--before-end-mb", type=int, default=10, help="where the second variant's failure is")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for each analysis")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table (default: JSON for run_all.py)")
    args = parser.parse_args()

    env = bench_env("jobtriage_bench_biglog", redis_db=2, es_prefix="benchbiglog")
    folder = Path(tempfile.mkdtemp(prefix="bench-big-log-"))
    env["JOBTRIAGE_LOG_DIR"] = str(folder / "stored")  # the API's and the worker's log store, deleted at the end
    env["TMPDIR"] = str(folder / "uploads")  # Django spools uploads > 2 MB to a temporary file
    (folder / "uploads").mkdir()
    processes: list[subprocess.Popen] = []
    try:
        print(f"bench_big_log: writing a {args.size_mb} MiB generated log (two variants) to {folder}", file=sys.stderr)
        t0 = time.perf_counter()
        job, variants = write_logs(folder, args.size_mb * MIB, args.before_end_mb * MIB, args.seed)
        print(f"bench_big_log: written in {time.perf_counter() - t0:.0f} s ({job['failure']['category']} failure "
              f"of generated job {job['external_id']})", file=sys.stderr)
        recreate_database(env)
        manage(env, "ensure_search_index", stdout=subprocess.DEVNULL)
        token = manage(env, "create_token", "bench-big-log", capture_output=True, text=True).stdout.strip()

        port = free_port()
        api = subprocess.Popen([PYTHON, "-m", "gunicorn", "jobtriage.wsgi:application", "--workers", "1",
                                "--bind", f"127.0.0.1:{port}", "--timeout", "3600", "--log-level", "warning"],
                               cwd=ROOT, env=env, stdout=sys.stderr)
        processes.append(api)
        worker = subprocess.Popen([PYTHON, "-m", "celery", "-A", "jobtriage", "worker", "-c", "1", "-l", "warning",
                                   "--without-gossip", "--without-mingle", "--without-heartbeat"],
                                  cwd=ROOT, env=env, stdout=sys.stderr)
        processes.append(worker)
        client = Api(port, token)
        api_pid = wait_for(lambda: (child_pids(api.pid) or [None])[0], 60, "gunicorn worker")
        wait_for(lambda: _answers(port), 60, "API")
        pool_pid = wait_for(lambda: (child_pids(worker.pid) or [None])[0], 60, "Celery pool process")

        # Warm-up: one small job through both processes (imports, connections), then measure them idle.
        small = folder / "small.log"
        small.write_text("".join(Workload(200, seed=args.seed).log_chunks(job, size_bytes=64 * 1024)))
        warm = client.upload(metadata("warm-up"), small)
        client.wait_analysed(warm["id"], 300)
        time.sleep(1)
        idle = {"api": proc_status_kb(api_pid, "VmRSS"), "worker": proc_status_kb(pool_pid, "VmRSS"),
                "worker main process": proc_status_kb(worker.pid, "VmRSS")}
        print(f"bench_big_log: idle RSS: API {idle['api'] / 1024:.0f} MiB, worker pool process "
              f"{idle['worker'] / 1024:.0f} MiB", file=sys.stderr)

        rows = []
        for i, (name, path) in enumerate(variants):
            size = path.stat().st_size
            disk = read_seconds(path)
            pids = {"api": api_pid, "worker": pool_pid}
            reset = all(reset_peak_rss(pid) for pid in pids.values())
            sampler = RssSampler(pids)
            sampler.start()
            t0 = time.perf_counter()
            accepted = client.upload(metadata(f"big-{i}"), path)
            uploaded = time.perf_counter() - t0
            result = client.wait_analysed(accepted["id"], args.timeout)
            total = time.perf_counter() - t0
            sampled = sampler.stop()
            peak = {k: (proc_status_kb(pid, "VmHWM") if reset else sampled[k]) for k, pid in pids.items()}
            failure = result["failure"]
            print(f"bench_big_log: {name}: upload {uploaded:.1f} s, analysed and indexed after {total:.1f} s; peak RSS "
                  f"API {peak['api'] / 1024:.0f} MiB, worker {peak['worker'] / 1024:.0f} MiB; {failure['category']}",
                  file=sys.stderr)
            label = f"{size_text(size)} log, {name}"
            values = dict(log_bytes=size, upload_seconds=uploaded, total_seconds=total, disk_read_seconds=disk,
                          peak_kb=peak, sampled_peak_kb=sampled, idle_kb=idle, peak_from="VmHWM" if reset else "sampled",
                          category=failure["category"], failure_line=failure["failure_line"])
            rows.append(row(f"{label}: Celery worker (pool process) peak RSS",
                            f"{peak['worker'] / 1024:.0f} MiB (+{(peak['worker'] - idle['worker']) / 1024:.0f} MiB)",
                            f"idle worker after a small job: {idle['worker'] / 1024:.0f} MiB",
                            peak["worker"] / idle["worker"], **values))
            rows.append(row(f"{label}: API (gunicorn worker) peak RSS",
                            f"{peak['api'] / 1024:.0f} MiB (+{(peak['api'] - idle['api']) / 1024:.0f} MiB)",
                            f"idle API after a small job: {idle['api'] / 1024:.0f} MiB", peak["api"] / idle["api"]))
            rows.append(row(f"{label}: time until analysed and indexed (upload {uploaded:.1f} s)", f"{total:.1f} s",
                            f"reading the file from disk: {disk:.2f} s", total / disk))
            path.unlink()  # free the disk as soon as a variant is done
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(folder, ignore_errors=True)
    emit("big_log", rows, markdown=args.markdown,
         notes=[f"Generated log (bench/workload.py, seed {args.seed}); API: gunicorn, 1 sync worker; worker: "
                "celery prefork, 1 child; peak RSS = VmHWM reset just before each upload."])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


if __name__ == "__main__":
    main()
