"""Issue #17, the triage workflow: forms that keep what was typed, fixed-by warnings, issue links,
owners, sparklines, comments. Real PostgreSQL; jobs ingested through the real services."""
import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from jobs_ingest.models import Signature
from triage.models import JudgmentEvent, SignatureTriage
from triage.roles import ENGINEERS, MANAGERS

from .test_triage import make_job, user_in

BAD_DIFF = "--- a/train.py\n+++ b/train.py\n@@ -1,2 +1,2 @@\n-batch = 64\n"


@pytest.fixture
def engineer(db):
    return user_in(ENGINEERS, "erin")


@pytest.fixture
def manager(db):
    return user_in(MANAGERS, "mona")


@pytest.fixture
def oom(db, log_dir):
    make_job("1", ended_at="2026-11-16T09:00:00Z")
    make_job("2", submitter="bob", log="oom-node3.log", ended_at="2026-11-16T10:00:00Z")
    return Signature.objects.get(failures__job__external_id="1")


# ------------------------------------------------------------------ defect 1: a form with an error

def test_invalid_diff_shows_the_form_again_with_everything_typed(client, engineer, oom):
    client.force_login(engineer)
    response = client.post(reverse("judge", args=[oom.pk]), {
        "category": "cpu_oom", "root_cause": "", "notes": "batch too large for 80 GB",
        "fix_description": "halve the batch", "fix_diff": BAD_DIFF})
    assert response.status_code == 400  # no redirect: the typed text is in this very page
    form = response.context["form"]
    assert form.errors["fix_diff"][0].startswith("Not a valid unified diff")
    page = response.content.decode()
    assert "batch too large for 80 GB" in page and "halve the batch" in page and "-batch = 64" in page
    assert '<option value="cpu_oom" selected>' in page
    # The error sits beside its field, inside the same block as the diff textarea.
    block = page[page.index('id="id_fix_diff"') - 600:page.index('id="id_fix_diff"')]
    assert "errorlist" in block
    assert not SignatureTriage.objects.filter(signature=oom).exists()
    assert not JudgmentEvent.objects.exists()


def test_invalid_override_shows_the_form_again(client, engineer, oom):
    client.force_login(engineer)
    job_id = oom.failures.first().job_id
    response = client.post(reverse("override", args=[job_id]), {"category": "no-such", "notes": "only node 7"})
    assert response.status_code == 400
    assert "category" in response.context["override_form"].errors
    assert "only node 7" in response.content.decode()


def test_unknown_fixed_by_job_shows_the_error_beside_the_field(client, engineer, oom):
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": "slurm:does-not-exist"})
    assert response.status_code == 400
    assert "No such job" in response.context["fixed_by_form"].errors["job"][0]
    assert 'value="slurm:does-not-exist"' in response.content.decode()


# ------------------------------------------------------------------ defect 2: fixed by a failed job

def test_candidates_are_successful_jobs_ended_after_the_failure(oom, log_dir):
    from triage import services
    early = make_job("10", log="success.log", status="succeeded", ended_at="2026-11-16T08:30:00Z")
    later = make_job("11", log="success.log", status="succeeded", ended_at="2026-11-17T08:00:00Z")
    failed_later = make_job("12", log="killed.log", status="failed", ended_at="2026-11-17T09:00:00Z")
    other_name = make_job("13", log="success.log", status="succeeded", name="gpt", ended_at="2026-11-17T09:00:00Z")
    ids = [job.pk for job, _ in services.fixed_by_candidates(oom)]
    assert later.pk in ids
    assert early.pk not in ids and failed_later.pk not in ids and other_name.pk not in ids


def test_linking_a_failed_job_warns_and_needs_a_confirmation(client, engineer, oom, log_dir):
    failed = make_job("12", log="killed.log", status="failed", ended_at="2026-11-17T09:00:00Z")
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": f"slurm:{failed.external_id}"})
    assert response.status_code == 200
    warnings = response.context["fixed_by_pending_warnings"]
    assert any("did not succeed" in w for w in warnings)
    assert not SignatureTriage.objects.filter(signature=oom, fixed_by__isnull=False).exists()
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": str(failed.pk), "confirm": "1"}, follow=True)
    assert SignatureTriage.objects.get(signature=oom).fixed_by_id == failed.pk
    page = response.content.decode()
    assert "did not succeed" in page  # the page keeps warning about the link


