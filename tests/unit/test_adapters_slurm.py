"""Slurm adapter (pure): sacct --parsable2 and --json records -> job metadata accepted by parse_job."""
import json
from pathlib import Path

import pytest

from jobs_ingest.adapters import Adapted, Rejected, Skipped, slurm, slurm_merge
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
    ("1:0", (1, "")), ("0:0", (0, "")),
    ("0:9", (None, "9")), ("0:15", (None, "15")),   # signalled: no exit code, as --json says it
    ("0:125", (None, "")), ("", (None, "")),         # 125 is Slurm's OOM marker, not a signal
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
    assert len(spec.attempts) == 2 and spec.nodes == ("gpu-a100-07",)


def test_array_task_is_its_own_job_with_its_log_and_raw_id():
    jobs = by_id(read("sacct-parsable2.txt"))
    task = jobs["812400_3"]
    assert task.metadata["slurm_job_id_raw"] == "812403"
    assert [p.name for p in task.logs] == ["slurm-812400_3.out"]
    assert jobs["812400_4"].logs == ()


def test_signal_9_and_typed_gres():
    jobs = by_id(read("sacct-parsable2.txt"))
    assert jobs["812415"].metadata["signal"] == "9" and "exit_code" not in jobs["812415"].metadata
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
    no_sacct = lambda job_id: None   # noqa: E731  (a controller without sacct: the documented fallback)
    job = epilog.build_job({"SLURM_JOB_ID": "812346", "SLURM_JOB_EXIT_CODE2": "0:0"}, fields, no_sacct)
    assert job["status"] == "out_of_memory" and job["gpus"] == 4 and job["command"] == "/home/bob/prep.sbatch"
    assert job["started_at"].startswith("2026-11-16T09:01:30") and "log_text" not in job   # no such file here
    parse_job(job)
    assert epilog.build_job({"SLURM_JOB_ID": "1", "SLURM_JOB_EXIT_CODE2": "0:0"}, {}, no_sacct) is None   # success
    killed = epilog.build_job({"SLURM_JOB_ID": "1", "SLURM_JOB_EXIT_CODE2": "0:9"}, {}, no_sacct)
    assert killed["signal"] == "9" and "exit_code" not in killed   # signalled: no exit code


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


# ---------------------------------------------------------------- real output of Slurm 22.05.8
# Captured from the single-node cluster of scripts/slurm.sh by `python -m tests.slurm.capture`
# (tests/fixtures/adapters/slurm/README.md): one job of each kind, ids in real-22.05/jobs.json.

REAL = FIXTURES / "real-22.05"
KINDS = {k: v["external_ids"] for k, v in json.loads((REAL / "jobs.json").read_text())["jobs"].items()}


def real(name):
    return list(slurm.read_sacct((REAL / name).read_text(), "auto", slurm.LogIndex(REAL / "logs")))


def kind(jobs, name, task=0):
    return jobs[KINDS[name][task]].metadata


def test_real_parsable2_every_way_a_job_ends():
    items = real("sacct-parsable2.txt")
    jobs = by_id(items)
    assert {k: kind(jobs, k)["status"] for k in ("train-fail", "exit3", "success", "killed", "memory", "steps",
                                                 "requeue", "timeout", "cancel-running", "wrap-pipe")} == {
        "train-fail": "failed", "exit3": "failed", "success": "completed", "killed": "failed", "memory": "failed",
        "steps": "failed", "requeue": "failed", "timeout": "timeout", "cancel-running": "cancelled",
        "wrap-pipe": "failed"}
    assert [kind(jobs, k).get("exit_code") for k in ("train-fail", "exit3", "steps", "requeue", "wrap-pipe")] == [
        1, 3, 2, 4, 5]
    # Killed by a signal (kill -9; the memory limit of OverMemoryKill): signal 9, no exit code.
    for name in ("killed", "memory"):
        assert kind(jobs, name)["signal"] == "9" and "exit_code" not in kind(jobs, name)
    assert kind(jobs, "train-fail")["gpus"] == 1                          # gres/gpu=1 of a tesla
    assert [a["status"] for a in kind(jobs, "requeue")["attempts"]] == ["requeued", "failed"]
    assert [kind(jobs, "array", t)["status"] for t in range(3)] == ["completed", "failed", "completed"]
    assert kind(jobs, "array", 1)["slurm_job_id_raw"] != KINDS["array"][1].split("_")[0]
    assert not any("." in job_id for job_id in jobs)                      # step rows are never jobs
    [pending] = [i for i in items if isinstance(i, Skipped)]              # held, then cancelled: Start == End
    assert pending.where.endswith(f"(job {KINDS['cancel-pending'][0]})") and "before it started" in pending.reason


