"""Migration 0005 on real PostgreSQL: failures stored before configs had names get the ids of the
configs that took over their versions, older rows keep "", and nothing else changes."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("jobs_ingest", "0004_failure_capture")]
AFTER = [("jobs_ingest", "0005_failure_configs")]


@pytest.fixture
def back_to_the_latest_schema():
    """Later tests share this database: whatever the test migrated back to, leave every app migrated."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_existing_failures_get_the_config_ids_of_their_versions(back_to_the_latest_schema):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Job, Signature, Failure = (old.get_model("jobs_ingest", name) for name in ("Job", "Signature", "Failure"))
    rows = {}
    for n, (normaliser, tagger) in enumerate([("2", "4"), ("1", "4"), ("2", "3"), ("1", "2")]):
        job = Job.objects.create(platform="test", external_id=f"m{n}", status="failed")
        signature = Signature.objects.create(fingerprint=f"fp{n}", normaliser_version=normaliser,
                                             masked_message="KeyError: <NUM>", category="key_not_found")
        rows[(normaliser, tagger)] = Failure.objects.create(
            job=job, signature=signature, stage="training", category="key_not_found", dimension="general_code_error",
            confidence=0.95, rule="key_not_found.key", tagger_version=tagger, retry_advice="do_not_retry",
            message=f"row {n}").pk

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("jobs_ingest", "Failure")
    stored = {key: new.objects.get(pk=pk) for key, pk in rows.items()}
    assert {key: (f.grouping_config, f.tagging_config) for key, f in stored.items()} == {
        ("2", "4"): ("grouping:2026-11", "tagging:2026-11"),
        ("1", "4"): ("", "tagging:2026-11"),
        ("2", "3"): ("grouping:2026-11", ""),
        ("1", "2"): ("", ""),
    }
    assert sorted(f.message for f in stored.values()) == ["row 0", "row 1", "row 2", "row 3"]
    assert all(f.tagger_version and f.category == "key_not_found" for f in stored.values())
