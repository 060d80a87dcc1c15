"""The NaN/Inf guard on real Keras 3 (PyTorch backend, CPU): a batch read from a file holding an inf
really makes the loss non-finite; the callback stops fit() before that batch's update."""
import io
import os

os.environ.setdefault("KERAS_BACKEND", "torch")  # before keras is imported; only torch is installed

import keras  # noqa: E402
import numpy  # noqa: E402
import pytest  # noqa: E402

from jobs_ingest.core import analyse_text  # noqa: E402
from jobtriage_client import InputTracer, KerasNanGuard, hook  # noqa: E402

BATCH = 4


def write_shards(folder, bad: int):
    folder.mkdir()
    paths = []
    for i in range(8):
        rows = numpy.full((BATCH, 5), float(i + 1))
        if i == bad:
            rows[2, 1] = numpy.inf  # a corrupt record
        path = folder / f"part-{i}.npy"
        numpy.save(path, rows)
        paths.append(path)
    return paths


def batches(paths, tracer):
    """A Keras data generator that tells the tracer which file each batch came from."""
    while True:
        for path in paths:
            rows = numpy.load(path)
            tracer.record([path.name])
            yield rows[:, :4], rows[:, 4:]


def model_with_weights():
    keras.utils.set_random_seed(7)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
    return model


def test_backend_is_torch():
    assert keras.backend.backend() == "torch", "run with KERAS_BACKEND=torch (only torch is installed)"


def test_inf_in_a_batch_stops_fit_before_its_update(tmp_path):
    paths = write_shards(tmp_path / "data", bad=5)
    tracer, log = InputTracer(keep=3), io.StringIO()
    model = model_with_weights()
    guard = KerasNanGuard(tracer=tracer, capture_dir=str(tmp_path / "capture"), stream=log)
    hook.mark_stage("training", stream=log)
    before_bad_step = {}

    class Snapshot(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            before_bad_step["weights"] = [w.copy() for w in model.get_weights()]

    with pytest.raises(FloatingPointError, match=r"^\[jobtriage\] loss is (NaN|Inf) at step 5"):
        model.fit(batches(paths, tracer), steps_per_epoch=8, epochs=1, verbose=0, callbacks=[guard, Snapshot()])

    capture = guard.capture
    assert capture["framework"] == "keras" and capture["step"] == 5 and capture["epoch"] == 0
    assert capture["inputs"][-1]["files"] == ["part-5.npy"]  # the corrupt file, named
    saved = numpy.load(capture["artifacts"]["batch"])
    assert numpy.isinf(saved["x"]).sum() == 1 and saved["x"].shape == (BATCH, 4)
    # No update happened with the bad batch: the weights equal those after step 4.
    for now, then in zip(model.get_weights(), before_bad_step["weights"]):
        numpy.testing.assert_array_equal(now, then)
    assert all(numpy.isfinite(w).all() for w in model.get_weights())
    restored = model_with_weights()
    restored.load_weights(capture["artifacts"]["model"])
    for now, then in zip(restored.get_weights(), model.get_weights()):
        numpy.testing.assert_array_equal(now, then)
    assert "compute_loss" not in vars(model)  # the model is left as it was

    analysis = analyse_text(log.getvalue() + f"Traceback (most recent call last):\n"
                            f'  File "fit.py", line 3, in <module>\n    model.fit(...)\n'
                            f"FloatingPointError: [jobtriage] {capture['reason']} at step 5\n")
    assert (analysis.category, analysis.stage) == ("loss_nan", "training")
    assert analysis.capture["inputs"][-1]["files"] == ["part-5.npy"]


def test_clean_data_trains_to_the_end(tmp_path):
    paths = write_shards(tmp_path / "data", bad=-1)
    model, tracer = model_with_weights(), InputTracer()
    guard = KerasNanGuard(tracer=tracer, capture_dir=str(tmp_path / "capture"), stream=io.StringIO())

    history = model.fit(batches(paths, tracer), steps_per_epoch=8, epochs=2, verbose=0, callbacks=[guard])

    assert len(history.history["loss"]) == 2 and guard.capture is None and guard.step == 16
    assert "compute_loss" not in vars(model)
