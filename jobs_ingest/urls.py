from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from jobs_ingest import views
from jobs_ingest.search import api as search_api

urlpatterns = [
    path("jobs", views.JobsView.as_view(), name="api-jobs"),
    path("jobs/<int:job_id>", views.JobStatusView.as_view(), name="api-job"),
    path("similar", search_api.SimilarView.as_view(), name="api-similar"),
    # OpenAPI 3.1 (drf-spectacular) and a page that reads it (Swagger UI from the sidecar package: no CDN).
    path("schema", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
