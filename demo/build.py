#!/usr/bin/env python3
"""Build the demo folder (demo/manifest.jsonl + demo/logs/) that scripts/dev.sh ingests.

About 500 jobs of four teams over the six ISO weeks 2026-W42..W47, successes and failures in the
Philly trace's ratio (60.4% completed to 30.5% failed, cancellations left out: ../shared/data
gpu-cluster-summaries), runtimes drawn from 83,154 real Philly runtimes and GPU counts from the Alibaba
openb pods (bench/data). Each job is one project with one framework and one launcher, and its log is
written by one clock, so the log's timestamps, the job's start and end and its GPU hours agree.

Failure texts are real: the captured output of the development set's small failing programs
(bench/devset/programs.jsonl) and the public GPU and NCCL texts of bench/devset/build_job_logs.py; the
infrastructure endings follow Slurm's and PyTorch's published message formats. A project's bugs recur
(the same code fails the same way in several jobs) so that signatures collect failures, as on a real
platform. Everything else (names, times, counts) is generated from a fixed seed: demo data, not real jobs.
demo/judgments.json lists the triage decisions that `manage.py demo_triage` (if present) applies.
"""
from __future__ import annotations

import csv
import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "bench" / "devset"))
import build_job_logs as texts  # noqa: E402  (real failure texts and log pieces)

SEED = 47
FIRST_MONDAY = datetime(2026, 10, 12, tzinfo=timezone.utc)   # ISO week 2026-W42; six weeks to W47
WEEKS = 6
JOBS = 500
FAILED_SHARE = 0.305 / (0.604 + 0.305)    # Philly: failed / (completed + failed)
# project -> (team, framework, launcher, platform, submitters)
PROJECTS = {
    "bert-pretrain": ("nlp", "pytorch", "torchrun", "slurm", ["alice", "bob"]),
    "llama-sft": ("nlp", "hf-trainer", "torchrun", "k8s", ["dmitri", "alice"]),
    "detr-coco": ("vision", "pytorch", "torchrun", "slurm", ["carol"]),
    "vit-finetune": ("vision", "hf-trainer", "python", "k8s", ["eve", "carol"]),
    "conformer-asr": ("speech", "pytorch", "torchrun", "slurm", ["farid"]),
    "wav2vec-eval": ("speech", "keras", "python", "k8s", ["farid", "ines"]),
    "dlrm-train": ("recsys", "pytorch", "python", "slurm", ["grace", "heidi"]),
    "twotower-keras": ("recsys", "keras", "python", "k8s", ["heidi"]),
}
TORCH_ONLY = ("torch_", "loss_nan_anomaly")
INFRA_SHARE = 0.09   # of failures (Acme measured about 11%)


def program_failures() -> list[dict]:
    rows = [json.loads(line) for line in (ROOT / "bench" / "devset" / "programs.jsonl").open(encoding="utf-8")]
    return [{"key": r["id"].removeprefix("prog-"), "lines": r["log"].rstrip("\n").split("\n"),
             "category": r["category"], "stage": r.get("stage") or "training", "exit_code": r.get("exit_code") or 1}
            for r in rows if r["category"] != "cpu_oom" or "sigkill" not in r["id"]]


def public_failures() -> list[dict]:
    return [{"key": key, "lines": lines, "category": category, "stage": stage, "exit_code": 1}
            for category, key, stage, lines in texts.PUBLIC if key != "nccl-watchdog-timeout"]


def fits(failure: dict, framework: str) -> bool:
    key = failure["key"]
    if framework == "keras":
        return not key.startswith(TORCH_ONLY) and not key.startswith(("torch-", "nccl-", "detr-", "fairseq-", "cuda-"))
    return not key.startswith(("tf-", "jax-"))


