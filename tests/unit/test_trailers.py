"""The chatter tools print after a job failed (core/trailers.py, tagging:2026-11l) changes neither the tag nor the
grouping of the failure above it. The trailers are the tools' own texts; the logs above them are real development
logs, several of them cut or pasted in ways that only the log's last words can tell."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from tests.devset import devset_cases  # noqa: E402

from jobs_ingest.core import analyse_text  # noqa: E402
from jobs_ingest.core.trailers import is_trailer, quiet  # noqa: E402

OLD, NEW = "tagging:2026-11k", "tagging:2026-11l"
TRAILERS = {
    "wandb": ["wandb: Waiting for W&B process to finish... (failed 1). Press Control-C to abort syncing.",
              "wandb: - 0.012 MB of 0.012 MB uploaded (0.000 MB deduped)", "wandb: Run summary:",
              "wandb:      train/loss 0.4123", "wandb: ",
              "wandb: 🚀 View run fine-tune-3 at: https://wandb.ai/team/proj/runs/abc123",
              "wandb: Find logs at: ./wandb/run-20240501_100000-abc123/logs"],
    "slurm": ["srun: error: gpu-node-3: task 0: Exited with exit code 1",
              "srun: launch/slurm: _step_signal: Terminating StepId=123456.0",
              "slurmstepd: error: *** STEP 123456.0 ON gpu-node-3 CANCELLED AT 2024-05-01T10:00:00 ***"],
    "torchrun": ["WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1235 closing signal SIGTERM",
                 "[rank0]:[W501 10:00:00.000000000 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT "
                 "been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should "
                 "call destroy_process_group to ensure that any pending NCCL operations have finished in this "
                 "process."],
    "hydra": ["Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."],
}


# A cut traceback, an indented one, a log cut inside its exception's name, a bare exception name under pasted
# frames, a TF error read from the last lines, and a complete traceback.
LOGS = devset_cases("iss-0001", "iss2-0034", "i6s-0026", "i7d-0002", "i7a-0021", "i7a-0001")


@pytest.mark.parametrize("trailer", TRAILERS)
@pytest.mark.parametrize("case", LOGS)
def test_after_failure_chatter_changes_neither_tag_nor_grouping(trailer, case):
    plain = analyse_text(LOGS[case]["log"], tagging_config=NEW)
    assert plain.category == LOGS[case]["category"]
    log = LOGS[case]["log"] + "\n" + "\n".join(TRAILERS[trailer])
    seen = analyse_text(log, tagging_config=NEW)
    assert (seen.category, seen.rule, seen.fingerprint, seen.cluster) == (
        plain.category, plain.rule, plain.fingerprint, plain.cluster)
    stored = [line.rstrip() for line in log.split("\n")]        # the log as it is read and shown
    assert seen.excerpt == "\n".join(stored[seen.excerpt_start_line - 1:][:seen.excerpt.count("\n") + 1])


def test_the_previous_config_still_reads_the_chatter_as_it_did():
    log = LOGS["iss-0001"]["log"] + "\n" + "\n".join(TRAILERS["slurm"])
    old = analyse_text(log, tagging_config=OLD)
    assert (old.exception_type, old.category) == ("srun", "unclassified")   # released: never changes


@pytest.mark.parametrize("line", [
    "wandb: (1) Create a W&B account",                      # the login prompt a batch job cannot answer
    "wandb: ERROR api_key not configured (no-tty). call wandb.login(key=[your_api_key])",
    "srun: error: gpu-node-3: task 0: Exited with exit code 137",   # a signal: it says something
    "slurmstepd: error: *** JOB 12 ON gpu-node-3 CANCELLED AT 2024-05-01T10:00:00 DUE TO NODE FAILURE ***",
    "terminate called without an active exception",          # may be the failure itself
    "Killed",
])
def test_lines_that_may_say_why_are_not_trailers(line):
    assert not is_trailer(line) and quiet([line]) == [line]


def test_the_platform_rules_and_hosts_still_read_the_chatter():
    log = "\n".join([
        "[rank1]:[E501 10:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800088 "
        "milliseconds before timing out.",
        "srun: error: gpu-node-3: task 1: Exited with exit code 1"] + TRAILERS["wandb"])
    old, new = analyse_text(log, tagging_config=OLD), analyse_text(log, tagging_config=NEW)
    assert new.category == old.category == "collective_communication"
    assert "gpu-node-3" in new.suspect_nodes and new.suspect_nodes == old.suspect_nodes
