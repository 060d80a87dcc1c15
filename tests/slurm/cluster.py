"""The single-node Slurm of scripts/slurm.sh, driven from tests: submit a set of real jobs (one of each
way a job ends), steer the few that need a hand (cancel once running, release a requeue at once) and
wait until accounting knows how each ended. Used by tests/slurm and by `python -m tests.slurm.capture`."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

JOBS = Path(__file__).resolve().parent / "jobs"
FINAL = {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "DEADLINE",
         "BOOT_FAIL"}
# The documented cron line's fields (docs/platforms/slurm.md), all known to Slurm 22.05 and later.
PARSABLE2_FIELDS = ("JobID,JobIDRaw,JobName,User,UID,Account,Partition,State,ExitCode,Submit,Start,End,"
                    "AllocTRES,ReqTRES,NodeList,WorkDir,SubmitLine")


class SlurmMissing(RuntimeError):
    pass


def environment() -> dict:
    """SLURM_CONF and the cluster folder, as `scripts/slurm.sh env` exports them; SlurmMissing if the
    cluster is not running (or this process cannot submit as the jobs' user)."""
    conf, folder = os.environ.get("SLURM_CONF"), os.environ.get("JOBTRIAGE_SLURM_DIR")
    if not conf or not folder or not Path(conf).is_file():
        raise SlurmMissing("SLURM_CONF / JOBTRIAGE_SLURM_DIR are not set: run `bash scripts/slurm.sh start` "
                           "and `eval \"$(bash scripts/slurm.sh env)\"` (scripts/test.sh does both as root)")
    if os.geteuid() != 0:
        raise SlurmMissing("the Slurm tests submit jobs as another user and steer them as root: run them as root")
    for tool in ("sbatch", "sacct", "scontrol", "squeue", "scancel"):
        if not shutil.which(tool):
            raise SlurmMissing(f"{tool} is not installed: run `bash scripts/slurm.sh start`")
    ping = run(["scontrol", "ping"], check=False)
    if "UP" not in ping.stdout:
        raise SlurmMissing(f"slurmctld does not answer (scontrol ping: {ping.stdout.strip() or ping.stderr.strip()}): "
                           "run `bash scripts/slurm.sh start`; its logs are in $JOBTRIAGE_SLURM_DIR/log")
    return {"conf": conf, "folder": Path(folder), "user": os.environ.get("JOBTRIAGE_SLURM_JOB_USER", "jobtriage-jobs")}


def run(args, *, check=True, user: str | None = None, cwd=None, env=None) -> subprocess.CompletedProcess:
    if user:
        args = ["runuser", "-u", user, "--", *args]
    done = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=60,
                          env={**os.environ, "TZ": "UTC", **(env or {})})
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done


def sacct_parsable2(ids, *, duplicates=True, fields=PARSABLE2_FIELDS) -> str:
    args = ["sacct", "-a", "-X", "-P", f"--format={fields}", "-j", ",".join(ids)]
    return run(args + (["-D"] if duplicates else [])).stdout


def sacct_json(ids, *, duplicates=True) -> str:
    return run(["sacct", "-a", "-X", "--json", "-j", ",".join(ids)] + (["-D"] if duplicates else [])).stdout


def sacct_rows(ids, *, duplicates=True) -> list[dict]:
    """sacct's own view (parsable2, -D), one dict per incarnation, to compare what is stored with."""
    lines = sacct_parsable2(ids, duplicates=duplicates).splitlines()
    header = lines[0].split("|")
    rows = []
    for line in lines[1:]:
        cells = line.split("|")
        if len(cells) > len(header):   # SubmitLine is last and may hold '|'
            cells = cells[:len(header) - 1] + ["|".join(cells[len(header) - 1:])]
        rows.append(dict(zip(header, cells)))
    return rows


@dataclass
class Submitted:
    kind: str
    job_id: str              # what sbatch printed (an array's parent id)
    external_ids: list[str]  # sacct's JobID of each job it makes (array tasks: <id>_<task>)


