"""What the training-side hook captured, end to end: a real training script stopped by the NaN guard
under `jobtriage run`, sent over HTTP to the real API (live_server), analysed by a real Celery worker
on PostgreSQL and Elasticsearch, and shown on the failure page, escaped."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs_ingest.models import Failure, Job

from .conftest import wait_for

CLIENT = Path(__file__).resolve().parents[2] / "client"

TRAIN = r"""
import sys, torch
from jobtriage_client import InputTracer, TorchNanGuard, mark_stage, seed_everything

mark_stage("initialization")
seed_everything(99)
files = [f"<b>shard</b>-{i}.bin" for i in range(16)]
data = torch.arange(64, dtype=torch.float32).reshape(16, 4) / 10
tracer = InputTracer(keep=3)
dataset = tracer.dataset(torch.utils.data.TensorDataset(data, data.sum(1, keepdim=True)), file_of=lambda i: files[i])
loader = torch.utils.data.DataLoader(dataset, batch_size=4)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=50.0)  # far too high: diverges within a few steps
guard = TorchNanGuard(model, tracer=tracer)
mark_stage("training")
step = 0
for epoch in range(100):
    for x, y in tracer.wrap(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        print(f"epoch {epoch} step {step} loss {loss.item():.4g}")
        optimizer.zero_grad()
        loss.backward()
        guard.check(loss, step=step, epoch=epoch, batch=(x, y))
        optimizer.step()
        step += 1
"""


@pytest.fixture
def reader(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("reader", password="x"))
    return client


def run_wrapped(cwd, url, token, *command):
    env = {**os.environ, "PYTHONPATH": str(CLIENT), "JOBTRIAGE_URL": url, "JOBTRIAGE_TOKEN": token,
           "JOBTRIAGE_EXTERNAL_ID": "nan-run-1", "JOBTRIAGE_CAPTURE_DIR": str(cwd / "captures")}
    return subprocess.run([sys.executable, "-m", "jobtriage_client.cli", "run", "--platform", "slurm", "--", *command],
                          cwd=cwd, env=env, capture_output=True, timeout=300)


def test_nan_guard_in_a_real_training_job_reaches_the_failure_page(live_server, api_token, celery_worker, reader,
                                                                   tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)

    done = run_wrapped(tmp_path, live_server.url, api_token, sys.executable, "train.py")

    assert done.returncode == 1, done.stderr.decode()[-2000:]
    assert b"FloatingPointError: [jobtriage] loss is" in done.stderr and b"failed job sent" in done.stderr
    job = Job.objects.get(platform="slurm", external_id="nan-run-1")
    failure = wait_for(lambda: Failure.objects.filter(job=job, indexed_at__isnull=False).first(),
                       timeout=60, what="analysis and indexing")
    assert (failure.category, failure.rule, failure.stage) == ("loss_nan", "loss_nan.hook_nan_guard", "training")
    assert failure.evidence.startswith("[jobtriage] capture={")
    capture = failure.capture
    assert [s["stage"] for s in capture["stages"]] == ["initialization", "training"]
    assert capture["artifacts"]["seeds"]["python"] == 99
    assert Path(capture["artifacts"]["batch"]).is_file() and Path(capture["artifacts"]["checkpoint"]).is_file()
    last = capture["inputs"][-1]
    assert last["step"] == capture["step"] and len(last["files"]) == 4
    assert job.extra["capture"]["step"] == capture["step"]  # the wrapper sent it in the metadata too

    page = reader.get(f"/jobs/{job.pk}/").content.decode()
    assert "Captured by the jobtriage hook" in page
    assert f"at step <strong>{capture['step']}</strong>" in page
    assert "&lt;b&gt;shard&lt;/b&gt;-" in page and "<b>shard</b>" not in page  # file names from the job, escaped
    assert capture["artifacts"]["batch"] in page and "python=99" in page
    assert f"jobtriage replay {capture['artifacts']['dir']}" in page

    # The replay command re-runs the job with the recorded seeds (dry run: what it would do).
    replay = subprocess.run([sys.executable, "-m", "jobtriage_client.cli", "replay", "--dry-run",
                             capture["artifacts"]["dir"]], env={**os.environ, "PYTHONPATH": str(CLIENT)},
                            capture_output=True, timeout=60)
    assert replay.returncode == 0 and b"JOBTRIAGE_REPLAY=" in replay.stdout and b"train.py" in replay.stdout


def post(client, token, body):
    return client.post("/api/v1/jobs", data=json.dumps(body), content_type="application/json",
                       HTTP_AUTHORIZATION=f"Token {token}")


def test_capture_only_in_the_metadata_is_shown_and_cleaned(client, api_token, celery_worker, reader):
    capture = {"guard": "nan", "framework": "keras", "reason": "loss is NaN", "step": 31, "stage": "training",
               "inputs": [{"step": 31, "files": ["</td><script>alert(1)</script>"]}],
               "artifacts": {"batch": "/cap/batch-step31.npz", "seeds": {"python": 5}, "evil": "<i>x</i>"},
               "replay": "jobtriage replay '/cap/a b'"}
    response = post(client, api_token, {"platform": "k8s", "external_id": "meta-1", "status": "failed",
                                        "capture": capture, "log_text": "FloatingPointError: nan loss\n"})
    job_id = response.json()["id"]
    wait_for(lambda: Failure.objects.filter(job_id=job_id).exists(), what="analysis")

    page = reader.get(f"/jobs/{job_id}/").content.decode()

    assert "Captured by the jobtriage hook" in page and "at step <strong>31</strong>" in page
    assert "&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "/cap/batch-step31.npz" in page and "jobtriage replay &#x27;/cap/a b&#x27;" in page
    assert "evil" not in page and "&lt;i&gt;" not in page  # unknown artifact keys are dropped


def test_no_capture_no_section(client, api_token, celery_worker, reader):
    response = post(client, api_token, {"platform": "k8s", "external_id": "plain-1", "status": "failed",
                                        "log_text": "Traceback (most recent call last):\nKeyError: 'x'\n"})
    job_id = response.json()["id"]
    failure = wait_for(lambda: Failure.objects.filter(job_id=job_id).first(), what="analysis")

    assert failure.capture == {}
    assert "Captured by the jobtriage hook" not in reader.get(f"/jobs/{job_id}/").content.decode()
