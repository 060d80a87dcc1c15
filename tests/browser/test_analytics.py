"""The analytics page and a weekly report in Chromium: real Plotly figures whose numbers match the
database, a filter changes them, a click on a bar opens the matching failures in the queue."""
import re

from playwright.sync_api import expect

from jobs_ingest.models import Failure
from triage.roles import MANAGERS
from tests.integration.test_analytics import build_dataset


def figure_data(page, name):
    """The traces Plotly actually drew (the div's `data`), as plain JSON."""
    page.wait_for_selector(f'.chart[data-chart="{name}"][data-ready="1"]')
    return page.evaluate(f"""() => document.querySelector('.chart[data-chart="{name}"]').data
        .map(t => ({{name: t.name, x: Array.from(t.x || []), y: Array.from(t.y || [])}}))""")


def test_analytics_figures_match_the_database_filter_and_drill_down(logged_in_page, shot, tmp_path, settings):
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    build_dataset()
    page = logged_in_page("mona", groups=[MANAGERS])
    page.click("text=Analytics")
    expect(page).to_have_url(re.compile(r"/analytics/$"))
    # Plotly (4.8 MB) is parsed before the first figure: allow for a loaded machine.
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    assert page.locator(".js-plotly-plot").count() == 12
    shot("analytics", full_page=True)

    counts, hours = figure_data(page, "category")
    db = {}
    for category, seconds in Failure.objects.values_list("category", "gpu_seconds"):
        n, g = db.get(category, (0, 0.0))
        db[category] = (n + 1, g + seconds / 3600)
    names = {"gpu_oom": "GPU Out of Memory", "path_not_found": "Path Not Found", "illegal_argument": "Illegal Argument"}
    assert dict(zip(counts["y"], counts["x"])) == {names[k]: v[0] for k, v in db.items()}
    assert dict(zip(hours["y"], hours["x"])) == {names[k]: round(v[1], 2) for k, v in db.items()}

    # A filter (team nlp) changes the figures.
    page.select_option("select[name=team]", "nlp")
    with page.expect_navigation():
        page.click("form.filters button[type=submit]")
    counts, hours = figure_data(page, "category")
    assert dict(zip(counts["y"], counts["x"])) == {"GPU Out of Memory": 1, "Illegal Argument": 1}
    assert dict(zip(hours["y"], hours["x"])) == {"GPU Out of Memory": 4.0, "Illegal Argument": 0.5}
    expect(page.locator("#chart-retry .empty")).to_have_text("No failed job in this view was retried.")
    shot("analytics-nlp")

    # Clicking the GPU-hours bar of "GPU Out of Memory" opens those failures in the triage queue.
    page.locator('.chart[data-chart="category"]').scroll_into_view_if_needed()
    bar = page.locator('.chart[data-chart="category"] .subplot.x2y .bars .point path').first
    with page.expect_navigation():
        bar.click(force=True)
    expect(page).to_have_url(re.compile(r"/\?state=all&team=nlp&category=gpu_oom$"))
    expect(page.locator("table.queue tbody tr")).to_have_count(1)
    expect(page.locator("table.queue")).to_contain_text("OutOfMemoryError")
    assert page.errors == []


def test_weekly_report_renders_figures_and_prints(logged_in_page, shot, tmp_path, settings):
    settings.JOBTRIAGE_LOG_DIR = tmp_path
    build_dataset()
    page = logged_in_page("mona", groups=[MANAGERS])
    page.goto("/reports/2026-W47/")
    expect(page.locator("h1")).to_contain_text("Weekly failure report 2026-W47")
    counts, hours = figure_data(page, "trend")
    assert counts["x"] == ["2026-W46", "2026-W47"] and counts["y"] == [1, 3] and hours["y"] == [4.0, 44.5]
    shot("report", full_page=True)
    page.emulate_media(media="print")
    expect(page.locator("header.top")).to_be_hidden()
    shot("report-print", full_page=True)
    assert page.errors == []
