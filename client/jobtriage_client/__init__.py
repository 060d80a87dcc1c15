"""jobtriage's client: send failed jobs to the ingestion API, and capture context inside training jobs.

Standard library only; the PyTorch and Keras guards import their framework when first used:
`from jobtriage_client import TorchNanGuard` needs torch, `KerasNanGuard` needs keras.
"""
from .hook import (InputTracer, current_stage, load_capture, mark_stage, replay_capture, seed_everything, stage,
                   timeline)
from .submit import RejectedError, SubmitError, Submitted, UnavailableError, submit_job, wait_for_analysis

__version__ = "0.1.0"
__all__ = ["InputTracer", "KerasNanGuard", "RejectedError", "SubmitError", "Submitted", "TorchNanGuard",
           "UnavailableError", "current_stage", "load_capture", "mark_stage", "replay_capture", "seed_everything",
           "stage", "submit_job", "timeline", "wait_for_analysis"]


def __getattr__(name):
    # Lazy: importing the package must not import torch or keras.
    if name == "TorchNanGuard":
        from .torch_guard import TorchNanGuard
        return TorchNanGuard
    if name == "KerasNanGuard":
        from .keras_guard import KerasNanGuard
        return KerasNanGuard
    raise AttributeError(f"module 'jobtriage_client' has no attribute {name!r}")
