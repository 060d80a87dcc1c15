"""The attacks of issue #12, each as it was tried on a fresh clone: ingestion that reads outside its
folder, redirects off the site, guessing passwords, and unsafe defaults. (Token scope: test_token_scope.py.)"""
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.urls import reverse

from jobs_ingest.models import Job
from triage.roles import ENGINEERS

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "fixtures" / "ingest_dir" / "logs"


# ---------------------------------------------------------------- ingest_dir stays inside its folder

@pytest.fixture
def outside(tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:not for the log store\n")
    folder = tmp_path / "drop"
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "ok.log").write_bytes((LOGS / "oom-node7.log").read_bytes())
    return folder, secret


def manifest(folder, *logs):
    lines = [{"platform": "dir", "external_id": f"j{n}", "status": "failed", "log": log} for n, log in enumerate(logs)]
    (folder / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def run_ingest_dir(folder):
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was ingested"):
        call_command("ingest_dir", str(folder), stdout=io.StringIO(), stderr=err)
    return err.getvalue()


@pytest.mark.parametrize("escape", ["dotdot", "absolute", "symlink_file", "symlink_dir"])
def test_ingest_dir_refuses_logs_outside_its_folder(outside, transactional_db, log_dir, escape):
    folder, secret = outside
    name = {"dotdot": "../outside/secret.txt", "absolute": str(secret),
            "symlink_file": "logs/link.log", "symlink_dir": "logs/up/secret.txt"}[escape]
    if escape == "symlink_file":
        os.symlink(secret, folder / "logs" / "link.log")
    if escape == "symlink_dir":
        os.symlink(secret.parent, folder / "logs" / "up")
    manifest(folder, "logs/ok.log", name)   # one good line first: it must not be ingested either

    err = run_ingest_dir(folder)

    assert "manifest.jsonl:2" in err and "outside" in err
    assert Job.objects.count() == 0
    assert not Path(log_dir).exists() or not any(p.is_file() for p in Path(log_dir).rglob("*"))


def test_ingest_dir_without_manifest_refuses_a_symlink_out(outside, transactional_db, log_dir):
    folder, secret = outside
    os.symlink(secret, folder / "logs" / "innocent.log")
    err = run_ingest_dir(folder)
    assert "logs/innocent.log" in err
    assert Job.objects.count() == 0


def test_ingest_dir_refuses_a_manifest_outside_its_folder(outside, transactional_db, log_dir):
    folder, _ = outside
    with pytest.raises(CommandError, match="outside"):
        call_command("ingest_dir", str(folder), "--manifest", "../outside/secret.txt",
                     stdout=io.StringIO(), stderr=io.StringIO())


def test_ingest_k8s_does_not_read_a_symlink_out_of_its_log_folder(tmp_path, transactional_db, log_dir):
    logs = tmp_path / "kubectl-logs"   # not the log store (tmp_path / "logs")
    logs.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the log store\n")
    os.symlink(secret, logs / "train-0.log")
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "train-0", "namespace": "ml", "uid": "u-1", "labels": {"team": "nlp"}},
           "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
           "status": {"phase": "Failed", "startTime": "2026-11-16T08:00:00Z", "containerStatuses": [
               {"name": "main", "restartCount": 0, "state": {"terminated": {
                   "exitCode": 1, "reason": "Error", "startedAt": "2026-11-16T08:00:00Z",
                   "finishedAt": "2026-11-16T09:00:00Z"}}}]}}
    objects = tmp_path / "pods.json"
    objects.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}))
    err = io.StringIO()
    call_command("ingest_k8s", "--objects", str(objects), "--logs", str(logs), stdout=io.StringIO(), stderr=err, verbosity=2)
    assert "outside" in err.getvalue()
    job = Job.objects.get()
    assert job.log_path == ""
    assert not Path(log_dir).exists() or not any(p.is_file() for p in Path(log_dir).rglob("*"))


# ---------------------------------------------------------------- redirects stay on this site

@pytest.fixture
def engineer(db):
    user = User.objects.create_user("erin", password="correct horse battery")
    user.groups.add(Group.objects.get(name=ENGINEERS))
    return user


