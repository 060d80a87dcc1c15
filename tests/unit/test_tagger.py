"""Tagger: the study's 20 categories, DL meaning over generic exception names, advice and evidence."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from jobs_ingest.core import tagger  # noqa: E402
from jobs_ingest.core.taxonomy import CATEGORIES  # noqa: E402

# (exception type, message, expected category): at least one per category of the study.
CASES = [
    ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB", "gpu_oom"),
    ("RuntimeError", "cuda runtime error (2) : out of memory at THCStorage.cu:66", "gpu_oom"),
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError",
     "OOM when allocating tensor with shape[64,256,56,56] and type float on /job:localhost/device:GPU:0", "gpu_oom"),
    ("jaxlib.xla_extension.XlaRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1 bytes.",
     "gpu_oom"),
    ("MemoryError", "", "cpu_oom"),
    ("RuntimeError", "[enforce fail at alloc_cpu.cpp:83] DefaultCPUAllocator: can't allocate memory", "cpu_oom"),
    ("RuntimeError", "DataLoader worker (pid 123) is killed by signal: Killed. ", "cpu_oom"),
    ("RuntimeError", "DataLoader worker (pid(s) 13772, 14988) exited unexpectedly", "cpu_oom"),
    ("RuntimeError", "Trying to backward through the graph a second time", "framework_api_misuse"),
    ("RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "framework_api_misuse"),
    ("FailedPreconditionError", "Attempting to use uninitialized value conv1/weights", "framework_api_misuse"),
    ("ValueError", "Variable rnn/weights already exists, disallowed. Did you mean to set reuse=True", "framework_api_misuse"),
    ("TypeError", "softmax() got an unexpected keyword argument 'axis'", "framework_api_misuse"),
    ("NotFittedError", "This StandardScaler instance is not fitted yet.", "framework_api_misuse"),
    ("RuntimeError", "Error(s) in loading state_dict for ResNet:\n\tMissing key(s) in state_dict: \"fc.weight\"",
     "tensor_mismatch"),
    ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (64x512 and 1024x10)", "tensor_mismatch"),
    ("ValueError", "could not broadcast input array from shape (92,) into shape (181,)", "tensor_mismatch"),
    ("ValueError", "Loss is NaN, stopping training", "loss_nan"),
    ("FloatingPointError", "Minimum loss scale reached (0.0001).", "loss_nan"),
    ("LossNaN", "Loss is nan, stopping training", "loss_nan"),
    ("FileNotFoundError", "[Errno 2] No such file or directory: '/data/train.csv'", "path_not_found"),
    ("tensorflow.python.framework.errors_impl.NotFoundError", "/data/tfrecords; No such file or directory",
     "path_not_found"),
    ("OSError", "Can't load config for '/models/ckpt'. Make sure the path is correct", "path_not_found"),
    ("ModuleNotFoundError", "No module named 'apex'", "library_not_found"),
    ("ImportError", "libcudnn.so.8: cannot open shared object file: No such file or directory", "library_not_found"),
    ("PermissionError", "[Errno 13] Permission denied: '/output/model.pt'", "permission_denied"),
    ("OSError", "[Errno 30] Read-only file system: '/data/cache'", "permission_denied"),
    ("argparse.ArgumentError", "unrecognized arguments: --lr 0.1", "illegal_argument"),
    ("argparse.ArgumentError", "argument --opt: invalid choice: 'adamw' (choose from 'sgd', 'adam')", "illegal_argument"),
    ("ValueError", "learning rate must be positive", "illegal_argument"),
    ("AssertionError", "", "illegal_argument"),
    ("TypeError", "join() argument must be str or bytes, not 'PosixPath'", "type_mismatch"),
    ("RuntimeError", "expected scalar type Long but found Float", "type_mismatch"),
    ("ValueError", "could not convert string to float: 'n/a'", "type_mismatch"),
    ("KeyError", "'optimizer'", "key_not_found"),
    ("AttributeError", "'NoneType' object has no attribute 'shape'", "null_reference"),
    ("TypeError", "'NoneType' object is not subscriptable", "null_reference"),
    ("AttributeError", "module 'tensorflow' has no attribute 'placeholder'", "attribute_not_found"),
    ("SyntaxError", "invalid syntax", "syntax_error"),
    ("IndentationError", "unexpected indent", "syntax_error"),
    ("IndexError", "list index out of range", "illegal_index"),
    ("IndexError", "index out of range in self", "illegal_index"),
    ("TypeError", "list indices must be integers or slices, not str", "illegal_index"),
    ("NameError", "name 'model' is not defined", "undefined_variable"),
    ("UnboundLocalError", "local variable 'x' referenced before assignment", "undefined_variable"),
    ("NotImplementedError", "", "not_implemented"),
    ("ZeroDivisionError", "division by zero", "division_by_zero"),
    ("json.decoder.JSONDecodeError", "Expecting value: line 1 column 1 (char 0)", "corrupt_data"),
    ("OSError", "image file is truncated (3 bytes not processed)", "corrupt_data"),
    ("RuntimeError", "PytorchStreamReader failed reading zip archive: failed finding central directory",
     "corrupt_data"),
    ("EOFError", "Ran out of input", "corrupt_data"),
    ("Exception", "expected value at line 1 column 1", "corrupt_data"),
    ("UnicodeDecodeError", "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
     "unexpected_encoding"),
    ("UnicodeEncodeError", "'ascii' codec can't encode character '\\u2019'", "unexpected_encoding"),
]


@pytest.mark.parametrize("exc_type,message,expected", CASES)
def test_category(exc_type, message, expected):
    assert tagger.tag(exc_type, message).category == expected


def test_every_category_is_covered():
    covered = {expected for _, _, expected in CASES}
    # The platform's categories are found by infra.detect, not by the program rules (tests/unit/test_infra.py).
    assert covered == {c.id for c in CATEGORIES.values() if c.dimension != "infrastructure"} - {"unclassified"}


# Deep-learning meaning wins over the generic exception name.
def test_runtime_error_about_state_dict_is_tensor_mismatch():
    t = tagger.tag("RuntimeError", 'Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: '
                   "copying a param with shape torch.Size([10, 512]) from checkpoint")
    assert t.category == "tensor_mismatch" and t.rule == "tensor_mismatch.checkpoint"


def test_value_error_about_nan_loss_is_loss_nan():
    t = tagger.tag("ValueError", "loss is nan at step 1200")
    assert t.category == "loss_nan"
    assert t.specific


def test_device_side_assert_after_class_assertion_is_illegal_index():
    context = ["/pytorch/aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: "
               "[0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed."]
    t = tagger.tag("RuntimeError", "CUDA error: device-side assert triggered", context)
    assert t.category == "illegal_index"


def test_dataloader_worker_killed_is_cpu_oom():
    t = tagger.tag("RuntimeError", "DataLoader worker (pid 123) is killed by signal: Killed.")
    assert t.category == "cpu_oom"


def test_gpu_oom_is_not_cpu_oom():
    # the study's own example: "cuda runtime error (2) : out of memory" is GPU OOM
    assert tagger.tag("RuntimeError", "cuda runtime error (2) : out of memory").category == "gpu_oom"


def test_key_error_naming_a_path_column_is_key_not_found():
    assert tagger.tag("KeyError", "\"['Image_path'] not found in axis\"").category == "key_not_found"


def test_context_is_only_used_for_native_evidence_categories():
    t = tagger.tag("RuntimeError", "something odd", ["FileNotFoundError: x"])
    assert t.category == "unclassified"


@pytest.mark.parametrize("exc_type,message", [
    ("RuntimeError", "Working outside of application context."),
    ("Exception", "something went wrong"),
    ("", ""),
    ("CustomLibraryError", "the frobnicator refused"),
])
def test_unclassified_when_nothing_fits(exc_type, message):
    t = tagger.tag(exc_type, message)
    assert t.category == "unclassified"
    assert t.confidence <= 0.3
    assert t.rule == "unclassified.no_rule"
    assert not t.specific


RETRY = {
    "gpu_oom": "retry_with_change", "cpu_oom": "retry_with_change", "loss_nan": "retry",
    "path_not_found": "do_not_retry", "library_not_found": "do_not_retry", "syntax_error": "do_not_retry",
    "illegal_argument": "do_not_retry", "permission_denied": "do_not_retry", "tensor_mismatch": "do_not_retry",
}


@pytest.mark.parametrize("exc_type,message,expected", CASES)
def test_retry_advice_rule_and_evidence(exc_type, message, expected):
    t = tagger.tag(exc_type, message)
    assert t.retry_advice == CATEGORIES[expected].retry_advice
    if expected in RETRY:
        assert t.retry_advice == RETRY[expected]
    assert t.rule.startswith(expected + ".")
    assert t.dimension == CATEGORIES[expected].dimension
    assert 0 < t.confidence <= 1
    assert t.evidence and t.evidence in f"{exc_type.rsplit('.', 1)[-1]}: {message}"


def test_evidence_is_the_matching_line_of_a_multiline_message():
    t = tagger.tag("RuntimeError", "Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"a\"")
    assert t.evidence.startswith("RuntimeError: Error(s) in loading state_dict")
    t = tagger.tag("ValueError", "in user code:\n\n    x.py:1 f\n    ValueError: could not broadcast input array")
    assert t.evidence == "ValueError: could not broadcast input array"


def test_type_default_is_marked_not_specific():
    t = tagger.tag("TypeError", "frobnicate() takes 2 positional arguments but 3 were given")
    assert t.category == "type_mismatch" and t.rule == "type_mismatch.type.TypeError" and not t.specific


def test_every_analysis_records_the_tagger_version():
    from jobs_ingest.core import analyse_text
    assert analyse_text("KeyError: 'lr'", tagging_config="tagging:2026-11").tagger_version == tagger.TAGGER_VERSION != ""
    assert analyse_text("KeyError: 'lr'", tagging_config="tagging:2026-11b").tagger_version.startswith(
        tagger.TAGGER_VERSION + "+")
    assert analyse_text("KeyError: 'lr'").tagger_version.startswith(tagger.RULES_V22.version + "+")


def test_long_message_does_not_backtrack():
    import time
    message = ("Expected " + "x" * 50 + " ") * 20000 + "device"
    start = time.perf_counter()
    tagger.tag("RuntimeError", message[:1_000_000])
    # catastrophic backtracking on 1 MB takes hours; speed itself is measured in bench/bench_parse.py
    assert time.perf_counter() - start < 30.0


@pytest.mark.parametrize("exc_type,message,expected", CASES)
def test_fast_lowercase_rules_agree_with_case_insensitive_rules(exc_type, message, expected):
    text = f"{exc_type.rsplit('.', 1)[-1]}: {message}"
    slow = next((rid for rid, _, _, p in tagger.MESSAGE_RULES if p.search(text)), None)
    fast = next((rid for (rid, _, _, _), f in zip(tagger.MESSAGE_RULES, tagger.RULES_V4.fast) if f.search(text.lower())), None)
    assert slow == fast


def test_unicode_that_grows_when_lowercased():
    t = tagger.tag("FileNotFoundError", "İstanbul: No such file or directory: 'İ.csv'")
    assert t.category == "path_not_found" and "No such file" in t.evidence


# Rules added while tuning on the dev sets: each is a pattern of its failure class.
@pytest.mark.parametrize("exc_type,message,expected", [
    ("InvalidArgumentError", "Input to reshape is a tensor with 16 values, but the requested shape has 1",
     "tensor_mismatch"),
    ("ValueError", "Negative dimension size caused by subtracting 2 from 1 for '{{node pool}}'", "tensor_mismatch"),
    ("ValueError", "The feature names should match those that were passed during fit.", "tensor_mismatch"),
    ("ValueError", "Shape of passed values is (4, 1), indices imply (4, 109)", "tensor_mismatch"),
    ("RuntimeError", "stack expects each tensor to be equal size, but got [3, 112, 500] at entry 0", "tensor_mismatch"),
    ("RuntimeError", "Trying to resize storage that is not resizable", "tensor_mismatch"),
    ("ValueError", "Layer count mismatch when loading weights from file. Model expected 13 layers", "tensor_mismatch"),
    ("AxisError", "axis 1 is out of bounds for array of dimension 1", "illegal_index"),
    ("TypeError", "string indices must be integers", "illegal_index"),
    ("ValueError", "invalid literal for int() with base 10: '10,000+'", "type_mismatch"),
    ("RuntimeError", "expected target dtype to be Long or Byte, but got Float", "type_mismatch"),
    ("TypeError", "Trainer.__init__() got an unexpected keyword argument 'gpus'", "type_mismatch"),
    ("TypeError", "softmax() got an unexpected keyword argument 'axis'", "framework_api_misuse"),
    ("RuntimeError", "one of the variables needed for gradient computation has been modified by an inplace "
     "operation. Hint: enable anomaly detection with torch.autograd.set_detect_anomaly(True, check_nan=False).",
     "framework_api_misuse"),
    ("RuntimeError", "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
     "framework_api_misuse"),
    ("NotFoundError", "PruneForTargets: Some target nodes not found: training/group_deps", "framework_api_misuse"),
    ("ExecutableNotFound", "failed to execute ['dot'], make sure the Graphviz executables are on your systems' PATH",
     "library_not_found"),
    ("LookupError", "Resource 'corpora/wordnet' not found.  Please use the NLTK Downloader", "path_not_found"),
    ("OSError", "[Errno 22] Invalid argument: './plots/a: b.png'", "illegal_argument"),
    ("error", "OpenCV(4.8.1) color.cpp:182: error: (-215:Assertion failed) !_src.empty() in function 'cvtColor'",
     "illegal_argument"),
    ("InvalidArgumentError", "Graph execution error:\n\nUnknown image file format. One of JPEG, PNG, GIF, BMP required.",
     "corrupt_data"),
    ("ValueError", "'SVM Ensemble' is not in list", "key_not_found"),
])
def test_tuned_rules(exc_type, message, expected):
    assert tagger.tag(exc_type, message).category == expected


# --- issues2: wordings seen in real issue-tracker logs ---------------------------------------------
@pytest.mark.parametrize("etype,message,category", [
    ("RuntimeError", "Expected object of scalar type Long but got scalar type Float for argument #2 'target' "
                     "in call to _thnn_nll_loss2d_forward", "type_mismatch"),
    ("RuntimeError", " :expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
                     "'weight'", "framework_api_misuse"),
    ("Killed", "Process finished with exit code 137 (interrupted by signal 9:SIGKILL)", "cpu_oom"),
    ("PermissionDeniedError", "/models; Permission denied", "permission_denied"),
    ("Exception", "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.", "loss_nan"),
])
def test_issues2_wordings(etype, message, category):
    assert tagger.tag(etype, message).category == category
