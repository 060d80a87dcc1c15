"""The OpenAPI 3.1 schema (drf-spectacular) served at /api/v1/schema, checked against real responses of the
real API (PostgreSQL, Elasticsearch): every answer below must validate against the schema the server serves
for that operation and status. And the docs page loads its assets from us, not from a CDN."""
import json

import jsonschema
import pytest

from jobs_ingest import failures
from jobs_ingest.models import Job

from .test_api import OOM_LOG, job, post_json


@pytest.fixture
def schema(client):
    response = client.get("/api/v1/schema", {"format": "json"})
    assert response.status_code == 200
    return json.loads(response.content)


def check(schema, path, method, response, content_type="application/json"):
    """The response validates against the schema of (path, method, its status)."""
    operation = schema["paths"][path][method]
    declared = operation["responses"].get(str(response.status_code))
    assert declared is not None, f"{method.upper()} {path} does not declare status {response.status_code}"
    body_schema = declared["content"][content_type]["schema"]
    validator = jsonschema.Draft202012Validator({**body_schema, "components": schema["components"]})
    errors = sorted(validator.iter_errors(response.json()), key=str)
    assert not errors, [e.message for e in errors]
    return response.json()


def test_the_schema_describes_every_token_endpoint_and_its_security(schema):
    assert schema["openapi"] == "3.1.0"
    assert set(schema["paths"]) == {"/api/v1/jobs", "/api/v1/jobs/{job_id}", "/api/v1/similar"}
    assert schema["components"]["securitySchemes"]["IngestToken"] == {
        **schema["components"]["securitySchemes"]["IngestToken"], "type": "apiKey", "in": "header", "name": "Authorization"}
    submit = schema["paths"]["/api/v1/jobs"]["post"]
    assert {"application/json", "multipart/form-data"} <= set(submit["requestBody"]["content"])
    assert {"202", "207", "400", "401", "403", "409", "413", "415", "429", "503"} <= set(submit["responses"])
    jsonschema.Draft202012Validator.check_schema(schema["components"]["schemas"]["JobSubmissionRequest"])


def test_real_answers_validate_against_the_schema(client, schema, api_token, log_dir, es):
    accepted = check(schema, "/api/v1/jobs", "post", post_json(client, api_token, job(log_text=OOM_LOG)))
    bulk = post_json(client, api_token, [job("2", log_text=OOM_LOG), {"platform": "slurm"}])
    assert bulk.status_code == 207
    check(schema, "/api/v1/jobs", "post", bulk)
    invalid = check(schema, "/api/v1/jobs", "post", post_json(client, api_token, {"platform": "slurm", "gpus": -1}))
    assert set(invalid["fields"]) >= {"external_id", "status", "gpus"}
    check(schema, "/api/v1/jobs", "post", post_json(client, "jt_wrong", job()))
    check(schema, "/api/v1/jobs", "post", client.post("/api/v1/jobs", data="x", content_type="text/plain",
                                                        HTTP_AUTHORIZATION=f"Token {api_token}"))

    status_path = "/api/v1/jobs/{job_id}"
    queued = check(schema, status_path, "get", client.get(f"/api/v1/jobs/{accepted['id']}",
                                                          HTTP_AUTHORIZATION=f"Token {api_token}"))
    failures.analyse(accepted["id"], index_now=True)
    analysed = check(schema, status_path, "get", client.get(f"/api/v1/jobs/{accepted['id']}",
                                                            HTTP_AUTHORIZATION=f"Token {api_token}"))
    assert queued["failure"] is None and analysed["failure"]["category"] == "gpu_oom"
    check(schema, status_path, "get", client.get("/api/v1/jobs/999999", HTTP_AUTHORIZATION=f"Token {api_token}"))

    es.indices.refresh(index=f"{es_prefix_of(client)}-*")
    hits = check(schema, "/api/v1/similar", "post", client.post(
        "/api/v1/similar", data=json.dumps({"text": "CUDA out of memory. Tried to allocate 2.00 GiB"}),
        content_type="application/json", HTTP_AUTHORIZATION=f"Token {api_token}"))
    assert hits["hits"] and hits["hits"][0]["job_id"] == str(accepted["id"])
    check(schema, "/api/v1/similar", "post", client.post("/api/v1/similar", data="{}", content_type="application/json",
                                                          HTTP_AUTHORIZATION=f"Token {api_token}"))
    check(schema, "/api/v1/similar", "post", client.post("/api/v1/similar", data="{}", content_type="application/json"))
    assert Job.objects.count() == 2


def es_prefix_of(client):
    from django.conf import settings
    return settings.ES_INDEX_PREFIX


def test_the_docs_page_serves_its_assets_itself(client):
    page = client.get("/api/v1/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/api/v1/schema" in html and "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn" not in html.lower() and "https://" not in html.split("<body")[0].lower()
