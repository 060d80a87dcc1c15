"""The third round of program templates (tests/fixtures/program_templates3): the array, media, CUDA, distributed, LLM and
configuration libraries, read by six helpers who never saw the product. Rules version 19 (tagging:2026-11zg) were written
from them, so every figure here after 2026-11zf is a training figure; 2026-11zf's is the first read of texts nobody
tuned for."""
import pytest

from jobs_ingest.core import analyse_text, tagger
from jobs_ingest.core.taxonomy import CATEGORIES
from tests.devset import raised, template_rows

TEMPLATES = template_rows("program_templates3")
READABLE = [row for row in TEMPLATES if row["category"] in CATEGORIES and row["category"] != "unclassified"]
V19_RULES = {rule[0] for rule in tagger.RULES_V19_FIRST + tagger.RULES_V19_ADDED}
# Where a version 19 rule answers other than the template's reader, and why.
DISAGREE = {"Unable to find a valid cuDNN algorithm": "GPU memory or a cuDNN mismatch, which the text cannot tell apart; "
                                                      "said plainly, as TF's 'No algorithm worked!' since version 10"}


def test_the_templates_name_their_sources():
    assert len(TEMPLATES) == 433 and len(READABLE) == 405
    assert all(row["source"].strip() and row["template"].strip() and row["example"].strip() for row in TEMPLATES)
    assert {row["category"] for row in TEMPLATES} <= set(CATEGORIES) | {"unclear", "platform"}


def _read(config: str) -> list[bool]:
    return [analyse_text(raised(row["example"]), tagging_config=config).category == row["category"] for row in READABLE]


def test_version_19_reads_what_version_18_did_not_and_breaks_none():
    before, now = _read("tagging:2026-11zf"), _read("tagging:2026-11zg")
    assert (sum(before), sum(now)) == (195, 267)     # 2026-11zf's figure is the first read, before any rule from them
    assert not any(b and not n for b, n in zip(before, now))


def _analysis(row: dict):
    return analyse_text(raised(row["example"]), tagging_config="tagging:2026-11zg")


V19_ROWS = [row for row in READABLE if _analysis(row).rule in V19_RULES]


@pytest.mark.parametrize("row", V19_ROWS, ids=lambda row: f"{row['file']}-{row['example'][:50]}")
def test_a_version_19_rule_reads_its_template_in_its_readers_category(row):
    disagree = next((why for key, why in DISAGREE.items() if key in row["example"]), None)
    analysis = _analysis(row)
    assert analysis.category == ("unclassified" if disagree else row["category"]), analysis.rule


def test_every_version_19_rule_reads_a_template():
    assert V19_RULES == {_analysis(row).rule for row in V19_ROWS} and len(V19_ROWS) == 73
