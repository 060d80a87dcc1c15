"""Pure parts of the client: environment parsing, the tail buffer, backoff, the capture line format."""
import io
import json
from datetime import datetime, timedelta, timezone

import pytest

from jobs_ingest.core import analyse_text
from jobs_ingest.core.logread import MAX_LINE_CHARS
from jobtriage_client import envinfo, hook
from jobtriage_client.cli import _capture_from_log, failed_job_metadata
from jobtriage_client.submit import api_url, backoff_delay, parse_retry_after
from jobtriage_client.tail import TailBuffer


@pytest.mark.parametrize("env, gpus", [
    ({"CUDA_VISIBLE_DEVICES": "0,1,3"}, 3),
    ({"CUDA_VISIBLE_DEVICES": "GPU-8f2c,GPU-11aa"}, 2),
    ({"CUDA_VISIBLE_DEVICES": ""}, 0),
    ({"CUDA_VISIBLE_DEVICES": "-1", "SLURM_GPUS_ON_NODE": "4"}, 0),
    ({"NVIDIA_VISIBLE_DEVICES": "all", "SLURM_GPUS_ON_NODE": "4"}, 4),
    ({"NVIDIA_VISIBLE_DEVICES": "all"}, None),
    ({"NVIDIA_VISIBLE_DEVICES": "none"}, 0),
    ({"SLURM_JOB_GPUS": "2,3"}, 2),
    ({"SLURM_GPUS_PER_NODE": "a100:8"}, 8),
    ({"SLURM_GPUS_PER_NODE": "gpu:a100:2(x4)"}, 2),
    ({"SLURM_GPUS": "weird"}, None),
    ({"JOBTRIAGE_GPUS": "16", "CUDA_VISIBLE_DEVICES": "0"}, 16),
    ({}, None),
])
def test_gpu_count_from_the_environment(env, gpus):
    assert envinfo.gpu_count(env) == gpus


def test_scheduler_ids_image_and_platform():
    slurm_array = {"SLURM_JOB_ID": "900", "SLURM_ARRAY_JOB_ID": "812", "SLURM_ARRAY_TASK_ID": "3",
                   "SLURM_JOB_NAME": "bert", "SINGULARITY_CONTAINER": "/images/pytorch-2.4.sif"}
    assert envinfo.platform(slurm_array) == "slurm"
    assert envinfo.external_id(slurm_array, 0, 1) == "812_3"
    assert envinfo.job_name(slurm_array, ["python", "train.py"]) == "bert"
    assert envinfo.image(slurm_array) == "/images/pytorch-2.4.sif"
    pod = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "resnet-worker-0"}
    assert (envinfo.platform(pod), envinfo.external_id(pod, 0, 1)) == ("k8s", "resnet-worker-0")
    local = {}
    assert envinfo.platform(local) == "local" and envinfo.external_id(local, 1700000000.5, 42).endswith("-1700000000-42")
    assert envinfo.job_name(local, ["torchrun", "--nproc", "8", "src/train_gpt.py"]) == "train_gpt.py"
    assert envinfo.image({"JOBTRIAGE_IMAGE": "mine:1", "IMAGE": "other"}) == "mine:1"


