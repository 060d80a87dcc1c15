"""A private jobtriage stack for fault tests: its own PostgreSQL, Redis and Elasticsearch (started
with scripts/servers.sh in a temporary folder on free ports) and the product's own processes
(gunicorn serving the API, `celery worker`, `celery beat`) as real subprocesses that the tests
stop, kill and restart. The shared servers of the machine are never touched.

Counting is done from outside, like an operator would: SQL on the private PostgreSQL and searches on
the private Elasticsearch, restricted to the test's own platform and index prefix.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg

from tests.waiting import wait_for as _wait_for

REPO = Path(__file__).resolve().parents[2]
SERVERS_SH = REPO / "scripts" / "servers.sh"
PG_BIN = Path("/usr/lib/postgresql/15/bin")


def wait_for(predicate, timeout=60.0, interval=0.25, what="condition"):
    """tests.waiting.wait_for with the longer defaults that restarting servers need."""
    return _wait_for(predicate, timeout=timeout, interval=interval, what=what)


def free_ports(n: int) -> list[int]:
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path})"


class PrivateServers:
    """PostgreSQL + Redis + Elasticsearch of our own, in a temporary folder on free ports."""

    def __init__(self):
        # Under /var/tmp and world-traversable: as root the servers run as the postgres/jobtriage-es users.
        self.dir = Path(tempfile.mkdtemp(prefix="jobtriage-faults-", dir="/var/tmp"))
        self.dir.chmod(0o755)
        self.pg_port, self.redis_port, self.es_port, self.es_transport_port = free_ports(4)

    @property
    def script_env(self) -> dict:
        return os.environ | {"JOBTRIAGE_SERVERS_DIR": str(self.dir), "PG_PORT": str(self.pg_port),
                             "REDIS_PORT": str(self.redis_port), "ES_PORT": str(self.es_port),
                             "ES_TRANSPORT_PORT": str(self.es_transport_port), "ES_HEAP": "512m"}

    @property
    def database_url(self) -> str:
        return f"postgres://jobtriage:jobtriage@127.0.0.1:{self.pg_port}/jobtriage"

    @property
    def app_env(self) -> dict:
        return {"DATABASE_URL": self.database_url, "CELERY_BROKER_URL": f"redis://127.0.0.1:{self.redis_port}/0",
                "ELASTICSEARCH_URL": f"http://127.0.0.1:{self.es_port}"}

    def _servers_sh(self, command: str, timeout: float = 300) -> None:
        result = subprocess.run(["bash", str(SERVERS_SH), command], env=self.script_env, capture_output=True,
                                text=True, timeout=timeout, start_new_session=True)
        if result.returncode != 0:
            raise RuntimeError(f"servers.sh {command} failed ({result.returncode}):\n{result.stderr[-4000:]}")

    def start(self) -> None:
        """Start whatever is not answering (all three at first; later, the ones a test stopped)."""
        self._servers_sh("start")

    def start_in_background(self) -> subprocess.Popen:
        """The first start, in the background: the caller migrates PostgreSQL while Elasticsearch boots."""
        self._first_start_log = self.dir / "servers-start.log"
        with open(self._first_start_log, "wb") as out:
            return subprocess.Popen(["bash", str(SERVERS_SH), "start"], env=self.script_env, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def wait_started(self, process: subprocess.Popen) -> None:
        if process.wait(timeout=300) != 0:
            raise RuntimeError(f"servers.sh start failed:\n{tail(self._first_start_log)}")

    def database_ready(self) -> bool:
        try:
            self.sql("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True

    def stop_all(self) -> None:
        try:
            self._servers_sh("stop", timeout=200)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- faults --------------------------------------------------------------------------------
    def stop_elasticsearch(self) -> None:
        pid = int((self.dir / "es" / "es.pid").read_text().strip())
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not _alive(pid), timeout=60, what="Elasticsearch to stop")
        wait_for(lambda: not port_open(self.es_port), timeout=10, what="Elasticsearch port to close")

    def stop_redis(self) -> None:
        pid = int((self.dir / "redis" / "redis.pid").read_text().strip())
        os.kill(pid, signal.SIGKILL)  # like a crash: nothing is saved (it never persists anyway)
        wait_for(lambda: not _alive(pid) and not port_open(self.redis_port), timeout=20, what="Redis to stop")

    def stop_postgresql(self) -> None:
        self._pg_ctl("stop", "-m", "fast", "-w", "-t", "60")
        wait_for(lambda: not port_open(self.pg_port), timeout=20, what="PostgreSQL port to close")

    def _pg_ctl(self, *args) -> None:
        command = [str(PG_BIN / "pg_ctl"), *args, "-D", str(self.dir / "pg" / "data")]
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root (servers.sh does the same)
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=90, cwd="/")

    def redis_flush(self) -> None:
        subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.redis_port), "flushall"], check=True,
                       capture_output=True, timeout=10)

    def sql(self, query: str, *params):
        with psycopg.connect(self.database_url, connect_timeout=5, autocommit=True) as conn:
            return conn.execute(query, params).fetchall()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


@dataclass
class Counts:
    """What the stack holds for one platform, from PostgreSQL and Elasticsearch."""
    jobs: int
    distinct_jobs: int
    analysed: int
    failures: int
    distinct_failures: int
    indexed: int
    documents: int | None  # None: Elasticsearch is down
    distinct_documents: int | None
    miscounted_signatures: list  # (signature id, failure_count, real count) where the counter is wrong


class Stack:
    """The product's processes for one test, on the private servers, with its own index prefix,
    platform name and log folder."""

    def __init__(self, servers: PrivateServers, token: str, workdir: Path, **env):
        self.servers, self.token, self.workdir = servers, token, workdir
        self.platform = f"fault-{uuid.uuid4().hex[:6]}"
        self.prefix = f"fault-{uuid.uuid4().hex[:8]}"
        self.api_port = free_ports(1)[0]
        self.processes: dict[str, tuple[subprocess.Popen, Path]] = {}
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("DJANGO_", "CELERY_", "JOBTRIAGE_", "ES_")) and k != "DATABASE_URL"}
        self.env = keep | servers.app_env | {
            "ES_INDEX_PREFIX": self.prefix, "JOBTRIAGE_LOG_DIR": str(workdir / "logs"), "PYTHONUNBUFFERED": "1",
            "JOBTRIAGE_RATE_LIMIT_PER_TOKEN": "0", "DJANGO_SETTINGS_MODULE": "jobtriage.settings",
            "DJANGO_DEBUG": "1", "JOBTRIAGE_ENV_FILE": "",   # private servers only: never the checkout's .env
        } | {k: str(v) for k, v in env.items()}

    # -- processes -----------------------------------------------------------------------------
    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        log_path = self.workdir / f"{name}.log"
        with open(log_path, "ab") as out:
            # A session of its own: killing the process group takes a worker's pool children too.
            process = subprocess.Popen(command, cwd=REPO, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        self.processes[name] = (process, log_path)
        return process

    def log_of(self, name: str) -> str:
        return self.processes[name][1].read_text(errors="replace")

    def start_api(self) -> None:
        self._spawn("api", [sys.executable, "-m", "gunicorn", "jobtriage.wsgi:application", "--bind",
                            f"127.0.0.1:{self.api_port}", "--workers", "2", "--timeout", "120"])
        wait_for(lambda: self._api_answers(), timeout=60, what=f"the API on port {self.api_port}")

    def _api_answers(self) -> bool:
        self.check_alive("api")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{self.api_port}/api/v1/jobs/1", timeout=2)
        except urllib.error.HTTPError:
            return True  # 401 without a token: the API is up
        except OSError:
            return False
        return True

    def start_worker(self, name: str = "worker") -> subprocess.Popen:
        process = self._spawn(name, [sys.executable, "-m", "celery", "-A", "jobtriage", "worker", "--pool", "prefork",
                                     "--concurrency", "1", "--loglevel", "INFO", "--hostname", f"{name}-{self.prefix}@%h",
                                     "--without-gossip", "--without-mingle", "--without-heartbeat"])
        wait_for(lambda: self.check_alive(name) and " ready." in self.log_of(name), timeout=90,
                 what=f"celery {name} to be ready")
        return process

    def start_beat(self) -> None:
        self._spawn("beat", [sys.executable, "-m", "celery", "-A", "jobtriage", "beat", "--loglevel", "INFO",
                             "--schedule", str(self.workdir / "beat-schedule")])

    def check_alive(self, name: str) -> bool:
        process, log_path = self.processes[name]
        if process.poll() is not None:
            raise AssertionError(f"{name} exited with {process.returncode}:\n{tail(log_path)}")
        return True

    def stop(self, name: str, sig=signal.SIGTERM, timeout: float = 60) -> None:
        process, _ = self.processes[name]
        if process.poll() is None:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)

    def close(self) -> None:
        for name in list(self.processes):
            self.stop(name, timeout=10)

    def manage(self, *args, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    # -- the API as a scheduler uses it ----------------------------------------------------------
    def job(self, external_id: str, log_text: str, **extra) -> dict:
        return {"platform": self.platform, "external_id": external_id, "status": "failed", "name": "fault-test",
                "team": "faults", "gpus": 4, "exit_code": 1, "started_at": "2026-11-16T08:00:00Z",
                "ended_at": "2026-11-16T09:00:00Z", "log_text": log_text, **extra}

    def post(self, body: bytes, content_type: str, timeout: float = 120) -> tuple[int, dict, dict]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.api_port}/api/v1/jobs", data=body, method="POST",
                                         headers={"Authorization": f"Token {self.token}", "Content-Type": content_type})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read()), dict(response.headers)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"raw": raw[:500].decode(errors="replace")}
            return exc.code, body, dict(exc.headers)

    def send_json(self, job: dict, timeout: float = 120) -> tuple[int, dict, dict]:
        return self.post(json.dumps(job).encode(), "application/json", timeout=timeout)

    def send_file(self, metadata: dict, log_path: Path, timeout: float = 300) -> tuple[int, dict, dict]:
        """A multipart upload, streamed from disk (the way curl -F log=@file sends it)."""
        boundary = uuid.uuid4().hex
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{json.dumps(metadata)}\r\n"
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"job.log\"\r\n"
                f"Content-Type: text/plain\r\n\r\n").encode()
        tail_bytes = f"\r\n--{boundary}--\r\n".encode()
        size = len(head) + log_path.stat().st_size + len(tail_bytes)

        def body():
            yield head
            with open(log_path, "rb") as f:
                while chunk := f.read(1024 * 1024):
                    yield chunk
            yield tail_bytes

        request = urllib.request.Request(
            f"http://127.0.0.1:{self.api_port}/api/v1/jobs", data=body(), method="POST",
            headers={"Authorization": f"Token {self.token}", "Content-Length": str(size),
                     "Content-Type": f"multipart/form-data; boundary={boundary}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read()), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}"), dict(exc.headers)

    # -- counting ----------------------------------------------------------------------------------
    def counts(self) -> Counts:
        (jobs, distinct_jobs, analysed), = self.servers.sql(
            "SELECT count(*), count(DISTINCT external_id), count(*) FILTER (WHERE ingest_state = 'analysed')"
            " FROM jobs_ingest_job WHERE platform = %s", self.platform)
        (failures, distinct_failures, indexed), = self.servers.sql(
            "SELECT count(*), count(DISTINCT f.job_id), count(f.indexed_at) FROM jobs_ingest_failure f"
            " JOIN jobs_ingest_job j ON j.id = f.job_id WHERE j.platform = %s", self.platform)
        # Signatures are shared by every test's jobs: compare each counter with the failures it counts.
        miscounted = self.servers.sql(
            "SELECT s.id, s.failure_count, (SELECT count(*) FROM jobs_ingest_failure a WHERE a.signature_id = s.id)"
            " AS real FROM jobs_ingest_signature s WHERE s.id IN (SELECT f.signature_id FROM jobs_ingest_failure f"
            " JOIN jobs_ingest_job j ON j.id = f.job_id WHERE j.platform = %s)", self.platform)
        miscounted = [row for row in miscounted if row[1] != row[2]]
        documents, distinct = self.es_documents()
        return Counts(jobs, distinct_jobs, analysed, failures, distinct_failures, indexed, documents, distinct,
                      miscounted)

    def es_documents(self) -> tuple[int | None, int | None]:
        """(documents, distinct failure ids) of this platform in the failures alias; (0, 0) if there is
        no index yet, (None, None) while Elasticsearch is down."""
        if not port_open(self.servers.es_port):
            return None, None
        base = f"http://127.0.0.1:{self.servers.es_port}/{self.prefix}-failures"
        try:
            urllib.request.urlopen(urllib.request.Request(f"{base}/_refresh", method="POST"), timeout=30)
            query = {"size": 10000, "_source": ["failure_id"], "query": {"term": {"platform": self.platform}}}
            request = urllib.request.Request(f"{base}/_search", data=json.dumps(query).encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                hits = json.loads(response.read())["hits"]["hits"]
        except urllib.error.HTTPError as exc:
            if exc.code == 404:  # the index does not exist yet
                return 0, 0
            raise
        return len(hits), len({h["_source"]["failure_id"] for h in hits})
