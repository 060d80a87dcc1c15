"""grouping:2026-11m, reason clusters version 9: a log record's header no longer splits one reason, the driver's Xid
lines are keyed by their code, and more reasons are gathered in their producers' words. grouping:2026-11l is
unchanged, and so are the signatures (only their salt is new)."""
import pytest

from jobs_ingest.core import analyse_text

OLD, NEW = "grouping:2026-11l", "grouping:2026-11m"


def cluster(log: str, config: str = NEW) -> str:
    return analyse_text(log, grouping_config=config).cluster_message


# One NCCL watchdog timeout as PyTorch 1.13, 2.2 and 2.4 log it (c10's record headers, rank and process-group tags,
# the watchdog thread's wrapper), for different collectives.
WATCHDOG = [
    "[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, "
    "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800532 milliseconds before timing out.",
    "[rank3]:[E1118 03:12:44.123456 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=12, OpType=ALLGATHER, NumelIn=1, NumelOut=8, Timeout(ms)=600000) ran for 600123 milliseconds "
    "before timing out.",
    "[rank0]:[E1006 21:02:11.000001 ProcessGroupNCCL.cpp:1515] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group "
    "watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=3, OpType=BROADCAST, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600010 milliseconds "
    "before timing out.",
]


def test_one_nccl_watchdog_timeout_across_pytorch_versions_is_one_cluster():
    new = {cluster(f"step 900\n{line}\n") for line in WATCHDOG}
    assert new == {"NCCL watchdog: collective operation timeout"}
    assert len({cluster(f"step 900\n{line}\n", OLD) for line in WATCHDOG}) == 3


def test_xid_lines_are_keyed_by_their_code():
    line = "{mon} 18 03:12:44 {host} kernel: NVRM: Xid (PCI:0000:{slot}:00): {xid}, pid={pid}, name=python, {text}\n"
    fallen = [line.format(mon=m, host=h, slot=s, xid=79, pid=p, text="GPU has fallen off the bus.")
              for m, h, s, p in (("Nov", "gpu-07", "3b", 1234), ("Oct", "node12", "86", 99))]
    ecc = line.format(mon="Nov", host="gpu-07", slot="3b", xid=48, pid=1, text="An uncorrectable double bit error")
    assert {cluster(f"step 10\n{x}") for x in fallen} == {"GPU: Xid 79"}
    assert cluster(f"step 10\n{ecc}") == "GPU: Xid 48"


# Each group: one reason in several producers' words; no two groups share a cluster.
REASONS = {
    "tensor shapes do not match": [
        "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [3, 200, 224] "
        "at entry 5",
        "RuntimeError: The expanded size of the tensor (3) must match the existing size (4) at non-singleton "
        "dimension 1.  Target sizes: [2, 3].  Tensor sizes: [2, 4]",
        "RuntimeError: input.size(-1) must be equal to input_size. Expected 10, got 20",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Can not squeeze dim[1], expected a dimension "
        "of 1, got 3 for 'Squeeze' (op: 'Squeeze') with input shapes: [32,3].",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)",
    ],
    "checkpoint does not match the model": [
        'ValueError: Trying to set a tensor of shape torch.Size([32000, 4096]) in "weight" (which has shape '
        "torch.Size([32001, 4096])), this looks incorrect.",
        "ValueError: Layer count mismatch when loading weights from file. Model expected 12 layers, found 14 saved "
        "layers.",
        "RuntimeError: Error(s) in loading state_dict for ResNet:\n\tsize mismatch for fc.weight: copying a param "
        "with shape torch.Size([10, 512]) from checkpoint",
    ],
    "a file that cannot be unpickled": [
        "_pickle.UnpicklingError: invalid load key, '<'.",
        "EOFError: Ran out of input",
        "_pickle.UnpicklingError: pickle data was truncated",
        "_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` set to "
        "`False` will likely succeed",
    ],
    "checkpoint file is corrupt or truncated": [
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory",
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
        "OSError: Unable to open file (file signature not found)",
    ],
    "CUDA error: device-side assert triggered": [
        "RuntimeError: CUDA error: device-side assert triggered",
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [193,0,0], thread: "
        "[96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
    ],
    "native crash: SIGSEGV (segmentation fault)": [
        "Segmentation fault (core dumped)",
        "Speicherzugriffsfehler (Speicherabzug geschrieben)",
        "Erreur de segmentation (core dumped)",
    ],
}


def _log(line: str) -> str:
    if "Error" in line.split(":")[0] or line.startswith(("_pickle", "tensorflow", "safetensors")):
        return f'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    main()\n{line}\n'
    return f"epoch 1\n{line}\n"


@pytest.mark.parametrize("reason", REASONS)
def test_one_reason_in_its_producers_words_is_one_cluster(reason):
    assert {cluster(_log(line)) for line in REASONS[reason]} == {reason}


def test_a_bracket_that_is_the_reason_stays_and_a_full_stop_goes():
    disk = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nOSError: [Errno 28] No space left on device\n"
    assert cluster(disk) == "[Errno <NUM>] No space left on device"
    names = ["NameError: name 'x' is not defined", "NameError: name 'y' is not defined."]
    assert {cluster(_log(line)) for line in names} == {"name <Q> is not defined"}


def test_signatures_keep_their_grouping_and_only_the_salt_is_new():
    log = _log(REASONS["a file that cannot be unpickled"][0])
    old, new = analyse_text(log, grouping_config=OLD), analyse_text(log, grouping_config=NEW)
    assert (old.masked_message, old.normaliser_version, new.normaliser_version) == (new.masked_message, "13", "14")
    assert old.fingerprint != new.fingerprint
