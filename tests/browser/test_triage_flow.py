"""A whole triage flow in the browser, and what a manager may not do. Jobs are ingested through the
real services (log stored, analysed by the pure core, stored in PostgreSQL)."""
import io
import re

import pytest

from django.test import override_settings
from playwright.sync_api import expect

from jobs_ingest import failures as analysis, services as ingest
from jobs_ingest.jobspec import parse_job
from triage.models import JudgmentEvent, SignatureTriage
from triage.roles import ENGINEERS, MANAGERS

OOM_LOG = b"""epoch 2 step 400 loss 0.91
Traceback (most recent call last):
  File "/home/alice/vit/train.py", line 120, in train_one_epoch
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 79.15 GiB
"""
DIFF = """--- a/configs/vit.yaml
+++ b/configs/vit.yaml
@@ -3,2 +3,3 @@
-batch_size: 256
+batch_size: 64
+grad_accumulation: 4
 lr: 0.001
"""


def ingest_job(external_id, log=OOM_LOG, **fields):
    data = {"platform": "slurm", "external_id": external_id, "status": "failed", "name": "vit-pretrain",
            "submitter": "alice", "team": "vision", "gpus": 8, "started_at": "2026-11-16T08:00:00Z",
            "ended_at": "2026-11-16T12:00:00Z", **fields}
    job = ingest.receive_job(parse_job(data), io.BytesIO(log)).job
    analysis.analyse(job.pk)
    return job


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_engineer_triages_a_signature_end_to_end(logged_in_page, shot, tmp_path, settings):
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    failed = ingest_job("7001")
    ingest_job("7002", submitter="bob")
    fixed = ingest_job("7003", log=b"epoch 10 done\n", status="succeeded", started_at="2026-11-17T08:00:00Z",
                       ended_at="2026-11-17T20:00:00Z")
    page = logged_in_page("erin", groups=[ENGINEERS])

    # The queue shows the signature with its cost; j then Enter opens it.
    row = page.locator("table.queue tbody tr").first
    expect(row).to_contain_text("OutOfMemoryError")
    expect(row).to_contain_text("GPU Out of Memory")
    expect(row.locator("td.num").nth(1)).to_have_text("64.0")  # 2 jobs x 8 GPUs x 4 h
    shot("queue")
    page.keyboard.press("j")
    expect(row).to_have_class(re.compile("focused"))
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/signatures/\d+/$"))

    # Open one failure from the signature, see its log with the failure line highlighted.
    page.get_by_role("link", name="slurm:7001").first.click()
    expect(page.locator("pre.log .hit")).to_contain_text("CUDA out of memory")
    expect(page.locator("pre.log .user-frame")).to_contain_text("train.py")
    shot("failure")
    page.get_by_role("link", name=re.compile("Triage the whole signature")).click()

    # Correct the category, record root cause, notes, fix and diff.
    page.select_option("#id_category", "cpu_oom")
    expect(page.locator("#id_root_cause")).to_have_value("inappropriate_model_params")  # pre-selected
    page.fill("#id_notes", "Batch 256 does not fit on 80 GB with ViT-L")
    page.fill("#id_fix_description", "Smaller batch with gradient accumulation")
    page.fill("#id_fix_diff", DIFF)
    page.get_by_role("button", name="Save judgment").click()
    expect(page.locator(".messages")).to_contain_text("Judgment saved")
    expect(page.locator(".summary .state")).to_have_text("Resolved")
    expect(page.locator(".diff-head")).to_contain_text("+2")
    expect(page.locator(".diff-head")).to_contain_text("−1")
    expect(page.locator("pre.diff .d-add").first).to_have_text("+batch_size: 64")

    # Link the suggested fixed job.
    candidate = page.locator(".candidates li", has_text="slurm:7003")
    expect(candidate).to_contain_text("same submitter and job name")
    candidate.locator("input[type=radio]").check()
    page.get_by_role("button", name="Link fixed version").click()
    expect(page.locator("p", has_text="Fixed by:")).to_contain_text("slurm:7003")

    # History shows who changed what.
    history = page.locator("table.history")
    expect(history).to_contain_text("erin")
    expect(history).to_contain_text("cpu_oom")
    expect(history).to_contain_text("fixed_by")
    shot("signature-after-triage", full_page=True)

    triage = SignatureTriage.objects.get(signature__failures__job=failed)
    assert (triage.category, triage.root_cause, triage.state, triage.fixed_by_id) == (
        "cpu_oom", "inappropriate_model_params", "resolved", fixed.pk)
    assert JudgmentEvent.objects.filter(user__username="erin").count() >= 6


def test_manager_reads_but_cannot_triage(logged_in_page, shot, tmp_path, settings):
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    ingest_job("8001")
    page = logged_in_page("mona", groups=[MANAGERS])
    expect(page.locator("#select-all")).to_have_count(0)  # no bulk-confirm for managers
    page.locator("a[data-open]").first.click()
    expect(page.get_by_text("only engineers can triage")).to_be_visible()
    expect(page.locator("form[action$='/judge']")).to_have_count(0)
    shot("manager-signature")
    # Even a hand-made POST is refused by the server.
    url = page.url + "judge"
    status = page.evaluate("""async (url) => {
        const token = document.cookie.split('; ').find(c => c.startsWith('csrftoken=')).split('=')[1];
        const r = await fetch(url, {method: 'POST', headers: {'X-CSRFToken': token},
                                    body: new URLSearchParams({category: 'cpu_oom'})});
        return r.status; }""", url)
    assert status == 403
    assert not SignatureTriage.objects.exists()


def test_search_box_shortcut(logged_in_page):
    page = logged_in_page("erin", groups=[ENGINEERS])
    page.keyboard.press("/")
    expect(page.locator("#global-search")).to_be_focused()


def test_search_from_the_header_finds_similar_failures(logged_in_page, tmp_path, settings, es_prefix):
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    failed = ingest_job("9001")
    from jobs_ingest.search import index as search_index
    from jobs_ingest.search.sync import index_failures
    index_failures([failed.failure.pk])
    # Search is near-real-time: make the failure and signature documents visible now, not at the next refresh.
    search_index.make_client(settings.ELASTICSEARCH_URL).indices.refresh(index=f"{settings.ES_INDEX_PREFIX}-*")
    page = logged_in_page("erin", groups=[ENGINEERS])
    page.keyboard.press("/")
    page.keyboard.type("CUDA out of memory. Tried to allocate 1.00 GiB")
    page.keyboard.press("Enter")
    expect(page.locator("table.similar tbody tr").first).to_contain_text("OutOfMemoryError")
    expect(page.locator("table.similar tbody tr").first).to_contain_text("slurm:9001")
