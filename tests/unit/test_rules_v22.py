"""tagging:2026-11zm: rules version 22 and three tail readings, written from heldout7 once heldout8 replaced it as the
held-out set (its cases are development data now). Each rule is its producer's words."""
import pytest

from jobs_ingest.core import analyse_text
from tests.devset import raised

NEW, OLD = "tagging:2026-11zm", "tagging:2026-11zk"


@pytest.mark.parametrize("exception_line, category", [
    ("ValueError: matrix contains invalid numeric entries", "loss_nan"),
    ("RuntimeError: grad_scale is too small, exiting: 2.7755575615628914e-17", "loss_nan"),
    ("RuntimeError: reciprocal is not implemented for type torch.cuda.LongTensor", "type_mismatch"),
    ("ValueError: Trying to share variable gru1/gru_cell/gates/kernel, but specified shape (24, 24) and found shape "
     "(120, 120).", "tensor_mismatch"),
    ("RuntimeError: Exception thrown in SimpleITK ImageFileReader_Execute: /work/ITK/Modules/IO/NRRD/src/"
     "itkNrrdImageIO.cxx:292:", "corrupt_data"),
    ("RuntimeError: false INTERNAL ASSERT FAILED at src/sampling.cpp:83, please report a bug to PyTorch. CPU not "
     "supported (furthest_point_sampling at src/sampling.cpp:83)", "framework_api_misuse"),
])
def test_version_22_reads_its_producers_words(exception_line, category):
    assert analyse_text(raised(exception_line), tagging_config=NEW).category == category
    assert analyse_text(raised(exception_line), tagging_config=OLD).category != category


BCE = ("../aten/src/ATen/native/cuda/Loss.cu:115: operator(): block: [130,0,0], thread: [{t},0,0] Assertion "
       "`input_val >= zero && input_val <= one` failed.\n")
INDEX = ("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [5,0,0], thread: [{t},0,0] "
         "Assertion `srcIndex < srcSelectDimSize` failed.\n")


@pytest.mark.parametrize("lines, category", [(BCE, "illegal_argument"), (INDEX, "illegal_index")])
def test_a_log_ending_among_a_kernels_assertions_is_read_as_the_device_side_assert(lines, category):
    log = "epoch 5/9  0.50  1.84\n" + "".join(lines.format(t=t) for t in range(4))
    old, new = analyse_text(log, tagging_config=OLD), analyse_text(log, tagging_config=NEW)
    assert (new.category, new.failure_line_number) == (category, 5) and new.rule.endswith(".kernel_assert")
    assert new.confidence <= 0.7 and new.cluster == old.cluster   # clustered as the device-side assert, as before
    if lines is BCE:   # before, the binary cross-entropy's range check said nothing (an index's read as illegal_index)
        assert old.category == "unclassified"


def test_an_exception_name_cut_after_its_module_path_is_read_by_the_type():
    log = ('  File "execute.py", line 59, in quick_execute\n    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle)\n'
           "tensorflow.python.framework.errors_impl.InvalidA\n")
    assert analyse_text(log, tagging_config=OLD).category == "unclassified"
    assert analyse_text(log, tagging_config=NEW).rule == "illegal_argument.type.InvalidArgumentError.cut_name"


def test_torchscripts_message_under_an_empty_exception_line_is_read_for_the_tag():
    log = ("RuntimeError: \nobject has no attribute sparse_csc_tensor:\n"
           '  File "/env/torch_sparse/tensor.py", line 520\n        return torch.sparse_csc_tensor(colptr, row)\n'
           "               ~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE\n")
    old, new = analyse_text(log, tagging_config=OLD), analyse_text(log, tagging_config=NEW)
    assert (old.category, new.category) == ("unclassified", "attribute_not_found")
    assert (new.message, new.fingerprint) == (old.message, old.fingerprint)   # read for the tag only


@pytest.mark.parametrize("below", ["Traceback (most recent call last):", "launcher: training process exited with code 1",
                                   '  File "a.py", line 3, in f'])
def test_other_lines_under_an_empty_exception_line_are_not_its_message(below):
    log = f'Traceback (most recent call last):\n  File "a.py", line 3, in f\n    g()\nAssertionError: \n{below}\n'
    assert analyse_text(log, tagging_config=NEW).rule == analyse_text(log, tagging_config=OLD).rule
