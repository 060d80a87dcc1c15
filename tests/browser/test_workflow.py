"""Issue #17 flows in the browser (Playwright + Debian's Chromium); screenshots under artifacts/screenshots/."""
import re

from django.test import override_settings
from playwright.sync_api import expect

from triage.models import SignatureTriage
from triage.roles import ENGINEERS

from .test_triage_flow import ingest_job

OOM_LOG_B = b"""Traceback (most recent call last):
  File "/home/sam/asr/train.py", line 88, in step
    out = model(batch)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 3 has a total capacity of 39.39 GiB
"""
BAD_DIFF = "--- a/configs/vit.yaml\n+++ b/configs/vit.yaml\n@@ -3,2 +3,3 @@\n-batch_size: 256\n"


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_a_judgment_with_a_bad_diff_keeps_what_was_typed(logged_in_page, shot, tmp_path, settings):
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    ingest_job("7101")
    page = logged_in_page("erin", groups=[ENGINEERS])
    page.locator("a[data-open]").first.click()
    page.select_option("#id_category", "cpu_oom")
    page.fill("#id_notes", "Batch 256 does not fit on 80 GB")
    page.fill("#id_fix_description", "Smaller batch")
    page.fill("#id_fix_diff", BAD_DIFF)
    page.get_by_role("button", name="Save judgment").click()
    expect(page.locator(".messages")).to_contain_text("Nothing was saved")
    expect(page.locator("#id_notes")).to_have_value("Batch 256 does not fit on 80 GB")
    expect(page.locator("#id_fix_description")).to_have_value("Smaller batch")
    expect(page.locator("#id_fix_diff")).to_have_value(BAD_DIFF)
    expect(page.locator("#id_category")).to_have_value("cpu_oom")
    # The error is drawn in the diff field's own block.
    field = page.locator("div", has=page.locator("#id_fix_diff")).last
    expect(field.locator(".errorlist")).to_contain_text("Not a valid unified diff")
    shot("bad-diff-kept", full_page=True)
    # Correct the diff and save: now it is stored.
    page.fill("#id_fix_diff", BAD_DIFF + "+batch_size: 64\n lr: 0.001\n".replace("\n lr", "\n+grad_accumulation: 4\n lr"))
    page.get_by_role("button", name="Save judgment").click()
    expect(page.locator(".messages")).to_contain_text("Judgment saved")
    assert SignatureTriage.objects.get().notes == "Batch 256 does not fit on 80 GB"


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_fixed_by_a_failed_job_warns(logged_in_page, shot, tmp_path, settings):
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    ingest_job("7201")
    good = ingest_job("7202", log=b"epoch 10 done\n", status="succeeded", ended_at="2026-11-17T20:00:00Z")
    failed = ingest_job("7203", log=b"Segmentation fault (core dumped)\n", ended_at="2026-11-17T21:00:00Z",
                        name="other")
    page = logged_in_page("erin", groups=[ENGINEERS])
    page.locator("a[data-open]", has_text="OutOfMemoryError").click()
    expect(page.locator(".candidates li")).to_have_count(1)
    expect(page.locator(".candidates li")).to_contain_text("slurm:7202")
    page.fill("#fixed-by-manual", "slurm:7203")
    page.get_by_role("button", name="Link fixed version").click()
    expect(page.locator("#fixed-by-form .warning")).to_contain_text("did not succeed")
    expect(page.locator("#fixed-by-manual")).to_have_value("slurm:7203")
    shot("fixed-by-warning", full_page=True)
    assert not SignatureTriage.objects.filter(fixed_by__isnull=False).exists()
    page.get_by_role("button", name=re.compile("anyway")).click()
    expect(page.locator(".messages")).to_contain_text("although")
    expect(page.locator(".fixed-by-warning")).to_contain_text("did not succeed")
    assert SignatureTriage.objects.get().fixed_by_id == failed.pk
    # Relink to the suggested successful job: no warning.
    page.locator(".candidates input[type=radio]").check()
    page.get_by_role("button", name="Link fixed version").click()
    expect(page.locator(".messages")).to_contain_text("Linked the fixed version")
    expect(page.locator(".fixed-by-warning")).to_have_count(0)
    assert SignatureTriage.objects.get().fixed_by_id == good.pk


