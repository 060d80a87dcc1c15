"""Rules version 15 (tagging:2026-11y): common producers' texts that no labelled log we hold contains (CPython, h5py,
PyTorch, TensorFlow, tarfile, PyYAML, urllib3), with made-up names; the released 2026-11x is
unchanged."""
import pytest

from jobs_ingest.core import analyse_text
from tests.devset import raised

OLD, NEW = "tagging:2026-11x", "tagging:2026-11y"



@pytest.mark.parametrize("line, category, rule", [
    ("OSError: Unable to open file (unable to lock file, errno = 38, error message = 'Function not implemented')",
     "not_implemented", "not_implemented.hdf5_lock_unsupported"),
    ("OSError: Unable to synchronously open file (unable to lock file, errno = 11, error message = 'Resource "
     "temporarily unavailable')", "unclassified", "unclassified.hdf5_file_locked"),
    ("LookupError: unknown encoding: utf8mb4", "unexpected_encoding", "unexpected_encoding.unknown_encoding"),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 10020). Please update your GPU driver",
     "library_not_found", "library_not_found.gpu_driver_or_build"),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "library_not_found",
     "library_not_found.gpu_driver_or_build"),
    ("RuntimeError: tf.placeholder() is not compatible with eager execution.", "framework_api_misuse",
     "framework_api_misuse.eager_or_view"),
    ("RuntimeError: tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.",
     "framework_api_misuse", "framework_api_misuse.eager_or_view"),
    ("RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans "
     "across two contiguous subspaces). Use .reshape(...) instead.", "framework_api_misuse",
     "framework_api_misuse.eager_or_view"),
    ("tarfile.ReadError: file could not be opened successfully", "corrupt_data", "corrupt_data.archive_or_yaml"),
    ("yaml.scanner.ScannerError: mapping values are not allowed here\n  in \"configs/train.yaml\", line 4, column 9",
     "corrupt_data", "corrupt_data.archive_or_yaml"),
    ("requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='api.example.org', port=443): Read timed out. (read "
     "timeout=10)", "unclassified", "unclassified.read_timed_out"),
])
def test_producers_texts_of_version_15(line, category, rule):
    new = analyse_text(raised(line), tagging_config=NEW)
    assert (new.category, new.rule) == (category, rule)
    assert new.tagger_version == "15+i13+ml7+l2"
    assert analyse_text(raised(line), tagging_config=OLD).rule != rule   # released, unchanged


def test_an_object_stores_read_timeout_is_still_the_platforms():
    line = ("requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. "
            "(read timeout=10)")
    assert analyse_text(raised(line), tagging_config=NEW).category == "storage"
