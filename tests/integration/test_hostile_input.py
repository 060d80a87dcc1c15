"""Hostile and bad input: each is refused with a clear error (and nothing stored changes) or handled
in bounded memory. Already covered elsewhere: PNG logs, invalid UTF-8 + NUL bytes + empty logs,
100,000-deep JSON bodies and oversized JSON bodies (test_api.py); fuzzing of the core
(tests/unit); 1 MB lines in the reader (test_logread.py, test_analyse.py); 100 MB logs through
ingest_dir (test_ingest_dir.py); HTML in job/signature/queue pages (test_triage.py)."""
import io
import json
import os
import time
import tracemalloc
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.urls import reverse

from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Job, Signature
from triage import services as triage_services
from triage.roles import ENGINEERS, MANAGERS

from .test_auth_required import ROUTES

TAIL = b"Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n" \
       b"KeyError: 'learning_rate'\n"
MiB = 1024 * 1024


def metadata(external_id="h-1", **extra):
    return {"platform": "slurm", "external_id": external_id, "status": "failed", "gpus": 1, **extra}


def upload(client, token, data: bytes, external_id="h-1"):
    log = io.BytesIO(data)
    log.name = "job.log"
    return client.post("/api/v1/jobs", data={"metadata": json.dumps(metadata(external_id)), "log": log},
                       HTTP_AUTHORIZATION=f"Token {token}")


# ---------------------------------------------------------------- a 1 GB log through the real HTTP server
def multipart_from_file(path: Path, meta: dict):
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{json.dumps(meta)}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"big.log\"\r\n"
            "Content-Type: text/plain\r\n\r\n").encode()
    end = f"\r\n--{boundary}--\r\n".encode()

    def body():
        yield head
        with open(path, "rb") as f:
            while chunk := f.read(4 * MiB):
                yield chunk
        yield end
    return body(), len(head) + path.stat().st_size + len(end), f"multipart/form-data; boundary={boundary}"


def test_a_1_gib_log_streams_through_the_api_and_is_analysed_in_bounded_memory(live_server, api_token, log_dir,
                                                                                tmp_path):
    """A sparse file (training output, a 1 GiB hole, the error at the end) is sent over real HTTP to
    the real server, stored, and analysed; Python's peak allocation stays far below the log's size."""
    big = tmp_path / "big.log"
    with open(big, "wb") as f:
        f.write(b"epoch 1 step 1 loss 0.9\n" * 40_000)
        f.truncate(1024 * MiB - len(TAIL) - 1)
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + TAIL)
    assert big.stat().st_size == 1024 * MiB
    body, length, content_type = multipart_from_file(big, metadata("big-1"))
    request = urllib.request.Request(f"{live_server.url}/api/v1/jobs", data=body, method="POST", headers={
        "Authorization": f"Token {api_token}", "Content-Type": content_type, "Content-Length": str(length)})

    started = time.monotonic()
    tracemalloc.start()
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            assert response.status == 202
            job_id = json.loads(response.read())["id"]
        failure = failures.analyse(job_id)  # what the worker runs
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    job = Job.objects.get(pk=job_id)
    assert job.log_bytes == 1024 * MiB
    assert (failure.exception_type, failure.category) == ("KeyError", "key_not_found")
    assert peak < 64 * MiB, f"peak Python allocation {peak / MiB:.0f} MiB for a 1 GiB log"
    assert time.monotonic() - started < 120


@pytest.mark.django_db
def test_a_log_above_the_size_limit_gets_413_and_leaves_nothing_behind(client, api_token, log_dir, settings):
    settings.JOBTRIAGE_MAX_LOG_BYTES = 64 * 1024
    response = upload(client, api_token, b"step 1 loss 0.5\n" * 10_000)

    assert response.status_code == 413
    assert "JOBTRIAGE_MAX_LOG_BYTES" in response.json()["error"]
    assert Job.objects.count() == 0
    assert not [p for p in Path(log_dir).rglob("*") if p.is_file()]  # the partial copy was removed


