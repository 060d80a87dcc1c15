#!/usr/bin/env python3
"""Build bench/devset/notebook_crashes.jsonl from ../shared/data/ml-notebook-crashes/crashes_labeled_746.jsonl.

Maps the study's crash labels (Wang et al., TSE 2025; JunoBench_construct, MIT licence) to the 20 categories of
Zhang et al. (ICSE 2020).  The rules and every exception are documented in notebook_crashes_mapping.md; this
script is the executable form of that document.  Deterministic, standard library only.

    python bench/devset/build_notebook_crashes.py [--src PATH] [--out PATH] [--report]
"""
from __future__ import annotations

import argparse
import collections
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SRC = HERE.parents[2] / "shared" / "data" / "ml-notebook-crashes" / "crashes_labeled_746.jsonl"
if not DEFAULT_SRC.exists():  # work tree laid out as /work/main next to /work/shared
    DEFAULT_SRC = HERE.parents[1].parent / "shared" / "data" / "ml-notebook-crashes" / "crashes_labeled_746.jsonl"

# ---------------------------------------------------------------------------------------------------------
# 1. Default category for each of the study's 44 refined crash types ("label_refined_exp_type").
#    None = no default: the row is decided by the ename/evalue rules (step 2) or a per-row decision (step 3).
REFINED_DEFAULT: dict[str, str | None] = {
    "variable not found": "undefined_variable",
    "function not found": "undefined_variable",
    "class not found": "undefined_variable",
    "nameerror": "undefined_variable",
    "module not found": None,  # ModuleNotFoundError -> library_not_found, NameError ("name 'np'") -> undefined_variable
    "importerror": "library_not_found",
    "filenotfounderror": "path_not_found",
    "file permission": "permission_denied",
    "attributeerror": "attribute_not_found",  # NoneType receivers -> null_reference (step 2)
    "keyerror": "key_not_found",
    "tensor shape mismatch": "tensor_mismatch",
    "unsupported broadcast": "tensor_mismatch",
    "valueerror - feature name mismatch": None,
    "valueerror - data value violation": None,
    "valueerror - data range mismatch": None,
    "valueerror": None,
    "wrong arguments to API": None,
    "cast exception": "type_mismatch",
    "typeerror": "type_mismatch",
    "typeerror-op": "type_mismatch",
    "typeerror-notcallable": "type_mismatch",
    "typeerror-notiterable": "type_mismatch",
    "typeerror-notsubscriptable": "type_mismatch",
    "typeerror-unhashable": "type_mismatch",
    "indexerror-1d": "illegal_index",
    "indexerror-nd": "illegal_index",
    "out of memory (OOM)": None,  # GPU wording -> gpu_oom, MemoryError -> cpu_oom
    "runtimeerror": None,
    "syntaxerror": "syntax_error",
    "indentationerror": "syntax_error",
    "zerodivisionerror": "division_by_zero",
    "jsondecodeerror": "corrupt_data",
    "incompleteparseerror": "corrupt_data",
    "unsupported file type (read file)": None,
    "assertionerror": "illegal_argument",  # bare AssertionError on a value
    "initialization error (call mul-times, wrong order)": "framework_api_misuse",
    "environment setup": None,
    # No counterpart among the 20 categories (network/service failures, disk full, file already exists,
    # missing GPU device): excluded.
    "requesterror": "EXCLUDE",
    "out of space (disk)": "EXCLUDE",
    "fileexistserror": "EXCLUDE",
    "systemerror": "EXCLUDE",
    "executablenotfound": "library_not_found",
    "notfounderror": "framework_api_misuse",
    "unknown": "illegal_argument",
}

# ---------------------------------------------------------------------------------------------------------
# 2. Rules on the exception (ename) and message (evalue), applied when step 3 has no decision for the row.
NONE_RE = re.compile(r"NoneType", re.I)


