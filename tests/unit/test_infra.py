"""The infrastructure dimension and its detector (jobs_ingest.core.infra).

Inline lines follow the public formats cited in jobs_ingest/core/infra.py; the fixture-driven tests
read tests/fixtures/infra/cases.jsonl (real pasted logs from public threads; dev split only, except
the one clearly named held-out measurement at the end).
"""
import json
import time
from pathlib import Path

import pytest

from jobs_ingest.core import configs, infra, taxonomy
from jobs_ingest.core.infra import (CATEGORIES, INFRA_V1, INFRA_V2, INFRA_V3, INFRA_V4, INFRA_V5, INFRA_V6, INFRA_V7, INFRA_V8, INFRASTRUCTURE,
                                    detect, is_platform_fault)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "infra"
FIXTURES2 = FIXTURES.with_name("infra2")   # the second development set (all dev), sampled in plain words
FIXTURES3 = FIXTURES.with_name("infra3")   # the third (all dev), plain words again, more look-alikes
FIXTURES4 = FIXTURES.with_name("infra4")   # the fourth (all dev), plain words, session 10
FIXTURES5 = FIXTURES.with_name("infra5")   # the fifth (all dev), plain words, session 10
FIXTURES_HELDOUT2 = FIXTURES.with_name("infra_heldout2")   # a second held-out slice (all held out), never tuned on
FIXTURES_HELDOUT3 = FIXTURES.with_name("infra_heldout3")   # a third held-out slice (all held out), never tuned on
FIXTURES6 = FIXTURES.with_name("infra6")   # the sixth (all dev), plain words, session 11
FIXTURES_HELDOUT4 = FIXTURES.with_name("infra_heldout4")   # a fourth held-out slice (all held out), never tuned on


def _cases(split, folder=FIXTURES):
    path = folder / "cases.jsonl"
    if not path.exists():
        return []
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{**c, "folder": folder} for c in cases if c.get("split") == split]


def _lines(case):
    return (case["folder"] / case["file"]).read_text(errors="replace").splitlines()


def _detect_case(case, rules=INFRA_V1):
    return rules.detect(_lines(case), exit_code=case.get("exit_code"), scheduler_state=case.get("scheduler_state"))


# --- The categories as data ---------------------------------------------------------------------

def test_categories_have_the_taxonomy_shape_and_retry_advice():
    assert set(CATEGORIES) == {"gpu_hardware", "collective_communication", "node_lost", "preempted",
                               "network_rendezvous", "storage"}
    for cid, c in CATEGORIES.items():
        assert isinstance(c, taxonomy.Category) and c.id == cid and c.dimension == INFRASTRUCTURE
        assert c.study_count == 0
        assert c.retry_advice == "retry" or c.retry_advice.startswith("retry_")
        assert c.retry_advice != taxonomy.RETRY_WITH_CHANGE
        assert c.retry_advice in taxonomy.RETRY_ADVICE or c.retry_advice in infra.RETRY_ADVICE
        assert c.likely_root_cause in infra.ROOT_CAUSES
    # Merged into the taxonomy as its fifth dimension, beside (not over) the study's categories.
    assert all(taxonomy.CATEGORIES[cid] is c for cid, c in CATEGORIES.items())
    assert taxonomy.DIMENSIONS[INFRASTRUCTURE] == "Infrastructure"
    assert len(taxonomy.CATEGORIES) == 20 + 1 + len(CATEGORIES)   # the study's 20, unclassified, the platform's


def test_every_infrastructure_category_is_a_platform_fault_and_no_program_category_is():
    assert all(is_platform_fault(cid) for cid in CATEGORIES)
    assert not any(is_platform_fault(cid) for cid, c in taxonomy.CATEGORIES.items() if c.dimension != INFRASTRUCTURE)
    assert {taxonomy.fault(cid) for cid in CATEGORIES} == {"platform"} and taxonomy.fault("gpu_oom") == "user"
    assert not is_platform_fault("no_such_category")


# --- Infrastructure failures found ----------------------------------------------------------------

