"""Rules version 14 and infrastructure rules version 13 (tagging:2026-11x). Messages are the producers' own texts
(glibc strerror as Python's OSError prints it, Ray, PyTorch, Open MPI), with made-up names and numbers; the released
2026-11w is unchanged."""
import pytest

from jobs_ingest.core import analyse_text
from tests.devset import raised

OLD, NEW = "tagging:2026-11w", "tagging:2026-11x"



@pytest.mark.parametrize("line, rule", [
    ("OSError: [Errno 24] Too many open files", "unclassified.os_resource_limit"),
    ("OSError: [Errno 23] Too many open files in system", "unclassified.os_resource_limit"),
    ("BlockingIOError: [Errno 11] Resource temporarily unavailable", "unclassified.os_resource_limit"),
    ("RuntimeError: can't start new thread", "unclassified.os_resource_limit"),
    ("OSError: [Errno 98] Address already in use", "unclassified.address_in_use"),
    ("OSError: [Errno 99] Cannot assign requested address", "unclassified.address_in_use"),
    ("ConnectionRefusedError: [Errno 111] Connection refused", "unclassified.connection_failed"),
    ("BrokenPipeError: [Errno 32] Broken pipe", "unclassified.connection_failed"),
    ("OSError: [Errno 107] Transport endpoint is not connected", "unclassified.connection_failed"),
    ("socket.gaierror: [Errno -3] Temporary failure in name resolution", "unclassified.connection_failed"),
    ("ProcessLookupError: [Errno 3] No such process", "unclassified.os_errno"),
    ("OSError: [Errno 9] Bad file descriptor", "unclassified.os_errno"),
    ("OSError: [Errno 16] Device or resource busy: '/mnt/data/.nfs000000001'", "unclassified.os_errno"),
])
def test_an_errno_that_names_no_path_is_no_missing_path(line, rule):
    new, old = analyse_text(raised(line), tagging_config=NEW), analyse_text(raised(line), tagging_config=OLD)
    assert (new.category, new.rule, new.fault) == ("unclassified", rule, "user")   # said plainly: no model guess
    assert new.tagger_version == "14+i13+ml7+l2"
    assert old.category in ("path_not_found", "unclassified")                     # released, unchanged


def test_an_unsupported_call_is_not_implemented():
    line = "OSError: [Errno 38] Function not implemented: '/lustre/run/ckpt.h5'"
    new = analyse_text(raised(line), tagging_config=NEW)
    assert (new.category, new.rule) == ("not_implemented", "not_implemented.errno_unsupported")
    assert analyse_text(raised(line), tagging_config=OLD).category == "path_not_found"


@pytest.mark.parametrize("line", [
    "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'",
    "OSError: [Errno 17] File exists: 'runs/exp1'",
    "NotADirectoryError: [Errno 20] Not a directory: 'data/train.json/0.png'",
    "IsADirectoryError: [Errno 21] Is a directory: 'checkpoints'",
    "OSError: [Errno 36] File name too long: 'out/aaaa'",
    "OSError: [Errno 39] Directory not empty: 'runs/exp1'",
])
def test_errnos_that_name_a_path_keep_it(line):
    assert analyse_text(raised(line), tagging_config=NEW).category == "path_not_found"


def test_the_storage_errnos_are_still_the_platforms():
    for line in ("OSError: [Errno 28] No space left on device", "OSError: [Errno 116] Stale file handle",
                 "OSError: [Errno 107] Transport endpoint is not connected: '/mnt/gcs/datasets'"):
        found = analyse_text(raised(line), tagging_config=NEW)
        assert (found.category, found.fault) == ("storage", "platform"), line


@pytest.mark.parametrize("line", [
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "ray.exceptions.RayTaskError: 1 worker(s) were killed due to the node running low on memory.",
])
def test_rays_memory_monitor_is_host_memory(line):
    new = analyse_text(raised(line), tagging_config=NEW)
    assert (new.category, new.rule) == ("cpu_oom", "cpu_oom.ray_memory_monitor")
    assert analyse_text(raised(line), tagging_config=OLD).category != "cpu_oom"


def test_a_full_dev_shm_in_torch_shared_memory_is_host_memory_and_a_file_limit_is_said_plainly():
    full = "RuntimeError: unable to write to file </torch_1234_5678901>: No space left on device (28)"
    opened = ("RuntimeError: unable to open shared memory object </torch_1234_5678901> in read-write mode: "
              "No space left on device (28)")
    for line in (full, opened):
        new = analyse_text(raised(line), tagging_config=NEW)
        assert (new.category, new.rule, new.fault) == ("cpu_oom", "cpu_oom.torch_shared_memory_full", "user")
        assert analyse_text(raised(line), tagging_config=OLD).category == "unclassified"
    limit = ("RuntimeError: unable to open shared memory object </torch_1234_5678901> in read-write mode: "
             "Too many open files (24)")
    assert analyse_text(raised(limit), tagging_config=NEW).rule == "unclassified.os_resource_limit"


def test_the_nccl_heartbeat_monitor_is_a_hung_collective():
    log = ("[rank3]:[E1127 03:14:07.000000000 ProcessGroupNCCL.cpp:1275] [PG 0 (default_pg) Rank 3] Heartbeat monitor "
           "timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2\n")
    new = analyse_text(log, tagging_config=NEW)
    assert (new.category, new.rule, new.retry_advice) == ("collective_communication", "infra.nccl_heartbeat_timeout",
                                                          new.retry_advice)
    assert new.fault == "platform" and new.retry_advice.startswith("retry")
    assert analyse_text(log, tagging_config=OLD).dimension != "infrastructure"


@pytest.mark.parametrize("launcher, daemon", [("ORTE", "[[17757,0],13]"), ("PRTE", "[prterun-gpu-01-34@0,1]")])
def test_a_lost_mpi_daemon_is_node_loss_and_names_the_lost_node(launcher, daemon):
    log = ("epoch 3 step 1200 loss 0.41\n"
           "--------------------------------------------------------------------------\n"
           f"{launcher} has lost communication with a remote daemon.\n\n"
           "  HNP daemon   : [[17757,0],0] on node gpu-01\n"
           f"  Remote daemon: {daemon} on node gpu-13\n\n"
           "This is usually due to either a failure of the TCP network\n"
           "connection to the node, or possibly an internal failure of\n"
           "the daemon itself. We cannot recover from this failure, and\n"
           "therefore will terminate the job.\n")
    new = analyse_text(log, tagging_config=NEW)
    assert (new.category, new.rule, new.fault) == ("node_lost", "infra.mpi_daemon_lost", "platform")
    assert new.suspect_nodes == ("gpu-13",)   # the launching node (HNP) did not fail
    assert analyse_text(log, tagging_config=OLD).dimension != "infrastructure"


def test_rays_node_died_error_is_node_loss():
    log = raised("ray.exceptions.NodeDiedError: Task failed because the node it ran on died or is unreachable.")
    new = analyse_text(log, tagging_config=NEW)
    assert (new.category, new.rule) == ("node_lost", "infra.ray_node_died_error")
    assert analyse_text(log, tagging_config=OLD).dimension != "infrastructure"
