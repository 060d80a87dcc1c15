"""Comments on a signature; `@username` emails the person mentioned (triage/comments.py)."""
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from triage import comments
from triage.forms import CommentForm
from triage.views.access import triage_required
from triage.views.signatures import EXTRA_CONTEXT, _signature, render_signature


def _context(request, signature, triage):
    rows = list(signature.comments.select_related("user").prefetch_related("mentions"))
    return {"comments": [(c, comments.render_body(c.body, {u.get_username() for u in c.mentions.all()}))
                         for c in rows],
            "comment_form": CommentForm()}


EXTRA_CONTEXT.append(_context)


@require_POST
@triage_required
def add_comment(request, signature_id: int):
    signature = _signature(signature_id)
    form = CommentForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: correct the marked field below.")
        return render_signature(request, signature, comment_form=form, status=400)
    comment = comments.add_comment(signature, request.user, form.cleaned_data["body"])
    mentioned = [u.get_username() for u in comment.mentions.all()]
    messages.success(request, "Comment added." + (f" Notified: {', '.join(mentioned)}." if mentioned else ""))
    return redirect(reverse("signature-detail", args=[signature_id]) + f"#comment-{comment.pk}")
