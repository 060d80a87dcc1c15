"""Kubernetes objects -> job metadata (pure; no Django).

Input: what `kubectl get jobs,pods -o json` prints (a `List`), or separate documents (one object or
one List each), including Kubeflow `PyTorchJob` objects (`kubeflow.org/v1`). Pods are joined to
their owner by `ownerReferences` (uid), else by the `job-name` / `batch.kubernetes.io/job-name` /
`training.kubeflow.org/job-name` label. Pods whose owner is not in the input are grouped by that
owner's name; a pod with no owner is a job of its own.

Logs come from a folder of `kubectl logs` output: `<pod>.log` or `<pod>_<container>.log`, and for a
restarted container `kubectl logs --previous` saved as `<pod>.previous.log` or
`<pod>_<container>.previous.log`. The failing pod's logs are attached, earlier runs first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..core.paths import OutsideRoot, resolve_inside
from . import Adapted, Rejected, Skipped

PLATFORM = "k8s"
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name", "training.kubeflow.org/job-name", "pytorch-job-name")
OWNER_KINDS = {"Job", "PyTorchJob"}
_LOG_NAME = re.compile(r"^(?P<pod>[a-z0-9][a-z0-9.-]*?)(?:_(?P<container>[a-z0-9-]+))?(?P<previous>\.previous)?\.log$")


class K8sRecordError(ValueError):
    pass


def flatten(documents: Iterable) -> Iterator[tuple[str, dict | Rejected]]:
    """(where, object) for every object of the documents; Lists are opened."""
    for doc_number, document in enumerate(documents, 1):
        is_list = isinstance(document, dict) and "items" in document
        items = document["items"] if is_list else [document]
        if not isinstance(items, list):
            yield f"document {doc_number}", Rejected(f"document {doc_number}", "'items' is not a list")
            continue
        for index, item in enumerate(items):
            where = f"document {doc_number} item {index}" if is_list else f"document {doc_number}"
            if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict) or not item.get("kind"):
                yield where, Rejected(where, "is not a Kubernetes object (kind and metadata are required)")
            else:
                yield where, item


@dataclass
class _Owner:
    kind: str                     # Job, PyTorchJob, or Pod (a pod with no owner)
    namespace: str
    name: str
    obj: dict | None = None       # None: only its pods were given
    uid: str = ""
    pods: list[dict] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.kind.lower()} {self.namespace}/{self.name}"


def read_objects(documents: Iterable, logs: "PodLogIndex | None" = None) -> Iterator[Adapted | Rejected | Skipped]:
    owners: dict[tuple, _Owner] = {}
    by_uid: dict[str, _Owner] = {}
    pods: list[tuple[str, dict]] = []
    for where, obj in flatten(documents):
        if isinstance(obj, Rejected):
            yield obj
            continue
        kind, meta = obj["kind"], obj["metadata"]
        namespace, name = meta.get("namespace") or "default", meta.get("name")
        if not name:
            yield Rejected(where, f"{kind} has no metadata.name")
        elif kind in OWNER_KINDS:
            owner = _Owner(kind, namespace, name, obj, meta.get("uid") or "")
            owners[(namespace, name)] = owner
            if owner.uid:
                by_uid[owner.uid] = owner
        elif kind == "Pod":
            pods.append((where, obj))
        # Other kinds (Services, ConfigMaps, ...) in the same List carry no job facts.
    for where, pod in pods:
        meta = pod["metadata"]
        namespace = meta.get("namespace") or "default"
        refs = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict) and r.get("kind") in OWNER_KINDS]
        labels = meta.get("labels") or {}
        owner = next((by_uid[r["uid"]] for r in refs if r.get("uid") in by_uid), None)
        if owner is None:
            name = next((r.get("name") for r in refs if r.get("name")), None) or next(
                (labels[k] for k in JOB_NAME_LABELS if labels.get(k)), None)
            if name:
                owner = owners.get((namespace, name))
                if owner is None:
                    kind = next((r["kind"] for r in refs), "Job")
                    uid = next((r.get("uid") for r in refs if r.get("uid")), "")
                    owner = owners[(namespace, name)] = _Owner(kind, namespace, name, uid=uid)
            else:
                owner = owners[(namespace, meta["name"], "pod")] = _Owner("Pod", namespace, meta["name"],
                                                                         uid=meta.get("uid") or "")
        owner.pods.append(pod)
    for owner in owners.values():
        try:
            yield _adapt(owner, logs)
        except (K8sRecordError, TypeError, ValueError, AttributeError, KeyError) as exc:
            yield Rejected(owner.where, str(exc) or type(exc).__name__)


# ---------------------------------------------------------------- facts from pods

def pod_gpus(pod_or_template: dict) -> int:
    """GPUs a pod asks for: the sum over its containers of the GPU limit (or request)."""
    spec = pod_or_template.get("spec") or {}
    total = 0
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        for key in ("limits", "requests"):
            values = resources.get(key) or {}
            found = [values[r] for r in GPU_RESOURCES if r in values]
            if found:
                try:
                    total += sum(int(str(v)) for v in found)
                except ValueError:
                    raise K8sRecordError(f"container {container.get('name')}: GPU {key} {found} is not a "
                                         "whole number") from None
                break
    return total


@dataclass
class _Run:
    """One run of one container (a restart makes another)."""
    pod: str
    container: str
    started: str | None
    ended: str | None
    exit_code: int | None
    reason: str
    signal: int | None = None
    gpus: int = 0


def _terminated(state: dict | None) -> dict | None:
    return (state or {}).get("terminated") if isinstance(state, dict) else None


def container_runs(pod: dict) -> tuple[list[_Run], int]:
    """Runs of the pod's containers (earlier first) and how many restarts left no times.
    `lastState.terminated` is the run before the current one; older restarts are only counted."""
    meta, status = pod["metadata"], pod.get("status") or {}
    gpus = pod_gpus(pod)
    runs, unseen = [], 0
    for cs in status.get("containerStatuses") or []:
        name = cs.get("name", "")
        previous = _terminated(cs.get("lastState"))
        if previous:
            runs.append(_run(meta["name"], name, previous, gpus))
        restarts = int(cs.get("restartCount") or 0)
        unseen += max(restarts - (1 if previous else 0), 0)
        current = cs.get("state") or {}
        if _terminated(current):
            runs.append(_run(meta["name"], name, _terminated(current), gpus))
        elif current.get("running"):
            runs.append(_Run(meta["name"], name, current["running"].get("startedAt"), None, None, "Running", gpus=gpus))
    if not runs and status.get("startTime"):
        # A pod that failed before its containers reported (evicted, deadline): the pod's own times.
        runs.append(_Run(meta["name"], "", status.get("startTime"), None, None, status.get("reason") or "", gpus=gpus))
    return runs, unseen


def _run(pod: str, container: str, term: dict, gpus: int) -> _Run:
    code = term.get("exitCode")
    return _Run(pod, container, term.get("startedAt"), term.get("finishedAt"),
                int(code) if code is not None else None, term.get("reason") or "", term.get("signal"), gpus)


def _condition(obj: dict | None, *types: str) -> dict | None:
    for cond in reversed(((obj or {}).get("status") or {}).get("conditions") or []):
        if cond.get("type") in types and str(cond.get("status")) == "True":
            return cond
    return None


def _failing_run(runs: list[_Run], *, together: bool) -> _Run | None:
    """The run that ended the job. Pods that run together (PyTorchJob replicas): the first to fail,
    as the others are usually killed after it. Pods that run one after another (a Job's retries):
    the last to fail."""
    failed = [r for r in runs if r.exit_code not in (None, 0) or r.reason in ("OOMKilled", "Error")]
    if not failed:
        return None
    if together:
        return min(failed, key=lambda r: r.ended or "~")
    return max(failed, key=lambda r: r.ended or "")


def _attempt_status(run: _Run) -> str:
    if run.reason == "OOMKilled":
        return "out_of_memory"
    if run.ended is None:
        return "running"
    return "succeeded" if run.exit_code == 0 else "failed"


def _main_container(pod_or_template: dict) -> dict:
    containers = (pod_or_template.get("spec") or {}).get("containers") or [{}]
    return next((c for c in containers if pod_gpus({"spec": {"containers": [c]}})), containers[0])


# ---------------------------------------------------------------- owner -> job

def _adapt(owner: _Owner, logs: "PodLogIndex | None") -> Adapted | Skipped:
    pods = sorted(owner.pods, key=lambda p: ((p.get("status") or {}).get("startTime") or "", p["metadata"]["name"]))
    all_runs, unseen = [], 0
    for pod in pods:
        runs, missing = container_runs(pod)
        all_runs += runs
        unseen += missing
    failing = _failing_run(all_runs, together=owner.kind == "PyTorchJob")
    obj = owner.obj or {}
    meta = obj.get("metadata") or (pods[0]["metadata"] if pods else {})
    status_obj = obj.get("status") or {}
    failed_cond = _condition(obj, "Failed")
    done_cond = _condition(obj, "Complete", "Succeeded")

    if owner.obj is not None:
        if failed_cond:
            status = "timeout" if failed_cond.get("reason") == "DeadlineExceeded" else "failed"
        elif done_cond:
            status = "succeeded"
        else:
            return Skipped(owner.where, "has no Failed/Complete condition yet (still running?)")
    else:
        phases = [(p.get("status") or {}).get("phase") for p in pods]
        if phases and phases[-1] == "Succeeded":
            status = "succeeded"
        elif "Failed" in phases:
            status = "failed"
        else:
            return Skipped(owner.where, f"pods are {', '.join(sorted({str(p) for p in phases}))}: not finished")
    if status == "failed" and failing is not None and failing.reason == "OOMKilled":
        status = "out_of_memory"

    if owner.kind == "PyTorchJob":
        gpus, attempts, extra = _pytorchjob_shape(owner, status, failed_cond or done_cond, all_runs)
    else:
        gpus = max([r.gpus for r in all_runs] + [pod_gpus((obj.get("spec") or {}).get("template") or {})])
        attempts = [{"started_at": r.started, "ended_at": r.ended, "gpus": r.gpus, "exit_code": r.exit_code,
                     "status": _attempt_status(r)}
                    for r in sorted(all_runs, key=lambda r: r.started or "")]
        extra = {}
    template = (((obj.get("spec") or {}).get("template")) or (pods[-1] if pods else {}))
    if owner.kind == "PyTorchJob":
        master = ((obj.get("spec") or {}).get("pytorchReplicaSpecs") or {}).get("Master") or {}
        template = master.get("template") or template
    container = _main_container(template)
    labels = meta.get("labels") or {}
    ended = status_obj.get("completionTime") or (failed_cond or done_cond or {}).get("lastTransitionTime") \
        or max((r.ended for r in all_runs if r.ended), default=None)
    metadata = {
        "platform": PLATFORM,
        "external_id": f"{owner.namespace}/{owner.name}" + (f"/{owner.uid[:8]}" if owner.uid else ""),
        "status": status, "name": labels.get("app.kubernetes.io/name") or owner.name,
        "submitter": labels.get("user") or labels.get("owner"), "team": labels.get("team") or owner.namespace,
        "submitted_at": meta.get("creationTimestamp"),
        "started_at": status_obj.get("startTime") or min((r.started for r in all_runs if r.started), default=None),
        "ended_at": ended, "gpus": gpus,
        "exit_code": failing.exit_code if failing else None,
        "signal": str(failing.signal) if failing and failing.signal else None,
        "image": container.get("image"),
        "command": " ".join(str(a) for a in (container.get("command") or []) + (container.get("args") or [])) or None,
        "attempts": attempts, "k8s_kind": owner.kind, "namespace": owner.namespace,
        "nodes": list(dict.fromkeys(n for p in pods if (n := (p.get("spec") or {}).get("nodeName")))),
        **extra,
    }
    if failed_cond:
        metadata["k8s_reason"] = failed_cond.get("reason")
        metadata["k8s_message"] = (failed_cond.get("message") or "")[:500]
    if failing is not None:
        metadata["failed_pod"] = failing.pod
        metadata["failed_container"] = failing.container
        if failing.reason:
            metadata["termination_reason"] = failing.reason
    if unseen:
        metadata["restarts_without_times"] = unseen
    metadata = {k: v for k, v in metadata.items() if v not in (None, "", [])}
    found: tuple[Path, ...] = ()
    if logs is not None:
        pod_name = failing.pod if failing else (pods[-1]["metadata"]["name"] if pods else "")
        found = logs.find(pod_name, last_container=failing.container if failing else "")
    return Adapted(owner.where, metadata, found)


def _pytorchjob_shape(owner: _Owner, status: str, end_cond: dict | None, runs: list[_Run]):
    """A PyTorchJob's replicas run together: GPUs = sum over replica types of replicas x GPUs per
    pod, one attempt from the job's start to its end (restarts are counted per replica)."""
    specs = ((owner.obj or {}).get("spec") or {}).get("pytorchReplicaSpecs") or {}
    gpus = 0
    for spec in specs.values():
        gpus += int((spec or {}).get("replicas", 1)) * pod_gpus((spec or {}).get("template") or {})
    if not specs:  # only its pods were given: they are the replicas
        gpus = sum(pod_gpus(pod) for pod in owner.pods)
    status_obj = (owner.obj or {}).get("status") or {}
    started = status_obj.get("startTime") or min((r.started for r in runs if r.started), default=None)
    ended = status_obj.get("completionTime") or (end_cond or {}).get("lastTransitionTime")
    failing = _failing_run(runs, together=True)
    attempts = [{"started_at": started, "ended_at": ended, "gpus": gpus,
                 "exit_code": failing.exit_code if failing else 0, "status": status}]
    extra = {"replica_statuses": status_obj.get("replicaStatuses") or {}}
    return gpus, attempts, extra


class PodLogIndex:
    """`kubectl logs` files in a folder, by pod (and container) name."""

    def __init__(self, folder: Path, files: Iterable[Path] | None = None):
        self.folder = folder
        self._by_pod: dict[str, list[tuple[str, bool, Path]]] = {}
        self.refused: list[str] = []   # files that resolve outside the folder (symlinks out): never read
        for path in files if files is not None else folder.rglob("*.log"):
            match = _LOG_NAME.match(path.name)
            if match and path.is_file():
                try:
                    resolve_inside(folder, path, found_under_root=True)
                except OutsideRoot as exc:
                    self.refused.append(str(exc))
                    continue
                self._by_pod.setdefault(match.group("pod"), []).append(
                    (match.group("container") or "", bool(match.group("previous")), path))

    def find(self, pod: str, last_container: str = "") -> tuple[Path, ...]:
        """The pod's logs: other containers first, the failing container last; within a container
        the previous run before the current one."""
        entries = self._by_pod.get(pod, [])
        entries = sorted(entries, key=lambda e: (e[0] == last_container and bool(last_container), e[0], not e[1]))
        return tuple(e[2] for e in entries)
