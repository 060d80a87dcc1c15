"""End to end over fixture logs: the terminating failure, its line, stage, tag and signature."""
import io
import pathlib
import sys
import time
import tracemalloc

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

from jobs_ingest.core import Analysis, analyse_log, analyse_text  # noqa: E402
from jobs_ingest.core.logread import LINE_COUNT_BYTES, LogSource, split_lines  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "logs"

# fixture, category, 1-based failure line number, start of the failure line, stage
SCENARIOS = [
    ("python_traceback.log", "path_not_found", 11, "FileNotFoundError: [Errno 2]", "data_preprocessing"),
    ("chained_during_handling.log", "key_not_found", 17, "RuntimeError: bad sample", "data_preprocessing"),
    ("chained_direct_cause.log", "corrupt_data", 16, "Exception: could not restore model", "initialization"),
    ("dataloader_worker.log", "corrupt_data", 25, "PIL.UnidentifiedImageError: cannot identify", "data_preprocessing"),
    ("torchrun_childfailed.log", "gpu_oom", 11, "[rank1]: torch.OutOfMemoryError", "training"),
    ("torchrun_interleaved.log", "tensor_mismatch", 13, "[rank0]: RuntimeError: mat1 and mat2", "training"),
    ("torchrun_sigkill.log", "cpu_oom", 10, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
     "training"),
    ("tf_resource_exhausted.log", "gpu_oom", 14, "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
     "training"),
    ("tf_invalid_argument.log", "tensor_mismatch", 9, "tensorflow.python.framework.errors_impl.InvalidArgumentError",
     "training"),
    ("keras_shape.log", "tensor_mismatch", 11, "ValueError: in user code:", "training"),
    ("jax_xla_oom.log", "gpu_oom", 9, "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED", "training"),
    ("cpp_abort.log", "cpu_oom", 2, "terminate called after throwing an instance of 'c10::Error'", "training"),
    ("argparse_usage.log", "illegal_argument", 3, "train.py: error: unrecognized arguments", "initialization"),
    ("loss_nan_guard.log", "loss_nan", 3, "Loss is nan, stopping training", "training"),
    ("slurm_oom_kill.log", "cpu_oom", 5, "slurmstepd: error: Detected 1 oom_kill event", None),
    ("warning_traceback.log", "tensor_mismatch", 18, "RuntimeError: Sizes of tensors must match", "training"),
    ("exception_ignored.log", "division_by_zero", 7, "ZeroDivisionError: division by zero", "evaluation"),
    ("retried_error.log", "key_not_found", 12, "KeyError: 'optimizer'", "training"),
    ("tqdm_ansi.log", "illegal_index", 7, "IndexError: index 31 is out of bounds", "training"),
    ("device_side_assert.log", "illegal_index", 11, "RuntimeError: CUDA error: device-side assert triggered",
     "training"),
    ("invalid_utf8_nul.log", "unexpected_encoding", 6, "UnicodeDecodeError: 'ascii' codec", None),
    ("stage_hook_marker.log", "type_mismatch", 10, "TypeError: forward()", "evaluation"),
    ("stage_eval_frames.log", "corrupt_data", 13, "ValueError: Only one class present", "evaluation"),
    ("stage_data_markers.log", "corrupt_data", 8, "json.decoder.JSONDecodeError", "data_preprocessing"),
]


@pytest.mark.parametrize("name,category,line_number,line_start,stage", SCENARIOS)
def test_fixture_scenarios(name, category, line_number, line_start, stage):
    a = analyse_log(FIXTURES / name)
    assert a.found
    assert a.category == category, (a.rule, a.evidence)
    assert a.failure_line_number == line_number
    assert a.failure_line.startswith(line_start)
    # the failure line is that line of the log, as displayed
    raw = (FIXTURES / name).read_bytes().decode("utf-8", "replace")
    assert split_lines(raw)[line_number - 1] == a.failure_line
    if stage:
        assert a.stage == stage
    assert a.rule.startswith(category) and a.evidence
    assert a.failure_line in a.excerpt
    assert len(a.fingerprint) == 16 and a.masked_message


