"""Security: every page and API endpoint needs authentication (the URL patterns are enumerated and
tried anonymously); `manage.py check --deploy` is clean with production settings; no secrets are committed."""
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

PUBLIC = {"login", "logout", "password_reset", "password_reset_done", "password_reset_confirm",
          "password_reset_complete", "healthz",   # healthz says only up or down (tests/integration/test_ops.py)
          "api-schema", "api-docs"}               # the API's shape (OpenAPI), no data (tests/integration/test_openapi.py)
OPERATOR = {"metrics"}   # a bearer token or a staff login; 401 otherwise (Prometheus cannot log in)
SAMPLE_ARGS = {"int": "1", "str": "2026-W47", "path": "x", "slug": "x"}


def all_routes(resolver=None, prefix=""):
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from all_routes(entry, route)
        elif isinstance(entry, URLPattern):
            yield entry.name, route


def concrete(route: str) -> str:
    route = re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE_ARGS.get(m.group(1) or "str", "1"), route)
    return "/" + route.lstrip("^").rstrip("$").replace("\\Z", "")


ROUTES = [(name, concrete(route)) for name, route in all_routes()
          if name not in PUBLIC and not route.startswith("admin/") and "(?P" not in route]


def test_routes_were_found():
    names = {name for name, _ in ROUTES}
    assert {"queue", "signature-detail", "job-detail", "job-log", "search", "api-jobs", "api-similar",
            "analytics", "weekly-report"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize("name, url", ROUTES)
def test_anonymous_requests_are_refused(client, name, url):
    for method in (client.get, client.post):
        response = method(url)
        if url.startswith("/api/") or name in OPERATOR:
            assert response.status_code in (401, 405), (name, url, response.status_code)
        else:
            assert response.status_code in (302, 405), (name, url, response.status_code)
            if response.status_code == 302:
                assert response["Location"].startswith("/accounts/login/"), (name, url)


@pytest.mark.django_db
def test_every_form_post_needs_a_csrf_token(django_user_model):
    """A logged-in session cannot be ridden: every POST without the CSRF token is refused before the
    view runs. /api/v1/jobs is exempt on purpose: it authenticates with a token header, not a cookie."""
    from django.test import Client
    user = django_user_model.objects.create_superuser("root", password="x")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    refused = []
    for name, url in ROUTES:
        if name in ("api-jobs", "api-job"):  # token only: a session is not even accepted
            assert browser.post(url, {}).status_code == 401, name
            continue
        response = browser.post(url, {"category": "gpu_oom", "state": "ignored"})
        assert response.status_code == 403, (name, url, response.status_code)
        refused.append(name)
    assert {"judge", "set-state", "fixed-by", "override", "bulk-confirm", "api-similar"} <= set(refused)
    # The 403s above come from the CSRF check, not from permissions: without it the same POST gets through.
    unchecked = Client()
    unchecked.force_login(user)
    assert unchecked.post("/signatures/confirm", {}).status_code != 403


# ---------------------------------------------------------------- production settings and secrets
REPO = Path(__file__).resolve().parents[2]


def manage(*args, env_overrides):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")} | {"JOBTRIAGE_ENV_FILE": ""} | env_overrides
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)


def test_deploy_check_is_clean_with_production_settings():
    production = {"DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
                  "DJANGO_ALLOWED_HOSTS": "jobtriage.example.org"}
    result = manage("check", "--deploy", "--fail-level", "WARNING", env_overrides=production)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout


def test_development_needs_only_debug_and_production_refuses_to_start_without_a_secret():
    assert manage("check", env_overrides={"DJANGO_DEBUG": "1"}).returncode == 0  # what the README commands set
    for unsafe in ({}, {"DJANGO_DEBUG": "0"}):   # DEBUG is off unless asked for, and then a secret is required
        missing = manage("check", env_overrides=unsafe)
        assert missing.returncode != 0 and "DJANGO_SECRET_KEY must be set" in missing.stderr
    development = manage("check", "--deploy", env_overrides={"DJANGO_DEBUG": "1"})
    assert "security.W018" in development.stdout + development.stderr  # the check itself does flag DEBUG


# High-confidence shapes of real credentials; generic "password = ..." is too noisy in logs and tests.
SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----"),
    "AWS access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "OpenAI-style key": re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9]{32,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "jobtriage ingestion token": re.compile(r"\bjt_[A-Za-z0-9_-]{43}\b"),
    "Django startproject key": re.compile(r"django-insecure-[^\s'\"]{20,}"),
}
SECRET_FILE_NAMES = re.compile(r"(^|/)(\.env(\..+)?|id_rsa|id_ed25519|.*\.pem|.*\.key|.*\.p12|.*\.sqlite3)$")


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def test_no_secrets_are_committed():
    files = tracked_files()
    assert len(files) > 100  # really looked at the repository
    found = [name for name in files if SECRET_FILE_NAMES.search(name)]
    for name in files:
        path = REPO / name
        if not path.is_file() or path.stat().st_size > 20_000_000:
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        found += [f"{name}: {what}" for what, pattern in SECRET_PATTERNS.items() if pattern.search(text)]
    assert found == []


def test_secret_patterns_catch_real_shapes():
    """The scan above would see a committed credential (fabricated examples of each shape)."""
    samples = {"private key": "-----BEGIN OPENSSH " + "PRIVATE KEY-----", "AWS access key": "AKIA" + "ABCDEFGHIJKLMNOP",
               "jobtriage ingestion token": "jt_" + "a" * 43, "Django startproject key": "django-insecure-" + "x" * 40}
    for what, sample in samples.items():
        assert SECRET_PATTERNS[what].search(f"KEY = '{sample}'"), what
    assert SECRET_FILE_NAMES.search("deploy/.env") and SECRET_FILE_NAMES.search("certs/server.key")
    assert not SECRET_FILE_NAMES.search("docs/environment.md")
