"""Named, versioned grouping and tagging configs (core/configs.py): the default is the newest, an old
config stays runnable by its id and gives its old output, and tag_logs says which configs it used."""
import dataclasses
import hashlib
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from jobs_ingest.core import analyse_log, analyse_text, configs  # noqa: E402
from jobs_ingest.core.normalise import short_type  # noqa: E402
from jobs_ingest.core.tagger import Tag  # noqa: E402

DEVSET = ROOT / "bench" / "devset" / "job_logs.jsonl"
# What `manage.py tag_logs` printed for the first log of the devset before configs had names
# (commit ada211a): grouping:2026-11 and tagging:2026-11 must keep giving exactly this.
FIRST_DEVSET_OUTPUT = {"id": "job-0001", "category": "illegal_argument", "dimension": "general_code_error",
                       "confidence": 0.97, "rule": "illegal_argument.argparse", "exception_type": "argparse.ArgumentError",
                       "fingerprint": "d9820cd09b9ae1f3", "stage": "initialization", "retry_advice": "do_not_retry"}
OOM_LOG = ("Traceback (most recent call last):\n"
           '  File "/home/alice/bert/train.py", line 131, in train_one_epoch\n'
           "    loss.backward()\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB on GPU 3.\n")


def first_devset_record() -> dict:
    with DEVSET.open(encoding="utf-8") as lines:
        return json.loads(next(lines))


def unmasked_fingerprint(exception_type: str, message: str, location: str) -> str:
    return hashlib.sha256(f"99|{short_type(exception_type)}|{message}|{location}".encode()).hexdigest()[:16]


def always_unclassified(exception_type, message, context=None) -> Tag:
    return Tag("unclassified", 0.1, "unclassified.test_config", message[:80])


@pytest.fixture
def newer_configs(monkeypatch):
    """A newer grouping config that masks nothing and a newer tagging config that tags nothing."""
    old_grouping, old_tagging = configs.GROUPING_CONFIGS[-1], configs.TAGGING_CONFIGS[-1]
    grouping = dataclasses.replace(old_grouping, id="grouping:2099-01", changelog="masks nothing", normaliser_version="99",
                                   masked_message=lambda t, m: f"{short_type(t)}: {m}", fingerprint=unmasked_fingerprint)
    tagging = dataclasses.replace(old_tagging, id="tagging:2099-01", changelog="tags nothing", tagger_version="99",
                                  tag=always_unclassified, infra_rules=None, learned_model=None)
    monkeypatch.setattr(configs, "GROUPING_CONFIGS", (*configs.GROUPING_CONFIGS, grouping))
    monkeypatch.setattr(configs, "TAGGING_CONFIGS", (*configs.TAGGING_CONFIGS, tagging))
    return grouping, tagging


def test_every_config_has_an_id_a_changelog_and_its_own_normaliser_version():
    for family, known in (("grouping", configs.GROUPING_CONFIGS), ("tagging", configs.TAGGING_CONFIGS)):
        ids = [c.id for c in known]
        assert len(set(ids)) == len(ids) and ids == sorted(ids), "ids are unique, oldest first"
        assert all(i.startswith(f"{family}:") and c.changelog.strip() for i, c in zip(ids, known))
    versions = [c.normaliser_version for c in configs.GROUPING_CONFIGS]
    assert len(set(versions)) == len(versions), "a signature's normaliser_version names its grouping config"


def test_today_the_default_configs_are_the_newest_and_are_recorded():
    analysis = analyse_text(OOM_LOG)
    assert (analysis.grouping_config, analysis.tagging_config) == ("grouping:2026-11m", "tagging:2026-11zn")
    assert (analysis.normaliser_version, analysis.tagger_version) == ("14", "22+i16+ml10+l2qs")


def test_the_second_tagging_config_adds_the_platform_and_keeps_the_program_tags():
    nccl = ("[rank3]:[E1118 03:12:44.123456 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=88231, OpType=ALLREDUCE, NumelIn=131072, NumelOut=131072, Timeout(ms)=600000) "
            "ran for 600034 milliseconds before timing out.\n")
    old, new = analyse_text(nccl, tagging_config="tagging:2026-11"), analyse_text(nccl)
    assert (old.category, old.dimension, old.fault) == ("unclassified", "unclassified", "user")
    assert (new.category, new.dimension, new.fault) == ("collective_communication", "infrastructure", "platform")
    assert new.retry_advice.startswith("retry") and new.failure_line == nccl.strip() and new.found is False
    assert new.fingerprint != analyse_text("no failure here\n").fingerprint   # not the shared "no failure" one
    oom = analyse_text(OOM_LOG)
    assert (oom.category, oom.fault, oom.suspect_nodes) == ("gpu_oom", "user", ())


def test_the_first_configs_give_the_output_recorded_before_they_had_names():
    record = first_devset_record()
    analysis = analyse_text(record["log"], grouping_config="grouping:2026-11", tagging_config="tagging:2026-11")
    assert {"id": record["id"], **{k: getattr(analysis, k) for k in FIRST_DEVSET_OUTPUT if k != "id"}} \
        == FIRST_DEVSET_OUTPUT


