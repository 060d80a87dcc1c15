"""The pure decisions of alerting: windows, spikes, backoff, payload, which subscription wants what."""
from datetime import datetime, timezone
from types import SimpleNamespace

from triage.alerts import Trigger, backoff_seconds, slack_payload, spike_ratio, subscription_matches, window_start

UTC = timezone.utc


def test_windows_are_fixed_and_aligned():
    assert window_start(datetime(2026, 11, 24, 18, 40, tzinfo=UTC), 24) == datetime(2026, 11, 24, tzinfo=UTC)
    assert window_start(datetime(2026, 11, 24, 23, 59, tzinfo=UTC), 24) == datetime(2026, 11, 24, tzinfo=UTC)
    assert window_start(datetime(2026, 11, 24, 18, 40, tzinfo=UTC), 6) == datetime(2026, 11, 24, 18, tzinfo=UTC)
    assert window_start(datetime(2026, 11, 24, 17, 59, tzinfo=UTC), 6) == datetime(2026, 11, 24, 12, tzinfo=UTC)


def test_spike_ratio_against_the_week_before():
    assert spike_ratio(10, 167) == 10.0           # one per hour usually, ten in the last hour
    assert spike_ratio(3, 0) == 3 * 167           # a quiet signature: floor of one per week, finite
    assert spike_ratio(0, 500) == 0


def test_backoff_doubles_and_is_capped():
    assert [backoff_seconds(n, 30) for n in (1, 2, 3, 4)] == [30, 60, 120, 240]
    assert backoff_seconds(20, 30) == 3600


def test_payload_is_slack_compatible_with_structured_facts():
    trigger = Trigger("spike", "signature:7:spike", "Spike x12: OOM", "12 failures", "https://jt/signatures/7/",
                      ("nlp",), 3.14159, 12.0, {"signature": 7})
    body = slack_payload(trigger)
    assert body["text"] == "Spike x12: OOM\nhttps://jt/signatures/7/"
    assert body["blocks"][0]["text"]["text"].startswith("*<https://jt/signatures/7/|Spike x12: OOM>*")
    assert body["jobtriage"] == {"kind": "spike", "key": "signature:7:spike", "url": "https://jt/signatures/7/",
                                 "teams": ["nlp"], "gpu_hours": 3.14, "signature": 7}


def sub(kind, team=None, **fields):
    defaults = dict(active=True, kind=kind, team_id=1 if team else None, team=SimpleNamespace(name=team),
                    min_gpu_hours=10, spike_factor=5)
    return SimpleNamespace(**{**defaults, **fields})


def test_subscriptions_match_kind_team_and_thresholds():
    big = Trigger("new_signature", "signature:1", "t", "x", "u", ("nlp",), gpu_hours=12)
    small = Trigger("new_signature", "signature:2", "t", "x", "u", ("nlp",), gpu_hours=2)
    assert subscription_matches(sub("new_signature"), big)
    assert not subscription_matches(sub("new_signature"), small)
    assert subscription_matches(sub("new_signature", min_gpu_hours=1), small)
    assert subscription_matches(sub("new_signature", "nlp"), big)
    assert not subscription_matches(sub("new_signature", "vision"), big)     # another team's failure
    assert not subscription_matches(sub("regressed"), big)                   # another kind
    assert not subscription_matches(sub("new_signature", active=False), big)
    spike = Trigger("spike", "k", "t", "x", "u", ("nlp",), ratio=4)
    assert not subscription_matches(sub("spike"), spike) and subscription_matches(sub("spike", spike_factor=3), spike)
    node = Trigger("suspect_node", "node:gpu-07", "t", "x", "u", ())
    assert subscription_matches(sub("suspect_node", "vision"), node)          # platform-wide: every team hears