def infra_ending(rng: random.Random, clock, host: str, job_id: str, platform: str) -> tuple[list[str], str]:
    """An ending caused by the platform, in the published formats (PyTorch's NCCL watchdog, Slurm's slurmstepd)."""
    if platform == "slurm" and rng.random() < 0.5:
        at = clock.tick(600, 7200)
        return [f"slurmstepd: error: *** JOB {job_id} ON {host} CANCELLED AT {at:%Y-%m-%dT%H:%M:%S} DUE TO NODE FAILURE, "
                "SEE SLURMCTLD LOG FOR DETAILS ***"], "node_failure"
    rank, seq = rng.randint(1, 7), rng.randint(20_000, 90_000)
    at = clock.tick(600, 1800)
    return [f"[rank{rank}]:[E{at:%m%d %H:%M:%S}.{rng.randint(0, 999999):06d} ProcessGroupNCCL.cpp:616] [Rank {rank}] "
            f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=131072, "
            "NumelOut=131072, Timeout(ms)=600000) ran for 600051 milliseconds before timing out.",
            f"[rank{rank}]:[E{at:%m%d %H:%M:%S}.{rng.randint(0, 999999):06d} ProcessGroupNCCL.cpp:1413] [PG 0 Rank {rank}] "
            "Timeout at NCCL work: 0, last enqueued NCCL work: 0, last completed NCCL work: -1.",
            f"[rank{rank}]:[E{at:%m%d %H:%M:%S}.{rng.randint(0, 999999):06d} ProcessGroupNCCL.cpp:1413] [PG 0 Rank {rank}] "
            "To avoid data inconsistency, we are taking the entire process down."], "nccl_timeout"


class JobClock(texts.Clock):
    """The build_job_logs clock, its ticks scaled so that the whole log spans the job's runtime."""

    def __init__(self, rng: random.Random, start: datetime, scale: float = 1.0):
        super().__init__(rng)
        self.t, self.scale = start, scale

    def tick(self, lo=1.0, hi=20.0):
        return super().tick(lo * self.scale, hi * self.scale)


def header(rng, clock, framework, launcher, host, world) -> list[str]:
    lines = [f"+ {'torchrun --nproc_per_node=' + str(world) if launcher == 'torchrun' else 'python'} train.py --config configs/run.yaml"]
    if launcher == "torchrun":
        lines += ["WARNING:torch.distributed.run:", "*****************************************",
                  "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
                  "being overloaded, please further tune the variable for optimal performance in your application as needed.",
                  "*****************************************"]
    if framework == "hf-trainer":
        lines += texts.env_banner(rng, clock)
    if framework == "keras":
        lines += [f"{clock.t:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999999):06d}: I tensorflow/core/platform/cpu_feature_guard.cc:210] "
                  "This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations."]
    if launcher == "torchrun":
        lines += texts.nccl_init(rng, host, world)
    return lines


def body(rng, clock, framework, stage: str, epochs: int) -> list[str]:
    style = {"keras": "keras", "hf-trainer": "tqdm"}.get(framework, "plain")
    lines = texts.preprocessing(rng, clock) if stage != "initialization" else []
    if stage in ("training", "evaluation", "done"):
        lines += texts.train_steps(rng, clock, epochs, style)
    if stage in ("evaluation", "done"):
        lines += texts.eval_intro(rng, clock)[:3]
    return lines


def compose(rng: random.Random, job: dict, start: datetime, scale: float) -> tuple[list[str], datetime]:
    """The job's log, written by one clock from its start; returns the lines and the end time."""
    clock = JobClock(rng, start, scale)
    framework, launcher, failure = job["framework"], job["launcher"], job["failure"]
    log = header(rng, clock, framework, launcher, job["host"], job["world"])
    if failure is None:
        log += body(rng, clock, framework, "done", job["epochs"])
        log.append(f"{clock.iso()} INFO trainer: training complete, best checkpoint saved to /mnt/output/{job['project']}/best.pt")
    elif failure == "infra":
        log += body(rng, clock, framework, "training", job["epochs"])
        log += infra_ending(rng, clock, job["host"], job["external_id"], job["platform"])[0]
    else:
        log += body(rng, clock, framework, failure["stage"], job["epochs"])
        ending = failure["lines"]
        if launcher == "torchrun":
            ending = texts.prefix_rank(ending, 0) + texts.torchrun_summary(rng, clock, job["host"], [0], "train.py")
        log += ending
    return log, clock.tick(0.1, 0.5)


def target_runtime(rng: random.Random, runtimes: list[float], failure) -> float:
    """Seconds: successes and infrastructure failures run long, program failures by their stage
    (the study: initialization failures are quick, evaluation failures come after all the training)."""
    stage = "done" if failure is None else "infra" if failure == "infra" else failure["stage"]
    spans = {"initialization": lambda: rng.uniform(60, 600), "data_preprocessing": lambda: rng.uniform(300, 3600),
             "training": lambda: rng.choice(runtimes) * rng.uniform(0.2, 0.9),
             "evaluation": lambda: rng.choice(runtimes) * rng.uniform(0.9, 1.2),
             "infra": lambda: rng.choice(runtimes) * rng.uniform(0.5, 1.0), "done": lambda: rng.choice(runtimes)}
    return max(60.0, spans.get(stage, spans["training"])())


