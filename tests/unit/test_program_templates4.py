"""The fourth round of program templates (tests/fixtures/program_templates4): graph and reinforcement-learning libraries,
3D vision, Hugging Face's models and diffusers, torch.nn, JAX / Flax / Keras 3 / TF, PaddlePaddle, MindSpore and MXNet,
read by six helpers who never saw the product. Rules version 21 (tagging:2026-11zk) were written from them, so every
figure here after 2026-11zj is a training figure; 2026-11zj's is the first read of texts nobody tuned for."""
import pytest

from jobs_ingest.core import analyse_text, tagger
from jobs_ingest.core.taxonomy import CATEGORIES
from tests.devset import raised, template_rows

TEMPLATES = template_rows("program_templates4")
READABLE = [row for row in TEMPLATES if row["category"] in CATEGORIES and row["category"] != "unclassified"]
NEW_RULES = {rule[0] for rule in tagger.RULES_V21_FIRST}
CONFIG = "tagging:2026-11zk"


def test_the_templates_name_their_sources():
    assert len(TEMPLATES) == 491 and len(READABLE) == 469
    assert all(row["source"].strip() and row["template"].strip() and row["example"].strip() for row in TEMPLATES)
    assert {row["category"] for row in TEMPLATES} <= set(CATEGORIES) | {"unclear", "platform"}


def _read(config: str, rows: list[dict]) -> list[bool]:
    return [analyse_text(raised(row["example"]), tagging_config=config).category == row["category"] for row in rows]


def test_version_21_reads_what_version_20_did_not_and_breaks_none():
    first, v21 = _read("tagging:2026-11zj", READABLE), _read(CONFIG, READABLE)
    assert (sum(first), sum(v21)) == (230, 405)   # 2026-11zj's is the first read, before any rule
    assert not any(a and not b for a, b in zip(first, v21))


@pytest.mark.parametrize("folder", ["program_templates", "program_templates3"])
def test_version_21_loses_no_template_of_the_earlier_rounds(folder):
    rows = [row for row in template_rows(folder) if row["category"] in CATEGORIES]
    before, after = _read("tagging:2026-11zj", rows), _read(CONFIG, rows)
    assert not any(a and not b for a, b in zip(before, after))


def _analysis(row: dict):
    return analyse_text(raised(row["example"]), tagging_config=CONFIG)


NEW_ROWS = [row for row in READABLE if _analysis(row).rule in NEW_RULES]


@pytest.mark.parametrize("row", NEW_ROWS, ids=lambda row: f"{row['file']}-{row['example'][:50]}")
def test_a_new_rule_reads_its_template_in_its_readers_category(row):
    assert _analysis(row).category == row["category"]


def test_every_new_rule_reads_a_template():
    assert NEW_RULES == {_analysis(row).rule for row in NEW_ROWS} and len(NEW_ROWS) == 174
