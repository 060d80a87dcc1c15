#!/usr/bin/env python3
"""Load N GENERATED jobs (bench/workload.py) fast into PostgreSQL and Elasticsearch, for benchmarks.

    eval "$(scripts/servers.sh env)"
    .venv/bin/python bench/load_workload.py --jobs 100000 --seed 1 \\
        --database-url postgres://jobtriage:jobtriage@127.0.0.1:55432/jobtriage_bench_load --es-prefix benchload --reset

PostgreSQL: jobs, attempts, signatures and failures are streamed with COPY in batches (one transaction per
batch, ids reserved from the tables' own sequences, so concurrent writers are safe); signature counters
(failure_count, gpu_seconds, first_seen, last_seen) are accumulated while loading and written once at the
end, added to what the signatures already had. Memory stays bounded: one batch of jobs plus one small
entry per distinct signature. Elasticsearch: the failures index is rebuilt from PostgreSQL with
``search_index.rebuild`` (new index, alias swap), the documents built by ``search.projection.failure_documents``.

The jobs are generated (``extra.generated = true``, platforms ``*-gen``); never load them into a
database people use: ``--reset`` truncates the jobs_ingest tables (and, by cascade, the triage rows that
point at them) and is refused unless the database name contains "bench" or ``--yes-really`` is given.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--jobs", type=int, default=10_000, help="number of jobs to generate and load")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weeks", type=int, default=8, help="ISO weeks spanned, ending 2026-11-22")
    p.add_argument("--failed-share", type=float, default=None,
                   help="share of failed jobs (default: the Alibaba openb trace's, about 0.26)")
    p.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    p.add_argument("--es-prefix", default=os.environ.get("ES_INDEX_PREFIX", "jobtriage"))
    p.add_argument("--batch", type=int, default=5_000, help="jobs per COPY batch (5-10k)")
    p.add_argument("--es-chunk", type=int, default=2_000, help="documents per Elasticsearch bulk request")
    p.add_argument("--skip-es", action="store_true", help="load PostgreSQL only")
    p.add_argument("--index-only", action="store_true",
                   help="load nothing: (re)build the Elasticsearch index from what the database holds")
    p.add_argument("--reset", action="store_true", help="truncate the jobs_ingest tables first")
    p.add_argument("--yes-really", action="store_true", help="allow --reset on a database without 'bench' in its name")
    return p.parse_args(argv)


def setup_django(database_url: str | None, es_prefix: str) -> None:
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ["ES_INDEX_PREFIX"] = es_prefix
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobtriage.settings")
    import django
    django.setup()


# Column order of each COPY (the tables' own column names).
JOB_COLUMNS = ("id", "platform", "external_id", "name", "submitter", "team", "status", "submitted_at",
               "started_at", "ended_at", "gpus", "exit_code", "signal", "command", "code_version", "image",
               "log_path", "log_bytes", "log_sha256", "extra", "ingest_state", "ingest_error", "received_at",
               "updated_at")
ATTEMPT_COLUMNS = ("id", "job_id", "number", "started_at", "ended_at", "gpus", "exit_code", "status")
SIGNATURE_COLUMNS = ("id", "fingerprint", "normaliser_version", "exception_type", "masked_message", "category",
                     "confidence", "first_seen", "last_seen", "failure_count", "gpu_seconds", "teams", "created_at")
FAILURE_COLUMNS = ("id", "job_id", "signature_id", "found", "failure_line", "failure_line_number",
                   "exception_type", "message", "traceback", "user_frame", "excerpt", "excerpt_start_line",
                   "stage", "gpu_seconds", "category", "dimension", "confidence", "rule", "evidence",
                   "tagger_version", "retry_advice", "analysed_at", "indexed_at")


def defaulted_columns(model, listed: tuple[str, ...]) -> list[tuple[str, object]]:
    """(column, value) of the model's columns that are not listed but have a default, as COPY takes them."""
    from django.db import models
    extra = []
    for f in model._meta.concrete_fields:
        if f.column in listed or not f.has_default():
            continue
        value = f.get_default()
        extra.append((f.column, json.dumps(value) if isinstance(f, models.JSONField) else value))
    return extra


