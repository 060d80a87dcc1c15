from django.urls import path

from jobs_ingest import views

urlpatterns = [
    path("jobs", views.submit_job, name="api-jobs"),
    path("jobs/<int:job_id>", views.job_status, name="api-job"),
]
