"""The failure taxonomy of Zhang et al., ICSE 2020 (see docs/taxonomy.md), as plain data.

Ids are stable: they are stored in PostgreSQL and Elasticsearch and used in URLs.
"""
from __future__ import annotations

from . import infra
from .category import DO_NOT_RETRY, RETRY, RETRY_WITH_CHANGE, Category  # noqa: F401  (re-exported)

DL_SPECIFIC = "dl_specific"
EXECUTION_ENVIRONMENT = "execution_environment"
GENERAL_CODE_ERROR = "general_code_error"
DATA = "data"
UNCLASSIFIED = "unclassified"

DIMENSIONS: dict[str, str] = {
    EXECUTION_ENVIRONMENT: "Execution environment",
    GENERAL_CODE_ERROR: "General code error",
    DL_SPECIFIC: "Deep-learning specific",
    DATA: "Data",
    infra.INFRASTRUCTURE: infra.DIMENSION_NAME,   # not in the study: the platform's failures (infra.py)
    UNCLASSIFIED: "Unclassified",
}

RETRY_ADVICE = {
    RETRY: "Retry: the failure may not recur",
    RETRY_WITH_CHANGE: "Retry only with a change",
    DO_NOT_RETRY: "Do not retry: it will fail the same way",
    **infra.RETRY_ADVICE,
}


_C = Category
CATEGORIES: dict[str, Category] = {c.id: c for c in [
    _C("gpu_oom", "GPU Out of Memory", DL_SPECIFIC, 434, RETRY_WITH_CHANGE, "inappropriate_model_params"),
    _C("cpu_oom", "CPU Out of Memory", DL_SPECIFIC, 15, RETRY_WITH_CHANGE, "inappropriate_model_params"),
    _C("framework_api_misuse", "Framework API Misuse", DL_SPECIFIC, 138, DO_NOT_RETRY, "api_misunderstanding"),
    _C("tensor_mismatch", "Tensor Mismatch", DL_SPECIFIC, 57, DO_NOT_RETRY, "inappropriate_model_params"),
    _C("loss_nan", "Loss NaN", DL_SPECIFIC, 24, RETRY, "inappropriate_model_params"),
    _C("path_not_found", "Path Not Found", EXECUTION_ENVIRONMENT, 1954, DO_NOT_RETRY, "environment_difference"),
    _C("library_not_found", "Library Not Found", EXECUTION_ENVIRONMENT, 309, DO_NOT_RETRY, "environment_difference"),
    _C("permission_denied", "Permission Denied", EXECUTION_ENVIRONMENT, 116, DO_NOT_RETRY, "environment_difference"),
    _C("illegal_argument", "Illegal Argument", GENERAL_CODE_ERROR, 722, DO_NOT_RETRY, "common_programming_error"),
    _C("type_mismatch", "Type Mismatch", GENERAL_CODE_ERROR, 566, DO_NOT_RETRY, "common_programming_error"),
    _C("key_not_found", "Key Not Found", GENERAL_CODE_ERROR, 154, DO_NOT_RETRY, "common_programming_error"),
    _C("null_reference", "Null Reference", GENERAL_CODE_ERROR, 92, DO_NOT_RETRY, "common_programming_error"),
    _C("attribute_not_found", "Attribute Not Found", GENERAL_CODE_ERROR, 81, DO_NOT_RETRY, "common_programming_error"),
    _C("syntax_error", "Syntax Error", GENERAL_CODE_ERROR, 64, DO_NOT_RETRY, "common_programming_error"),
    _C("illegal_index", "Illegal Index", GENERAL_CODE_ERROR, 64, DO_NOT_RETRY, "exceptional_data"),
    _C("undefined_variable", "Undefined Variable", GENERAL_CODE_ERROR, 59, DO_NOT_RETRY, "common_programming_error"),
    _C("not_implemented", "Not Implemented", GENERAL_CODE_ERROR, 7, DO_NOT_RETRY, "common_programming_error"),
    _C("division_by_zero", "Division by Zero", GENERAL_CODE_ERROR, 3, DO_NOT_RETRY, "common_programming_error"),
    _C("corrupt_data", "Corrupt Data", DATA, 90, DO_NOT_RETRY, "exceptional_data"),
    _C("unexpected_encoding", "Unexpected Encoding", DATA, 11, DO_NOT_RETRY, "exceptional_data"),
    # Not in the study: the platform's failures (infra.py), and the product's own answer when no rule
    # explains the failure.
    *infra.CATEGORIES.values(),
    _C("unclassified", "Unclassified", UNCLASSIFIED, 0, RETRY, ""),
]}