def rule_category(r: dict) -> tuple[str | None, str]:
    en, ev, ref = r["ename"].lower(), r["evalue"], r["label_refined_exp_type"]
    tb = r["traceback_text"]
    # None dereferences, whatever the study's refined type (taxonomy: null_reference)
    if en == "attributeerror" and re.search(r"NoneType' object has no attribute", ev):
        return "null_reference", "AttributeError on None"
    if en == "typeerror" and NONE_RE.search(ev):
        return "null_reference", "TypeError naming NoneType"
    if en in ("modulenotfounderror", "importerror"):
        return "library_not_found", "ModuleNotFoundError/ImportError"
    if en == "nameerror" or en == "unboundlocalerror":
        return "undefined_variable", "NameError/UnboundLocalError (runtime error, whatever the cause)"
    if en == "unicodedecodeerror":
        return "unexpected_encoding", "UnicodeDecodeError"
    if en == "zerodivisionerror":
        return "division_by_zero", "ZeroDivisionError"
    if en in ("syntaxerror", "indentationerror"):
        return "syntax_error", "SyntaxError"
    if en == "keyerror":
        return "key_not_found", "KeyError"
    if en in ("indexerror", "axiserror", "indexingerror"):
        return "illegal_index", "IndexError/AxisError"
    if "Error(s) in loading state_dict" in ev:
        return "tensor_mismatch", "state_dict does not match the model"
    if en in ("resourceexhaustederror", "outofmemoryerror") or "CUDA out of memory" in ev:
        if re.search(r"GPU|CUDA", ev + tb[-3000:]):
            return "gpu_oom", "OOM on a GPU device"
    if en == "memoryerror":
        return "cpu_oom", "MemoryError (host memory)"
    if en in ("oserror", "permissionerror") and re.search(r"Errno (13|30)|Read-only file system|Permission denied", ev):
        return "permission_denied", "EACCES/EROFS"
    if en in ("filenotfounderror",):
        return "path_not_found", "FileNotFoundError"
    if en == "typeerror" and ref.startswith(("typeerror", "cast exception", "wrong arguments")):
        return "type_mismatch", "TypeError"
    return None, ""


