"""A learned fallback beside the rules: a linear classifier over the parsed failure, in pure Python.

The rules (tagger) give precise, explainable tags; this model answers when no rule fires or a rule is
unsure. It is trained by `bench/train_learned.py` (scikit-learn, training time only) and exported to
`learned_model.json`: sparse per-class weights, intercepts and per-class sigmoid calibration
(CalibratedClassifierCV(LinearSVC, method="sigmoid")). Prediction here needs neither numpy nor
scikit-learn and reproduces scikit-learn's calibrated probabilities.

Features come only from fields every Analysis has: the exception type, the masked failure message
(word 1-2-grams and character 3-5-grams) and the few non-blank log lines before the failure line.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ARTEFACT = Path(__file__).with_name("learned_model.json")
UNCLASSIFIED = "unclassified"

# Extra masking on top of the normaliser's: quoted names, paths and numbers say which code failed,
# not why, and would make the model remember examples instead of reasons.
_QUOTED = re.compile(r"'[^'\n]{1,200}'|\"[^\"\n]{1,200}\"|`[^`\n]{1,200}`")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~+-]*[/\\])+[\w.+-]*")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"<NUM>|\d+(?:\.\d+)?")
_WORD = re.compile(r"<\w+>|[^\W\d]\w*")
_SPACE = re.compile(r"\s+")
_GROUPS = {"t": "exception type", "w": "message words", "c": "message characters", "x": "lines before"}


@dataclass(frozen=True)
class Prediction:
    category: str
    probability: float   # calibrated, 0..1
    rule: str            # "learned.<category>": says the answer came from the model
    evidence: tuple[str, ...]  # the features that pushed hardest towards the category, readable


def mask(text: str) -> str:
    # The membership tests skip regexes that cannot match: most lines have no quotes or paths.
    if "'" in text or '"' in text or "`" in text:
        text = _QUOTED.sub(" <q> ", text)
    if "/" in text or "\\" in text:
        text = _PATH.sub(" <path> ", text)
    if "0x" in text:
        text = _HEX.sub(" <hex> ", text)
    text = _NUMBER.sub(" <n> ", text)
    return _SPACE.sub(" ", text).strip().lower()


def _field(obj, name: str, default=None):
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def context_lines(analysis_like, count: int) -> list[str]:
    """The last `count` non-blank lines of the excerpt before the failure line (oldest first)."""
    excerpt = _field(analysis_like, "excerpt", "") or ""
    start, failure = _field(analysis_like, "excerpt_start_line"), _field(analysis_like, "failure_line_number")
    lines = excerpt.split("\n")
    if isinstance(start, int) and isinstance(failure, int) and start <= failure:
        lines = lines[:failure - start]
    else:
        lines = []  # no position for the failure: no reliable "before"
    picked = [line for line in lines if line.strip()][-count:] if count else []
    return picked


def _add_group(out: dict[str, float], keys: list[str], weight: float) -> None:
    # Binary presence, each group scaled to L2 norm `weight` so long messages do not drown the type.
    keys = dict.fromkeys(keys)  # distinct, in a fixed order (sets would follow the hash seed)
    if keys:
        value = weight / math.sqrt(len(keys))
        for key in keys:
            out[key] = value


def _word_grams(prefix: str, words: list[str]) -> list[str]:
    return [prefix + w for w in words] + [f"{prefix}{a} {b}" for a, b in zip(words, words[1:])]


def features(analysis_like, params: dict) -> dict[str, float]:
    """Feature name -> value for one parsed failure; `params` are the artefact's feature parameters."""
    exc = (_field(analysis_like, "exception_type", "") or "").strip()
    message = _field(analysis_like, "masked_message", "") or _field(analysis_like, "failure_line", "") or ""
    msg = mask(message[:params["max_chars"]])
    out: dict[str, float] = {}
    _add_group(out, ["t:" + exc.lower(), "t:" + exc.rsplit(".", 1)[-1].lower()] if exc else ["t:<none>"],
               params["type_weight"])
    _add_group(out, _word_grams("w:", _WORD.findall(msg)), params["word_weight"])
    padded = f" {msg} "
    lo, hi = params["char_ngrams"]
    _add_group(out, ["c:" + padded[i:i + n] for n in range(lo, hi + 1) for i in range(len(padded) - n + 1)],
               params["char_weight"])
    lines = context_lines(analysis_like, params["context_lines"])
    context = " ".join(mask(line[:params["max_chars"]]) for line in lines)
    _add_group(out, _word_grams("x:", _WORD.findall(context)), params["context_weight"])
    return out


