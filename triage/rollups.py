"""Indexed daily rollups that the analytics charts and the weekly report read instead of the failure and
job tables (issue #5). Tables: triage/models.py (FailureRollupEntry ... DailyJobRollup).

How they stay correct:
- A ledger row per failure (per job) holds what it currently contributes. A refresh recomputes the
  ledger rows of the touched failures from the source tables and, in the same SQL statement, adds
  (new - old) to every rollup with INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n. So each
  change costs a few index lookups whatever the table sizes, and concurrent workers never overwrite
  each other's counts (the increments are atomic; the ledger rows are locked first, and the rollup
  rows are upserted in key order). Every change to a signature's failures first locks the signature
  row, so concurrent analyses, judgments and overrides of one signature take turns.
- Failure analysis (the `failures_analysed` signal (one per batch), received in triage/receivers.py inside the analysis
  transaction), judgments and per-job overrides (their model signals, inside the saving transaction)
  refresh what they change.
  A judgment relabels its signature's failures from the ledger alone (one statement, only the rows
  whose labels change); a failure analysed meanwhile is counted with the judgment's outcome whichever
  commits first.
- Jobs of any status feed DailyJobRollup through PostgreSQL triggers on the job and attempt tables
  (JOB_TRIGGERS, installed by migration 0002): they see every write, bulk inserts included.
- `manage.py rebuild_rollups` recomputes everything from the source tables.

Rows whose count falls to zero are deleted, so a chart never shows an empty bar.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import connection, transaction

from jobs_ingest.models import Attempt, Failure, Job, Signature
from triage import effective
from triage.models import (DailyCategoryRollup, DailyDurationRollup, DailyJobRollup, DailySignatureRollup,
                           DailySubmitterRollup, FailureOverride, FailureRollupEntry,
                           SignatureTriage)

# Time to failure: 16 buckets per doubling (each ~4.4% wide) from 1 s; bucket 0 holds < 1 s (and the
# negative durations of inverted times). A bucket's mean stands for its members.
TTF_BUCKETS_PER_DOUBLING = 16

_T = {m.__name__: m._meta.db_table for m in (Failure, Job, Attempt, Signature, FailureOverride, SignatureTriage,
                                             FailureRollupEntry, DailyCategoryRollup,
                                             DailySubmitterRollup, DailySignatureRollup, DailyDurationRollup,
                                             DailyJobRollup)}

# GPUs x wall time of one attempt, 0 when a time is missing or inverted (as Attempt.gpu_seconds).
_ATTEMPT_GPU = "COALESCE(GREATEST(a.gpus * EXTRACT(EPOCH FROM a.ended_at - a.started_at), 0), 0)"
_DAY = "(j.ended_at AT TIME ZONE 'UTC')::date"

FAILURE_COLUMNS = ("failure_id", "signature_id", "day", "team", "platform", "submitter", "auto_category", "category",
                   "stage", "root_cause", "gpu_seconds", "retry_attempts", "retry_gpu_seconds", "ttf_bucket",
                   "ttf_seconds")

# One failure's contribution, from the source tables. The category and root cause are the effective
# ones (triage/effective.py).
FAILURE_SOURCE = f"""
SELECT f.id AS failure_id, f.signature_id, {_DAY} AS day, j.team, j.platform, j.submitter, f.category AS auto_category,
       {effective.category_sql("o", "t", "f.category")} AS category, f.stage,
       {effective.root_cause_sql("o", "t")} AS root_cause,
       f.gpu_seconds, COALESCE(r.n, 0)::int AS retry_attempts, COALESCE(r.gpu, 0)::float8 AS retry_gpu_seconds,
       CASE WHEN d.ttf IS NULL THEN NULL WHEN d.ttf < 1 THEN 0
            ELSE 1 + floor(ln(d.ttf) / ln(2) * {TTF_BUCKETS_PER_DOUBLING}) END::smallint AS ttf_bucket,
       d.ttf AS ttf_seconds
FROM {_T['Failure']} f
JOIN {_T['Job']} j ON j.id = f.job_id
LEFT JOIN {_T['FailureOverride']} o ON o.failure_id = f.id
LEFT JOIN {_T['SignatureTriage']} t ON t.signature_id = f.signature_id
LEFT JOIN LATERAL (SELECT count(*) AS n, SUM({_ATTEMPT_GPU}) AS gpu FROM {_T['Attempt']} a
                   WHERE a.job_id = j.id AND a.number > 1) r ON TRUE
