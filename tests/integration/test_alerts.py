"""Alerts end to end on the real servers: failures ingested through the real services, the check and the
deliveries run by a real Celery worker on Redis, emails received by a real SMTP server (aiosmtpd) and
webhooks by a real HTTP server on loopback. Also who may subscribe to what."""
import json
import re
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse
from django.utils import timezone

from triage import alerts, services
from triage.models import AlertDelivery, AlertSubscription, SignatureTriage, Team
from triage.roles import ENGINEERS

from .conftest import wait_for
from .test_reports import smtp_sink  # noqa: F401  (the real SMTP server fixture)
from .test_triage import make_job


def recent(hours_ago: float) -> dict:
    end = timezone.now() - timedelta(hours=hours_ago)
    return {"started_at": (end - timedelta(hours=1)).isoformat(), "ended_at": end.isoformat()}


class Webhook:
    """A real HTTP server on loopback that answers the first `failures` posts with 500."""
    def __init__(self, failures=0):
        self.posts, self.failures = [], failures
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.posts.append(json.loads(body))
                status = 500 if len(outer.posts) <= outer.failures else 200
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"boom")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


@pytest.fixture
def webhook():
    hooks = []

    def make(failures=0):
        hooks.append(Webhook(failures))
        return hooks[-1]
    yield make
    for hook in hooks:
        hook.close()


@pytest.fixture
def fast_retries(settings):
    settings.JOBTRIAGE_ALERT_RETRY_BASE_SECONDS = 0
    settings.JOBTRIAGE_ALERT_MAX_ATTEMPTS = 3


def engineer(name, *teams, **fields):
    user = User.objects.create_user(name, email=f"{name}@example.com", password="pw", **fields)
    user.groups.add(Group.objects.get(name=ENGINEERS))
    for team in teams:
        Team.objects.get_or_create(name=team)[0].members.add(user)
    return user


def test_new_signature_alert_is_emailed_once_through_a_real_smtp_server(celery_worker, smtp_sink):
    erin = engineer("erin", "nlp")
    AlertSubscription.objects.create(kind="new_signature", user=erin, min_gpu_hours=1)
    AlertSubscription.objects.create(kind="new_signature", team=Team.objects.get(name="nlp"), min_gpu_hours=100)

    make_job("a1", **recent(2))  # 8 GPUs x 1 h: above 1 GPU h, below 100
    make_job("a2", **recent(1.5))  # same signature again: no second alert

    delivery = wait_for(lambda: AlertDelivery.objects.filter(state="sent").first(), what="the alert sent")
    wait_for(lambda: smtp_sink.messages, what="the email")
    assert AlertDelivery.objects.count() == 1 and delivery.subscription.user == erin
    to, message = smtp_sink.messages[0]
    assert to == ["erin@example.com"]
    # a2 may be analysed in a2's own batch or in a1's: the alert tells the cost seen when it fired
    assert re.match(r"\[jobtriage\] New failure signature, (8|16)\.0 GPU h: OutOfMemoryError", message["Subject"])
    assert f"https://jobtriage.example/signatures/{delivery.payload['jobtriage']['signature']}/" in message.get_content()


def test_webhook_is_retried_with_backoff_until_it_answers(celery_worker, webhook, fast_retries):
    hook = webhook(failures=2)
    admin = engineer("ada", is_staff=True)
    AlertSubscription.objects.create(kind="new_signature", user=admin, min_gpu_hours=0, email=False,
                                     webhook_url=hook.url)
    make_job("w1", **recent(1.5))

    delivery = wait_for(lambda: AlertDelivery.objects.filter(state="sent").first(), what="the webhook delivered")
    assert delivery.attempts == 3 and delivery.last_error == "" and len(hook.posts) == 3
    assert hook.posts[-1]["text"].startswith("New failure signature") and hook.posts[-1]["blocks"]
    assert hook.posts[-1]["jobtriage"]["kind"] == "new_signature"


def test_a_webhook_that_keeps_failing_is_given_up_and_logged(celery_worker, webhook, fast_retries, client):
    hook = webhook(failures=99)
    admin = engineer("ada", is_staff=True)
    AlertSubscription.objects.create(kind="new_signature", user=admin, min_gpu_hours=0, email=False,
                                     webhook_url=hook.url)
    make_job("w2", **recent(1.5))

    delivery = wait_for(lambda: AlertDelivery.objects.filter(state="failed").first(), what="the delivery given up")
    assert delivery.attempts == 3 and "HTTP 500" in delivery.last_error and len(hook.posts) == 3
    client.force_login(admin)
    log = client.get(reverse("alert-deliveries")).content.decode()
    assert "Failed (gave up)" in log and "webhook answered HTTP 500" in log