ROOT_CAUSES: dict[str, str] = {
    "environment_difference": "Differences between local and platform environment",
    "inappropriate_model_params": "Inappropriate model parameters or structure",
    "api_misunderstanding": "Misunderstanding of a framework or library API",
    "exceptional_data": "Exceptional data",
    "common_programming_error": "Common programming error",
    **infra.ROOT_CAUSES,
}

STAGES: dict[str, str] = {
    "initialization": "Initialization",
    "data_preprocessing": "Data preprocessing",
    "training": "Training",
    "evaluation": "Evaluation",
    "unknown": "Unknown",
}


def fault(category_id: str) -> str:
    """"platform" for the infrastructure dimension, "user" for the study's categories and unclassified."""
    return infra.PLATFORM if infra.is_platform_fault(category_id) else infra.USER


def category(category_id: str) -> Category:
    """The category with this id; unknown ids raise KeyError."""
    return CATEGORIES[category_id]


# Why the rules said `unclassified`, by rule id: the reader of a failure should not have to know the rule's source.
_WHY_UNCLASSIFIED: dict[str, str] = {
    "unclassified.no_rule": "no rule knows this exception and the learned model was not sure enough",
    "unclassified.no_failure_in_log": "the log shows no failure: no exception, crash or kill was found",
    "unclassified.native_crash": "a native crash (segmentation fault, abort, bus error) without a readable cause",
    "unclassified.truncated_traceback": "the log ends inside a traceback, before the exception line",
    "unclassified.truncated_launcher": "the log ends inside the launcher's report, before the cause",
    "unclassified.child_exit_code": "the launcher reports only a child's exit code; the child's own error is not in the log",
    "unclassified.tf_root_error": "TensorFlow's root error wraps no readable error",
    "unclassified.recursion_limit": "Python's recursion limit: none of the 20 categories fits",
    "unclassified.cuda_illegal_memory_access": "a GPU kernel read or wrote outside its memory; without a device-side "
                                               "assert the log cannot say why",
    "unclassified.cudnn_no_algorithm": "cuDNN found no algorithm that runs: GPU memory or a cuDNN / driver mismatch, "
                                       "which the log cannot tell apart",
    "unclassified.network_unreachable": "a network or host that did not answer; the line does not say whether the "
                                        "platform's network or the job's set-up failed",
    "unclassified.connection_failed": "a connection refused, dropped or a name that did not resolve; the line does not "
                                      "say whose end failed",
    "unclassified.read_timed_out": "an HTTP read that timed out, from a host not known as an object store",
    "unclassified.address_in_use": "a port or address already in use on this host, usually by another run",
    "unclassified.os_resource_limit": "a per-process or system limit (open files, threads, buffers)",
    "unclassified.os_errno": "an operating-system error whose errno names no path",
    "unclassified.hdf5_file_locked": "another process holds the HDF5 file's lock",
}


def why_unclassified(rule: str) -> str:
    """In plain words, why the rules left a failure unclassified ("" for a rule that gave a category)."""
    if rule.startswith("unclassified.signal_"):
        return f"killed by {rule.removeprefix('unclassified.signal_').upper()} with no error of its own in the log"
    for suffix in (".unparsed_tail", ".truncated", ".context"):   # where in the log the rule read its text
        rule = rule.removesuffix(suffix)
    return _WHY_UNCLASSIFIED.get(rule, "")
