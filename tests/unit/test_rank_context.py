"""grouping:2026-11f: a failure without a frame of the user's code is told apart by the lines its own rank printed
before it, so every rank crashing at once, their lines interleaved in any order, gives one signature."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.eval_collectors import all_ranks  # noqa: E402
from jobs_ingest.core import analyse_text  # noqa: E402
from tests.devset import devset_cases  # noqa: E402

OLD, NEW = "grouping:2026-11e", "grouping:2026-11f"
TAGGING = "tagging:2026-11n"      # before the failing rank's lines were read alone (tagging:2026-11o, below)


# The last lines of a run, then a real out-of-memory error line with no traceback (bench/devset/issues iss-0011).
LOG = "\n".join(["epoch 3 step 1200 loss 0.412", "epoch 3 step 1300 loss 0.398", "Saving checkpoint to /ckpt/step1300",
                 devset_cases("iss-0011")["iss-0011"]["log"].split("\n")[-1]])


def test_interleaved_ranks_give_one_signature():
    log = LOG                             # no traceback: no user frame to go by
    assert analyse_text(log).user_frame == ""
    runs = [all_ranks(log, 4, seed) for seed in range(6)]
    new = {analyse_text(run, grouping_config=NEW, tagging_config=TAGGING).fingerprint for run in runs}
    old = {analyse_text(run, grouping_config=OLD, tagging_config=TAGGING).fingerprint for run in runs}
    assert len(new) == 1 and len(old) > 1
    one_rank = analyse_text("\n".join(f"[rank0]: {line}" for line in log.split("\n")), grouping_config=NEW,
                            tagging_config=TAGGING)
    assert new == {one_rank.fingerprint}


def test_lines_without_rank_prefixes_are_read_as_before():
    log = LOG
    new, old = analyse_text(log, grouping_config=NEW), analyse_text(log, grouping_config=OLD)
    assert (new.masked_message, new.cluster) == (old.masked_message, old.cluster)
    assert new.normaliser_version == "7" and old.normaliser_version == "6"


# A cut traceback, a log cut inside its exception's name, a bare exception name under pasted frames, a TF error read
# from its last lines: each printed by four ranks at once reads as when one rank prints it (tagging:2026-11o).
RANK_LOGS = ("iss-0001", "i6s-0026", "i7d-0002", "i7a-0021")


def test_the_failing_ranks_lines_alone_are_read_after_parsing():
    cases = devset_cases(*RANK_LOGS)
    same_fingerprint = moved_before = 0
    for seed, case in enumerate(cases.values()):
        one = "\n".join(f"[rank0]: {line}" for line in case["log"].split("\n"))
        many = all_ranks(case["log"], 4, seed)
        new, alone = analyse_text(many), analyse_text(one)
        assert new.category == alone.category == case["category"]
        # Other ranks' lines are read as blank lines, so distances counted in lines grow: a cut traceback far below
        # its error (iss-0001) is read by another rule of the same category.
        same_fingerprint += new.fingerprint == alone.fingerprint
        moved_before += analyse_text(many, tagging_config=TAGGING).category != alone.category
    assert same_fingerprint >= 3 and moved_before >= 1


def test_the_excerpt_shows_every_ranks_lines_as_stored():
    log = all_ranks("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    step()\n"
                    "KeyError: 'lr'", 3, seed=1)
    analysis = analyse_text(log)
    stored = log.split("\n")
    assert analysis.category == "key_not_found"
    assert analysis.failure_line == stored[analysis.failure_line_number - 1]
    assert analysis.excerpt.split("\n") == stored[analysis.excerpt_start_line - 1:][:analysis.excerpt.count("\n") + 1]