def test_regression_and_spike_alerts(celery_worker, webhook):
    hook = webhook()
    admin = engineer("ada", is_staff=True)
    for kind in ("regressed", "spike"):
        AlertSubscription.objects.create(kind=kind, user=admin, email=False, webhook_url=hook.url, spike_factor=5)
    first = make_job("r1", **recent(48))
    signature = first.failure.signature
    services.judge(signature, admin, category="gpu_oom", fix_description="smaller batch")  # resolved
    SignatureTriage.objects.filter(pk=signature.pk).update(resolved_at=timezone.now() - timedelta(hours=3))

    for n in range(3):  # three failures in the last hour, one in the week before: a spike, and a regression
        make_job(f"r{n + 2}", **recent(0.5))
    assert SignatureTriage.objects.get(pk=signature.pk).state == "regressed"
    wait_for(lambda: {d.kind for d in AlertDelivery.objects.filter(state="sent")} == {"regressed", "spike"},
             what="both alerts")
    assert SignatureTriage.objects.get(pk=signature.pk).state == "regressed"
    assert AlertDelivery.objects.filter(kind="regressed").count() == 1  # one regression, one alert
    assert AlertDelivery.objects.filter(kind="spike").count() == 1      # one per window
    kinds = sorted(p["jobtriage"]["kind"] for p in hook.posts)
    assert kinds == ["regressed", "spike"]


def test_team_scope_and_suspect_nodes(db, smtp_sink):
    nlp_member, vision_member = engineer("nina", "nlp"), engineer("vic", "vision")
    AlertSubscription.objects.create(kind="new_signature", user=vision_member, team=Team.objects.get(name="vision"),
                                     min_gpu_hours=0)
    AlertSubscription.objects.create(kind="suspect_node", team=Team.objects.get(name="nlp"))
    job = make_job("s1", **recent(1.5))  # team nlp
    assert alerts.fan_out(alerts.signature_triggers([job.failure.signature_id])) == []  # not vision's failure

    alerts.on_node_marked_suspect(None, host="gpu-node-07", failures=3, jobs=2, window=timedelta(hours=24))
    alerts.on_node_marked_suspect(None, host="gpu-node-07", failures=4, jobs=3, window=timedelta(hours=24))
    delivery = AlertDelivery.objects.get()  # deduplicated within the window
    assert (delivery.kind, delivery.key, delivery.target) == ("suspect_node", "node:gpu-node-07", "nina@example.com")
    assert alerts.attempt(delivery.pk) == ("sent", None)
    assert alerts.attempt(delivery.pk) == ("sent", None)  # a redelivered task sends nothing twice
    assert len(smtp_sink.messages) == 1 and "gpu-node-07" in smtp_sink.messages[0][1]["Subject"]


# ------------------------------------------------------------------ who may subscribe to what

def test_alerts_pages_need_a_login(client, db):
    for url in (reverse("alerts"), reverse("alert-deliveries")):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_a_user_cannot_subscribe_another_team_nor_set_a_webhook(client, db):
    eve, _ = engineer("eve", "nlp"), engineer("vic", "vision")
    client.force_login(eve)
    vision = Team.objects.get(name="vision")
    response = client.post(reverse("alerts"), {"kind": "new_signature", "team": vision.pk, "for_team": "on",
                                                "min_gpu_hours": "1", "spike_factor": "5", "email": "on"})
    assert response.status_code == 400 and not AlertSubscription.objects.exists()
    assert "Select a valid choice" in response.content.decode()

    client.post(reverse("alerts"), {"kind": "spike", "min_gpu_hours": "1", "spike_factor": "5", "email": "on",
                                    "webhook_url": "http://169.254.169.254/latest/meta-data"})
    sub = AlertSubscription.objects.get()
    assert sub.user == eve and sub.webhook_url == ""  # only admins give webhooks: the field is ignored
    assert client.get(reverse("alert-deliveries")).status_code == 403


def test_a_form_error_keeps_what_was_typed(client, db):
    client.force_login(engineer("eve", "nlp"))
    response = client.post(reverse("alerts"), {"kind": "spike", "min_gpu_hours": "7", "spike_factor": "0.5",
                                                "email": "on"})
    page = response.content.decode()
    assert response.status_code == 400 and "A spike is at least 1x the weekly rate." in page
    assert 'value="0.5"' in page and 'value="7"' in page and not AlertSubscription.objects.exists()


def test_users_remove_only_their_own_subscriptions(client, db):
    eve, vic = engineer("eve", "nlp"), engineer("vic", "vision")
    theirs = AlertSubscription.objects.create(kind="spike", user=vic)
    team_sub = AlertSubscription.objects.create(kind="spike", team=Team.objects.get(name="nlp"))
    client.force_login(eve)
    assert client.post(reverse("alert-delete", args=[theirs.pk])).status_code == 404
    assert f'id="sub-{theirs.pk}"' not in client.get(reverse("alerts")).content.decode()
    assert client.post(reverse("alert-delete", args=[team_sub.pk])).status_code == 302  # her team's
    assert list(AlertSubscription.objects.all()) == [theirs]
