"""Capture real sacct output and job logs from the test cluster, as fixtures for tests/unit:

    bash scripts/slurm.sh start && eval "$(bash scripts/slurm.sh env)"
    python -m tests.slurm.capture tests/fixtures/adapters/slurm/real-22.05

Submits one job of each kind (tests/slurm/cluster.py), waits until they ended, writes what sacct says
in both formats (with and without -D), restarts slurmctld and writes it again (a restart rewrites the
jobs that ended within MinJobAge), and copies the jobs' logs. Run it on another Slurm version to add
that version's fixtures. Needs root (jobs run as the cluster's job user)."""
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.slurm import cluster

REPO = Path(__file__).resolve().parents[2]


def main(out: Path) -> None:
    env = cluster.environment()
    version = cluster.run(["sinfo", "-V"]).stdout.split()[-1]
    jobs = cluster.JobSet("fixture", env["folder"] / "jobs" / f"capture-{int(time.time())}", env["user"]).submit()
    print(f"submitted {len(jobs.ids)} jobs to Slurm {version}; waiting (a time limit takes about 90 s) ...",
          file=sys.stderr)
    jobs.wait()
    out.mkdir(parents=True, exist_ok=True)
    (out / "sacct-parsable2.txt").write_text(cluster.sacct_parsable2(jobs.ids))
    (out / "sacct-parsable2-without-D.txt").write_text(cluster.sacct_parsable2(jobs.ids, duplicates=False))
    (out / "sacct.json").write_text(cluster.sacct_json(jobs.ids))
    print("restarting slurmctld ...", file=sys.stderr)
    subprocess.run(["bash", str(REPO / "scripts" / "slurm.sh"), "restart-controller"], check=True)
    time.sleep(3)   # the rewritten records reach slurmdbd a moment after the restart
    (out / "sacct-parsable2-after-restart.txt").write_text(cluster.sacct_parsable2(jobs.ids))
    (out / "sacct-after-restart.json").write_text(cluster.sacct_json(jobs.ids))
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    for path in sorted(jobs.folder.iterdir()):
        if path.suffix in (".out", ".err"):
            shutil.copy(path, logs / path.name)
    (out / "jobs.json").write_text(json.dumps(
        {"slurm": version, "folder": str(jobs.folder),
         "jobs": {k: {"job_id": s.job_id, "external_ids": s.external_ids} for k, s in jobs.submitted.items()}},
        indent=1) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.slurm.capture OUTPUT_FOLDER")
    main(Path(sys.argv[1]))
