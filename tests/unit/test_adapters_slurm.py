"""Slurm adapter (pure): sacct --parsable2 and --json records -> job metadata accepted by parse_job."""
import json
from pathlib import Path

import pytest

from jobs_ingest.adapters import Adapted, Rejected, Skipped, slurm
from jobs_ingest.jobspec import parse_job

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "adapters" / "slurm"


def read(name, fmt="auto"):
    return list(slurm.read_sacct((FIXTURES / name).read_text(), fmt, slurm.LogIndex(FIXTURES / "logs")))


def by_id(items):
    return {i.metadata["external_id"]: i for i in items if isinstance(i, Adapted)}


@pytest.mark.parametrize("text, expected", [
    ("cpu=8,gres/gpu=4,mem=64G", 4),
    ("billing=32,cpu=32,gres/gpu:a100=4,gres/gpu=4,mem=256G,node=1", 4),   # untyped total wins
    ("cpu=32,gres/gpu:a100=4,gres/gpu:v100=2", 6),                        # typed only: summed
    ("cpu=8,mem=64G,node=1", None),
    ("", None),
])
def test_gpus_from_tres(text, expected):
    assert slurm.gpus_from_tres(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("1:0", (1, "")), ("0:9", (0, "9")), ("0:15", (0, "15")), ("0:125", (0, "")), ("", (None, "")),
])
def test_exit_code_return_and_signal(text, expected):
    assert slurm.parse_exit_code(text) == expected


def test_exit_code_garbage_is_named():
    with pytest.raises(slurm.SlurmRecordError, match="ExitCode 'x:y'"):
        slurm.parse_exit_code("x:y")


def test_cancelled_by_uid():
    assert slurm.parse_state("CANCELLED by 1042") == ("CANCELLED", "1042")


def test_parsable2_states_map_to_statuses():
    jobs = by_id(read("sacct-parsable2.txt", "parsable2"))
    assert {k: v.metadata["status"] for k, v in jobs.items()} == {
        "812345": "failed", "812346": "out_of_memory", "812400_3": "timeout", "812400_4": "completed",
        "812410": "cancelled", "812411": "node_fail", "812412": "preempted", "812415": "failed"}
    assert jobs["812410"].metadata["cancelled_by"] == "1042"


def test_parsable2_requeue_is_an_earlier_attempt_and_logs_are_joined_stderr_last():
    job = by_id(read("sacct-parsable2.txt"))["812345"]
    attempts = job.metadata["attempts"]
    assert [a["status"] for a in attempts] == ["requeued", "failed"]
    assert [a["started_at"] for a in attempts] == ["2026-11-16T07:00:03", "2026-11-16T08:00:00"]
    assert job.metadata["gpus"] == 8 and job.metadata["team"] == "nlp" and job.metadata["submitter"] == "alice"
    assert [p.name for p in job.logs] == ["slurm-812345.out", "bert-pretrain-812345.err"]
    spec = parse_job(job.metadata)
    assert len(spec.attempts) == 2 and spec.extra["nodes"] == "gpu-a100-07"


def test_array_task_is_its_own_job_with_its_log_and_raw_id():
    jobs = by_id(read("sacct-parsable2.txt"))
    task = jobs["812400_3"]
    assert task.metadata["slurm_job_id_raw"] == "812403"
    assert [p.name for p in task.logs] == ["slurm-812400_3.out"]
    assert jobs["812400_4"].logs == ()


def test_signal_9_and_typed_gres():
    jobs = by_id(read("sacct-parsable2.txt"))
    assert jobs["812415"].metadata["signal"] == "9" and jobs["812415"].metadata["exit_code"] == 0
    assert jobs["812346"].metadata["gpus"] == 4   # gres/gpu:a100=4 only
    assert "signal" not in jobs["812346"].metadata  # 0:125 is Slurm's OOM marker, not a signal


def test_steps_are_ignored_running_and_pending_skipped_bad_rows_named():
    items = read("sacct-parsable2.txt")
    skipped = [i for i in items if isinstance(i, Skipped)]
    rejected = {i.where: i.reason for i in items if isinstance(i, Rejected)}
    assert {s.where for s in skipped} == {"sacct line 11 (job 812413)", "sacct line 12 (job 812414_[5-9])"}
    assert rejected == {"sacct line 14": "has 9 fields, the header has 15",
                        "sacct line 15 (job 812417)": "time 'yesterday' is not YYYY-MM-DDTHH:MM:SS"}
    assert not any(k.endswith(".batch") for k in by_id(items))


def test_every_adapted_record_is_valid_job_metadata():
    for name in ("sacct-parsable2.txt", "sacct-23.11.json", "sacct-21.08.json"):
        for item in read(name):
            if isinstance(item, Adapted):
                parse_job(item.metadata)


def test_json_23_11_schema():
    items = read("sacct-23.11.json")
    jobs = by_id(items)
    task = jobs["913000_2"]
    assert task.metadata["status"] == "failed" and task.metadata["exit_code"] == 1
    assert task.metadata["started_at"] == "2026-11-17T08:00:00Z" and task.metadata["gpus"] == 1
    assert [p.name for p in task.logs] == ["slurm-913000_2.out"]
    oom = jobs["913010"]
    assert oom.metadata["status"] == "out_of_memory" and oom.metadata["gpus"] == 8   # gres gpu:h100
    assert oom.metadata["requeues_without_times"] == 2                               # restart_cnt without -D
    assert jobs["913011"].metadata["cancelled_by"] == "dave" and jobs["913011"].metadata["signal"] == "15"
    assert [i.where for i in items if isinstance(i, Skipped)] == ["jobs[3] (job 913012)"]
    assert [(i.where, i.reason) for i in items if isinstance(i, Rejected)] == [("jobs[4]", "has no job_id")]


