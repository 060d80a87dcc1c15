"""Rules version 13 and infrastructure rules version 11 (tagging:2026-11v): a network that did not answer is said
plainly, not read as a missing path; a remote I/O error is storage. Messages are the C library's (glibc strerror) as
Python's OSError prints them, with made-up names; the released 2026-11u is unchanged. Infrastructure rules version 12
(tagging:2026-11w): NVIDIA's texts for a node whose GPUs cannot be used."""
import pytest

from jobs_ingest.core import analyse_text

OLD, NEW = "tagging:2026-11u", "tagging:2026-11v"


@pytest.mark.parametrize("log", [
    "OSError: [Errno 113] No route to host\n",
    "OSError: [Errno 101] Network is unreachable\n",
    "OSError: [Errno 112] Host is down\n",
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.org', port=443): Max retries exceeded with url:"
    " /w.bin (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f3c>: Failed to establish a"
    " new connection: [Errno 110] Connection timed out'))\n",
])
def test_a_network_that_did_not_answer_is_no_missing_path(log):
    new = analyse_text(log, tagging_config=NEW)
    assert (new.category, new.rule, new.retry_advice) == ("unclassified", "unclassified.network_unreachable", "retry")
    assert new.tagger_version == "13+i11+ml7+l2"


def test_os_error_113_was_a_missing_path_before():
    old = analyse_text("OSError: [Errno 113] No route to host\n", tagging_config=OLD)
    assert (old.category, old.retry_advice) == ("path_not_found", "do_not_retry")   # released, unchanged


def test_the_infrastructure_rules_still_decide_where_they_know_the_sender():
    nccl = ("gpu-node-17:48213:48590 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.2.3<41233> "
            "failed : Network is unreachable\n")
    found = analyse_text(nccl, tagging_config=NEW)
    assert found.dimension == "infrastructure" and found.retry_advice.startswith("retry")


def test_a_remote_io_error_is_storage():
    log = ('Traceback (most recent call last):\n  File "train.py", line 40, in save\n    torch.save(state, path)\n'
           "OSError: [Errno 121] Remote I/O error\n")
    new, old = analyse_text(log, tagging_config=NEW), analyse_text(log, tagging_config=OLD)
    assert (new.category, new.rule, new.fault) == ("storage", "infra.remote_io_error", "platform")
    assert new.retry_advice.startswith("retry") and old.category == "path_not_found"
    # the look-alike guard of EIO applies: a data loader's shared memory, not the store
    shm = "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n" + log
    assert analyse_text(shm, tagging_config=NEW).dimension != "infrastructure"


@pytest.mark.parametrize("log, rule", [
    # NVIDIA's driver, as the node's syslog records an NVSwitch's fatal error (Fabric Manager's SXid catalogue)
    ("Jan  3 10:00:00 dgx-3 kernel: nvidia-nvswitch2: SXid (PCI:0000:0b:00.0): 24007, Fatal, Link 44 sourcetrack TCEN0"
     " crumbstore ECC DBE Err\n", "infra.nvswitch_fatal_sxid"),
    # the kernel module and the user-space driver of different versions: nvidia-smi, nvidia-container-cli
    ("Failed to initialize NVML: Driver/library version mismatch\n", "infra.nvml_driver_mismatch"),
    ("docker: Error response from daemon: failed to create shim task: OCI runtime create failed\n"
     "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown\n",
     "infra.nvml_driver_mismatch"),
    # nvidia-smi cannot reach a GPU that stopped answering
    ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n", "infra.gpu_device_handle_lost"),
])
def test_infrastructure_rules_version_12_read_a_node_whose_gpus_cannot_be_used(log, rule):
    new = analyse_text(log, tagging_config="tagging:2026-11w")
    assert (new.category, new.rule, new.retry_advice) == ("gpu_hardware", rule, "retry_other_nodes")
    assert new.tagger_version == "13+i12+ml7+l2"
    assert analyse_text(log, tagging_config=NEW).dimension != "infrastructure"   # released 2026-11v, unchanged
    if "dgx-3" in log:
        assert new.suspect_nodes == ("dgx-3",)


def test_a_non_fatal_nvswitch_error_is_no_failure():
    line = "kernel: nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error\n"
    assert analyse_text(line, tagging_config="tagging:2026-11w").dimension != "infrastructure"
