from django.urls import path

from triage import views

urlpatterns = [
    path("", views.failure_list, name="failure-list"),
    path("jobs/<int:job_id>/", views.job_detail, name="job-detail"),
]
