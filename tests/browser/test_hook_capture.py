"""The failure page's "Captured by the jobtriage hook" section in a real browser (Debian Chromium):
a job whose log ends with the hook's capture line goes through the real ingestion path (receive_job,
then the analysis the worker runs) and its page shows the timeline, traced inputs, artifacts and a
replay command that the Copy button puts on the clipboard."""
import io
import json

from playwright.sync_api import expect

from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job

CAPTURE = {"v": 1, "guard": "nan", "framework": "pytorch", "reason": "loss is NaN", "step": 412, "epoch": 3,
           "stage": "training",
           "stages": [{"stage": "initialization", "at": "2026-11-23T08:00:00Z", "seconds": 0.0},
                      {"stage": "data_preprocessing", "at": "2026-11-23T08:00:05Z", "seconds": 5.0},
                      {"stage": "training", "at": "2026-11-23T08:01:00Z", "seconds": 60.0}],
           "inputs": [{"step": 411, "files": ["shard-0041.tar"]},
                      {"step": 412, "files": ["shard-0042.tar", "<img src=x onerror=alert(1)>.tar"]}],
           "artifacts": {"dir": "/scratch/cap/20261123-0801-77", "batch": "/scratch/cap/20261123-0801-77/batch-step412.pt",
                         "checkpoint": "/scratch/cap/20261123-0801-77/model-step412.pt", "seeds": {"python": 7, "torch": 7}},
           "replay": "jobtriage replay /scratch/cap/20261123-0801-77"}
LOG = "\n".join(["[jobtriage] stage=training", "step 411 loss 2.31", "[jobtriage] capture=" + json.dumps(CAPTURE),
                 "Traceback (most recent call last):", '  File "/work/train.py", line 57, in run_epoch',
                 "    guard.check(loss, step=step, batch=batch)",
                 "FloatingPointError: [jobtriage] loss is NaN at step 412", ""])


def ingest(external_id, log, settings, tmp_path):
    settings.JOBTRIAGE_LOG_DIR = tmp_path / "logs"
    spec = parse_job({"platform": "slurm", "external_id": external_id, "status": "failed", "gpus": 2})
    job = services.receive_job(spec, io.BytesIO(log.encode())).job
    failures.analyse(job.pk)  # what the Celery worker runs
    return job


def test_hook_capture_section_renders_escaped_with_a_working_copy_button(logged_in_page, shot, page_errors,
                                                                         settings, tmp_path):
    job = ingest("hooked-1", LOG, settings, tmp_path)
    page = logged_in_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"/jobs/{job.pk}/")

    section = page.locator("#hook-capture")
    expect(section.get_by_role("heading", name="Captured by the jobtriage hook")).to_be_visible()
    expect(section).to_contain_text("loss is NaN at step 412 (epoch 3)")
    expect(section.locator("ol.hook-stages li")).to_have_count(3)
    expect(section.locator("ol.hook-stages li").nth(1)).to_contain_text("Data preprocessing")
    expect(section.locator("table.hook-inputs tbody tr")).to_have_count(2)
    expect(section.locator("table.hook-inputs tbody tr").nth(1)).to_contain_text("<img src=x onerror=alert(1)>.tar")
    expect(section.locator("table.hook-inputs img")).to_have_count(0)  # text, never markup
    expect(section.locator("dl.hook-artifacts")).to_contain_text("batch-step412.pt")
    expect(section.locator("dl.hook-artifacts")).to_contain_text("python=7 torch=7")
    expect(section.locator("pre.replay")).to_have_text(CAPTURE["replay"])
    expect(page.locator(".summary")).to_contain_text("Loss NaN")
    shot("capture", full_page=True)

    page.get_by_role("button", name="Copy command").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == CAPTURE["replay"]
    assert page_errors == []


def test_no_capture_no_section(logged_in_page, settings, tmp_path):
    job = ingest("plain-1", "Traceback (most recent call last):\nKeyError: 'label'\n", settings, tmp_path)
    page = logged_in_page()
    page.goto(f"/jobs/{job.pk}/")
    expect(page.locator("h1")).to_contain_text("slurm:plain-1")
    expect(page.locator("#hook-capture")).to_have_count(0)
