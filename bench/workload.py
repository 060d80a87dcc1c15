"""A deterministic, seeded generator of GENERATED ML training jobs whose shapes come from real data.

THE JOBS ARE GENERATED. No job, user, team or run produced by this module ever existed; only the
distributions they are drawn from and the failure texts inside them are real. Anything that loads
them marks them so: every job carries ``extra["generated"] = True`` and its platform ends in ``-gen``.

Where each shape comes from (data copied into ``bench/data/``, see each folder's README):

* runtimes: ``philly-derived/philly_runtime.csv``, 83,154 real job runtimes of Microsoft's Philly
  cluster (Jeon et al., USENIX ATC '19), from https://github.com/msr-fiddle/philly-traces via
  https://github.com/alibaba/clusterdata ``cluster-trace-gpu-v2020/analysis/philly_runtime.csv``;
  licence CC BY 4.0 (Microsoft's data). Successful jobs draw from the whole distribution; failed jobs
  from a per-stage tilt of it (below).
* GPU counts and the failed share: ``alibaba-openb-gpu-v2023/openb_pod_list_default.csv``, 8,152 real pods
  of Alibaba's "openb" GPU cluster (Weng et al., USENIX ATC '23), from
  https://github.com/alibaba/clusterdata ``cluster-trace-gpu-v2023`` (no licence file; public research
  data, used with attribution, not relicensed). Failed jobs take the GPU counts of the Failed pods,
  successful ones those of the Succeeded and Running pods (pods asking for 0 GPUs are left out; a
  fractional GPU share counts as 1 GPU). The failed share is Failed / (Failed + Succeeded + Running) pods
  (pod_phase at collection; Pending pods never ran): about 25.8%.
* the category mix: Table 1 of Zhang et al., "An Empirical Study on Program Failures of Deep Learning
  Jobs", ICSE 2020 (``study_count`` in ``jobs_ingest/core/taxonomy.py``; ``../shared/taxonomy.md``).
* the stage mix: the same study (failures: initialization 30.8%, data preprocessing 30.0%, training
  15.0%, evaluation 24.3%; GPU time wasted 0.9 / 1.4 / 12.9 / 84.8%). Each stage tilts the Philly
  runtime distribution (index ``u ** a_stage`` into the sorted runtimes, ``a_stage`` calibrated at import)
  so that the mean runtime of a stage's failures is ``GPU-time share / failure share`` times the Philly
  mean: initialization failures are frequent but short, evaluation failures long. Syntax errors and
  missing libraries always fail at initialization (the other categories' mix is adjusted so the overall
  mix stays the study's).
* failure texts: the records of ``bench/devset/job_logs.jsonl`` (real failure texts inside composed
  training output, built by ``bench/devset/build_job_logs.py``), ``notebook_crashes.jsonl`` (718 real ML
  notebook crashes, Wang et al., IEEE TSE 2025, https://github.com/PELAB-LiU/JunoBench_construct, MIT
  licence) and ``programs.jsonl`` (real output of small failing programs of this repository) whose label
  is the chosen category and on which the tagger agrees. Each source log is analysed once
  (``jobs_ingest.core.analyse_text``) and its Analysis reused. Per job, numbers (>= 10) and user
  directories vary, which the normaliser masks, so many jobs share one signature; structural variants
  (the user's function renamed, a quoted name changed) give shared variants and a long tail of unique
  signatures.

Assumptions (not from data, stated here so nobody mistakes them for measurements): teams and
submitters are Zipf-skewed (40 teams, 1,200 submitters, exponent 1.1); retries: a failed job has 1, 2
or 3 attempts with probability 0.70/0.18/0.12 (0.55/0.27/0.18 for categories whose advice is to retry),
a successful job 0.93/0.05/0.02; three platforms; 20-45% of successful jobs reuse the name of a job its
submitter saw fail (the "fixed by" pairs); log sizes ~ runtime x a lognormal rate, 2 KB .. 400 MB.

Jobs span ``weeks`` ISO weeks ending Sunday 2026-11-22 (ISO week 2026-W47), with fewer jobs at night and
at weekends; they come out in order of end time. Output is plain dicts (no Django here):

    >>> from bench.workload import Workload
    >>> for job in Workload(1000, seed=1).jobs():   # job["attempts"], job["failure"] (None if it succeeded)
    ...     pass
    >>> "".join(Workload(1000, seed=1).log_chunks(job))   # the job's whole log text, streamed

Same ``(n_jobs, seed, options)`` -> the same jobs, in the same order, on any machine.
"""
from __future__ import annotations