XID79 = "Jan 12 03:14:07 dgx-14 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
WATCHDOG = ("[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, "
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800123 milliseconds before timing out.")


@pytest.mark.parametrize("lines, category, rule", [
    ([XID79], "gpu_hardware", "infra.xid_79"),
    (["NVRM: Xid (PCI:0000:86:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) "
      "has been detected on GPU in the framebuffer at partition 6"], "gpu_hardware", "infra.xid_48"),
    (["RuntimeError: CUDA error: uncorrectable ECC error encountered"], "gpu_hardware", "infra.ecc_uncorrectable"),
    (["RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution"], "gpu_hardware",
     "infra.nvlink_error"),
    (["NVRM: Xid (PCI:0000:07:00): 74, pid=9, NVLink: fatal error detected on link 3"], "gpu_hardware", "infra.xid_74"),
    (["NVRM: Xid (PCI:0000:dc:00): 45, pid=18, name=python3, Ch 00000001 caused by previous Xid 149"], "gpu_hardware",
     "infra.xid_149"),
    (["Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system"], "gpu_hardware",
     "infra.gpu_fallen_off_bus"),
    ([WATCHDOG], "collective_communication", "infra.nccl_watchdog_timeout"),
    (["torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, remote process exited or there "
      "was a network error, NCCL version 2.19.3", "ncclRemoteError: A call failed possibly due to a network error"],
     "collective_communication", "infra.nccl_remote_error"),
    (["node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.2.0.5<33092> "
      "with error 12, opcode 0, len 0, vendor err 129 (Recv)"], "collective_communication",
     "infra.nccl_ib_completion_error"),
    (["RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms "
      "for recv operation to complete"], "collective_communication", "infra.gloo_timeout"),
    (["slurmstepd: error: *** JOB 1234 ON gpu-node-07 CANCELLED AT 2024-01-01T00:00:00 DUE TO NODE FAILURE ***"],
     "node_lost", "infra.slurm_node_failure"),
    (["Message: Node gke-pool-m0g1 which was running pod train-0 is unresponsive"], "node_lost", "infra.k8s_node_lost"),
    (["slurmstepd: error: *** STEP 1234.0 ON gpu-node-07 CANCELLED AT 2024-01-01T00:00:00 DUE TO PREEMPTION ***"],
     "preempted", "infra.slurm_preemption"),
    (["torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined."],
     "network_rendezvous", "infra.c10d_store_timeout"),
    (["torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
      "failed. See inner exception for details."], "network_rendezvous", "infra.rendezvous_timeout"),
    (["ConnectionResetError: [Errno 104] Connection reset by peer"], "network_rendezvous", "infra.connection_reset"),
    (['botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://b.s3.amazonaws.com/k"'],
     "storage", "infra.object_store_timeout"),
    (["OSError: [Errno 116] Stale file handle: '/mnt/nfs/data/shard-0003.tar'"], "storage", "infra.stale_file_handle"),
    (["OSError: [Errno 28] No space left on device: '/ckpt/step_1000.pt'"], "storage", "infra.disk_full"),
    (["OSError: [Errno 5] Input/output error: '/lustre/x.bin'"], "storage", "infra.io_error"),
    (["kernel: nfs: server filer01 not responding, still trying"], "storage", "infra.nfs_not_responding"),
    (["OSError: [Errno 107] Transport endpoint is not connected: '/mnt/gcs/shards/00012.tar'"], "storage",
     "infra.mount_lost"),
    (["azure.core.exceptions.ServiceResponseError: ('Connection aborted.', TimeoutError('The read operation timed "
      "out'))"], "storage", "infra.object_store_timeout"),
    (["RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"],
     "network_rendezvous", "infra.c10d_connect_failed"),
])
def test_detects_the_public_formats(lines, category, rule):
    found = detect(["step 100 loss 2.31"] + lines)
    assert found is not None and (found.category, found.rule) == (category, rule)
    assert found.dimension == INFRASTRUCTURE and found.fault == "platform"
    assert found.retry_advice == CATEGORIES[category].retry_advice
    assert found.evidence == (["step 100 loss 2.31"] + lines)[found.evidence_index].strip()


@pytest.mark.parametrize("line, category, rule", [
    ("RuntimeError: CUDA driver error: CUDA_ERROR_CONTAINED: Invalid memory access of peer GPU memory over nvlink",
     "gpu_hardware", "infra.cuda_error_contained"),
    ("Failed to bind NVLink SHARP (NVLS) Multicast memory. This is usually caused by a system or configuration error "
     "in the Fabric Manager or NVSwitches.", "gpu_hardware", "infra.fabric_manager"),
    ("RuntimeError: CUDA error: system not yet initialized", "gpu_hardware", "infra.fabric_manager"),
    ("The actor is dead because its node has died. Node Id: 677df2a9", "node_lost", "infra.ray_node_died_v2"),
    ("gpu-a1:1:2 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port error", "collective_communication",
     "infra.nccl_ib_async_event"),
    ("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1169, unhandled cuda error, NCCL version 2.14.3",
     "collective_communication", "infra.nccl_unhandled_cuda_error"),
    ("[W socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, remote=[10.0.0.2]:23456) timed out after 900000ms",
     "network_rendezvous", "infra.c10d_socket_wait_timeout"),
    ("fsspec.exceptions.FSTimeoutError", "storage", "infra.fsspec_timeout"),
    ("RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file data/228: "
     "file write failed", "storage", "infra.checkpoint_write_failed"),
])
def test_version_2_knows_more_producer_texts_and_version_1_is_unchanged(line, category, rule):
    found = INFRA_V2.detect(["step 100 loss 2.31", line])
    assert found is not None and (found.category, found.rule) == (category, rule)
    assert INFRA_V1.detect(["step 100 loss 2.31", line]) is None   # a released set never changes


def test_the_keyword_trie_finds_every_keyword_and_nothing_else():
    from jobs_ingest.core.infra import _trie_pattern
    pattern = _trie_pattern(["xid", "sxid", "nccl", "nvlink", "(dbe)", "errno 5]", "ecc"])
    for word in ["xid", "sxid", "nccl", "nvlink", "(dbe)", "errno 5]", "ecc"]:
        assert pattern.search(f"before {word} after").group() in word
    assert pattern.search("no keyword here: dbe, errno 5, nvlin, ec c") is None
    rules = configs.tagging_config().infra_rules
    assert all(rules.keyword_pattern.match(k) for k in rules.keywords)


def test_a_line_whose_lowering_changes_its_length_does_not_hide_the_failure_after_it():
    lines = ["İİİ Sunucu hazırlanıyor", "[E ProcessGroupNCCL.cpp:1182] [Rank 1] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=91, OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out."]
    found = configs.tagging_config().infra_rules.detect(lines)
    assert found is not None and found.category == "collective_communication" and found.evidence_index == 1


def test_nccl_cuda_error_beside_a_program_failure_stays_the_programs():
    for program in ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                    "RuntimeError: CUDA error: device-side assert triggered"):
        assert INFRA_V2.detect([program, "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1169, unhandled cuda error"]) is None


