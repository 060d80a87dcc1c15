"""Subscribing to alerts in the browser: a mistake is shown beside its field with the input kept, then the
subscription is made, listed and removed; an admin reads the delivery log."""
from django.contrib.auth.models import User

from triage.models import AlertDelivery, AlertSubscription, Team
from triage.roles import ENGINEERS


def test_engineer_subscribes_fixes_a_mistake_and_unsubscribes(logged_in_page, shot):
    page = logged_in_page(username="erin", groups=[ENGINEERS])
    Team.objects.create(name="nlp").members.add(page.user)
    page.click("nav >> text=Alerts")
    page.select_option("#id_kind", "spike")
    page.select_option("#id_team", label="nlp")
    page.fill("#id_spike_factor", "0.5")
    page.click("button:has-text('Subscribe')")
    assert page.inner_text("#spike_factor-error") == "A spike is at least 1x the weekly rate."
    assert page.input_value("#id_spike_factor") == "0.5" and page.input_value("#id_kind") == "spike"
    shot("error")

    page.fill("#id_spike_factor", "4")
    page.click("button:has-text('Subscribe')")
    row = page.locator("table.alerts tbody tr").first
    assert "Spike" in row.inner_text() and "≥ 4.0× weekly rate" in row.inner_text() and "nlp" in row.inner_text()
    shot("listed")
    assert AlertSubscription.objects.get().user.username == "erin"

    row.locator("button:has-text('Remove')").click()
    assert "No subscriptions yet." in page.inner_text("table.alerts")
    assert not AlertSubscription.objects.exists()
    assert page.locator("text=Delivery log").count() == 0  # admins only


def test_admin_reads_the_delivery_log(logged_in_page, shot):
    page = logged_in_page(username="ada", is_staff=True)
    sub = AlertSubscription.objects.create(kind="suspect_node", user=User.objects.get(username="ada"),
                                           email=False, webhook_url="https://hooks.example/x")
    AlertDelivery.objects.create(subscription=sub, kind="suspect_node", key="node:gpu-07", window="2026-11-24T00:00Z",
                                 channel="webhook", target=sub.webhook_url, subject="Suspect node gpu-07", body="",
                                 state="failed", attempts=6, last_error="webhook answered HTTP 503")
    page.goto("/alerts/")
    page.click("text=Delivery log")
    text = page.inner_text("table.deliveries")
    assert "Suspect node gpu-07" in text and "Failed (gave up)" in text and "HTTP 503" in text
    shot("log")