import bisect
import csv
import hashlib
import json
import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from jobs_ingest.core import analyse_text, normalise
from jobs_ingest.core.analysis import Analysis
from jobs_ingest.core.taxonomy import CATEGORIES, RETRY, RETRY_WITH_CHANGE

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / "data"  # copies of ../shared/data files, with their sources and licences
DEVSET_DIR = HERE / "devset"
DEVSET_FILES = ("job_logs.jsonl", "notebook_crashes.jsonl", "programs.jsonl")
END_DATE = date(2026, 11, 22)  # a Sunday: the last day of ISO week 2026-W47

# The study's stage mix: (share of failures, share of GPU time wasted).
STUDY_STAGES = {"initialization": (0.308, 0.009), "data_preprocessing": (0.300, 0.014),
                "training": (0.150, 0.129), "evaluation": (0.243, 0.848)}
INIT_ONLY_CATEGORIES = {"syntax_error", "library_not_found"}

PLATFORMS = (("slurm-gen", 0.50), ("k8s-gen", 0.35), ("philly-gen", 0.15))
N_TEAMS, N_SUBMITTERS, ZIPF_S = 40, 1200, 1.1
FAILED_ATTEMPTS = (0.70, 0.18, 0.12)
RETRIED_ATTEMPTS = (0.55, 0.27, 0.18)  # categories whose advice is retry / retry with a change
SUCCESS_ATTEMPTS = (0.93, 0.05, 0.02)
# Signature variants of a failure: the source's own signature, a shared variant, or a unique one.
P_BASE, P_SHARED, SHARED_VARIANTS = 0.55, 0.30, 64

_VERBS = ("train", "evaluate", "load", "build", "prepare", "run", "compute", "save", "restore", "encode",
          "decode", "validate", "predict", "preprocess", "collate", "init", "setup", "fit", "score", "export",
          "sample", "augment", "tokenize", "shard", "merge", "parse", "resolve", "fetch", "stream", "apply")
_NOUNS = ("model", "batch", "dataset", "epoch", "step", "loader", "checkpoint", "features", "labels", "metrics",
          "config", "optimizer", "scheduler", "embeddings", "vocab", "images", "tokens", "shards", "weights",
          "logits", "inputs", "outputs", "masks", "graph", "pipeline", "split", "cache", "sampler", "head",
          "encoder")
_TEAM_WORDS = ("vision", "speech", "nlp", "recsys", "ads", "search", "robotics", "rl", "multimodal", "ocr",
               "translation", "asr", "tts", "ranking", "fraud", "maps", "health", "llm", "pretrain", "infra")
_FIRST = ("alex", "sam", "kim", "lee", "maria", "chen", "yuki", "omar", "anna", "li", "raj", "sara", "tom",
          "wei", "ivan", "nina", "paul", "zoe", "ali", "emma", "jon", "lena", "ravi", "mei", "hugo", "ines")
_MODELS = ("resnet50", "vit-b16", "bert-base", "gpt2-medium", "t5-small", "llama-7b", "whisper", "unet",
           "yolov8", "efficientnet", "deberta", "wav2vec2", "clip", "mae", "dlrm", "gnn", "lstm-lm", "detr")
_DATASETS = ("imagenet", "coco", "squad", "wiki", "librispeech", "c4", "criteo", "cifar100", "mnli",
             "openwebtext", "kinetics", "ade20k", "internal-clicks", "pile")
_TASKS = ("pretrain", "finetune", "sweep", "eval", "distill", "ablation", "baseline", "repro")
_STOP_TOKENS = {"nonetype", "none", "str", "int", "float", "list", "dict", "tuple", "bytes", "bool", "object",
                "tensor", "nan", "inf", "utf-8", "utf8", "ascii", "latin-1", "cuda", "cpu", "long", "self",
                "module", "function", "type", "numpy.ndarray", "ndarray", "dataframe", "series"}