def test_the_newest_tagging_config_uses_the_newest_infrastructure_rules():
    from jobs_ingest.core.infra import (INFRA_V9, INFRA_V10, INFRA_V11, INFRA_V12, INFRA_V13, INFRA_V14, INFRA_V15,
                                        INFRA_V16)
    assert configs.tagging_config().infra_rules is INFRA_V16
    assert configs.tagging_config("tagging:2026-11zc").infra_rules is INFRA_V15
    assert configs.tagging_config("tagging:2026-11z").infra_rules is INFRA_V14
    assert configs.tagging_config("tagging:2026-11y").infra_rules is INFRA_V13
    assert configs.tagging_config("tagging:2026-11w").infra_rules is INFRA_V12
    assert configs.tagging_config("tagging:2026-11v").infra_rules is INFRA_V11
    assert configs.tagging_config("tagging:2026-11u").infra_rules is INFRA_V10
    assert configs.tagging_config("tagging:2026-11t").infra_rules is INFRA_V9
    assert configs.tagging_config("tagging:2026-11s").infra_rules is INFRA_V8
    assert configs.tagging_config("tagging:2026-11l").infra_rules is INFRA_V7
    assert configs.tagging_config("tagging:2026-11j").infra_rules is INFRA_V6
    assert configs.tagging_config("tagging:2026-11i").infra_rules is INFRA_V5
    assert configs.tagging_config("tagging:2026-11g").infra_rules is INFRA_V4
    assert configs.tagging_config("tagging:2026-11f").infra_rules is INFRA_V3
    assert configs.tagging_config("tagging:2026-11d").infra_rules is INFRA_V2
    assert configs.tagging_config("tagging:2026-11c").infra_rules is INFRA_V1


def test_finding_names_the_hosts_of_its_failure_lines():
    found = detect(["step 9", XID79, WATCHDOG, "gpu-a1:1:2 [0] NCCL WARN NET/IB : Got completion from peer "
                    "10.2.0.5<33092> with error 12"])
    assert found.category == "gpu_hardware"  # the GPU explains the timeouts that followed it
    assert set(found.hosts) == {"dgx-14", "gpu-a1", "10.2.0.5"}


def test_application_xids_alone_are_not_infrastructure():
    for xid in (13, 31, 43):
        assert detect([f"NVRM: Xid (PCI:0000:3b:00): {xid}, pid=77, Ch 00000010"]) is None


def test_only_the_end_of_the_log_decides():
    lines = ["OSError: [Errno 5] Input/output error (retried, recovered)"] + ["step %d" % i for i in range(infra.TAIL_LINES)]
    assert detect(lines) is None


@pytest.mark.parametrize("state, category", [
    ("NODE_FAIL", "node_lost"), ("node_fail", "node_lost"), ("BOOT_FAIL", "node_lost"), ("NodeLost", "node_lost"),
    ("Evicted", "node_lost"), ("Evicted: The node was low on resource: memory.", "node_lost"),
    ("DeletionByTaintManager", "node_lost"), ("PREEMPTED", "preempted"), ("PreemptionByScheduler", "preempted"),
])
def test_scheduler_states(state, category):
    found = detect(["step 100 loss 2.31"], scheduler_state=state)
    assert found.category == category and found.evidence_index is None and state.strip() in found.evidence


@pytest.mark.parametrize("state", ["FAILED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY", "OOMKilled", "Error", "", None])
def test_other_states_decide_nothing(state):
    assert detect(["step 100 loss 2.31"], scheduler_state=state) is None


def test_eviction_of_a_pod_over_its_memory_request_is_the_jobs_own():
    message = ("The node was low on resource: memory. Container trainer was using 30Gi, which exceeds its request "
               "of 8Gi.")
    assert detect([message]) is None
    assert detect(["step 3"], scheduler_state="Evicted: " + message) is None
    assert detect([message], scheduler_state="Evicted") is None
    newer = "The node was low on resource: memory. Container t was using 9Gi, request is 1Gi, has larger consumption of memory."
    assert detect([newer]) is None
    assert detect(["The node was low on resource: ephemeral-storage."]).category == "node_lost"


def test_preemption_state_wins_over_a_log_that_ends_in_a_timeout():
    assert detect([WATCHDOG], scheduler_state="PREEMPTED").category == "preempted"


