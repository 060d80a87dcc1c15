"""Every way the rules leave a failure unclassified is said in plain words on the job page (taxonomy.why_unclassified)."""
import json
import pathlib

from jobs_ingest.core import analyse_text, tagger
from jobs_ingest.core.taxonomy import why_unclassified

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_unclassified_rule_of_every_released_rule_set_says_why():
    rule_sets = [getattr(tagger, name) for name in dir(tagger) if name.startswith("RULES_V") and name[7:].isdigit()]
    ids = {rid for rules in rule_sets for rid, category, _, _ in rules.message_rules if category == "unclassified"}
    assert len(ids) >= 10 and all(why_unclassified(rid) for rid in ids), sorted(i for i in ids if not why_unclassified(i))


def test_every_unclassified_development_analysis_says_why():
    logs = [json.loads(line)["log"] for path in sorted((ROOT / "bench" / "devset").glob("issues*/dev.jsonl"))
            for line in path.open(encoding="utf-8")]
    unclassified = [a for a in map(analyse_text, logs) if a.category == "unclassified"]
    assert len(unclassified) >= 50
    assert [a.rule for a in unclassified if not why_unclassified(a.rule)] == []


def test_a_category_needs_no_reason_and_a_signal_is_named():
    assert why_unclassified("gpu_oom.cuda_oom") == ""
    assert "SIGKILL" in why_unclassified("unclassified.signal_sigkill")
