"""Fixtures for the tests against the real single-node Slurm of scripts/slurm.sh (22.05 from Debian's
packages, with accounting). scripts/test.sh starts it when run as root; CI does. Under CI a missing
cluster fails every test here; elsewhere they are skipped with the reason.

The real PostgreSQL, Redis (Celery) and Elasticsearch fixtures are the integration tests'."""
import os
import time

import pytest

from tests.integration.conftest import _require_postgresql, api_token, celery_worker, es, log_dir  # noqa: F401
from tests.slurm import cluster


def expected_in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def slurm_env():
    try:
        return cluster.environment()
    except cluster.SlurmMissing as exc:
        if expected_in_ci():
            pytest.fail(f"CI runs the Slurm tests and the cluster is missing: {exc}", pytrace=False)
        pytest.skip(f"no Slurm test cluster: {exc}")


@pytest.fixture(scope="session", autouse=True)
def sacct_jobs(slurm_env):
    """One real job of each kind for the sacct tests, submitted as soon as the first test here starts,
    so that they run while the epilog test's own jobs run (a time limit takes about 90 s)."""
    folder = slurm_env["folder"] / "jobs" / f"sacct-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    return cluster.JobSet("sacct", folder, slurm_env["user"]).submit().steer_in_background()


@pytest.fixture(scope="session")
def sacct_done(sacct_jobs):
    sacct_jobs.wait()
    return sacct_jobs