@override_settings(CELERY_TASK_ALWAYS_EAGER=False, JOBTRIAGE_ISSUE_TRACKER="github:ml-org/vit")
def test_issue_link_new_issue_button_and_owner(logged_in_page, shot, tmp_path, settings):
    from urllib.parse import parse_qs, urlsplit
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    ingest_job("7301")
    ingest_job("7302", log=b"Segmentation fault (core dumped)\n", name="other")
    page = logged_in_page("erin", groups=[ENGINEERS])
    page.locator("a[data-open]", has_text="OutOfMemoryError").click()
    # The "new issue" button opens GitHub's own form, pre-filled (no API call from here).
    href = page.locator("a.new-issue").get_attribute("href")
    query = parse_qs(urlsplit(href).query)
    assert href.startswith("https://github.com/ml-org/vit/issues/new?")
    assert "CUDA out of memory" in query["body"][0] and "/signatures/" in query["body"][0]
    expect(page.locator("a.new-issue")).to_have_attribute("target", "_blank")
    # A javascript: link is refused beside its field; an https link is kept.
    page.fill("#id_issue_url", "javascript:alert(1)")
    page.get_by_role("button", name="Save link").click()
    expect(page.locator("#issue-form .errorlist")).to_contain_text("only http:// and https://")
    expect(page.locator("#id_issue_url")).to_have_value("javascript:alert(1)")
    page.fill("#id_issue_url", "https://github.com/ml-org/vit/issues/7")
    page.get_by_role("button", name="Save link").click()
    expect(page.locator(".tracking .issue-link")).to_have_attribute("href", "https://github.com/ml-org/vit/issues/7")
    page.get_by_role("button", name="Assign to me").click()
    expect(page.locator(".tracking .owner")).to_contain_text("erin")
    shot("issue-and-owner", full_page=True)
    # The queue: "Assigned to me" keeps only this signature, with its issue link.
    page.goto("/?state=all")
    expect(page.locator("table.queue tbody tr")).to_have_count(2)
    page.check("input[name=owner]")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"owner=me"))
    expect(page.locator("table.queue tbody tr")).to_have_count(1)
    expect(page.locator("table.queue tbody tr")).to_contain_text("OutOfMemoryError")
    expect(page.locator("table.queue tbody tr .issue-link")).to_have_count(1)
    shot("queue-assigned-to-me")


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_queue_rows_have_a_sparkline_of_failures_per_day(logged_in_page, shot, tmp_path, settings):
    from datetime import timedelta
    from django.utils import timezone
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    for i, days_ago in enumerate([0, 1, 1, 1, 3, 6, 6]):
        ended = now - timedelta(days=days_ago)
        ingest_job(f"74{i:02d}", started_at=(ended - timedelta(hours=2)).isoformat(), ended_at=ended.isoformat())
    page = logged_in_page("erin", groups=[ENGINEERS])
    spark = page.locator("table.queue tbody tr svg.spark").first
    expect(spark).to_be_visible()
    expect(spark).to_have_attribute("aria-label", re.compile(r"^7 failures in the 14 days"))
    assert len(spark.locator("polyline").get_attribute("points").split()) == 14
    box = spark.bounding_box()
    assert box["width"] > 40 and box["height"] > 10
    shot("queue-sparklines")


