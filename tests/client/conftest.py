"""Client tests: pure functions directly; submission and the run wrapper against the real Django
server (pytest-django's live_server on the real PostgreSQL) with a real Celery worker where the
analysis matters. The client package is imported from client/ (no install needed)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "client"
if str(CLIENT) not in sys.path:
    sys.path.insert(0, str(CLIENT))

from tests.integration.conftest import api_token, celery_worker, log_dir  # noqa: E402,F401  (es_prefix: tests/conftest.py)


def run_cli(args, *, env=None, cwd=None, timeout=120):
    """`jobtriage ...` in a child process, as a job would run it."""
    child_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CLIENT), os.environ.get("PYTHONPATH", "")])}
    for name in ("JOBTRIAGE_URL", "JOBTRIAGE_TOKEN", "CUDA_VISIBLE_DEVICES", "SLURM_JOB_ID", "JOBTRIAGE_EXTERNAL_ID"):
        child_env.pop(name, None)
    child_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "jobtriage_client.cli", *args], env=child_env, cwd=cwd,
                          capture_output=True, timeout=timeout)


@pytest.fixture
def server(live_server, api_token, log_dir):
    """The real API over HTTP: (base URL, a valid token)."""
    return live_server.url, api_token
