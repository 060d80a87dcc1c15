"""Comment mentions (pure part): which names are mentioned, and the comment as safe HTML."""
from triage.comments import mentioned_names, render_body


def test_mentions_are_found_once_in_order_and_emails_are_not_mentions():
    body = "@bob can you look? cc @alice.smith and @bob again. Mail me at erin@example.com. (@carol)"
    assert mentioned_names(body) == ["bob", "alice.smith", "carol"]
    assert mentioned_names("no one here, not x@y.z") == []
    assert mentioned_names("end of sentence @dave.") == ["dave"]


def test_body_is_escaped_and_only_real_users_are_marked():
    html = render_body("<script>alert(1)</script> @bob and @ghost\nsecond line", {"bob"})
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<strong class="mention">@bob</strong>' in html
    assert "@ghost" in html and 'mention">@ghost' not in html
    assert "<br>second line" in html