def test_the_default_is_the_newest_and_an_old_config_stays_runnable(newer_configs):
    grouping, tagging = newer_configs
    record = first_devset_record()
    newest = analyse_text(OOM_LOG)
    assert (newest.grouping_config, newest.tagging_config) == (grouping.id, tagging.id)
    assert newest.category == "unclassified" and newest.rule == "unclassified.test_config"
    assert "1.53 GiB" in newest.masked_message and newest.normaliser_version == "99"

    old = analyse_text(OOM_LOG, grouping_config="grouping:2026-11", tagging_config="tagging:2026-11")
    assert (old.grouping_config, old.tagging_config) == ("grouping:2026-11", "tagging:2026-11")
    assert old.category == "gpu_oom" and "<SIZE>" in old.masked_message and old.fingerprint != newest.fingerprint
    # The configs are independent: an old grouping with the newest tagging, from a file on disk too.
    mixed = analyse_log(OOM_LOG.encode(), grouping_config="grouping:2026-11")
    assert (mixed.fingerprint, mixed.tagging_config, mixed.category) == (old.fingerprint, tagging.id, "unclassified")
    again = analyse_text(record["log"], grouping_config="grouping:2026-11", tagging_config="tagging:2026-11")
    assert (again.fingerprint, again.category) == (FIRST_DEVSET_OUTPUT["fingerprint"], FIRST_DEVSET_OUTPUT["category"])


def test_an_unknown_config_id_is_a_clear_error():
    with pytest.raises(configs.UnknownConfig, match=r"unknown grouping config 'grouping:1999-01'; known: grouping:2026-11"):
        analyse_text(OOM_LOG, grouping_config="grouping:1999-01")
    with pytest.raises(ValueError, match="unknown tagging config"):
        analyse_log(OOM_LOG.encode(), tagging_config="nope")


def test_a_signature_names_its_grouping_config_from_its_normaliser_version():
    from jobs_ingest.models import Signature
    assert Signature(normaliser_version="2").grouping_config == "grouping:2026-11"
    assert Signature(normaliser_version="1").grouping_config == ""  # made before configs had names


def tag_logs(stdin: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_DEBUG": "1"}  # no secret key needed: tag_logs serves nothing
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), "tag_logs", *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_tag_logs_prints_the_config_ids_and_selects_configs_by_id():
    lines = json.dumps(first_devset_record()) + "\n" + json.dumps({"id": "oom", "log": OOM_LOG}) + "\n"
    default = tag_logs(lines)
    assert default.returncode == 0, default.stderr
    out = [json.loads(line) for line in default.stdout.splitlines()]
    assert [(o["id"], o["grouping_config"], o["tagging_config"]) for o in out] == [
        ("job-0001", "grouping:2026-11m", "tagging:2026-11zn"), ("oom", "grouping:2026-11m", "tagging:2026-11zn")]
    # The newer configs change no tag here; the newer grouping salts the fingerprint and adds a cluster.
    same = [k for k in FIRST_DEVSET_OUTPUT if k not in ("tagging_config", "fingerprint")]
    assert {k: out[0][k] for k in same} == {k: FIRST_DEVSET_OUTPUT[k] for k in same}
    assert out[0]["cluster"] and out[0]["cluster_message"].startswith("argument --optimizer: invalid choice: ")
    chosen = tag_logs(lines, "--grouping-config", "grouping:2026-11", "--tagging-config", "tagging:2026-11")
    assert chosen.returncode == 0
    old = [json.loads(line) for line in chosen.stdout.splitlines()]
    assert {k: old[0][k] for k in FIRST_DEVSET_OUTPUT} == FIRST_DEVSET_OUTPUT
    assert [(o["cluster"], o["cluster_message"]) for o in old] == [("", "")] * 2  # that config has no clusters
    grouping_fields = ("grouping_config", "tagging_config", "fingerprint", "cluster", "cluster_message")
    assert [{k: v for k, v in o.items() if k not in grouping_fields} for o in old] == \
        [{k: v for k, v in o.items() if k not in grouping_fields} for o in out]

    unknown = tag_logs(lines, "--tagging-config", "tagging:1999-01")
    assert unknown.returncode != 0 and unknown.stdout == ""
    assert "unknown tagging config 'tagging:1999-01'; known: tagging:2026-11, tagging:2026-11b, tagging:2026-11c, tagging:2026-11d, tagging:2026-11e, tagging:2026-11f, tagging:2026-11g, tagging:2026-11h, tagging:2026-11i, tagging:2026-11j, tagging:2026-11k, tagging:2026-11l, tagging:2026-11m, tagging:2026-11n, tagging:2026-11o" in unknown.stderr


def test_every_configs_stamps_fit_the_columns_that_store_them():
    # A failure row stores these (jobs_ingest.models): a stamp longer than its column makes every insert fail.
    from jobs_ingest.models import Failure, Signature
    tagger = Failure._meta.get_field("tagger_version").max_length
    normaliser = Signature._meta.get_field("normaliser_version").max_length
    assert all(len(c.tagger_version) <= tagger for c in configs.TAGGING_CONFIGS)
    assert all(len(c.normaliser_version) <= normaliser for c in configs.GROUPING_CONFIGS)
    for field, known in (("tagging_config", configs.TAGGING_CONFIGS), ("grouping_config", configs.GROUPING_CONFIGS)):
        assert all(len(c.id) <= Failure._meta.get_field(field).max_length for c in known)