# ---------------------------------------------------------------- binary, encodings, long lines
@pytest.mark.django_db
@pytest.mark.parametrize("name, data", [
    ("ELF executable", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 32),
    ("gzip", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(range(255, -1, -1)) * 32),
    ("NUL bytes", b"\x00" * 10_000),
])
def test_binary_logs_are_refused_with_a_clear_error(client, api_token, log_dir, name, data):
    response = upload(client, api_token, data)
    assert response.status_code == 400, name
    assert "binary" in response.json()["error"]
    assert Job.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("name, data", [
    ("latin-1", "époque 1 terminée\nKeyError: 'taux_d_apprentissage_é'\n".encode("latin-1")),
    ("UTF-16 fragments and lone surrogates", b"loss \xed\xa0\x80 \xff\xfe\x00a\nKeyError: 'lr'\n"),
    ("a 1 MB line then the error", b"step " + b"x" * MiB + b"\n" + TAIL),
    ("a 300 KB line of the error itself", b"KeyError: '" + b"k" * 300_000 + b"'\n"),
    ("carriage-return progress bars", b"".join(b"\r%3d%%|" % n + b"#" * n for n in range(100)) + b"\n" + TAIL),
    ("ANSI colours", b"\x1b[31m" + TAIL.replace(b"\n", b"\x1b[0m\n")),
])
def test_odd_but_textual_logs_are_stored_and_analysed(client, api_token, log_dir, name, data):
    response = upload(client, api_token, data)
    assert response.status_code == 202, (name, response.content)
    failure = failures.analyse(response.json()["id"])

    assert failure.exception_type == "KeyError", name
    assert failure.category == "key_not_found"
    assert len(failure.failure_line) < 5000 and len(failure.excerpt) < 200_000  # long lines are cut
    assert "\x1b" not in failure.failure_line and "\x00" not in failure.excerpt


def test_a_1_mb_error_line_is_analysed_in_bounded_time(tmp_path):
    """Run in a child process: the bug this guards against is an endless loop."""
    import subprocess
    import sys
    log = tmp_path / "long-line.log"
    log.write_bytes(b"KeyError: '" + b"k" * MiB + b"'\n")
    code = ("import sys; from jobs_ingest.core import analyse_log; "
            "print(analyse_log(sys.argv[1]).category)")
    try:
        result = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=20,
                                cwd=Path(__file__).resolve().parents[2])
    except subprocess.TimeoutExpired:
        pytest.fail("analyse_log did not finish within 20 s on a 1 MiB line")
    assert result.stdout.strip() == "key_not_found", result.stderr


# ---------------------------------------------------------------- JSON
@pytest.mark.django_db
def test_deeply_nested_multipart_metadata_is_refused(client, api_token, log_dir):
    log = io.BytesIO(TAIL)
    log.name = "job.log"
    response = client.post("/api/v1/jobs", data={"metadata": "{\"a\":" * 100_000 + "1" + "}" * 100_000, "log": log},
                           HTTP_AUTHORIZATION=f"Token {api_token}")
    assert response.status_code == 400
    assert "metadata" in response.json()["fields"]
    assert Job.objects.count() == 0


@pytest.mark.django_db
def test_nested_extra_fields_are_bounded_and_the_job_page_renders(client, api_token, log_dir, django_user_model):
    nested = 1
    for _ in range(200):
        nested = {"n": nested}
    accepted = client.post("/api/v1/jobs", data=json.dumps({**metadata("deep"), "scheduler_state": nested}),
                           content_type="application/json", HTTP_AUTHORIZATION=f"Token {api_token}")
    too_big = client.post("/api/v1/jobs", data=json.dumps({**metadata("huge"), "blob": ["x" * 100] * 1000}),
                          content_type="application/json", HTTP_AUTHORIZATION=f"Token {api_token}")

    assert accepted.status_code == 202, accepted.content
    assert too_big.status_code == 400 and too_big.json()["fields"]
    assert list(Job.objects.values_list("external_id", flat=True)) == ["deep"]
    client.force_login(django_user_model.objects.create_user("reader", password="x"))
    assert client.get(reverse("job-detail", args=[accepted.json()["id"]])).status_code == 200


