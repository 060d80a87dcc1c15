from django.urls import path

from triage import search_views, views

urlpatterns = [
    path("", views.queue, name="queue"),
    path("signatures/confirm", views.bulk_confirm, name="bulk-confirm"),
    path("signatures/<int:signature_id>/", views.signature_detail, name="signature-detail"),
    path("signatures/<int:signature_id>/judge", views.judge, name="judge"),
    path("signatures/<int:signature_id>/state", views.set_state, name="set-state"),
    path("signatures/<int:signature_id>/fixed-by", views.fixed_by, name="fixed-by"),
    path("jobs/<int:job_id>/", views.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/override", views.override, name="override"),
    path("jobs/<int:job_id>/log", views.job_log, name="job-log"),
    path("search/", search_views.search, name="search"),
]

from triage import views_reports  # noqa: E402  (analytics and weekly reports, issue #5)

urlpatterns += [
    path("analytics/", views_reports.analytics_page, name="analytics"),
    path("reports/", views_reports.report_index, name="report-index"),
    path("reports/<str:week>/", views_reports.weekly_report, name="weekly-report"),
    path("reports/<str:week>/<path:team>/", views_reports.weekly_report, name="weekly-report-team"),
]
