"""grouping:2026-11k (normaliser 12, reason clusters 7): a GPU's PCI address, a number glued to its unit, an ordinal and a
port after a host vary between runs as a bare number does, so they no longer split a signature or a reason cluster.
The released grouping:2026-11j is unchanged."""
import pytest

from jobs_ingest.core import analyse_text
from tests.devset import raised

OLD, NEW = "grouping:2026-11j", "grouping:2026-11k"



@pytest.mark.parametrize("one, other", [
    # the driver's Xid and nvidia-smi on another GPU slot of another node
    ("Nov 27 03:14:07 gpu-node-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4821, GPU has fallen off the bus.\n",
     "Nov 28 11:02:41 gpu-node-04 kernel: NVRM: Xid (PCI:0000:b1:00): 79, pid=977, GPU has fallen off the bus.\n"),
    ("Unable to determine the device handle for GPU00000000:3B:00.0: Unknown Error\n",
     "Unable to determine the device handle for GPU00000000:DB:00.0: Unknown Error\n"),
    # c10d's store timeout, set differently by two jobs
    (raised("torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0"),
     raised("torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg/0//cuda//0")),
    # a kubelet eviction on two nodes with different free memory
    ("Message: The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 8123456Ki.\n",
     "Message: The node was low on resource: ephemeral-storage. Threshold quantity: 20Gi, available: 912Ki.\n"),
    # NCCL's socket to a peer on another port
    ("gpu-node-17:48213:48590 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
     "gpu-node-02<56012>\n",
     "gpu-node-17:48213:48590 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
     "gpu-node-02<41231>\n"),
    # an ordinal
    (raised("RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output."),
     raised("RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 1st output.")),
])
def test_what_varies_between_runs_no_longer_splits_a_signature_or_a_cluster(one, other):
    new = [analyse_text(log, grouping_config=NEW) for log in (one, other)]
    old = [analyse_text(log, grouping_config=OLD) for log in (one, other)]
    assert new[0].cluster == new[1].cluster and new[0].fingerprint == new[1].fingerprint
    assert old[0].cluster != old[1].cluster or old[0].fingerprint != old[1].fingerprint   # released: split
    assert new[0].normaliser_version == "12" and old[0].normaliser_version == "11"


def test_what_names_the_failure_still_does():
    a, b = (analyse_text(raised(f"RuntimeError: expected scalar type {t} but found Float"), grouping_config=NEW)
            for t in ("Half", "Double"))
    assert a.fingerprint != b.fingerprint                      # a dtype is not a unit
    x, y = (analyse_text(f"NVRM: Xid (PCI:0000:3b:00): {xid}, pid=1, {text}\n", grouping_config=NEW)
            for xid, text in ((79, "GPU has fallen off the bus."), (48, "An uncorrectable double bit error (DBE)")))
    assert x.cluster != y.cluster
