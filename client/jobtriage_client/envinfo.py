"""What a job's environment says about it: GPUs, container image, scheduler ids, code version.

Pure functions of an environment mapping (testable without a scheduler), plus git for the commit.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
from typing import Mapping, Optional

# Most specific first: what this process may use, then what the scheduler gave the job.
_GPU_LIST_VARS = ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "NVIDIA_VISIBLE_DEVICES")
_GPU_COUNT_VARS = ("SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE", "SLURM_GPUS", "SLURM_GPUS_PER_TASK")
# Container runtimes and schedulers that name the image; JOBTRIAGE_IMAGE wins.
_IMAGE_VARS = ("JOBTRIAGE_IMAGE", "SLURM_CONTAINER", "SINGULARITY_CONTAINER", "APPTAINER_CONTAINER",
               "CONTAINER_IMAGE", "DOCKER_IMAGE", "IMAGE_NAME", "IMAGE")


def gpu_count(env: Mapping[str, str]) -> Optional[int]:
    """GPUs the job sees, or None when the environment does not say.

    JOBTRIAGE_GPUS overrides. Device lists ("0,1,3", UUIDs) are counted; "" / "-1" / "none" / "void" mean
    none; NVIDIA_VISIBLE_DEVICES=all says nothing countable. Slurm counts may carry a type ("a100:2")."""
    explicit = env.get("JOBTRIAGE_GPUS", "").strip()
    if explicit.isdigit():
        return int(explicit)
    for name in _GPU_LIST_VARS:
        if name not in env:
            continue
        value = env[name].strip()
        if value.lower() in ("", "-1", "none", "void", "nodevfiles"):
            return 0
        if value.lower() == "all":
            continue
        return len([device for device in value.split(",") if device.strip()])
    for name in _GPU_COUNT_VARS:
        count = _slurm_count(env.get(name, ""))
        if count is not None:
            return count
    return None


def _slurm_count(value: str) -> Optional[int]:
    """"2", "a100:2", "2(x3)" (per node, repeated), "gpu:a100:4" -> the count; None if unreadable."""
    match = re.fullmatch(r"(?:[\w.-]+:)*(\d+)(?:\(x\d+\))?", value.strip())
    return int(match.group(1)) if match else None


def image(env: Mapping[str, str]) -> str:
    return next((env[name].strip() for name in _IMAGE_VARS if env.get(name, "").strip()), "")


def platform(env: Mapping[str, str]) -> str:
    if env.get("JOBTRIAGE_PLATFORM"):
        return env["JOBTRIAGE_PLATFORM"]
    if env.get("SLURM_JOB_ID"):
        return "slurm"
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "k8s"
    return "local"


def external_id(env: Mapping[str, str], started: float, pid: int) -> str:
    """The scheduler's id for this job, so that a re-sent or requeued job updates one record."""
    if env.get("JOBTRIAGE_EXTERNAL_ID"):
        return env["JOBTRIAGE_EXTERNAL_ID"]
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        return f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"
    if env.get("SLURM_JOB_ID"):
        return env["SLURM_JOB_ID"]
    if env.get("KUBERNETES_SERVICE_HOST") and env.get("HOSTNAME"):
        return env["HOSTNAME"]  # the pod's name
    return f"{socket.gethostname()}-{int(started)}-{pid}"


def job_name(env: Mapping[str, str], command: list) -> str:
    for name in ("JOBTRIAGE_JOB_NAME", "SLURM_JOB_NAME"):
        if env.get(name):
            return env[name]
    script = next((part for part in command[1:] if part.endswith(".py")), command[0] if command else "")
    return os.path.basename(script)


def git_commit(cwd: Optional[str] = None) -> str:
    """The commit of the working tree the job runs from ("" outside a repository), "-dirty" if changed."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
        if head.returncode != 0:
            return ""
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):  # no git, or a hung network file system
        return ""
    return head.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
