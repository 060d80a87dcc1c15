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


# The last lines of a run, then a real out-of-memory error line with no traceback (bench/devset/issues iss-0011).
LOG = "\n".join(["epoch 3 step 1200 loss 0.412", "epoch 3 step 1300 loss 0.398", "Saving checkpoint to /ckpt/step1300",
                 devset_cases("iss-0011")["iss-0011"]["log"].split("\n")[-1]])


def test_interleaved_ranks_give_one_signature():
    log = LOG                             # no traceback: no user frame to go by
    assert analyse_text(log).user_frame == ""
    runs = [all_ranks(log, 4, seed) for seed in range(6)]
    new = {analyse_text(run, grouping_config=NEW).fingerprint for run in runs}
    old = {analyse_text(run, grouping_config=OLD).fingerprint for run in runs}
    assert len(new) == 1 and len(old) > 1
    one_rank = analyse_text("\n".join(f"[rank0]: {line}" for line in log.split("\n")), grouping_config=NEW)
    assert new == {one_rank.fingerprint}


def test_lines_without_rank_prefixes_are_read_as_before():
    log = LOG
    new, old = analyse_text(log, grouping_config=NEW), analyse_text(log, grouping_config=OLD)
    assert (new.masked_message, new.cluster) == (old.masked_message, old.cluster)
    assert new.normaliser_version == "7" and old.normaliser_version == "6"
