"""A traceback the log ends inside, whose deepest frame shows the `raise` or `assert` statement that raised
(tagging:2026-11zj): Python prints each frame's source line, so the last one names the exception even when the
exception line itself was not pasted."""
import pytest

from jobs_ingest.core import analyse_text, frameworks

NEW, OLD = "tagging:2026-11zj", "tagging:2026-11zi"
FRAMES = '  File "train.py", line 88, in <module>\n    main()\n  File "/src/utils.py", line 51, in load_weights\n'


@pytest.mark.parametrize("code, expected", [
    ("assert len(wf.read()) == 0, 'failed to read all data'", ("AssertionError", "failed to read all data")),
    ("assert x.shape == y.shape, f\"shapes {x.shape} and {y.shape}\"", ("AssertionError", "shapes {x.shape} and {y.shape}")),
    ("assert False", ("AssertionError", "")),
    ('raise FileNotFoundError(f"No checkpoint found at {path}")', ("FileNotFoundError", "No checkpoint found at {path}")),
    ("raise ValueError(msg) from exc", ("ValueError", "")),
    ("raise torch.cuda.OutOfMemoryError", ("torch.cuda.OutOfMemoryError", "")),
    ("raise e", None), ("raise", None), ("return x", None), ("asserted = True", None),
])
def test_the_statement_names_what_it_raises(code, expected):
    assert frameworks.raised_by_statement(code) == expected


def test_a_cut_traceback_ending_at_an_assert_is_read_as_its_assertion_error():
    log = "Traceback (most recent call last):\n" + FRAMES + "    assert len(wf.read()) == 0, 'failed to read all data'\n"
    old, new = analyse_text(log, tagging_config=OLD), analyse_text(log, tagging_config=NEW)
    assert (old.category, old.rule) == ("unclassified", "unclassified.truncated_traceback")
    assert (new.category, new.rule) == ("illegal_argument", "illegal_argument.type.AssertionError.cut_statement")
    assert new.confidence <= 0.5 and "utils.py:51 in load_weights" in new.evidence
    assert (new.fingerprint, new.cluster) == (old.fingerprint, old.cluster)   # the failure found is the same


def test_a_raise_statement_is_read_by_the_rules_with_its_message():
    log = "Traceback (most recent call last):\n" + FRAMES + '    raise FileNotFoundError(f"No such file or directory: {path}")\n'
    assert analyse_text(log, tagging_config=NEW).category == "path_not_found"


def test_frames_pasted_without_their_header_are_a_cut_traceback_when_they_end_at_the_statement():
    log = "python train.py --weights yolov4.weights\n" + FRAMES + "    assert len(wf.read()) == 0, 'failed to read all data'\n"
    assert analyse_text(log, tagging_config=OLD).rule == "unclassified.no_failure_in_log"
    new = analyse_text(log, tagging_config=NEW)
    assert (new.category, new.failure_line_number) == ("illegal_argument", 5)
    unindented = log.replace("    ", "")                    # as chat and forum pastes lose the indentation
    assert analyse_text(unindented, tagging_config=NEW).category == "illegal_argument"


@pytest.mark.parametrize("log", [
    # headless frames whose deepest line raises nothing: left to the tail's readings, as before
    "python train.py\n" + FRAMES + "    model = build(cfg)\n",
    # the exception line under the frames, indented in a terminal's box: not a frame's code
    "python train.py\n" + FRAMES + "    │self.loader = utils.load_celebA('data')\n    │AttributeError: module 'utils' has no attribute 'load_celebA'\n",
    # faulthandler's dump of a thread's stack is no exception
    'Thread 0x00007f3a (most recent call first):\n  File "a.py", line 3, in f\n    assert ok\n  File "b.py", line 4, in g\n    raise e\n',
    # one frame is not enough to call it a traceback
    'step 10 loss 0.3\n  File "a.py", line 3, in f\n    assert ok, "not ok"\n',
])
def test_other_endings_are_read_as_before(log):
    old, new = analyse_text(log, tagging_config=OLD), analyse_text(log, tagging_config=NEW)
    assert (new.category, new.rule, new.fingerprint) == (old.category, old.rule, old.fingerprint)


def test_an_error_printed_above_is_read_after_the_statement():
    log = ("ERROR: the weights file does not match the model\nTraceback (most recent call last):\n" + FRAMES
           + "    assert ok\n")
    assert analyse_text(log, tagging_config=NEW).rule.endswith(".cut_statement")
