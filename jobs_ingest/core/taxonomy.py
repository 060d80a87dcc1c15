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
