from django.contrib import admin
from django.urls import include, path

from jobtriage import ops
from triage.login import AdminLoginForm, ThrottledLoginView

admin.site.login_form = AdminLoginForm   # the admin's login is throttled like the login page

urlpatterns = [
    path("healthz", ops.healthz, name="healthz"),
    path("metrics", ops.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("jobs_ingest.urls")),
    path("", include("triage.urls")),
]
