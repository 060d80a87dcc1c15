"""Issue-tracker links (pure): URL checks and pre-filled new-issue pages for GitHub, GitLab, Jira."""
from urllib.parse import parse_qs, urlsplit

import pytest

from triage.issue_links import IssueLinkError, check_url, issue_text, new_issue_url


@pytest.mark.parametrize("url", ["https://github.com/org/repo/issues/12", "http://jira.local/browse/ML-4"])
def test_http_and_https_urls_are_kept(url):
    assert check_url(f"  {url} ") == url


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,<b>", "file:///etc/passwd", "/issues/1",
                                 "ftp://host/x", "https://", "https://host/a b", "https://host/\nx", "x" * 600])
def test_other_urls_are_refused(url):
    with pytest.raises(IssueLinkError):
        check_url(url)


def test_github_new_issue_is_prefilled():
    url = new_issue_url("github:org/repo", "CUDA OOM & more", "line\nhttps://triage/signatures/1/")
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("github.com", "/org/repo/issues/new")
    query = parse_qs(parts.query)
    assert query == {"title": ["CUDA OOM & more"], "body": ["line\nhttps://triage/signatures/1/"]}


def test_gitlab_and_jira_new_issue_pages():
    gitlab = urlsplit(new_issue_url("gitlab:https://gitlab.example.com/ml/train", "t", "b"))
    assert gitlab.path == "/ml/train/-/issues/new"
    assert parse_qs(gitlab.query) == {"issue[title]": ["t"], "issue[description]": ["b"]}
    jira = urlsplit(new_issue_url("jira:https://jira.example.com/secure/CreateIssueDetails!init.jspa?pid=100&issuetype=1",
                                  "t", "b"))
    assert parse_qs(jira.query) == {"pid": ["100"], "issuetype": ["1"], "summary": ["t"], "description": ["b"]}


def test_custom_template_and_no_tracker():
    assert new_issue_url("https://bugs.local/new?s={title}", "a b", "x") == "https://bugs.local/new?s=a%20b"
    assert new_issue_url("", "t", "b") == ""
    with pytest.raises(IssueLinkError):
        new_issue_url("javascript:{title}", "t", "b")


def test_issue_text_has_title_failure_line_and_link_back():
    title, body = issue_text("OutOfMemoryError:  CUDA\nout of memory", "torch.OutOfMemoryError: CUDA out of memory",
                             "https://triage/signatures/7/", "GPU Out of Memory", 3, 64.0)
    assert title == "OutOfMemoryError: CUDA out of memory"
    assert "torch.OutOfMemoryError: CUDA out of memory" in body and "https://triage/signatures/7/" in body
    assert "3 failures" in body and "64.0 GPU h" in body

