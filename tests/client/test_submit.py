"""submit_job and the `jobtriage` CLI against the real API (live_server, real PostgreSQL; a real Celery
worker and Elasticsearch where the analysis is checked). Retries are checked against real sockets: a
closed port, and a small scripted HTTP server that answers 503 / 429 before accepting."""
import http.server
import json
import socket
import threading

import pytest

from jobs_ingest.models import Failure, Job
from jobtriage_client import RejectedError, UnavailableError, submit_job, wait_for_analysis

from tests.integration.conftest import wait_for

from .conftest import run_cli

META = {"platform": "slurm", "external_id": "c-1", "status": "failed", "name": "bert", "team": "nlp", "gpus": 4}
LOG = ("[jobtriage] stage=training\nstep 9 loss 2.1\nTraceback (most recent call last):\n"
       '  File "/work/train.py", line 88, in train_one_epoch\n    loss.backward()\n'
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")


def test_submit_a_log_file_streamed_as_multipart(server, log_dir, tmp_path):
    url, token = server
    log = tmp_path / "job.log"
    log.write_text("step 1\n" * 50_000 + LOG)  # ~350 kB

    sent = submit_job(url, token, META, log_path=str(log))

    assert sent.created and sent.url.endswith(f"/jobs/{sent.id}/")
    job = Job.objects.get(pk=sent.id)
    assert (job.platform, job.external_id, job.gpus, job.team) == ("slurm", "c-1", 4, "nlp")
    assert (log_dir / job.log_path).read_bytes() == log.read_bytes()
    again = submit_job(url, token, META, log_text=LOG)
    assert again.id == sent.id and not again.created  # same platform + external_id: one job


def test_refusals_are_not_retried_and_say_why(server):
    url, token = server
    sleeps = []
    with pytest.raises(RejectedError, match="HTTP 401: invalid or revoked token") as bad_token:
        submit_job(url, "jt_wrong", META, log_text=LOG, sleep=sleeps.append)
    with pytest.raises(RejectedError, match=r"HTTP 400: invalid job metadata \(.*status: is required") as bad_meta:
        submit_job(url, token, {"platform": "slurm", "external_id": "x"}, log_text=LOG, sleep=sleeps.append)

    assert (bad_token.value.status, bad_meta.value.status, sleeps) == (401, 400, [])
    assert bad_meta.value.body["fields"] == {"status": "is required"}
    assert not Job.objects.filter(external_id="x").exists()


def test_bad_arguments_fail_before_sending(tmp_path):
    with pytest.raises(ValueError, match="log file not found"):
        submit_job("http://127.0.0.1:1", "t", META, log_path=str(tmp_path / "missing.log"))
    with pytest.raises(ValueError, match="not both"):
        submit_job("http://127.0.0.1:1", "t", META, log_path="a", log_text="b")


def test_connection_errors_are_retried_with_backoff_then_reported():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = []
    with pytest.raises(UnavailableError, match="after 4 attempts: ConnectionRefusedError"):
        submit_job(f"http://127.0.0.1:{port}", "t", META, log_text=LOG, retries=3, backoff_base=1, backoff_cap=3,
                   sleep=sleeps.append)
    assert len(sleeps) == 3 and 0.5 <= sleeps[0] <= 1 and 1 <= sleeps[1] <= 2 and 1.5 <= sleeps[2] <= 3


class _Scripted(http.server.BaseHTTPRequestHandler):
    answers: list = []
    seen: list = []

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append(body)
        status, headers = self.answers.pop(0)
        payload = json.dumps({"id": 7, "created": True, "url": "u", "status_url": "s"} if status == 202
                             else {"error": "busy"}).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Scripted.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}", _Scripted
    server.shutdown()
    server.server_close()


def test_busy_answers_are_retried_honouring_retry_after(scripted_server, tmp_path):
    url, handler = scripted_server
    handler.answers = [(503, {}), (429, {"Retry-After": "2"}), (202, {})]
    log = tmp_path / "job.log"
    log.write_bytes(b"x" * 300_000 + b"\nRuntimeError: y\n")
    sleeps = []

    sent = submit_job(url, "t", META, log_path=str(log), backoff_base=0.25, sleep=sleeps.append)

    assert sent.id == 7 and len(handler.seen) == 3
    assert 0.125 <= sleeps[0] <= 0.25 and sleeps[1] == 2.0  # backoff, then the server's Retry-After
    assert all(b"RuntimeError: y" in body and b'"external_id": "c-1"' in body for body in handler.seen)


