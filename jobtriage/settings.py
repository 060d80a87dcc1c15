"""Settings from environment variables, with development defaults (see docs/CONTRACTS.md)."""
import os
from pathlib import Path

import dj_database_url
from dotenv import load_dotenv

BASE_DIR = Path(__file__).resolve().parent.parent
# scripts/dev.sh and scripts/test.sh write .env (the local servers' URLs and DJANGO_DEBUG=1), so that a
# manage.py typed in any shell reaches the running servers. The process environment wins over the file;
# JOBTRIAGE_ENV_FILE names another file, or none when set empty (production).
ENV_FILE = os.environ.get("JOBTRIAGE_ENV_FILE", str(BASE_DIR / ".env"))
if ENV_FILE:
    load_dotenv(ENV_FILE, override=False)


def env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, "1" if default else "0").strip().lower() in ("1", "true", "yes", "on")


# Off unless asked for: the README's two commands (scripts/dev.sh, scripts/test.sh) set DJANGO_DEBUG=1.
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or (
    "dev-only-insecure-key-set-DJANGO_SECRET_KEY-in-production" if DEBUG else None)
if not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off (DJANGO_DEBUG=1 for local development)")
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,testserver").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_prometheus",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "jobs_ingest",
    "triage",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "jobtriage.urls"

# The token APIs (jobs_ingest/views.py, search/api.py) are Django REST framework views: JSON only, no browsable
# API; authentication, the per-token throttle and the error bodies are in jobs_ingest/rest.py.
REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],   # each API view names its own (jobs_ingest/views.py)
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "jobs_ingest.rest.api_exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "jobtriage API",
    "DESCRIPTION": "Submit failed training jobs with their logs, follow their analysis, and search similar past "
                   "failures. Errors are JSON: {\"error\": message, ...}. See docs/ingest.md.",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],  # the shape of the API, no data
    "SERVE_AUTHENTICATION": [],
    "REDOC_DIST": "SIDECAR",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [BASE_DIR / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
WSGI_APPLICATION = "jobtriage.wsgi.application"

# Health checks: a persistent connection broken by a PostgreSQL restart is replaced before use
# instead of failing the next request or task.
DATABASES = {"default": dj_database_url.parse(
    os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"), conn_max_age=60, conn_health_checks=True)}
# Connection pooling (docs/scaling.md): DATABASE_POOL=1 gives each process a psycopg pool of at most
# DATABASE_POOL_MAX_SIZE connections (Django's pool replaces persistent connections: CONN_MAX_AGE 0).
if env_bool("DATABASE_POOL", False) and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1, "max_size": int(os.environ.get("DATABASE_POOL_MAX_SIZE", 10)), "timeout": 10}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# plotly.js comes from the installed `plotly` package (jobtriage/staticfinders.py), never a CDN.
STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder",
                       "django.contrib.staticfiles.finders.AppDirectoriesFinder",
                       "jobtriage.staticfinders.PlotlyFinder"]
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", BASE_DIR / "staticfiles"))

# Logs received by the API or copied by ingest_dir are kept here; the database holds their path.
JOBTRIAGE_LOG_DIR = Path(os.environ.get("JOBTRIAGE_LOG_DIR", BASE_DIR / "media" / "logs"))
JOBTRIAGE_MAX_LOG_BYTES = int(os.environ.get("JOBTRIAGE_MAX_LOG_BYTES", 2 * 1024 ** 3))
# Request bodies above this size stream to a temporary file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("JOBTRIAGE_MAX_JSON_BYTES", 64 * 1024 * 1024))

ELASTICSEARCH_URL = os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:59200")
ES_INDEX_PREFIX = os.environ.get("ES_INDEX_PREFIX", "jobtriage")
# Index layout (docs/scaling.md): 1 primary shard holds millions of failures; replicas need as many more
# Elasticsearch nodes (0 on one node, else the index stays yellow) and are applied to existing indices too.
ES_SHARDS = int(os.environ.get("ES_SHARDS", 1))
ES_REPLICAS = int(os.environ.get("ES_REPLICAS", 0))

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:56379/0")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # a killed worker's task is redelivered, not lost
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A task taken by a worker that died without acknowledging it goes back to the queue after this
# many seconds. It must exceed the longest task (a 2 GiB log); the fault tests set it short.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", 3600))}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Analysis in batches (jobs_ingest/tasks.py): at most this many jobs per batch, gathered for at most this
# many seconds after the first one arrives.
JOBTRIAGE_BATCH_SIZE = int(os.environ.get("JOBTRIAGE_BATCH_SIZE", 500))
JOBTRIAGE_BATCH_WAIT = float(os.environ.get("JOBTRIAGE_BATCH_WAIT", 0.5))
# Learning from triage (#14.2): an analysis the rules are unsure about takes the category people gave its
# nearest judged signatures when those agree (jobs_ingest/core/judged.py); one search request per batch.
JOBTRIAGE_LEARN_FROM_TRIAGE = env_bool("JOBTRIAGE_LEARN_FROM_TRIAGE", True)
JOBTRIAGE_API_MAX_BATCH = int(os.environ.get("JOBTRIAGE_API_MAX_BATCH", 500))  # jobs per bulk API request
# With the broker down, publishing gives up after about a second (the job is already stored and
# requeue_pending queues it later) instead of holding the API request for the default ~20 s.
CELERY_BROKER_CONNECTION_TIMEOUT = float(os.environ.get("CELERY_BROKER_CONNECTION_TIMEOUT", 1.0))
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}