CROSS JOIN LATERAL (SELECT EXTRACT(EPOCH FROM j.ended_at - j.started_at)::float8 AS ttf) d
WHERE {{where}}"""

# Every job's GPU time over all its attempts, per day x team x platform, in one pass over the attempts.
JOB_ROLLUP_REBUILD = f"""
INSERT INTO {_T['DailyJobRollup']} (day, team, platform, jobs, gpu_seconds)
SELECT {_DAY}, j.team, j.platform, count(*), COALESCE(SUM(r.gpu), 0)
FROM {_T['Job']} j
LEFT JOIN (SELECT a.job_id, SUM({_ATTEMPT_GPU}) AS gpu FROM {_T['Attempt']} a GROUP BY a.job_id) r ON r.job_id = j.id
GROUP BY 1, 2, 3"""

@dataclass(frozen=True)
class Rollup:
    table: str
    keys: tuple[str, ...]
    values: tuple[tuple[str, str], ...]  # (column, expression over ledger columns)
    count: str  # the column whose zero means "no row"
    where: str = ""  # which ledger rows count


FAILURE_ROLLUPS = (
    Rollup(_T["DailyCategoryRollup"], DailyCategoryRollup.KEYS,
           (("failures", "1"), ("gpu_seconds", "gpu_seconds"), ("retry_attempts", "retry_attempts"),
            ("retry_gpu_seconds", "retry_gpu_seconds")), "failures"),
    Rollup(_T["DailySubmitterRollup"], DailySubmitterRollup.KEYS,
           (("failures", "1"), ("gpu_seconds", "gpu_seconds")), "failures"),
    Rollup(_T["DailySignatureRollup"], DailySignatureRollup.KEYS,
           (("failures", "1"), ("gpu_seconds", "gpu_seconds")), "failures"),
    Rollup(_T["DailyDurationRollup"], DailyDurationRollup.KEYS,
           (("failures", "1"), ("gpu_seconds", "gpu_seconds"), ("ttf_seconds", "ttf_seconds")), "failures",
           where="ttf_bucket IS NOT NULL"),
)


def _delta_sql(ledger: str, pk: str, columns: tuple[str, ...], fresh: str, old_where: str,
               rollups: tuple[Rollup, ...], *, remove_missing: bool) -> str:
    """One statement: write the `fresh` ledger rows and add (fresh - old) to each rollup. Every CTE reads
    the statement's snapshot, so `old` is the ledger as it was before the upsert in `upd`. With
    `remove_missing`, ledger rows matched by `old_where` but absent from `fresh` (deleted failures) are
    removed and subtracted. Returns (rollup index, row id) of rows whose count fell to zero."""
    cols = ", ".join(columns)
    assign = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != pk)
    ctes = [f"fresh AS ({fresh})",
            f"old AS (SELECT {cols} FROM {ledger} WHERE {old_where})",
            f"upd AS (INSERT INTO {ledger} ({cols}) SELECT {cols} FROM fresh "
            f"ON CONFLICT ({pk}) DO UPDATE SET {assign})"]
    if remove_missing:
        ctes.append(f"gone AS (DELETE FROM {ledger} WHERE {old_where} AND {pk} NOT IN (SELECT {pk} FROM fresh))")
    ctes.append(f"delta AS (SELECT {cols}, 1 AS sign FROM fresh UNION ALL SELECT {cols}, -1 AS sign FROM old)")
    selects = []
    for i, r in enumerate(rollups):
        keys = ", ".join(r.keys)
        value_cols = ", ".join(c for c, _ in r.values)
        sums = ", ".join(f"SUM(sign * {expr})" for _, expr in r.values)
        changed = " OR ".join(f"SUM(sign * {expr}) <> 0" for _, expr in r.values)
        add = ", ".join(f"{c} = {r.table}.{c} + EXCLUDED.{c}" for c, _ in r.values)
        ctes.append(f"r{i} AS (INSERT INTO {r.table} ({keys}, {value_cols}) SELECT {keys}, {sums} FROM delta "
                    f"{'WHERE ' + r.where if r.where else ''} GROUP BY {keys} HAVING {changed} ORDER BY {keys} "
                    f"ON CONFLICT ({keys}) DO UPDATE SET {add} RETURNING id, {r.count} AS n)")
        selects.append(f"SELECT {i}, id FROM r{i} WHERE n <= 0")
    return "WITH " + ",\n".join(ctes) + "\n" + " UNION ALL ".join(selects)


_LEDGER = _T["FailureRollupEntry"]

# Failures by id (%(ids)s): recomputed from the source tables.
_FAILURE_REFRESH = _delta_sql(_LEDGER, "failure_id", FAILURE_COLUMNS, FAILURE_SOURCE.format(where="f.id = ANY(%(ids)s)"),
                              "failure_id = ANY(%(ids)s)", FAILURE_ROLLUPS, remove_missing=True)

# A signature's failures (%(signature)s) after its judgment changed: only the effective labels can have
# changed, and the ledger has everything else, so the source tables are not read. Only rows whose
# labels change are written.
_relabelled = ", ".join(
    {"category": effective.category_sql("o", "t", "l.auto_category") + " AS category",
     "root_cause": effective.root_cause_sql("o", "t") + " AS root_cause"}.get(c, f"l.{c}")
    for c in FAILURE_COLUMNS)
_SIGNATURE_RELABEL = _delta_sql(_LEDGER, "failure_id", FAILURE_COLUMNS, f"""
SELECT * FROM (
  SELECT {_relabelled}, l.category AS counted_category, l.root_cause AS counted_root_cause
  FROM {_LEDGER} l
  LEFT JOIN {_T['FailureOverride']} o ON o.failure_id = l.failure_id
  LEFT JOIN {_T['SignatureTriage']} t ON t.signature_id = l.signature_id
  WHERE l.signature_id = %(signature)s) relabelled