def test_linking_a_job_that_ended_before_the_failure_warns(client, engineer, oom, log_dir):
    early = make_job("10", log="success.log", status="succeeded", ended_at="2026-11-16T08:30:00Z")
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": str(early.pk)})
    assert any("before the latest failure" in w for w in response.context["fixed_by_pending_warnings"])


def test_linking_a_good_job_needs_no_confirmation(client, engineer, oom, log_dir):
    later = make_job("11", log="success.log", status="succeeded", ended_at="2026-11-17T08:00:00Z")
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": str(later.pk)})
    assert response.status_code == 302
    assert SignatureTriage.objects.get(signature=oom).fixed_by_id == later.pk


# ------------------------------------------------------------------ access to every new endpoint

WRITE_ROUTES = ["issue-link", "assign", "add-comment"]


@pytest.mark.parametrize("route", WRITE_ROUTES)
def test_new_endpoints_refuse_anonymous_and_readers(client, manager, oom, route):
    url = reverse(route, args=[oom.pk])
    response = client.post(url, {"issue_url": "https://bugs.example/1", "owner_user": "mona"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(manager)  # reads everything, may not triage
    assert client.post(url, {"issue_url": "https://bugs.example/1", "owner_user": "mona"}).status_code == 403
    assert client.get(url).status_code == 405
    triage = SignatureTriage.objects.filter(signature=oom).first()
    assert triage is None or (triage.issue_url == "" and triage.owner_user is None)


# ------------------------------------------------------------------ issue-tracker links

def test_issue_link_is_validated_shown_and_recorded(client, engineer, oom):
    client.force_login(engineer)
    url = reverse("issue-link", args=[oom.pk])
    response = client.post(url, {"issue_url": "javascript:alert(document.cookie)"})
    assert response.status_code == 400
    assert "only http:// and https://" in response.context["issue_form"].errors["issue_url"][0]
    assert 'href="javascript:' not in response.content.decode()
    assert client.post(url, {"issue_url": "https://github.com/org/ml/issues/42"}).status_code == 302
    page = client.get(reverse("signature-detail", args=[oom.pk])).content.decode()
    assert 'href="https://github.com/org/ml/issues/42"' in page
    assert JudgmentEvent.objects.filter(field="issue_url", new_value="https://github.com/org/ml/issues/42").exists()


def test_new_issue_button_uses_the_team_tracker_then_the_setting(client, engineer, oom, settings):
    from urllib.parse import parse_qs, urlsplit
    from triage.models import Team
    client.force_login(engineer)
    settings.JOBTRIAGE_ISSUE_TRACKER = ""
    assert client.get(reverse("signature-detail", args=[oom.pk])).context["new_issue_url"] == ""
    settings.JOBTRIAGE_ISSUE_TRACKER = "gitlab:https://gitlab.example.com/ml/train"
    url = client.get(reverse("signature-detail", args=[oom.pk])).context["new_issue_url"]
    assert url.startswith("https://gitlab.example.com/ml/train/-/issues/new?issue[title]=")
    Team.objects.create(name="nlp", issue_tracker="github:nlp-org/bert")
    url = client.get(reverse("signature-detail", args=[oom.pk])).context["new_issue_url"]
    parts = urlsplit(url)
    assert parts.path == "/nlp-org/bert/issues/new"
    query = parse_qs(parts.query)
    assert query["title"] == [" ".join(oom.masked_message.split())[:120]]
    latest = oom.failures.order_by("-pk").first()
    assert latest.failure_line.strip() in query["body"][0]
    assert f"/signatures/{oom.pk}/" in query["body"][0]


def test_issue_links_in_similar_hits_and_reports(engineer, oom):
    from types import SimpleNamespace
    from triage import services
    from triage.models import ClusterTriage
    from triage.views.search import with_judgments
    services.set_issue_url(oom, engineer, "https://jira.example/browse/ML-1")
    hit = SimpleNamespace(signature_id=str(oom.pk), count=0, gpu_hours=0, effective_category="gpu_oom")
    assert with_judgments([hit])[0]["issue_url"] == "https://jira.example/browse/ML-1"
    # Without a link of its own, a signature shows its cluster's.
    Signature.objects.filter(pk=oom.pk).update(cluster="c-oom")
    services.set_issue_url(oom, engineer, "")
    ClusterTriage.objects.create(cluster="c-oom", issue_url="https://jira.example/browse/ML-2")
    assert services.issue_urls([oom.pk]) == {oom.pk: "https://jira.example/browse/ML-2"}
    from triage.reports import _lines
    line, = _lines([{"signature_id": oom.pk, "n": 2, "gpu": 3600.0}])
    assert line.issue_url == "https://jira.example/browse/ML-2"


# ------------------------------------------------------------------ owners

def test_assign_to_a_person_or_a_team_and_filter_assigned_to_me(client, engineer, oom, log_dir):
    from triage.models import Team
    other = Signature.objects.get(failures__job=make_job("3", log="missing-data.log", team="vision"))
    team = Team.objects.create(name="nlp")
    client.force_login(engineer)
    response = client.post(reverse("assign", args=[oom.pk]), {"owner_user": "nobody-by-that-name"})
    assert response.status_code == 400 and "no active user" in response.context["assign_form"].errors["owner_user"][0]
    assert client.post(reverse("assign", args=[oom.pk]), {"me": "1"}).status_code == 302
    assert client.post(reverse("assign", args=[other.pk]), {"owner_team": team.pk}).status_code == 302
    assert SignatureTriage.objects.get(signature=oom).owner_user == engineer
    assert SignatureTriage.objects.get(signature=other).owner_team == team
    mine = client.get(reverse("queue"), {"owner": "me"})
    assert [r["signature"].pk for r in mine.context["rows"]] == [oom.pk]
    team.members.add(engineer)  # a team's signature is also "mine" for its members
    mine = client.get(reverse("queue"), {"owner": "me"})
    assert {r["signature"].pk for r in mine.context["rows"]} == {oom.pk, other.pk}
    assert JudgmentEvent.objects.filter(field="owner", new_value="erin").exists()


def test_automatic_assignment_by_the_failing_jobs_team(settings, db, log_dir):
    from triage.models import Team
    team = Team.objects.create(name="vision")
    settings.JOBTRIAGE_AUTO_ASSIGN_BY_TEAM = False
    first = Signature.objects.get(failures__job=make_job("3", log="missing-data.log", team="vision"))
    assert not SignatureTriage.objects.filter(signature=first, owner_team__isnull=False).exists()
    settings.JOBTRIAGE_AUTO_ASSIGN_BY_TEAM = True
    second = Signature.objects.get(failures__job=make_job("4", log="oom-node7.log", team="vision"))
    assert SignatureTriage.objects.get(signature=second).owner_team == team
    # A team not known here, or an owner someone chose, is left alone.
    third = Signature.objects.get(failures__job=make_job("5", log="killed.log", team="unknown-team"))
    assert not SignatureTriage.objects.filter(signature=third, owner_team__isnull=False).exists()


# ------------------------------------------------------------------ sparklines

def test_queue_rows_draw_failures_per_day_from_the_rollups(client, engineer, db, log_dir):
    from datetime import timedelta
    from django.utils import timezone
    from triage import sparklines
    today = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    for i, days_ago in enumerate([0, 0, 2, 20]):  # 20 days ago is outside the 14-day window
        when = today - timedelta(days=days_ago)
        make_job(f"s{i}", started_at=(when - timedelta(hours=1)).isoformat(), ended_at=when.isoformat())
    signature = Signature.objects.get()
    series = sparklines.daily_failures([signature.pk], today.date())[signature.pk]
    assert len(series) == 14 and series[-1] == 2 and series[-3] == 1 and sum(series) == 3
    client.force_login(engineer)
    page = client.get(reverse("queue")).content.decode()
    assert '<svg class="spark"' in page and "3 failures in the 14 days" in page
    assert f'points="{sparklines.points(series)}"' in page


# ------------------------------------------------------------------ comments and mentions

@pytest.fixture
def eager_tasks():
    from jobtriage.celery import app
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def test_comment_with_mentions_emails_each_mentioned_user_once(client, engineer, oom, settings, mailoutbox,
                                                                eager_tasks, django_capture_on_commit_callbacks):
    from triage.models import Comment
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    User.objects.create_user("bob", email="bob@example.com")
    User.objects.create_user("nomail")  # mentioned, but no address: nothing to send
    erin = engineer
    erin.email = "erin@example.com"
    erin.save()
    client.force_login(erin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("add-comment", args=[oom.pk]),
                               {"body": "@bob this is the batch size again; @nomail @erin @ghost"})
    assert response.status_code == 302 and "#comment-" in response["Location"]
    comment = Comment.objects.get()
    assert {u.username for u in comment.mentions.all()} == {"bob", "nomail", "erin"}
    assert [m.to for m in mailoutbox] == [["bob@example.com"]]  # not the author, not without address
    assert "erin mentioned you" in mailoutbox[0].subject
    assert f"/signatures/{oom.pk}/#comment-{comment.pk}" in mailoutbox[0].body
    assert comment.mentions_sent_at is not None
    from triage.comments import send_mentions
    assert send_mentions(comment.pk) == 0 and len(mailoutbox) == 1  # a redelivered task sends nothing again
    page = client.get(reverse("signature-detail", args=[oom.pk])).content.decode()
    assert '<strong class="mention">@bob</strong>' in page


def test_an_empty_comment_shows_the_form_again(client, engineer, oom):
    client.force_login(engineer)
    response = client.post(reverse("add-comment", args=[oom.pk]), {"body": "   "})
    assert response.status_code == 400 and "body" in response.context["comment_form"].errors


def test_mention_email_through_a_real_smtp_server_and_a_real_worker(client, celery_worker, settings, log_dir):
    """The whole path: the comment's POST, the Celery task on the real Redis broker and worker, Django's
    SMTP backend, and aiosmtpd listening on localhost."""
    from aiosmtpd.controller import Controller
    from .test_reports import free_port
    from .conftest import wait_for
    import email
    from email import policy

    received = []

    class Sink:
        async def handle_DATA(self, server, session, envelope):
            received.append((envelope.rcpt_tos, email.message_from_bytes(envelope.original_content,
                                                                         policy=policy.default)))
            return "250 OK"

    port = free_port()
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS = "127.0.0.1", port, False
        settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
        settings.JOBTRIAGE_BASE_URL = "https://jobtriage.example"
        make_job("1")
        signature = Signature.objects.get()
        User.objects.create_user("bob", email="bob@example.com")
        client.force_login(user_in(ENGINEERS, "erin"))
        assert client.post(reverse("add-comment", args=[signature.pk]), {"body": "@bob look at node 7"}).status_code == 302
        wait_for(lambda: received, timeout=20, what="the mention email at the SMTP server")
    finally:
        controller.stop()
    (rcpt, message), = received
    assert rcpt == ["bob@example.com"]
    assert message["Subject"].startswith("[jobtriage] erin mentioned you")
    assert f"https://jobtriage.example/signatures/{signature.pk}/#comment-" in message.get_content()


# ------------------------------------------------------------------ queue by cluster

@pytest.fixture
def clustered(oom, log_dir):
    """Two OOM signatures (different code) in one cluster, and a lone signature without a cluster (as one
    made before clusters, which migration 0012 has not reached)."""
    other = Signature.objects.get(failures__job=make_job("7", log="killed.log", team="vision"))
    lone = Signature.objects.get(failures__job=make_job("8", log="missing-data.log", team="speech", gpus=1))
    Signature.objects.filter(pk__in=[oom.pk, other.pk]).update(cluster="c-oom", cluster_message="OOM of <SIZE>")
    Signature.objects.filter(pk=lone.pk).update(cluster="", cluster_message="")
    return oom, other, lone


@pytest.mark.parametrize("route", ["cluster-judge", "cluster-issue", "cluster-assign", "cluster-split"])
def test_cluster_endpoints_refuse_anonymous_and_readers(client, manager, clustered, route):
    url = reverse(route, args=["c-oom"])
    data = {"category": "cpu_oom", "issue_url": "https://bugs.example/1", "me": "1"}
    assert client.post(url, data)["Location"].startswith("/accounts/login/")
    client.force_login(manager)
    assert client.post(url, data).status_code == 403
    from triage.models import ClusterTriage
    assert not ClusterTriage.objects.exists()


def test_cluster_view_groups_rows_and_keeps_the_switch_in_the_url(client, engineer, clustered):
    oom, other, lone = clustered
    client.force_login(engineer)
    response = client.get(reverse("queue"), {"view": "cluster", "state": "all"})
    rows = {c["key"]: c for c in response.context["clusters"]}
    assert set(rows) == {"c-oom", f"sig-{lone.pk}"}
    c = rows["c-oom"]
    oom.refresh_from_db(), other.refresh_from_db()
    assert c["signatures"] == 2 and c["failures"] == oom.failure_count + other.failure_count
    assert c["gpu_seconds"] == oom.gpu_seconds + other.gpu_seconds
    assert c["teams"] == sorted(set(oom.teams) | set(other.teams)) and "vision" in c["teams"]
    assert {r["signature"].pk for r in c["members"]} == {oom.pk, other.pk}
    page = response.content.decode()
    assert 'name="view" value="cluster"' in page  # the filters keep the view
    assert "?state=all" in page and 'id="view-signatures"' in page
    assert reverse("cluster-detail", args=["c-oom"]) in page


def test_a_cluster_judgment_applies_to_its_signatures_and_a_signature_can_override(client, engineer, clustered, log_dir):
    oom, other, lone = clustered
    client.force_login(engineer)
    # The second signature was judged on its own first: it keeps its judgment.
    assert client.post(reverse("judge", args=[other.pk]), {"category": "illegal_argument"}).status_code == 302
    response = client.post(reverse("cluster-judge", args=["c-oom"]),
                           {"category": "cpu_oom", "root_cause": "", "notes": "host RAM", "fix_description": ""},
                           follow=True)
    assert "applied to 1 signature; 1 with a judgment of their own kept it" in response.content.decode()
    t_oom, t_other = SignatureTriage.objects.get(signature=oom), SignatureTriage.objects.get(signature=other)
    assert (t_oom.category, t_oom.notes, t_oom.judged_on_cluster) == ("cpu_oom", "host RAM", True)
    assert (t_other.category, t_other.judged_on_cluster) == ("illegal_argument", False)
    assert not SignatureTriage.objects.filter(signature=lone).exists()
    # Judging the first signature itself overrides the cluster from then on.
    client.post(reverse("judge", args=[oom.pk]), {"category": "gpu_oom"})
    assert client.post(reverse("cluster-judge", args=["c-oom"]), {"category": "path_not_found"}).status_code == 302
    assert SignatureTriage.objects.get(signature=oom).category == "gpu_oom"
    # A new signature of the cluster takes the cluster's judgment at analysis.
    from triage.services import apply_cluster_judgment
    Signature.objects.filter(pk=lone.pk).update(cluster="c-oom")  # as the clustering would put a new one
    newcomer = Signature.objects.get(pk=lone.pk)
    apply_cluster_judgment(newcomer)
    assert SignatureTriage.objects.get(signature=newcomer).category == "path_not_found"


def test_invalid_cluster_judgment_keeps_what_was_typed(client, engineer, clustered):
    client.force_login(engineer)
    response = client.post(reverse("cluster-judge", args=["c-oom"]), {"category": "nope", "notes": "typed text"})
    assert response.status_code == 400 and "category" in response.context["form"].errors
    assert "typed text" in response.content.decode()


def test_cluster_owner_and_issue_link(client, engineer, clustered):
    oom, other, lone = clustered
    client.force_login(engineer)
    assert client.post(reverse("cluster-issue", args=["c-oom"]), {"issue_url": "ftp://x/1"}).status_code == 400
    client.post(reverse("cluster-issue", args=["c-oom"]), {"issue_url": "https://bugs.example/77"})
    client.post(reverse("cluster-assign", args=["c-oom"]), {"me": "1"})
    from triage import services
    assert services.issue_urls([oom.pk, other.pk]) == {oom.pk: "https://bugs.example/77", other.pk: "https://bugs.example/77"}
    mine = client.get(reverse("queue"), {"owner": "me", "state": "all"})
    assert {r["signature"].pk for r in mine.context["rows"]} == {oom.pk, other.pk}
    assert client.get(reverse("cluster-detail", args=["no-such"])).status_code == 404


# ------------------------------------------------------------------ merge and split

@pytest.mark.parametrize("route, args", [("merge-into", True), ("split", True), ("merge-selected", False)])
def test_regroup_endpoints_refuse_anonymous_and_readers(client, manager, oom, route, args):
    from jobs_ingest.models import GroupingRule
    url = reverse(route, args=[oom.pk] if args else [])
    data = {"other": str(oom.pk), "contains": "node", "signature": [str(oom.pk)]}
    assert client.post(url, data)["Location"].startswith("/accounts/login/")
    client.force_login(manager)
    assert client.post(url, data).status_code == 403
    assert not GroupingRule.objects.exists()


def test_merge_moves_past_failures_and_future_ones_follow(client, engineer, oom, log_dir):
    from jobs_ingest import failures as analysis
    from jobs_ingest.models import Failure, GroupingRule
    other = Signature.objects.get(failures__job=make_job("7", log="killed.log", team="vision"))
    client.force_login(engineer)
    response = client.post(reverse("merge-into", args=[oom.pk]), {"other": f"http://x/signatures/{other.pk}/",
                                                                  "note": "same OOM, other wrapper"})
    assert response.status_code == 302
    oom.refresh_from_db(), other.refresh_from_db()
    assert (oom.failure_count, other.failure_count) == (3, 0)
    assert "vision" in oom.teams
    from django.db.models import Sum
    from triage.models import DailySignatureRollup
    per_signature = dict(DailySignatureRollup.objects.values_list("signature_id").annotate(n=Sum("failures")))
    assert per_signature.get(oom.pk) == 3 and not per_signature.get(other.pk)  # the rollups moved too
    rule = GroupingRule.objects.get()
    assert (rule.kind, rule.fingerprint, rule.target_id, rule.created_by) == ("merge", other.fingerprint, oom.pk, engineer)
    # A future failure of the merged fingerprint, and a re-analysis, both follow the rule.
    later = make_job("8", log="killed.log")
    assert later.failure.signature_id == oom.pk and later.failure.grouping_rule_id == rule.pk
    analysis.analyse(later.pk)
    assert Failure.objects.get(job=later).signature_id == oom.pk
    # History on both signatures; the merged one leaves the queue.
    assert JudgmentEvent.objects.filter(signature=other, field="merged into").exists()
    assert JudgmentEvent.objects.filter(signature=oom, field="merged").exists()
    queue = client.get(reverse("queue"), {"state": "all"})
    assert other.pk not in {r["signature"].pk for r in queue.context["rows"]}
    page = client.get(reverse("signature-detail", args=[other.pk])).content.decode()
    assert "Merged into" in page


def test_split_moves_matching_failures_and_future_ones_follow(client, engineer, oom, log_dir):
    from jobs_ingest.models import Failure
    f1, f2 = oom.failures.order_by("pk")
    assert f1.failure_line != f2.failure_line or f1.message != f2.message
    # A text of the second failure only (the two OOM logs differ in what they allocate or where).
    text = next(w for w in (f2.failure_line + " " + f2.message).split() if w not in f1.failure_line + f1.message)
    client.force_login(engineer)
    response = client.post(reverse("split", args=[oom.pk]), {"contains": "no such text anywhere", "note": "x"})
    assert response.status_code == 400 and "no failure of this signature contains" in response.content.decode()
    assert 'value="no such text anywhere"' in response.content.decode()
    response = client.post(reverse("split", args=[oom.pk]), {"contains": text, "note": "node 3 is different"})
    assert response.status_code == 302
    new = Signature.objects.exclude(pk=oom.pk).get()
    assert Failure.objects.get(pk=f2.pk).signature_id == new.pk and Failure.objects.get(pk=f1.pk).signature_id == oom.pk
    oom.refresh_from_db(), new.refresh_from_db()
    assert (oom.failure_count, new.failure_count) == (1, 1)
    later = make_job("9", log="oom-node3.log")   # the same text as the failure split off
    assert later.failure.signature_id == new.pk
    again = make_job("10", log="oom-node7.log")  # the other one stays
    assert again.failure.signature_id == oom.pk
    assert JudgmentEvent.objects.filter(signature=oom, field="split off").exists()


def test_merge_selected_from_the_queue(client, engineer, oom, log_dir):
    other = Signature.objects.get(failures__job=make_job("7", log="killed.log"))
    client.force_login(engineer)
    response = client.post(reverse("merge-selected"), {"signature": [str(oom.pk), str(other.pk)]})
    assert response["Location"] == reverse("signature-detail", args=[oom.pk])  # the bigger one is kept
    assert Signature.objects.get(pk=other.pk).failure_count == 0
    assert client.post(reverse("merge-selected"), {"signature": [str(oom.pk)]}).status_code == 302


def test_the_job_page_shows_its_signatures_issue_link(client, engineer, oom):
    from triage import services
    services.set_issue_url(oom, engineer, "https://github.com/org/ml/issues/9")
    client.force_login(engineer)
    page = client.get(reverse("job-detail", args=[oom.failures.first().job_id])).content.decode()
    assert 'href="https://github.com/org/ml/issues/9"' in page


def test_split_an_over_merged_cluster_and_future_failures_keep_it(client, engineer, manager, clustered, log_dir):
    from jobs_ingest.models import GroupingRule
    oom, other, lone = clustered
    url = reverse("cluster-split", args=["c-oom"])
    client.force_login(manager)
    assert client.post(url, {"signature": [str(other.pk)]}).status_code == 403
    client.force_login(engineer)
    response = client.post(url, {"signature": [str(oom.pk), str(other.pk)], "note": "all"})
    assert response.status_code == 400 and "leave at least one" in response.content.decode()
    response = client.post(url, {"signature": [str(other.pk)], "note": "killed jobs are not OOMs"})
    assert response.status_code == 302
    other.refresh_from_db(), oom.refresh_from_db()
    assert oom.cluster == "c-oom" and other.cluster.startswith("split-")
    assert response["Location"] == reverse("cluster-detail", args=[other.cluster])
    rule = GroupingRule.objects.get(kind="cluster")
    assert (rule.target_id, rule.cluster, rule.created_by) == (other.pk, other.cluster, engineer)
    # Whatever the automatic clustering says later, the next failure of that signature keeps the split.
    Signature.objects.filter(pk=other.pk).update(cluster="c-oom")
    make_job("20", log="killed.log", team="vision")
    other.refresh_from_db()
    assert other.cluster == rule.cluster
    assert JudgmentEvent.objects.filter(signature=other, field="cluster", old_value="c-oom").exists()


def test_an_invalid_uploaded_diff_comes_back_as_text(client, engineer, oom):
    from django.core.files.uploadedfile import SimpleUploadedFile
    client.force_login(engineer)
    response = client.post(reverse("judge", args=[oom.pk]), {
        "category": "gpu_oom", "notes": "kept", "diff_file": SimpleUploadedFile("fix.diff", BAD_DIFF.encode())})
    assert response.status_code == 400 and "diff_file" in response.context["form"].errors
    page = response.content.decode()
    assert "-batch = 64" in page and "kept" in page