# ---------------------------------------------------------------------------------------------------------
# 3. Per-row decisions (row index in crashes_labeled_746.jsonl, 0-based) with the reason.  These override
#    steps 1-2; "EXCLUDE" drops the row.
ROW: dict[int, tuple[str, str]] = {
    # wrong arguments to API (73): TypeError -> type_mismatch, ValueError -> illegal_argument, except:
    100: ("EXCLUDE", "BrokenProcessPool (task failed to un-serialize): no counterpart"),
    129: ("tensor_mismatch", "state_dict Missing/Unexpected key(s)"),
    131: ("tensor_mismatch", "state_dict mismatch"),
    164: ("tensor_mismatch", "state_dict mismatch"),
    745: ("tensor_mismatch", "state_dict mismatch"),
    138: ("tensor_mismatch", "TypeError 'Invalid shape () for image data': input of the wrong shape"),
    514: ("tensor_mismatch", "TypeError 'Invalid shape () for image data': input of the wrong shape"),
    498: ("tensor_mismatch", "TypeError 'Input z must be 2D, not 3D': wrong shape"),
    151: ("framework_api_misuse", "TF resource on CPU accessed from TPU (tensors on different devices)"),
    163: ("illegal_argument", "CatBoostError: loss is not supported"),
    181: ("path_not_found", "IsADirectoryError: a directory where a file was expected (wrong path)"),
    195: ("attribute_not_found", "AttributeError on a real object"),
    204: ("attribute_not_found", "AttributeError on a real object"),
    289: ("illegal_index", "InvalidArgumentError: indices[0,0] = -2147483648 is not in [0, 1000) (embedding index out of range)"),
    329: ("tensor_mismatch", "Keras layer call on an input of the wrong shape (AveragePooling1D on (None,1,6))"),
    459: ("illegal_argument", "ParamValidationError: Parameter validation failed"),
    463: ("illegal_argument", "ValueError: Can't load save_path when it is None (argument)"),
    470: ("illegal_argument", "ExecuteError: Parameters are not valid"),
    472: ("EXCLUDE", "RuntimeError from LaTeX rendering (TeX syntax of a plot label): no counterpart"),
    492: ("illegal_argument", "PlotlyError: missing file_id/url argument"),
    500: ("EXCLUDE", "SystemError: TF_Run returned a result with an error set (no root error visible)"),
    502: ("illegal_argument", "RuntimeError: invalid device string"),
    503: ("illegal_argument", "error: (nmu==1||nmu==n) failed: argument check"),
    509: ("framework_api_misuse", "tensors on different devices (cuda vs cpu)"),
    536: ("illegal_argument", "AssertionError on an argument value"),
    544: ("tensor_mismatch", "OpenCV: Sizes of input arguments do not match"),
    552: ("illegal_argument", "OSError [Errno 22] Invalid argument (file name)"),
    652: ("illegal_index", "IndexError: index 1 is out of bounds"),
    # module not found: Py4JJavaError whose Python worker failed with ModuleNotFoundError: No module named 'numpy'
    741: ("library_not_found", "Spark worker: ModuleNotFoundError: No module named 'numpy'"),
    # filenotfounderror group
    108: ("corrupt_data", "ValueError: No model config found in the file (the file exists but has no config)"),
    346: ("path_not_found", "LookupError: NLTK resource 'corpora/wordnet' not found"),
    347: ("path_not_found", "LookupError: NLTK resource 'corpora/wordnet' not found"),
    556: ("corrupt_data", "OSError: cannot identify image file (not a readable image)"),
    # valueerror - data value violation (26)
    109: ("corrupt_data", "metric needs >= 2 labels, data has 1 (taxonomy: 'a metric that needs two classes given one')"),
    137: ("illegal_argument", "merge without suffix: argument"),
    141: ("illegal_argument", "min() arg is an empty sequence"),
    175: ("illegal_argument", "multiclass format is not supported (wrong target passed to a metric)"),
    310: ("corrupt_data", "Input contains NaN/infinity: exceptional data"),
    311: ("corrupt_data", "Input contains NaN/infinity: exceptional data"),
    689: ("corrupt_data", "Input contains NaN/infinity: exceptional data"),
    690: ("corrupt_data", "Input contains NaN/infinity: exceptional data"),
    325: ("illegal_argument", "metric given continuous predictions instead of labels"),
    326: ("illegal_argument", "metric given continuous predictions instead of labels"),
    704: ("illegal_argument", "metric given continuous predictions instead of labels"),
    513: ("illegal_argument", "continuous is not supported (metric argument)"),
    328: ("illegal_argument", "OpenCV (-215:Assertion failed) on an argument"),
    327: ("illegal_argument", "OpenCV (-215:Assertion failed) !_src.empty() on an argument"),
    705: ("illegal_argument", "OpenCV (-215:Assertion failed) !_src.empty() on an argument"),
    533: ("illegal_argument", "OpenCV (-2) channel-count check on an argument"),
    595: ("illegal_argument", "OpenCV resize assertion on an argument"),
    340: ("type_mismatch", "Keras: no data adapter for the input's type"),
    341: ("type_mismatch", "Keras: no data adapter for the input's type"),
    456: ("type_mismatch", "merge on datetime64 and object columns"),
    486: ("illegal_argument", "number of classes does not match target_names"),
    515: ("illegal_argument", "fmt has wrong number of % formats"),
    553: ("illegal_argument", "invalid Matplotlib date value"),
    554: ("illegal_argument", "image size too large"),
    731: ("EXCLUDE", "LinAlgError: Singular matrix: numerical, no counterpart"),
    734: ("type_mismatch", "TypeError: float cannot be interpreted as an index"),
    735: ("EXCLUDE", "OverflowError: cannot convert float infinity to integer: no counterpart"),
    # cast exception: None converted to a tensor
    126: ("null_reference", "Attempt to convert a value (None) ... to a Tensor"),
    # valueerror - data range mismatch (19)
    136: ("tensor_mismatch", "weights file does not match the model (layer count)"),
    528: ("tensor_mismatch", "weights file does not match the model (layer count)"),
    150: ("illegal_argument", "data byte must be in range 0..127"),
    209: ("tensor_mismatch", "ValueError(value.ndim): a 2-D value where 1-D is required"),
    308: ("illegal_argument", "too many values to unpack (ValueError on a value-count requirement)"),
    309: ("illegal_argument", "too many values to unpack"),
    342: ("illegal_argument", "not enough values to unpack"),
    687: ("illegal_argument", "too many values to unpack"),
    688: ("illegal_argument", "too many values to unpack"),
    709: ("illegal_argument", "not enough values to unpack"),
    320: ("tensor_mismatch", "Length of values does not match length of index (data of the wrong shape)"),
    321: ("tensor_mismatch", "Length of values does not match length of index"),
    700: ("tensor_mismatch", "Length of values does not match length of index"),
    496: ("tensor_mismatch", "Length of passed values is 1880, index implies 1879"),
    353: ("illegal_argument", "number of tick locations does not match the number of labels"),
    555: ("illegal_argument", "'a' cannot be empty unless no samples are taken"),
    725: ("type_mismatch", "truth value of an array is ambiguous (array where a bool is required)"),
    732: ("type_mismatch", "truth value of a Series is ambiguous"),
    729: ("tensor_mismatch", "setting an array element with a sequence (ragged shapes)"),
    # OOM group
    290: ("gpu_oom", "XLA BufferAssignment OOM: Out of memory while trying to allocate (accelerator memory)"),
    507: ("cpu_oom", "DataLoader workers killed (the study labels it out of memory; host RAM)"),
    # runtimeerror group (11)
    168: ("framework_api_misuse", "deserialising a CUDA checkpoint on a CPU-only machine without map_location"),
    169: ("EXCLUDE", "CUDA error: invalid argument (GPU runtime, no visible root)"),
    170: ("framework_api_misuse", "in-place modification of a tensor needed for gradient computation"),
    176: ("tensor_mismatch", "DataLoader worker: stack expects each tensor to be equal size"),
    474: ("framework_api_misuse", "Flask: working outside of application context"),
    479: ("EXCLUDE", "cuda runtime error (77): illegal memory access (GPU fault, no counterpart)"),
    487: ("tensor_mismatch", "lengths should be a 1D tensor but got 0D"),
    493: ("EXCLUDE", "can't start new thread (resource limit, no counterpart)"),
    504: ("library_not_found", "Please install either pyarrow or hdfs3"),
    529: ("illegal_argument", "max must be larger than min"),
    # importerror: all library_not_found (473 'Please install the leiden algorithm' included)
    # feature name mismatch (9)
    338: ("tensor_mismatch", "feature names differ from those seen in fit (name mismatch)"),
    339: ("tensor_mismatch", "feature names differ from those seen in fit (name mismatch)"),
    354: ("framework_api_misuse", "Keras: custom layer not registered in custom_object_scope"),
    467: ("key_not_found", "XLRDError: No sheet named ..."),
    488: ("illegal_argument", "seaborn: Could not interpret input (argument names no column)"),
    499: ("illegal_argument", "seaborn: Could not interpret input (argument names no column)"),
    516: ("framework_api_misuse", "TF: a name refers to an Operation, not a Tensor"),
    518: ("illegal_argument", "cannot insert level_0, already exists"),
    534: ("key_not_found", "list.index: value is not in list"),
    # unsupported file type (read file) (8)
    152: ("type_mismatch", "TypeError: can't pickle _thread.RLock objects"),
    157: ("type_mismatch", "TypeError: can't pickle weakref objects"),
    286: ("corrupt_data", "Unknown image file format (decode_image)"),
    482: ("corrupt_data", "rasterio: file not recognized as a supported format"),
    483: ("corrupt_data", "rasterio: file not recognized as a supported format"),
    598: ("corrupt_data", "OpenCV: Failed to parse NetParameter file"),
    # environment setup (7)
    145: ("EXCLUDE", "AttributeError: can't set attribute (library version clash), no clear counterpart"),
    154: ("framework_api_misuse", "You can only call make_env() once"),
    167: ("EXCLUDE", "MessageError: Error (Colab drive mount), no counterpart"),
    172: ("EXCLUDE", "[Errno 16] Device or resource busy, no counterpart"),
    173: ("library_not_found", "libusb-1.0.so.0: cannot open shared object file"),
    466: ("path_not_found", "Parent directory ... doesn't exist, can't save"),
    497: ("framework_api_misuse", "Torch not compiled with CUDA enabled (CUDA API on a CPU build)"),
    # initialization error (5)
    183: ("framework_api_misuse", "Cannot re-initialize CUDA in forked subprocess"),
    545: ("EXCLUDE", "UnknownError: Fail to find the dnn implementation (cuDNN init), no counterpart"),
    # typeerror-notiterable / notsubscriptable with non-TypeError enames
    142: ("type_mismatch", "ValueError: sequences must be a list of iterables"),
    671: ("type_mismatch", "InvalidArgumentError wrapping TypeError: not subscriptable"),
    # typeerror group: non-integer index is an index error per the taxonomy
    723: ("illegal_index", "TypeError: list indices must be integers or slices, not str"),
    541: ("illegal_index", "TypeError: string indices must be integers"),
    522: ("illegal_index", "TypeError: slice indices must be integers"),
    # keyerror group
    107: ("type_mismatch", "TypeError: Cannot handle this data type (PIL)"),
    # valueerror (3)
    460: ("illegal_argument", "zero-size array to reduction operation"),
    462: ("type_mismatch", "dictionary update sequence element has length 1; 2 is required"),
    548: ("unexpected_encoding", "matplotlib display text must have all code points < 128"),
    # tensor shape mismatch with TF graph errors
    287: ("tensor_mismatch", "Matrix size-incompatible"),
    # requesterror rows that do name a category
    465: ("permission_denied", "PermissionDeniedError: user does not have 'bigquery.readsessions.create' permission"),
    549: ("EXCLUDE", "sqlite: no such table (database content), no counterpart"),
    464: ("EXCLUDE", "ResourceExhaustedError: No space left on device (disk full), no counterpart"),
}