WHERE (category, root_cause) IS DISTINCT FROM (counted_category, counted_root_cause)""",
    "failure_id IN (SELECT failure_id FROM fresh)", FAILURE_ROLLUPS, remove_missing=False)


def _run(statement: str, params: dict) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        empty: dict[int, list[int]] = {}
        for index, row_id in cursor.fetchall():
            empty.setdefault(index, []).append(row_id)
        for index, row_ids in sorted(empty.items()):
            r = FAILURE_ROLLUPS[index]
            cursor.execute(f"DELETE FROM {r.table} WHERE id = ANY(%s) AND {r.count} <= 0", [row_ids])


def _lock_signatures(signature_ids) -> None:
    # The analysis transaction holds its signatures' rows (it updates their counters), and judgments and
    # overrides take them here first: every change to a signature's failures is serialised on that row,
    # so each refresh reads what the previous one committed (read committed: a statement sees what
    # committed before it began) and none is lost.
    list(Signature.objects.select_for_update(no_key=True).filter(pk__in=sorted(signature_ids))
         .order_by("pk").values_list("pk"))


def supported() -> bool:
    """The rollups use PostgreSQL (ON CONFLICT upserts, triggers); on the SQLite zero-setup default they
    stay empty and the charts and reports aggregate the raw tables (fine at that scale)."""
    return connection.vendor == "postgresql"


def refresh_failures(failure_ids: list[int]) -> None:
    """Recount these failures (analysed, re-analysed, moved, overridden, or deleted) in every rollup."""
    ids = sorted(set(failure_ids))
    if not ids or not supported():
        return
    with transaction.atomic():
        signatures = set(Failure.objects.filter(pk__in=ids).values_list("signature_id", flat=True))
        signatures.update(FailureRollupEntry.objects.filter(pk__in=ids).values_list("signature_id", flat=True))
        _lock_signatures(signatures)
        _run(_FAILURE_REFRESH, {"ids": ids})


def refresh_signature(signature_id: int) -> None:
    """Recount a signature's failures whose effective category or root cause changed with its judgment."""
    if not supported():
        return
    with transaction.atomic():
        _lock_signatures([signature_id])
        _run(_SIGNATURE_RELABEL, {"signature": signature_id})


# ---------------------------------------------------------------------------------------------- hooks
def _remember_counted(sender, instance, **kwargs) -> None:
    instance._counted_labels = (instance.category, instance.root_cause)


