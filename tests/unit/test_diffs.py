import pytest

from triage.diffs import DiffError, parse_diff

GOOD = """diff --git a/train.py b/train.py
index 3f2a9c1..8b1d2e0 100644
--- a/train.py
+++ b/train.py
@@ -10,3 +10,4 @@ def main():
     parser = build_parser()
-    batch_size = 64
+    batch_size = 16
+    accumulate = 4
     model = build_model()
\\ No newline at end of file
"""


def test_counts_files_and_kinds():
    diff = parse_diff(GOOD)
    assert diff.files == ["train.py"]
    assert (diff.added, diff.removed) == (2, 1)
    assert [l.kind for l in diff.lines if l.kind in ("add", "del")] == ["del", "add", "add"]
    assert diff.lines[4].kind == "hunk"


def test_crlf_and_multiple_files():
    two = GOOD + "--- a/data.py\n+++ b/data.py\n@@ -1 +1 @@\n-root = '/data'\n+root = os.environ['DATA']\n"
    diff = parse_diff(two.replace("\n", "\r\n"))
    assert diff.files == ["train.py", "data.py"] and diff.added == 3


@pytest.mark.parametrize("text, message", [
    ("", "no hunks"),
    ("just some text about the fix", "not part of a unified diff"),
    ("@@ -1 +1 @@\n-a\n+b\n", "before any"),
    ("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n", "shorter than its header"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", "more lines than"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\x00\n+b\n", "NUL"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n" + "-a\n" * 10 + "x" * (1024 * 1024), "larger than"),
])
def test_invalid_diffs_say_why(text, message):
    with pytest.raises(DiffError, match=message):
        parse_diff(text)
