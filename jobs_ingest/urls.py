from django.urls import path

from jobs_ingest import views
from jobs_ingest.search import api as search_api

urlpatterns = [
    path("jobs", views.submit_job, name="api-jobs"),
    path("jobs/<int:job_id>", views.job_status, name="api-job"),
    path("similar", search_api.similar_api, name="api-similar"),
]
