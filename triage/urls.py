from django.urls import path

from triage.views import analytics, clusters, comments, grouping, jobs, queue, reports, search, signatures, tracking

urlpatterns = [
    path("", queue.queue, name="queue"),
    path("signatures/confirm", queue.bulk_confirm, name="bulk-confirm"),
    path("signatures/merge", grouping.merge_selected, name="merge-selected"),
    path("signatures/<int:signature_id>/merge", grouping.merge_into, name="merge-into"),
    path("signatures/<int:signature_id>/split", grouping.split, name="split"),
    path("signatures/<int:signature_id>/", signatures.signature_detail, name="signature-detail"),
    path("signatures/<int:signature_id>/judge", signatures.judge, name="judge"),
    path("signatures/<int:signature_id>/state", signatures.set_state, name="set-state"),
    path("signatures/<int:signature_id>/fixed-by", signatures.fixed_by, name="fixed-by"),
    path("signatures/<int:signature_id>/issue", tracking.issue_link, name="issue-link"),
    path("signatures/<int:signature_id>/assign", tracking.assign, name="assign"),
    path("signatures/<int:signature_id>/comment", comments.add_comment, name="add-comment"),
    path("clusters/<str:cluster>/", clusters.cluster_detail, name="cluster-detail"),
    path("clusters/<str:cluster>/judge", clusters.judge_cluster, name="cluster-judge"),
    path("clusters/<str:cluster>/issue", clusters.cluster_issue, name="cluster-issue"),
    path("clusters/<str:cluster>/assign", clusters.cluster_assign, name="cluster-assign"),
    path("clusters/<str:cluster>/split", clusters.split_cluster, name="cluster-split"),
    path("jobs/<int:job_id>/", jobs.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/override", jobs.override, name="override"),
    path("jobs/<int:job_id>/log", jobs.job_log, name="job-log"),
    path("search/", search.search, name="search"),
    path("analytics/", analytics.analytics_page, name="analytics"),
    path("reports/", reports.report_index, name="report-index"),
    path("reports/<str:week>/", reports.weekly_report, name="weekly-report"),
    path("reports/<str:week>/<path:team>/", reports.weekly_report, name="weekly-report-team"),
]
