"""Fixtures of the fault tests: one private set of servers for the whole fault session (started
once: Elasticsearch alone takes ~15 s), and per test the product's processes on it."""
import subprocess
import sys

import pytest

from .stack import REPO, PrivateServers, Stack, wait_for


@pytest.fixture(scope="session")
def private_servers():
    servers = PrivateServers()
    starting = servers.start_in_background()
    try:
        # Migrate as soon as PostgreSQL answers, while Elasticsearch is still booting.
        wait_for(lambda: servers.database_ready() or starting.poll() is not None, timeout=120,
                 what="the private PostgreSQL")
        if starting.poll() is not None:
            servers.wait_started(starting)  # raises with the script's output if it failed
        env = servers.script_env | servers.app_env
        for args in (["migrate", "--noinput", "-v", "0"], ["create_token", "fault-tests"]):
            result = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True,
                                    text=True, timeout=300)
            assert result.returncode == 0, f"manage.py {args[0]} failed:\n{result.stdout}\n{result.stderr}"
        servers.token = result.stdout.strip().splitlines()[-1]
        servers.wait_started(starting)
        yield servers
    finally:
        if starting.poll() is None:
            starting.wait(timeout=300)
        servers.stop_all()


@pytest.fixture
def stack_factory(private_servers, tmp_path):
    """Make a Stack (several if a test needs different settings); every process it started is
    stopped afterwards and every server a test stopped is running again for the next test."""
    private_servers.start()
    private_servers.redis_flush()  # no task of an earlier test may leak into this one
    made = []

    def make(**env):
        workdir = tmp_path / f"stack{len(made)}"
        workdir.mkdir()
        made.append(Stack(private_servers, private_servers.token, workdir, **env))
        return made[-1]

    yield make
    for stack in made:
        stack.close()
    private_servers.start()
