"""NaN/Inf guard for PyTorch training loops: stop before the bad update, keep what is needed to replay it.

    guard = TorchNanGuard(model, tracer=tracer)
    for step, batch in enumerate(tracer.wrap(loader, files_of=...)):
        loss = criterion(model(batch["x"]), batch["y"])
        loss.backward()
        guard.check(loss, step=step, batch=batch)   # raises FloatingPointError on NaN/Inf
        optimizer.step(); optimizer.zero_grad()
"""
from __future__ import annotations

import os
from typing import Callable, Optional, Union

import torch

from . import hook


class TorchNanGuard:
    def __init__(self, model: Optional[torch.nn.Module] = None, *, tracer: Optional[hook.InputTracer] = None,
                 check_gradients: bool = True, save_model: bool = True,
                 checkpoint: Union[str, Callable[[], str], None] = None, capture_dir: Optional[str] = None,
                 replay: Optional[str] = None, stream=None):
        """`checkpoint`: the path of your latest checkpoint (or a function returning it), recorded as a
        reference; with `save_model` the model's weights before the bad update are saved as well."""
        self.model, self.tracer = model, tracer
        self.check_gradients, self.save_model = check_gradients, save_model
        self.checkpoint, self.capture_dir, self.replay, self.stream = checkpoint, capture_dir, replay, stream
        self.step = 0
        self.capture: Optional[dict] = None

    def check(self, loss, *, step: Optional[int] = None, batch=None, epoch: Optional[int] = None) -> None:
        """Check the loss (and, after backward, the gradients) before optimizer.step()."""
        step = self.step if step is None else step
        self.step = step + 1
        value = loss.detach() if isinstance(loss, torch.Tensor) else torch.tensor(float(loss))
        if not bool(torch.isfinite(value).all()):
            kind = "NaN" if bool(torch.isnan(value).any()) else "Inf"
            self._stop(f"loss is {kind}", step, epoch, batch)
        if self.check_gradients and self.model is not None:
            grads = [p.grad for p in self.model.parameters() if p.grad is not None]
            # One reduction and one device sync for all gradients; names only once something is wrong.
            if grads and not bool(torch.isfinite(torch.stack([torch.linalg.vector_norm(g.detach().float())
                                                              for g in grads])).all()):
                name = next(n for n, p in self.model.named_parameters()
                            if p.grad is not None and not bool(torch.isfinite(p.grad).all()))
                self._stop(f"gradient of {name} is NaN/Inf", step, epoch, batch)

    def _stop(self, reason: str, step: int, epoch: Optional[int], batch) -> None:
        folder = hook.capture_dir(self.capture_dir)
        artifacts = {}
        if batch is not None:
            artifacts["batch"] = os.path.join(folder, f"batch-step{step}.pt")
            torch.save(_to_cpu(batch), artifacts["batch"])
        reference = self.checkpoint() if callable(self.checkpoint) else self.checkpoint
        if self.save_model and self.model is not None:
            artifacts["model"] = os.path.join(folder, f"model-step{step}.pt")
            torch.save(self.model.state_dict(), artifacts["model"])  # weights before the bad update
        if reference or artifacts.get("model"):
            artifacts["checkpoint"] = str(reference or artifacts["model"])
        self.capture = hook.write_capture(folder, guard="nan", framework="pytorch", reason=reason, step=step,
                                          epoch=epoch, tracer=self.tracer, artifacts=artifacts, replay=self.replay,
                                          stream=self.stream)
        raise FloatingPointError(f"[jobtriage] {reason} at step {step} (capture: {folder})")


def _to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cpu(v) for v in value) if not hasattr(value, "_fields") else \
            type(value)(*(_to_cpu(v) for v in value))
    return value
