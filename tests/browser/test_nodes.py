"""The Nodes page in a real browser (#15.4): a manager finds the suspect node at the top, opens its history,
and follows a failure to its job; the job page links its nodes back."""
from datetime import timedelta

from playwright.sync_api import expect

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.models import Failure
from triage.roles import MANAGERS

from .test_pages import make_failure


def platform_failure(external_id, category, host, line, hours_ago):
    failure = make_failure(external_id, category, failure_line=line, ended_ago=timedelta(hours=hours_ago))
    Failure.objects.filter(pk=failure.pk).update(fault="platform", suspect_nodes=[host],
                                                 dimension=CATEGORIES[category].dimension)
    failure.job.nodes = [host, "gpu-b12"]
    failure.job.save(update_fields=["nodes"])
    return failure


def test_a_manager_finds_the_suspect_node_and_its_history(logged_in_page, shot, page_errors):
    for n, hours in enumerate((1, 3, 5)):
        platform_failure(f"x{n}", "gpu_hardware", "gpu-a07",
                         "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", hours)
    platform_failure("n1", "collective_communication", "gpu-c03",
                     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE)", 2)
    program = make_failure("oom1", ended_ago=timedelta(hours=8))  # a program failure there blames no node
    program.job.nodes = ["gpu-a07"]
    program.job.save(update_fields=["nodes"])

    page = logged_in_page(username="mia", groups=[MANAGERS])
    page.click("nav >> text=Nodes")
    rows = page.locator("table.nodes tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("gpu-a07")
    expect(rows.first).to_contain_text("suspect")
    expect(rows.nth(1)).not_to_contain_text("suspect")
    expect(page.locator(".summary")).to_contain_text("1 suspect")
    shot("ranking")

    rows.first.locator("a").click()
    expect(page.locator("#suspect-badge")).to_be_visible()
    history = page.locator("table.node-history tbody tr")
    expect(history).to_have_count(4)
    expect(page.locator("table.node-history")).to_contain_text("named in the failure text")
    expect(page.locator("table.node-history")).to_contain_text("a program failure blames no node")
    shot("history")

    history.first.locator("a").first.click()
    expect(page.locator("a.node-link")).to_have_text(["gpu-a07"])
    assert page_errors == []
