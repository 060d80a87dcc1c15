#!/usr/bin/env python3
"""Build the demo folder (demo/manifest.jsonl + demo/logs/) that scripts/dev.sh ingests.

Failures are the composed job logs of bench/devset/job_logs.jsonl (real failure texts inside
realistic training output; see bench/devset/README.md for sources and licences). Job metadata (teams,
submitters, GPUs, times, retries) is generated here from a fixed seed: it is demo data, not real jobs.
"""
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "bench" / "devset" / "job_logs.jsonl"
TEAMS = {"nlp": ["alice", "bob", "dmitri"], "vision": ["carol", "eve"], "speech": ["farid"], "recsys": ["grace", "heidi"]}
PLATFORMS = ["slurm", "k8s", "philly"]


def main(count: int = 60) -> None:
    rng = random.Random(2020)
    records = [json.loads(line) for line in SOURCE.open(encoding="utf-8")]
    rng.shuffle(records)
    chosen = records[:count]
    (HERE / "logs").mkdir(exist_ok=True)
    for old in (HERE / "logs").glob("*.log"):
        old.unlink()
    week_start = datetime(2026, 11, 16, tzinfo=timezone.utc)
    lines = []
    for number, record in enumerate(chosen, 1):
        team = rng.choice(list(TEAMS))
        submitter = rng.choice(TEAMS[team])
        gpus = rng.choice([1, 1, 2, 4, 8, 8, 16])
        start = week_start + timedelta(minutes=rng.randrange(0, 7 * 24 * 60))
        attempts = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            runtime = timedelta(minutes=int(rng.lognormvariate(3.5, 1.3)) + 1)
            attempts.append({"started_at": start.isoformat(), "ended_at": (start + runtime).isoformat(), "gpus": gpus,
                             "exit_code": record.get("exit_code") or 1})
            start = start + runtime + timedelta(minutes=rng.randrange(1, 30))
        log_name = f"logs/{record['id']}.log"
        (HERE / log_name).write_text(record["log"], encoding="utf-8")
        lines.append({"platform": rng.choice(PLATFORMS), "external_id": f"demo-{number:04d}",
                      "name": f"{team}-{rng.choice(['pretrain', 'finetune', 'eval', 'sweep'])}", "submitter": submitter,
                      "team": team, "status": "failed", "gpus": gpus, "exit_code": record.get("exit_code") or 1,
                      "started_at": attempts[0]["started_at"], "ended_at": attempts[-1]["ended_at"],
                      "command": "python train.py --config configs/run.yaml", "log": log_name, "attempts": attempts})
    (HERE / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    print(f"demo: {len(lines)} jobs written to {HERE}")


if __name__ == "__main__":
    main()