def main() -> None:
    rng = random.Random(SEED)
    runtimes = sorted(float(r["runtime"]) for r in csv.DictReader((ROOT / "bench/data/philly-derived/philly_runtime.csv").open())
                      if 600 <= float(r["runtime"]) <= 3 * 86400)
    gpu_counts = [int(r["num_gpu"]) for r in csv.DictReader((ROOT / "bench/data/alibaba-openb-gpu-v2023/openb_pod_list_default.csv").open())
                  if int(r["num_gpu"]) >= 1]
    pool = program_failures() + public_failures()
    # Each project has a few bugs of its own that recur, then one-off failures from the pool.
    recurring = {p: rng.sample([f for f in pool if fits(f, spec[1])], 3) for p, spec in PROJECTS.items()}

    (HERE / "logs").mkdir(exist_ok=True)
    for old in (HERE / "logs").glob("*.log"):
        old.unlink()
    lines, stats = [], {"succeeded": 0, "failed": 0, "infrastructure": 0}
    for number in range(1, JOBS + 1):
        project = rng.choice(list(PROJECTS))
        team, framework, launcher, platform, submitters = PROJECTS[project]
        day = rng.choices(range(WEEKS * 7), weights=[1 if d % 7 >= 5 else 4 for d in range(WEEKS * 7)])[0]
        start = FIRST_MONDAY + timedelta(days=day, minutes=rng.randrange(7 * 60, 22 * 60))
        gpus = max(1, min(16, rng.choice(gpu_counts) * (8 if launcher == "torchrun" else 1)))
        failure = None
        if rng.random() < FAILED_SHARE:
            # Infrastructure endings are PyTorch's and Slurm's formats: only the PyTorch projects get them.
            infra = framework != "keras" and rng.random() < INFRA_SHARE
            failure = "infra" if infra else rng.choice(recurring[project]) if rng.random() < 0.6 \
                else rng.choice([f for f in pool if fits(f, framework)])
        job = {"project": project, "framework": framework, "launcher": launcher, "platform": platform,
               "host": f"{'gpu' if platform == 'slurm' else 'node'}-{rng.randint(1, 24):02d}", "world": min(gpus, 8),
               "external_id": str(4_100_000 + number * 7) if platform == "slurm" else f"{project}-{number:04d}",
               "failure": failure, "epochs": rng.randint(2, 6)}
        # Write the log once at unit speed to count its ticks, then again, identically, at the scale
        # that makes it span the job's runtime.
        seed, runtime = rng.getrandbits(32), target_runtime(rng, runtimes, failure)
        _, unit_end = compose(random.Random(seed), job, start, 1.0)
        log, ended = compose(random.Random(seed), job, start, runtime / max(1.0, (unit_end - start).total_seconds()))
        name = f"logs/job-{number:04d}.log"
        (HERE / name).write_text("\n".join(log) + "\n", encoding="utf-8")
        stats["succeeded" if failure is None else "failed"] += 1
        stats["infrastructure"] += failure == "infra"
        exit_code = 0 if failure is None else 1 if failure == "infra" else failure["exit_code"]
        lines.append({"platform": platform, "external_id": job["external_id"], "name": project,
                      "submitter": rng.choice(submitters), "team": team,
                      "status": "succeeded" if failure is None else "failed", "gpus": gpus, "exit_code": exit_code,
                      "submitted_at": (start - timedelta(minutes=rng.randint(1, 90))).isoformat(),
                      "started_at": start.isoformat(), "ended_at": ended.isoformat(),
                      "command": f"{'torchrun' if launcher == 'torchrun' else 'python'} train.py --config configs/run.yaml",
                      "image": f"registry.example.org/{team}/{framework}:2026.10", "log": name,
                      "nodes": [job["host"]], "extra": {"framework": framework, "launcher": launcher}})
    lines.sort(key=lambda job: job["started_at"])
    (HERE / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    print(f"demo: {len(lines)} jobs ({stats['succeeded']} succeeded, {stats['failed']} failed, of which "
          f"{stats['infrastructure']} infrastructure) over {WEEKS} weeks written to {HERE}")


if __name__ == "__main__":
    main()