def test_node_failure_with_gpu_evidence_names_the_gpu():
    assert detect([XID79], scheduler_state="NODE_FAIL").rule == "infra.xid_79"


# --- Look-alikes stay program failures ------------------------------------------------------------

@pytest.mark.parametrize("lines", [
    pytest.param(["../aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [0,0,0], thread: "
                  "[0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
                  "RuntimeError: CUDA error: device-side assert triggered",
                  "NVRM: Xid (PCI:0000:3b:00): 43, pid=1234, Ch 00000008", WATCHDOG], id="device_side_assert"),
    pytest.param(["ValueError: Default process group has not been initialized, please make sure to call "
                  "init_process_group."], id="process_group_not_initialised"),
    pytest.param(["ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
                  "MASTER_ADDR expected, but not set", "ConnectionResetError: [Errno 104] Connection reset by peer"],
                 id="missing_master_addr"),
    pytest.param(["torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", WATCHDOG],
                 id="cuda_oom"),
    pytest.param(["FileNotFoundError: [Errno 2] No such file or directory: '/data/imagenet/train'"],
                 id="missing_dataset_path"),
    pytest.param(["torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, invalid usage (run "
                  "with NCCL_DEBUG=WARN for details), NCCL version 2.18.1",
                  "ncclInvalidUsage: This usually reflects invalid usage of NCCL library."], id="nccl_invalid_usage"),
    pytest.param(["ncclInvalidArgument: Invalid value for an argument.", WATCHDOG], id="nccl_invalid_argument"),
    pytest.param(["RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
                  "CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[10])", WATCHDOG], id="mismatched_collectives"),
    pytest.param(["[rank1]: IndexError: index 7 is out of bounds for dimension 0 with size 4", WATCHDOG],
                 id="other_rank_program_error"),
    pytest.param(["slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9.0. Some of your processes may have "
                  "been killed by the cgroup out-of-memory handler.", "ConnectionResetError: [Errno 104] Connection "
                  "reset by peer"], id="oom_kill_then_reset"),
    pytest.param(["Killed", "ConnectionResetError: [Errno 104] Connection reset by peer"], id="killed_exit_137"),
    pytest.param(['  File "/usr/lib/python3.10/multiprocessing/resource_sharer.py", line 138, in _serve',
                  "ConnectionResetError: [Errno 104] Connection reset by peer"], id="dataloader_worker_died"),
    pytest.param(["RuntimeError: unable to write to file </torch_18_2939>: No space left on device (28)"],
                 id="shm_too_small"),
    pytest.param(["NCCL WARN Error while creating shared memory segment /dev/shm/nccl-x (size 9637888)",
                  "ncclSystemError: System call (e.g. socket, malloc) or external library call failed"], id="nccl_shm"),
    pytest.param(["slurmstepd: error: *** JOB 5 ON gpu-node-07 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***"],
                 id="time_limit"),
    pytest.param(["OSError: [Errno 122] Disk quota exceeded: '/home/u/ckpt.pt'"], id="own_disk_quota"),
    pytest.param(["RuntimeError: The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in "
                  "use)."], id="master_port_in_use"),
])
def test_lookalikes_are_not_infrastructure(lines):
    assert detect(["step 100 loss 2.31"] + lines, exit_code=137 if "Killed" in lines else 1) is None


# --- Cost -------------------------------------------------------------------------------------------

def test_detector_is_cheap_on_long_noisy_tails():
    lines = ["[rank0] step %d loss 2.31 lr 1e-4 grad_norm 0.9 tokens/s 41234 node gpu-a1 timeout=1800" % i
             for i in range(20000)]
    start = time.perf_counter()
    for _ in range(20):
        detect(lines)
    assert (time.perf_counter() - start) / 20 < 0.01  # about 1 ms on the shared 2-core machine


# --- Real fixtures (tests/fixtures/infra) -------------------------------------------------------------

# Dev cases the detector gets wrong, each for a reason no framework message can settle; listed so the
# rest stay asserted and a fix shows up as an unexpected pass (strict xfail).
KNOWN_DEV_MISSES = {
    "node_loss/arjuna-137-job-killed-on-c014.log":
        "slurmctld says only WTERMSIG 9; the node was blamed by the admins in the thread, not by any message",
    "node_loss/ezpz-238-srun-node-killed.log":
        "srun 'tasks 4-7: Killed' is a SIGKILL, as an OOM kill or scancel would be; nothing says the node died",
    "lookalike/pytorch-75512-gloo-isend-not-waited.log":
        "Gloo 'Connection closed by peer' is the same text whether the peer exited early (user) or the link broke",
    "lookalike/wespeaker-171-shared-rdzv-broken-pipe.log":
        "RendezvousConnectionError / Broken pipe from a shared rendezvous; the text cannot show the launch mistake",
}


def _expect(case, known=KNOWN_DEV_MISSES):
    reason = known.get(case["file"])
    return pytest.param(case, id=case["file"], marks=pytest.mark.xfail(reason=reason, strict=True) if reason else ())


