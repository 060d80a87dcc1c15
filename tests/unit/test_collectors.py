"""Logs as collectors write them down (core/collectors.py, tagging:2026-11k): a prefix that containerd, kubectl,
SageMaker's Open MPI, Ray, Docker Compose, pm2 or pdsh put on every line changes neither the tag nor the grouping
of a failure. The prefixes are the tools' documented formats; the logs under them are real development logs."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from bench.eval_collectors import prefixed  # noqa: E402
from tests.devset import devset_cases  # noqa: E402

from jobs_ingest.core import analyse_text  # noqa: E402
from jobs_ingest.core.collectors import canonical_lines, launcher_bodies  # noqa: E402
from jobs_ingest.core.infra import INFRA_V6, INFRA_V7  # noqa: E402
from jobs_ingest.core.nodes import prefix_hosts  # noqa: E402

OLD, NEW = "tagging:2026-11j", "tagging:2026-11k"


# One line prefix per collector, as each documents it ({s}: the line's number, modulo 60).
COLLECTORS = {
    "Docker json-file": "json-file",
    "containerd / CRI-O file": "2024-05-01T10:00:{s:02d}.123456789Z stderr F ",
    "kubectl logs --prefix": "[pod/bert-worker-0/pytorch] ",
    "kubectl logs --prefix --timestamps": "[pod/bert-worker-0/pytorch] 2024-05-01T10:00:{s:02d}.123456789Z ",
    "SageMaker Open MPI": "[1,mpirank:0,algo-1]<stderr>:",
    "Ray worker": "(RayTrainWorker pid=1193, ip=10.244.4.193) ",
    "Ray task": "(train_func pid=41521) ",
    "Docker Compose": "trainer-1  | ",
    "pm2": "0|train  | ",
    "pdsh (DeepSpeed)": "worker-0: ",
    "torchrun --tee": "[rank0]: ",
}
# A traceback, a log cut inside its exception's name, a bare exception name under pasted frames, a TF error
# read from the last lines: each read rightly from the plain log.
LOGS = devset_cases("i7a-0001", "i6s-0026", "i7d-0002", "i7a-0021")


@pytest.mark.parametrize("collector", COLLECTORS)
@pytest.mark.parametrize("case", LOGS)
def test_a_collectors_prefix_changes_neither_tag_nor_grouping(collector, case):
    plain = analyse_text(LOGS[case]["log"], tagging_config=NEW)
    assert plain.category == LOGS[case]["category"]
    seen = analyse_text(prefixed(LOGS[case]["log"], COLLECTORS[collector]), tagging_config=NEW)
    assert (seen.category, seen.rule, seen.cluster) == (plain.category, plain.rule, plain.cluster)
    assert seen.fingerprint == plain.fingerprint


def test_the_previous_config_still_reads_prefixed_logs_as_it_did():
    under_prefix = [analyse_text(prefixed(r["log"], COLLECTORS["kubectl logs --prefix"]), tagging_config=OLD)
                    for r in LOGS.values()]
    plain = [analyse_text(r["log"], tagging_config=OLD) for r in LOGS.values()]
    assert [a.fingerprint for a in under_prefix] != [a.fingerprint for a in plain]   # released: never changes
    assert "unclassified" in [a.category for a in under_prefix]


def test_prefixes_are_rewritten_line_for_line_and_rank_is_kept():
    lines = ["2024-05-01T10:00:00.123456789Z stderr F Traceback (most recent call last):",
             "2024-05-01T10:00:00.223456789Z stderr F",
             "[pod/w-0/pytorch] 2024-05-01T10:00:01.000000001Z KeyError: 'x'",
             "[1,mpirank:3,algo-2]<stderr>:RuntimeError: boom",
             "(RayTrainWorker pid=12, ip=10.0.0.5) ValueError: bad [repeated 7x across cluster]",
             "(raylet, ip=10.0.0.5) A worker died or was killed while executing a task",
             "[rank1]:",
             "2024-05-01 10:00:00,123 INFO training step 3",
             '{"log":"\\u001b[31mKeyError: 3\\r\\n","stream":"stderr","time":"2024-05-01T10:00:00.1Z"}',
             '{"level": "info", "msg": "step 3"}']
    assert canonical_lines(lines) == [
        "Traceback (most recent call last):", "", "KeyError: 'x'", "[1,3]<stderr>: RuntimeError: boom",
        "ValueError: bad", "A worker died or was killed while executing a task", "",
        "2024-05-01 10:00:00,123 INFO training step 3",     # the program's own time stays
        "KeyError: 3", '{"level": "info", "msg": "step 3"}']    # a json-file record's line, cleaned; other JSON stays
    assert launcher_bodies(["[rank1]: AssertionError", "[1,3]<stderr>:ValueError: x", "3: x", "[1,3]<stderr>:"]) == [
        "AssertionError", "ValueError: x", "x", ""]


def test_a_pdsh_host_prefix_needs_several_lines_and_a_host_like_name():
    assert canonical_lines(["node2: a", "node2: b", "node2: c"]) == ["a", "b", "c"]
    assert canonical_lines(["node2: a", "node3: b"]) == ["node2: a", "node3: b"]     # too few to tell
    assert canonical_lines(["epoch12: a"] * 3) == ["epoch12: a"] * 3                  # a counter, not a host


def test_the_failure_line_and_excerpt_are_shown_as_stored():
    log = prefixed(LOGS["i7a-0001"]["log"], COLLECTORS["kubectl logs --prefix"])
    analysis = analyse_text(log, tagging_config=NEW)
    stored = log.split("\n")
    assert analysis.failure_line == stored[analysis.failure_line_number - 1]
    assert analysis.failure_line.startswith("[pod/bert-worker-0/pytorch] ")
    assert analysis.excerpt.split("\n")[0] == stored[analysis.excerpt_start_line - 1]


def test_real_ray_and_mpi_logs_read_their_last_words_without_the_prefix():
    logs = devset_cases("i5c-0002", "i3tf-0026")
    ray = analyse_text(logs["i5c-0002"]["log"], tagging_config=NEW)
    mpi = analyse_text(logs["i3tf-0026"]["log"], tagging_config=NEW)
    assert ray.message.endswith("the log ends: @     0x7f60b589e3d4        192  ray::rpc::")
    assert mpi.message.endswith("the log ends: *** Aborted at")
    assert "(TorchTrainer pid=" in analyse_text(logs["i5c-0002"]["log"], tagging_config=OLD).message


def test_version_7_reads_the_node_a_prefix_names_on_a_failure_line_only():
    assert prefix_hosts("[1,mpirank:3,algo-2]<stderr>:x") == ["algo-2"]
    assert prefix_hosts("(RayTrainWorker pid=12, ip=10.0.0.5) x") == ["10.0.0.5"]
    assert prefix_hosts("[pod/bert-worker-0/pytorch] x") == []           # a pod is no node
    lines = ["[1,mpirank:0,algo-1]<stderr>:INFO:root:Reducer buckets have been rebuilt in this iteration.",
             "[1,mpirank:3,algo-2]<stderr>:algo-2:81:1311 [3] include/socket.h:423 NCCL WARN Net : Connection closed "
             "by remote peer",
             "[1,mpirank:3,algo-2]<stderr>:RuntimeError: NCCL communicator was aborted on rank 3. Original reason for "
             "failure was: NCCL error: remote process exited or there was a network error, NCCL version 2.18.1"]
    new, old = analyse_text("\n".join(lines), tagging_config=NEW), analyse_text("\n".join(lines), tagging_config=OLD)
    assert new.category == old.category == "collective_communication"
    assert new.suspect_nodes == ("algo-2",) and old.suspect_nodes == ()   # algo-1 only said INFO
    assert INFRA_V7.rules is INFRA_V6.rules


def test_hosts_are_read_in_the_line_a_json_file_record_holds():
    lines = ["step 900 loss 2.1",
             "gpu-node-7:81:1311 [3] include/socket.h:423 NCCL WARN Net : Connection closed by remote peer",
             "RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: NCCL error: "
             "remote process exited or there was a network error, NCCL version 2.18.1"]
    log = prefixed("\n".join(lines), "json-file")
    new, old = analyse_text(log, tagging_config=NEW), analyse_text(log, tagging_config=OLD)
    assert new.category == "collective_communication" and new.suspect_nodes == ("gpu-node-7",)
    assert analyse_text("\n".join(lines), tagging_config=NEW).suspect_nodes == new.suspect_nodes
    assert "gpu-node-7" not in old.suspect_nodes


def test_a_log_file_read_in_windows_is_read_through_its_prefixes_too(tmp_path):
    from jobs_ingest.core import analyse_log
    plain = LOGS["i7a-0001"]["log"]
    path = tmp_path / "pod.log"
    path.write_text("\n".join(f"step {i} loss 2.0" for i in range(5000)) + "\n" + plain + "\n", encoding="utf-8")
    cri = tmp_path / "pod-cri.log"
    cri.write_text(prefixed(path.read_text(encoding="utf-8").rstrip("\n"), COLLECTORS["containerd / CRI-O file"])
                   + "\n", encoding="utf-8")
    a, b = analyse_log(path, tagging_config=NEW), analyse_log(cri, tagging_config=NEW)
    assert (b.category, b.fingerprint, b.failure_line_number) == (a.category, a.fingerprint, a.failure_line_number)
    assert b.failure_line.endswith(a.failure_line) and b.failure_line.startswith("2024-05-01T10:00:")