# Rate limits of the ingestion API (POST /api/v1/jobs, GET /api/v1/jobs/<id>, POST /api/v1/similar
# with a token), fixed windows counted in Redis; 0 = no limit. If Redis is unreachable requests are
# allowed and a warning is logged.
JOBTRIAGE_RATE_LIMIT_PER_TOKEN = int(os.environ.get("JOBTRIAGE_RATE_LIMIT_PER_TOKEN", 1200))
JOBTRIAGE_RATE_LIMIT_ANONYMOUS = int(os.environ.get("JOBTRIAGE_RATE_LIMIT_ANONYMOUS", 60))
JOBTRIAGE_RATE_LIMIT_WINDOW = int(os.environ.get("JOBTRIAGE_RATE_LIMIT_WINDOW", 60))
JOBTRIAGE_RATE_LIMIT_REDIS_URL = os.environ.get("JOBTRIAGE_RATE_LIMIT_REDIS_URL", CELERY_BROKER_URL)
JOBTRIAGE_RATE_LIMIT_KEY_PREFIX = os.environ.get("JOBTRIAGE_RATE_LIMIT_KEY_PREFIX", "jobtriage:ratelimit")
# Failed logins (the login page and the admin's) counted per user name and per client address in the
# same Redis windows; over either limit the login is refused without trying the password.
JOBTRIAGE_LOGIN_FAILURES_PER_USER = int(os.environ.get("JOBTRIAGE_LOGIN_FAILURES_PER_USER", 10))
JOBTRIAGE_LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("JOBTRIAGE_LOGIN_FAILURES_PER_ADDRESS", 30))
JOBTRIAGE_LOGIN_WINDOW = int(os.environ.get("JOBTRIAGE_LOGIN_WINDOW", 900))
# Prometheus scrapes /metrics with `Authorization: Bearer <this>` (empty: only staff logins may read it).
JOBTRIAGE_METRICS_TOKEN = os.environ.get("JOBTRIAGE_METRICS_TOKEN", "")
# Reverse proxies in front of the app that append to X-Forwarded-For (0 = use REMOTE_ADDR).
JOBTRIAGE_TRUSTED_PROXIES = int(os.environ.get("JOBTRIAGE_TRUSTED_PROXIES", 0))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {"jobs_ingest": {"handlers": ["console"], "level": "INFO"},
                "triage": {"handlers": ["console"], "level": "INFO"}},
}