def _judgment_saved(sender, instance, created, update_fields=None, **kwargs) -> None:
    if update_fields is not None and not {"category", "root_cause"} & set(update_fields):
        return
    counted = ("", "") if created else getattr(instance, "_counted_labels", None)
    if counted != (instance.category, instance.root_cause):
        refresh_signature(instance.signature_id)
    instance._counted_labels = (instance.category, instance.root_cause)


def _judgment_deleted(sender, instance, **kwargs) -> None:
    refresh_signature(instance.signature_id)


def _override_changed(sender, instance, **kwargs) -> None:
    refresh_failures([instance.failure_id])


def _failure_deleted(sender, instance, **kwargs) -> None:
    refresh_failures([instance.pk])  # no source row any more: its ledger row is subtracted and removed


def connect_judgment_signals() -> None:
    """Judgments and overrides change the effective labels, whoever writes them (services, admin);
    a deleted failure (or job) leaves the rollups."""
    from django.db.models.signals import post_delete, post_init, post_save
    post_delete.connect(_failure_deleted, sender=Failure, dispatch_uid="rollups-failure-delete")
    post_init.connect(_remember_counted, sender=SignatureTriage, dispatch_uid="rollups-triage-init")
    post_save.connect(_judgment_saved, sender=SignatureTriage, dispatch_uid="rollups-triage-save")
    post_delete.connect(_judgment_deleted, sender=SignatureTriage, dispatch_uid="rollups-triage-delete")
    post_save.connect(_override_changed, sender=FailureOverride, dispatch_uid="rollups-override-save")
    post_delete.connect(_override_changed, sender=FailureOverride, dispatch_uid="rollups-override-delete")


# ---------------------------------------------------------------------------------------------- rebuild
def rebuild(progress=None) -> dict[str, int]:
    """Recompute the ledgers from the source tables and every rollup from its ledger, one statement per
    table, in one transaction (readers see the old rollups until it commits). Returns rows per table."""
    if not supported():
        raise RuntimeError(f"the analytics rollups need PostgreSQL (this database is {connection.vendor}); "
                           "without them the charts read the raw tables")
    say = progress or (lambda message: None)
    counts: dict[str, int] = {}
    all_tables = [_T["FailureRollupEntry"], *(r.table for r in FAILURE_ROLLUPS), _T["DailyJobRollup"]]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {', '.join(all_tables)} IN EXCLUSIVE MODE")
        cursor.execute(f"TRUNCATE {', '.join(all_tables)}")
        steps = [(_T["FailureRollupEntry"], f"INSERT INTO {_T['FailureRollupEntry']} ({', '.join(FAILURE_COLUMNS)}) "
                  + FAILURE_SOURCE.format(where="TRUE"))]
        steps += [(r.table, _rebuild_rollup_sql(_T["FailureRollupEntry"], r)) for r in FAILURE_ROLLUPS]
        steps += [(_T["DailyJobRollup"], JOB_ROLLUP_REBUILD)]
        for i, (table, sql) in enumerate(steps, 1):
            start = time.monotonic()
            say(f"[{i}/{len(steps)}] {table} ...")
            cursor.execute(sql)
            counts[table] = cursor.rowcount
            say(f"[{i}/{len(steps)}] {table}: {cursor.rowcount:,} rows in {time.monotonic() - start:.1f} s")
        say("analysing the new tables ...")
        for table in all_tables:
            cursor.execute(f"ANALYZE {table}")
    return counts


def _rebuild_rollup_sql(ledger: str, r: Rollup) -> str:
    keys = ", ".join(r.keys)
    return (f"INSERT INTO {r.table} ({keys}, {', '.join(c for c, _ in r.values)}) "
            f"SELECT {keys}, {', '.join(f'SUM({expr})' for _, expr in r.values)} FROM {ledger} "
            f"{'WHERE ' + r.where if r.where else ''} GROUP BY {keys}")