def map_row(i: int, r: dict) -> tuple[str, str]:
    """(category or 'EXCLUDE', how it was decided)."""
    if i in ROW:
        return ROW[i][0], "row: " + ROW[i][1]
    ref = r["label_refined_exp_type"]
    cat, why = rule_category(r)
    if cat:
        return cat, "rule: " + why
    default = REFINED_DEFAULT.get(ref)
    if default:
        return default, f"refined type '{ref}'"
    en = r["ename"].lower()
    if en == "valueerror":
        return "illegal_argument", "ValueError about an argument (default for ValueError)"
    if en == "runtimeerror":
        return "EXCLUDE", "RuntimeError with no rule"
    return "EXCLUDE", f"no rule for refined type '{ref}' / {en}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC)
    ap.add_argument("--out", type=Path, default=HERE / "notebook_crashes.jsonl")
    ap.add_argument("--report", action="store_true", help="print the mapping tables (markdown) to stdout")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.src.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept, excluded = [], []
    pair = collections.Counter()
    for i, r in enumerate(rows):
        cat, why = map_row(i, r)
        if cat == "EXCLUDE":
            excluded.append((i, r, why))
            continue
        pair[(r["label_refined_exp_type"], cat)] += 1
        kept.append({
            "id": f"nb-{i:03d}",
            "log": r["traceback_text"],
            "category": cat,
            "source_label": r["label_refined_exp_type"],
            "ename": r["ename"],
            "cluster_id": r["cluster_id"],
            "pipeline_stage": r["label_ML_pipeline"],
            "mapping": why,
            "source": f"ml-notebook-crashes:{r['platform']}:{r['fname']}",
        })
    with args.out.open("w", encoding="utf-8") as f:
        for k in kept:
            f.write(json.dumps(k, ensure_ascii=False) + "\n")
    print(f"wrote {len(kept)} rows to {args.out} ({len(excluded)} excluded)", flush=True)
    if args.report:
        print("\n| source label (label_refined_exp_type) | our category | rows |\n|---|---|---:|")
        for (ref, cat), n in sorted(pair.items(), key=lambda x: (x[0][0], -x[1])):
            print(f"| {ref} | {cat} | {n} |")
        print("\n| row | source label | exception | message (start) | reason |\n|---|---|---|---|---|")
        for i, r, why in excluded:
            msg = r["evalue"][:70].replace("|", "\\|").replace("\n", " ")
            print(f"| nb-{i:03d} | {r['label_refined_exp_type']} | {r['ename']} | {msg} | {why} |")
        cats = collections.Counter(k["category"] for k in kept)
        print("\n| our category | rows |\n|---|---:|")
        for c, n in cats.most_common():
            print(f"| {c} | {n} |")


if __name__ == "__main__":
    main()
