"""Rules version 13 and infrastructure rules version 11 (tagging:2026-11v): a network that did not answer is said
plainly, not read as a missing path; a remote I/O error is storage. Messages are the C library's (glibc strerror) as
Python's OSError prints them, with made-up names; the released 2026-11u is unchanged."""
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
