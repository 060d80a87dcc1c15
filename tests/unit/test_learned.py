"""The learned fallback: pure-Python prediction equal to scikit-learn's, the fallback decision, the artefact."""
import importlib.util
import json
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from jobs_ingest.core import analyse_text, configs, learned, taxonomy  # noqa: E402

CUDA_OOM = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in main\n    loss.backward()\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total)\n")
NO_MODULE = ("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    import deepspeed_extras\n"
             "ModuleNotFoundError: No module named 'deepspeed_extras'\n")


def load_trainer():
    spec = importlib.util.spec_from_file_location("train_learned", ROOT / "bench" / "train_learned.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def model():
    return learned.load()


def held_out_at_release(training_files: list[str], artefact: str) -> list[str]:
    """The training files that were held out when this artefact was released: the infrastructure slices and
    heldout8 always; heldout2-5 until ml7, which retired heldout3-5 into training data, and heldout6 and the program
    templates until ml8, the third round of templates until ml9, heldout7 and the fourth round until ml10 (bench/learned.md)."""
    held = ["fixtures/infra", "heldout8", "issues_heldout2"]
    release = re.search(r"_ml(\d+)\.json$", artefact)
    number = int(release.group(1)) if release else 1                # learned_model.json is the first model
    if number < 7:
        held += ["heldout3", "heldout4", "heldout5"]
    if number < 8:
        held += ["heldout6", "program_templates"]
    if number < 9:
        held += ["program_templates3"]
    if number < 10:
        held += ["heldout7", "program_templates4"]
    return [f for f in training_files if any(h in f for h in held)]


def with_thresholds(model, **limits):
    data = json.loads(json.dumps(model.data))
    data["thresholds"].update(limits)
    return learned.Model(data)


def test_artefact_is_small_stamped_and_loads_in_milliseconds():
    size = learned.ARTEFACT.stat().st_size
    assert size < 2 * 1024 * 1024
    t0 = time.perf_counter()
    model = learned.load()
    assert time.perf_counter() - t0 < 0.25  # about 10 ms here; generous for a loaded CI machine
    stamp = model.version
    assert len(stamp["training_data_sha256"]) == 64 and stamp["sklearn"] and stamp["trained_at"]
    assert not held_out_at_release(stamp["training_files"], learned.ARTEFACT.name)
    assert set(model.thresholds) == {"unclassified_min_probability", "rule_unsure_below", "model_min_probability"}
    assert len(model.intercepts) == len(model.classes) == len(model.cal_a) == len(model.cal_b)


def test_runtime_needs_neither_numpy_nor_sklearn():
    code = ("import sys; from jobs_ingest.core import analyse_text, learned; "
            f"p = learned.predict(analyse_text({CUDA_OOM!r})); "
            "bad = [m for m in ('numpy', 'sklearn', 'scipy') if m in sys.modules]; "
            "print(p.category, bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["gpu_oom", "[]"]


def test_predictions_are_calibrated_distributions_with_readable_evidence(model):
    for text, expected in [(CUDA_OOM, "gpu_oom"), (NO_MODULE, "library_not_found")]:
        analysis = analyse_text(text)
        probs = model.predict_proba(analysis)
        assert abs(sum(probs.values()) - 1.0) < 1e-9 and all(0.0 <= p <= 1.0 for p in probs.values())
        p = model.predict(analysis)
        assert (p.category, p.rule) == (expected, f"learned.{expected}")
        assert p.probability == max(probs.values()) and p.probability > 0.5
        assert 1 <= len(p.evidence) <= 3 and all("(+" in e for e in p.evidence)
    assert any("out of memory" in e or "exception type" in e for e in model.predict(analyse_text(CUDA_OOM)).evidence)


def test_features_mask_names_paths_numbers_and_read_the_lines_before_the_failure():
    assert learned.mask("No such file: '/data/x_17.csv' at 0x7f3a line 12") == "no such file: <q> at <hex> line <n>"
    assert learned.mask("open /srv/data/train.txt failed") == "open <path> failed"
    analysis = analyse_text(CUDA_OOM)
    assert learned.context_lines(analysis, 2) == ['  File "train.py", line 88, in main', "    loss.backward()"]
    params = learned.default_model().params
    feats = learned.features(analysis, params)
    assert "t:torch.outofmemoryerror" in feats and "t:outofmemoryerror" in feats
    assert "w:out of" in feats and "x:backward" in feats
    # A bare mapping works too, and a log without an exception still gets features.
    assert "t:<none>" in learned.features({"masked_message": "killed"}, params)


def test_fallback_replaces_only_unclassified_or_unsure_rules(model):
    analysis = analyse_text(NO_MODULE)
    answer = learned.fallback(analysis, rule_category="unclassified", rule_confidence=0.0, model=model)
    assert answer is not None and answer.category == "library_not_found" and answer.rule.startswith("learned.")
    # A confident rule is never replaced, and an agreeing unsure rule needs no replacement.
    assert learned.fallback(analysis, rule_category="type_mismatch", rule_confidence=0.97, model=model) is None
    eager = with_thresholds(model, rule_unsure_below=0.8, model_min_probability=0.1, unclassified_min_probability=0.0)
    assert learned.fallback(analysis, rule_category="library_not_found", rule_confidence=0.3, model=eager) is None
    replaced = learned.fallback(analysis, rule_category="type_mismatch", rule_confidence=0.3, model=eager)
    assert replaced is not None and replaced.category == "library_not_found"
    # Thresholds the model does not reach keep the rule's answer.
    shy = with_thresholds(model, rule_unsure_below=0.8, model_min_probability=1.01, unclassified_min_probability=1.01)
    assert learned.fallback(analysis, rule_category="type_mismatch", rule_confidence=0.3, model=shy) is None
    assert learned.fallback(analysis, rule_category="unclassified", rule_confidence=0.0, model=shy) is None


def test_a_file_that_is_not_a_model_is_refused(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="not a jobtriage learned model"):
        learned.load(bad)


def test_fold_groups_keep_a_composed_job_log_with_its_source():
    trainer = load_trainer()
    rows = [{"rec": {"id": "prog-a", "source": "program:a.py"}},
            {"rec": {"id": "job-1", "source": "composed:k8s:program:a.py", "group": "prog-a"}},
            {"rec": {"id": "nb-007", "source": "ml-notebook-crashes:kaggle:x.ipynb", "cluster_id": -100}},
            {"rec": {"id": "nb-008", "source": "ml-notebook-crashes:kaggle:x.ipynb", "cluster_id": -200}},
            {"rec": {"id": "job-2", "source": "composed:bare:nb-007", "group": "nb-007"}},
            {"rec": {"id": "iss-1", "group": "cuda-oom"}}, {"rec": {"id": "iss2-9", "group": "cuda-oom"}},
            {"rec": {"id": "nb-009", "source": "ml-notebook-crashes:kaggle:y.ipynb", "cluster_id": -100}}]
    trainer.assign_groups(rows)
    g = [r["group"] for r in rows]
    assert g[0] == g[1] and g[2] == g[3] == g[4] and g[5] == g[6]
    assert len({g[0], g[2], g[5], g[7]}) == 4  # the study's negative "noise" cluster joins nothing


def test_pure_python_equals_sklearn_and_training_is_deterministic():
    pytest.importorskip("sklearn")
    trainer = load_trainer()
    rows = trainer.load_rows(trainer.TRAIN_FILES)
    feats = [learned.features(r["analysis"], trainer.FEATURES) for r in rows]
    labels = [r["rec"]["category"] for r in rows]
    train = [i for i in range(len(rows)) if i % 4]
    test = [i for i in range(len(rows)) if not i % 4]
    fitted, vec = trainer.fit([feats[i] for i in train], [labels[i] for i in train], trainer.MODEL)
    pure = trainer.model_from_sklearn(fitted, vec, trainer.FEATURES, trainer.MODEL)
    expected = fitted.predict_proba(vec.transform([feats[i] for i in test]))
    for row_index, sk in zip(test, expected):
        got = pure.predict_proba(rows[row_index]["analysis"])
        assert max(abs(got[c] - p) for c, p in zip(fitted.classes_, sk)) < 1e-6
    again = trainer.model_from_sklearn(*trainer.fit([feats[i] for i in train], [labels[i] for i in train],
                                                    trainer.MODEL), trainer.FEATURES, trainer.MODEL)
    assert json.dumps(again.data, sort_keys=True) == json.dumps(pure.data, sort_keys=True)


@pytest.mark.parametrize("config", [c for c in configs.TAGGING_CONFIGS if c.learned_model], ids=lambda c: c.id)
def test_each_tagging_config_names_its_own_released_artefact(config):
    model = learned.named_model(config.learned_model)
    assert model.version["training_logs"] > 1000
    assert not held_out_at_release(model.version["training_files"], config.learned_model)


def test_the_newest_model_answers_for_silent_rules_only_when_more_likely_right_than_not():
    newest = learned.named_model(configs.tagging_config().learned_model)
    assert newest is not learned.default_model()   # a retrain is a new file; tagging:2026-11b/c keep theirs
    assert newest.thresholds["unclassified_min_probability"] >= 0.5
    assert {"bench/devset/issues3/dev.jsonl", "bench/devset/issues4/dev.jsonl", "bench/devset/issues5/dev.jsonl"} <= set(
        newest.version["training_files"])
    assert all(c in taxonomy.CATEGORIES and taxonomy.CATEGORIES[c].dimension != "infrastructure" for c in newest.classes
               if c != learned.UNCLASSIFIED)