def test_json_21_08_schema_plain_numbers_and_signal_id():
    jobs = by_id(read("sacct-21.08.json"))
    assert jobs["700101"].metadata["status"] == "timeout" and jobs["700101"].metadata["gpus"] == 4
    assert jobs["700102"].metadata["signal"] == "9" and jobs["700102"].metadata["status"] == "failed"


def test_json_duplicates_become_attempts():
    document = json.loads((FIXTURES / "sacct-21.08.json").read_text())
    first = json.loads(json.dumps(document["jobs"][0]))
    first["state"]["current"] = "NODE_FAIL"
    first["time"]["start"] -= 7200
    first["time"]["end"] = first["time"]["start"] + 3600
    document["jobs"].insert(0, first)
    jobs = by_id(slurm.read_sacct(json.dumps(document), "json"))
    assert [a["status"] for a in jobs["700101"].metadata["attempts"]] == ["node_fail", "timeout"]
    spec = parse_job(jobs["700101"].metadata)
    assert sum(a.gpus * (a.ended_at - a.started_at).total_seconds() for a in spec.attempts) == 4 * (3600 + 28800)


def test_invalid_json_and_missing_header_are_named():
    assert list(slurm.read_sacct("{not json", "json")) == [
        Rejected("sacct --json", "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)")]
    items = list(slurm.read_sacct("812345|FAILED|1:0\n", "parsable2"))
    assert len(items) == 1 and "header line" in items[0].reason


def test_auto_format_detection():
    text = (FIXTURES / "sacct-21.08.json").read_text()
    assert {i.metadata["external_id"] for i in slurm.read_sacct(text, "auto")} == {"700101", "700102"}


def test_epilog_hook_maps_scontrol_fields():
    """docs/platforms/jobtriage_epilog_slurmctld.py (the EpilogSlurmctld hook) on a real-shaped line."""
    import importlib.util
    path = Path(__file__).resolve().parent.parent.parent / "docs" / "platforms" / "jobtriage_epilog_slurmctld.py"
    spec = importlib.util.spec_from_file_location("jobtriage_epilog", path)
    epilog = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(epilog)
    fields = epilog.parse_scontrol(
        "JobId=812346 JobName=preprocess-wiki UserId=bob(1001) GroupId=bob(1001) Account=nlp QOS=normal "
        "JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null) Restarts=0 ExitCode=0:125 "
        "SubmitTime=2026-11-16T09:01:00 StartTime=2026-11-16T09:01:30 EndTime=2026-11-16T09:40:12 "
        "Partition=cpu-bigmem NodeList=gpu-a100-11 ReqTRES=cpu=32,mem=250G,node=1,billing=32,gres/gpu:a100=4 "
        "AllocTRES=cpu=32,mem=250G,node=1,billing=32,gres/gpu:a100=4 Command=/home/bob/prep.sbatch "
        "StdErr=/home/bob/slurm-812346.out StdOut=/home/bob/slurm-812346.out")
    job = epilog.build_job({"SLURM_JOB_ID": "812346", "SLURM_JOB_EXIT_CODE2": "0:0"}, fields)
    assert job["status"] == "out_of_memory" and job["gpus"] == 4 and job["command"] == "/home/bob/prep.sbatch"
    assert job["started_at"].startswith("2026-11-16T09:01:30") and "log_text" not in job   # no such file here
    parse_job(job)
    assert epilog.build_job({"SLURM_JOB_ID": "1", "SLURM_JOB_EXIT_CODE2": "0:0"}, {}) is None   # success
    assert epilog.build_job({"SLURM_JOB_ID": "1", "SLURM_JOB_EXIT_CODE2": "0:9"}, {})["signal"] == "9"


@pytest.mark.parametrize("text, expected", [
    ("gpu:4", 4), ("gpu:a100:4(IDX:0-3)", 4), ("gpu:2,craynetwork:1", 2), ("craynetwork:1", None), ("", None),
])
def test_gpus_from_the_older_gres_columns(text, expected):
    assert slurm.gpus_from_gres(text) == expected


def test_gres_column_when_there_is_no_tres():
    text = "JobID|State|ExitCode|Start|End|AllocGRES\n42|FAILED|1:0|2026-11-16T08:00:00|2026-11-16T09:00:00|gpu:v100:2\n"
    [job] = slurm.read_sacct(text, "parsable2")
    assert job.metadata["gpus"] == 2 and job.metadata["attempts"][0]["gpus"] == 2


def test_a_job_cancelled_while_pending_is_skipped():
    text = ("JobID|State|ExitCode|Submit|Start|End\n"
            "77|CANCELLED by 1001|0:0|2026-11-16T08:00:00|None|2026-11-16T08:05:00\n")
    [item] = slurm.read_sacct(text, "parsable2")
    assert isinstance(item, Skipped) and "cancelled before it started" in item.reason
