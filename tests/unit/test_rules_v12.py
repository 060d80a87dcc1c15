"""Rules version 12 (tagging:2026-11s): each rule from its producer's own text, and typographic quotes read as ASCII.
Every message below is the producer's format with made-up names; the released 2026-11r is unchanged."""
import pytest

from jobs_ingest.core import analyse_text

OLD, NEW = "tagging:2026-11r", "tagging:2026-11s"


@pytest.mark.parametrize("log, category", [
    # argparse's "invalid %(type)s value" names any converter, not only int/float/bool.
    ("train.py: error: argument --max-tokens: invalid typing.Optional[int] value: '4k'\n", "illegal_argument"),
    ("train: error: argument -w/--weights: invalid 'parse_weights' value: 'abc'\n", "illegal_argument"),
    # dash, Debian's /bin/sh, for a program that is not on PATH.
    ("Running preprocessing...\nsh: 1: fairseq-preprocess: not found\n", "library_not_found"),
    # PyTorch's zip checkpoint reader on a file that is not a whole torch.save archive.
    ('Traceback (most recent call last):\n  File "eval.py", line 3, in <module>\n    m = torch.load("ckpt.pt")\n'
     'RuntimeError: Expected hasRecord("version") to be true, but got false.  (Could this error message be improved?)\n',
     "corrupt_data"),
    # c10's size check when a tensor is made.
    ('Traceback (most recent call last):\n  File "model.py", line 9, in forward\n    x = torch.empty(n)\n'
     "RuntimeError: Trying to create tensor with negative dimension -3: [-3]\n", "illegal_argument"),
    # THC's device check in older PyTorch.
    ("RuntimeError: arguments are located on different GPUs at /pytorch/aten/src/THC/generic/THCTensorMath.cu:62\n",
     "framework_api_misuse"),
    # A NameError pasted with typographic quotes.
    ("name ‘AutoTokenizer’ is not defined\n", "undefined_variable"),
])
def test_version_12_reads_what_version_11_left_unclassified(log, category):
    assert analyse_text(log, tagging_config=OLD).category == "unclassified"          # released, unchanged
    new = analyse_text(log, tagging_config=NEW)
    assert new.category == category and new.tagger_version == "12+infra8+ml7+l2"


@pytest.mark.parametrize("log", [
    # Not argparse's: a config value rejected in prose; a shell's "not found" for a file, not a program.
    "ValueError: invalid learning rate value: -1\n",
    "sh: 1: cannot open data/train.txt: No such file\n",
])
def test_version_12_leaves_look_alikes_to_the_older_rules(log):
    assert analyse_text(log, tagging_config=NEW).rule == analyse_text(log, tagging_config=OLD).rule
