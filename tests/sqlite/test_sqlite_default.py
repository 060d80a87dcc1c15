"""The zero-setup default is SQLite (no DATABASE_URL): migrations, analysis, judgments, the queue, the
failure pages, the analytics page and the weekly report must work there too. PostgreSQL-only parts (the
analytics rollups and percentile_cont) fall back to plain aggregation. Runs in a child process because
the test session itself is configured for PostgreSQL."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r'''
import io, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth.models import Group, User
from django.test import Client
from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job
from triage import services as judgments
from triage.roles import ENGINEERS, MANAGERS
job = services.receive_job(parse_job({"platform": "k8s", "external_id": "1", "status": "failed", "team": "vision",
                                      "gpus": 2, "started_at": "2026-11-17T08:00:00Z",
                                      "ended_at": "2026-11-18T10:00:00Z"}),
                           io.BytesIO(b"Traceback (most recent call last):\n  File \"t.py\", line 1\nKeyError: 'lr'\n")).job
failure = failures.analyse(job.pk)
assert failure.category == "key_not_found", failure.category
user = User.objects.create_user("lead", password="x")
user.groups.add(Group.objects.get(name=ENGINEERS), Group.objects.get(name=MANAGERS))
judgments.judge(failure.signature, user, category="illegal_argument")
client = Client()
client.force_login(user)
for url in ["/", "/analytics/", "/analytics/?since=2026-11-16&until=2026-11-20", "/reports/2026-W47/",
            "/reports/2026-W47/vision/", f"/jobs/{job.pk}/", f"/signatures/{failure.signature_id}/",
            "/?view=cluster&state=all"]:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    assert b"illegal" in response.content, url
assert b"KeyError: &lt;KEY&gt;" in client.get("/?view=cluster&state=all").content  # the cluster view groups on SQLite too
assert client.get("/nodes/").status_code == 200  # host lists are JSON arrays, matched in Python there
print("sqlite ok")
'''


def test_the_sqlite_default_works_end_to_end(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", DJANGO_SETTINGS_MODULE="jobtriage.settings",
               DJANGO_DEBUG="1", JOBTRIAGE_LOG_DIR=str(tmp_path / "logs"),
               # no broker or search server is needed to store, analyse and read: tasks are only queued
               CELERY_BROKER_URL="redis://127.0.0.1:1/0", ELASTICSEARCH_URL="http://127.0.0.1:1")
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and "sqlite ok" in result.stdout, result.stderr[-3000:]
