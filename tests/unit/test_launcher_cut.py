"""tagging:2026-11q/r: a log cut inside the launcher's own traceback is read by the child's exit it reported, and
CPython's CalledProcessError for a child killed by a signal is read as that signal; from 2026-11r, only where the
error printed before the cut says nothing."""
import pytest

from bench.eval_collectors import all_ranks
from jobs_ingest.core.pipeline import analyse_text
from tests.devset import devset_cases

OLD, FIRST, NEW = "tagging:2026-11p", "tagging:2026-11q", "tagging:2026-11r"

ELASTIC_CUT = """Start training for 300 epochs
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 106507 closing signal SIGTERM
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {code}) local_rank: 1 (pid: 106508) of binary: /usr/bin/python3
Traceback (most recent call last):
  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code
    exec(code, run_globals)
  File "/usr/lib/python3.10/site-packages/torch/distributed/run.py", line 71
"""

CALLED = """Traceback (most recent call last):
  File "/opt/conda/lib/python3.6/runpy.py", line 193, in _run_module_as_main
    "__main__", mod_spec)
  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/launch.py", line 231, in main
    cmd=process.args)
subprocess.CalledProcessError: Command '['/opt/conda/bin/python', '-u', 'train.py', '--local_rank=0']' died with <Signals.{name}: {number}>.
"""


@pytest.mark.parametrize("log, category, rule", [
    (ELASTIC_CUT.format(code=-9), "cpu_oom", "cpu_oom.signal_sigkill.truncated"),
    (ELASTIC_CUT.format(code=-11), "unclassified", "unclassified.signal_sigsegv.truncated"),
    (ELASTIC_CUT.format(code=1), "unclassified", "unclassified.child_exit_code.truncated"),
    (CALLED.format(name="SIGKILL", number=9), "cpu_oom", "cpu_oom.signal_sigkill"),
    (CALLED.format(name="SIGSEGV", number=11), "unclassified", "unclassified.signal_sigsegv"),
])
def test_the_childs_reported_exit_reads_a_launcher_cut_short(log, category, rule):
    new, old = analyse_text(log, tagging_config=NEW), analyse_text(log, tagging_config=OLD)
    assert (new.category, new.rule) == (category, rule)
    assert old.rule in ("unclassified.truncated_traceback", "unclassified.no_rule")    # 2026-11p is released


def test_a_cut_traceback_with_the_programs_own_frame_is_still_read_as_the_programs():
    log = ELASTIC_CUT.format(code=-9).replace(
        '  File "/usr/lib/python3.10/site-packages/torch/distributed/run.py", line 71\n',
        '  File "/home/u/train.py", line 40, in main\n    loss = model(batch)\n')
    assert analyse_text(log, tagging_config=NEW).rule == analyse_text(log, tagging_config=OLD).rule


def test_a_launchers_traceback_with_no_reported_exit_keeps_the_cut_reading():
    log = "\n".join(ELASTIC_CUT.format(code=-9).splitlines()[3:]) + "\n"
    assert analyse_text(log, tagging_config=NEW).rule == analyse_text(log, tagging_config=OLD).rule



def test_the_childs_own_error_before_the_report_is_read_first():
    # A development log whose error comes well before the launcher's report and its cut traceback, printed by four
    # ranks at once: 2026-11q read the bare exit code there; 2026-11r reads the error, as 2026-11p did.
    case = devset_cases("iss-0001")["iss-0001"]
    log = all_ranks(case["log"], 4, 0)
    assert analyse_text(log, tagging_config=NEW).category == analyse_text(log, tagging_config=OLD).category == case["category"]
    assert analyse_text(log, tagging_config=FIRST).rule == "unclassified.child_exit_code.truncated"   # 2026-11q, released