def test_same_result_from_text_and_file():
    for name, *_ in SCENARIOS:
        raw = (FIXTURES / name).read_bytes().decode("utf-8", "replace")
        assert analyse_text(raw) == analyse_log(FIXTURES / name), name


def test_device_side_assert_evidence_from_preceding_line():
    a = analyse_log(FIXTURES / "device_side_assert.log")
    assert a.category == "illegal_index"


def test_traceback_and_user_frame():
    a = analyse_log(FIXTURES / "python_traceback.log")
    assert a.user_frame == "utils/config.py:21 in load_config"
    assert a.traceback.startswith("Traceback (most recent call last):")
    assert a.traceback.endswith("config.yaml'")
    a = analyse_log(FIXTURES / "dataloader_worker.log")
    assert a.user_frame == "data/folder.py:44 in __getitem__"


def test_chained_traceback_text_starts_at_first_exception():
    a = analyse_log(FIXTURES / "chained_direct_cause.log")
    assert "BadZipFile" in a.traceback and a.rule.endswith(".chained")


def test_retry_advice():
    assert analyse_log(FIXTURES / "torchrun_childfailed.log").retry_advice == "retry_with_change"
    assert analyse_log(FIXTURES / "python_traceback.log").retry_advice == "do_not_retry"
    assert analyse_log(FIXTURES / "loss_nan_guard.log").retry_advice == "retry"


def test_killed_with_no_error_in_log():
    a = analyse_log(FIXTURES / "no_error_killed.log", exit_code=137)
    assert not a.found and a.category == "cpu_oom" and a.rule == "cpu_oom.exit_code_sigkill"
    assert a.failure_line_number == 4 and a.stage == "data_preprocessing"
    assert analyse_log(FIXTURES / "no_error_killed.log", signal=9).category == "cpu_oom"
    assert analyse_log(FIXTURES / "no_error_killed.log", signal="SIGKILL").category == "cpu_oom"
    a = analyse_log(FIXTURES / "no_error_killed.log", exit_code=1)
    assert a.category == "unclassified" and not a.found and a.confidence <= 0.2


def test_old_error_far_before_a_kill_is_not_the_cause():
    log = "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nValueError: x\n" + \
        "".join(f"step {i} loss 0.1\n" for i in range(500))
    assert analyse_text(log).category == "illegal_argument"
    assert analyse_text(log, exit_code=137).category == "cpu_oom"


def test_empty_log():
    a = analyse_log(FIXTURES / "empty.log")
    assert not a.found and a.category == "unclassified"
    assert a.failure_line == "" and a.failure_line_number is None and a.stage == "unknown"
    assert analyse_text("") == a


def test_unclassified_wrapper_without_child_error():
    log = (FIXTURES / "torchrun_childfailed.log").read_text().split("[rank1]: Traceback")[0] + \
        (FIXTURES / "torchrun_childfailed.log").read_text().split("Sending process 2201 closing signal SIGTERM\n")[1]
    a = analyse_text(log)
    assert a.found and a.category == "unclassified" and a.confidence <= 0.3


# Catastrophic regex backtracking on a 1 MB line takes hours; this bound catches that, not slowness
# (throughput is measured in bench/bench_parse.py).
BACKTRACKING_GUARD_S = 30.0


def test_one_megabyte_single_line(tmp_path):
    p = tmp_path / "long.log"
    p.write_bytes(b"Epoch 1 " + b"x" * 1_000_000 + b"\n" + b"x=(" * 300_000 + b"\nKeyError: 'lr'\n")
    start = time.perf_counter()
    a = analyse_log(p)
    assert time.perf_counter() - start < BACKTRACKING_GUARD_S
    assert a.category == "key_not_found" and a.failure_line_number == 3
    # a 1 MB line of digits, paths and brackets: masking and tagging stay linear
    noisy = "RuntimeError: " + "/a/b/0x1f 12.5 GiB [1, 2] (3, 4) " * 30_000
    start = time.perf_counter()
    analyse_text(noisy)
    assert time.perf_counter() - start < BACKTRACKING_GUARD_S