def _clean(text: str) -> str:
    return text.replace("\x00", "") if "\x00" in text else text  # PostgreSQL text cannot hold NUL


class Loader:
    def __init__(self, connection, batch: int):
        from jobs_ingest.models import Attempt, Failure, Job, Signature
        self.connection, self.batch = connection, batch
        self.tables = {m: m._meta.db_table for m in (Job, Attempt, Signature, Failure)}
        self.job_t, self.attempt_t = self.tables[Job], self.tables[Attempt]
        self.signature_t, self.failure_t = self.tables[Signature], self.tables[Failure]
        # Columns a later migration added (NOT NULL with a model default) are filled with that default.
        listed = {Job: JOB_COLUMNS, Attempt: ATTEMPT_COLUMNS, Signature: SIGNATURE_COLUMNS, Failure: FAILURE_COLUMNS}
        self.columns, self.defaults = {}, {}
        for model, columns in listed.items():
            extra = defaulted_columns(model, columns)
            self.columns[model._meta.db_table] = ", ".join([*columns, *(c for c, _ in extra)])
            self.defaults[model._meta.db_table] = tuple(v for _, v in extra)
        # (fingerprint, normaliser_version) -> signature id, for signatures already in the database.
        self.signature_ids: dict[tuple[str, str], int] = {}
        # signature id -> [count, gpu_seconds, first_seen, last_seen, category, confidence] added by this load.
        self.delta: dict[int, list] = {}
        self.new_signatures = self.jobs = self.attempts = self.failures = 0
        with connection.cursor() as cur:
            cur.execute(f"SELECT fingerprint, normaliser_version, id FROM {self.signature_t}")
            for fingerprint, version, pk in cur.fetchall():
                self.signature_ids[(fingerprint, version)] = pk

    @contextmanager
    def _copy_into(self, cur, table: str):
        """COPY into a table; yields write_row(tuple of the listed columns)."""
        with cur.copy(f"COPY {table} ({self.columns[table]}) FROM STDIN") as copy:
            extra = self.defaults[table]
            yield (lambda values: copy.write_row(values + extra)) if extra else copy.write_row

    def _ids(self, cur, table: str, n: int) -> list[int]:
        if not n:
            return []
        cur.execute(f"SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, n])
        return [row[0] for row in cur.fetchall()]

    def load_batch(self, jobs: list[dict]) -> None:
        from django.db import transaction
        now = datetime.now(timezone.utc)
        with transaction.atomic(), self.connection.cursor() as wrapper:
            cur = wrapper.cursor  # the psycopg cursor, for COPY
            job_ids = self._ids(cur, self.job_t, len(jobs))
            attempt_ids = iter(self._ids(cur, self.attempt_t, sum(len(j["attempts"]) for j in jobs)))
            failed = [(job, pk) for job, pk in zip(jobs, job_ids) if job["failure"]]
            failure_ids = iter(self._ids(cur, self.failure_t, len(failed)))
            new = {}
            for job, _ in failed:
                f = job["failure"]
                key = (f["fingerprint"], f["normaliser_version"])
                if key not in self.signature_ids and key not in new:
                    new[key] = f
            for key, pk in zip(new, self._ids(cur, self.signature_t, len(new))):
                self.signature_ids[key] = pk
            if new:
                with self._copy_into(cur, self.signature_t) as write_row:
                    for key, f in new.items():
                        # Counters start at zero; finish() adds this load's totals.
                        write_row((self.signature_ids[key], key[0], key[1], f["exception_type"][:255],
                                        _clean(f["masked_message"]), f["category"], f["confidence"], None, None,
                                        0, 0.0, "[]", now))
            with self._copy_into(cur, self.job_t) as write_row:
                for job, pk in zip(jobs, job_ids):
                    write_row((pk, job["platform"], job["external_id"], job["name"], job["submitter"],
                                    job["team"], job["status"], job["submitted_at"], job["started_at"],
                                    job["ended_at"], job["gpus"], job["exit_code"], job["signal"], job["command"],
                                    job["code_version"], job["image"], job["log_path"], job["log_bytes"],
                                    job["log_sha256"], json.dumps(job["extra"]), "analysed", "", now, now))
            with self._copy_into(cur, self.attempt_t) as write_row:
                for job, pk in zip(jobs, job_ids):
                    for a in job["attempts"]:
                        write_row((next(attempt_ids), pk, a["number"], a["started_at"], a["ended_at"],
                                        a["gpus"], a["exit_code"], a["status"]))
                        self.attempts += 1
            with self._copy_into(cur, self.failure_t) as write_row:
                for job, pk in failed:
                    f = job["failure"]
                    sid = self.signature_ids[(f["fingerprint"], f["normaliser_version"])]
                    write_row((next(failure_ids), pk, sid, f["found"], _clean(f["failure_line"]),
                                    f["failure_line_number"], f["exception_type"][:255], _clean(f["message"]),
                                    _clean(f["traceback"]), f["user_frame"][:512], _clean(f["excerpt"]),
                                    f["excerpt_start_line"], f["stage"], f["gpu_seconds"], f["category"],
                                    f["dimension"], f["confidence"], f["rule"][:128], _clean(f["evidence"]),
                                    f["tagger_version"], f["retry_advice"], now, None))
                    d = self.delta.get(sid)
                    seen = job["ended_at"]
                    if d is None:
                        self.delta[sid] = [1, f["gpu_seconds"], seen, seen, f["category"], f["confidence"]]
                    else:
                        d[0] += 1
                        d[1] += f["gpu_seconds"]
                        d[2], d[3] = min(d[2], seen), max(d[3], seen)
                        if seen >= d[3]:  # the signature's category is its latest failure's
                            d[4], d[5] = f["category"], f["confidence"]
        self.jobs += len(jobs)
        self.failures += len(failed)
        self.new_signatures += len(new)

    def finish(self) -> None:
        """Add this load's counters to the signatures (one COPY into a temp table, one UPDATE)."""
        from django.db import transaction
        with transaction.atomic(), self.connection.cursor() as wrapper:
            cur = wrapper.cursor
            cur.execute("CREATE TEMP TABLE load_signature_delta (id bigint, n integer, gpu double precision, "
                        "first timestamptz, last timestamptz, category varchar(32), confidence double precision) "
                        "ON COMMIT DROP")
            with cur.copy("COPY load_signature_delta FROM STDIN") as copy:
                for sid, d in self.delta.items():
                    copy.write_row((sid, *d))
            cur.execute(f"""
                UPDATE {self.signature_t} s SET
                    failure_count = s.failure_count + d.n, gpu_seconds = s.gpu_seconds + d.gpu,
                    first_seen = LEAST(COALESCE(s.first_seen, d.first), d.first),
                    last_seen = GREATEST(COALESCE(s.last_seen, d.last), d.last),
                    category = CASE WHEN s.last_seen IS NULL OR d.last >= s.last_seen THEN d.category ELSE s.category END,
                    confidence = CASE WHEN s.last_seen IS NULL OR d.last >= s.last_seen THEN d.confidence ELSE s.confidence END
                FROM load_signature_delta d WHERE s.id = d.id""")
            # The teams each signature's failures come from (as ingestion keeps them).
            cur.execute(f"""
                UPDATE {self.signature_t} s SET teams = t.teams FROM (
                    SELECT f.signature_id, jsonb_agg(DISTINCT j.team ORDER BY j.team) AS teams
                    FROM {self.failure_t} f JOIN {self.job_t} j ON j.id = f.job_id
                    WHERE j.team <> '' AND f.signature_id IN (SELECT id FROM load_signature_delta)
                    GROUP BY f.signature_id) t
                WHERE s.id = t.signature_id""")
        for table in self.tables.values():  # fresh planner statistics for the benchmarks that follow
            with self.connection.cursor() as cur:
                cur.execute(f"ANALYZE {table}")


def reset(connection, allow: bool) -> None:
    name = connection.settings_dict["NAME"] or ""
    if "bench" not in name and not allow:
        sys.exit(f"refusing to --reset database {name!r}: its name does not contain 'bench' (add --yes-really)")
    from jobs_ingest.models import Attempt, Failure, Job, Signature
    tables = ", ".join(m._meta.db_table for m in (Failure, Attempt, Signature, Job))
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")


def index(es_prefix: str, chunk: int) -> tuple[int, float]:
    from django.conf import settings
    from django.utils import timezone as dj_timezone
    from jobs_ingest.search import index as search_index, projection
    from jobs_ingest.models import Failure
    from jobs_ingest.progress import Progress
    started = dj_timezone.now()
    t0 = time.perf_counter()
    client = search_index.make_client(settings.ELASTICSEARCH_URL, timeout=120)
    total = Failure.objects.count()
    with Progress(total, f"index {es_prefix}-failures") as bar:
        docs = projection.failure_documents(projection.failures_for_index().iterator(chunk_size=chunk),
                                            batch_size=chunk)
        result = search_index.rebuild(client, es_prefix, docs, progress=bar.set, chunk_size=chunk)
    Failure.objects.filter(indexed_at__isnull=True, analysed_at__lte=started).update(indexed_at=dj_timezone.now())
    # The similar-failure search reads the signature-level index (one document per signature).
    from jobs_ingest.models import Signature
    with Progress(Signature.objects.count(), f"index {es_prefix}-signatures") as bar:
        search_index.rebuild(client, es_prefix, projection.all_signature_documents(), progress=bar.set,
                             chunk_size=chunk, kind=search_index.SIGNATURES)
    return result["count"], time.perf_counter() - t0


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.database_url:
        sys.exit("no database: pass --database-url or set DATABASE_URL")
    setup_django(args.database_url, args.es_prefix)
    from django.db import connection
    from bench.workload import Workload
    from jobs_ingest.progress import Progress
    if connection.vendor != "postgresql":
        sys.exit(f"PostgreSQL needed (COPY); {connection.vendor} given")
    db = connection.settings_dict["NAME"]
    if args.index_only:
        indexed, es_seconds = index(args.es_prefix, args.es_chunk)
        print(f"indexed {indexed} failures of {db} into {args.es_prefix}-failures in {es_seconds:.1f}s "
              f"({indexed / max(es_seconds, 1e-9):.0f} docs/s)")
        return 0
    if args.reset:
        reset(connection, args.yes_really)
    t0 = time.perf_counter()
    workload = Workload(args.jobs, args.seed, weeks=args.weeks, failed_share=args.failed_share)
    loader = Loader(connection, args.batch)
    batch: list[dict] = []
    with Progress(args.jobs, f"load {db}") as bar:
        for job in workload.jobs():
            batch.append(job)
            if len(batch) >= args.batch:
                loader.load_batch(batch)
                bar.advance(len(batch))
                batch = []
        if batch:
            loader.load_batch(batch)
            bar.advance(len(batch))
    loader.finish()
    db_seconds = time.perf_counter() - t0
    indexed, es_seconds = (0, 0.0) if args.skip_es else index(args.es_prefix, args.es_chunk)
    total = time.perf_counter() - t0
    es_part = "" if args.skip_es else (
        f"; indexed {indexed} failures into {args.es_prefix}-failures in {es_seconds:.1f}s "
        f"({indexed / max(es_seconds, 1e-9):.0f} docs/s)")
    print(f"loaded {loader.jobs} generated jobs (seed {args.seed}: {loader.failures} failures, {loader.attempts} "
          f"attempts, {loader.new_signatures} new signatures) into {db} in {db_seconds:.1f}s "
          f"({loader.jobs / max(db_seconds, 1e-9):.0f} jobs/s){es_part}; total {total:.1f}s "
          f"({loader.jobs / max(total, 1e-9):.0f} jobs/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