def test_real_parsable2_command_cancelled_by_and_logs():
    jobs = by_id(real("sacct-parsable2.txt"))
    wrap = kind(jobs, "wrap-pipe")
    assert wrap["command"].startswith("sbatch --parsable --job-name=fixture-wrap-pipe")
    assert "| cat; echo 'OSError: [Errno 5] Input/output error' >&2; exit 5" in wrap["command"]   # its '|' kept
    cancelled = kind(jobs, "cancel-running")
    assert (cancelled["cancelled_by"], cancelled["cancelled_by_uid"]) == ("jobtriage-jobs", "995")   # UID column
    train = jobs[KINDS["train-fail"][0]]
    assert [p.name for p in train.logs] == [f"slurm-{KINDS['train-fail'][0]}.out",
                                            f"fixture-train-fail-{KINDS['train-fail'][0]}.err"]
    assert [p.name for p in jobs[KINDS["array"][1]].logs] == [f"slurm-{KINDS['array'][1]}.out"]
    for item in jobs.values():
        parse_job(item.metadata)


def test_real_json_22_05_never_stores_a_false_exit_code_0():
    text = (REAL / "sacct.json").read_text()
    assert slurm.slurm_version(json.loads(text)) == ((22, 5), "22.05.8")
    jobs = by_id(slurm.read_sacct(text, "json"))
    for name in ("train-fail", "exit3", "steps", "requeue", "wrap-pipe", "timeout", "cancel-running"):
        metadata = kind(jobs, name)
        assert "exit_code" not in metadata, name   # 22.05 says SUCCESS / 0 for all of them
        assert metadata["exit_code_unknown"] == "sacct --json of Slurm 22.05.8 reports every exit code as 0"
        assert all(a["exit_code"] is None for a in metadata["attempts"])
    assert kind(jobs, "success")["exit_code"] == 0 and "exit_code_unknown" not in kind(jobs, "success")
    assert kind(jobs, "killed")["signal"] == "9" and "exit_code_unknown" not in kind(jobs, "killed")
    assert kind(jobs, "cancel-running")["cancelled_by"] == "jobtriage-jobs"   # kill_request_user: a name
    parse_job(kind(jobs, "train-fail"))


def test_real_json_and_parsable2_agree():
    from_json = by_id(slurm.read_sacct((REAL / "sacct.json").read_text(), "json"))
    from_text = by_id(slurm.read_sacct((REAL / "sacct-parsable2.txt").read_text(), "parsable2"))
    assert from_json.keys() == from_text.keys()
    for job_id, item in from_text.items():
        text, js = parse_job(item.metadata), parse_job(from_json[job_id].metadata)
        assert (text.status, text.signal, text.gpus, text.name, text.submitter, text.team) == \
               (js.status, js.signal, js.gpus, js.name, js.submitter, js.team), job_id
        assert (text.started_at, text.ended_at, text.submitted_at) == (js.started_at, js.ended_at, js.submitted_at)
        assert [(a.started_at, a.ended_at, a.status) for a in text.attempts] == \
               [(a.started_at, a.ended_at, a.status) for a in js.attempts], job_id
        assert js.exit_code in (None, text.exit_code), job_id   # JSON 22.05 knows less, never something else
        assert text.extra.get("cancelled_by") == js.extra.get("cancelled_by")


