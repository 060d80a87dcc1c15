"""Smoke tests of the current pages in a real browser (Debian Chromium via Playwright, see conftest.py):
login, the triage queue and its category filter, a signature's page, a job's page with its log excerpt,
what each role sees, and escaping of log text, messages and job names. Read-only: nothing is judged."""
import hashlib
import re
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.models import Attempt, Failure, Job, Signature
from triage.roles import ENGINEERS, MANAGERS


def make_failure(external_id, category="gpu_oom", *, name="train-resnet", team="vision",
                 failure_line="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                 lines_before=("epoch 3/10", "step 1200 loss=0.412", 'File "train.py", line 88, in <module>'),
                 lines_after=("[rank0] exiting",), start_line=40, ended_ago=timedelta(hours=1)):
    """A job with an analysed failure, written with the ORM (as jobs_ingest.failures.analyse would store it)."""
    ended = timezone.now() - ended_ago
    job = Job.objects.create(platform="slurm", external_id=external_id, name=name, submitter="alice", team=team,
                             status="FAILED", exit_code=1, gpus=4, ended_at=ended,
                             command="python train.py --epochs 10", ingest_state=Job.Ingest.ANALYSED)
    Attempt.objects.create(job=job, number=1, started_at=ended - timedelta(hours=2), ended_at=ended, gpus=4,
                           exit_code=1, status="FAILED")
    c = CATEGORIES[category]
    signature = Signature.objects.create(
        fingerprint=hashlib.sha256(f"{external_id}{failure_line}".encode()).hexdigest()[:40],
        normaliser_version="2", exception_type=failure_line.split(":")[0][:255],
        masked_message=failure_line, category=category, confidence=0.9)
    excerpt = [*lines_before, failure_line, *lines_after]
    failure = Failure.objects.create(
        job=job, signature=signature, failure_line=failure_line, failure_line_number=start_line + len(lines_before),
        exception_type=signature.exception_type, message=failure_line, excerpt="\n".join(excerpt),
        excerpt_start_line=start_line, stage="training", gpu_seconds=4 * 7200, category=category,
        dimension=c.dimension, confidence=0.9, rule=f"test-{category}", evidence=failure_line[:60],
        tagger_version="1", retry_advice=c.retry_advice)
    signature.refresh_stats()
    return failure


def rows(page):
    return page.locator("table.queue tbody tr")