@dataclass
class JobSet:
    """One of each way a job ends, submitted from `folder` (their logs land there) by `user`."""
    prefix: str
    folder: Path
    user: str
    submitted: dict[str, Submitted] = field(default_factory=dict)
    _cancelled: set = field(default_factory=set)
    _released: set = field(default_factory=set)

    def sbatch(self, kind: str, *args: str) -> str:
        # The job inherits this environment: a system PATH, not the test runner's virtualenv or root's tools.
        out = run(["sbatch", "--parsable", f"--job-name={self.prefix}-{kind}", *args], user=self.user, cwd=self.folder,
                  env={"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(self.folder)})
        return out.stdout.strip().split(";")[0]

    def submit(self) -> "JobSet":
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o777)
        for script in JOBS.glob("*.sbatch"):
            shutil.copy(script, self.folder / script.name)
        plain = {"train-fail": "train_fail.sbatch", "exit3": "exit3.sbatch", "success": "success.sbatch",
                 "killed": "killed.sbatch", "memory": "memory.sbatch", "steps": "steps.sbatch",
                 "requeue": "requeue.sbatch"}
        for kind, script in plain.items():
            job = self.sbatch(kind, script)
            self.submitted[kind] = Submitted(kind, job, [job])
        array = self.sbatch("array", "array.sbatch")
        self.submitted["array"] = Submitted("array", array, [f"{array}_{t}" for t in range(3)])
        for kind in ("timeout", "cancel-running"):
            job = self.sbatch(kind, "--time=1", "sleep.sbatch")
            self.submitted[kind] = Submitted(kind, job, [job])
        pending = self.sbatch("cancel-pending", "--hold", "sleep.sbatch")
        run(["scancel", pending], user=self.user)
        self.submitted["cancel-pending"] = Submitted("cancel-pending", pending, [pending])
        # --wrap with a pipe: sacct prints the SubmitLine with its '|' as typed.
        wrap = self.sbatch("wrap-pipe", "--output=slurm-%j.out", "--mem=50M", "--wrap",
                           "echo 'loading shard 7' | cat; echo 'OSError: [Errno 5] Input/output error' >&2; exit 5")
        self.submitted["wrap-pipe"] = Submitted("wrap-pipe", wrap, [wrap])
        return self

    @property
    def ids(self) -> list[str]:
        return [s.job_id for s in self.submitted.values()]

    def id_of(self, kind: str, task: int | None = None) -> str:
        entry = self.submitted[kind]
        return entry.external_ids[task] if task is not None else entry.external_ids[0]

    def steer_in_background(self, timeout: float = 300) -> "JobSet":
        """Steer the jobs from a thread while the caller does other work; `wait` then joins it."""
        def steer():
            try:
                self._steer(timeout)
            except BaseException as exc:   # handed to wait()
                self._error = exc
        self._error, self._thread = None, threading.Thread(target=steer, name=f"slurm-{self.prefix}", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float = 240) -> None:
        """Steer and wait until every job has ended and accounting holds its final state."""
        thread = getattr(self, "_thread", None)
        if thread is None:
            return self._steer(timeout)
        thread.join(timeout)
        if thread.is_alive():
            raise TimeoutError(f"Slurm jobs {self.ids} did not all end within {timeout:.0f} s")
        if self._error is not None:
            raise self._error

    def _steer(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            queue = run(["squeue", "-h", "-j", ",".join(self.ids), "-o", "%i|%T|%r"], check=False).stdout
            live = [line.split("|") for line in queue.splitlines() if line.strip()]
            for job_id, state, reason in live:
                if job_id == self.submitted["cancel-running"].job_id and state == "RUNNING" and job_id not in self._cancelled:
                    time.sleep(1)   # let it print its first line
                    run(["scancel", job_id], user=self.user)
                    self._cancelled.add(job_id)
                if job_id == self.submitted["requeue"].job_id and state == "PENDING" and reason == "BeginTime" \
                        and job_id not in self._released:
                    # A requeued job waits (about two minutes on 22.05) before it may start again.
                    run(["scontrol", "update", f"JobId={job_id}", "StartTime=now"])
                    self._released.add(job_id)
            if not live and self._accounted():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"Slurm jobs {self.ids} did not all end within {timeout:.0f} s: {queue}")
            time.sleep(0.5)

    def _accounted(self) -> bool:
        rows = sacct_rows(self.ids, duplicates=False)
        last = {r["JobID"]: r["State"].split()[0] for r in rows}
        return all(last.get(e) in FINAL for s in self.submitted.values() for e in s.external_ids)
