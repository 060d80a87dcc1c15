"""For operators: `/healthz` (each backing server separately) and Prometheus `/metrics` (django-prometheus's
request and model metrics plus the pipeline's own: ingest lag, queue depth, failed analyses, indexing backlog).

`/healthz` is public (load balancers call it) and says only up or down with a timing per server, never a
URL or an error text. `/metrics` needs `Authorization: Bearer <JOBTRIAGE_METRICS_TOKEN>` or a staff login.
"""
from __future__ import annotations

import hmac
import time
from datetime import timedelta

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from elasticsearch import Elasticsearch
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from jobs_ingest.models import Failure, Job

TIMEOUT = 2.0  # seconds per server: a health check must answer even when a server hangs


def _check_postgresql() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT)


def _check_redis() -> None:
    _redis().ping()


def _check_elasticsearch() -> None:
    client = Elasticsearch(settings.ELASTICSEARCH_URL, request_timeout=TIMEOUT, max_retries=0)
    if client.cluster.health(timeout=f"{int(TIMEOUT)}s")["status"] not in ("green", "yellow"):
        raise RuntimeError("cluster status red")


CHECKS = {"postgresql": _check_postgresql, "redis": _check_redis, "elasticsearch": _check_elasticsearch}


@never_cache
@require_GET
def healthz(request):
    checks, healthy = {}, True
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            check()
            checks[name] = {"ok": True}
        except Exception as exc:  # any failure of a server is "down"; its kind helps, its text may leak
            checks[name] = {"ok": False, "error": type(exc).__name__}
            healthy = False
        checks[name]["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return JsonResponse({"status": "ok" if healthy else "unavailable", "checks": checks},
                        status=200 if healthy else 503)


class PipelineCollector:
    """Read at scrape time from PostgreSQL and the broker: nothing to keep in step, and every web
    process reports the same numbers."""

    NAMES = ("jobtriage_jobs_awaiting_analysis", "jobtriage_indexing_backlog", "jobtriage_jobs_analysis_failed",
             "jobtriage_ingest_lag_oldest_seconds", "jobtriage_ingest_lag_seconds", "jobtriage_queue_depth")

    def describe(self):
        # What registering needs to know, without touching the database at import time.
        return [GaugeMetricFamily(name, name) for name in self.NAMES]

    def collect(self):
        yield from self._database_gauges()
        depth = GaugeMetricFamily("jobtriage_queue_depth", "Tasks waiting in the Celery queue", labels=["queue"])
        queue = getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "celery")
        try:
            depth.add_metric([queue], _redis().llen(queue))
        except redis.RedisError:
            pass  # no sample: the broker is down, which /healthz reports
        yield depth

    @staticmethod
    def _database_gauges():
        now = timezone.now()
        queued = Job.objects.filter(ingest_state=Job.Ingest.QUEUED)
        unindexed = Failure.objects.filter(indexed_at__isnull=True)
        oldest = min((t for t in (queued.order_by("received_at").values_list("received_at", flat=True).first(),
                                  unindexed.order_by("job__received_at").values_list("job__received_at", flat=True).first())
                      if t is not None), default=None)
        yield GaugeMetricFamily("jobtriage_jobs_awaiting_analysis", "Jobs stored but not analysed yet", value=queued.count())
        yield GaugeMetricFamily("jobtriage_indexing_backlog", "Failures analysed but not in Elasticsearch yet",
                                value=unindexed.count())
        yield GaugeMetricFamily("jobtriage_jobs_analysis_failed", "Jobs whose analysis failed (ingest_state=error)",
                                value=Job.objects.filter(ingest_state=Job.Ingest.ERROR).count())
        yield GaugeMetricFamily("jobtriage_ingest_lag_oldest_seconds",
                                "Age of the oldest accepted job that is not searchable yet (0 when none)",
                                value=(now - oldest).total_seconds() if oldest else 0.0)
        recent = (Failure.objects.filter(indexed_at__gte=now - timedelta(minutes=15))
                  .values_list("indexed_at", "job__received_at").order_by("-indexed_at")[:10_000])
        lags = sorted((indexed - received).total_seconds() for indexed, received in recent)
        lag = GaugeMetricFamily("jobtriage_ingest_lag_seconds",
                                "Accepted-to-searchable time of the failures indexed in the last 15 minutes",
                                labels=["quantile"])
        for q in (0.5, 0.95, 0.99):
            if lags:
                lag.add_metric([str(q)], lags[min(len(lags) - 1, int(q * len(lags)))])
        yield lag


_collector = PipelineCollector()
REGISTRY.register(_collector)


def _allowed(request) -> bool:
    token = settings.JOBTRIAGE_METRICS_TOKEN
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if token and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return True
    return bool(getattr(request, "user", None) and request.user.is_active and request.user.is_staff)


@never_cache
@require_GET
def metrics(request):
    if not _allowed(request):
        response = HttpResponse("metrics need 'Authorization: Bearer <JOBTRIAGE_METRICS_TOKEN>' or a staff login\n",
                                status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