class Model:
    """The exported classifier. `weights[feature]` lists [class index, weight] pairs."""

    def __init__(self, data: dict):
        if data.get("format") != "jobtriage-learned/1":
            raise ValueError(f"not a jobtriage learned model: format={data.get('format')!r}")
        self.data = data
        self.classes: list[str] = data["classes"]
        self.params: dict = data["features"]
        self.intercepts: list[float] = data["intercepts"]
        self.cal_a: list[float] = data["calibration"]["a"]
        self.cal_b: list[float] = data["calibration"]["b"]
        self.weights: dict[str, list] = data["weights"]
        self.thresholds: dict[str, float] = data["thresholds"]
        self.version: dict = data["version"]

    def decision(self, feats: dict[str, float]) -> tuple[list[float], list[tuple[str, float, list]]]:
        """Raw scores per class, and the features that carried weight (for the evidence)."""
        scores = list(self.intercepts)
        hits = []
        weights = self.weights
        for name, value in feats.items():
            row = weights.get(name)
            if row:
                hits.append((name, value, row))
                for i, weight in row:
                    scores[i] += weight * value
        return scores, hits

    def probabilities(self, scores: list[float]) -> list[float]:
        """scikit-learn's _CalibratedClassifier.predict_proba for one sample (sigmoid, one-vs-rest)."""
        raw = []
        for score, a, b in zip(scores, self.cal_a, self.cal_b):
            z = -(a * score + b)
            raw.append(1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z)))
        total = sum(raw)
        if total == 0:
            return [1.0 / len(raw)] * len(raw)
        probs = [p / total for p in raw]
        return [1.0 if 1.0 < p <= 1.0 + 1e-5 else p for p in probs]

    def predict_proba(self, analysis_like) -> dict[str, float]:
        return dict(zip(self.classes, self.probabilities(self.decision(features(analysis_like, self.params))[0])))

    def predict(self, analysis_like, evidence: int = 3) -> Prediction:
        scores, hits = self.decision(features(analysis_like, self.params))
        probs = self.probabilities(scores)
        best = max(range(len(probs)), key=lambda i: (probs[i], -i))
        return Prediction(self.classes[best], probs[best], f"learned.{self.classes[best]}",
                          _evidence(hits, best, evidence))


def _evidence(hits: list[tuple[str, float, list]], class_index: int, count: int) -> tuple[str, ...]:
    pushes = []
    for name, value, row in hits:
        for i, weight in row:
            if i == class_index and weight * value > 0:
                pushes.append((weight * value, name))
    pushes.sort(key=lambda p: (-p[0], p[1]))
    return tuple(f"{_GROUPS[name[0]]} \"{name[2:].strip()}\" (+{push:.2f})" for push, name in pushes[:count])


def load(path: str | Path = ARTEFACT) -> Model:
    with open(path, encoding="utf-8") as handle:
        return Model(json.load(handle))


@lru_cache(maxsize=4)
def named_model(file_name: str = ARTEFACT.name) -> Model:
    """A released artefact beside this module, by file name: each tagging config names the one it uses,
    so a retrained model is a new file and older configs keep their answers."""
    return load(ARTEFACT.with_name(file_name))


def default_model() -> Model:
    return named_model(ARTEFACT.name)


def predict(analysis_like, model: Model | None = None) -> Prediction:
    return (model or default_model()).predict(analysis_like)


def fallback(analysis_like, *, rule_category: str, rule_confidence: float,
             model: Model | None = None) -> Prediction | None:
    """The model's answer when it should replace the rule's, else None.

    It replaces the rule when the rule found nothing (`unclassified`) and the model is at least
    `unclassified_min_probability` sure, or when the rule is unsure (confidence below
    `rule_unsure_below`), the model disagrees and is at least `model_min_probability` sure. The
    thresholds were chosen by grouped cross-validation on the development corpus (bench/learned.md).
    """
    model = model or default_model()
    limits = model.thresholds
    if rule_category != UNCLASSIFIED and rule_confidence >= limits["rule_unsure_below"]:
        return None   # a sure rule stands: no need to ask the model (most logs; keeps parse + tag fast)
    prediction = model.predict(analysis_like)
    if prediction.category == UNCLASSIFIED:
        return None
    if rule_category == UNCLASSIFIED:
        return prediction if prediction.probability >= limits["unclassified_min_probability"] else None
    if (rule_confidence < limits["rule_unsure_below"] and prediction.category != rule_category
            and prediction.probability >= limits["model_min_probability"]):
        return prediction
    return None
