"""Philly trace adapter (pure): the streaming reader and the cluster_job_log -> job metadata mapping."""
import io
import json
import re
from pathlib import Path

import pytest

from jobs_ingest.adapters import Adapted, Rejected, philly
from jobs_ingest.jobspec import parse_job

TRACE = Path(__file__).resolve().parent.parent / "fixtures" / "adapters" / "philly" / "cluster_job_log"


def adapted():
    with open(TRACE, "rb") as stream:
        return list(philly.read_trace(stream))


def test_streaming_reader_gives_the_same_records_for_any_chunk_size():
    data = TRACE.read_bytes()
    whole = json.loads(data)
    for size in (1, 7, 64, 1 << 20):
        assert [v for _, _, v in philly.iter_records(io.BytesIO(data), chunk_size=size)] == whole


def test_a_broken_job_is_named_and_the_next_ones_still_read():
    data = TRACE.read_bytes().replace(b'"status": "Killed",\n        "vc": "b436b2"',
                                      b'"status": Killed,\n        "vc": "b436b2"')
    records = list(philly.iter_records(io.BytesIO(data), chunk_size=13))
    assert [i for i, _, v in records if isinstance(v, json.JSONDecodeError)] == [4]
    assert len(records) == 8


@pytest.mark.parametrize("data, message", [
    (b'{"jobs": []}', "does not start with '['"),
    (b'[{"jobid": "a"}, {"jobid": "b"', "the file ends inside job 1"),
    (b'[{"jobid": "a"}, ', "ends without ']'"),
    (b'[{"jobid": "a"} {"jobid": "b"}]', "expected ',' or ']'"),
])
def test_a_broken_list_stops_with_a_clear_error(data, message):
    with pytest.raises(philly.TraceFormatError, match=re.escape(message)):
        list(philly.iter_records(io.BytesIO(data)))


def test_empty_list():
    assert list(philly.iter_records(io.BytesIO(b" [ ] "))) == []


def test_statuses_gpus_and_attempts():
    jobs = {i.metadata["external_id"]: i.metadata for i in adapted() if isinstance(i, Adapted)}
    readme = jobs["application_1506638472019_14199"]          # the README's example entry
    assert readme["status"] == "passed" and readme["gpus"] == 8 and readme["team"] == "ee9e8c"
    assert [a["status"] for a in readme["attempts"]] == ["retried", "passed"]
    multi = jobs["application_1506638472019_900001"]
    assert [a["gpus"] for a in multi["attempts"]] == [8, 8]   # 4 + 4 on two servers, then 8 on one
    assert multi["nodes"] == ["m201", "m202", "m203"]
    assert jobs["application_1506638472019_15647"]["status"] == "killed"   # no attempts at all
    assert "attempts" not in jobs["application_1506638472019_15647"]


def test_none_times_keep_the_attempt_without_cost():
    job = {i.metadata["external_id"]: i.metadata for i in adapted() if isinstance(i, Adapted)}[
        "application_1506638472019_16565"]
    assert [(a["started_at"], a["ended_at"]) for a in job["attempts"]] == [
        ("2017-10-09T03:07:23", None), ("2017-10-09T03:11:14", "2017-10-09T03:11:57"),
        ("2017-10-09T03:14:24", None), (None, "2017-10-09T03:15:12")]
    spec = parse_job(job)
    costed = [a for a in spec.attempts if a.started_at and a.ended_at]
    assert sum(a.gpus * (a.ended_at - a.started_at).total_seconds() for a in costed) == 43


def test_bad_jobs_are_named():
    rejected = [(r.where, r.reason) for r in adapted() if isinstance(r, Rejected)]
    assert rejected == [
        ("job 6 (application_1506638472019_900004)", "status 'Running' is not Pass, Failed or Killed"),
        ("job 7 (application_1506638472019_900005)", "time '11/10/2017 02:00' is not 'YYYY-MM-DD HH:MM:SS'")]


def test_limit_stops_early_and_every_job_is_valid_metadata():
    with open(TRACE, "rb") as stream:
        first = list(philly.read_trace(stream, limit=2))
    assert len(first) == 2
    for item in adapted():
        if isinstance(item, Adapted):
            parse_job(item.metadata)
