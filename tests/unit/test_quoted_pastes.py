"""tagging:2026-11ze: a log pasted whole in a blockquote (Markdown's and e-mail's "> ") is read as printed, as a
collector's prefix is; a Python prompt and a log with a few quoted lines are left as they are. 2026-11zd is unchanged."""
from jobs_ingest.core import analyse_text
from jobs_ingest.core.collectors import unquoted

OLD, NEW = "tagging:2026-11zd", "tagging:2026-11ze"

LOG = """Traceback (most recent call last):
  File "train.py", line 41, in <module>
    main(cfg)
  File "train.py", line 30, in main
    batch = next(it)
ValueError: num_samples should be a positive integer value, but got num_samples=0
"""


def quoted(text: str) -> str:
    return "".join(f"> {line}\n" if line.strip() else ">\n" for line in text.splitlines())


def test_a_quoted_log_is_read_as_printed_and_shown_as_stored():
    plain, new = analyse_text(LOG, tagging_config=NEW), analyse_text(quoted(LOG), tagging_config=NEW)
    assert (new.category, new.exception_type, new.user_frame, new.fingerprint, new.cluster) == (
        plain.category, plain.exception_type, plain.user_frame, plain.fingerprint, plain.cluster)
    assert new.failure_line.startswith("> ValueError") and new.tagger_version == "17+i16+ml8+l2q"
    old = analyse_text(quoted(LOG), tagging_config=OLD)
    assert old.fingerprint != plain.fingerprint                    # read through the quote, not as printed


def test_only_a_log_quoted_on_most_lines_loses_its_quote():
    assert unquoted(["> a", ">", "> b", "c"]) == ["a", "", "b", "c"]
    assert unquoted(["> a", "b", "c"]) == ["> a", "b", "c"]       # one quoted line in three: a program's output
    assert unquoted([">>> import torch", ">>> torch.zeros(1)", "tensor([0.])"]) == [
        ">>> import torch", ">>> torch.zeros(1)", "tensor([0.])"]  # a Python prompt is no quote
    lines = ["epoch 1", "loss 0.3"]
    assert unquoted(lines) is lines
