"""bench/fingerprint_pairs: the judged pairs can be rebuilt exactly, and the evaluation counts them as documented."""
import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "bench" / "fingerprint_pairs"
_spec = importlib.util.spec_from_file_location("fingerprint_pairs_evaluate", HERE / "evaluate.py")
evaluate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(evaluate)


def test_build_rebuilds_the_judged_pairs_byte_for_byte(tmp_path):
    # grouping:2026-11h is released and never changes, so neither may the pairs the judges read.
    subprocess.run([sys.executable, str(HERE / "build.py"), "--grouping-config", "grouping:2026-11h",
                    "--key", str(tmp_path / "key.jsonl"), "--out", str(tmp_path / "pairs.jsonl")],
                   check=True, capture_output=True, timeout=300)
    for name in ("pairs.jsonl", "key.jsonl", "key.strata.json"):
        digest = (hashlib.sha256((tmp_path / name).read_bytes()).hexdigest(),
                  hashlib.sha256((HERE / name).read_bytes()).hexdigest())
        assert digest[0] == digest[1], name


def test_kappa_and_the_two_readings_of_a_pair():
    assert evaluate.kappa([["same", "same"], ["different", "different"]]) == (1.0, 1.0)
    observed, k = evaluate.kappa([["same", "different"], ["different", "same"]])
    assert observed == 0.0 and k < 0
    assert evaluate.strict(["same", "same"]) and not evaluate.strict(["same", "same_reason"])
    assert evaluate.lenient(["same", "same_reason"]) and not evaluate.lenient(["same_reason", "different"])


def test_every_pair_has_two_verdicts_from_different_judges():
    verdicts = evaluate.judgments(HERE / "judgments")
    pairs = [line for line in (HERE / "pairs.jsonl").read_text(encoding="utf-8").splitlines() if line]
    assert len(verdicts) == len(pairs) and all(len(v) == 2 for v in verdicts.values())
