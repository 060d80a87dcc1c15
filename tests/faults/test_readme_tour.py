"""The README's tour, run as written (#18.7): every command of its code block, pasted into one new bash
shell in the checkout, against the product's real processes (the API under gunicorn and a Celery worker on
private PostgreSQL, Redis and Elasticsearch). The shell gets nothing but PATH, HOME and the `.env` file that
the first README command writes (here a file of its own, named by JOBTRIAGE_ENV_FILE, holding the same
keys plus this stack's index prefix and log directory); `localhost:8000` becomes this API's address."""
import os
import re
import subprocess

from .stack import REPO

README = REPO / "README.md"


def tour_commands() -> list[str]:
    text = README.read_text()
    block = text.split("## A short tour", 1)[1].split("\nLayout:", 1)[0]
    lines = [line[4:] for line in block.splitlines() if line.startswith("    ")]
    commands, current = [], ""
    for line in lines:
        current += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            commands.append(re.sub(r"\s+#[^'\"]*$", "", current).strip())
            current = ""
    return commands


def test_the_tour_parses_into_the_commands_a_reader_sees():
    commands = tour_commands()
    assert commands[0].startswith("export TOKEN=$(.venv/bin/python manage.py create_token")
    assert any(c.startswith("curl -X POST localhost:8000/api/v1/jobs") and "-F log=@demo/" in c for c in commands)
    assert len(commands) >= 9


def test_every_tour_command_works_in_a_new_shell(stack_factory, tmp_path):
    stack = stack_factory()
    stack.start_api()
    stack.start_worker()
    env_file = tmp_path / ".env"
    keys = ("DATABASE_URL", "CELERY_BROKER_URL", "ELASTICSEARCH_URL", "ES_INDEX_PREFIX", "JOBTRIAGE_LOG_DIR")
    env_file.write_text("".join(f"{k}={stack.env[k]}\n" for k in keys) + "DJANGO_DEBUG=1\n")

    script = ["set -o pipefail"]
    for n, command in enumerate(tour_commands()):
        command = command.replace("localhost:8000", f"127.0.0.1:{stack.api_port}")
        if "bench/run_all.py" in command:   # its results go to a folder of the test's, not the checkout's
            command += f" --out {tmp_path / 'bench-results'}"
        script.append(f"echo '>>> tour {n}'\n{command} || {{ echo 'TOUR FAILED: {n}'; exit 1; }}")
        if command.startswith("export TOKEN="):
            script.append('[ -n "$TOKEN" ] || { echo "TOUR FAILED: no token"; exit 1; }')
    shell_env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path)),
                 "JOBTRIAGE_ENV_FILE": str(env_file), "LANG": "C.UTF-8"}
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=REPO, env=shell_env, capture_output=True,
                            text=True, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert '"external_id": "42"' in output or '"external_id":"42"' in output, output[-3000:]
    assert "gpu_oom" in output  # tag_logs on the CUDA line
    assert "reanalyse (dry run)" in output
