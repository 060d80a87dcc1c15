"""NaN/Inf guard for Keras 3 as a callback: stops before the bad update.

    model.fit(x, y, callbacks=[KerasNanGuard(tracer=tracer)])

Keras's own TerminateOnNaN looks at the loss after the step, when the weights are already broken.
This callback checks the loss where the trainer computes it (Model.compute_loss), before the
gradients are applied, and so also sees the batch that produced it. It needs eager training steps:
the PyTorch backend (KERAS_BACKEND=torch, jit_compile off, the default there) or run_eagerly=True.
"""
from __future__ import annotations

import math
import os
from typing import Callable, Optional, Union

import keras
import numpy

from . import hook


class KerasNanGuard(keras.callbacks.Callback):
    def __init__(self, *, tracer: Optional[hook.InputTracer] = None, save_model: bool = True,
                 checkpoint: Union[str, Callable[[], str], None] = None, capture_dir: Optional[str] = None,
                 replay: Optional[str] = None, stream=None):
        super().__init__()
        self.tracer, self.save_model, self.checkpoint = tracer, save_model, checkpoint
        self.capture_dir, self.replay, self.stream = capture_dir, replay, stream
        self.step, self.epoch = 0, 0
        self.capture: Optional[dict] = None
        self._original = None

    def on_train_begin(self, logs=None):
        model = self.model
        self._original = model.compute_loss  # bound method; restored at the end
        guard = self

        def compute_loss(*args, **kwargs):
            loss = guard._original(*args, **kwargs)
            if kwargs.get("training", True):
                guard._check(loss, args, kwargs)
            return loss

        model.compute_loss = compute_loss

    def on_train_end(self, logs=None):
        self._restore()

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1

    def _restore(self):
        if self._original is not None and "compute_loss" in vars(self.model):
            del self.model.compute_loss
        self._original = None

    def _check(self, loss, args, kwargs):
        value = float(keras.ops.convert_to_numpy(loss))
        if math.isfinite(value):
            return
        reason = f"loss is {'NaN' if math.isnan(value) else 'Inf'}"
        names = ("x", "y", "y_pred", "sample_weight")
        given = {**dict(zip(names, args)), **{k: v for k, v in kwargs.items() if k in names}}
        folder = hook.capture_dir(self.capture_dir)
        artifacts = {"batch": os.path.join(folder, f"batch-step{self.step}.npz")}
        numpy.savez(artifacts["batch"], **{k: keras.ops.convert_to_numpy(given[k])
                                           for k in ("x", "y", "sample_weight") if given.get(k) is not None})
        reference = self.checkpoint() if callable(self.checkpoint) else self.checkpoint
        if self.save_model:
            artifacts["model"] = os.path.join(folder, f"model-step{self.step}.weights.h5")
            self.model.save_weights(artifacts["model"])  # before this step's update
        if reference or artifacts.get("model"):
            artifacts["checkpoint"] = str(reference or artifacts["model"])
        self._restore()
        self.capture = hook.write_capture(folder, guard="nan", framework="keras", reason=reason, step=self.step,
                                          epoch=self.epoch, tracer=self.tracer, artifacts=artifacts,
                                          replay=self.replay, stream=self.stream)
        raise FloatingPointError(f"[jobtriage] {reason} at step {self.step} (capture: {folder})")