@override_settings(CELERY_TASK_ALWAYS_EAGER=False, EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
def test_comment_with_a_mention_notifies_by_email(logged_in_page, shot, tmp_path, settings, django_user_model):
    from django.core import mail
    from jobtriage.celery import app
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    ingest_job("7501")
    django_user_model.objects.create_user("bob", email="bob@example.com")
    previous, app.conf.task_always_eager = app.conf.task_always_eager, True
    try:
        mail.outbox = []
        page = logged_in_page("erin", groups=[ENGINEERS])
        page.locator("a[data-open]").first.click()
        page.fill("#id_body", "@bob the batch is too big for 80 GB <b>again</b>")
        page.get_by_role("button", name="Add comment").click()
        expect(page.locator(".messages")).to_contain_text("Notified: bob")
        comment = page.locator(".comments li").first
        expect(comment.locator(".mention")).to_have_text("@bob")
        expect(comment).to_contain_text("<b>again</b>")  # shown as text, never as markup
        expect(page).to_have_url(re.compile(r"#comment-\d+$"))
        shot("comment-mention", full_page=True)
        assert [m.to for m in mail.outbox] == [["bob@example.com"]]
    finally:
        app.conf.task_always_eager = previous


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_queue_by_cluster_and_one_judgment_for_the_cluster(logged_in_page, shot, tmp_path, settings):
    from jobs_ingest.models import Signature
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    a = ingest_job("7601").failure.signature
    b = ingest_job("7602", log=OOM_LOG_B, team="speech").failure.signature
    lone = ingest_job("7603", log=b"Segmentation fault (core dumped)\n", name="other").failure.signature
    assert len({a.pk, b.pk, lone.pk}) == 3
    Signature.objects.filter(pk__in=[a.pk, b.pk]).update(cluster="c-oom", cluster_message="OutOfMemoryError: CUDA out of memory")
    page = logged_in_page("erin", groups=[ENGINEERS])
    page.click("#view-clusters")
    expect(page).to_have_url(re.compile(r"view=cluster"))
    rows = page.locator("table.clusters tbody tr")
    expect(rows).to_have_count(2)
    oom_row = rows.filter(has_text="OutOfMemoryError")
    expect(oom_row.locator("td.num").first).to_have_text("2")
    expect(oom_row).to_contain_text("speech, vision")
    oom_row.locator("summary").click()
    expect(oom_row.locator("details li")).to_have_count(2)
    shot("queue-by-cluster")
    # Filters keep the view; the switch goes back to signatures.
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"view=cluster"))
    # Judge the cluster once: both signatures follow it.
    oom_row = page.locator("table.clusters tbody tr", has_text="OutOfMemoryError")
    oom_row.locator("a[data-open]").click()
    page.select_option("#id_category", "cpu_oom")
    page.fill("#id_notes", "host RAM, not GPU")
    page.get_by_role("button", name="Save cluster judgment").click()
    expect(page.locator(".messages")).to_contain_text("applied to 2 signatures")
    expect(page.locator(".cluster-members .judged-on").first).to_have_text("follows the cluster")
    shot("cluster-page", full_page=True)
    # One signature overrides it on its own page.
    page.locator(".cluster-members a").first.click()
    expect(page.locator(".cluster-link")).to_contain_text("judgment from the cluster")
    page.select_option("#id_category", "gpu_oom")
    page.get_by_role("button", name="Save judgment").click()
    expect(page.locator(".messages")).to_contain_text("Judgment saved")
    page.goto("/?view=cluster&state=all")
    page.locator("table.clusters a[data-open]", has_text="OutOfMemoryError").click()
    expect(page.locator(".cluster-members .judged-on", has_text="own")).to_have_count(1)
    page.click("a:has-text('Triage queue by cluster')")
    page.click("#view-signatures")
    expect(page).not_to_have_url(re.compile(r"view=cluster"))
    expect(page.locator("#bulk-form table.queue tbody tr")).to_have_count(1)  # the open one: both OOMs are triaged
    expect(page.locator("#bulk-form table.queue tbody tr")).to_contain_text("Segmentation fault")


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_merge_from_the_queue_then_split(logged_in_page, shot, tmp_path, settings):
    from jobs_ingest.models import GroupingRule, Signature
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    ingest_job("7701")
    ingest_job("7702", log=OOM_LOG_B, team="speech")
    page = logged_in_page("erin", groups=[ENGINEERS])
    rows = page.locator("#bulk-form table.queue tbody tr")
    expect(rows).to_have_count(2)
    page.check("#select-all")
    page.click("#merge-selected")
    expect(page.locator(".messages")).to_contain_text("Merged 1 signature(s)")
    expect(page.locator(".summary")).to_contain_text("2 failures")
    expect(page.locator("table.grouping-rules")).to_contain_text("Merge")
    expect(page.locator("table.history")).to_contain_text("merged")
    shot("merged", full_page=True)
    page.goto("/")
    expect(rows).to_have_count(1)
    # Split the speech job's failure off again, by a text only its line has.
    page.locator("a[data-open]").first.click()
    page.locator("#regroup summary").click()
    page.fill("#id_contains", "39.39 GiB")
    page.fill("#split-form #id_note", "A100-40GB jobs are a different problem")
    page.get_by_role("button", name="Split off").click()
    expect(page.locator(".messages")).to_contain_text("Split off 1 failure")
    expect(page.locator("h1")).to_contain_text("[split: 39.39 GiB]")
    shot("split", full_page=True)
    # One split rule per automatic fingerprint the signature holds (its own and the merged one's).
    splits = GroupingRule.objects.filter(kind="split", contains="39.39 GiB")
    assert splits.count() == 2 and len({r.target_id for r in splits}) == 1
    assert sorted(Signature.objects.filter(failure_count__gt=0).values_list("failure_count", flat=True)) == [1, 1]
    # A future failure with that text goes to the split-off signature.
    later = ingest_job("7703", log=OOM_LOG_B)
    assert "[split: 39.39 GiB]" in later.failure.signature.masked_message


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_split_an_over_merged_cluster(logged_in_page, shot, tmp_path, settings):
    from jobs_ingest.models import Signature
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    a = ingest_job("7801").failure.signature
    b = ingest_job("7802", log=b"Segmentation fault (core dumped)\n", name="other").failure.signature
    Signature.objects.filter(pk__in=[a.pk, b.pk]).update(cluster="c-mixed", cluster_message="over-merged")
    page = logged_in_page("erin", groups=[ENGINEERS])
    page.goto("/clusters/c-mixed/")
    expect(page.locator(".cluster-members tbody tr")).to_have_count(2)
    page.locator(".cluster-members tbody tr", has_text="Segmentation").locator("input[type=checkbox]").check()
    page.fill("#split-cluster-form input[name=note]", "a segfault is not an OOM")
    page.click("#split-cluster")
    expect(page.locator(".messages")).to_contain_text("Moved 1 signature(s)")
    expect(page).to_have_url(re.compile(r"/clusters/split-[0-9a-f]+/$"))
    expect(page.locator(".cluster-members tbody tr")).to_have_count(1)
    expect(page.locator(".cluster-members")).to_contain_text("Segmentation fault")
    expect(page.locator("h1")).to_contain_text("Segmentation fault")
    shot("cluster-split", full_page=True)
    page.goto("/?view=cluster&state=all")
    expect(page.locator("table.clusters tbody tr")).to_have_count(2)
