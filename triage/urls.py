from django.urls import path

from triage.views import alerts, analytics, jobs, queue, reports, search, signatures

urlpatterns = [
    path("", queue.queue, name="queue"),
    path("signatures/confirm", queue.bulk_confirm, name="bulk-confirm"),
    path("signatures/<int:signature_id>/", signatures.signature_detail, name="signature-detail"),
    path("signatures/<int:signature_id>/judge", signatures.judge, name="judge"),
    path("signatures/<int:signature_id>/state", signatures.set_state, name="set-state"),
    path("signatures/<int:signature_id>/fixed-by", signatures.fixed_by, name="fixed-by"),
    path("jobs/<int:job_id>/", jobs.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/override", jobs.override, name="override"),
    path("jobs/<int:job_id>/log", jobs.job_log, name="job-log"),
    path("search/", search.search, name="search"),
    path("alerts/", alerts.alerts_page, name="alerts"),
    path("alerts/<int:subscription_id>/delete", alerts.delete_subscription, name="alert-delete"),
    path("alerts/deliveries/", alerts.delivery_log, name="alert-deliveries"),
    path("analytics/", analytics.analytics_page, name="analytics"),
    path("reports/", reports.report_index, name="report-index"),
    path("reports/<str:week>/", reports.weekly_report, name="weekly-report"),
    path("reports/<str:week>/<path:team>/", reports.weekly_report, name="weekly-report-team"),
]
