from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("jobs_ingest", "0003_signature_teams"),
    ]

    operations = [
        migrations.AddField(
            model_name="failure",
            name="capture",
            field=models.JSONField(blank=True, default=dict,
                                   help_text="what the training-side hook captured (stages, inputs, artifacts, replay)"),
        ),
    ]