# Not error numbers: "[Errno 21]" and "cuda runtime error (2)" name the failure.
_INT = re.compile(r"(?<![\w.:\-/<])(?<!Errno )(?<!errno )(?<!error \()(?<!code )(?<!signal )([1-9]\d+)(?![\w:\-/]|\.\d)")
_USER_DIR = re.compile(r"(?<![\w.])/(home|mnt|data|scratch|users|Users)/[\w.-]+/")
_QUOTED = re.compile(r"'([\w./-]{2,80})'|\"([\w./-]{2,80})\"")


def _zipf_cdf(n: int, s: float) -> list[float]:
    weights = [1 / (k + 1) ** s for k in range(n)]
    return _cdf(weights)


def _cdf(weights) -> list[float]:
    weights = list(weights)
    total, acc, out = float(sum(weights)), 0.0, []
    for w in weights:
        acc += w
        out.append(acc / total)
    out[-1] = 1.0
    return out


def _pick(cdf: list[float], u: float) -> int:
    return min(bisect.bisect_right(cdf, u), len(cdf) - 1)


def _name(i: int) -> str:
    """An injective, digit-free identifier for variant i (digits would be masked by the normaliser)."""
    v, n = _VERBS[i % len(_VERBS)], _NOUNS[(i // len(_VERBS)) % len(_NOUNS)]
    rest, suffix = i // (len(_VERBS) * len(_NOUNS)), ""
    while rest:
        rest, r = divmod(rest - 1, 26)
        suffix = chr(97 + r) + suffix
    return f"{v}_{n}" + (f"_{suffix}" if suffix else "")


# ---------------------------------------------------------------------------------------------------
# Real data, read once per process.

@lru_cache(maxsize=None)
def philly_runtimes(data_dir: Path = DATA_DIR) -> tuple[float, ...]:
    with open(data_dir / "philly-derived" / "philly_runtime.csv", newline="") as f:
        return tuple(sorted(float(r["runtime"]) for r in csv.DictReader(f)))


@lru_cache(maxsize=None)
def alibaba_pods(data_dir: Path = DATA_DIR) -> dict:
    """GPU counts of failed and of other pods, and the failed share, from the openb pod list."""
    phases, failed_gpus, other_gpus = Counter(), Counter(), Counter()
    with open(data_dir / "alibaba-openb-gpu-v2023" / "openb_pod_list_default.csv", newline="") as f:
        for row in csv.DictReader(f):
            phase, gpus = row["pod_phase"], int(row["num_gpu"])
            phases[phase] += 1
            if gpus == 0 or phase == "Pending":
                continue
            (failed_gpus if phase == "Failed" else other_gpus)[gpus] += 1
    ran = phases["Failed"] + phases["Succeeded"] + phases["Running"]
    return {"failed_share": phases["Failed"] / ran, "failed_gpus": dict(sorted(failed_gpus.items())),
            "other_gpus": dict(sorted(other_gpus.items())), "phases": dict(phases)}


@lru_cache(maxsize=None)
def stage_exponents(data_dir: Path = DATA_DIR) -> dict[str, float]:
    """a_stage such that E[runtime[u ** a * n]] / mean(runtime) = GPU-time share / failure share."""
    v = philly_runtimes(data_dir)
    n, mean, k = len(v), sum(v) / len(v), 4000
    points = [(i + 0.5) / k for i in range(k)]

    def ratio(a: float) -> float:
        return sum(v[min(n - 1, int(p ** a * n))] for p in points) / k / mean

    out = {}
    for stage, (failures, gpu_time) in STUDY_STAGES.items():
        lo, hi = 0.01, 500.0
        for _ in range(50):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if ratio(mid) > gpu_time / failures else (lo, mid)
        out[stage] = math.sqrt(lo * hi)
    return out


@dataclass
class Source:
    """One real failure log of the dev set and its analysis (done once)."""
    id: str
    log: str
    exit_code: int | None
    analysis: Analysis
    location: str | None          # what the fingerprint hashes besides the message; None = not recovered
    function: str = ""            # the user's function, renamed by variants ("" = no such lever)
    token: str = ""               # a quoted name in the message, renamed by variants
    vary_numbers: bool = True
    variants: dict = field(default_factory=dict)


def _recover_location(a: Analysis) -> tuple[str | None, str]:
    function = a.user_frame.rsplit(" in ", 1)[1] if " in " in a.user_frame else ""
    for candidate in ([function] if function else []) + [""]:
        if normalise.fingerprint(a.exception_type, a.message, candidate) == a.fingerprint:
            return candidate, function if candidate and re.fullmatch(r"[A-Za-z_]\w*", candidate) else ""
    return None, ""


def _vary_numbers(text: str, scale: float, user: str) -> str:
    """Per-job noise the normaliser masks: integers >= 10 scaled, user directories renamed."""
    return _render(_split(text), scale, user)


_NOISE = re.compile(_INT.pattern + "|" + _USER_DIR.pattern)


def _split(text: str) -> tuple:
    """The text cut into literal parts, ints (>= 10) and user-directory roots, to vary it quickly."""
    parts, at = [], 0
    for m in _NOISE.finditer(text):
        parts.append(text[at:m.start()])
        parts.append(int(m.group(1)) if m.group(1) else (m.group(2), m.group(0)))
        at = m.end()
    parts.append(text[at:])
    return tuple(parts)


def _render(parts: tuple, scale: float, user: str) -> str:
    if len(parts) == 1:
        return parts[0]
    out = []
    for part in parts:
        if part.__class__ is str:
            out.append(part)
        elif part.__class__ is int:
            out.append(str(max(10, int(part * scale))) if scale != 1.0 else str(part))
        else:
            out.append(f"/{part[0]}/{user}/" if user else part[1])
    return "".join(out)


@lru_cache(maxsize=None)
def sources(devset_dir: Path = DEVSET_DIR) -> dict[str, tuple[Source, ...]]:
    """The dev set's failure logs by category, each analysed once; only those the tagger labels as
    the dev set does (so a generated failure's category is what the product would say)."""
    by_category: dict[str, list[Source]] = {c: [] for c in CATEGORIES}
    for name in DEVSET_FILES:
        with open(devset_dir / name) as f:
            for line in f:
                record = json.loads(line)
                label = record["category"]
                if label not in CATEGORIES or not CATEGORIES[label].study_count:
                    continue
                analysis = analyse_text(record["log"], exit_code=record.get("exit_code"))
                if analysis.category != label:
                    continue
                location, function = _recover_location(analysis)
                token_match = next((m for m in _QUOTED.finditer(analysis.message)
                                    if (m.group(1) or m.group(2)).lower() not in _STOP_TOKENS
                                    and not (m.group(1) or m.group(2))[0].isupper()), None)
                source = Source(record["id"], record["log"], record.get("exit_code"), analysis, location,
                                function, (token_match.group(1) or token_match.group(2)) if token_match else "")
                masked = normalise.masked_message(analysis.exception_type,
                                                  _vary_numbers(analysis.message, 1.7, "someone"))
                source.vary_numbers = masked == analysis.masked_message
                by_category[label].append(source)
    return {c: tuple(s) for c, s in by_category.items() if s}


# ---------------------------------------------------------------------------------------------------
# Structural variants of a source: rename its user function and/or a quoted name in its message.

def _rename_function(text: str, old: str, new: str) -> str:
    return re.sub(rf"(, in |\bin ){re.escape(old)}\b", rf"\g<1>{new}", text)


def _rename_token(text: str, old: str, new: str) -> str:
    return text.replace(f"'{old}'", f"'{new}'").replace(f'"{old}"', f'"{new}"')


def _new_token(old: str, variant: int) -> str:
    if "/" in old or "." in old:  # a path or file name: keep folder and extension, rename the stem
        folder, _, base = old.rpartition("/")
        stem, dot, ext = base.partition(".")
        return f"{folder}/{_name(variant)}.{ext}".lstrip("/") if dot else (f"{folder}/" if folder else "") + _name(variant)
    return _name(variant)


def _transform(source: Source, variant: int):
    """The text transformation of a variant (applied to the log and to the analysis' text fields)."""
    steps = []
    if variant and source.function:
        steps.append(lambda t, new=_name(variant): _rename_function(t, source.function, new))
    if variant and source.token and (not source.function or variant % 3 == 0):
        steps.append(lambda t, new=_new_token(source.token, variant): _rename_token(t, source.token, new))

    def apply(text: str) -> str:
        for step in steps:
            text = step(text)
        return text
    return apply if steps else None


def variant_fields(source: Source, variant: int) -> dict:
    """The analysis fields of a variant (cached for shared variants by the caller)."""
    a = source.analysis
    transform = _transform(source, variant) if variant else None
    if transform is None:
        return {"variant": 0, "fields": a.as_dict()}
    if source.location is None:  # no cheap recipe for the fingerprint: analyse the variant's log
        b = analyse_text(transform(source.log), exit_code=source.exit_code)
        if b.category != a.category:
            return {"variant": 0, "fields": a.as_dict()}
        return {"variant": variant, "fields": b.as_dict()}
    fields = a.as_dict()
    for key in ("message", "failure_line", "evidence", "excerpt", "traceback"):
        fields[key] = transform(fields[key])
    location = source.location
    if source.function:
        location = _name(variant)
        fields["user_frame"] = a.user_frame.rsplit(" in ", 1)[0] + " in " + location
    fields["masked_message"] = normalise.masked_message(a.exception_type, fields["message"])
    fields["fingerprint"] = normalise.fingerprint(a.exception_type, fields["message"], location)
    return {"variant": variant, "fields": fields}


# ---------------------------------------------------------------------------------------------------

FAILURE_FIELDS = ("found", "failure_line", "failure_line_number", "exception_type", "message", "traceback",
                  "user_frame", "excerpt", "excerpt_start_line", "stage", "category", "dimension", "confidence",
                  "rule", "evidence", "tagger_version", "retry_advice")


VARIED_FIELDS = ("message", "failure_line", "evidence", "excerpt", "traceback")


class Workload:
    """``n_jobs`` generated jobs (failed and successful) from ``seed``. See the module docstring."""

    def __init__(self, n_jobs: int, seed: int = 0, *, weeks: int = 8, end: date = END_DATE,
                 failed_share: float | None = None, data_dir: Path = DATA_DIR, devset_dir: Path = DEVSET_DIR):
        if n_jobs < 0 or weeks < 1:
            raise ValueError("n_jobs must be >= 0 and weeks >= 1")
        self.n_jobs, self.seed, self.weeks = n_jobs, seed, weeks
        self.end = datetime(end.year, end.month, end.day, tzinfo=timezone.utc) + timedelta(days=1)
        self.start = self.end - timedelta(weeks=weeks)
        pods = alibaba_pods(data_dir)
        self.failed_share = pods["failed_share"] if failed_share is None else failed_share
        self.runtimes = philly_runtimes(data_dir)
        self.exponents = stage_exponents(data_dir)
        self.sources = sources(devset_dir)
        self._failed_gpus = (list(pods["failed_gpus"]), _cdf(pods["failed_gpus"].values()))
        self._other_gpus = (list(pods["other_gpus"]), _cdf(pods["other_gpus"].values()))
        counts = {c: CATEGORIES[c].study_count for c in self.sources}
        self._categories = list(counts)
        self._category_cdf = _cdf(counts.values())
        forced = sum(counts[c] for c in INIT_ONLY_CATEGORIES if c in counts) / sum(counts.values())
        stage_weights = {s: (share - (forced if s == "initialization" else 0)) / (1 - forced)
                         for s, (share, _) in STUDY_STAGES.items()}
        self._stages = list(stage_weights)
        self._stage_cdf = _cdf(stage_weights.values())
        rng = random.Random(f"workload-setup-{seed}")
        # Teams, submitters (Zipf-skewed activity), their job names.
        self.teams = [f"{_TEAM_WORDS[i % len(_TEAM_WORDS)]}" + (f"-{i // len(_TEAM_WORDS) + 1}" if i >= len(_TEAM_WORDS) else "")
                      for i in range(N_TEAMS)]
        rng.shuffle(self.teams)
        team_cdf = _zipf_cdf(N_TEAMS, ZIPF_S)
        self.submitters = [f"{_FIRST[i % len(_FIRST)]}.{_FIRST[(i * 7 + 3) % len(_FIRST)][0]}{i // len(_FIRST)}"
                           for i in range(N_SUBMITTERS)]
        rng.shuffle(self.submitters)
        self._submitter_team = [self.teams[_pick(team_cdf, rng.random())] for _ in range(N_SUBMITTERS)]
        self._submitter_cdf = _zipf_cdf(N_SUBMITTERS, ZIPF_S)
        self._names = [[f"{rng.choice(_MODELS)}-{rng.choice(_DATASETS)}-{rng.choice(_TASKS)}"
                        for _ in range(1 + int(rng.paretovariate(1.5)) % 12)] for _ in range(N_SUBMITTERS)]
        self._name_cdfs = [_zipf_cdf(len(names), 1.0) for names in self._names]
        self._attempt_cdfs = {key: _cdf(p) for key, p in (("failed", FAILED_ATTEMPTS), ("retried", RETRIED_ATTEMPTS),
                                                           ("succeeded", SUCCESS_ATTEMPTS))}
        # Source logs: a seeded, Zipf-skewed popularity within each category.
        self._source_order = {}
        for category, pool in self.sources.items():
            order = list(range(len(pool)))
            rng.shuffle(order)
            self._source_order[category] = (order, _zipf_cdf(len(order), 1.0))
        self._platform_cdf = _cdf(w for _, w in PLATFORMS)
        self._shared_cdf = _zipf_cdf(SHARED_VARIANTS, 1.3)
        self._time_cdf = self._arrival_cdf()
        self._variant_cache: dict[tuple, dict] = {}

    # -- time ---------------------------------------------------------------------------------------
    def _arrival_cdf(self) -> list[float]:
        """Hourly arrival weights over the span: fewer jobs at night and at weekends."""
        weights, hour = [], self.start
        while hour < self.end:
            day = 0.45 if hour.weekday() >= 5 else 1.0
            diurnal = 0.55 + 0.45 * math.sin(math.pi * max(0, min(hour.hour - 6, 16)) / 16)
            weights.append(day * diurnal)
            hour += timedelta(hours=1)
        return _cdf(weights)

    def _end_time(self, i: int, u: float) -> int:
        q = (i + u) / max(self.n_jobs, 1)
        h = _pick(self._time_cdf, q)
        lo = self._time_cdf[h - 1] if h else 0.0
        frac = (q - lo) / max(self._time_cdf[h] - lo, 1e-12)
        return int(self.start.timestamp() + (h + min(max(frac, 0.0), 0.999)) * 3600)

    # -- jobs ---------------------------------------------------------------------------------------
    def jobs(self) -> Iterator[dict]:
        rng = random.Random(f"workload-{self.seed}")
        last_failed: dict[int, str] = {}  # submitter -> the name of their latest failed job
        for i in range(self.n_jobs):
            yield self._job(i, rng, last_failed)

    def __iter__(self):
        return self.jobs()

    def _runtime(self, rng: random.Random, stage: str | None) -> int:
        v = self.runtimes
        u = rng.random()
        index = int((u ** self.exponents[stage] if stage else u) * len(v))
        return max(1, int(v[min(index, len(v) - 1)]))

    def _job(self, i: int, rng: random.Random, last_failed: dict[int, str]) -> dict:
        ended = self._end_time(i, rng.random())
        failed = rng.random() < self.failed_share
        s = _pick(self._submitter_cdf, rng.random())
        submitter, team = self.submitters[s], self._submitter_team[s]
        names = self._names[s]
        if not failed and s in last_failed and rng.random() < 0.45:
            name = last_failed.pop(s)  # the fix of an earlier failure
        else:
            name = names[_pick(self._name_cdfs[s], rng.random())]
        platform = PLATFORMS[_pick(self._platform_cdf, rng.random())][0]
        values, cdf = self._failed_gpus if failed else self._other_gpus
        gpus = values[_pick(cdf, rng.random())]
        failure, stage, exit_code, signal = None, None, 0, ""
        if failed:
            category = self._categories[_pick(self._category_cdf, rng.random())]
            stage = "initialization" if category in INIT_ONLY_CATEGORIES else \
                self._stages[_pick(self._stage_cdf, rng.random())]
            failure = self._failure(i, rng, category, submitter)
            failure["stage"] = stage
            exit_code = failure.pop("_exit_code")
            signal = "SIGKILL" if exit_code in (137, -9) else ""
            last_failed[s] = name
            advice = CATEGORIES[category].retry_advice
            attempt_cdf = self._attempt_cdfs["retried" if advice in (RETRY, RETRY_WITH_CHANGE) else "failed"]
        else:
            attempt_cdf = self._attempt_cdfs["succeeded"]
        n_attempts = 1 + _pick(attempt_cdf, rng.random())
        base = self._runtime(rng, stage)
        attempts, t = [], ended
        for number in range(n_attempts, 0, -1):  # backwards from the end of the last attempt
            last = number == n_attempts
            if failed or last:
                runtime = max(1, int(base * math.exp(rng.gauss(0, 0.15)))) if not last else base
            else:  # an earlier attempt of a job that succeeded later: preempted or a transient error
                runtime = max(1, int(base * rng.random()))
            status = "succeeded" if (last and not failed) else "failed"
            code = 0 if status == "succeeded" else (exit_code if failed else rng.choice((1, 137, 143)))
            attempts.append({"number": number, "started_at": _dt(t - runtime), "ended_at": _dt(t), "gpus": gpus,
                             "exit_code": code, "status": status})
            t -= runtime + int(rng.expovariate(1 / 300)) + 10
        attempts.reverse()
        gpu_seconds = float(sum(gpus * (a["ended_at"] - a["started_at"]).total_seconds() for a in attempts))
        started = attempts[0]["started_at"]
        submitted = started - timedelta(seconds=int(rng.expovariate(1 / 900)))
        log_bytes = int(min(4e8, max(2048, base * math.exp(rng.gauss(math.log(40), 1.2)))))
        if failure:
            failure["gpu_seconds"] = gpu_seconds
        model = name.split("-")[0]
        return {
            "platform": platform, "external_id": f"gen{self.seed}-{i:07d}", "name": name,
            "submitter": submitter, "team": team, "status": "failed" if failed else "succeeded",
            "submitted_at": submitted, "started_at": started, "ended_at": attempts[-1]["ended_at"],
            "gpus": gpus, "exit_code": exit_code, "signal": signal,
            "command": f"torchrun --nproc_per_node={gpus} train.py --config configs/{model}.yaml",
            "code_version": hashlib.sha1(f"{self.seed}-{submitter}-{name}-{i // 50}".encode()).hexdigest()[:12],
            "image": f"registry.example.com/{team}/train:{['2.1', '2.2', '2.3', '2.4'][s % 4]}-cuda12",
            "log_path": "", "log_bytes": log_bytes, "log_sha256": "",
            "extra": {"generated": True, "generator": "bench/workload.py", "seed": self.seed,
                      **({"source_log": failure["source_id"]} if failure else {})},
            "attempts": attempts, "failure": failure, "gpu_seconds": gpu_seconds,
        }

    def _failure(self, i: int, rng: random.Random, category: str, submitter: str) -> dict:
        pool = self.sources[category]
        order, cdf = self._source_order[category]
        k = order[_pick(cdf, rng.random())]
        source = pool[k]
        r = rng.random()
        if r < P_BASE:
            variant = 0
        elif r < P_BASE + P_SHARED:
            variant = 1 + _pick(self._shared_cdf, rng.random())
        else:
            variant = 10_000 + i  # unique to this job
        if variant and not (source.function or source.token):
            variant = 0
        key = (category, k, variant)
        chosen = self._variant_cache.get(key)
        if chosen is None:
            chosen = variant_fields(source, variant)
            if variant < 10_000:
                self._variant_cache[key] = chosen
        fields = chosen["fields"]
        if "parts" not in chosen:
            chosen["parts"] = {name: _split(fields[name]) for name in VARIED_FIELDS}
        scale = round(math.exp(rng.gauss(0, 0.5)), 2) if source.vary_numbers else 1.0
        user = submitter.replace(".", "_") if source.vary_numbers else ""
        out = {name: fields[name] for name in FAILURE_FIELDS}
        for name in VARIED_FIELDS:
            out[name] = _render(chosen["parts"][name], scale, user)
        out.update(fingerprint=fields["fingerprint"], masked_message=fields["masked_message"],
                   normaliser_version=fields["normaliser_version"], source_id=source.id,
                   variant=chosen["variant"], scale=scale, user_dir=user, _exit_code=_exit_code(source))
        return out

    # -- logs ---------------------------------------------------------------------------------------
    def failure_text(self, job: dict) -> str:
        """The failure part of a failed job's log: its source log with the job's variant and noise."""
        failure = job["failure"]
        category = failure["category"]
        source = next(s for s in self.sources[category] if s.id == failure["source_id"])
        transform = _transform(source, failure["variant"]) if failure["variant"] else None
        text = transform(source.log) if transform else source.log
        return _vary_numbers(text, failure["scale"], failure["user_dir"])

    def log_chunks(self, job: dict, max_bytes: int | None = None, *, size_bytes: int | None = None,
                   failure_before_end: int = 0) -> Iterator[str]:
        """The job's whole log, streamed in chunks (bounded memory): realistic training output up to
        about ``job["log_bytes"]`` (or ``max_bytes``, or exactly-ish ``size_bytes`` for any size, e.g. a
        1 GB log), then the failure text (failed jobs). With ``failure_before_end`` the failure is followed
        by that many bytes of output from the ranks that kept training until the launcher stopped them,
        as in a multi-GPU job whose failing rank is not the last one to write."""
        rng = random.Random(f"log-{job['external_id']}")
        tail = self.failure_text(job) if job["failure"] else "Training finished. Saved final checkpoint.\n"
        total = size_bytes if size_bytes is not None else min(job["log_bytes"], max_bytes or job["log_bytes"])
        header = (f"+ {job['command']}\n[{job['started_at']:%Y-%m-%d %H:%M:%S}] INFO launcher: job "
                  f"{job['external_id']} (generated by bench/workload.py) on {job['gpus']} GPU(s)\n")
        after = max(0, min(failure_before_end, total - len(tail.encode()) - len(header)))
        yield header
        state = {"step": 0, "loss": 2.5 + rng.random() * 4}
        yield from self._training_output(job, rng, state, total - len(tail.encode()) - len(header) - after, "")
        yield tail if tail.endswith("\n") or not after else tail + "\n"  # what follows starts a line of its own
        if after:
            yield from self._training_output(job, rng, state, after, "[rank1]: ")

    @staticmethod
    def _training_output(job: dict, rng: random.Random, state: dict, budget: int, prefix: str) -> Iterator[str]:
        """About ``budget`` bytes of trainer lines (step, loss, lr, ...), in chunks of 2,000 lines."""
        lines = []
        while budget > 0:
            state["step"] += 10
            step = state["step"]
            state["loss"] = loss = max(0.01, state["loss"] * (0.999 - rng.random() * 0.002) + rng.gauss(0, 0.01))
            line = (f"{prefix}[{job['started_at'] + timedelta(seconds=step // 5):%Y-%m-%d %H:%M:%S}] INFO trainer: "
                    f"step {step} loss {loss:.4f} lr {3e-4 * min(1, step / 2000):.2e} grad_norm "
                    f"{abs(rng.gauss(1, .3)):.3f} throughput {rng.randint(900, 1100) * job['gpus']} samples/s\n")
            lines.append(line)
            budget -= len(line)
            if len(lines) >= 2000:
                yield "".join(lines)
                lines = []
        if lines:
            yield "".join(lines)


def _exit_code(source: Source) -> int:
    if source.exit_code is not None:
        return int(source.exit_code)
    return 137 if source.analysis.rule.startswith("cpu_oom.exit_code") else 1


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _dt(seconds: int) -> datetime:
    return _EPOCH + timedelta(seconds=seconds)


def generate(n_jobs: int, seed: int = 0, **options) -> Iterator[dict]:
    """Shorthand for ``Workload(n_jobs, seed, **options).jobs()``."""
    return Workload(n_jobs, seed, **options).jobs()


if __name__ == "__main__":  # a quick look: python -m bench.workload 20000
    import sys
    import time
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    t0 = time.perf_counter()
    jobs = list(generate(n, seed=1))
    took = time.perf_counter() - t0
    failures = [j["failure"] for j in jobs if j["failure"]]
    fps = Counter(f["fingerprint"] for f in failures)
    print(f"{n} generated jobs in {took:.1f}s ({n / took:.0f}/s); {len(failures)} failed; "
          f"{len(fps)} signatures, {sum(1 for c in fps.values() if c == 1)} seen once; top {fps.most_common(3)}")
    print(Counter(f["category"] for f in failures).most_common())
    gpu = Counter()
    for f in failures:
        gpu[f["stage"]] += f["gpu_seconds"]
    print({k: round(v / sum(gpu.values()), 3) for k, v in gpu.items()},
          Counter(f["stage"] for f in failures))