# Production (DJANGO_DEBUG=0): HTTPS only, secure cookies, HSTS; `manage.py check --deploy` is clean
# with these defaults (tested in tests/integration/test_auth_required.py). Each can be relaxed by
# environment for a deployment that needs it.
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", 3600))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", True)
    STORAGES = {"default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
                "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}

# Beat re-queues what a broker or Elasticsearch outage left behind (jobs stored but never analysed,
# failures never indexed) that have waited longer than JOBTRIAGE_REQUEUE_AFTER seconds.
CELERY_BEAT_SCHEDULE = {
    "requeue-pending": {"task": "jobs_ingest.tasks.requeue_pending",
                        "schedule": float(os.environ.get("JOBTRIAGE_REQUEUE_EVERY", 300)),
                        "kwargs": {"older_than_seconds": int(os.environ.get("JOBTRIAGE_REQUEUE_AFTER", 120))}},
}

# Weekly failure reports by email (issue #5). The SMTP server and sender come from the environment.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", 25))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", 30))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "jobtriage <jobtriage@localhost>")
# Issue trackers (#17): the site's default for the "new issue" button (a team's own setting wins):
# github:owner/repo, gitlab:https://host/group/project, jira:<create URL>, or a URL with {title} and {body}.
JOBTRIAGE_ISSUE_TRACKER = os.environ.get("JOBTRIAGE_ISSUE_TRACKER", "")
# A signature nobody owns is assigned to the failing job's team (when that team exists here).
JOBTRIAGE_AUTO_ASSIGN_BY_TEAM = env_bool("JOBTRIAGE_AUTO_ASSIGN_BY_TEAM", False)
# The weekly email's charts as PNG images drawn by kaleido with the machine's Chromium (0 = table bars only).
JOBTRIAGE_EMAIL_CHART_IMAGES = env_bool("JOBTRIAGE_EMAIL_CHART_IMAGES", True)
JOBTRIAGE_EMAIL_CHART_TIMEOUT = float(os.environ.get("JOBTRIAGE_EMAIL_CHART_TIMEOUT", 120))
JOBTRIAGE_BASE_URL = os.environ.get("JOBTRIAGE_BASE_URL", "http://localhost:8000").rstrip("/")
# When the beat sends each team's report for the last complete ISO week: "minute hour day_of_week" (UTC).
JOBTRIAGE_REPORT_SCHEDULE = os.environ.get("JOBTRIAGE_REPORT_SCHEDULE", "0 7 mon")


def _report_crontab():
    from celery.schedules import crontab
    minute, hour, day_of_week = (JOBTRIAGE_REPORT_SCHEDULE.split() + ["*", "*", "*"])[:3]
    return crontab(minute=minute, hour=hour, day_of_week=day_of_week)


CELERY_BEAT_SCHEDULE["weekly-reports"] = {"task": "triage.tasks.send_weekly_reports", "schedule": _report_crontab()}

# Alerts (issue #17, docs/alerts.md): one alert per subscription and thing per window; failed deliveries
# are retried with exponential backoff (base, 2*base, ... capped at an hour) up to MAX_ATTEMPTS.
JOBTRIAGE_ALERT_WINDOW_HOURS = int(os.environ.get("JOBTRIAGE_ALERT_WINDOW_HOURS", 24))
JOBTRIAGE_ALERT_NEW_DAYS = int(os.environ.get("JOBTRIAGE_ALERT_NEW_DAYS", 7))  # "new" = first seen this recently
JOBTRIAGE_ALERT_SPIKE_MIN_FAILURES = int(os.environ.get("JOBTRIAGE_ALERT_SPIKE_MIN_FAILURES", 3))
JOBTRIAGE_ALERT_MAX_ATTEMPTS = int(os.environ.get("JOBTRIAGE_ALERT_MAX_ATTEMPTS", 6))
JOBTRIAGE_ALERT_RETRY_BASE_SECONDS = int(os.environ.get("JOBTRIAGE_ALERT_RETRY_BASE_SECONDS", 30))
JOBTRIAGE_ALERT_WEBHOOK_TIMEOUT = float(os.environ.get("JOBTRIAGE_ALERT_WEBHOOK_TIMEOUT", 10))
# Suspect nodes (#15, docs/infrastructure.md): a node blamed by at least this many platform failures from at
# least this many different jobs within the window is marked suspect (Nodes page, `suspect_node` alerts).
JOBTRIAGE_SUSPECT_NODE_FAILURES = int(os.environ.get("JOBTRIAGE_SUSPECT_NODE_FAILURES", 3))
JOBTRIAGE_SUSPECT_NODE_JOBS = int(os.environ.get("JOBTRIAGE_SUSPECT_NODE_JOBS", 2))
JOBTRIAGE_SUSPECT_NODE_WINDOW_HOURS = float(os.environ.get("JOBTRIAGE_SUSPECT_NODE_WINDOW_HOURS", 24))
CELERY_BEAT_SCHEDULE["retry-pending-alerts"] = {"task": "triage.tasks.retry_pending_alerts", "schedule": 300.0}

# The analytics rollups (triage/rollups.py) are PostgreSQL-only; their "NULLS NOT DISTINCT" unique keys do
# not exist on the SQLite zero-setup default, where the charts read the raw tables instead.
SILENCED_SYSTEM_CHECKS = ["models.W047"]
