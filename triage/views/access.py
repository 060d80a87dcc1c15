"""Who may do what, enforced on the server, and where a form may send the browser back to."""
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.utils.http import url_has_allowed_host_and_scheme

from triage.roles import can_triage


def triage_required(view):
    """Login, then the triage permission, enforced on the server for every change."""
    @login_required
    def wrapper(request, *args, **kwargs):
        if not can_triage(request.user):
            raise PermissionDenied("Only engineers can triage.")
        return view(request, *args, **kwargs)
    wrapper.__name__ = view.__name__
    return wrapper


def local_next(request, default: str) -> str:
    """The `next` the form asked for if it stays on this site (no open redirect), else `default`."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return default


def reports_required(view):
    """Login first (a redirect), then the reports permission (a 403 for a logged-in user without it)."""
    @login_required
    def wrapper(request, *args, **kwargs):
        if not request.user.has_perm("triage.view_reports"):
            raise PermissionDenied("Reports need the view_reports permission (engineers and managers).")
        return view(request, *args, **kwargs)
    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    return wrapper