TRAINING_LINE = b"2024-03-04 10:12:01,233 INFO Epoch 3 step 1200/5000 loss 0.4123 lr 0.0001 throughput 812.3 img/s\n"
TRACEBACK = (b"Traceback (most recent call last):\n"
             b"  File \"/home/u/train.py\", line 88, in train_step\n"
             b"    loss.backward()\n"
             b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")


def _write_big(path, size, traceback_from_end):
    per_mb = TRAINING_LINE * (1024 * 1024 // len(TRAINING_LINE))
    lines_written = 0
    with open(path, "wb") as fh:
        written = 0
        target_before = size - traceback_from_end
        while written + len(per_mb) <= target_before:
            fh.write(per_mb)
            written += len(per_mb)
            lines_written += per_mb.count(b"\n")
        fh.write(TRACEBACK)
        line = lines_written + 4
        after = 0
        while after < traceback_from_end:
            fh.write(per_mb)
            after += len(per_mb)
    return line


def test_big_log_traceback_at_end_bounded_memory(tmp_path):
    p = tmp_path / "big.log"
    line = _write_big(p, 50 * 1024 * 1024, 0)
    tracemalloc.start()
    try:
        a = analyse_log(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert a.category == "gpu_oom" and a.stage == "training"
    # 50 MB deep: numbered from the failure window, which the job page resolves to the whole log's numbers
    assert a.line_numbers_from > LINE_COUNT_BYTES
    with LogSource(p) as log:
        assert log.line_number_at(a.line_numbers_from) - 1 + a.failure_line_number == line
    assert peak < 32 * 1024 * 1024, peak


class CountingReader(io.FileIO):
    bytes_read = 0

    def read(self, size=-1):
        data = super().read(size)
        self.bytes_read += len(data)
        return data


def test_a_failure_at_the_end_of_a_big_log_costs_no_full_read(tmp_path):
    p = tmp_path / "big.log"
    _write_big(p, 50 * 1024 * 1024, 0)
    with CountingReader(p) as fh:
        analyse_log(fh)
        assert fh.bytes_read < 2 * 1024 * 1024, fh.bytes_read


def test_a_failure_near_the_start_of_the_log_is_numbered_in_the_whole_log(tmp_path):
    p = tmp_path / "big.log"
    line = _write_big(p, 5 * 1024 * 1024, 0)  # below LINE_COUNT_BYTES: counted at analysis
    a = analyse_log(p)
    assert a.line_numbers_from == 0 and a.failure_line_number == line


def test_big_log_traceback_ten_megabytes_before_end(tmp_path):
    p = tmp_path / "big.log"
    line = _write_big(p, 30 * 1024 * 1024, 10 * 1024 * 1024)
    tracemalloc.start()
    try:
        a = analyse_log(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert a.category == "gpu_oom"
    with LogSource(p) as log:
        assert log.line_number_at(a.line_numbers_from) - 1 + a.failure_line_number == line
    assert a.failure_line.startswith("torch.OutOfMemoryError")
    assert peak < 48 * 1024 * 1024, peak


def test_analysis_as_dict():
    d = analyse_log(FIXTURES / "python_traceback.log").as_dict()
    assert set(d) == set(Analysis.__dataclass_fields__)


@given(st.lists(st.sampled_from(list("abcXYZ:/ .()[]'\"\n\r\t0123456789_") + [
    "Traceback (most recent call last):\n", '  File "x.py", line 3, in f\n', "ValueError: ", "KeyError: ",
    "During handling of the above exception, another exception occurred:\n", "usage: x\n", "x.py: error: ",
    "terminate called after throwing an instance of 'std::bad_alloc'\n", "  what():  ", "Killed\n",
    "[rank1]: ", "Root Cause (first observed failure):\n", "  rank : 1\n", "╰──╯\n", "stack traceback:\n",
    "WARNING:root:", "Exception ignored in: x\n", "Retrying\n", "\x1b[31m", "\x00", "\ufffd",
    "ChildFailedError:\n", "CUDA out of memory. ", "Loss is nan, stopping training\n",
    "Error  Traceback (most recent call last)\n",
]), max_size=60).map("".join))
@settings(max_examples=300, deadline=None)
def test_never_raises_and_failure_line_is_a_log_line(text):
    for kwargs in ({}, {"exit_code": 137}):
        a = analyse_text(text, **kwargs)
        lines = split_lines(text)
        if a.failure_line_number is None:
            assert a.failure_line == ""
        else:
            assert lines[a.failure_line_number - 1] == a.failure_line
        if not a.found and not kwargs:  # no failure parsed: unclassified, or a low-confidence guess
            assert a.category == "unclassified" or (a.rule.endswith(".unparsed_tail") and a.confidence <= 0.6)


@given(st.binary(max_size=2000))
@settings(max_examples=200, deadline=None)
def test_arbitrary_bytes(data):
    a = analyse_log(data)
    assert isinstance(a, Analysis)
    if a.failure_line_number is not None:
        assert split_lines(data.decode("utf-8", "replace"))[a.failure_line_number - 1] == a.failure_line


def _tb(code, exc="KeyError: 'x'", func="<module>"):
    return f'Traceback (most recent call last):\n  File "/w/run.py", line 9, in {func}\n    {code}\n{exc}\n'


@pytest.mark.parametrize("code,stage", [
    ("loss.backward()", "training"),
    ("history = model.fit(x, y, validation_data=(vx, vy))", "training"),
    ("acc = accuracy(preds, labels)", "evaluation"),
    ("records = json.load(fh)", "data_preprocessing"),
    ("df = pd.read_csv(path)", "data_preprocessing"),
    ("import apex", "initialization"),
    ("model.load_state_dict(torch.load(ckpt))", "initialization"),
])
def test_stage_from_source_line_of_module_level_code(code, stage):
    assert analyse_text(_tb(code)).stage == stage


def test_stage_function_name_wins_over_source_line():
    assert analyse_text(_tb("x = json.load(fh)", func="evaluate")).stage == "evaluation"


def test_parameter_dump_is_not_a_stage_marker():
    log = ("INFO Training/evaluation parameters TrainingArguments(output_dir=/o, num_train_epochs=3)\n"
           "INFO Process rank: 0, device: cuda:0, distributed training: True\n" + _tb("x = y", func="helper"))
    assert analyse_text(log).stage == "unknown"
    log = "INFO Epoch 1/3\n" + _tb("x = y", func="helper")
    assert analyse_text(log).stage == "training"


def test_syntax_error_is_initialization_even_after_markers():
    log = ("Epoch 1/3\n" + '  File "/w/model.py", line 3\n    print "x"\n    ^\n'
           "SyntaxError: Missing parentheses in call to 'print'\n")
    a = analyse_text(log)
    assert a.category == "syntax_error" and a.stage == "initialization"


def test_module_level_failures_of_different_statements_do_not_merge():
    a = analyse_text(_tb("x = rows[5]", exc="IndexError: list index out of range"))
    b = analyse_text(_tb("y = cols[k + 1]", exc="IndexError: list index out of range"))
    c = analyse_text(_tb("x = rows[7]", exc="IndexError: list index out of range").replace("/w/", "/home/bob/"))
    assert a.fingerprint != b.fingerprint
    assert a.fingerprint == c.fingerprint  # numbers and paths are masked


def test_same_function_different_statements_share_a_fingerprint():
    a = analyse_text(_tb("x = rows[5]", exc="KeyError: 'lr'", func="build"))
    b = analyse_text(_tb("y = cfg['lr']", exc="KeyError: 'lr'", func="build"))
    assert a.fingerprint == b.fingerprint


# grouping:2026-11e: a failure without a frame of the user's code is told apart by other code evidence.
NO_FRAME = "grouping:2026-11e"


def test_one_error_line_printed_by_two_programs_gets_two_signatures():
    detector = "Loading annotations from coco/train.json\nbuilding anchors for 5 feature levels\nIndexError: list index out of range\n"
    speech = "loaded 120 utterances, vocabulary of 512 tokens\nstarting epoch 1\nIndexError: list index out of range\n"
    old = [analyse_text(log, grouping_config="grouping:2026-11d").fingerprint for log in (detector, speech)]
    new = [analyse_text(log, grouping_config=NO_FRAME).fingerprint for log in (detector, speech)]
    assert old[0] == old[1] and new[0] != new[1]


def test_the_same_program_failing_again_keeps_its_signature():
    first = "2026-11-02 10:00:01 INFO epoch 3 step 1200 loss 0.71\nsaving to /ckpt/run-17\nIndexError: list index out of range\n"
    again = ("[rank0]: 2026-11-09 22:14:55 INFO epoch 7 step 88100 loss 0.52\n[rank0]: saving to /ckpt/run-20\n"
             "[rank0]: IndexError: list index out of range\n")
    assert analyse_text(first, grouping_config=NO_FRAME).fingerprint == analyse_text(again, grouping_config=NO_FRAME).fingerprint


def test_library_frames_tell_apart_what_no_user_frame_does():
    def library(function):
        return ("Traceback (most recent call last):\n"
                f'  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 9, in {function}\n'
                "    return hook(self)\nRuntimeError: expected scalar type Float but found Half\n")
    a, b = (analyse_text(library(f), grouping_config=NO_FRAME) for f in ("_call_impl", "load_state_dict"))
    assert a.user_frame == "" and a.fingerprint != b.fingerprint
    assert analyse_text(library("_call_impl"), grouping_config=NO_FRAME).fingerprint == a.fingerprint


def test_a_kill_is_not_told_apart_by_what_the_program_printed():
    kill = "slurmstepd: error: Detected 1 oom_kill event in StepId=6898.0. Some of your processes may have been killed.\n"
    a = analyse_text("epoch 2 of the detector\n" + kill, grouping_config=NO_FRAME)
    b = analyse_text("speech model warming up\n" + kill, grouping_config=NO_FRAME)
    assert a.category == "cpu_oom" and a.fingerprint == b.fingerprint


def test_syntax_error_without_traceback_has_its_location():
    log = '  File "/w/model.py", line 3\n    print "x"\n    ^\nSyntaxError: invalid syntax\n'
    a = analyse_text(log)
    assert a.category == "syntax_error" and a.user_frame == "w/model.py:3"
    other = analyse_text(log.replace('print "x"', "def f(:"))
    assert other.fingerprint != a.fingerprint


def test_notebook_arrow_line_is_the_frame_code():
    from jobs_ingest.core.evidence import find_failures
    from jobs_ingest.core.terminating import terminating_failure
    lines = ["IndexError                                Traceback (most recent call last)",
             "Cell In[12], line 3", "      1 a = [1]", "      2 b = 2", "----> 3 c = a[b]", "",
             "IndexError: list index out of range"]
    f = terminating_failure(find_failures(lines), lines)
    assert f.frames[0].code == "c = a[b]"


def test_a_long_log_without_failure_shows_its_tail_and_uses_the_exit_code(tmp_path):
    """Nothing fails in 3 MB of training output; the kill (exit 137) ended the job, and the excerpt
    is what the job printed last, not the start of the scanned region."""
    path = tmp_path / "killed.log"
    with open(path, "w") as out:
        for step in range(60_000):
            out.write(f"[rank0]: epoch 1 step {step} loss 0.5 lr 3e-4\n")
    analysis = analyse_log(path, exit_code=137)
    assert analysis.category == "cpu_oom" and not analysis.found
    assert analysis.failure_line == "[rank0]: epoch 1 step 59999 loss 0.5 lr 3e-4"
    assert analysis.failure_line_number == 60_000


def test_flattened_torchrun_summary_sigkill_is_cpu_oom():
    # the reporter flattened torchrun's table: "rank2 (local rank: 2)exitcode: -9 (pid: ...)"
    a = analyse_log(FIXTURES / "torchrun_flattened_sigkill.log")
    assert a.category == "cpu_oom"


def test_truncated_tf_traceback_uses_op_requires_status():
    a = analyse_log(FIXTURES / "tf_op_requires_truncated.log")
    assert a.category == "permission_denied" and a.exception_type == "PermissionDeniedError"


@pytest.mark.parametrize("text, category", [
    ("+ python train.py -save_path /data\npython: can't open file 'tra", "path_not_found"),
    ("python3: can't open file '/home/u/train.py': [Errno 2] No such file or directory", "path_not_found"),
    ("failed to RuntimeError: TensorStorage tensor.h 168\ncuda failed with error 2 out of memory. use "
     "CUDA_LAUNCH_BLOCKING=1", "gpu_oom"),
])
def test_failures_without_tracebacks(text, category):
    assert analyse_text(text).category == category


def test_a_cut_log_is_guessed_from_its_last_lines_with_low_confidence():
    a = analyse_text("loading weights\nassert os.path.isfile(args.model), 'Error: no model checkpoint directory found!'")
    assert (a.category, a.found) == ("path_not_found", False)
    assert a.rule.endswith(".unparsed_tail") and a.confidence <= 0.6
    assert analyse_text("epoch 1 loss 0.3\nepoch 2 loss 0.2\n").category == "unclassified"


# The training-side hook's capture line (jobtriage_client prints it when its NaN guard stops a job).
def _capture_line(**fields) -> str:
    import json
    capture = {"v": 1, "guard": "nan", "framework": "pytorch", "reason": "loss is NaN", "step": 412, "epoch": 3,
               "stage": "training",
               "stages": [{"stage": "initialization", "at": "2026-11-23T12:00:00Z", "seconds": 0.0},
                          {"stage": "training", "at": "2026-11-23T12:00:04Z", "seconds": 4.2}],
               "inputs": [{"step": 411, "files": ["shard-07.jsonl"]}, {"step": 412, "files": ["shard-08.jsonl"]}],
               "artifacts": {"dir": "/scratch/cap", "batch": "/scratch/cap/batch-step412.pt",
                             "checkpoint": "/scratch/cap/model-step412.pt", "seeds": {"python": 7, "torch": 7}},
               "replay": "jobtriage replay /scratch/cap"}
    capture.update(fields)
    return "[jobtriage] capture=" + json.dumps(capture)


def _guarded_log(capture_line: str, *, marker: str = "training") -> str:
    return "\n".join([
        "[jobtriage] stage=initialization", "Loading model", f"[jobtriage] stage={marker}",
        "step 410 loss 2.31", "step 411 loss 9.8e+30", capture_line,
        "Traceback (most recent call last):",
        '  File "/work/train.py", line 57, in run_epoch',
        "    guard.check(loss, step=step, batch=batch)",
        '  File "/usr/lib/python3/site-packages/jobtriage_client/guard.py", line 88, in check',
        "    raise FloatingPointError(message)",
        "FloatingPointError: [jobtriage] loss is NaN at step 412", ""])


def test_nan_guard_capture_decides_category_and_stage_and_is_kept():
    line = _capture_line()
    analysis = analyse_text(_guarded_log(line, marker="evaluation"))

    assert analysis.exception_type == "FloatingPointError"
    assert (analysis.category, analysis.rule, analysis.confidence) == ("loss_nan", "loss_nan.hook_nan_guard", 0.99)
    assert analysis.evidence == line
    assert analysis.stage == "training"  # the capture's own stage beats an older marker
    capture = analysis.capture
    assert (capture["guard"], capture["step"], capture["framework"]) == ("nan", 412, "pytorch")
    assert [s["stage"] for s in capture["stages"]] == ["initialization", "training"]
    assert capture["inputs"][-1] == {"step": 412, "files": ["shard-08.jsonl"]}
    assert capture["artifacts"]["seeds"] == {"python": 7, "torch": 7}
    assert capture["artifacts"]["batch"].endswith("batch-step412.pt")
    assert capture["replay"] == "jobtriage replay /scratch/cap"
    assert "v" not in capture  # unknown keys are dropped


def test_capture_is_found_in_the_tail_of_a_big_log():
    body = "".join(f"step {i} loss 2.{i % 97:02d}\n" for i in range(120_000)).encode()  # ~2.4 MB of training
    log = body + _guarded_log(_capture_line(step=120_001)).encode()

    analysis = analyse_log(log)

    assert analysis.category == "loss_nan" and analysis.capture["step"] == 120_001


def test_invalid_capture_json_is_ignored_and_the_log_still_analysed():
    analysis = analyse_text(_guarded_log('[jobtriage] capture={"guard": "nan", "step": 4'))  # cut short

    assert analysis.capture == {}
    assert analysis.exception_type == "FloatingPointError"
    assert analysis.rule != "loss_nan.hook_nan_guard"


def test_capture_without_a_guard_attaches_context_but_keeps_the_tag():
    line = _capture_line(guard="", stage="data_preprocessing")
    log = "\n".join([line, "Traceback (most recent call last):", '  File "/work/train.py", line 3, in <module>',
                     "    open(path)", "FileNotFoundError: [Errno 2] No such file or directory: '/d/x.bin'"])

    analysis = analyse_text(log)

    assert analysis.category == "path_not_found"
    assert analysis.stage == "data_preprocessing"
    assert analysis.capture["inputs"][0]["files"] == ["shard-07.jsonl"]


def test_newest_capture_line_wins():
    log = _guarded_log(_capture_line(step=5) + "\n" + _capture_line(step=9))

    assert analyse_text(log).capture["step"] == 9


def test_hostile_capture_is_bounded_typed_and_json_safe():
    import json

    from jobs_ingest.core.capture import clean_capture
    hostile = {"guard": "nan" * 1000, "reason": ["not", "text"], "step": float("nan"), "epoch": True,
               "stage": "<script>", "stages": [{"stage": "x" * 500, "seconds": float("inf")}] * 500 + ["junk"],
               "inputs": [{"step": 1, "files": ["f" * 5000] * 1000}] * 100 + [7],
               "artifacts": {"batch": 5, "checkpoint": "c" * 9999, "seeds": {str(i): i for i in range(100)},
                             "evil": "<b>"}, "replay": None, "extra": {"deep": [[[[1]]]]}}

    capture = clean_capture(hostile)

    assert len(capture["guard"]) == 32 and "reason" not in capture and "replay" not in capture
    assert "step" not in capture and "epoch" not in capture and "stage" not in capture
    assert len(capture["stages"]) == 50 and capture["stages"][0] == {"stage": "x" * 40, "at": "", "seconds": None}
    assert 0 < len(capture["inputs"]) < 20 and len(capture["inputs"][0]["files"]) == 32
    assert len(capture["inputs"][0]["files"][0]) == 500
    assert set(capture["artifacts"]) == {"checkpoint", "seeds"} and len(capture["artifacts"]["seeds"]) == 10
    assert len(json.dumps(capture, allow_nan=False)) <= 32_000


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
                        st.sampled_from(["guard", "stage", "stages", "inputs", "files", "artifacts", "seeds",
                                         "step", "replay", "at", "seconds", "batch"]) | st.text(max_size=5),
                        inner, max_size=6), max_leaves=40))
def test_any_capture_content_cleans_without_raising(raw):
    import json

    from jobs_ingest.core.capture import clean_capture, find_capture
    capture = clean_capture(raw)
    json.dumps(capture, allow_nan=False)  # storable as jsonb
    line = "[jobtriage] capture=" + json.dumps(raw)
    assert find_capture([line])[1] == capture