def test_login_page_renders_and_rejects_a_wrong_password(page, shot, django_user_model):
    django_user_model.objects.create_user(username="bob", password="right-password-1")
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    expect(page.locator("input[name=username]")).to_be_visible()
    expect(page.locator("input[name=password]")).to_have_attribute("type", "password")
    expect(page.locator(".error")).to_have_count(0)
    expect(page.locator("header nav")).to_have_count(0)
    shot("login")

    page.fill("input[name=username]", "bob")
    page.fill("input[name=password]", "wrong-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".error")).to_have_text(re.compile("did not match"))
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    expect(page.locator("header nav")).to_have_count(0)  # still logged out
    shot("wrong-password")
    assert page.errors == []


def test_queue_shows_signatures_and_logout(logged_in_page, shot):
    make_failure("1001", "gpu_oom", ended_ago=timedelta(hours=2))
    make_failure("1002", "path_not_found", name="eval-bert", team="nlp",
                 failure_line="FileNotFoundError: [Errno 2] No such file or directory: '/data/bert/vocab.txt'")
    page = logged_in_page("carol", groups=[ENGINEERS])
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", name=re.compile("Triage queue"))).to_be_visible()
    expect(rows(page)).to_have_count(2)
    oom = rows(page).filter(has_text="CUDA out of memory")
    expect(oom).to_contain_text("GPU Out of Memory")
    expect(oom).to_contain_text("vision")
    expect(oom.locator(".state")).to_have_text("New")
    expect(oom).to_contain_text("auto 0.90")
    expect(rows(page).filter(has_text="vocab.txt")).to_contain_text("Path Not Found")
    expect(page.locator(".pager")).to_contain_text("(2 signatures)")
    expect(page.locator("header .logout")).to_contain_text("carol")
    expect(page.get_by_role("button", name="Confirm automatic category of selected")).to_be_visible()
    shot("queue")

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    assert page.errors == []


def test_empty_queue(logged_in_page, shot):
    page = logged_in_page()
    expect(page.locator(".empty")).to_contain_text("No signatures match these filters")
    shot("empty-queue")


def test_category_filter_changes_the_queue(logged_in_page, shot):
    make_failure("2001", "gpu_oom")
    make_failure("2002", "path_not_found", failure_line="FileNotFoundError: [Errno 2] No such file: 'x.csv'")
    make_failure("2003", "path_not_found", failure_line="FileNotFoundError: [Errno 2] No such file: 'y.csv'")
    page = logged_in_page()
    expect(rows(page)).to_have_count(3)

    def apply(category):
        page.get_by_label("Category").select_option(category)
        with page.expect_navigation():
            page.get_by_role("button", name="Filter").click()

    apply("path_not_found")
    expect(page).to_have_url(re.compile(r"[?&]category=path_not_found(&|$)"))
    expect(rows(page)).to_have_count(2)
    expect(rows(page).filter(has_text="CUDA out of memory")).to_have_count(0)
    expect(page.get_by_label("Category")).to_have_value("path_not_found")
    shot("filtered")

    apply("gpu_oom")
    expect(rows(page)).to_have_count(1)
    expect(rows(page)).to_contain_text("CUDA out of memory")

    apply("")
    expect(rows(page)).to_have_count(3)

    apply("loss_nan")
    expect(rows(page)).to_have_count(0)
    expect(page.locator(".empty")).to_be_visible()

    page.get_by_role("link", name="reset").click()
    expect(rows(page)).to_have_count(3)
    assert page.errors == []


def test_signature_page_for_an_engineer_and_a_manager(logged_in_page, shot, page):
    failure = make_failure("2501", "gpu_oom")
    make_failure("2502", "path_not_found", failure_line="FileNotFoundError: [Errno 2] No such file: 'x.csv'")
    logged_in_page("erin", groups=[ENGINEERS])
    rows(page).filter(has_text="CUDA out of memory").locator("a[data-open]").click()
    expect(page).to_have_url(re.compile(reverse("signature-detail", args=[failure.signature_id]) + "$"))
    expect(page.locator("h1")).to_contain_text("CUDA out of memory")
    expect(page.locator(".summary .tag")).to_have_text("GPU Out of Memory")
    expect(page.locator("pre.log .line.hit")).to_have_count(1)
    expect(page.get_by_role("link", name="slurm:2501")).to_have_count(2)  # latest failure + table row
    expect(page.get_by_role("button", name="Save judgment")).to_be_visible()
    shot("engineer")
    shot("engineer-full", full_page=True)
    assert page.errors == []

    page.get_by_role("button", name="Log out").click()
    logged_in_page("mona", groups=[MANAGERS])
    page.goto(reverse("signature-detail", args=[failure.signature_id]))
    expect(page.locator("aside")).to_contain_text("only engineers can triage")
    expect(page.get_by_role("button", name="Save judgment")).to_have_count(0)
    shot("manager")
    assert page.errors == []


def test_job_page_shows_the_excerpt_with_the_failure_line_highlighted(logged_in_page, shot):
    failure = make_failure("3001", "gpu_oom", start_line=40)
    page = logged_in_page(groups=[ENGINEERS])
    page.goto(reverse("job-detail", args=[failure.job_id]))
    expect(page.locator("h1")).to_contain_text("slurm:3001")
    expect(page.locator(".summary .tag")).to_have_text("GPU Out of Memory")

    log = page.locator("pre.log").first
    expect(log.locator(".line")).to_have_count(5)
    hit = log.locator(".line.hit")
    expect(hit).to_have_count(1)
    expect(hit.locator(".ln")).to_have_text("43")
    expect(hit).to_contain_text("torch.OutOfMemoryError: CUDA out of memory")
    expect(log.locator(".line").first.locator(".ln")).to_have_text("40")
    # Each excerpt line is on its own row and the hit stands out (another background).
    boxes = [log.locator(".line").nth(i).bounding_box() for i in range(5)]
    assert all(b["y"] < n["y"] for b, n in zip(boxes, boxes[1:])), boxes
    hit_bg = hit.evaluate("e => getComputedStyle(e).backgroundColor")
    plain_bg = log.locator(".line").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert hit_bg != plain_bg
    shot("job")
    shot("job-full", full_page=True)
    assert page.errors == []


def test_missing_job_is_404(logged_in_page):
    page = logged_in_page()
    response = page.goto("/jobs/999999/")
    assert response.status == 404


PAYLOAD_NAME = '<script>alert("name")</script><b>bold-name</b>'
PAYLOAD_LINE = 'ValueError: bad <img src=x onerror="alert(1)"> and <script>alert("line")</script>'
PAYLOAD_BEFORE = '<iframe src="javascript:alert(2)"></iframe> & &amp; "quoted"'


def test_html_in_log_lines_messages_and_job_names_is_shown_escaped(logged_in_page, shot):
    failure = make_failure("4001", "illegal_argument", name=PAYLOAD_NAME, failure_line=PAYLOAD_LINE,
                           lines_before=(PAYLOAD_BEFORE,), lines_after=())
    page = logged_in_page(groups=[ENGINEERS])
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    injected = "main script, main img, main iframe, main b"

    # The queue: the (masked) message as text.
    page.reload()
    expect(rows(page).locator("a[data-open]")).to_have_text(PAYLOAD_LINE)
    expect(page.locator(injected)).to_have_count(0)
    shot("queue")

    # The signature page: message, job name, excerpt.
    rows(page).locator("a[data-open]").click()
    expect(page.locator("h1")).to_have_text(PAYLOAD_LINE)
    expect(page.locator("table.list").first).to_contain_text(PAYLOAD_NAME)
    expect(page.locator("pre.log .line.hit")).to_contain_text(PAYLOAD_LINE)
    expect(page.locator(injected)).to_have_count(0)
    shot("signature")

    # The job page.
    page.goto(reverse("job-detail", args=[failure.job_id]))
    expect(page.locator("h1 .muted")).to_have_text(PAYLOAD_NAME)
    expect(page).to_have_title(re.compile("slurm:4001"))
    log = page.locator("pre.log").first
    expect(log.locator(".line.hit")).to_contain_text(PAYLOAD_LINE)
    expect(log.locator(".line").first).to_contain_text(PAYLOAD_BEFORE)
    expect(page.locator("pre.masked")).to_have_text(PAYLOAD_LINE)
    expect(page.locator("main")).to_contain_text(f"Evidence: {PAYLOAD_LINE[:60]}")
    expect(page.locator(injected)).to_have_count(0)
    shot("job")

    page.wait_for_timeout(300)  # give an injected handler (onerror of a broken image) time to fire
    assert dialogs == []
    assert page.errors == []
