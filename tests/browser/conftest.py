"""Browser-test fixtures: Playwright (sync API) driving Debian's Chromium against pytest-django's
``live_server`` (a real HTTP server thread on the real PostgreSQL, transactional DB).

Never a downloaded browser: Chromium is /usr/bin/chromium from the Debian package (scripts/test.sh
installs it as root when missing). If it is missing the tests FAIL, they are never skipped.

Fixtures (all only for tests under tests/browser):

* ``browser``        -- package-scoped headless Chromium (started once for tests/browser, stopped after
                        its last test, before any other test of the session runs).
* ``page``           -- a fresh context + page per test, viewport 1280x800, ``base_url`` = the live
                        server, so ``page.goto("/")`` works. A screenshot is saved on failure to
                        artifacts/screenshots/<test>-failure.png. JavaScript errors are collected in
                        ``page_errors`` (a list); tests may assert it is empty.
* ``shot``           -- ``shot("list")`` saves artifacts/screenshots/<test>-list.png and returns its path
                        (``full_page=True`` for the whole page).
* ``logged_in_page`` -- factory: ``logged_in_page(username="alice", groups=[triage.roles.ENGINEERS],
                        permissions=["triage.view_reports"], is_staff=False)`` creates the user (groups
                        are created if missing, permissions looked up as "app_label.codename"), logs in
                        through the real login form and returns ``page``, on the page after login (the
                        triage queue). Pass ``user=`` to log in an existing user. The user is ``page.user``.
                        Call it again after "Log out" to switch users in the same page.
* ``live_server``    -- pytest-django's; every browser test using ``page`` uses it (and so the
                        transactional DB: rows created in the test are committed and the server sees them).
"""
import os
import re
import shutil
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PASSWORD = "browser-test-pw-1"  # noqa: S105 -- a throwaway test password

# This machine's network is closed: without the background-networking flags Chromium keeps trying (and
# failing) to reach Google's hosts. --no-sandbox: CI runs as root, where the sandbox cannot start.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(path, os.X_OK):
        pytest.fail("browser tests need Debian's Chromium at /usr/bin/chromium (apt-get install -y chromium; "
                    "scripts/test.sh does it when run as root). Not skipped on purpose.", pytrace=False)
    return path


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:120]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    # Only called for items under tests/browser (a conftest hook). Keeps each phase's report on the
    # item so that the ``page`` fixture can tell, at teardown, whether the test failed.
    report = yield
    setattr(item, f"_report_{report.when}", report)
    return report


@pytest.fixture(scope="package")
def _allow_db_under_playwright_loop():
    """Playwright's sync API runs an asyncio event loop in this (the main) thread -- in a greenlet, but
    asyncio's "running loop" is per thread, so the loop counts as running from ``sync_playwright().start()``
    until ``stop()``. Django then refuses every ORM call made by the test itself (creating rows, the
    transactional_db flush at teardown) with SynchronousOnlyOperation, although nothing here is async.
    DJANGO_ALLOW_ASYNC_UNSAFE turns that check off. It is set only while tests/browser runs (this
    fixture is package-scoped and restores the previous value), so the rest of the suite keeps Django's
    check. The live server answers requests in its own threads, where no loop runs."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="package")
def browser(_allow_db_under_playwright_loop):
    """Headless Debian Chromium, once for all of tests/browser. Package scope (not session): Playwright's
    loop must be stopped before tests outside tests/browser run (see above)."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS,
                                             chromium_sandbox=False, timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


@pytest.fixture
def page(browser, live_server, request, es_prefix):  # es_prefix: a private search index per test
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 800},
                                  locale="en-US", timezone_id="UTC")
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(error))
    try:
        yield page
    finally:
        report = getattr(request.node, "_report_call", None)
        if report is not None and report.failed and not page.is_closed():
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            path = ARTIFACTS / f"{_safe(request.node.name)}-failure.png"
            try:
                page.screenshot(path=str(path), full_page=True)
                print(f"screenshot of the failing page: {path}")  # shown with the failure's output
            except Exception as exc:  # the page may be gone; the test's own failure matters more
                print(f"could not save a screenshot of the failing page: {exc}")
        context.close()


@pytest.fixture
def page_errors(page):
    """JavaScript errors (uncaught exceptions) raised in ``page`` so far."""
    return page.errors


@pytest.fixture
def shot(page, request):
    def shot(name: str, full_page: bool = False) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{_safe(request.node.name)}-{_safe(name)}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path
    return shot


@pytest.fixture
def logged_in_page(page, django_user_model):
    from django.contrib.auth.models import Group, Permission

    def login(username: str = "alice", *, groups=(), permissions=(), is_staff: bool = False,
              is_superuser: bool = False, user=None):
        if user is None:
            user = django_user_model.objects.create_user(username=username, password=PASSWORD,
                                                         is_staff=is_staff, is_superuser=is_superuser)
        else:
            user.set_password(PASSWORD)
            user.save()
        for name in groups:
            user.groups.add(Group.objects.get_or_create(name=name)[0])
        for perm in permissions:
            app_label, _, codename = perm.partition(".")
            try:
                user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
            except Permission.DoesNotExist:
                pytest.fail(f"no permission {perm!r} (expected 'app_label.codename')")
        page.goto("/accounts/login/")
        page.fill("input[name=username]", user.get_username())
        page.fill("input[name=password]", PASSWORD)
        with page.expect_navigation():
            page.click("button[type=submit]")
        if "/accounts/login/" in page.url:
            pytest.fail(f"login through the form failed for {user.get_username()!r}: still on {page.url}")
        page.user = user
        return page

    return login
