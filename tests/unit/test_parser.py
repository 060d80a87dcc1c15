"""Reading failures from a log (tracebacks.py, evidence.py) and choosing the one that ended the job
(terminating.py): tracebacks, chains, wrappers, native errors, noise."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from jobs_ingest.core.evidence import find_failures  # noqa: E402
from jobs_ingest.core.terminating import root_cause_exit_code, terminating_failure  # noqa: E402
from jobs_ingest.core.tracebacks import Frame, LogFailure, strip_prefixes  # noqa: E402
from jobs_ingest.core.logread import split_lines  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "logs"


def lines_of(name: str) -> list[str]:
    lines = split_lines((FIXTURES / name).read_bytes().decode("utf-8", "replace"))
    return lines[:-1] if lines and lines[-1] == "" else lines


def terminal(lines: list[str]) -> LogFailure | None:
    return terminating_failure(find_failures(lines), lines)


def test_plain_traceback_frames_and_message():
    f = terminal(lines_of("python_traceback.log"))
    assert f.exception_type == "FileNotFoundError"
    assert "config.yaml" in f.message
    assert [fr.function for fr in f.frames] == ["<module>", "main", "load_config"]
    assert f.frames[-1].file.endswith("utils/config.py") and f.frames[-1].line == 21
    assert f.line_index == 10 and f.start_index == 3


def test_chain_during_handling_keeps_earlier_exception():
    f = terminal(lines_of("chained_during_handling.log"))
    assert f.exception_type == "RuntimeError"
    assert [c.exception_type for c in f.chain] == ["KeyError"]
    assert f.chain[0].message == "'traffic_cone'"


def test_chain_direct_cause_with_non_error_class_name():
    # zipfile.BadZipFile does not end in "Error": still the exception of its traceback.
    f = terminal(lines_of("chained_direct_cause.log"))
    assert f.exception_type == "Exception"
    assert [c.exception_type for c in f.chain] == ["zipfile.BadZipFile"]


def test_dataloader_worker_reraise_picks_original_traceback():
    lines = lines_of("dataloader_worker.log")
    f = terminal(lines)
    assert f.exception_type == "PIL.UnidentifiedImageError"
    assert f.message.startswith("cannot identify image file")
    assert "Caught" not in f.message
    assert any(fr.function == "__getitem__" for fr in f.frames)


def test_torchrun_root_cause_rank_wins_over_later_rank():
    lines = lines_of("torchrun_childfailed.log")
    failures = find_failures(lines)
    assert failures[-1].is_wrapper
    assert {f.rank for f in failures if not f.is_wrapper} == {"0", "1"}
    f = terminating_failure(failures, lines)
    assert f.rank == "1"
    assert f.exception_type == "torch.OutOfMemoryError"
    assert lines[f.line_index].startswith("[rank1]: torch.OutOfMemoryError")


def test_torchrun_root_cause_exit_code():
    lines = lines_of("torchrun_sigkill.log")
    failures = find_failures(lines)
    wrapper = failures[-1]
    assert wrapper.is_wrapper
    assert root_cause_exit_code(lines, wrapper.line_index) == -9


def test_childfailed_without_child_traceback_is_the_wrapper():
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "Root Cause (first observed failure):",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : 1 (pid: 12)",
    ]
    f = terminal(lines)
    assert f.is_wrapper


def test_rank_prefixes_are_stripped():
    body, level, rank = strip_prefixes("[rank3]: Traceback (most recent call last):")
    assert body == "Traceback (most recent call last):" and rank == "3"
    body, level, rank = strip_prefixes("2024-01-02 03:04:05,123 ERROR boom")
    assert body == "boom" and level == "ERROR"


def test_tf_multiline_invalid_argument_message():
    f = terminal(lines_of("tf_invalid_argument.log"))
    assert f.short_type == "InvalidArgumentError"
    assert "logits and labels must have the same first dimension" in f.message
    assert "[[node sparse_categorical_crossentropy" in f.message


def test_tf_resource_exhausted_keeps_hint_lines():
    f = terminal(lines_of("tf_resource_exhausted.log"))
    assert f.short_type == "ResourceExhaustedError"
    assert "OOM when allocating tensor" in f.message


def test_keras_in_user_code_message_includes_inner_error():
    f = terminal(lines_of("keras_shape.log"))
    assert f.exception_type == "ValueError"
    assert "is incompatible with the layer" in f.message


def test_xla_resource_exhausted():
    f = terminal(lines_of("jax_xla_oom.log"))
    assert f.exception_type == "jaxlib.xla_extension.XlaRuntimeError"
    assert f.message.startswith("RESOURCE_EXHAUSTED")


def test_cpp_terminate_with_what_and_abort_report():
    lines = lines_of("cpp_abort.log")
    f = terminal(lines)
    assert f.kind == "cpp" and f.exception_type == "c10::Error"
    assert "DefaultCPUAllocator: can't allocate memory" in f.message
    # "Aborted (core dumped)" only reports the death explained by the line above.
    assert lines[f.line_index].startswith("terminate called after throwing")


def test_argparse_usage_error():
    lines = lines_of("argparse_usage.log")
    f = terminal(lines)
    assert f.kind == "argparse"
    assert f.message == "unrecognized arguments: --warmup-epochs 5"
    assert lines[f.start_index].startswith("usage:")


def test_error_colon_without_usage_is_not_argparse():
    assert all(f.kind != "argparse" for f in find_failures(["tool: error: disk quota"]))


def test_nan_loss_guard_line():
    f = terminal(lines_of("loss_nan_guard.log"))
    assert f.kind == "LossNaN" and f.line_index == 2


def test_slurm_oom_kill_line():
    f = terminal(lines_of("slurm_oom_kill.log"))
    assert f.kind == "OOMKilled"
    assert "oom_kill" in f.message


def test_no_failure_in_training_log():
    assert find_failures(lines_of("no_error_killed.log")) == []


def test_logged_warning_tracebacks_are_not_terminal():
    lines = lines_of("warning_traceback.log")
    failures = find_failures(lines)
    assert [f.suppressed for f in failures] == [True, False, True]
    f = terminating_failure(failures, lines)
    assert f.exception_type == "RuntimeError" and "Sizes of tensors must match" in f.message


def test_warning_traceback_alone_is_still_reported():
    lines = ["WARNING:root:something odd", "Traceback (most recent call last):",
             '  File "a.py", line 1, in <module>', "ValueError: bad"]
    f = terminal(lines)
    assert f is not None and f.exception_type == "ValueError"


def test_exception_ignored_block_is_skipped():
    f = terminal(lines_of("exception_ignored.log"))
    assert f.exception_type == "ZeroDivisionError"


def test_retried_error_is_dropped():
    lines = lines_of("retried_error.log")
    failures = find_failures(lines)
    assert all(f.exception_type != "ConnectionResetError" for f in failures)
    assert terminal(lines).exception_type == "KeyError"


def test_tqdm_carriage_returns_and_ansi_colours():
    lines = lines_of("tqdm_ansi.log")
    assert lines[0].startswith("Epoch 1:  31%")
    f = terminal(lines)
    assert f.exception_type == "IndexError" and f.line_index == 6


def test_rich_traceback_box():
    lines = [
        "╭───────────────────── Traceback (most recent call last) ──────────────────────╮",
        "│ /opt/conda/lib/python3.10/site-packages/transformers/tokenization_utils.py:114 in __init__ │",
        "│   113 │   # convert                                                          │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
        "Exception: expected value at line 1 column 1",
    ]
    f = terminal(lines)
    assert f.exception_type == "Exception" and f.message == "expected value at line 1 column 1"
    assert f.frames and f.frames[0].function == "__init__" and f.frames[0].line == 114


def test_rich_box_tail_without_header():
    lines = ["│   114 │   fast = convert(slow)   │", "╰──────────────╯", "Exception: expected value at line 1 column 1"]
    assert terminal(lines).message == "expected value at line 1 column 1"


def test_bare_exception_prose_is_not_a_failure():
    assert find_failures(["Exception: none, continuing", "Error: retrying"]) == []


def test_notebook_traceback():
    lines = [
        "---------------------------------------------------------------------------",
        "Exception                                 Traceback (most recent call last)",
        "<ipython-input-63-6a3abf6d6275> in <module>()",
        "----> 1 model.load_weights('w.h5')",
        "",
        "/envs/x/lib/python2.7/site-packages/keras/engine/topology.pyc in load_weights(self, filepath)",
        "-> 2292         f.close()",
        "",
        "Exception: You are trying to load a weight file containing 6 layers into a model with 8 layers.",
    ]
    f = terminal(lines)
    assert f.exception_type == "Exception" and f.line_index == 8


def test_lua_error_with_stack_traceback():
    lines = ["/usr/bin/luajit: ./train.lua:12: cuda runtime error (2) : out of memory at THCStorage.cu:66",
             "stack traceback:", "\t[C]: in function 'new'"]
    f = terminal(lines)
    assert f.kind == "lua" and f.message.startswith("./train.lua:12: cuda runtime error (2)")


def test_plain_cuda_oom_message_line():
    f = terminal(["CUDA out of memory. Tried to allocate 4.00 GiB (GPU 0; 10.73 GiB total capacity)"])
    assert f is not None and f.kind == "CudaError"


def test_embedded_exception_used_only_as_fallback():
    f = terminal(["bash run.sh", "报错：ImportError: libcudart.so.10.1: cannot open shared object file"])
    assert f.exception_type == "ImportError" and f.kind == "embedded"
    lines = ["Traceback (most recent call last):", '  File "a.py", line 3, in <module>',
             "KeyError: 'lr'", "INFO job summary: KeyError: 'lr'"]
    assert terminal(lines).line_index == 2


@pytest.mark.parametrize("line", [
    "/home/u/x.py:12: UserWarning: deprecated",
    "  warnings.warn(",
    "INFO loss=0.3 error_rate=0.1",
    "DeprecationWarning: use y instead",
])
def test_noise_lines_are_not_failures(line):
    assert find_failures([line]) == []


def test_frame_describe():
    assert Frame("/a/b/c/train.py", 10, "main").describe() == "c/train.py:10 in main"


def test_message_ends_at_a_new_log_record():
    lines = [
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 3, in <module>',
        "KeyError: 'lr'",
        "2024-01-01 00:00:00,000 INFO launcher: process exited with code 1, uploading logs",
        "Hint: this line would otherwise be taken as part of the message",
    ]
    f = terminal(lines)
    assert f.message == "'lr'"


def test_message_ends_at_another_rank():
    lines = ["[rank0]: Traceback (most recent call last):", '[rank0]:   File "/w/t.py", line 3, in f',
             "[rank0]: ValueError: bad", "[rank1]: still training step 10"]
    assert terminal(lines).message == "bad"


def test_blank_line_after_announcing_message_continues():
    lines = ["Traceback (most recent call last):", '  File "/w/t.py", line 3, in f',
             "ResourceExhaustedError: Graph execution error:", "",
             "OOM when allocating tensor with shape[128,1,5000,512]"]
    assert "OOM when allocating" in terminal(lines).message


def test_handled_traceback_then_argparse_error():
    lines = [
        "Could not load checkpoint, starting from scratch:",
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 112, in maybe_resume',
        "FileNotFoundError: [Errno 2] No such file or directory: '/out/last.pt'",
        "usage: run.py [-h] --batch-size BATCH_SIZE",
        "run.py: error: argument --batch-size: invalid int value: '32.0'",
    ]
    failures = find_failures(lines)
    assert failures[0].suppressed
    assert terminal(lines).kind == "argparse"


def test_failure_followed_by_fallback_note_is_not_terminal():
    lines = [
        "Traceback (most recent call last):", '  File "/w/t.py", line 1, in <module>',
        "ModuleNotFoundError: No module named 'fast_dep'",
        "optional dependency missing, falling back to the slow path",
        "Traceback (most recent call last):", '  File "/w/t.py", line 9, in <module>',
        "KeyError: 'val_loss'",
    ]
    assert terminal(lines).exception_type == "KeyError"


def test_frame_source_line_is_kept():
    f = terminal(lines_of("python_traceback.log"))
    assert f.frames[-1].code == "with open(path) as fh:"


def test_interleaved_rank_tracebacks_are_read_per_rank():
    lines = lines_of("torchrun_interleaved.log")
    failures = find_failures(lines)
    ranked = [f for f in failures if f.rank]
    assert [(f.rank, f.line_index) for f in ranked] == [("0", 12), ("1", 13)]
    assert all([fr.function for fr in f.frames] == ["train_one_epoch", "forward"] for f in ranked)
    f = terminating_failure(failures, lines)
    assert f.rank == "0" and f.exception_type == "RuntimeError" and f.start_index == 2


def test_words_inside_the_message_do_not_mark_it_handled():
    lines = ["Traceback (most recent call last):", '  File "/w/t.py", line 3, in f',
             "InvalidArgumentError: Graph execution error:", "", "Unknown image file format.",
             "0 derived errors ignored. [Op:__inference_train_function_1]"]
    f = terminal(lines)
    assert f is not None and not f.suppressed


# --- issues2: patterns of real issue-tracker logs --------------------------------------------------
def test_argparse_error_without_usage_lines():
    # users often quote only argparse's last line; its message is argparse's own wording
    f = terminating_failure(find_failures(
        ["train.py: error: unrecognized arguments: --steps=20 --epochs=2", "  [0.000s] Operation failed"]), [])
    assert f.kind == "argparse" and f.message.startswith("unrecognized arguments")


def test_argparse_prog_name_with_spaces():
    fs = find_failures(["iColoriT training scripts: error: unrecognized arguments: --local-rank=0"])
    assert [f.kind for f in fs] == ["argparse"]


def test_colon_error_prose_without_usage_is_not_argparse():
    assert find_failures(["model loader: error: weights look odd, continuing"]) == []


def test_ide_exit_code_137_is_a_kill():
    fs = find_failures(["Process finished with exit code 137 (interrupted by signal 9:SIGKILL)"])
    assert [f.kind for f in fs] == ["Killed"]


def test_flattened_torchrun_summary_exit_code():
    lines = lines_of("torchrun_flattened_sigkill.log")
    assert root_cause_exit_code(lines, 0) == -9


def test_logged_exception_repr_when_traceback_is_cut():
    lines = ["ERROR: an <class 'RuntimeError'> error occurred in the train loop: RuntimeError('CUDA out of memory. "
             "Tried to allocate 20.00 MiB',)",
             "INFO: Traceback (most recent call last):",
             '  File "/opt/x/fit_harn.py", line 1554, in run',
             "    test_loader"]
    f = terminating_failure(find_failures(lines), lines)
    assert f.exception_type == "RuntimeError" and f.message.startswith("'CUDA out of memory")


def test_tf_op_requires_status_when_traceback_is_cut():
    lines = lines_of("tf_op_requires_truncated.log")
    f = terminating_failure(find_failures(lines), lines)
    assert f.exception_type == "PermissionDeniedError" and f.message.startswith("/models")


def test_state_dict_key_lists_without_header():
    lines = ['Missing key(s) in state_dict: "map.0.weight", "map.0.bias".', "",
             'Unexpected key(s) in state_dict: "world.0.weight".']
    f = terminating_failure(find_failures(lines), lines)
    assert f.exception_type == "RuntimeError" and "Unexpected key(s) in state_dict" in f.message


def test_bare_exception_line_from_raise_exception():
    lines = ["  0%|          | 0/10", "Exception: Current loss scale already at minimum - cannot decrease scale anymore."]
    f = terminating_failure(find_failures(lines), lines)
    assert f.exception_type == "Exception" and f.message.startswith("Current loss scale")
