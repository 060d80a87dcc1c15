"""tagging:2026-11z: rules version 16 (written from tests/fixtures/program_templates, tested there) and infrastructure
rules version 14: the node `kubectl describe pod` names is where the pod ran. The released 2026-11y is unchanged."""
from jobs_ingest.core import analyse_text

OLD, NEW = "tagging:2026-11y", "tagging:2026-11z"

DESCRIBED_POD = """Name:             trainer-0
Namespace:        ml
Node:             gpu-node-07/10.1.2.7
Start Time:       Fri, 27 Nov 2026 03:14:07 +0000
Node-Selectors:   nvidia.com/gpu.present=true
Events:
  Type     Reason        Age   From             Message
  ----     ------        ----  ----             -------
  Warning  NodeNotReady  3m    node-controller  Node is not ready
"""


def test_the_node_a_described_pod_ran_on_is_the_suspect():
    new, old = analyse_text(DESCRIBED_POD, tagging_config=NEW), analyse_text(DESCRIBED_POD, tagging_config=OLD)
    assert (new.category, new.suspect_nodes, new.tagger_version) == ("node_lost", ("gpu-node-07",), "16+i14+ml7+l2")
    assert (old.category, old.suspect_nodes) == ("node_lost", ())


def test_an_unscheduled_pod_names_no_node_and_a_program_failure_accuses_none():
    pending = DESCRIBED_POD.replace("gpu-node-07/10.1.2.7", "<none>")
    assert analyse_text(pending, tagging_config=NEW).suspect_nodes == ()
    program = (DESCRIBED_POD.split("Events:")[0]
               + "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\nKeyError: 'lr'\n")
    found = analyse_text(program, tagging_config=NEW)
    assert (found.category, found.suspect_nodes) == ("key_not_found", ())


def test_a_yaml_error_naming_its_file_is_no_missing_path():
    log = ('Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    cfg = yaml.safe_load(f)\n'
           'yaml.scanner.ScannerError: while scanning a simple key in "configs/train.yaml", line 14, column 1 could not '
           "find expected ':' in \"configs/train.yaml\", line 15, column 1\n")
    assert analyse_text(log, tagging_config=NEW).category == "corrupt_data"
    assert analyse_text(log, tagging_config=OLD).category == "path_not_found"   # version 15 read "could not find" a path
