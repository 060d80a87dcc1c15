"""Comments on a signature and their `@username` mentions (parsing is pure; sending uses Django's email
backend from a Celery task, so a slow mail server never holds up the page)."""
from __future__ import annotations

import logging
import re

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import mark_safe

log = logging.getLogger("triage.comments")
# Django usernames: letters, digits and @ . + - _. Not after a word character (an email address is not a
# mention); a trailing dot ends the sentence, not the name.
MENTION = re.compile(r"(?<![\w@.+-])@([\w.+-]{1,150})")


def mentioned_names(body: str) -> list[str]:
    """Usernames mentioned in `body`, in order, each once (pure)."""
    seen: dict[str, None] = {}
    for match in MENTION.finditer(body):
        seen.setdefault(match.group(1).rstrip("."), None)
    return [name for name in seen if name]


def render_body(body: str, known: set[str]) -> str:
    """The comment as HTML: escaped, line breaks kept, mentions of real users marked (pure)."""
    def mark(match):
        name = match.group(1).rstrip(".")
        tail = match.group(1)[len(name):]
        return (f'<strong class="mention">@{name}</strong>{tail}' if name in known else match.group(0))
    return mark_safe(MENTION.sub(mark, escape(body)).replace("\n", "<br>"))


def add_comment(signature, user, body: str):
    """Store the comment with its mentions (active users only) and queue their emails after commit."""
    from triage.models import Comment
    names = mentioned_names(body)
    users = list(get_user_model().objects.filter(username__in=names, is_active=True)) if names else []
    with transaction.atomic():
        comment = Comment.objects.create(signature=signature, user=user, body=body)
        if users:
            comment.mentions.set(users)
            transaction.on_commit(lambda: _queue(comment.pk))
    return comment


def _queue(comment_id: int) -> None:
    from triage.tasks import send_mention_emails
    try:
        send_mention_emails.delay(comment_id)
    except Exception:  # broker down: send now rather than never
        log.warning("broker unavailable: sending the mention emails of comment %s in the request", comment_id)
        send_mentions(comment_id)


def send_mentions(comment_id: int) -> int:
    """Email each mentioned user with an address (not the author), once per comment. Returns how many."""
    from triage.models import Comment
    with transaction.atomic():
        comment = (Comment.objects.select_for_update(of=("self",)).select_related("signature", "user")
                   .filter(pk=comment_id, mentions_sent_at__isnull=True).first())
        if comment is None:
            return 0
        author = comment.user.get_username() if comment.user else "someone"
        link = settings.JOBTRIAGE_BASE_URL + reverse("signature-detail", args=[comment.signature_id]) + \
            f"#comment-{comment.pk}"
        recipients = [u.email for u in comment.mentions.exclude(pk=comment.user_id).exclude(email="")
                      .order_by("username")]
        subject = f"[jobtriage] {author} mentioned you: " + " ".join(comment.signature.masked_message.split())[:80]
        text = f"{author} wrote on signature {comment.signature.fingerprint}:\n\n{comment.body}\n\n{link}\n"
        for address in recipients:  # one message each: nobody sees who else was mentioned
            send_mail(subject, text, None, [address])
        comment.mentions_sent_at = timezone.now()
        comment.save(update_fields=["mentions_sent_at"])
    return len(recipients)