# ---------------------------------------------------------------- manifests
@pytest.mark.django_db
def test_an_oversized_manifest_line_is_reported_and_the_others_ingested(tmp_path, log_dir, capsys):
    (tmp_path / "a.log").write_bytes(TAIL)
    lines = [json.dumps({**metadata("m-1"), "log": "a.log"}),
             json.dumps({**metadata("m-2"), "log": "a.log", "notes": "x" * (2 * MiB)}),
             "{" * 200_000,
             json.dumps({**metadata("m-3"), "log": "a.log"})]
    (tmp_path / "manifest.jsonl").write_text("\n".join(lines) + "\n")

    with pytest.raises(CommandError):
        call_command("ingest_dir", str(tmp_path))

    err = capsys.readouterr().err
    assert "manifest.jsonl:2" in err and "longer than" in err
    assert "manifest.jsonl:3" in err
    assert sorted(Job.objects.values_list("external_id", flat=True)) == ["m-1", "m-3"]


@pytest.mark.django_db
def test_a_huge_manifest_line_is_refused_in_bounded_memory(tmp_path, log_dir):
    (tmp_path / "a.log").write_bytes(TAIL)
    with open(tmp_path / "manifest.jsonl", "wb") as f:
        f.write(json.dumps({**metadata("ok"), "log": "a.log"}).encode() + b"\n")
        f.write(b"[" + b"1," * (32 * MiB) + b"1]\n")
    tracemalloc.start()
    try:
        with pytest.raises(CommandError):
            call_command("ingest_dir", str(tmp_path), stderr=io.StringIO(), stdout=io.StringIO())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert Job.objects.filter(external_id="ok").exists()
    assert peak < 16 * MiB, f"peak {peak / MiB:.0f} MiB to skip one 64 MB manifest line"


# ---------------------------------------------------------------- HTML and script on every page
PAYLOAD = "<script>alert('x')</script>"
# Team names end up in URL paths (a "/" in one is tested below).
TEAM_PAYLOAD = "<img src=x onerror=alert('team')>"


@pytest.fixture
def hostile_failure(transactional_db, log_dir, es):
    """One job whose every free-text field, log line, note and diff carries a script tag, indexed
    in Elasticsearch so that the search pages find it."""
    user = User.objects.create_user("erin", password="x")
    user.groups.add(Group.objects.get(name=ENGINEERS))
    data = {"platform": "k8s", "external_id": PAYLOAD, "status": "failed", "name": PAYLOAD, "submitter": PAYLOAD,
            "team": TEAM_PAYLOAD, "command": PAYLOAD, "image": PAYLOAD, "code_version": PAYLOAD,
            "ended_at": "2026-11-18T10:00:00Z", "gpus": 2}
    log = f"{PAYLOAD}\nTraceback (most recent call last):\n  File \"{PAYLOAD}.py\", line 1, in <module>\n" \
          f"KeyError: '{PAYLOAD}'\n"
    job = services.receive_job(parse_job(data), io.BytesIO(log.encode())).job
    failure = failures.analyse(job.pk, index_now=True)
    triage_services.judge(failure.signature, user, notes=PAYLOAD, fix_description=PAYLOAD,
                          fix_diff=f"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-{PAYLOAD}\n+ok\n")
    return user, job, failure