def test_git_commit_of_a_repository_and_outside_one(tmp_path):
    import subprocess
    assert envinfo.git_commit(str(tmp_path)) == ""
    run = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    (tmp_path / "train.py").write_text("print(1)\n")
    run("add", "train.py")
    run("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "x")
    commit = envinfo.git_commit(str(tmp_path))
    assert len(commit) == 40
    (tmp_path / "train.py").write_text("print(2)\n")
    assert envinfo.git_commit(str(tmp_path)) == commit + "-dirty"


def test_tail_buffer_keeps_the_last_bytes_from_a_line_start():
    with TailBuffer(limit=1000) as tail:
        for i in range(5000):
            tail.write(f"line {i}\n".encode())
        value = tail.getvalue()
        assert tail.truncated and tail.total == sum(len(f"line {i}\n") for i in range(5000))
    assert value.endswith(b"line 4999\n") and value.startswith(b"line ")
    assert len(value) <= 1000
    assert value.split(b"\n")[0] == b"line " + str(4999 - len(value.split(b"\n")) + 2).encode()


def test_tail_buffer_huge_chunk_small_output_and_file_size_bound():
    with TailBuffer(limit=64) as tail:
        tail.write(b"short\n")
        assert tail.getvalue() == b"short\n" and not tail.truncated
        tail.write(b"x" * 10_000 + b"\nend\n")
        assert tail.getvalue() == b"end\n"
        for _ in range(1000):
            tail.write(b"0123456789")
            assert tail._size < 2 * 64
    with pytest.raises(ValueError):
        TailBuffer(limit=0)


def test_backoff_grows_caps_and_jitters():
    assert [backoff_delay(a, base=1, cap=30, jitter=lambda: 1.0) for a in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    assert backoff_delay(3, base=1, cap=30, jitter=lambda: 0.0) == 4


def test_retry_after_seconds_and_http_date():
    now = datetime(2026, 11, 23, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Mon, 23 Nov 2026 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Mon, 23 Nov 2026 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_api_url_from_a_base_url():
    assert api_url("http://h:8000") == "http://h:8000/api/v1/jobs"
    assert api_url("https://h/jobtriage/") == "https://h/jobtriage/api/v1/jobs"
    assert api_url("http://h/api/v1/jobs") == "http://h/api/v1/jobs"
    with pytest.raises(ValueError, match="JOBTRIAGE_URL"):
        api_url("")


def test_stage_markers_are_what_the_server_reads():
    out = io.StringIO()
    hook.mark_stage("initialization", stream=out)
    with hook.stage("training", stream=out):
        with hook.stage("evaluation", stream=out):
            pass  # back to training when evaluation ends normally
    log = out.getvalue() + "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n" \
                           "    x()\nRuntimeError: boom\n"
    assert out.getvalue().splitlines()[-1] == "[jobtriage] stage=training"
    assert analyse_text(log).stage == "training"
    assert [s["stage"] for s in hook.timeline()[-4:]] == ["initialization", "training", "evaluation", "training"]
    with pytest.raises(ValueError, match="unknown stage"):
        hook.mark_stage("warmup", stream=out)


def test_input_tracer_keeps_the_last_batches():
    tracer = hook.InputTracer(keep=3)
    batches = [{"path": [f"shard-{i}a.bin", f"shard-{i}b.bin"]} for i in range(10)]
    assert list(tracer.wrap(batches, files_of=lambda b: b["path"])) == batches
    assert [b["step"] for b in tracer.as_capture()] == [7, 8, 9]
    assert tracer.as_capture()[-1]["files"] == ["shard-9a.bin", "shard-9b.bin"]

    files = ["a.txt", "b.txt", "c.txt", "d.txt"]
    traced = tracer.dataset(list(range(4)), file_of=lambda i: files[i])

    def batches_of_two():
        for start in (0, 2):
            yield [traced[start], traced[start + 1]]
    assert list(tracer.wrap(batches_of_two())) == [[0, 1], [2, 3]]
    assert tracer.as_capture()[-1] == {"step": 11, "files": ["c.txt", "d.txt"]}


def test_capture_line_stays_under_the_servers_line_limit_and_parses(tmp_path):
    tracer = hook.InputTracer(keep=8)
    for step in range(8):
        tracer.record([f"/data/very/long/path/to/shard-{step:05d}-{i:04d}.tfrecord" for i in range(40)])
    out = io.StringIO()
    capture = hook.write_capture(str(tmp_path), guard="nan", framework="pytorch", reason="loss is NaN", step=412,
                                 tracer=tracer, artifacts={"batch": str(tmp_path / "b.pt")}, stream=out)
    line = out.getvalue().rstrip("\n")
    assert len(line) <= hook.MAX_CAPTURE_LINE < MAX_LINE_CHARS
    on_disk = json.loads((tmp_path / "capture.json").read_text())
    assert len(on_disk["inputs"]) == 8 and len(on_disk["inputs"][0]["files"]) == 40  # the file keeps everything
    parsed = analyse_text(line + "\nFloatingPointError: [jobtriage] loss is NaN at step 412\n").capture
    assert parsed["step"] == 412 and parsed["inputs"][-1]["step"] == 7
    assert parsed["inputs"][-1]["files"][0].endswith("shard-00007-0000.tfrecord")
    assert capture["replay"].startswith("jobtriage replay ")


def test_failed_job_metadata_from_environment_and_exit_status():
    class Args:
        platform, external_id, name, team = None, None, None, "vision"
    env = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NAME": "resnet", "CUDA_VISIBLE_DEVICES": "0,1", "USER": "alice",
           "JOBTRIAGE_IMAGE": "pytorch:2.4"}
    log = b"step 1\n[jobtriage] capture={\"guard\": \"nan\", \"step\": 3}\nFloatingPointError: x\n"
    started = datetime(2026, 11, 23, 8, tzinfo=timezone.utc).timestamp()
    meta = failed_job_metadata(["python", "train.py", "--lr", "10"], env, -9, started, started + 90, 90.0, log, Args)

    assert meta["platform"] == "slurm" and meta["external_id"] == "4242" and meta["name"] == "resnet"
    assert meta["status"] == "killed" and meta["exit_code"] == 137 and meta["signal"] == "SIGKILL"
    assert meta["gpus"] == 2 and meta["image"] == "pytorch:2.4" and meta["submitter"] == "alice"
    assert meta["command"] == "python train.py --lr 10" and meta["team"] == "vision"
    assert meta["started_at"].startswith("2026-11-23T08:00:00") and meta["runtime_seconds"] == 90.0
    assert datetime.fromisoformat(meta["ended_at"].rstrip("Z")) - datetime(2026, 11, 23, 8) == timedelta(seconds=90)
    assert meta["capture"] == {"guard": "nan", "step": 3}
    assert _capture_from_log(b"[jobtriage] capture={broken\n") is None
