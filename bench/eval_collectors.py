#!/usr/bin/env python3
"""Logs as collectors write them down: does a prefix on every line change a failure's tag or its grouping?

    .venv/bin/python bench/eval_collectors.py [--data FILE ...] [--configs ID ...] [--markdown]

Pure (no servers). Each labelled log is analysed as it is, then with one collector's documented line prefix
(Docker's json-file records, containerd/CRI-O files, kubectl --prefix, SageMaker's Open MPI tag, Ray, Docker Compose, pm2, pdsh, torchrun)
on every line, by each tagging config. Reported per collector and config: the share of logs whose category,
exact fingerprint and reason cluster stay those of the plain log, and the category accuracy against the labels
under the prefix (the plain logs' accuracy is the first row). Same logs, same configs, same grouping for every
row. collectors.py and trailers.py were written from the tools' formats and checked on the development logs; the
held-out rows are out of sample.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jobs_ingest.core.pipeline import analyse_text  # noqa: E402

DATA = ["bench/heldout3/cases.jsonl", "bench/heldout4/cases.jsonl", "bench/heldout5/cases.jsonl"]
CONFIGS = ["tagging:2026-11j", "tagging:2026-11k", "tagging:2026-11l", "tagging:2026-11o"]
COLLECTORS = {
    "none (plain log)": "",
    "Docker json-file": "json-file",
    "containerd / CRI-O file": "2024-05-01T10:00:{s:02d}.123456789Z stderr F ",
    "kubectl logs --prefix --timestamps": "[pod/bert-worker-0/pytorch] 2024-05-01T10:00:{s:02d}.123456789Z ",
    "SageMaker Open MPI": "[1,mpirank:0,algo-1]<stderr>:",
    "Ray worker": "(RayTrainWorker pid=1193, ip=10.244.4.193) ",
    "Docker Compose": "trainer-1  | ",
    "pm2": "0|train  | ",
    "pdsh (DeepSpeed multi-node)": "worker-0: ",
    "torchrun --tee": "[rank0]: ",
}


# What the tools print after a failure (their own texts; trailers.py).
TRAILERS = {
    "+ W&B exit summary": ["wandb: Waiting for W&B process to finish... (failed 1). Press Control-C to abort syncing.",
                           "wandb: - 0.012 MB of 0.012 MB uploaded (0.000 MB deduped)", "wandb: Run summary:",
                           "wandb:      train/loss 0.4123",
                           "wandb: 🚀 View run fine-tune-3 at: https://wandb.ai/team/proj/runs/abc123",
                           "wandb: Find logs at: ./wandb/run-20240501_100000-abc123/logs"],
    "+ Slurm step teardown": ["srun: error: gpu-node-3: task 0: Exited with exit code 1",
                              "srun: launch/slurm: _step_signal: Terminating StepId=123456.0",
                              "slurmstepd: error: *** STEP 123456.0 ON gpu-node-3 CANCELLED AT 2024-05-01T10:00:00 ***"],
    "+ torchrun teardown, exit warning": [
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1235 closing signal SIGTERM",
        "[W501 10:00:00.000000000 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed "
        "before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
        "destroy_process_group to ensure that any pending NCCL operations have finished in this process."],
    "+ Hydra's hint": ["Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."],
}


def prefixed(log: str, prefix: str) -> str:
    if isinstance(prefix, list):   # a trailer: lines after the log
        return log + "\n" + "\n".join(prefix)
    if prefix == "json-file":   # one {"log", "stream", "time"} record per line
        return "\n".join(json.dumps({"log": line + "\n", "stream": "stderr", "time": f"2024-05-01T10:00:{i % 60:02d}.1Z"})
                         for i, line in enumerate(log.split("\n")))
    return "\n".join(prefix.format(s=i % 60) + line for i, line in enumerate(log.split("\n"))) if prefix else log


# (grouping config, tagging config) pairs for the interleaved ranks: session 11's defaults, the rank's own context
# lines (grouping:2026-11f), and the failing rank's lines only after parsing (tagging:2026-11o).
RANK_CONFIGS = [("grouping:2026-11e", "tagging:2026-11j"), ("grouping:2026-11f", "tagging:2026-11n"),
                ("grouping:2026-11f", "tagging:2026-11o")]


def all_ranks(log: str, ranks: int, seed: int) -> str:
    """The log printed by every rank at once with torchrun's '[rankN]: ' prefixes, lines interleaved at random."""
    rng = random.Random(seed)
    streams = [[f"[rank{k}]: {line}" for line in log.split("\n")] for k in range(ranks)]
    out: list[str] = []
    while any(streams):
        out.append(rng.choice([s for s in streams if s]).pop(0))
    return "\n".join(out)


def interleaving_rows(cases: list[dict]) -> list[str]:
    """Per pair of configs: the share of logs whose category, fingerprint and cluster, printed by 2 or 4 ranks at once,
    are the ones the log has when one rank prints it."""
    lines = ["", "| printed by | configs | category unchanged | fingerprint unchanged | cluster unchanged |",
             "|---|---|---:|---:|---:|"]
    for grouping, tagging in RANK_CONFIGS:
        one = [analyse_text(prefixed(c["log"], "[rank0]: "), grouping_config=grouping, tagging_config=tagging)
               for c in cases]
        for ranks in (2, 4):
            seen = [analyse_text(all_ranks(c["log"], ranks, seed=i), grouping_config=grouping, tagging_config=tagging)
                    for i, c in enumerate(cases)]
            same = {k: sum(getattr(a, k) == getattr(b, k) for a, b in zip(seen, one)) / len(cases)
                    for k in ("category", "fingerprint", "cluster")}
            lines.append(f"| {ranks} ranks at once, interleaved | {grouping} + {tagging} | {same['category']:.1%} | "
                         f"{same['fingerprint']:.1%} | {same['cluster']:.1%} |")
            print(f"{grouping} {tagging} {ranks} ranks: done", file=sys.stderr)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="*", default=DATA)
    parser.add_argument("--configs", nargs="*", default=CONFIGS)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    cases = [json.loads(line) for path in args.data for line in open(ROOT / path, encoding="utf-8")]
    cases = [c for c in cases if c.get("log") and c.get("category")]
    lines = [f"{len(cases)} labelled logs from {', '.join(args.data)}.", "",
             "| collector prefix or trailer | tagging config | category unchanged | fingerprint unchanged | cluster unchanged "
             "| category accuracy |", "|---|---|---:|---:|---:|---:|"]
    for config in args.configs:
        plain = [analyse_text(c["log"], exit_code=c.get("exit_code"), tagging_config=config) for c in cases]
        for name, prefix in {**COLLECTORS, **TRAILERS}.items():
            seen = plain if not prefix else [
                analyse_text(prefixed(c["log"], prefix), exit_code=c.get("exit_code"), tagging_config=config)
                for c in cases]
            same = {k: sum(getattr(a, k) == getattr(b, k) for a, b in zip(seen, plain))
                    for k in ("category", "fingerprint", "cluster")}
            right = sum(a.category == c["category"] for a, c in zip(seen, cases))
            n = len(cases)
            lines.append(f"| {name} | {config} | {same['category'] / n:.1%} | {same['fingerprint'] / n:.1%} | "
                         f"{same['cluster'] / n:.1%} | {right}/{n} = {right / n:.1%} |")
            print(f"{config} {name}: done", file=sys.stderr)
    lines += interleaving_rows(cases)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