# The second set, with version 2 (written from its misses under version 1: 23/37 right, 16/30 infrastructure
# failures found, 7/7 look-alikes kept, before any rule changed). What is left, and why:
KNOWN_DEV2_MISSES = {
    "gpu_hardware/tensorflow-18316-gpu-vanishes-cuinit-no-device.log":
        "CUDA_ERROR_NO_DEVICE is usually CUDA_VISIBLE_DEVICES; the thread, not the log, says the GPU dropped out",
    "gpu_hardware/cutorch-197-runtime-error-30-after-300k-steps.log":
        "cuda runtime error (30) 'unknown error' names no cause; the maintainer's reading is in the thread",
    "collective/flux-coral2-36-mpi-allreduce-ofi-address-in-use.log":
        "MPI OFI 'Address already in use' at init is as often a launch mistake as a fabric fault",
    "node_loss/xgboost-11472-ci-operation-canceled-spot.log":
        "a CI runner's 'The operation was canceled'; the spot reclaim is known only from the thread",
    "storage/open-images-16-s3-sync-read-timeout.log":
        "a bare 'The read operation timed out' does not say what was being read",
}


def _assert_finding(case, found):
    if case["expected_dimension"] == INFRASTRUCTURE:
        assert found is not None, "infrastructure failure not detected"
        assert found.retry_advice.startswith("retry")
        assert found.category == case["expected_category_hint"]
    else:
        assert found is None, f"look-alike detected as {found.category} by {found.rule}: {found.evidence}"


@pytest.mark.parametrize("rules", [INFRA_V1, INFRA_V2], ids=["v1", "v2"])
@pytest.mark.parametrize("case", [_expect(c) for c in _cases("dev")])
def test_dev_fixture(case, rules):
    _assert_finding(case, _detect_case(case, rules))


@pytest.mark.parametrize("case", [_expect(c, KNOWN_DEV2_MISSES) for c in _cases("dev", FIXTURES2)])
def test_second_dev_set_with_version_2(case):
    _assert_finding(case, _detect_case(case, INFRA_V2))


# The third set, with version 3 (written from its misses under version 2: 7/16 infrastructure failures found, 22/24
# look-alikes kept, all hosts in 3/5 cases, before any rule changed). What is left, and why:
KNOWN_DEV3_MISSES = {
    "gpu_hardware/k8s-device-plugin-243-ecc-gpu-cannot-allocate.log":
        "'cuda error: Cannot allocate memory' reads as memory; the ECC fault is in the thread's title, not the log",
    "node_loss/everyvoice-183-slurm-step-cancelled-preemption.log":
        "a bare 'STEP ... CANCELLED AT' gives no reason; the preemption is known from the reporter",
    "storage/hf-datasets-7440-hub-read-timeout-filenotfound.log":
        "the job ends on a FileNotFoundError; the hub's read timeouts before it were retried and went on",
    "storage/codalab-3243-disk-quota-left-negative.log":
        "CodaLab's quota message is a look-alike in codalab#1285 (the run asked too much); only the thread tells them apart",
    "lookalike/determined-8915-watchdog-allgather-after-ddp-param-mismatch.log":
        "a watchdog timeout is the platform's by convention; the parameter mismatch that caused it is not in the log",
    "lookalike/dlrm-292-rank7-stuck-same-iteration-alltoall.log":
        "a watchdog timeout is the platform's by convention; the rank that hangs at the same step is in the thread",
}


@pytest.mark.parametrize("case", [_expect(c, KNOWN_DEV3_MISSES) for c in _cases("dev", FIXTURES3)])
def test_third_dev_set_with_version_3(case):
    _assert_finding(case, _detect_case(case, INFRA_V3))


@pytest.mark.parametrize("line, category, rule", [
    ("OSError: [Errno 122] Disk quota exceeded", "storage", "infra.disk_quota"),
    ("Unable to determine the device handle for GPU 0000:81:00.0: Unknown Error", "gpu_hardware", "infra.nvidia_smi_gpu_lost"),
    ("gpu-07: Reason=Node unexpectedly rebooted [slurm@2022-07-23T15:27:10]", "node_lost", "infra.slurm_node_rebooted"),
    ("node2: Net : Call to recv from 10.1.2.3<56843> failed : Connection refused", "collective_communication",
     "infra.nccl_socket_call_failed"),
])
def test_version_3_knows_more_producer_texts_and_version_2_is_unchanged(line, category, rule):
    found = INFRA_V3.detect([line])
    assert (found.category, found.rule) == (category, rule) and found.retry_advice.startswith("retry")
    assert INFRA_V2.detect([line]) is None or INFRA_V2.detect([line]).rule != rule


# The fourth set, with version 4 (written from its misses under version 3, before any rule changed: 3/6 platform
# failures found, 6/8 look-alikes kept; with version 4: 5/6 found, 4 in the expected category, 6/8 kept). What is
# left, and why:
KNOWN_DEV4_MISSES = {
    "node_loss/t5-japanese-1-preemptible-tpu-lame-workers.log":
        "lame TPU workers are found (node_lost); that the TPU was preemptible is known only from the thread",
    "storage/practical-ml-vision-book-13-gcs-403-account-problem.log":
        "a 403 is usually the reader's own permissions; the bucket owner's outage is known only from the thread",
    "lookalike/finetune-chatglm2-13-store-get-socket-timeout-slow-tokenizing.log":
        "a store timeout reads as the network's; rank 0 still tokenizing is known only from the thread",
    "lookalike/hybrik-207-client-socket-connect-timeout-default-dist-url.log":
        "a connect timeout to the master reads as the network's; the default dist_url is known only from the thread",
}


