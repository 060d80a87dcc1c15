"""Kubernetes adapter (pure): Job, Pod and PyTorchJob JSON -> job metadata accepted by parse_job."""
import json
from pathlib import Path

from jobs_ingest.adapters import Adapted, Rejected, Skipped, k8s
from jobs_ingest.jobspec import parse_job

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "adapters" / "k8s"


def read(*names):
    documents = [json.loads((FIXTURES / n).read_text()) for n in names]
    return list(k8s.read_objects(documents, k8s.PodLogIndex(FIXTURES / "logs")))


def by_name(items):
    return {i.where: i for i in items if isinstance(i, Adapted)}


def test_job_with_retried_pods_takes_the_last_pods_failure_and_log():
    job = by_name(read("jobs-pods.json"))["job nlp/bert-ft"]
    m = job.metadata
    assert m["status"] == "failed" and m["exit_code"] == 1 and m["gpus"] == 4
    assert m["external_id"] == "nlp/bert-ft/6d1c2a77" and m["team"] == "nlp" and m["submitter"] == "alice"
    assert [a["status"] for a in m["attempts"]] == ["failed", "failed"]   # two pods, one after the other
    assert m["failed_pod"] == "bert-ft-9qzrm" and m["k8s_reason"] == "BackoffLimitExceeded"
    assert [p.name for p in job.logs] == ["bert-ft-9qzrm.log"]
    assert m["image"] == "nvcr.io/nvidia/pytorch:24.05-py3" and m["command"].startswith("torchrun")


def test_oom_killed_restarts_are_attempts_and_previous_log_comes_first():
    job = by_name(read("jobs-pods.json"))["job vision/resnet-train"]
    m = job.metadata
    assert m["status"] == "out_of_memory" and m["exit_code"] == 137
    assert [a["status"] for a in m["attempts"]] == ["out_of_memory", "out_of_memory"]
    assert m["restarts_without_times"] == 2       # restartCount 3: only the last two runs have times
    assert [p.name for p in job.logs] == ["resnet-train-5g8hv.previous.log", "resnet-train-5g8hv.log"]
    spec = parse_job(m)
    assert sum(a.gpus * (a.ended_at - a.started_at).total_seconds() for a in spec.attempts) == 619 + 618


def test_deadline_exceeded_is_a_timeout_and_complete_is_succeeded():
    jobs = by_name(read("jobs-pods.json"))
    assert jobs["job data/data-prep"].metadata["status"] == "timeout"
    assert jobs["job data/data-prep"].metadata["gpus"] == 0
    assert jobs["job vision/eval-nightly"].metadata["status"] == "succeeded"


def test_running_job_is_skipped_bad_object_named_bare_pod_is_a_job():
    items = read("jobs-pods.json")
    assert [s.where for s in items if isinstance(s, Skipped)] == ["job nlp/gpt-pretrain"]
    assert [r.where for r in items if isinstance(r, Rejected)] == ["document 1 item 10"]
    pod = by_name(items)["pod research/debug-shape"]
    assert pod.metadata["status"] == "failed" and pod.metadata["gpus"] == 1
    assert [p.name for p in pod.logs] == ["debug-shape.log"]


def test_pytorchjob_replicas_gpus_and_first_failing_worker():
    job = by_name(read("pytorchjob.json"))["pytorchjob llm/llama-pt"]
    m = job.metadata
    assert m["gpus"] == 32                          # (1 master + 3 workers) x 8
    assert m["status"] == "failed" and m["exit_code"] == 1
    assert m["failed_pod"] == "llama-pt-worker-1"   # failed first; the others got SIGTERM (143) after it
    assert m["replica_statuses"]["Worker"]["failed"] == 3
    assert [p.name for p in job.logs] == ["llama-pt-worker-1_pytorch.log"]
    assert len(m["attempts"]) == 1 and m["attempts"][0]["gpus"] == 32
    assert m["nodes"] == ["gpu-h100-0", "gpu-h100-1", "gpu-h100-2", "gpu-h100-3"]  # each pod's spec.nodeName
    assert parse_job(m).nodes == tuple(m["nodes"])


def test_pods_without_their_job_are_grouped_by_owner():
    job = by_name(read("pods-only.json"))["job vision/sweep-7"]
    assert job.metadata["external_id"] == "vision/sweep-7/1f2e3d4c" and job.metadata["exit_code"] == 2


def test_separate_files_join_pods_to_jobs_by_uid():
    everything = json.loads((FIXTURES / "jobs-pods.json").read_text())["items"]
    jobs = [i for i in everything if i.get("kind") == "Job"]
    pods = {"kind": "List", "items": [i for i in everything if i.get("kind") == "Pod" and "metadata" in i]}
    adapted = by_name(k8s.read_objects([*jobs, pods]))
    assert adapted["job nlp/bert-ft"].metadata["failed_pod"] == "bert-ft-9qzrm"


def test_gpu_requests_when_no_limit_and_bad_values_named():
    pod = {"spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "2"}}},
                                   {"resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    assert k8s.pod_gpus(pod) == 3
    bad = {"kind": "Pod", "metadata": {"name": "p", "namespace": "x"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "lots"}}}]},
           "status": {"phase": "Failed"}}
    [item] = k8s.read_objects([bad])
    assert isinstance(item, Rejected) and "GPU limits" in item.reason


def test_every_adapted_record_is_valid_job_metadata():
    for item in read("jobs-pods.json", "pytorchjob.json", "pods-only.json"):
        if isinstance(item, Adapted):
            parse_job(item.metadata)


def test_documents_that_are_not_objects_are_named():
    items = list(k8s.read_objects([["not", "an", "object"], "items", {"kind": "List", "items": "x"}]))
    assert [(i.where, i.reason) for i in items] == [
        ("document 1", "is not a Kubernetes object (kind and metadata are required)"),
        ("document 2", "is not a Kubernetes object (kind and metadata are required)"),
        ("document 3", "'items' is not a list")]


def test_pytorchjob_pods_without_the_pytorchjob_count_their_own_gpus():
    document = json.loads((FIXTURES / "pytorchjob.json").read_text())
    pods_only = {"kind": "List", "items": [i for i in document["items"] if i["kind"] == "Pod"]}
    [job] = [i for i in k8s.read_objects([pods_only]) if isinstance(i, Adapted)]
    assert job.where == "pytorchjob llm/llama-pt" and job.metadata["gpus"] == 32
    assert job.metadata["failed_pod"] == "llama-pt-worker-1" and job.metadata["status"] == "failed"
