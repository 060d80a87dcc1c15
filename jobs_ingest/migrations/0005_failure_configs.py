from django.db import migrations, models

# Frozen here, not imported from core/configs.py: the versions that the first named configs
# (issue #13) took over unchanged. Rows made by older versions keep "" (made before configs).
FIRST_TAGGING = ("4", "tagging:2026-11")       # tagger_version -> tagging config
FIRST_GROUPING = ("2", "grouping:2026-11")     # signature normaliser_version -> grouping config


def name_the_configs_of_existing_failures(apps, schema_editor):
    Failure = apps.get_model("jobs_ingest", "Failure")
    Failure.objects.filter(tagger_version=FIRST_TAGGING[0]).update(tagging_config=FIRST_TAGGING[1])
    Failure.objects.filter(signature__normaliser_version=FIRST_GROUPING[0]).update(grouping_config=FIRST_GROUPING[1])


class Migration(migrations.Migration):

    dependencies = [
        ("jobs_ingest", "0004_failure_capture"),
    ]

    operations = [
        migrations.AddField(
            model_name="failure",
            name="tagging_config",
            field=models.CharField(blank=True, db_default="", default="", max_length=32),
        ),
        migrations.AddField(
            model_name="failure",
            name="grouping_config",
            field=models.CharField(blank=True, db_default="", default="", max_length=32),
        ),
        migrations.RunPython(name_the_configs_of_existing_failures, migrations.RunPython.noop),
    ]
