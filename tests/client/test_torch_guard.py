"""The NaN/Inf guard on real PyTorch (CPU): a tiny regression whose learning rate is far too high
really diverges; the guard stops it before the bad update and leaves what is needed to replay it."""
import io

import pytest

import torch  # noqa: E402 -- requirements-dev.txt installs it; never skipped

from jobs_ingest.core import analyse_text  # noqa: E402
from jobtriage_client import InputTracer, TorchNanGuard, hook, seed_everything  # noqa: E402


class FileRows(torch.utils.data.Dataset):
    """One sample per text file: four inputs and a target."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        values = [float(v) for v in self.paths[index].read_text().split()]
        return torch.tensor(values[:4]), torch.tensor(values[4:])


def shards(folder, count=64):
    folder.mkdir()
    paths = []
    for i in range(count):
        path = folder / f"shard-{i:03d}.txt"
        path.write_text(" ".join(str(float((i * 7 + j) % 11 + 1)) for j in range(5)))
        paths.append(path)
    return paths


def train(paths, capture_dir, lr, stream, steps=200, run=None):
    seed_everything(1234)
    tracer = InputTracer(keep=4)
    dataset = tracer.dataset(FileRows(paths), file_of=lambda i: paths[i].name)
    loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    guard = TorchNanGuard(model, tracer=tracer, capture_dir=str(capture_dir), stream=stream)
    if run is not None:
        run["guard"] = guard
    hook.mark_stage("training", stream=stream)
    updates, step = 0, 0
    for _ in range(steps):
        for x, y in tracer.wrap(loader):
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            guard.check(loss, step=step, batch=(x, y))
            optimizer.step()
            updates, step = updates + 1, step + 1
            if step >= steps:
                return model, guard, tracer, updates
    return model, guard, tracer, updates


def test_diverging_training_is_stopped_before_the_bad_update(tmp_path):
    paths = shards(tmp_path / "data")
    log, run = io.StringIO(), {}

    with pytest.raises(FloatingPointError, match=r"^\[jobtriage\] loss is (NaN|Inf) at step \d+") as stopped:
        train(paths, tmp_path / "capture", lr=5.0, stream=log, run=run)

    guard_capture = run["guard"].capture
    step = guard_capture["step"]
    artifacts = guard_capture["artifacts"]
    saved_weights = torch.load(artifacts["model"])
    assert all(bool(torch.isfinite(w).all()) for w in saved_weights.values())  # the bad update never happened
    x, y = torch.load(artifacts["batch"])
    assert x.shape == (4, 4) and y.shape == (4, 1)
    last_files = guard_capture["inputs"][-1]["files"]
    assert len(last_files) == 4 and {p.name for p in paths} >= set(last_files)
    assert sorted(float(v) for v in x[:, 0]) == sorted(float((tmp_path / "data" / f).read_text().split()[0])
                                                       for f in last_files)  # traced files are that batch
    assert guard_capture["artifacts"]["seeds"]["torch"] == 1234
    assert guard_capture["stage"] == "training" and guard_capture["framework"] == "pytorch"

    # What the job's log now ends with is what the server reads.
    analysis = analyse_text(log.getvalue() + "Traceback (most recent call last):\n"
                            '  File "train.py", line 9, in train\n    guard.check(loss)\n'
                            f"FloatingPointError: {stopped.value}\n")
    assert (analysis.category, analysis.rule, analysis.stage) == ("loss_nan", "loss_nan.hook_nan_guard", "training")
    assert analysis.capture["step"] == step and analysis.capture["inputs"][-1]["files"] == last_files


def test_sane_learning_rate_trains_without_stopping(tmp_path):
    model, guard, _, updates = train(shards(tmp_path / "data"), tmp_path / "capture", lr=1e-3,
                                     stream=io.StringIO(), steps=40)
    assert updates == 40 and guard.capture is None and not (tmp_path / "capture").exists()


def test_non_finite_gradient_with_a_finite_loss_is_caught(tmp_path):
    scale = torch.nn.Parameter(torch.zeros(1))
    module = torch.nn.Module()
    module.scale = scale
    loss = torch.sqrt(scale).sum()  # 0, but d sqrt(x)/dx at 0 is inf
    loss.backward()
    guard = TorchNanGuard(module, capture_dir=str(tmp_path), stream=io.StringIO(), save_model=False,
                          checkpoint="s3://ckpt/run7/step-300.pt")

    with pytest.raises(FloatingPointError, match=r"gradient of scale is NaN/Inf at step 0"):
        guard.check(loss)
    assert guard.capture["artifacts"]["checkpoint"] == "s3://ckpt/run7/step-300.pt"
