"""The API's docs page in a real browser: Swagger UI, served from the drf-spectacular sidecar (no CDN),
reads /api/v1/schema and lists the three operations; the browser requests nothing from another host."""
from urllib.parse import urlparse

from playwright.sync_api import expect


def test_the_api_docs_page_renders_the_schema_from_our_own_assets(page, live_server, shot, page_errors):
    hosts = set()
    page.on("request", lambda request: hosts.add(urlparse(request.url).netloc))
    page.goto("/api/v1/docs")
    expect(page.locator(".swagger-ui .title")).to_contain_text("jobtriage API")
    for path in ("/api/v1/jobs", "/api/v1/jobs/{job_id}", "/api/v1/similar"):
        expect(page.locator(f".opblock-summary-path[data-path='{path}']").first).to_be_visible()
    expect(page.locator("button.authorize")).to_be_visible()  # the Token scheme
    shot("docs")
    assert hosts == {urlparse(live_server.url).netloc} and page_errors == []