def test_json_23_exit_codes_are_trusted():
    document = json.loads((FIXTURES / "sacct-23.11.json").read_text())
    assert slurm.slurm_version(document) == ((23, 11), "23.11.1")
    task = by_id(slurm.read_sacct(json.dumps(document), "json"))["913000_2"].metadata
    assert task["exit_code"] == 1 and "exit_code_unknown" not in task
    del document["meta"]   # no version: the 23.02+ schema (state as a list) says the same
    assert by_id(slurm.read_sacct(json.dumps(document), "json"))["913000_2"].metadata["exit_code"] == 1


def test_json_without_meta_in_the_old_schema_is_not_trusted():
    document = json.loads((REAL / "sacct.json").read_text())
    del document["meta"]
    jobs = by_id(slurm.read_sacct(json.dumps(document), "json"))
    assert "exit_code" not in kind(jobs, "exit3")
    assert "before 23.02" in kind(jobs, "exit3")["exit_code_unknown"]


# ---------------------------------------------------------------- re-ingesting: known facts stay

def metadata_of(name, job_id):
    return by_id(slurm.read_sacct((REAL / name).read_text(), "auto"))[job_id].metadata


@pytest.mark.parametrize("job_kind, first_state, first_exit", [("timeout", "TIMEOUT", 0),
                                                                ("cancel-running", "CANCELLED", 0)])
def test_a_slurmctld_restart_does_not_flip_what_was_known(job_kind, first_state, first_exit):
    job_id = KINDS[job_kind][0]
    before = metadata_of("sacct-parsable2.txt", job_id)
    after = metadata_of("sacct-parsable2-after-restart.txt", job_id)
    assert after["signal"] == "15" and "exit_code" not in after   # what the restart made of it

    merged, later = slurm_merge.keep_known_facts(before, after)
    assert (merged["slurm_state"], merged["exit_code"]) == (first_state, first_exit) and "signal" not in merged
    assert later == {"signal": "15", "exit_code": None, **({"slurm_state": "CANCELLED", "status": "cancelled",
                                                              "cancelled_by": None, "cancelled_by_uid": None}
                                                             if job_kind == "cancel-running" else {})}
    assert merged["slurm_later_reports"] == [later]
    again, _ = slurm_merge.keep_known_facts(merged, after)                 # the next cron run says the same
    assert again["slurm_later_reports"] == [later] and again["exit_code"] == first_exit
    if job_kind == "cancel-running":
        assert (merged["cancelled_by"], merged["cancelled_by_uid"]) == ("jobtriage-jobs", "995")
    parse_job(merged)


def test_an_unknown_exit_code_never_replaces_a_known_one():
    job_id = KINDS["exit3"][0]
    known = metadata_of("sacct-parsable2.txt", job_id)
    merged, later = slurm_merge.keep_known_facts(known, metadata_of("sacct.json", job_id))
    assert merged["exit_code"] == 3 and "exit_code_unknown" not in merged and later is None
    assert merged["attempts"][-1]["exit_code"] == 3
    assert merged["command"] == known["command"]                     # 22.05's JSON has no submit line
    # The other way round: JSON first, then --parsable2 fills the gap.
    filled, later = slurm_merge.keep_known_facts(metadata_of("sacct.json", job_id), known)
    assert filled["exit_code"] == 3 and "exit_code_unknown" not in filled and later is None


def test_a_report_without_duplicates_keeps_the_stored_requeue():
    job_id = KINDS["requeue"][0]
    with_d = metadata_of("sacct-parsable2.txt", job_id)
    without_d = metadata_of("sacct-parsable2-without-D.txt", job_id)
    assert len(without_d["attempts"]) == 1                           # sacct without -D: the last run only
    merged, later = slurm_merge.keep_known_facts(with_d, without_d)
    assert merged["attempts"] == with_d["attempts"] and later is None
    assert merged["started_at"] == with_d["started_at"] and merged["submitted_at"] == with_d["submitted_at"]


