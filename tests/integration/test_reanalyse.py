"""manage.py reanalyse on a real PostgreSQL database (#14.6): failures stored under an older grouping move to
their current signatures, judgments follow them with their history, and --dry-run changes nothing."""
import io

from django.contrib.auth.models import User
from django.core.management import call_command

from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure, GroupingRule, Signature
from triage import services as triage_services
from triage.models import JudgmentEvent, SignatureTriage

LOG = b"Traceback (most recent call last):\n  File \"train.py\", line 9, in main\nKeyError: 'warmup_steps'\n"


def stored_under_an_old_grouping(n):
    """n failures of one signature, then that signature rewritten as an older normaliser would have made it."""
    for i in range(n):
        job = services.receive_job(parse_job({"platform": "slurm", "external_id": f"r{i}", "status": "failed"}),
                                   io.BytesIO(LOG)).job
        failures.analyse(job.pk)
    signature = Signature.objects.get()
    Signature.objects.filter(pk=signature.pk).update(fingerprint="0" * 16, normaliser_version="2025-01")
    return Signature.objects.get(pk=signature.pk)


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("reanalyse", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_judgments_follow_their_failures_to_the_new_signature(transactional_db, log_dir, es):
    old = stored_under_an_old_grouping(3)
    erin = User.objects.create_user("erin")
    triage_services.judge(old, erin, category="illegal_argument", root_cause="", notes="config key renamed",
                          fix_description="use warmup_ratio")

    dry, progress = run("--dry-run")
    assert "3 failures would move to another signature" in dry and "1 judgments would be carried" in dry
    assert "reanalyse (dry run)" in progress
    assert set(Failure.objects.values_list("signature_id", flat=True)) == {old.pk}  # nothing changed

    out, _ = run()
    assert "3 failures moved to another signature" in out and "1 judgments carried" in out
    new = Signature.objects.exclude(pk=old.pk).get()
    assert set(Failure.objects.values_list("signature_id", flat=True)) == {new.pk}
    assert new.failure_count == 3 and Signature.objects.get(pk=old.pk).failure_count == 0
    carried = SignatureTriage.objects.get(signature=new)
    assert (carried.category, carried.notes, carried.fix_description, carried.state) == \
        ("illegal_argument", "config key renamed", "use warmup_ratio", "resolved")
    history = set(JudgmentEvent.objects.filter(signature=new).values_list("field", "new_value"))
    assert ("carried from", f"signature {old.pk} (reanalyse)") in history and ("category", "illegal_argument") in history

    again, _ = run()  # nothing left to move
    assert "0 failures moved" in again and "0 judgments carried" in again


def test_a_new_signature_with_its_own_judgment_keeps_it(transactional_db, log_dir, es):
    old = stored_under_an_old_grouping(1)
    triage_services.judge(old, None, category="illegal_argument")
    job = services.receive_job(parse_job({"platform": "slurm", "external_id": "fresh", "status": "failed"}),
                               io.BytesIO(LOG)).job
    new = failures.analyse(job.pk).signature
    triage_services.judge(new, None, category="key_not_found")

    out, _ = run("--since", "2000-01-01")
    assert "1 left where the new signature had its own" in out
    assert SignatureTriage.objects.get(signature=new).category == "key_not_found"


def test_a_bad_date_is_a_clear_error(transactional_db):
    import pytest
    from django.core.management.base import CommandError
    with pytest.raises(CommandError, match="not a date"):
        run("--since", "last tuesday")


OTHER = b"Traceback (most recent call last):\n  File \"train.py\", line 9, in main\nKeyError: 'lr_schedule'\n"


def receive(external_id, log):
    job = services.receive_job(parse_job({"platform": "slurm", "external_id": external_id, "status": "failed"}),
                               io.BytesIO(log)).job
    return failures.analyse(job.pk)


def as_if_made_under_an_old_grouping(signatures, rules=()):
    """Rewrite signatures (and the rules naming them) as an older grouping config would have made them."""
    for n, signature in enumerate(signatures):
        old = f"{n:x}" * 16
        for rule in rules:
            if (rule.fingerprint, rule.normaliser_version) == (signature.fingerprint, signature.normaliser_version):
                GroupingRule.objects.filter(pk=rule.pk).update(fingerprint=old, normaliser_version="2025-01")
        Signature.objects.filter(pk=signature.pk).update(fingerprint=old, normaliser_version="2025-01")


def test_a_merge_survives_a_new_grouping_config(transactional_db, log_dir, es):
    from triage import regroup
    warmup = [receive(f"w{i}", LOG) for i in range(2)]
    schedule = [receive(f"s{i}", OTHER) for i in range(2)]
    target, source = warmup[0].signature, schedule[0].signature
    regroup.merge(target, [source], None, note="both are the renamed scheduler keys")
    assert set(Failure.objects.values_list("signature_id", flat=True)) == {target.pk}
    as_if_made_under_an_old_grouping([target, source], list(GroupingRule.objects.all()))

    dry, _ = run("--dry-run")
    assert "1 grouping rules (merges, splits, cluster splits) would be carried" in dry
    out, _ = run()
    assert "1 grouping rules (merges, splits, cluster splits) carried" in out
    # Every failure is in one current signature: the merge holds under the new fingerprints.
    (new,) = set(Failure.objects.values_list("signature_id", flat=True))
    assert new not in (target.pk, source.pk)
    assert Signature.objects.get(pk=new).normaliser_version != "2025-01"
    copy = GroupingRule.objects.get(normaliser_version=Signature.objects.get(pk=new).normaliser_version)
    assert (copy.kind, copy.target_id, copy.active) == ("merge", new, True)
    assert copy.note.startswith("carried from rule") and "renamed scheduler keys" in copy.note
    assert JudgmentEvent.objects.filter(signature_id=new, field="merge rule carried").exists()
    assert Failure.objects.filter(grouping_rule=copy).count() == 2
    again, _ = run()
    assert "0 failures moved" in again and "0 grouping rules" in again


def test_a_split_survives_a_new_grouping_config(transactional_db, log_dir, es):
    from triage import regroup
    def short(samples):
        return LOG.replace(b"KeyError: 'warmup_steps'", f"ValueError: batch size 64 > dataset ({samples} samples)".encode())
    made = [receive("a", short(12)), receive("b", short(12)), receive("c", short(7))]
    signature = made[0].signature
    assert made[2].signature_id == signature.pk  # numbers are masked: one signature
    split_off, _ = regroup.split(signature, "(7 samples)", None)
    assert Failure.objects.get(job__external_id="c").signature_id == split_off.pk
    as_if_made_under_an_old_grouping([signature, split_off], list(GroupingRule.objects.all()))

    out, _ = run()
    assert "1 grouping rules" in out
    assert Failure.objects.get(job__external_id="c").signature_id == split_off.pk  # still split off
    rest = set(Failure.objects.exclude(job__external_id="c").values_list("signature_id", flat=True))
    assert len(rest) == 1 and rest != {signature.pk, split_off.pk}


def test_a_cluster_split_survives_a_new_grouping_config(transactional_db, log_dir, es):
    from triage import regroup
    here = receive("h", LOG)
    there = receive("t", LOG.replace(b"in main", b"in evaluate"))  # another function: another signature, same reason
    assert here.signature_id != there.signature_id and here.signature.cluster == there.signature.cluster
    key = regroup.split_cluster(here.signature.cluster, [there.signature], None)
    as_if_made_under_an_old_grouping([here.signature, there.signature], list(GroupingRule.objects.all()))

    dry, _ = run("--dry-run")
    assert "1 grouping rules (merges, splits, cluster splits) would be carried" in dry
    out, _ = run()
    assert "1 grouping rules (merges, splits, cluster splits) carried" in out
    moved = Failure.objects.get(job__external_id="t").signature
    assert moved.pk != there.signature_id and moved.cluster == key  # the person's cluster, on the new signature
    assert Failure.objects.get(job__external_id="h").signature.cluster != key
    assert GroupingRule.objects.filter(kind="cluster", target=moved, cluster=key, active=True).exists()


def test_a_cluster_judgment_stays_on_its_signatures_and_reaches_no_cluster_of_a_new_version(transactional_db, log_dir, es):
    """A cluster judgment is made for one cluster version's reason. reanalyse carries the copy each signature holds;
    the judgment itself stays on the old cluster key, so a broader cluster of a newer version (version 5 gathers what
    version 4 kept apart) never hands it to signatures it was not made for."""
    here = receive("h", LOG)
    triage_services.judge_cluster(here.signature.cluster, User.objects.create_user("erin"), category="key_not_found",
                                  notes="config key renamed in v2", fix_description="use warmup_ratio")
    old_key = "4" * 16
    Signature.objects.filter(pk=here.signature_id).update(cluster=old_key)
    from triage.models import ClusterTriage
    ClusterTriage.objects.filter(cluster=here.signature.cluster).update(cluster=old_key)
    as_if_made_under_an_old_grouping([here.signature])

    out, _ = run()
    assert "1 failures moved to another signature" in out and "1 judgments carried" in out
    moved = Failure.objects.get(job__external_id="h").signature
    assert moved.cluster != old_key
    carried = SignatureTriage.objects.get(signature=moved)
    assert (carried.category, carried.notes) == ("key_not_found", "config key renamed in v2")

    newcomer = receive("n", LOG.replace(b"in main", b"in evaluate"))   # another function: another signature
    assert newcomer.signature.cluster == moved.cluster and newcomer.signature_id != moved.pk
    assert not SignatureTriage.objects.filter(signature_id=newcomer.signature_id).exclude(category="").exists()