@pytest.mark.parametrize("case", [_expect(c, KNOWN_DEV4_MISSES) for c in _cases("dev", FIXTURES4)])
def test_fourth_dev_set_with_version_4(case):
    _assert_finding(case, _detect_case(case, INFRA_V4))


@pytest.mark.parametrize("line, category, rule, hosts", [
    ("srun: error: Task launch for 36.0 failed on node cn131: Job credential expired", "node_lost",
     "infra.slurm_task_launch_failed", ("cn131",)),
    ("INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)",
     "node_lost", "infra.tf_lame_workers", ()),
])
def test_version_4_knows_more_producer_texts_and_version_3_is_unchanged(line, category, rule, hosts):
    found = INFRA_V4.detect([line])
    assert (found.category, found.rule, found.hosts) == (category, rule, hosts)
    assert found.retry_advice.startswith("retry") and INFRA_V3.detect([line]) is None


# The fifth set, with version 5 (written from its misses under version 4, before any rule changed: 5/7 platform
# failures found, 2/3 look-alikes kept; with version 5: 7/7 found, 2/3 kept). What is left, and why:
KNOWN_DEV5_MISSES = {
    "lookalike/insightface-1444-nccl-unhandled-system-error-docker-network.log":
        "NCCL's 'unhandled system error' reads as the platform's; the container's network mode is known only from the thread",
}


@pytest.mark.parametrize("case", [_expect(c, KNOWN_DEV5_MISSES) for c in _cases("dev", FIXTURES5)])
def test_fifth_dev_set_with_version_5(case):
    _assert_finding(case, _detect_case(case, INFRA_V5))


@pytest.mark.parametrize("line, category, rule", [
    ("[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] "
     "(0x00000062) returned from status @ kernel_channel.c:2874", "gpu_hardware", "infra.nvrm_reset_required"),
    ("failed       25  : rescheduling", "node_lost", "infra.sge_rescheduled"),
])
def test_version_5_knows_more_producer_texts_and_version_4_is_unchanged(line, category, rule):
    found = INFRA_V5.detect([line])
    assert (found.category, found.rule) == (category, rule) and found.retry_advice.startswith("retry")
    assert INFRA_V4.detect([line]) is None


# The sixth set, with version 6 (written from its misses under version 5, before any rule changed: 6/7 platform
# failures found, 7/8 look-alikes kept, hosts 1/2; with version 6 and the syslog host field: 7/7, 7/8, 2/2).
KNOWN_DEV6_MISSES = {
    "lookalike/xla-4831-rendezvous-save-connection-reset.log":
        "a rendezvous connection reset reads as the network's; that a slow xm.save held the other ranks is in the thread",
}


@pytest.mark.parametrize("case", [_expect(c, KNOWN_DEV6_MISSES) for c in _cases("dev", FIXTURES6)])
def test_sixth_dev_set_with_version_6(case):
    _assert_finding(case, _detect_case(case, INFRA_V6))


@pytest.mark.parametrize("line", [
    "Dec 17 16:03:58Z worker-7 start-worker 2024/12/17 16:03:58 GCP Metadata Service says termination is imminent",
    '{"action": "terminate", "time": "2026-11-28T06:00:00Z"} instance-action: terminate at 2026-11-28T06:02:00Z',
])
def test_version_6_reads_a_clouds_notice_that_it_takes_the_vm_back(line):
    found = INFRA_V6.detect([line])
    assert (found.category, found.rule) == ("preempted", "infra.termination_imminent")
    assert found.retry_advice.startswith("retry") and INFRA_V5.detect([line]) is None


def test_a_syslog_record_names_the_host_that_logged_it():
    from jobs_ingest.core.nodes import hosts_in
    notice = "Dec 17 16:03:58Z gpu-node-4 start-worker GCP Metadata Service says termination is imminent"
    assert hosts_in([notice], syslog_hosts=True) == ["gpu-node-4"] and hosts_in([notice]) == []   # version 6 only
    assert hosts_in(["Nov 28 06:01:02 dgx-12 nvidia-persistenced[812]: device 0000:07:00.0 failed to respond"],
                    syslog_hosts=True) == ["dgx-12"]
    assert INFRA_V6.detect([notice]).hosts == ("gpu-node-4",) and INFRA_V5.detect([notice]) is None