# ---------------------------------------------------------------------------------------------- job triggers
# Deltas per row, so concurrent writers only ever add to a row (atomic upserts). A job adds 1 job when
# inserted; each attempt adds its GPU time to its job's key; a job whose end day, team or platform
# changes moves its count and GPU time to the new key. Migration 0002 installs this SQL verbatim (later
# changes need a new migration).
JOB_TRIGGERS = """
CREATE OR REPLACE FUNCTION triage_job_rollup_add(p_day date, p_team text, p_platform text, p_jobs int,
                                                 p_gpu float8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_jobs = 0 AND p_gpu = 0 THEN RETURN; END IF;
  INSERT INTO triage_dailyjobrollup (day, team, platform, jobs, gpu_seconds)
  VALUES (p_day, p_team, p_platform, p_jobs, p_gpu)
  ON CONFLICT (day, team, platform) DO UPDATE
    SET jobs = triage_dailyjobrollup.jobs + EXCLUDED.jobs,
        gpu_seconds = triage_dailyjobrollup.gpu_seconds + EXCLUDED.gpu_seconds;
  IF p_jobs < 0 THEN
    DELETE FROM triage_dailyjobrollup
    WHERE day IS NOT DISTINCT FROM p_day AND team = p_team AND platform = p_platform AND jobs <= 0;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION triage_attempt_gpu(a jobs_ingest_attempt) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(GREATEST(a.gpus * EXTRACT(EPOCH FROM a.ended_at - a.started_at), 0), 0)::float8
$$;

CREATE OR REPLACE FUNCTION triage_attempt_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE j record;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    SELECT (ended_at AT TIME ZONE 'UTC')::date AS day, team, platform INTO j FROM jobs_ingest_job WHERE id = OLD.job_id;
    IF FOUND THEN PERFORM triage_job_rollup_add(j.day, j.team, j.platform, 0, -triage_attempt_gpu(OLD)); END IF;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    SELECT (ended_at AT TIME ZONE 'UTC')::date AS day, team, platform INTO j FROM jobs_ingest_job WHERE id = NEW.job_id;
    IF FOUND THEN PERFORM triage_job_rollup_add(j.day, j.team, j.platform, 0, triage_attempt_gpu(NEW)); END IF;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION triage_job_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE gpu float8;
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM triage_job_rollup_add((NEW.ended_at AT TIME ZONE 'UTC')::date, NEW.team, NEW.platform, 1, 0);
    RETURN NULL;
  END IF;
  SELECT COALESCE(SUM(triage_attempt_gpu(a)), 0) INTO gpu FROM jobs_ingest_attempt a WHERE a.job_id = OLD.id;
  PERFORM triage_job_rollup_add((OLD.ended_at AT TIME ZONE 'UTC')::date, OLD.team, OLD.platform, -1, -gpu);
  IF TG_OP = 'UPDATE' THEN
    PERFORM triage_job_rollup_add((NEW.ended_at AT TIME ZONE 'UTC')::date, NEW.team, NEW.platform, 1, gpu);
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS triage_attempt_rollup ON jobs_ingest_attempt;
CREATE TRIGGER triage_attempt_rollup AFTER INSERT OR DELETE OR UPDATE OF job_id, gpus, started_at, ended_at
  ON jobs_ingest_attempt FOR EACH ROW EXECUTE FUNCTION triage_attempt_rollup();
DROP TRIGGER IF EXISTS triage_job_rollup_insert_delete ON jobs_ingest_job;
CREATE TRIGGER triage_job_rollup_insert_delete AFTER INSERT OR DELETE
  ON jobs_ingest_job FOR EACH ROW EXECUTE FUNCTION triage_job_rollup();
DROP TRIGGER IF EXISTS triage_job_rollup_move ON jobs_ingest_job;
CREATE TRIGGER triage_job_rollup_move AFTER UPDATE OF ended_at, team, platform ON jobs_ingest_job FOR EACH ROW
  WHEN ((OLD.ended_at AT TIME ZONE 'UTC')::date IS DISTINCT FROM (NEW.ended_at AT TIME ZONE 'UTC')::date
        OR OLD.team IS DISTINCT FROM NEW.team OR OLD.platform IS DISTINCT FROM NEW.platform)
  EXECUTE FUNCTION triage_job_rollup();
"""

DROP_JOB_TRIGGERS = """
DROP TRIGGER IF EXISTS triage_attempt_rollup ON jobs_ingest_attempt;
DROP TRIGGER IF EXISTS triage_job_rollup_insert_delete ON jobs_ingest_job;
DROP TRIGGER IF EXISTS triage_job_rollup_move ON jobs_ingest_job;
DROP FUNCTION IF EXISTS triage_job_rollup(), triage_attempt_rollup(), triage_attempt_gpu(jobs_ingest_attempt),
  triage_job_rollup_add(date, text, text, int, float8);
"""
