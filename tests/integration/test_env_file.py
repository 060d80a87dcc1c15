"""The local environment file: scripts/test.sh and scripts/dev.sh write the servers' URLs and the
development settings to .env, and any manage.py in any shell reads it (issue #18, part 1)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = ("from django.conf import settings; d = settings.DATABASES['default'];"
                  "print(d['ENGINE'], d['NAME'], d.get('PORT'), settings.CELERY_BROKER_URL, settings.ELASTICSEARCH_URL,"
                  " settings.DEBUG)")


def bare_env(**extra) -> dict:
    """A new shell: none of the servers' variables, no Django settings of our own."""
    drop = ("DJANGO_", "DATABASE_URL", "CELERY_", "ELASTICSEARCH_URL", "JOBTRIAGE_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)} | extra


def manage_shell(env: dict) -> str:
    result = subprocess.run([sys.executable, "manage.py", "shell", "-v", "0", "-c", PRINT_SETTINGS], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.split()


def write_env_file(path: Path) -> None:
    """What the README commands do after starting the servers."""
    script = f'source "{ROOT}/scripts/test.sh" && local_settings'
    env = bare_env(JOBTRIAGE_ENV_FILE=str(path), DATABASE_URL="postgres://u:p@127.0.0.1:55999/jt_envfile",
                   CELERY_BROKER_URL="redis://127.0.0.1:56999/0", ELASTICSEARCH_URL="http://127.0.0.1:59999")
    subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, check=True, timeout=60)


def test_the_scripts_write_an_env_file_that_a_new_shell_reads(tmp_path):
    env_file = tmp_path / ".env"
    write_env_file(env_file)
    assert "DJANGO_DEBUG=1" in env_file.read_text()

    engine, name, port, broker, search, debug = manage_shell(bare_env(JOBTRIAGE_ENV_FILE=str(env_file)))

    assert (engine, name, port) == ("django.db.backends.postgresql", "jt_envfile", "55999")
    assert (broker, search, debug) == ("redis://127.0.0.1:56999/0", "http://127.0.0.1:59999", "True")


def test_the_environment_wins_over_the_file(tmp_path):
    env_file = tmp_path / ".env"
    write_env_file(env_file)
    values = manage_shell(bare_env(JOBTRIAGE_ENV_FILE=str(env_file), DATABASE_URL="sqlite:///:memory:",
                                   DJANGO_DEBUG="0", DJANGO_SECRET_KEY="x" * 50))
    assert values[0] == "django.db.backends.sqlite3" and values[-1] == "False"


def test_no_env_file_means_no_debug(tmp_path):
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                            env=bare_env(JOBTRIAGE_ENV_FILE=str(tmp_path / "missing.env")), timeout=120)
    assert result.returncode != 0 and "DJANGO_SECRET_KEY must be set" in result.stderr
