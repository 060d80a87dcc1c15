"""tagging:2026-11zd: infrastructure rules version 16. A node the launcher cannot reach over ssh is the node's failure,
to retry without it; a server or node named by name where only its address was read is the suspect. The texts are
OpenSSH's, pdsh's and the Linux NFS client's (tests/fixtures/infra_templates/launchers.tsv). 2026-11zc is unchanged."""
import pytest

from jobs_ingest.core import analyse_text

OLD, NEW = "tagging:2026-11zc", "tagging:2026-11zd"

# DeepSpeed's multi-node runner as pdsh prints it: ssh's own error under the target's prefix, then pdsh's summary.
PDSH_UNREACHABLE = """[2026-11-29 03:12:01,118] [INFO] [multinode_runner.py:80:get_cmd] Running on the following workers: worker-0,worker-1
[2026-11-29 03:12:01,119] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w worker-0,worker-1 export NCCL_DEBUG=WARN; cd /workspace; python -u -m deepspeed.launcher.launch ...
worker-1: ssh: connect to host worker-1 port 22: No route to host
pdsh@worker-0: worker-1: ssh exited with exit code 255
"""


def test_a_node_the_launcher_cannot_reach_is_lost_and_named():
    new, old = analyse_text(PDSH_UNREACHABLE, tagging_config=NEW), analyse_text(PDSH_UNREACHABLE, tagging_config=OLD)
    assert (new.category, new.rule, new.retry_advice, new.fault) == (
        "node_lost", "infra.ssh_node_unreachable", "retry_other_nodes", "platform")
    assert new.suspect_nodes == ("worker-1",) and new.tagger_version == "17+i16+ml8+l2"
    assert old.fault == "user" and old.suspect_nodes == ()


@pytest.mark.parametrize("reason", ["Connection timed out", "No route to host", "Host is down", "Network is unreachable",
                                    "Connection refused"])
def test_every_way_a_node_does_not_answer(reason):
    found = analyse_text(f"ssh: connect to host dgx-b07 port 2222: {reason}\n", tagging_config=NEW)
    assert (found.category, found.suspect_nodes) == ("node_lost", ("dgx-b07",))


@pytest.mark.parametrize("line", ["node2: ssh: Could not resolve hostname node2: Name or service not known",
                                  "worker-1: root@worker-1: Permission denied (publickey).",
                                  "worker-1: Host key verification failed."])
def test_what_the_jobs_set_up_causes_stays_the_programs(line):
    found = analyse_text(f"{line}\npdsh@worker-0: worker-1: ssh exited with exit code 255\n", tagging_config=NEW)
    assert found.fault == "user" and found.suspect_nodes == ()


def test_an_nfs_server_named_by_name_is_the_suspect_as_one_named_by_address_was():
    by_name = analyse_text("[ 8123.456] nfs: server nas01 not responding, still trying\n", tagging_config=NEW)
    by_address = analyse_text("[ 8123.456] nfs: server 10.1.2.50 not responding, still trying\n", tagging_config=NEW)
    assert (by_name.category, by_name.suspect_nodes) == ("storage", ("nas01",))
    assert by_address.suspect_nodes == ("10.1.2.50",)
    assert analyse_text("[ 8123.456] nfs: server nas01 not responding, still trying\n",
                        tagging_config=OLD).suspect_nodes == ()
