# jobtriage web / worker / beat image (see docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=jobtriage.settings \
    JOBTRIAGE_LOG_DIR=/app/media/logs

WORKDIR /app

# Debian's Chromium: kaleido draws the weekly email's charts with it (without it, the email falls back to
# table bars). psycopg[binary] ships its own libpq, so nothing else is needed from the system.
RUN apt-get update -q && apt-get install -y -q --no-install-recommends chromium && rm -rf /var/lib/apt/lists/*

# Dependencies first so that code changes do not invalidate this layer.
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY . .

# Static files are baked into the image (served by WhiteNoise); the key is only for this build step.
RUN DJANGO_SECRET_KEY=collectstatic-only DJANGO_DEBUG=0 python manage.py collectstatic --noinput -v 0

# Unprivileged user. /app/media (uploaded / posted logs) is a volume shared by web and worker;
# creating it here with the right owner makes Docker initialise the named volume with that owner.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/jobtriage jobtriage \
    && mkdir -p /app/media/logs \
    && chown -R jobtriage:jobtriage /app/media
USER jobtriage

EXPOSE 8000
CMD ["gunicorn", "jobtriage.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
