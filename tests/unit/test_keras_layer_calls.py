"""tagging:2026-11zf, rules version 18: an error Keras re-raised from a layer call is read by the error between Keras'
header and the arguments it lists (keras/utils/traceback_utils.py in Keras 2.13+, keras/src/utils/traceback_utils.py
in Keras 3), also inside TF's AutoGraph "in user code:". tagging:2026-11ze is unchanged."""
import pytest

from jobs_ingest.core import analyse_text

OLD, NEW = "tagging:2026-11ze", "tagging:2026-11zf"
HEAD = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    model.fit(x, y)\n'
INCOMPATIBLE = ('Input 0 of layer "dense" is incompatible with the layer: expected axis -1 of input shape to have value '
                "784, but received input with shape (None, 28)")

AUTOGRAPH_KERAS2 = (HEAD + "ValueError: in user code:\n\n"
                    '    File "/usr/lib/python3/site-packages/keras/engine/training.py", line 1160, in train_function  *\n'
                    "        return step_function(self, iterator)\n"
                    '    File "/usr/lib/python3/site-packages/keras/engine/input_spec.py", line 280, in assert_input_compatibility\n'
                    "        raise ValueError(\n\n"
                    "    ValueError: Exception encountered when calling layer 'sequential' (type Sequential).\n\n"
                    f"    {INCOMPATIBLE}\n\n"
                    "    Call arguments received by layer 'sequential' (type Sequential):\n"
                    "      • inputs=tf.Tensor(shape=(None, 28), dtype=float32)\n"
                    "      • training=True\n      • mask=None\n")
EAGER_KERAS3 = (HEAD + "ValueError: Exception encountered when calling Sequential.call().\n\n"
                f"\x1b[1m{INCOMPATIBLE}\x1b[0m\n\n"
                "Arguments received by Sequential.call():\n"
                "  • inputs=tf.Tensor(shape=(None, 28), dtype=float32)\n  • training=True\n  • mask=None\n")

EAGER_KERAS2 = (HEAD + "ValueError: Exception encountered when calling layer 'sequential' (type Sequential).\n\n"
                f"{INCOMPATIBLE}\n\n"
                "Call arguments received by layer 'sequential' (type Sequential):\n"
                "  • inputs=tf.Tensor(shape=(None, 28), dtype=float32)\n")


@pytest.mark.parametrize("log", [AUTOGRAPH_KERAS2, EAGER_KERAS2, EAGER_KERAS3],
                         ids=["autograph keras 2", "eager keras 2", "eager keras 3"])
def test_the_error_inside_keras_layer_call_decides(log):
    new = analyse_text(log, tagging_config=NEW)
    assert (new.category, new.rule) == ("tensor_mismatch", "tensor_mismatch.shape")
    assert new.evidence.startswith('Input 0 of layer "dense" is incompatible')
    assert new.exception_type == "ValueError" and new.tagger_version.startswith("18+")


def test_version_17_read_only_keras_header_inside_autograph():
    old = analyse_text(AUTOGRAPH_KERAS2, tagging_config=OLD)
    assert old.category != "tensor_mismatch"


def test_the_arguments_keras_lists_are_no_part_of_the_error():
    # Only the listed arguments mention shapes and dtypes; the error itself names no cause the rules know.
    log = (HEAD + "ValueError: Exception encountered when calling layer 'block' (type Block).\n\n"
           "The block was built twice.\n\n"
           "Call arguments received by layer 'block' (type Block):\n"
           "  • inputs=tf.Tensor(shape=(None, 28, 28), dtype=float64)\n  • mask=None\n")
    new = analyse_text(log, tagging_config=NEW)
    assert new.category not in ("tensor_mismatch", "type_mismatch", "null_reference")
    assert "Call arguments" not in new.evidence


def test_a_log_cut_before_keras_lists_the_arguments_is_read_by_its_header_alone():
    cut = EAGER_KERAS2.split("Call arguments")[0]
    new, old = analyse_text(cut, tagging_config=NEW), analyse_text(cut, tagging_config=OLD)
    assert (new.category, new.rule) == (old.category, old.rule)