def test_version_9_reads_the_host_of_a_syslog_record_with_an_iso_timestamp():
    from jobs_ingest.core.infra import INFRA_V8, INFRA_V9
    from jobs_ingest.core.nodes import hosts_in
    xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
    for stamp in ("2024-05-02T11:00:00+0000", "2024-05-02T11:00:00.123456+00:00", "2024-05-02T11:00:00Z"):
        line = f"{stamp} dgx-a100-07 kernel: {xid}"
        assert INFRA_V9.detect([line]).hosts == ("dgx-a100-07",), stamp
        assert INFRA_V8.detect([line]).hosts == () and INFRA_V9.detect([line]).category == INFRA_V8.detect([line]).category
    # a program's own logging line has no 'T' and no zone: its level or logger is no host
    for line in ("2024-05-02 11:00:00,123 ERROR root: NCCL timeout on rank 3", "2024-05-02T11:00:00 WARNING trainer: x failed"):
        assert hosts_in([line], syslog_hosts=True, iso_syslog_hosts=True) == []


@pytest.mark.parametrize("lines, hosts", [
    # Ray's GCS (gcs_node_manager.cc), as a driver's warning and as the raylet's own line with no level word
    (["2023-03-03 05:15:30,774 WARNING worker.py:1866 -- The node with node id: 9426f44574cc and address: 10.130.0.113"
      " and node name: gpu-node-2 has been marked dead because the detector has missed too many heartbeats from it."],
     ("10.130.0.113", "gpu-node-2")),
    (["(raylet) The node with node id: 9426f and address: 10.130.0.113 and node name: 10.130.0.113 has been marked dead"
      " because the detector has missed too many heartbeats from it."], ("10.130.0.113",)),
    # the Kubernetes node lifecycle controller's event, and the scheduler's placement in the same `kubectl describe`
    (["  Normal   Scheduled     40m  default-scheduler  Successfully assigned ml/train-0 to gpu-node-3",
      "  Warning  NodeNotReady  2m   node-controller    Node is not ready"], ("gpu-node-3",)),
    (["Node gpu-node-3 status is now: NodeNotReady"], ("gpu-node-3",)),
    # Slurm's `scontrol show job` field beside a node failure, and Open MPI's launcher (help-orterun.txt)
    (["   BatchHost=gpu-07", "81           train.sh        gpu   NODE_FAIL      1:0"], ("gpu-07",)),
    (["NCCL WARN NET/IB : Got completion from peer 10.0.0.9<41234> with error 12, opcode 0",
      "mpirun noticed that process rank 3 with PID 4242 on node gpu-node-9 exited on signal 6 (Aborted)."],
     ("10.0.0.9", "gpu-node-9")),
])
def test_version_10_names_the_node_a_failure_report_or_a_scheduler_names(lines, hosts):
    from jobs_ingest.core.infra import INFRA_V9, INFRA_V10
    found, before = INFRA_V10.detect(lines), INFRA_V9.detect(lines)
    assert found is not None and found.retry_advice.startswith("retry") and set(found.hosts) == set(hosts)
    if before is not None:   # version 9 found the failure but not every node
        assert set(before.hosts) < set(hosts) and before.category == found.category


def test_version_10_reads_node_not_ready_as_node_loss_and_a_ready_node_as_nothing():
    from jobs_ingest.core.infra import INFRA_V9, INFRA_V10
    line = "  Warning  NodeNotReady  2m  node-controller  Node is not ready"
    assert (INFRA_V10.detect([line]).category, INFRA_V10.detect([line]).rule) == ("node_lost", "infra.k8s_node_not_ready")
    assert INFRA_V9.detect([line]) is None
    assert INFRA_V10.detect(["Node gpu-node-3 status is now: NodeReady"]) is None
    from jobs_ingest.core.nodes import hosts_in
    assert hosts_in(["Node gpu-node-3 status is now: NodeReady"], failed_node_reports=True) == []
    assert hosts_in(["Successfully assigned ml/train-0 to gpu-node-3"]) == []   # before version 10


def _heldout_figures(rules):
    cases = (_cases("heldout") + _cases("heldout", FIXTURES_HELDOUT2) + _cases("heldout", FIXTURES_HELDOUT3)
             + _cases("heldout", FIXTURES_HELDOUT4))
    infra_cases = [c for c in cases if c["expected_dimension"] == INFRASTRUCTURE]
    lookalikes = [c for c in cases if c["expected_dimension"] != INFRASTRUCTURE]
    findings = {c["file"]: _detect_case(c, rules) for c in cases}
    infra_ok = [c for c in infra_cases if findings[c["file"]] and findings[c["file"]].retry_advice.startswith("retry")]
    category_ok = [c for c in infra_ok if findings[c["file"]].category == c["expected_category_hint"]]
    kept = [c for c in lookalikes if findings[c["file"]] is None]
    with_hosts = [c for c in cases if c.get("hosts")]
    hosts_ok = [c for c in with_hosts if set(c["hosts"]) <= set(rules.hosts_in(_lines(c)))]
    return {
        "infrastructure_detected": (len(infra_ok), len(infra_cases)),
        "infrastructure_right_category": (len(category_ok), len(infra_cases)),
        "lookalikes_kept_as_program": (len(kept), len(lookalikes)),
        "cases_with_all_hosts_found": (len(hosts_ok), len(with_hosts)),
        "misses": sorted([c["file"] for c in infra_cases if c not in infra_ok]
                         + [c["file"] for c in lookalikes if c not in kept]
                         + [c["file"] + " (hosts)" for c in with_hosts if c not in hosts_ok]),
    }


