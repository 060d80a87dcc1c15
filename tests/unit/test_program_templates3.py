"""The third round of program templates (tests/fixtures/program_templates3): the array, media, CUDA, distributed, LLM and
configuration libraries, read by six helpers who never saw the product. Rules version 19 (tagging:2026-11zg) were written
from them, and version 20 (tagging:2026-11zh) from what version 19 still left unclassified, so every figure here after
2026-11zf is a training figure; 2026-11zf's is the first read of texts nobody tuned for."""
import pytest

from jobs_ingest.core import analyse_text, tagger
from jobs_ingest.core.taxonomy import CATEGORIES
from tests.devset import raised, template_rows

TEMPLATES = template_rows("program_templates3")
READABLE = [row for row in TEMPLATES if row["category"] in CATEGORIES and row["category"] != "unclassified"]
NEW_RULES = {rule[0] for rule in tagger.RULES_V19_FIRST + tagger.RULES_V19_ADDED + tagger.RULES_V20_ADDED}
CONFIG = "tagging:2026-11zh"
# Where a version 19 or 20 rule answers other than the template's reader, and why.
DISAGREE = {"Unable to find a valid cuDNN algorithm": "GPU memory or a cuDNN mismatch, which the text cannot tell apart; "
                                                      "said plainly, as TF's 'No algorithm worked!' since version 10"}


def test_the_templates_name_their_sources():
    assert len(TEMPLATES) == 433 and len(READABLE) == 405
    assert all(row["source"].strip() and row["template"].strip() and row["example"].strip() for row in TEMPLATES)
    assert {row["category"] for row in TEMPLATES} <= set(CATEGORIES) | {"unclear", "platform"}


def _read(config: str) -> list[bool]:
    return [analyse_text(raised(row["example"]), tagging_config=config).category == row["category"] for row in READABLE]


def test_versions_19_and_20_read_what_version_18_did_not_and_break_none():
    first, v19, v20 = _read("tagging:2026-11zf"), _read("tagging:2026-11zg"), _read(CONFIG)
    assert (sum(first), sum(v19), sum(v20)) == (195, 267, 278)   # 2026-11zf's is the first read, before any rule
    assert not any(a and not b for a, b in [*zip(first, v19), *zip(v19, v20)])


def _analysis(row: dict):
    return analyse_text(raised(row["example"]), tagging_config=CONFIG)


NEW_ROWS = [row for row in READABLE if _analysis(row).rule in NEW_RULES]


@pytest.mark.parametrize("row", NEW_ROWS, ids=lambda row: f"{row['file']}-{row['example'][:50]}")
def test_a_new_rule_reads_its_template_in_its_readers_category(row):
    disagree = next((why for key, why in DISAGREE.items() if key in row["example"]), None)
    analysis = _analysis(row)
    assert analysis.category == ("unclassified" if disagree else row["category"]), analysis.rule


def test_every_new_rule_reads_a_template():
    assert NEW_RULES == {_analysis(row).rule for row in NEW_ROWS} and len(NEW_ROWS) == 84
