from django.urls import path

from jobs_ingest import api_similar, views

urlpatterns = [
    path("jobs", views.submit_job, name="api-jobs"),
    path("jobs/<int:job_id>", views.job_status, name="api-job"),
    path("similar", api_similar.similar_api, name="api-similar"),
]
