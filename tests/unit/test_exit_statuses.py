"""grouping:2026-11j: an exit status, a signal number or an NTSTATUS code names how a process ended, so it is kept in
the signature; reason clusters version 6 no longer read a library missing, said in prose, as a missing path."""
from jobs_ingest.core import analyse_text
from jobs_ingest.core.normalise import mask, mask_keeping_statuses

OLD, NEW = "grouping:2026-11i", "grouping:2026-11j"


def signatures(logs, config):
    return [analyse_text(log, grouping_config=config).fingerprint for log in logs]


def test_two_windows_crash_codes_get_two_signatures():
    logs = [f"loading model\nProcess finished with exit code {code}\n"
            for code in ("-1073741819 (0xC0000005)", "-1073740940 (0xC0000374)")]
    old, new = signatures(logs, OLD), signatures(logs, NEW)
    assert old[0] == old[1] and new[0] != new[1]


def test_a_wrappers_status_is_kept_and_the_pid_is_not():
    def wrapper(status, pid):
        return (f"Traceback (most recent call last):\n  File \"/opt/app/main.py\", line 40, in <module>\n    run()\n"
                f"RuntimeError: Step 1 exited with non-zero status {status} (pid {pid})\n")
    one, command_not_found = signatures([wrapper(1, 11), wrapper(127, 11)], NEW)
    assert one != command_not_found
    assert len(set(signatures([wrapper(1, 11), wrapper(1, 98765)], NEW))) == 1
    assert len(set(signatures([wrapper(1, 11), wrapper(127, 11)], OLD))) == 1


def test_statuses_survive_masking_and_other_numbers_do_not():
    assert mask_keeping_statuses("exitcode  : -9 (pid: 78970)") == "exitcode : <STATUS_m9> (pid: <NUM>)"
    assert mask_keeping_statuses("killed by signal 11 at step 1200") == "killed by signal <STATUS_11> at step <NUM>"
    assert mask_keeping_statuses("returned non-zero exit status 2.") == "returned non-zero exit status <STATUS_2>."
    text = "epoch 3 step 1200 loss 0.7 on node-12"
    assert mask_keeping_statuses(text) == mask(text)


def test_the_stored_masked_message_shows_the_status():
    log = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nRuntimeError: Step 1 exited with non-zero status 127\n"
    assert analyse_text(log, grouping_config=NEW).masked_message.endswith("non-zero status <STATUS_127>")


def test_a_library_missing_in_prose_is_not_a_missing_path_in_version_6():
    def cluster(message, config):
        return analyse_text(f"OSError: {message}\n", grouping_config=config).cluster_message
    library, dataset = "Could not find the library file libcudart.so.11.0", "Could not find file data/train.json"
    assert cluster(library, OLD) == cluster(dataset, OLD) == "path not found: No such file or directory (ENOENT)"
    assert cluster(dataset, NEW) == "path not found: No such file or directory (ENOENT)"
    assert cluster(library, NEW) != cluster(dataset, NEW)