# Measured once on 2026-11-23 with infra.INFRA_V1 (rules frozen before the run): 19/23 infrastructure
# failures detected, all 19 in the expected category; 8/9 look-alikes kept; all hosts found in 7/9 cases.
# Measured once on 2026-11-25 with infra.INFRA_V2 (frozen after the second dev set, before the run): 19/23
# detected, all in the expected category; 7/9 look-alikes kept; all hosts found in 7/9 cases.
# Measured once on 2026-11-25 with infra.INFRA_V3 (frozen after the third dev set, before the run): first slice
# unchanged, 19/23, 7/9, 7/9; the second held-out slice (tests/fixtures/infra_heldout2, 15 cases collected the same
# day, labelled before anything ran): 8/9 detected, all in the expected category, 6/6 look-alikes kept, hosts 1/1
# (version 2 gives the same). Both slices together: 27/32 detected, 13/15 kept, 8/10 with every host.
# Measured once on 2026-11-25 (session 10) with infra.INFRA_V3, then INFRA_V4 (frozen after the fourth dev set, before
# the run), on a third held-out slice (tests/fixtures/infra_heldout3, 10 cases collected that day by a helper who read
# no rule, labelled before anything ran): 3/4 detected, all in the expected category, 5/6 look-alikes kept, hosts 2/3,
# the same with both versions. All three slices: 30/36 detected, 18/21 kept, 10/13 with every host.
# Measured once with infra.INFRA_V5 (frozen after the fifth dev set): all three slices unchanged, 30/36, 18/21, 10/13.
# Measured once on 2026-11-28 (session 11) with INFRA_V5, then INFRA_V6 (frozen after the sixth dev set), on a fourth
# held-out slice (tests/fixtures/infra_heldout4, 4 cases, a helper who read no rule): 2/3 detected, 1/1 kept, no
# hosts, the same with both. All four slices: 32/39 detected, 19/22 kept, 10/13 with every host.
# Measured once on 2026-11-28 (session 12) with INFRA_V7 and INFRA_V8 (frozen after the producers' templates,
# tests/fixtures/infra_templates): all four slices unchanged, 32/39, 19/22, 10/13.
# Measured once on 2026-11-28 (session 15) with INFRA_V9 (frozen in c1a98bb; ISO-timestamp syslog hosts, from the tools'
# documentation): all four slices unchanged, 32/39, 19/22, 10/13.
# Measured once on 2026-11-28 (session 16) with INFRA_V10 (frozen in d90ba73; NodeNotReady, failed-node reports and
# scheduler placements, from the producers' sources): all four slices unchanged, 32/39, 19/22, 10/13.
# Measured once on 2026-11-28 (session 16) with INFRA_V11 (frozen in 361bd02; EREMOTEIO as storage): unchanged, 32/39,
# 19/22, 10/13.
# Measured once on 2026-11-28 (session 16) with INFRA_V12 (frozen in 249fd80; NVIDIA's texts for unusable GPUs, written
# from nvidia-smi's and the driver's messages, not from these): 33/39 detected (the first slice's returnn#1486, nvidia-smi's
# "Unable to determine the device handle"), 19/22 kept, 10/13 with every host.
# Measured once on 2026-11-29 (session 17) with INFRA_V13 (frozen in 74a6570; NCCL heartbeat monitor, Open MPI's lost
# daemon, Ray's NodeDiedError, from the producers' texts): unchanged, 33/39, 19/22, 10/13.
# Measured once on 2026-11-29 (session 17) with INFRA_V14 (frozen in f8d0e76; kubectl describe pod's Node: line):
# unchanged, 33/39, 19/22, 10/13.
# Measured once on 2026-11-29 (session 17) with INFRA_V15 (frozen in b09948c; a second round of producers' templates:
# AMD, Gaudi, device plugin, DCGM, Kubernetes schedulers, fabric, file systems): unchanged, 33/39, 19/22, 10/13.
# Measured once on 2026-11-29 (session 18) with INFRA_V16 (frozen in the commit that added it; nodes the launcher cannot
# reach over ssh, servers named by name, from OpenSSH's, pdsh's and the NFS client's sources): unchanged, 33/39, 19/22,
# 10/13.
# Below the issue's targets, so expected to fail until rules improve from new dev evidence (never from these).
@pytest.mark.xfail(reason="held-out figures below issue #15's targets (see comment above)", strict=False)
@pytest.mark.skipif(not _cases("heldout"), reason="no held-out fixtures")
def test_heldout_measurement_against_issue_targets():
    """The held-out slice, measured once and never tuned on: issue #15's targets (>= 90% in the right
    dimension with retry advice, >= 95% of look-alikes kept, every host found). Figures are printed."""
    figures = _heldout_figures(configs.tagging_config().infra_rules)
    print("\nHELD-OUT FIGURES", json.dumps(figures, indent=1))
    detected, infra_total = figures["infrastructure_detected"]
    kept, lookalike_total = figures["lookalikes_kept_as_program"]
    hosts_ok, hosts_total = figures["cases_with_all_hosts_found"]
    assert detected >= 0.9 * infra_total
    assert kept >= 0.95 * lookalike_total
    assert hosts_ok == hosts_total
