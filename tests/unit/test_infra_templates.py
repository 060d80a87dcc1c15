"""Platform failures as their producers word them (tests/fixtures/infra_templates): each message template read in
PyTorch, NCCL, the NVIDIA driver, Slurm, Kubernetes or a storage client is read as the platform's failure in its
category, and each look-alike stays the program's. Infrastructure rules version 8 were written from these templates:
training figures."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from jobs_ingest.core import analyse_text  # noqa: E402
from jobs_ingest.core.infra import CATEGORIES as PLATFORM_CATEGORIES  # noqa: E402
from tests.devset import template_rows  # noqa: E402

# Where the rules answer another platform category than the template's reader chose: both say retry.
OTHER_CATEGORY = {
    "Connection closed by peer": "Gloo's closed or reset TCP pair reads as the network's, as any reset connection",
    "Read error [": "Gloo's closed or reset TCP pair reads as the network's, as any reset connection",
    "socketStartConnect": "NCCL's own socket connect failures read as the collective's",
    "socketPollConnect": "NCCL's own socket connect failures read as the collective's",
    "ephemeral-storage": "a node-pressure eviction reads as the node's, whatever resource ran low",
    "Unable to retrieve completion queue entries": "an EIO from the EFA plugin's completion queue reads as storage's "
                                                   "EIO, which outranks the collective",
}
KNOWN_MISSES = {
    "(NodeDown)": "a pending job's reason: nothing failed yet",
    "LocalEntryNotFoundError": "the Hub unreachable from a node without internet is usually the job's set-up",
    "NVLink training failed": "Fabric Manager is closed source: its example's wording is the reader's, not a source's",
    "will change into status 'Preempt'": "read only in a README's example, not in a source",
}


def _reason(example: str, table: dict) -> str | None:
    return next((why for key, why in table.items() if key in example), None)


def _param(row: dict):
    miss = _reason(row["example"], KNOWN_MISSES)
    marks = pytest.mark.xfail(reason=miss, strict=True) if miss else ()
    return pytest.param(row, id=f"{row['file']}-{row['producer'][:40]}-{row['example'][:30]}", marks=marks)


TEMPLATES = template_rows("infra_templates")


def test_the_templates_name_their_sources():
    assert len(TEMPLATES) >= 150
    assert all(row["source"].strip() and row["template"].strip() and row["example"].strip() for row in TEMPLATES)
    assert {row["category"] for row in TEMPLATES} <= set(PLATFORM_CATEGORIES) | {"program", "unclear"}


@pytest.mark.parametrize("row", [_param(r) for r in TEMPLATES if r["category"] in PLATFORM_CATEGORIES])
def test_a_platform_template_is_the_platforms_failure(row):
    analysis = analyse_text(row["example"])
    assert analysis.category in PLATFORM_CATEGORIES, (analysis.category, analysis.rule)
    assert analysis.fault == "platform" and analysis.retry_advice.startswith("retry")
    if not _reason(row["example"], OTHER_CATEGORY):
        assert analysis.category == row["category"], analysis.rule


@pytest.mark.parametrize("row", [_param(r) for r in TEMPLATES if r["category"] == "program"])
def test_a_look_alike_template_stays_the_programs(row):
    analysis = analyse_text(row["example"])
    assert analysis.category not in PLATFORM_CATEGORIES and analysis.fault == "user", analysis.rule


def test_the_previous_rules_missed_what_version_8_reads():
    rows = [r for r in TEMPLATES if r["category"] in PLATFORM_CATEGORIES and not _reason(r["example"], KNOWN_MISSES)]
    before = sum(analyse_text(r["example"], tagging_config="tagging:2026-11l").category in PLATFORM_CATEGORIES
                 for r in rows)
    now = sum(analyse_text(r["example"]).category in PLATFORM_CATEGORIES for r in rows)
    assert before < now == len(rows)


@pytest.mark.parametrize("example, category", [
    ("srun: error: gpu-node-17: task 3: Out Of Memory", "cpu_oom"),
    ("481516.0      python       gpu        OUT_OF_MEMORY  0:125", "cpu_oom"),
    ("botocore.exceptions.ClientError: An error occurred (404) when calling the HeadObject operation: Not Found",
     "path_not_found"),
    ("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: "
     "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json", "permission_denied"),
    ("ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "framework_api_misuse"),
])
def test_rules_version_11_give_look_alikes_their_program_category(example, category):
    assert any(example == row["example"] or example in row["example"] for row in TEMPLATES)
    assert analyse_text(example).category == category
    assert analyse_text(example, tagging_config="tagging:2026-11m").category == "unclassified"
