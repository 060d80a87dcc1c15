"""Reason-level clusters (core/cluster.py) and tail fingerprints of logs with no parsed failure (#14.3, #14.4)."""
import pytest

from jobs_ingest.core.cluster import cluster_key
from jobs_ingest.core.pipeline import analyse_text, meaningful_tail


def traceback(function: str, exception: str) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "/home/u/{function}.py", line 12, in {function}\n'
            "    run()\n"
            f"{exception}\n")


@pytest.mark.parametrize("first, second", [
    ("AttributeError: 'DataParallel' object has no attribute 'encoder'",
     "AttributeError: 'DataParallel' object has no attribute 'generate'"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/data/imagenet/train.tar'",
     "FileNotFoundError: [Errno 2] No such file or directory: 'coco/annotations/instances_val2017.json'"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB on GPU 3.",
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB on GPU 0."),
    ("RuntimeError: Error(s) in loading state_dict for ResNet:\n\tMissing key(s) in state_dict: \"fc.weight\".",
     "RuntimeError: Error(s) in loading state_dict for BertModel:\n\tMissing key(s) in state_dict: \"cls.bias\"."),
    ("ValueError: Expected input batch_size (32) to match target batch_size (16).",
     "ValueError: Expected input batch_size (64) to match target batch_size (8)."),
])
def test_one_reason_from_different_code_is_one_cluster_and_several_signatures(first, second):
    a, b = analyse_text(traceback("train", first)), analyse_text(traceback("evaluate", second))
    assert a.cluster and a.cluster == b.cluster and a.cluster_message == b.cluster_message
    assert a.fingerprint != b.fingerprint  # the exact signature still tells the code apart


@pytest.mark.parametrize("first, second", [
    ("AttributeError: 'DataParallel' object has no attribute 'encoder'",
     "AttributeError: 'NoneType' object has no attribute 'encoder'"),  # which type is the reason
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB on GPU 3.",
     "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.10.3"),
    ("KeyError: 'model_state_dict'", "IndexError: list index out of range"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'data/x.json'",
     "PermissionError: [Errno 13] Permission denied: 'data/x.json'"),
])
def test_different_reasons_are_different_clusters(first, second):
    assert analyse_text(traceback("train", first)).cluster != analyse_text(traceback("train", second)).cluster


def test_the_cluster_message_masks_names_and_keeps_the_wording():
    key, reason = cluster_key("AttributeError", "'DataParallel' object has no attribute 'encoder_layers_12'")
    assert reason == "AttributeError: 'DataParallel' object has no attribute <Q>" and len(key) == 16
    assert cluster_key("", "") == ("", "")


def test_logs_without_a_parsed_failure_do_not_share_one_signature():
    upload = "epoch 3 loss 0.12\nsaving checkpoint\nwriting the summary to the bucket\n"
    stalled = "epoch 1 loss 2.3\nWaiting for the data loader workers\nno progress for 3600 seconds, giving up\n"
    a, b = analyse_text(upload, exit_code=1), analyse_text(stalled, exit_code=1)
    assert not a.found and not b.found and a.category == b.category == "unclassified"
    assert a.fingerprint != b.fingerprint and a.cluster != b.cluster
    assert a.message.endswith("the log ends: writing the summary to the bucket")
    # The same failure on another run (other numbers) is the same signature.
    again = analyse_text(upload.replace("epoch 3 loss 0.12", "epoch 7 loss 0.31"), exit_code=1)
    assert again.fingerprint == a.fingerprint


def test_killed_jobs_keep_one_cluster_and_differ_by_their_last_lines():
    a = analyse_text("epoch 1\nbuilding the vocabulary\n", exit_code=137)
    b = analyse_text("epoch 4\nevaluating on the test split\n", exit_code=137)
    assert a.category == b.category == "cpu_oom" and a.cluster == b.cluster
    assert a.fingerprint != b.fingerprint


def test_the_tail_skips_progress_bars_separators_and_blank_lines():
    lines = ["loading the model", "=" * 40, " 45%|████▌     | 450/1000 [00:41<00:50, 10.9it/s]", "", "  12  "]
    assert meaningful_tail(lines) == ["loading the model"]


def test_the_old_grouping_config_keeps_its_shared_no_failure_signature_and_has_no_clusters():
    old = [analyse_text(log, exit_code=1, grouping_config="grouping:2026-11") for log in ("a b c\nfoo bar\n", "x y z\nbaz qux\n")]
    assert old[0].fingerprint == old[1].fingerprint and old[0].cluster == ""