def test_a_new_run_after_the_stored_one_wins():
    job_id = KINDS["exit3"][0]
    stored = metadata_of("sacct-parsable2.txt", job_id)
    rerun = json.loads(json.dumps(stored))
    rerun.update(status="completed", slurm_state="COMPLETED", exit_code=0, ended_at="2026-11-23T23:10:00")
    rerun["attempts"] = [dict(stored["attempts"][0], status="requeued"),
                         {"started_at": "2026-11-23T23:00:00", "ended_at": "2026-11-23T23:10:00", "gpus": 0,
                          "exit_code": 0, "status": "completed"}]
    merged, later = slurm_merge.keep_known_facts(stored, rerun)
    assert (merged["status"], merged["exit_code"], later) == ("completed", 0, None)
    assert [a["status"] for a in merged["attempts"]] == ["failed", "completed"]   # the first run's outcome stays


# ---------------------------------------------------------------- small parsing cases

def test_submit_line_with_pipes_is_joined_and_other_surplus_fields_are_refused():
    text = ("JobID|State|ExitCode|Start|End|SubmitLine|NodeList\n"
            "7|FAILED|1:0|2026-11-16T08:00:00|2026-11-16T08:01:00|sbatch --wrap a | b | c|n1\n"
            "8|FAILED|1:0|2026-11-16T08:00:00|2026-11-16T08:01:00|x|n1|extra\n")
    items = list(slurm.read_sacct(text, "parsable2"))
    assert items[0].metadata["command"] == "sbatch --wrap a | b | c" and items[0].metadata["nodes"] == "n1"
    no_submit_line = "JobID|State|ExitCode\n9|FAILED|1:0|oops\n"
    assert list(slurm.read_sacct(no_submit_line, "parsable2")) == [
        Rejected("sacct line 2", "has 4 fields, the header has 3")]


@pytest.mark.parametrize("state, user, uid, expected", [
    ("CANCELLED by 995", "alice", "995", ("alice", "995")),     # the job's own user
    ("CANCELLED by 0", "alice", "995", ("root", "0")),
    ("CANCELLED by 1042", "alice", "995", ("1042", "1042")),    # an admin: only the uid is known
    ("CANCELLED by 1042", "alice", "", ("1042", "1042")),       # no UID column
])
def test_cancelled_by_is_a_name_when_known(state, user, uid, expected):
    text = ("JobID|User|UID|State|ExitCode|Start|End|NodeList\n"
            f"5|{user}|{uid}|{state}|0:0|2026-11-16T08:00:00|2026-11-16T08:01:00|n1\n")
    [job] = slurm.read_sacct(text, "parsable2")
    assert (job.metadata["cancelled_by"], job.metadata["cancelled_by_uid"]) == expected


# ---------------------------------------------------------------- logs stay inside --logs

def test_logs_that_resolve_outside_the_folder_are_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0\n")
    (outside / "slurm-7.out").write_text("not yours\n")
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "slurm-1.out").write_text("Traceback ...\n")
    (logs / "slurm-2.out").symlink_to(outside / "secret.txt")                 # absolute target outside
    (logs / "sub" / "slurm-3.out").symlink_to(Path("..") / ".." / "outside" / "secret.txt")   # '..' out
    (logs / "slurm-4.err").symlink_to(Path("sub") / ".." / "slurm-1.out")     # '..' that stays inside
    (logs / "linked").symlink_to(outside, target_is_directory=True)          # a folder linked out
    index = slurm.LogIndex(logs)
    assert index.find("1") == (logs / "slurm-1.out",)
    assert index.find("2") == () and index.find("3") == () and index.find("7") == ()
    assert index.find("4") == ((logs / "slurm-1.out").resolve(),)            # read where it really is
    assert sorted(index.refused) == sorted([f"'{logs / 'slurm-2.out'}' is a symlink that points outside {logs}",
                                            f"'{logs / 'sub' / 'slurm-3.out'}' is a symlink that points outside {logs}"])
    # Paths handed over by a caller are checked the same way (the linked folder's file, a '..' name).
    index = slurm.LogIndex(logs, [logs / "linked" / "slurm-7.out", logs / "sub" / ".." / ".." / "outside" / "slurm-7.out"])
    assert index.find("7") == () and len(index.refused) == 2


