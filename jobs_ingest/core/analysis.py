"""Analysis: what the pure core derives from one failed job's log (pipeline.py makes it), the
contract between the core and storage (jobs_ingest.models.Failure and Signature hold its fields)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Analysis:
    # The failure that terminated the job, as found in the log.
    found: bool                      # False when the log shows no failure (then category is unclassified)
    failure_line: str                # the line of the log that states the failure (rank prefixes kept)
    failure_line_number: int | None  # 1-based line number (see line_numbers_from); None if not from the log
    exception_type: str              # e.g. "torch.OutOfMemoryError", "FileNotFoundError"; "" if none
    message: str                     # the exception's message (first lines, capped)
    traceback: str                   # the traceback excerpt that led to it (capped lines), "" if none
    user_frame: str                  # innermost frame of the user's own code: "train.py:88 in main", or ""
    excerpt: str                     # log lines around the failure, for display
    excerpt_start_line: int          # 1-based line number of the excerpt's first line
    stage: str                       # initialization | data_preprocessing | training | evaluation | unknown
    # The automatic tag.
    category: str                    # a key of taxonomy.CATEGORIES
    dimension: str
    confidence: float                # 0..1
    rule: str                        # id of the rule that fired, e.g. "gpu_oom.cuda_out_of_memory"
    evidence: str                    # the line the rule matched
    retry_advice: str                # retry | retry_with_change | do_not_retry
    tagger_version: str
    tagging_config: str              # id of the configs.TaggingConfig that made the tag, e.g. "tagging:2026-11"
    # The signature.
    masked_message: str              # exception type + message with variable parts masked
    fingerprint: str                 # hex digest grouping identical failures
    normaliser_version: str
    grouping_config: str             # id of the configs.GroupingConfig that made the signature
    # What the training-side hook captured ("[jobtriage] capture={...}" in the log), bounded; {} if none.
    capture: dict = field(default_factory=dict)
    # Whose failure it is: "platform" for the infrastructure dimension (infra.py), "user" otherwise; and
    # the nodes the failure text names (only for platform faults: a program error accuses no node).
    fault: str = "user"
    suspect_nodes: tuple[str, ...] = ()
    # Byte offset of the line the line numbers count from: 0 (numbers in the whole log) unless the failure
    # lay deeper than logread.LINE_COUNT_BYTES, where counting every newline before it would cost a full read.
    line_numbers_from: int = 0
    # The reason-level cluster (cluster.py) beside the exact signature: key and masked reason; "" when the
    # grouping config has no clusters.
    cluster: str = ""
    cluster_message: str = ""
    # Learning from triage (judged.py): the judged signature whose category this failure took, or "".
    judged_like: str = ""
    # What besides the masked message told this signature apart (BASES): a signature grouped by the message alone
    # may gather failures of different programs, which one triage decision need not fit.
    signature_basis: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


# signature_basis values, from most to least specific about the code that failed.
BASES = {
    "user_code": "the innermost frame of the job's own code",
    "library_code": "the innermost frame of a library (no frame of the job's own code)",
    "program_output": "the lines the program printed just before the failure",
    "entrypoint": "the program a launcher reported as failed",
    "log_tail": "the log's last lines (no failure was parsed)",
    "platform_line": "the platform's failure line alone: the same platform fault on any job",
    "message": "the message alone: failures of different programs may share this signature",
}