def page_urls(job, failure):
    """Every page a person reads (the enumerated routes, with real ids), plus query strings that echo."""
    week = "2026-W47"
    urls = []
    for name, _ in ROUTES:
        if name.startswith("api-") or name in ("password_change_done",):
            continue
        try:
            if name.startswith("cluster"):
                url = reverse(name, args=[HOSTILE_CLUSTER])
            elif "signature" in name and name != "merge-selected" or name in (
                    "judge", "set-state", "fixed-by", "issue-link", "assign", "add-comment", "merge-into", "split"):
                url = reverse(name, args=[failure.signature_id])
            elif name.startswith("job") or name == "override":
                url = reverse(name, args=[job.pk])
            elif name == "weekly-report-team":
                url = reverse(name, args=[week, TEAM_PAYLOAD])
            elif name == "weekly-report":
                url = reverse(name, args=[week])
            elif name == "alert-delete":  # POST only: a GET must refuse, whatever the id
                url = reverse(name, args=[1])
            elif name == "node-detail":  # host names are validated: the node's history shows the hostile job
                url = reverse(name, args=[HOSTILE_NODE])
            else:
                url = reverse(name)
        except Exception:  # noqa: BLE001 - a route whose arguments we cannot guess is reported below
            urls.append((name, None))
            continue
        urls.append((name, url))
    q = urllib.parse.quote(PAYLOAD)
    urls += [("queue ?state=all", f"{reverse('queue')}?state=all&team={urllib.parse.quote(TEAM_PAYLOAD)}"),
             ("queue echo", f"{reverse('queue')}?q={q}&state={q}&category={q}"),
             ("search", f"{reverse('search')}?q={q}"), ("search KeyError", f"{reverse('search')}?q=KeyError"),
             ("analytics", f"{reverse('analytics')}?team={q}&platform={q}"),
             ("queue by cluster", f"{reverse('queue')}?view=cluster&state=all")]
    return urls


HOSTILE_CLUSTER = "c-hostile"
HOSTILE_NODE = "gpu-07"


def test_html_and_script_are_escaped_on_every_page(client, hostile_failure):
    user, job, failure = hostile_failure
    # A cluster whose message is the hostile text (the cluster page and the queue by cluster show it).
    Signature.objects.filter(pk=failure.signature_id).update(cluster=HOSTILE_CLUSTER, cluster_message=PAYLOAD)
    type(job).objects.filter(pk=job.pk).update(nodes=[HOSTILE_NODE])  # the Nodes pages list its failure
    client.force_login(user)
    rendered = []
    for name, url in page_urls(job, failure):
        assert url is not None, f"cannot build a URL for route {name}"
        response = client.get(url)
        # POST-only actions redirect or refuse GET; /metrics and the delivery log want staff: no page
        if response.status_code in (302, 401, 403, 405):
            continue
        raw = b"".join(response.streaming_content) if response.streaming else response.content
        body = raw.decode(errors="replace")
        if response["Content-Type"].startswith("text/plain"):
            # The raw log download is the log as sent, as plain text a browser must not sniff as HTML.
            assert response["X-Content-Type-Options"] == "nosniff", name
        else:
            assert PAYLOAD not in body and TEAM_PAYLOAD not in body, f"unescaped markup on {name} ({url})"
        assert response.status_code in (200, 404), (name, url, response.status_code)
        if response.status_code == 200:
            rendered.append(name)
    # The pages that show the hostile text really rendered it (escaped).
    for name in ("signature-detail", "job-detail", "queue ?state=all", "search KeyError", "cluster-detail",
                 "queue by cluster"):
        assert name in rendered, (name, rendered)
    for url in (reverse("job-detail", args=[job.pk]), reverse("signature-detail", args=[failure.signature_id])):
        assert "&lt;script&gt;" in client.get(url).content.decode()


def test_weekly_report_renders_with_a_slash_in_a_team_name(client, transactional_db, log_dir, django_user_model):
    data = {"platform": "k8s", "external_id": "slash", "status": "failed", "team": "ml/nlp",
            "ended_at": "2026-11-18T10:00:00Z"}
    job = services.receive_job(parse_job(data), io.BytesIO(TAIL)).job
    failures.analyse(job.pk)
    manager = django_user_model.objects.create_user("reader", password="x")
    manager.groups.add(Group.objects.get(name=MANAGERS))
    client.force_login(manager)
    page = client.get(reverse("weekly-report", args=["2026-W47"]))
    assert page.status_code == 200
    team_url = reverse("weekly-report-team", args=["2026-W47", "ml/nlp"])
    assert team_url.encode() in page.content
    team_page = client.get(team_url)
    assert team_page.status_code == 200 and team_page.context["report"].team == "ml/nlp"
