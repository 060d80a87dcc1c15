"""Every page and API endpoint needs authentication: enumerate the URL patterns and try them anonymously."""
import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

PUBLIC = {"login", "logout", "password_reset", "password_reset_done", "password_reset_confirm",
          "password_reset_complete"}
SAMPLE_ARGS = {"int": "1", "str": "2026-W47", "path": "x", "slug": "x"}


def all_routes(resolver=None, prefix=""):
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from all_routes(entry, route)
        elif isinstance(entry, URLPattern):
            yield entry.name, route


def concrete(route: str) -> str:
    route = re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE_ARGS.get(m.group(1) or "str", "1"), route)
    return "/" + route.lstrip("^").rstrip("$").replace("\\Z", "")


ROUTES = [(name, concrete(route)) for name, route in all_routes()
          if name not in PUBLIC and not route.startswith("admin/") and "(?P" not in route]


def test_routes_were_found():
    names = {name for name, _ in ROUTES}
    assert {"queue", "signature-detail", "job-detail", "job-log", "search", "api-jobs", "api-similar",
            "analytics", "weekly-report"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize("name, url", ROUTES)
def test_anonymous_requests_are_refused(client, name, url):
    for method in (client.get, client.post):
        response = method(url)
        if url.startswith("/api/"):
            assert response.status_code in (401, 405), (name, url, response.status_code)
        else:
            assert response.status_code in (302, 405), (name, url, response.status_code)
            if response.status_code == 302:
                assert response["Location"].startswith("/accounts/login/"), (name, url)