def test_a_retry_after_beyond_reason_gives_up_at_once(scripted_server):
    url, handler = scripted_server
    handler.answers = [(503, {"Retry-After": "3600"})]
    with pytest.raises(UnavailableError, match="retry after 3600 s"):
        submit_job(url, "t", META, log_text=LOG, sleep=lambda s: pytest.fail("slept"))


def test_submit_command_sends_and_waits_for_the_analysis(server, celery_worker, tmp_path):
    url, token = server
    (tmp_path / "meta.json").write_text(json.dumps({**META, "external_id": "c-cli"}))
    (tmp_path / "job.log").write_text(LOG)

    done = run_cli(["submit", "--url", url, "--token", token, "--metadata", str(tmp_path / "meta.json"),
                    "--log", str(tmp_path / "job.log"), "--wait"])

    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert result["status"]["ingest_state"] == "analysed"
    assert result["status"]["failure"]["category"] == "gpu_oom" and result["status"]["failure"]["stage"] == "training"
    refused = run_cli(["submit", "--url", url, "--token", "nope", "--metadata", str(tmp_path / "meta.json")])
    assert refused.returncode == 1 and b"HTTP 401" in refused.stderr


TRAIN = """
import sys, time
print("epoch 1 step 1 loss 2.3", flush=True)
print("warning: slow disk", file=sys.stderr)
data = {"a": 1}
print(data["missing_key"])
"""


def test_run_wrapper_passes_output_through_keeps_the_exit_code_and_sends_the_job(server, celery_worker, tmp_path):
    url, token = server
    (tmp_path / "train.py").write_text(TRAIN)

    done = run_cli(["run", "--team", "nlp", "--", "python", "train.py", "--lr", "0.1"], cwd=tmp_path,
                   env={"JOBTRIAGE_URL": url, "JOBTRIAGE_TOKEN": token, "CUDA_VISIBLE_DEVICES": "0,1",
                        "SLURM_JOB_ID": "5150", "JOBTRIAGE_IMAGE": "pytorch:2.4"})

    assert done.returncode == 1
    assert done.stdout == b"epoch 1 step 1 loss 2.3\n"  # unchanged
    assert b"warning: slow disk" in done.stderr and b"KeyError: 'missing_key'" in done.stderr
    assert b"jobtriage: failed job sent: " in done.stderr
    job = Job.objects.get(platform="slurm", external_id="5150")
    assert (job.gpus, job.exit_code, job.team, job.image) == (2, 1, "nlp", "pytorch:2.4")
    assert job.command == "python train.py --lr 0.1" and job.extra["runtime_seconds"] > 0
    failure = wait_for(lambda: Failure.objects.filter(job=job).first(), what="analysis")
    assert failure.category == "key_not_found" and failure.exception_type == "KeyError"
    assert failure.user_frame.endswith("train.py:6 in <module>")


def test_run_wrapper_success_sends_nothing_and_a_dead_server_keeps_the_exit_code(server, tmp_path):
    url, token = server
    ok = run_cli(["run", "--url", url, "--token", token, "--", "python", "-c", "print('fine')"])
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, b"fine\n", b"")
    assert not Job.objects.exists()

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    failed = run_cli(["run", "--url", dead, "--token", token, "--retries", "0", "--",
                      "python", "-c", "import os; os.kill(os.getpid(), 9)"])
    assert failed.returncode == 137
    assert b"warning: could not send the failed job" in failed.stderr


def test_killed_command_is_sent_as_killed_with_its_signal(server, tmp_path):
    url, token = server
    done = run_cli(["run", "--url", url, "--token", token, "--external-id", "k-9", "--",
                    "python", "-c", "import os; print('allocating'); os.kill(os.getpid(), 9)"])

    assert done.returncode == 137
    job = Job.objects.get(external_id="k-9")
    assert (job.status, job.exit_code, job.signal) == ("killed", 137, "SIGKILL")


def test_wait_for_analysis_reads_the_status_url(server, celery_worker):
    url, token = server
    sent = submit_job(url, token, {**META, "external_id": "w-1"}, log_text=LOG)
    status = wait_for_analysis(sent.status_url, token, timeout=60, interval=0.2)
    assert status["ingest_state"] == "analysed" and status["failure"]["category"] == "gpu_oom"


def test_run_wrapper_returns_when_a_left_behind_process_holds_the_output_open(tmp_path):
    import time
    started = time.monotonic()
    done = run_cli(["run", "--", "sh", "-c", "echo started; (sleep 30 &) ; exit 3"], env={}, timeout=50)
    assert done.returncode == 3 and done.stdout.startswith(b"started\n")
    assert time.monotonic() - started < 40
