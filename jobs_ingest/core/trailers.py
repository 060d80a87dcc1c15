"""Lines that tools print after a job has failed, which never say why it failed (tagging:2026-11l).

A traceback or a crash is rarely a job log's last line. After it come:

- the experiment tracker's exit summary: Weights & Biases ("wandb: Waiting for W&B process to finish... (failed 1).",
  "wandb: Run summary:", "wandb: 🚀 View run ... at: ..."; not its errors, warnings or login prompt), MLflow
  ("🏃 View run ... at: ..."), Comet ("COMET INFO:");
- the launcher tearing the other workers down: torchrun's "Sending process N closing signal SIGTERM", DeepSpeed's
  "Killing subprocess N", srun's "task 0: Exited with exit code 1" (a code below 128: no signal), "_step_signal:
  Terminating StepId=...", "Job step aborted: Waiting up to 32 seconds for job step to finish.", and slurmstepd's
  "*** STEP N ON host CANCELLED AT time ***" without a "DUE TO" reason;
- exit-time warnings: PyTorch's "process group has NOT been destroyed" and CUDA's "driver shutting down";
- Hydra's "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."

Read as the log's last words, they hid the failure above them: a cut traceback was no longer "the end of the log",
"srun: error: ..." or "wandb: ..." right after a frame was read as the exception line. The program analysis reads
them as blank lines (one for one, so line numbers hold); the infrastructure rules and the host reading still see
them, and the log is shown as stored. A tracker's or launcher's ERROR line is not a trailer: it may be the failure.
"""
from __future__ import annotations

import re

from .tracebacks import strip_prefixes

_TRAILER = re.compile(
    # W&B's exit summary (not its errors, its warnings or its login prompt, which may be why the job failed)
    r"^wandb:\s*$|^wandb: (?:Waiting for W&B process to finish|Program (?:failed|ended) |Run (?:history|summary):"
    r"|\s+\S|[-\\|/] [\d.]+ [KMG]?B of [\d.]+ [KMG]?B |🚀 View run |⭐️ View project |View (?:run|project) "
    r"|Synced |Find logs at: |You can sync this run |wandb sync |Run data is saved locally )"
    r"|^(?:🏃 View run |🧪 View experiment at: )"                              # MLflow's end_run
    r"|^COMET (?:INFO|WARNING): "
    r"|Sending process \d+ closing signal SIG(?:TERM|INT|KILL)\b"             # torch.distributed.elastic
    r"|\bKilling subprocess \d+\s*$"                                           # DeepSpeed's launcher
    r"|^srun: error: \S+: tasks? [\d,\-\[\]]+: Exited with exit code (?:[1-9]|[1-9]\d|1[01]\d|12[0-7])\s*$"
    r"|^srun: (?:launch/slurm: _step_signal: Terminating StepId=|Job step aborted: Waiting up to \d+ seconds"
    r"|forcing job termination|got SIGCONT|Force Terminated )"
    r"|^slurmstepd: error: \*\*\* (?:STEP|JOB) [\w.+]+ ON \S+ CANCELLED AT \S+ \*\*\*\s*$"   # no DUE TO reason
    r"|process group has NOT been destroyed before"                            # torch >= 2.4 at exit
    r"|CUDA warning: driver shutting down"
    r"|^Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace\.")
_HINT = re.compile(r"wandb:|View |COMET |closing signal|Killing subprocess|srun: |slurmstepd: |NOT been destroyed"
                   r"|driver shutting down|HYDRA_FULL_ERROR")


def is_trailer(line: str) -> bool:
    """Whether a log line is a tool's after-failure chatter (_TRAILER), with launchers' prefixes allowed."""
    return bool(_HINT.search(line)) and bool(_TRAILER.search(strip_prefixes(line)[0]))


def quiet(lines: list[str]) -> list[str]:
    """The lines with trailers read as blank lines (one output line per input line); `lines` itself when there are
    none."""
    if not _HINT.search("\n".join(lines)):       # one scan: most logs have none
        return lines
    out = ["" if is_trailer(line) else line for line in lines]
    return out if out != lines else lines
