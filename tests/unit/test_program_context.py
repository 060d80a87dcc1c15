"""grouping:2026-11i: a failure that happened to a program rather than in a frame of it (a native crash, a kill, a
CUDA error printed as text, a launcher's report of a failed child) is told apart by its program, not one signature
for every program."""
import pytest

from jobs_ingest.core import analyse_text
from jobs_ingest.core.frameworks import failed_entrypoint

OLD, NEW = "grouping:2026-11h", "grouping:2026-11i"


def fingerprints(logs, config):
    return [analyse_text(log, grouping_config=config).fingerprint for log in logs]


@pytest.mark.parametrize("crash", ["Segmentation fault (core dumped)", "Aborted (core dumped)", "Killed",
                                   "Fatal Python error: Segmentation fault",
                                   "CUDA error: an illegal memory access was encountered"])
def test_one_crash_line_after_two_programs_gets_two_signatures(crash):
    detector = f"loading annotations from coco/train.json\nbuilding anchors for 5 feature levels\n{crash}\n"
    speech = f"loaded 120 utterances, vocabulary of 512 tokens\nstarting epoch 1\n{crash}\n"
    old, new = fingerprints([detector, speech], OLD), fingerprints([detector, speech], NEW)
    assert old[0] == old[1] and new[0] != new[1]


def test_the_same_program_crashing_again_keeps_its_signature():
    first = "2026-11-02 10:00:01 INFO epoch 3 step 1200 loss 0.71\nsaving to /ckpt/run-17\nSegmentation fault (core dumped)\n"
    again = ("[rank0]: 2026-11-09 22:14:55 INFO epoch 7 step 88100 loss 0.52\n[rank0]: saving to /ckpt/run-20\n"
             "[rank0]: Segmentation fault (core dumped)\n")
    assert len(set(fingerprints([first, again], NEW))) == 1


def test_a_crash_line_alone_still_shares_its_signature():
    # nothing else in the log tells its program apart
    assert len(set(fingerprints(["Segmentation fault (core dumped)\n", "Segmentation fault (core dumped)"], NEW))) == 1


# torchrun's summary of a child that printed no error (torch.distributed.elastic ChildFailedError.format_msg).
def summary(entrypoint: str, host: str, pid: int) -> str:
    return f"""Traceback (most recent call last):
  File "/opt/conda/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 794, in main
    run(args)
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 250, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
{entrypoint} FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-03-01_10:11:12
  host      : {host}
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: {pid})
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""


def pasted(entrypoint: str, host: str, pid: int) -> str:
    """The summary as people paste it, from the exception line on: the exception's message reads as empty."""
    return summary(entrypoint, host, pid).split("    raise ChildFailedError(\n", 1)[1]


def test_a_launcher_summary_is_told_apart_by_the_entrypoint_it_names():
    logs = [pasted("train_gpt.py", "node-1", 4242), pasted("/home/u/run/finetune.py", "node-1", 4242)]
    assert analyse_text(logs[0], grouping_config=NEW).message == ""
    old, new = fingerprints(logs, OLD), fingerprints(logs, NEW)
    assert old[0] == old[1] and new[0] != new[1]
    again = pasted("/data/other/checkout/train_gpt.py", "gpu-17", 99)    # another run of the same program
    assert fingerprints([again], NEW)[0] == new[0]


def test_a_log_ending_on_the_launchers_report_is_told_apart_by_the_entrypoint():
    def tail(entrypoint):     # the summary alone, as people paste it: no traceback, nothing parsed as a failure
        return summary(entrypoint, "node-1", 7).split("ChildFailedError:\n", 1)[1]
    first, second = (analyse_text(tail(e), grouping_config=NEW) for e in ("train_gpt.py", "finetune.py"))
    assert not first.found and first.rule == second.rule and first.fingerprint != second.fingerprint
    old = [analyse_text(tail(e), grouping_config=OLD).fingerprint for e in ("train_gpt.py", "finetune.py")]
    assert old[0] == old[1]


def test_failed_entrypoint_reads_the_summary_title_only():
    assert failed_entrypoint(["[rank3]: train.py FAILED", "done"]) == "train.py"
    assert failed_entrypoint([r"C:\\runs\\train.py FAILED", "/home/u/train.py FAILED"]) == "train.py"
    assert failed_entrypoint(["3 tests FAILED", "Epoch 1 FAILED: retrying", "status = FAILED"]) == ""


def test_program_context_changes_signatures_only():
    log = "starting epoch 1\nSegmentation fault (core dumped)\n"
    old, new = analyse_text(log, grouping_config=OLD), analyse_text(log, grouping_config=NEW)
    assert (new.category, new.rule, new.message, new.cluster) == (old.category, old.rule, old.message, old.cluster)
    assert (old.normaliser_version, new.normaliser_version) == ("9", "10")


def test_the_signature_basis_says_what_told_the_signature_apart():
    from jobs_ingest.core.analysis import BASES

    def basis(log):
        return analyse_text(log, grouping_config=NEW).signature_basis
    assert basis("starting epoch 1\nSegmentation fault (core dumped)\n") == "program_output"
    assert basis("Segmentation fault (core dumped)\n") == "message"
    assert basis('Traceback (most recent call last):\n  File "train.py", line 3, in main\n    f()\nValueError: x\n') == "user_code"
    assert basis('Traceback (most recent call last):\n  File "/usr/lib/python3/site-packages/torch/nn/functional.py", '
                 'line 3, in pad\n    f()\nValueError: x\n') == "library_code"
    assert basis(pasted("train_gpt.py", "node-1", 7)) == "entrypoint"
    assert basis(summary("train_gpt.py", "node-1", 7).split("ChildFailedError:\n", 1)[1]) == "entrypoint"
    assert basis("epoch 1 done\nsaving the model\n") == "log_tail"
    # a platform fault is one failure on any job: grouped by its line by design, not flagged
    assert basis("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n") == "platform_line"
    assert set(BASES) == {"user_code", "library_code", "program_output", "entrypoint", "log_tail", "platform_line",
                          "message"}