@pytest.mark.parametrize("target", ["https://evil.example/phish", "//evil.example/", "/\\evil.example",
                                    "javascript:alert(1)", "http://testserver.evil.example/"])
def test_next_never_redirects_off_site(client, engineer, target):
    client.force_login(engineer)
    response = client.post(reverse("bulk-confirm"), {"next": target})
    assert response.status_code == 302 and response["Location"] == reverse("queue")


def test_next_on_this_site_is_kept(client, engineer):
    client.force_login(engineer)
    response = client.post(reverse("bulk-confirm"), {"next": "/?state=open&page=2"})
    assert response["Location"] == "/?state=open&page=2"


def test_login_next_never_redirects_off_site(client, engineer):
    response = client.post(reverse("login") + "?next=https://evil.example/",
                           {"username": "erin", "password": "correct horse battery", "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/"


# ---------------------------------------------------------------- login brute force

@pytest.fixture
def login_limits(settings):
    settings.JOBTRIAGE_LOGIN_FAILURES_PER_USER = 3
    settings.JOBTRIAGE_LOGIN_FAILURES_PER_ADDRESS = 5
    settings.JOBTRIAGE_RATE_LIMIT_KEY_PREFIX = f"test-login-{os.urandom(4).hex()}"   # fresh counters
    return settings


def login(client, username, password, address="10.9.8.7"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def test_failed_logins_are_limited_per_user(client, engineer, login_limits):
    for n in range(3):
        assert login(client, "erin", f"guess-{n}", address=f"10.0.0.{n}").status_code == 200
    refused = login(client, "erin", "correct horse battery", address="10.0.0.99")
    assert refused.status_code == 429
    assert "Too many failed logins" in refused.content.decode()
    assert "_auth_user_id" not in client.session   # even the right password is not tried now


def test_failed_logins_are_limited_per_address(client, engineer, login_limits):
    User.objects.create_user("other", password="other pw 123")
    for n in range(5):
        login(client, f"nobody-{n}", "x")
    refused = login(client, "other", "other pw 123")
    assert refused.status_code == 429 and "_auth_user_id" not in client.session
    assert login(client, "other", "other pw 123", address="10.1.1.1").status_code == 302   # another address


def test_successful_login_below_the_limit(client, engineer, login_limits):
    login(client, "erin", "wrong")
    response = login(client, "erin", "correct horse battery")
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(engineer.pk)


def test_admin_login_is_limited_too(client, engineer, login_limits):
    engineer.is_staff = True
    engineer.save()
    for n in range(3):
        client.post(reverse("admin:login"), {"username": "erin", "password": f"guess-{n}"}, REMOTE_ADDR="10.2.0.1")
    refused = client.post(reverse("admin:login"), {"username": "erin", "password": "correct horse battery"},
                          REMOTE_ADDR="10.2.0.2")
    assert "Too many failed logins" in refused.content.decode() and "_auth_user_id" not in client.session


# ---------------------------------------------------------------- safe defaults

def settings_in_child(env: dict) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")} | {"JOBTRIAGE_ENV_FILE": ""}
    return subprocess.run(
        [sys.executable, "-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='jobtriage.settings';"
                               "from django.conf import settings; print(settings.DEBUG)"],
        env={**clean, **env}, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_debug_is_off_unless_asked_for():
    assert settings_in_child({"DJANGO_SECRET_KEY": "x" * 50}).stdout.strip() == "False"
    assert settings_in_child({"DJANGO_SECRET_KEY": "x" * 50, "DJANGO_DEBUG": "1"}).stdout.strip() == "True"


def test_no_secret_key_and_no_debug_refuses_to_start():
    child = settings_in_child({})
    assert child.returncode != 0 and "DJANGO_SECRET_KEY must be set" in child.stderr


def test_docker_compose_has_no_usable_secret_and_no_debug():
    compose = (ROOT / "docker-compose.yml").read_text()
    uses = [line.strip() for line in compose.splitlines() if "DJANGO_SECRET_KEY" in line and not line.strip().startswith("#")]
    assert uses and all("${DJANGO_SECRET_KEY:?" in line for line in uses), uses
    debug = [line.split(":", 1)[1].strip() for line in compose.splitlines() if line.strip().startswith("DJANGO_DEBUG:")]
    assert debug == ['"0"']
