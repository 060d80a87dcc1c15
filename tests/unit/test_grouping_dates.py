"""grouping:2026-11l: the date of a timestamp varies between runs as its time does. One NCCL timeout, one Xid or one
eviction on another day is the same signature and reason cluster; the failure's own words still tell failures apart.
grouping:2026-11k is unchanged."""
import pytest

from jobs_ingest.core import analyse_text
from jobs_ingest.core.normalise import mask_dated

OLD, NEW = "grouping:2026-11k", "grouping:2026-11l"

LOGS = {
    "c10d": "step 900\n[rank3]:[E{mm}{dd} 03:12:44.123456 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for 600123 milliseconds before timing out.\n",
    "syslog": "step 10\n{mon} {dd} 03:12:44 gpu-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off "
              "the bus.\n",
    "kubelet": "step 1\n{mon} {dd}, 2026 03:12:44 Warning  Evicted  pod/trainer-0  The node was low on resource: memory.\n",
    "glog before a crash": "I{mm}{dd} 03:12:44.123456 140245 trainer.cc:88] loading shard 7\nSegmentation fault (core "
                           "dumped)\n",
}


@pytest.mark.parametrize("name", LOGS)
def test_another_day_is_the_same_signature_and_cluster(name):
    day = {c: analyse_text(LOGS[name].format(mon="Nov", mm="11", dd="18"), grouping_config=c) for c in (OLD, NEW)}
    other = {c: analyse_text(LOGS[name].format(mon="Oct", mm="10", dd="06"), grouping_config=c) for c in (OLD, NEW)}
    assert (day[NEW].fingerprint, day[NEW].cluster) == (other[NEW].fingerprint, other[NEW].cluster)
    assert day[NEW].normaliser_version == "13"
    if name != "glog before a crash":   # 2026-11k split these by day or month (the lines before a crash were masked)
        assert day[OLD].fingerprint != other[OLD].fingerprint


def test_dates_fold_only_into_a_time_and_words_still_count():
    assert mask_dated("E1118 03:12:44.123456 140245 foo.cc:88] x") == mask_dated("W1006 21:02:11.000001 9 foo.cc:88] x")
    assert mask_dated("Wed Nov 18 03:12:44 2026 job ended") == mask_dated("Tue Oct 6 21:02:11 2026 job ended")
    assert mask_dated("E1118 is an error code") == "E1118 is an error code"            # no time after it: kept
    assert mask_dated("the Nov release") == "the Nov release"
    nccl = analyse_text(LOGS["c10d"].format(mon="Nov", mm="11", dd="18"), grouping_config=NEW)
    xid = analyse_text(LOGS["syslog"].format(mon="Nov", dd="18"), grouping_config=NEW)
    assert nccl.fingerprint != xid.fingerprint and nccl.cluster != xid.cluster
