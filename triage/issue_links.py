"""Issue-tracker links (pure; no Django): which URLs may be stored, and the tracker's "new issue" page
pre-filled with a title and body. No API call: the browser opens the tracker's own form, so no token
is ever stored here and the engineer files the issue with their own account."""
from __future__ import annotations

from urllib.parse import quote, urlsplit

MAX_URL = 500
# The body goes in the query string; trackers and proxies refuse very long URLs (GitHub ~8 KB).
MAX_BODY = 3000


class IssueLinkError(ValueError):
    pass


def check_url(url: str) -> str:
    """An http(s) URL with a host, or IssueLinkError: never javascript:, data:, file: or a relative path."""
    url = (url or "").strip()
    if not url:
        return ""
    if len(url) > MAX_URL:
        raise IssueLinkError(f"the URL is longer than {MAX_URL} characters")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise IssueLinkError("the URL contains spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise IssueLinkError("only http:// and https:// links to an issue are accepted")
    return url


def tracker_template(spec: str) -> str:
    """A tracker setting as a URL template with {title} and {body}. Accepted forms:
    github:owner/repo · gitlab:https://host/group/project · jira:https://host/...CreateIssueDetails!init.jspa?pid=..
    · any http(s) URL containing {title} (and optionally {body})."""
    spec = (spec or "").strip()
    if not spec:
        return ""
    kind, _, rest = spec.partition(":")
    if kind == "github" and rest and "//" not in rest:
        owner_repo = rest.strip("/")
        if owner_repo.count("/") != 1:
            raise IssueLinkError("github: needs owner/repo")
        return f"https://github.com/{owner_repo}/issues/new?title={{title}}&body={{body}}"
    if kind == "gitlab":
        check_url(rest)
        return rest.rstrip("/") + "/-/issues/new?issue[title]={title}&issue[description]={body}"
    if kind == "jira":
        check_url(rest)
        return rest + ("&" if "?" in rest else "?") + "summary={title}&description={body}"
    check_url(spec.replace("{title}", "t").replace("{body}", "b"))
    if "{title}" not in spec:
        raise IssueLinkError("a tracker URL template needs {title}")
    return spec


def new_issue_url(spec: str, title: str, body: str) -> str:
    """The tracker's new-issue page with title and body filled in (each URL-encoded), or "" when no
    tracker is configured."""
    template = tracker_template(spec)
    if not template:
        return ""
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY - 1] + "…"
    return template.replace("{title}", quote(title[:200], safe="")).replace("{body}", quote(body, safe=""))


def issue_text(message: str, failure_line: str, link: str, category: str, failures: int,
               gpu_hours: float) -> tuple[str, str]:
    """Title and body of a new issue about a signature."""
    title = " ".join(message.split())[:120]
    body = (f"Failure line:\n\n```\n{failure_line.strip()[:1000]}\n```\n\n"
            f"Category: {category} · {failures} failure{'s' if failures != 1 else ''} · {gpu_hours:.1f} GPU h\n\n"
            f"jobtriage: {link}\n")
    return title, body
