from datetime import datetime, timezone

import pytest

from jobs_ingest.jobspec import JobSpecError, looks_binary, parse_job

BASE = {"platform": "slurm", "external_id": 812345, "status": "FAILED"}


def test_minimal_job_and_normalised_values():
    spec = parse_job({**BASE, "gpus": "8", "started_at": "2026-11-16T08:00:00Z", "ended_at": "2026-11-16T09:00:00"})
    assert spec.external_id == "812345" and spec.status == "failed" and spec.gpus == 8
    assert spec.ended_at == datetime(2026, 11, 16, 9, tzinfo=timezone.utc)  # naive times are UTC
    assert spec.failed
    # No attempt list: the job's own times are its single attempt.
    assert len(spec.attempts) == 1 and spec.attempts[0].gpus == 8


def test_attempts_inherit_the_job_gpus_and_unknown_fields_are_kept():
    spec = parse_job({**BASE, "gpus": 4, "queue": "a100", "attempts": [
        {"started_at": 1763280000, "ended_at": 1763283600}, {"started_at": 1763290000, "ended_at": 1763293600, "gpus": 2}]})
    assert [a.gpus for a in spec.attempts] == [4, 2]
    assert [a.number for a in spec.attempts] == [1, 2]
    assert spec.extra == {"queue": "a100"}


@pytest.mark.parametrize("data, field", [
    ({}, "platform"),
    ({**BASE, "external_id": ""}, "external_id"),
    ({**BASE, "gpus": -1}, "gpus"),
    ({**BASE, "gpus": True}, "gpus"),
    ({**BASE, "exit_code": 1.5}, "exit_code"),
    ({**BASE, "started_at": "2026-13-45"}, "started_at"),
    ({**BASE, "started_at": "2026-11-16T09:00:00Z", "ended_at": "2026-11-16T08:00:00Z"}, "ended_at"),
    ({**BASE, "name": "x" * 300}, "name"),
    ({**BASE, "name": {"a": 1}}, "name"),
    ({**BASE, "submitter": "a\x00b"}, "submitter"),
    ({**BASE, "attempts": "twice"}, "attempts"),
    ({**BASE, "attempts": [{"gpus": "many"}]}, "attempts[0]"),
    ({**BASE, "platform": "../etc"}, "platform"),
])
def test_each_bad_field_is_named(data, field):
    with pytest.raises(JobSpecError) as raised:
        parse_job(data)
    assert field in raised.value.fields


def test_all_bad_fields_are_reported_at_once():
    with pytest.raises(JobSpecError) as raised:
        parse_job({"gpus": "x"})
    assert set(raised.value.fields) == {"platform", "external_id", "status", "gpus"}


def test_not_an_object():
    with pytest.raises(JobSpecError):
        parse_job(["platform"])


def test_binary_detection_accepts_text_with_bad_utf8_and_colours():
    assert looks_binary(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    assert looks_binary(b"\x00" * 100)
    assert not looks_binary("epoch 1 \x1b[32mloss\x1b[0m 0.5 caf\xe9\n".encode("latin-1") * 50)
    assert not looks_binary(b"")


def test_a_recorded_workload_moves_by_whole_days_to_a_day_or_two_before_now():
    from datetime import datetime, timezone

    from jobs_ingest.jobspec import shifted_to
    records = [{"external_id": "a", "submitted_at": "2026-11-01T07:00:00+00:00", "ended_at": "2026-11-02T09:30:00Z",
                "attempts": [{"started_at": "2026-11-02T08:00:00Z", "ended_at": "2026-11-02T09:30:00Z"}]},
               {"external_id": "b", "started_at": 1793606400, "ended_at": "not a time"}, "not a record"]
    now = datetime(2026, 11, 29, 4, 0, tzinfo=timezone.utc)
    moved, days = shifted_to(records, now)
    assert days == 25 and moved[2] == "not a record" and moved[1]["ended_at"] == "not a time"
    assert moved[0]["ended_at"] == "2026-11-27T09:30:00+00:00" and moved[0]["attempts"][0]["started_at"] == (
        "2026-11-27T08:00:00+00:00")
    assert moved[1]["started_at"] == "2026-11-27T08:00:00+00:00"        # a Unix time moves too
    assert records[0]["ended_at"] == "2026-11-02T09:30:00Z"            # the caller's records are not changed
    assert shifted_to(moved, now) == (moved, 0)                        # already recent: nothing moves