def test_ingest_slurm_help_prints_single_percent_signs():
    from jobs_ingest.management.commands.ingest_slurm import Command
    text = Command().create_parser("manage.py", "ingest_slurm").format_help()
    assert "slurm-%j.out" in text and "%%" not in text


# ---------------------------------------------------------------- the epilog hook's own decisions

def epilog_module():
    import importlib.util
    path = Path(__file__).resolve().parent.parent.parent / "docs" / "platforms" / "jobtriage_epilog_slurmctld.py"
    spec = importlib.util.spec_from_file_location("jobtriage_epilog", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# What scontrol printed inside a real EpilogSlurmctld on 22.05.8 for a job cancelled while running
# (paths shortened, some fields left out).
COMPLETING = ("JobId=26 JobName=cancel-running UserId=jobtriage-jobs(995) GroupId=jobtriage-jobs(994) "
              "JobState=COMPLETING Reason=None Dependency=(null) Requeue=1 Restarts=0 ExitCode=0:15 "
              "SubmitTime=2026-11-23T21:53:50 StartTime=2026-11-23T21:53:50 EndTime=2026-11-23T21:53:52 "
              "Partition=gpu NodeList=jt-node1 Command=/jobs/sleep.sh WorkDir=/jobs "
              "StdErr=/jobs/slurm-26.out StdOut=/jobs/slurm-26.out")


def test_epilog_reads_the_final_state_from_sacct_while_scontrol_says_completing():
    epilog = epilog_module()
    fields = epilog.parse_scontrol(COMPLETING)
    env = {"SLURM_JOB_ID": "26", "SLURM_JOB_EXIT_CODE2": "0:0", "SLURM_JOB_UID": "995",
           "SLURM_JOB_USER": "jobtriage-jobs", "SLURM_JOB_RESTART_COUNT": "0"}
    asked = []

    def sacct(job_id):
        asked.append(job_id)
        return "CANCELLED", "995", "0:0"
    job = epilog.build_job(env, fields, sacct)
    assert asked == ["26"] and job["status"] == "cancelled" and job["slurm_state"] == "CANCELLED"
    assert (job["cancelled_by"], job["cancelled_by_uid"], job["exit_code"]) == ("jobtriage-jobs", "995", 0)
    # Without sacct the exit code 0:0 cannot tell a cancel from a success: not sent (documented limit) ...
    assert epilog.build_job(env, fields, lambda job_id: None) is None
    # ... but scontrol's Reason names a time limit.
    timeout = epilog.build_job(env, epilog.parse_scontrol(COMPLETING.replace("Reason=None", "Reason=TimeLimit")),
                               lambda job_id: None)
    assert timeout["status"] == "timeout"
    # A run that ends in a requeue is not sent: the job's last run will be.
    assert epilog.build_job(env, fields, lambda job_id: ("REQUEUED", "", "0:0")) is None


def test_epilog_expands_the_output_patterns_of_the_environment():
    epilog = epilog_module()
    env = {"SLURM_JOB_ID": "57", "SLURM_ARRAY_JOB_ID": "51", "SLURM_ARRAY_TASK_ID": "1", "SLURM_JOB_NAME": "sweep",
           "SLURM_JOB_USER": "ann", "SLURM_JOB_WORK_DIR": "/home/ann/run"}
    assert epilog.expand_output_path("/logs/slurm-%A_%a.out", env) == "/logs/slurm-51_1.out"
    assert epilog.expand_output_path("%x-%j.err", env) == "/home/ann/run/sweep-57.err"
    assert epilog.expand_output_path("out-%5j-%%.log", env) == "/home/ann/run/out-00057-%.log"
