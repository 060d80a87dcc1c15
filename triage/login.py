"""Login with a brake on password guessing: failed logins are counted per user name and per client
address in the rate limiter's Redis windows. Over either limit the login is refused with a clear
message before the password is even tried, so guessing on cannot tell a right password from a wrong one.
Used by the login page and by the admin's."""
import hashlib

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError

from jobs_ingest import ratelimit


class ThrottledLoginMixin:
    def _limits(self):
        name = (self.data.get("username") or "").strip().casefold()
        window = settings.JOBTRIAGE_LOGIN_WINDOW
        yield "login-user", hashlib.sha256(name.encode()).hexdigest()[:32], settings.JOBTRIAGE_LOGIN_FAILURES_PER_USER, window
        yield "login-address", ratelimit.client_address(self.request), settings.JOBTRIAGE_LOGIN_FAILURES_PER_ADDRESS, window

    def clean(self):
        for scope, identity, limit, window in self._limits():
            decision = ratelimit.check(scope, identity, limit, window)
            if not decision.allowed:
                who = "this account" if scope == "login-user" else "your address"
                raise ValidationError(
                    f"Too many failed logins for {who}. Try again in {decision.retry_after} seconds, "
                    "or ask an administrator to reset your password.", code="throttled")
        try:
            return super().clean()
        except ValidationError:
            for scope, identity, limit, window in self._limits():
                ratelimit.hit(scope, identity, limit, window)
            raise


class LoginForm(ThrottledLoginMixin, AuthenticationForm):
    error_messages = {**AuthenticationForm.error_messages,
                      "invalid_login": "Your username and password did not match. Please try again."}


class AdminLoginForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


class ThrottledLoginView(LoginView):
    form_class = LoginForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if any(e.code == "throttled" for e in form.errors.as_data().get("__all__", [])):
            response.status_code = 429
        return response
