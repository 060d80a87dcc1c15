"""Tag a failure with one of the study's 20 categories, with a confidence, a rule id and evidence.

Rules read the exception type and message of the terminating failure (and, for a few, the lines just
before it, such as the CUDA assertion printed before "device-side assert triggered"). Message rules
come first and carry deep-learning meaning over generic exception names: a RuntimeError about
state_dict keys is a tensor mismatch, a ValueError about NaN loss is loss_nan. Exception-type defaults
come last. When nothing fits the answer is `unclassified` with a low confidence, never a guess.

The rules below are version 4, the rule set of the tagging config "tagging:2026-11" (configs.py,
docs/grouping-configs.md). Released rule sets never change: a new rule is a new RuleSet (built from
these lists, changed) with its own version, named by a new tagging config; stored failures record
the config that tagged them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from . import literals
from .frameworks import KERAS_CALL_ARGUMENTS, KERAS_CALL_HEADER
from .taxonomy import CATEGORIES

TAGGER_VERSION = "4"


@dataclass(frozen=True)
class Tag:
    category: str
    confidence: float
    rule: str
    evidence: str

    @property
    def dimension(self) -> str:
        return CATEGORIES[self.category].dimension

    @property
    def retry_advice(self) -> str:
        return CATEGORIES[self.category].retry_advice

    @property
    def specific(self) -> bool:
        """A message rule fired (not just a default for the exception type)."""
        return self.category != "unclassified" and ".type." not in self.rule


# Rules are written with ".*" for readability; each is compiled with a bounded gap so a rule costs
# at most a few hundred steps per starting position, whatever the message (no quadratic scans of
# 1 MB messages). Messages are also cut to their head before tagging.
_MAX_GAP = 300
MAX_TAG_CHARS = 20000
_UNBOUNDED = re.compile(r"(?<!\\)\.([*+])")


def _r(pattern: str) -> re.Pattern:
    bounded = _UNBOUNDED.sub(lambda m: ".{0,%d}" % _MAX_GAP if m.group(1) == "*" else ".{1,%d}" % _MAX_GAP, pattern)
    return re.compile(bounded, re.I | re.S)


# (rule id, category, confidence, pattern over "ExceptionType: message"). First match wins.
MESSAGE_RULES: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # --- Deep-learning specific first: they often arrive as generic RuntimeError/ValueError.
    ("gpu_oom.cuda_oom", "gpu_oom", 0.98,
     r"CUDA out of memory|CUDA error: out of memory|cuda runtime error \(2\) ?: out of memory|OutOfMemoryError"
     r"|HIP out of memory|MPS backend out of memory|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED"
     r"|cudaErrorMemoryAllocation|out of memory on device|NCCL .*Cuda failure 'out of memory'"
     # CUDA runtime error 2 is cudaErrorMemoryAllocation, however a C++ extension words it.
     r"|cuda (?:failed with )?error:? 2\b[^\n]{0,20}out of memory"),
    ("cpu_oom.cpu_allocator", "cpu_oom", 0.95,
     r"DefaultCPUAllocator: (?:can't|not enough memory)|OOM when allocating .*(?:device:CPU|cpu allocator)"
     r"|Unable to allocate [\d.]+ \w+ for an array|Cannot allocate memory|std::bad_alloc|\bMemoryError\b"),
    ("gpu_oom.tf_resource_exhausted", "gpu_oom", 0.95,
     r"ResourceExhaustedError.*OOM|OOM when allocating tensor|RESOURCE_EXHAUSTED:? .*(?:Out of memory|OOM)"
     r"|Out of memory while trying to allocate|XlaRuntimeError: RESOURCE_EXHAUSTED"),
    ("cpu_oom.oom_killed", "cpu_oom", 0.9,
     r"^(?:OOMKilled|Killed):|oom[-_ ]kill|OOMKilled|killed by signal: Killed|Signal 9 \(SIGKILL\)"
     r"|insufficient shared memory \(shm\)|Memory cgroup out of memory"
     r"|exit(?:ed with)? code 137\b|interrupted by signal 9\b"
     # PyTorch's report of a worker that vanished without an exception: the OOM killer or /dev/shm.
     r"|DataLoader worker \(pids?\(?s?\)? [\d, ]+\) exited unexpectedly"),
    ("loss_nan.loss_nan", "loss_nan", 0.95,
     r"\bloss\b[^\n]{0,40}\b(?:is|became|=|:|of|was|value)?\s*(?:nan|inf|infinite|non-finite)\b"
     r"|\b(?:nan|inf) (?:loss|detected in loss)|Loss (?:became|is) (?:infinite|NaN)|non-finite loss"
     r"|check_numerics|CheckNumerics|Tensor had (?:NaN|Inf) values|returned nan values"
     r"|loss scale .*minimum|Current loss scale already at minimum|Minimum loss scale reached"
     r"|gradients? (?:are|is|contain) (?:nan|inf|non-finite)|is non-finite, so it cannot be clipped"
     r"|FloatingPointError:.*(?:nan|inf)|^LossNaN:"),
    ("tensor_mismatch.checkpoint", "tensor_mismatch", 0.97,
     r"size mismatch for|Missing key\(s\) in state_dict|Unexpected key\(s\) in state_dict"
     r"|Error\(s\) in loading state_dict|Key [\w/:.-]+ not found in checkpoint"
     r"|shape .* does not match .*(?:checkpoint|saved)|weights? (?:file|tensor).*(?:mismatch|incompatible)"
     r"|You are trying to load a weight file containing \d+ layers into a model with \d+ layers"
     r"|Layer count mismatch when loading weights|Weight count mismatch for layer"
     r"|Shapes? .* (?:and|vs\.?) .* (?:are )?incompatible.*(?:load|checkpoint|weight)"),
    ("tensor_mismatch.shape", "tensor_mismatch", 0.93,
     r"shapes? cannot be multiplied|Incompatible shapes|shape mismatch|size mismatch"
     r"|The size of tensor a \(\d+\) must match the size of tensor b|Sizes of tensors must match"
     r"|Expected input batch_size \(\d+\) to match target batch_size|to have \d+ channels, but got"
     r"|Given groups=\d+, weight of size|is incompatible with the layer: expected|Shapes .* are incompatible"
     r"|cannot reshape (?:array|tensor) of size|shape '\[.*\]' is invalid for input of size"
     r"|Cannot feed value of shape|inconsistent tensor size|target size \(.*\) that is different to the input size"
     r"|operands could not be broadcast together|doesn't match the broadcast shape|Dimensions? must be equal"
     r"|Matrix size-incompatible|matrix sizes? .*(?:mismatch|incompatible)|inconsistent numbers of samples"
     r"|Expected (?:input|target)? ?(?:size|shape|dimension) .* (?:got|but)|expected \w+ to have (?:shape|\d+ dim)"
     r"|dimension (?:mismatch|out of range \(expected to be in range)|Input contains \d+ features? but .* expect"
     r"|expected (?:min_)?ndim=\d+, found ndim=\d+|has \d+ features?, but .* is expecting \d+ features"
     r"|Expected \d+D \(unbatched\) or \d+D \(batched\) input|number of dims don't match|must have the same shape"
     r"|Expected size \d+ but got size \d+|Error when checking (?:input|target): expected"
     # TF/Keras losses, matplotlib: two inputs disagree in their leading (batch) dimension.
     r"|must have (?:the )?same first dimension|is incompatible with (?:the )?layer"
     # numpy / pandas: array shapes or lengths that do not line up.
     r"|could not broadcast|shapes \([\d, ]*\) and \([\d, ]*\) not aligned|setting an array element with a sequence"
     r"|Shape of passed values is .{0,40}indices imply|Length of values \(\d+\) does not match length of index"
     r"|Length of passed values is \d+, index implies|features per sample; expecting \d+"
     # wrong number of dimensions: "Expected 2D array, got 1D array", "must be 2D, not 3D".
     r"|Expected \d-?D array, got \d-?D|must be \d-?D, not \d-?D|should be a \d-?D .{0,40}but got \d-?D"
     r"|Invalid shape \(.{0,40}\) for image data|must be an? \(?[\d,\s]*\)? ?dimensional array"
     r"|Shape must be (?:at least )?rank \d+ but is rank \d+|requires inputs with matching shapes"
     r"|stack expects each tensor to be equal size|Expected more than 1 value per channel when training"
     r"|\(-209:Sizes of input arguments do not match\)"  # OpenCV's error code for it
     # TF: a tensor reshaped to a size it does not have; an input too small for a pooling/conv window.
     r"|Input to reshape is a tensor with \d+ values|Negative dimension size caused by subtracting"
     # scikit-learn: the columns at predict time are not the ones seen at fit time.
     r"|feature names should match those that were passed during fit"
     # default_collate stacking samples of different sizes into a worker's shared-memory storage.
     r"|Trying to resize storage that is not resizable"),
    ("illegal_index.device_assert", "illegal_index", 0.9,
     r"index out of bounds|t >= 0 && t < n_classes|srcIndex < srcSelectDimSize|indices\[[\d,\s]*\] = -?\d+ is not in"
     r"|Target -?\d+ is out of bounds|index out of range in self"),
    ("framework_api_misuse.autograd", "framework_api_misuse", 0.95,
     r"backward through the graph a second time|modified by an inplace operation"
     r"|does not require grad and does not have a grad_fn|grad can be implicitly created only for scalar"
     r"|Can't call numpy\(\) on Tensor that requires grad|leaf Variable that requires grad"
     r"|a view of a leaf Variable that requires grad"),
    ("framework_api_misuse.device", "framework_api_misuse", 0.93,
     r"Expected all tensors to be on the same device|Expected .* to be on .*device|on different devices"
     r"|Input type \(.*cuda.*\) and weight type \(\w+\.?\w*\) should be the same"
     r"|Input type \(\w+\.?\w*\) and weight type \(.*cuda.*\) should be the same"
     r"|can't convert cuda:?\d* device type tensor to numpy|Cannot re-initialize CUDA in forked subprocess"
     r"|module must have its parameters and buffers on device|Expected a '\w+' device type for generator"
     r"|Expected object of device type|Attempting to deserialize object on a CUDA device"
     r"|Trying to access resource .{0,80} located in device"
     # older PyTorch: "expected tensor for argument #1 'input' to have the same device as tensor for ..."
     r"|to have the same device as tensor"),
    ("framework_api_misuse.graph_state", "framework_api_misuse", 0.93,
     r"Attempting to use uninitialized value|Variable .* already exists, disallowed|is not an element of this graph"
     r"|Graph disconnected|Cannot convert a symbolic (?:Keras )?Tensor|KerasTensor cannot be used as input"
     r"|tried to create variables on non-first call|must be wrapped in an init_scope|You must compile your model"
     r"|has not been built|This model has not yet been built|Default process group (?:has not been|is not) initialized"
     r"|Expected to have finished reduction in the prior iteration|Could not interpret optimizer identifier"
     r"|model must be compiled|Cannot interpret feed_dict key|NCCL error.*invalid usage|must call .* before"
     r"|is not callable with the given argument|symbolic tensor .* numpy|only supported for distributed"
     r"|Trying to create optimizer slot variable under the scope|Invalid device string|Tensor\.item\(\) .* graph"
     # estimators used before fit(); custom Keras objects not registered when a model is loaded.
     r"|NotFittedError|is not fitted yet|not fitted or provided|Unknown layer: |custom_object_scope"
     r"|refers to an Operation, not a Tensor"
     # TF graph pruning asked for nodes the graph does not have (names look like paths).
     r"|Some target nodes not found|nodes? not found in (?:the )?graph"),
    ("unexpected_encoding.codec", "unexpected_encoding", 0.97,
     r"Unicode(?:Decode|Encode)?Error|codec can't (?:decode|encode)|invalid (?:start|continuation) byte"
     r"|surrogates not allowed|code points? < 128"),
    ("corrupt_data.format", "corrupt_data", 0.93,
     r"JSONDecodeError|Expecting (?:value|property name|',' delimiter)|image file is truncated"
     r"|cannot identify image file|UnidentifiedImageError|Unknown image file format|Not a JPEG file|DataLossError|corrupted record|corrupt(?:ed)? (?:file|data|record)"
     r"|PytorchStreamReader failed|failed finding central directory|\bEOFError\b|Ran out of input"
     r"|UnpicklingError|invalid load key|pickle data was truncated|BadZipFile|Not a gzipped file|not a gzip file"
     r"|Only one class present in y_true|needs samples of at least 2 classes|contains only one class"
     r"|Number of labels is 1\b"
     r"|Input (?:X |y )?contains (?:NaN|infinity)|Error tokenizing data|EmptyDataError|No columns to parse"
     r"|CRC check failed|crc mismatch|unexpected end of (?:file|data|stream)|Corrupt JPEG|truncated (?:file|record|data)"
     r"|file signature not found|HDF5 .*(?:truncated|corrupt)|Invalid magic number|ParserError"
     # serde_json's wording, surfaced by Rust bindings such as tokenizers as a bare Exception
     # when a tokenizer.json / config file is empty, truncated or not JSON.
     r"|expected value at line \d+ column \d+|EOF while parsing an? \w+ at line|trailing characters at line \d+"
     r"|\(-212:Parsing error\)"),  # OpenCV's code for a model/config file it cannot parse
    # --- Execution environment.
    ("library_not_found.native", "library_not_found", 0.96,
     r"cannot open shared object file|undefined symbol|DLL load failed|Could not load dynamic library"
     r"|lib\w+\.so[\d.]*: (?:cannot|not found)|command not found|Torch not compiled with CUDA"
     r"|Found no NVIDIA driver|CUDA driver version is insufficient|no kernel image is available for execution"),
    ("library_not_found.module", "library_not_found", 0.97,
     r"ModuleNotFoundError|No module named|ImportError|cannot import name|DistributionNotFound"
     r"|PackageNotFoundError|requires the [\w-]+ library but it was not found|(?:to be|is not) installed"
     r"|pip install|is not available in your environment|Please install"
     # an external program the library shells out to (graphviz dot, ffmpeg) is not on PATH.
     r"|ExecutableNotFound|executables? (?:are|is) on your (?:systems'? )?PATH"),
    ("permission_denied.errno", "permission_denied", 0.97,
     r"PermissionError|Permission denied|\[Errno 13\]|Read-only file system|\[Errno 30\]|Operation not permitted"
     r"|AccessDenied|Access Denied|\bEACCES\b|not permitted to|PermissionDenied"),
    ("path_not_found.missing", "path_not_found", 0.96,
     r"FileNotFoundError|No such file or directory|\[Errno 2\]|DirectoryNotFound|NotADirectoryError|IsADirectoryError"
     r"|(?<!\w)(?:file|directory|dir|path|folder|checkpoint|ckpt)\b[^\n]{0,80}\b(?:does not exist|doesn't exist|not found|cannot be found|could not be found|is not a (?:valid )?(?:file|directory))"
     r"|(?:does not exist|doesn't exist|not found)[^\n]{0,20}(?:file|directory|path|folder)"
     r"|Unable to open file|unable to open (?:file|database file)|can't open file|Can't load (?:tokenizer|config|weights|the model)"
     r"|is not a local folder and is not a valid model identifier|does not appear to have a file named"
     r"|NotFoundError: .*(?:/|\\|file|director)|Failed to (?:find|open|read) (?:file|directory)"
     r"|(?:no|No) (?:checkpoint|ckpt|weights?) (?:file )?(?:found|exists)|cannot find (?:the )?(?:path|file)"
     # "no model checkpoint directory found", "no config files were found"
     r"|\bno (?:[\w-]+ ){0,3}(?:file|directory|dir|folder|checkpoint|ckpt|path)s? (?:was |were )?found"
     # downloadable resources looked up on disk: "Can't find a vocabulary file at path", NLTK data.
     r"|Can't find an? [\w ]{0,30}file at path|Resource '?[\w/.-]+'? not found"),
    # --- General code errors whose message is clearer than their type.
    # A value of the wrong type for a conversion or container (before null_reference: the message
    # of "data adapter" errors lists the types it got, NoneType among them).
    ("type_mismatch.conversion", "type_mismatch", 0.9,
     r"invalid literal for int\(\) with base|could not convert string to float|Unable to parse string"
     r"|The truth value of an? .{0,40} is ambiguous|dictionary update sequence element"
     r"|trying to merge on .{0,60} columns|Found non-iterable|Failed to find data adapter that can handle input"),
    ("null_reference.nonetype", "null_reference", 0.96,
     r"'NoneType' object|NoneType|of type 'NoneType'|None has no attribute|cannot unpack non-iterable NoneType"),
    ("illegal_argument.argparse", "illegal_argument", 0.97,
     r"^argparse\.ArgumentError|unrecognized arguments|invalid choice:|invalid (?:int|float|bool) value"
     r"|the following arguments are required|expected one argument|ambiguous option"),
    # OS-level EINVAL, OpenCV argument checks (-215), AWS/botocore parameter validation.
    ("illegal_argument.invalid", "illegal_argument", 0.85,
     r"\[Errno 22\] Invalid argument|\(-215:?Assertion failed\)|Parameter validation failed"
     r"|Parameters? (?:are|is) not valid|device type at start of device string"),
    ("undefined_variable.name", "undefined_variable", 0.97,
     r"NameError|UnboundLocalError|name '[\w.]+' is not defined|referenced before assignment"
     r"|cannot access (?:local|free) variable"),
    ("syntax_error.syntax", "syntax_error", 0.98, r"SyntaxError|IndentationError|TabError|invalid syntax"),
    ("division_by_zero.zero", "division_by_zero", 0.98,
     r"ZeroDivisionError|division by zero|divide by zero|division or modulo by zero"),
    ("not_implemented.not_implemented", "not_implemented", 0.9,
     r"NotImplementedError|not implemented for '|Could not run '[\w:.]+' with arguments from the|is not implemented"
     r"|has not been implemented|unsupported operation"),
    ("illegal_index.index", "illegal_index", 0.95,
     r"IndexError|index -?\d+ is out of bounds|out of bounds for (?:axis|dimension|size)|list index out of range"
     r"|index out of range|too many indices for|only integers, slices .* are valid indices|invalid index"
     # non-integer or out-of-range indexing: the taxonomy's "out-of-range or non-integer index".
     r"|axis -?\d+ is out of bounds|Too many indexers|(?:string|list|tuple|slice) indices must be integers"
     r"|device-side assert triggered"),
    ("key_not_found.key", "key_not_found", 0.95,
     r"^KeyError\b|key .* (?:not found|does not exist)|no such key"
     # list.index / tuple.index of a missing element: a lookup that found nothing.
     r"|^ValueError: .{1,200} is not in (?:list|tuple)$"),
    ("type_mismatch.dtype", "type_mismatch", 0.93,
     r"expected scalar type \w+ but found \w+|expected \w+ dtype to be \w+(?: or \w+)?,? but got \w+|Found dtype \w+ but expected|can't be cast to the desired output type"
     r"|expected (?:dtype|type) \w+ but got|dtype mismatch|Expected object of scalar type \w+ but got scalar type"
     r"|Input type \(.*\) and (?:weight|bias) type \(.*\) should be the same"
     r"|Failed to convert a NumPy array to a Tensor|Cannot cast|UFuncTypeError|unsupported operand type"
     r"|not supported between instances of|object is not (?:callable|iterable|subscriptable)|unhashable type"
     r"|can only concatenate|must be (?:str|int|real number|a tuple|a string)|object of type .* has no len"),
    # The study's example of a version-incompatible keyword is a framework op or layer (softmax(axis=)
    # with Keras 2.2.2 on TF 1.3). Other "unexpected keyword argument" errors are type mismatches, as
    # the taxonomy lists them; a class named Trainer or Model may as well be the user's own.
    ("framework_api_misuse.version_keyword", "framework_api_misuse", 0.75,
     r"(?<![\w.])(?:(?:tf|keras|nn|F|torch)\.[\w.]+|Layer|Dense|Conv\d?D\w*|softmax|log_softmax|LSTM|GRU|Embedding"
     r"|Dropout|BatchNormalization)(?:\.__init__)?\(\) got an unexpected keyword argument"),
    ("attribute_not_found.attribute", "attribute_not_found", 0.95, r"AttributeError|has no attribute"),
]]


def _lower_literals(pattern: str) -> str:
    """The pattern for lower-cased text: literal letters lower-cased, escapes (\\S, \\W, \\D) kept."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        else:
            out.append(pattern[i].lower())
            i += 1
    return "".join(out)


def _lowered(text: str) -> str | None:
    """The text lower-cased, or None when positions would not agree (a few Unicode letters grow)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else None


# Defaults by exception type (short name), when no message rule fired.
TYPE_DEFAULTS: dict[str, tuple[str, float]] = {
    "TypeError": ("type_mismatch", 0.85),
    "KeyError": ("key_not_found", 0.95),
    "ValueError": ("illegal_argument", 0.75),
    "InvalidArgumentError": ("illegal_argument", 0.6),
    "AssertionError": ("illegal_argument", 0.6),
    "ArgumentError": ("illegal_argument", 0.9),
    "OSError": ("path_not_found", 0.4),
    "FloatingPointError": ("loss_nan", 0.6),
    "AxisError": ("illegal_index", 0.85),
    "IndexingError": ("illegal_index", 0.85),
}
# Types that say nothing about the category on their own (they are never defaults).
_UNCLASSIFIED_TYPES = {"RuntimeError", "Exception", "Error", "SystemError", "Fatal", "CheckFailed"}


def _rule_text(short_type: str, message: str) -> str:
    """What message rules read: "ShortType: message", cut to its head."""
    return (f"{short_type}: {message}" if short_type else message)[:MAX_TAG_CHARS]


class RuleSet:
    """One released set of rules: message rules (first match wins), then defaults by exception type."""

    def __init__(self, version: str, message_rules: list[tuple[str, str, float, re.Pattern]],
                 type_defaults: dict[str, tuple[str, float]]):
        self.version, self.message_rules, self.type_defaults = version, message_rules, type_defaults
        # The same rules for lower-cased text without re.IGNORECASE: about ten times faster in
        # CPython's engine, which cannot skip ahead on case-insensitive alternations; and each searched only
        # in texts that hold a word it cannot match without (literals.py), as most rules fail on most texts.
        self.fast = [literals.gated(re.compile(_lower_literals(p.pattern), re.S)) for _, _, _, p in message_rules]
        self._rules = list(zip(message_rules, self.fast))
        self._context_rules = [(rule, fast) for rule, fast in self._rules if rule[1] in _CONTEXT_CATEGORIES]

    def tag(self, exception_type: str, message: str, context: list[str] | None = None) -> Tag:
        """Tag one failure. `context` is a few log lines just before it (used for native assertions)."""
        short = exception_type.rsplit(".", 1)[-1]
        text = _rule_text(short, message)
        evidence = text.splitlines()[0] if text else ""
        lowered = _lowered(text)
        for (rid, category, confidence, pattern), fast in self._rules:
            m = fast.search(lowered) if lowered is not None else pattern.search(text)
            if m:
                return Tag(category, confidence, rid, _evidence_line(text, m.start()) or evidence)
        for line in reversed(context or []):
            low = _lowered(line)
            for (rid, category, confidence, pattern), fast in self._context_rules:
                if fast.search(low) if low is not None else pattern.search(line):
                    return Tag(category, round(confidence - 0.1, 2), rid + ".context", line.strip())
        if short in self.type_defaults:
            category, confidence = self.type_defaults[short]
            return Tag(category, confidence, f"{category}.type.{short}", evidence)
        return Tag("unclassified", 0.2 if short in _UNCLASSIFIED_TYPES or not short else 0.3,
                   "unclassified.no_rule", evidence)


# Categories whose evidence may sit in the lines before the failure rather than in its message:
# "Assertion `t >= 0 && t < n_classes` failed" precedes "device-side assert triggered"; TF prints
# "OOM when allocating tensor" in a warning before the exception; the kernel's OOM kill precedes exit.
_CONTEXT_CATEGORIES = {"illegal_index", "gpu_oom", "cpu_oom"}


def _evidence_line(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start:end if end >= 0 else None].strip()


RULES_V4 = RuleSet(TAGGER_VERSION, MESSAGE_RULES, TYPE_DEFAULTS)
tag = RULES_V4.tag  # the newest rules; tagging configs name their own RuleSet


# ------------------------------------------------------------------------------------------ version 5
# Tagging config "tagging:2026-11c" (#14.5). Rules for frameworks the rules had not met, each from the
# framework's own message text (source file named), placed first so a generic rule cannot take them.
FRAMEWORK_RULES: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # MXNet CUDA checks (src/operator/mxnet_op.h, mshadow cuda utils): "Check failed: err == cudaSuccess
    # (2 vs. 0) ... ErrStr:out of memory"; 2 is cudaErrorMemoryAllocation.
    ("gpu_oom.mxnet_cuda", "gpu_oom", 0.95, r"cudaSuccess \(2 vs\. 0\)|ErrStr:\s?out of memory"),
    # JAX tracer errors (jax/_src/errors.py): Python control flow or conversions on traced values inside
    # jit/grad/vmap, or a tracer leaked out of its transformation.
    ("framework_api_misuse.jax_tracer", "framework_api_misuse", 0.93,
     r"ConcretizationTypeError|Tracer(?:Array|Bool|Integer)ConversionError|UnexpectedTracerError"
     r"|NonConcreteBooleanIndexError|Abstract tracer value encountered where concrete value is expected"
     r"|Encountered an unexpected tracer"),
    # A build without CUDA asked for a GPU: MXNet src/storage/storage.cc; Lightning's device parser
    # (pytorch_lightning/utilities/device_parser.py) when no GPU is visible at all.
    ("library_not_found.no_gpu_build", "library_not_found", 0.9,
     r"Compile with USE_CUDA=1 to enable GPU|You requested (?:GPUs?|gpus?): \[[^\]]*\]\s*But your machine only has: \[\]"),
    # MXNet src/operator/tensor/matrix_op-inl.h (slice): "slicing with begin[1]=8084 exceeds limit of input dimension[1]=4116".
    ("illegal_index.mxnet_slice", "illegal_index", 0.9, r"exceeds limit of input dimension"),
    # MXNet shape/type inference (src/operator/elemwise_op_common.h, operator_common.h SHAPE_ASSIGN_CHECK).
    ("tensor_mismatch.mxnet_infer", "tensor_mismatch", 0.9,
     r"Incompatible attr in node .* expected \[.*\], got \[|Shape inconsistent, Provided\s?="),
    # MXNet imperative context check (src/imperative/imperative_utils.h).
    ("framework_api_misuse.mxnet_context", "framework_api_misuse", 0.9,
     r"ctx\(\) == default_ctx|require all inputs live on the same context"),
    # MXNet 2 FFI argument check (include/mxnet/runtime/packed_func.h, TVM_CHECK_TYPE_CODE): "expected float but get NULL".
    ("type_mismatch.mxnet_ffi", "type_mismatch", 0.85, r"Check failed: type_code_ == kDL\w+|expected \w+ but get \w+"),
    # TF direct_session.cc / session.py: the TF1 session API used without a graph.
    ("framework_api_misuse.tf_session", "framework_api_misuse", 0.9,
     r"Session was not created with a graph before Run|The Session graph is empty"),
    # jsonargparse (LightningCLI's parser), _core.py: "Configuration check failed :: ..." -- a bad argument.
    ("illegal_argument.config_check", "illegal_argument", 0.85, r"Configuration check failed ::"),
]]
# Lightning's MisconfigurationException: "Exception used to inform users of misuse with PyTorch Lightning"
# (pytorch_lightning/utilities/exceptions.py); its message rules (missing module, GPUs) come first.
TYPE_DEFAULTS_V5: dict[str, tuple[str, float]] = {**TYPE_DEFAULTS, "MisconfigurationException": ("framework_api_misuse", 0.7)}
# A bare "Signal 9 (SIGKILL)" is torchrun's summary of a killed child, not memory evidence: version 5
# reads it in frameworks.launcher_tag, which asks for memory evidence first.
# The rule review (#14.7, bench/rule_review.md, bench/rule_coverage.py): alternatives that matched exactly one
# development example, were no library's own message text, and whose example another rule or the learned
# fallback still tags right without them.
_V5_DROPPED: dict[str, tuple[str, ...]] = {
    "cpu_oom.oom_killed": (r"|Signal 9 \(SIGKILL\)",),
    "gpu_oom.cuda_oom": (r"|cuda (?:failed with )?error:? 2\b[^\n]{0,20}out of memory",),
    "loss_nan.loss_nan": (r"|loss scale .*minimum",),
    "tensor_mismatch.shape": (r"|Expected (?:input|target)? ?(?:size|shape|dimension) .* (?:got|but)",
                              r"|should be a \d-?D .{0,40}but got \d-?D",
                              r"|must be an? \(?[\d,\s]*\)? ?dimensional array"),
    "type_mismatch.conversion": (r"|Found non-iterable",),
    "illegal_argument.invalid": (r"|Parameters? (?:are|is) not valid",),
}


def _without(rules, dropped: dict[str, tuple[str, ...]]):
    """The rules with some alternatives removed (each given as written, "|" included)."""
    out = []
    for rid, cat, conf, pattern in rules:
        source = pattern.pattern
        for alternative in dropped.get(rid, ()):
            bounded = _UNBOUNDED.sub(lambda m: ".{0,%d}" % _MAX_GAP if m.group(1) == "*" else ".{1,%d}" % _MAX_GAP,
                                     alternative)
            assert bounded in source, (rid, alternative)
            source = source.replace(bounded, "", 1)
        out.append((rid, cat, conf, re.compile(source, re.I | re.S)))
    return out


class RuleSetV5(RuleSet):
    """Version 5: framework rules first; a TF root-error wrapper is judged by its first sub-error."""

    def tag(self, exception_type: str, message: str, context: list[str] | None = None) -> Tag:
        from .frameworks import tf_root_error
        sub = tf_root_error(message or "")
        if sub is not None:
            sub_type, sub_message = sub
            if sub_type:
                inner = super().tag(sub_type, sub_message, context)
                if inner.category != "unclassified":
                    return Tag(inner.category, inner.confidence, inner.rule + ".tf_root_error", inner.evidence)
            return Tag("unclassified", 0.2, "unclassified.tf_root_error",
                       (message or "").strip().splitlines()[0][:200] + " (no readable sub-error)")
        return super().tag(exception_type, message, context)


RULES_V5 = RuleSetV5("5", FRAMEWORK_RULES + _without(MESSAGE_RULES, _V5_DROPPED), TYPE_DEFAULTS_V5)


# ------------------------------------------------------------------------------------------ version 6
# Tagging config "tagging:2026-11d". From a third development set sampled by repository and framework
# (bench/devset/issues3); each rule from the producer's own message text, never from one sample's wording.
RULES_V6_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # The shell's and the C runtime's report of a fatal signal, alone (no error printed before it): the native
    # code crashed and the log cannot say why. Said plainly, so no model guesses a category for it.
    ("unclassified.native_crash", "unclassified", 0.3,
     r"^Fatal: (?:Segmentation fault|Bus error|Illegal instruction)\b|^(?:Segmentation fault|Bus error|Illegal instruction)"
     r"(?: \(core dumped\))?:?\s*\d*\s*$"),
    # SIGFPE ("Floating point exception", bash's strsignal text): on Linux with floating-point traps masked,
    # as NumPy, PyTorch and TF leave them, it is an integer division by zero (or INT_MIN / -1) in native code.
    ("division_by_zero.sigfpe", "division_by_zero", 0.7, r"^(?:Fatal: )?Floating point exception\b|\bSIGFPE\b"),
    # No kernel for this op on this device or dtype: MXNet's imperative dispatcher ("Operator %s cannot be run;
    # requires at least one of FCompute<xpu>, NDArrayFunction, FCreateOperator be registered"), TF's kernel
    # registry ("No OpKernel was registered to support Op", "No registered '%s' OpKernel for '%s' devices"),
    # as PyTorch's "Could not run '...' with arguments from the '...' backend" is already not_implemented.
    ("not_implemented.no_kernel", "not_implemented", 0.9,
     r"cannot be run; requires at least one of FCompute|No OpKernel was registered to support Op"
     r"|No registered '[\w>]+' OpKernel for"),
    # TF's assign kernel (core/kernels/assign_op.h): "Assign requires shapes of both tensors to match. lhs shape= [4]
    # rhs shape= [2]", met when a checkpoint or a value is assigned to a variable of another shape.
    ("tensor_mismatch.tf_assign", "tensor_mismatch", 0.93, r"Assign requires shapes of both tensors to match"),
    # TF op texts (core/kernels/pack_op.cc, concat_op.cc, padded_batch_dataset_op.cc): tensors whose shapes disagree.
    ("tensor_mismatch.tf_ops", "tensor_mismatch", 0.93,
     r"Shapes of all inputs must match: values\[\d+\]\.shape|ConcatOp ?: ?Dimensions of inputs should match"
     r"|Attempted to pad to a smaller size than the input element"),
    # TF's file readers (core/lib/io, tensor_bundle): a file shorter than its index or header says: truncated.
    ("corrupt_data.tf_short_read", "corrupt_data", 0.85, r"Read less bytes than requested"),
    # TF on a GPU whose memory is taken: the destination tensor of a host-to-device copy could not be allocated
    # ("Dst tensor is not initialized."), or cuBLAS could not get its workspace ("Blas SGEMM launch failed",
    # "failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED"); both are answered by freeing GPU memory.
    ("gpu_oom.tf_gpu_memory_symptoms", "gpu_oom", 0.65,
     r"Dst tensor is not initialized|Blas \w*GEMM launch failed|failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED"),
    # Horovod (horovod/common/util.py check_extension): "Extension horovod.tensorflow has not been built. If this is
    # not expected, reinstall Horovod with HOROVOD_WITH_TENSORFLOW=1": the framework binding is missing.
    ("library_not_found.horovod_extension", "library_not_found", 0.93, r"Extension [\w.]+ has not been built"),
    # PyTorch advanced indexing (ATen IndexingUtils): "shape mismatch: indexing tensors could not be broadcast
    # together with shapes [4], [5]": the index tensors are wrong, an indexing error (it is raised as IndexError).
    ("illegal_index.index_tensors", "illegal_index", 0.9, r"indexing tensors could not be broadcast"),
    # c10 Device.cpp: "Device index must not be negative" (e.g. LOCAL_RANK -1 outside a launcher): a bad argument.
    ("illegal_argument.device_index", "illegal_argument", 0.85, r"Device index must not be negative"),
    # Lightning's ModelCheckpoint / EarlyStopping monitor a metric the model never logs: a wrong argument
    # ("ModelCheckpoint(monitor='x') not found in the returned metrics", newer "could not find the monitored key
    # in the returned metrics", "Early stopping conditioned on metric `x` which is not available").
    ("illegal_argument.lightning_monitor", "illegal_argument", 0.85,
     r"not found in the returned metrics|could not find the monitored key in the returned metrics"
     r"|conditioned on metric .* which is not available"),
    # CUDA error 700 (cudaErrorIllegalAddress, "an illegal memory access was encountered"): a kernel read or wrote
    # outside its memory; without a device-side assert the log cannot say why. Said plainly, not guessed.
    ("unclassified.cuda_illegal_memory_access", "unclassified", 0.3, r"an illegal memory access was encountered"),
    # bash's "Killed" for a SIGKILLed job, glued to the progress bar it interrupted ("1/3 [00:49<01:39]Killed").
    ("cpu_oom.killed_after_progress", "cpu_oom", 0.75, r"[\]|]\s*Killed\s*$"),
    # torch.multinomial (ATen Distributions): "probability tensor contains either `inf`, `nan` or element < 0":
    # the model's outputs went non-finite.
    ("loss_nan.probabilities", "loss_nan", 0.8, r"probability tensor contains either `inf`"),
    # A distributed call before the process group exists, in the launchers' libraries' words (composer.utils.dist:
    # "The world_size(8) > 1, but the distributed package is not available or has not been initialized").
    ("framework_api_misuse.dist_not_initialized", "framework_api_misuse", 0.9,
     r"distributed package is not available or has not been initialized"),
    # transformers Trainer with FSDP: "Could not find the transformer layer class to wrap in the model."
    # (fsdp_transformer_layer_cls_to_wrap names a class the model does not have): a wrong argument.
    ("illegal_argument.fsdp_wrap_class", "illegal_argument", 0.85, r"Could not find the transformer layer class to wrap"),
    # transformers modeling_utils.load_state_dict: torch.load failed on a weights file ("Unable to load weights
    # from pytorch checkpoint file for ..."): a truncated download or a git-lfs pointer in its place; and
    # datasets' DatasetGenerationError ("An error occurred while generating the dataset"): records that do not
    # make a table.
    ("corrupt_data.hf_files", "corrupt_data", 0.75,
     r"Unable to load weights from pytorch checkpoint file|DatasetGenerationError"),
    # Windows loader errors (winerror.h): 126 ERROR_MOD_NOT_FOUND "The specified module could not be found",
    # 127 ERROR_PROC_NOT_FOUND; raised as OSError by ctypes / torch when a DLL or its dependency is missing.
    ("library_not_found.windows_dll", "library_not_found", 0.9, r"\[WinError 12[67]\]"),
]]
RULES_V6 = RuleSetV5("6", RULES_V6_ADDED + FRAMEWORK_RULES + _without(MESSAGE_RULES, _V5_DROPPED), TYPE_DEFAULTS_V5)


# ------------------------------------------------------------------------------------------ version 7
# Tagging config "tagging:2026-11e". Families of messages, each from the producer's own text (source named),
# written before the fourth development set (bench/devset/issues4) was read.
RULES_V7_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # torch.utils.cpp_extension builds an extension at run time (DeepSpeed ops, mmcv, apex): "Error building extension
    # 'fused_adam'", "Ninja is required to load C++ extensions", "Error compiling objects for extension", "The detected
    # CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.7)", "CUDA_HOME environment
    # variable is not set", "No CUDA runtime is found"; the toolchain or CUDA toolkit of the environment is wrong.
    ("library_not_found.extension_build", "library_not_found", 0.85,
     r"Error building extension '|Ninja is required to load C\+\+ extensions|Error compiling objects for extension"
     r"|mismatches the version that was used to compile\s+PyTorch|CUDA_HOME environment variable is not set"
     r"|No CUDA runtime is found"),
    # Binaries built against another version of their dependency: NumPy's C-API checks ("numpy.ndarray size changed,
    # may indicate binary incompatibility", "module compiled against API version 0x10 but this version of numpy is
    # 0xe", "A module that was compiled using NumPy 1.x cannot be run in NumPy 2"), torchvision's _cuda_version check
    # ("compiled with different CUDA major versions"), jax's version check ("jaxlib version 0.4.7 is newer than and
    # incompatible with jax version 0.3.25").
    ("library_not_found.binary_incompatible", "library_not_found", 0.9,
     r"may indicate binary incompatibility|module compiled against (?:ABI|API) version|compiled using NumPy \d\.x cannot be run"
     r"|compiled with different CUDA (?:major )?versions|is (?:newer|older) than and incompatible with \w+ version"),
    # A CPU-only build asked for a GPU op: detectron2 / maskrcnn-benchmark csrc ("Not compiled with GPU support"),
    # MXNet's storage ("GPU is not enabled"), TF ("Tensorflow was not built with CUDA kernel binaries").
    ("library_not_found.cpu_only_build", "library_not_found", 0.88,
     r"Not compiled with GPU support|\bGPU is not enabled\b|not built with CUDA kernel binaries"),
    # transformers' lazy module (utils/import_utils.py): "Failed to import transformers.models.x because of the
    # following error (look up to see its traceback)": an import of the model's module failed.
    ("library_not_found.lazy_import", "library_not_found", 0.85, r"Failed to import [\w.]+ because of the following error"),
    # Configuration validated before training: omegaconf ("Missing mandatory value: model.name"), pydantic models
    # such as DeepSpeed's config ("1 validation error for DeepSpeedZeroConfig"), DeepSpeed's batch check
    # (DeepSpeedConfigError "Check batch related parameters"): a wrong argument.
    ("illegal_argument.config_validation", "illegal_argument", 0.85,
     r"Missing mandatory value: |\d+ validation errors? for \w+|DeepSpeedConfigError|Check batch related parameters"),
    # cuDNN found no convolution algorithm that runs (TF conv_ops "No algorithm worked!", raised as NotFoundError):
    # nothing is missing on disk; GPU memory or a cuDNN / driver mismatch, which the log cannot tell apart. Said plainly.
    ("unclassified.cudnn_no_algorithm", "unclassified", 0.3, r"No algorithm worked"),
    # The UNIMPLEMENTED status of TF, XLA and JAX (absl::StatusCode::kUnimplemented, "UNIMPLEMENTED: Requested AllReduce
    # not implemented on GPU", TF's UnimplementedError): the backend has no implementation of what was asked.
    ("not_implemented.unimplemented_status", "not_implemented", 0.85, r"\bUNIMPLEMENTED\b|UnimplementedError"),
    # Keras' keyword check (utils/generic_utils.validate_kwargs raises TypeError('Keyword argument not understood:',
    # kw)): a layer or model given a keyword it does not take, as "unexpected keyword argument" is.
    ("type_mismatch.keras_keyword", "type_mismatch", 0.85, r"Keyword argument not understood"),
    # DDP's check that every rank built the same model (c10d reducer: "DDP expects same model across all ranks, but
    # Rank 0 has 161 params, while rank 1 has inconsistent 0 params"): the ranks' models differ in their tensors.
    ("tensor_mismatch.ddp_model_across_ranks", "tensor_mismatch", 0.8, r"DDP expects same model across all ranks"),
    # Shapes that disagree in other libraries' words: accelerate's set_module_tensor_to_device ("Trying to set a tensor
    # of shape torch.Size([2048]) in "bias" (which has shape torch.Size([1280])), this looks incorrect."), and checks
    # that two tensors "have different shape(s)" (ColossalAI's ZeRO optimizer: "fp32 param and grad have different
    # shape").
    ("tensor_mismatch.other_shape_texts", "tensor_mismatch", 0.85,
     r"Trying to set a tensor of shape .* this looks incorrect|\bhave different shapes?\b"),
    # bash's builtins on a malformed name ("export: `=/usr/bin/x': not a valid identifier"): the launch script built a
    # wrong argument.
    ("illegal_argument.shell_identifier", "illegal_argument", 0.75, r"\bnot a valid identifier\b"),
    # A native library's loader that searched and found nothing (DGL's and TVM's _ffi/libinfo.find_lib_path: "Cannot
    # find the files.\nList of candidates:"), and a package that needs another version of its dependency ("DGL requires
    # PyTorch >= 1.13.0", "requires transformers>=4.31", "requires torch version >= 2.0"): the environment is wrong.
    ("library_not_found.search_and_versions", "library_not_found", 0.85,
     r"Cannot find the files\.\s*List of candidates|\brequires? [A-Za-z][\w.-]* ?(?:version )?(?:>=|==|>|<=|~=) ?v?\d"),
    # Loss checks that word a non-finite value as "not finite" (SpeechBrain's check_gradients: "Loss is not finite and
    # patience is exhausted"; torch.nn.utils.clip_grad_norm_: "The total norm of order 2.0 for gradients from
    # `parameters` is non-finite").
    ("loss_nan.not_finite", "loss_nan", 0.9, r"\bloss\b[^\n]{0,20}\bis not finite|total norm of order [\d.]+ for gradients .* is non-finite"),
    # Shells' notices of a job they saw SIGKILLed: zsh "zsh: killed     python main.py", bash "line 10: 2345 Killed
    # python train.py" (Slurm batch scripts print it too): without an error of its own, memory (cpu_oom by convention).
    ("cpu_oom.shell_killed", "cpu_oom", 0.75, r"^zsh: killed\s|\bline \d+: +\d+ Killed\s"),
    # PyTorch's autograd, dispatcher and DDP checks of how an API is used: a custom Function's backward returning the wrong
    # number of gradients (python_function.cpp), an op called with another version's signature (function_schema_inl.h
    # "aten::grid_sampler_2d_backward() is missing value for argument 'output_mask'"), DataParallel's replicas
    # ("all tensors must be on devices[0]").
    ("framework_api_misuse.torch_checks", "framework_api_misuse", 0.85,
     r"returned an incorrect number of gradients|\w+::\w+\(\) is missing value for argument|tensors must be on devices\[0\]"
     # DDP's reducer when a parameter's gradient is ready twice in one backward (reentrant checkpointing, shared
     # modules: "Expected to mark a variable ready only once"); advanced indexing across devices ("indices should be
     # either on cpu or on the same device as the indexed tensor").
     r"|Expected to mark a variable ready only once|indices should be either on cpu or on the same device"),
    # libstdc++'s std::unordered_map::at / std::map::at on a missing key throws std::out_of_range("_Map_base::at" /
    # "map::at"), which PyTorch and other bindings re-raise as RuntimeError: a lookup of a key that is not there.
    ("key_not_found.cpp_map_at", "key_not_found", 0.8, r"_Map_base::at|\bmap::at\b"),
    # An empty list where a value was required (torch.stack / torch.cat "expects a non-empty TensorList"): the data
    # produced nothing, and the call's argument is empty.
    ("illegal_argument.empty_input", "illegal_argument", 0.85, r"expects? a non-empty \w+|must be (?:a )?non-empty"),
    # CUDA error 101 (cudaErrorInvalidDevice, "invalid device ordinal"): a GPU index the job does not have.
    ("illegal_argument.device_ordinal", "illegal_argument", 0.8, r"invalid device ordinal"),
    # Shapes that disagree, in texts the shape rules did not know: torch's losses ("Target size (torch.Size([16])) must
    # be the same as input size", nll_loss "Expected target size (32, 10), got"), torch's RNN check ("input.size(-1)
    # must be equal to input_size"), NumPy's concatenate ("all the input array dimensions for the concatenation axis
    # must match exactly"), jax.lax.dot_general ("requires contracting dimensions to have the same shape").
    ("tensor_mismatch.shape_texts", "tensor_mismatch", 0.9,
     r"must be the same as input size|Expected target size \(|must be equal to input_size"
     r"|input array dimensions for the concatenation axis must match|requires contracting dimensions to have the same shape"),
    # TF's summary op on a non-finite tensor (core/kernels/summary_op.cc: "Nan in summary histogram for: x"): the
    # weights or the loss went NaN.
    ("loss_nan.tf_summary_histogram", "loss_nan", 0.85, r"Nan in summary histogram"),
    # cuBLAS could not create its handle (cublasCreate allocates device memory), PyTorch's words for what TF calls
    # "failed to create cublas handle" (version 6): the GPU's memory is taken.
    ("gpu_oom.cublas_create", "gpu_oom", 0.6, r"CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate"),
]]
# A named file or directory that is missing, in any library's words: "Image Not Found ../images/1.jpg",
# "Dataset not found at data/VOC2007", "Unable to find resource: /data/tfds", "Can't find a checkpoint index
# (checkpoint-1000) in ./output". A path-like token (a separator, or a file extension) within the line.
_FILE_NAME_TOKEN = (r"\b[\w-]+\.(?:jpe?g|png|bmp|tiff?|json|ya?ml|txt|csv|tsv|npy|npz|pkl|pickle"
                    r"|pth?|ckpt|bin|h5|hdf5|safetensors|tfrecords?|pb|onnx|wav|flac|mp[34]|avi|parquet|arrow|zip|tar|gz|xml"
                    r"|mat|cfg|model)\b")
_PATH_TOKEN = r"(?:(?<![\w.~-])[\w.~-]*[/\\][\w.~/\\-]*\w|" + _FILE_NAME_TOKEN + ")"
_NOT_FOUND_WORDS = (r"(?:not found|does ?n[o']t exist|not exist|(?:can ?not|can't|could ?not|couldn't) (?:be )?(?:find|found|located?)"
                    r"|unable to (?:find|locate)|failed to (?:find|locate)|is missing|are missing)")


def _named_path_missing(leading_words: str, path_token: str) -> tuple[str, str, float, re.Pattern]:
    """The named-path family: words that say something is missing and a path token on one line, either order."""
    return ("path_not_found.named_path_missing", "path_not_found", 0.8,
            _r(leading_words + r"[^\n]{0,80}?" + path_token + "|" + path_token + r"[^\n]{0,80}?" + _NOT_FOUND_WORDS))


PATH_MISSING = _named_path_missing(_NOT_FOUND_WORDS, _PATH_TOKEN)
# A value that an argument may not take, in the words libraries use for it, for exception types that say nothing by
# themselves (RuntimeError, Exception, AssertionError, a library's own error): "Invalid value for argument", "Unknown
# model name", "Unsupported optimizer type", "should be a positive integer value, but got", "must be one of".
ARGUMENT_WORDS = ("illegal_argument.argument_words", "illegal_argument", 0.75, _r(
    r"\b(?:invalid|unsupported|unknown|unrecogni[sz]ed|illegal) (?:value|argument|option|param(?:eter)?|config(?:uration)?|choice"
    r"|mode|model|arch(?:itecture)?|backbone|dataset|optimi[sz]er|scheduler|loss|activation|format|data ?type|dtype|strategy"
    r"|precision|norm(?:alization)?|type|name|key|input|setting|flag)s?\b"
    r"|\b(?:should|must|has to|needs to) be (?:a |an )?(?:positive|non-?negative|greater|less|larger|smaller|between|one of|in (?:\[|\(|range)"
    r"|divisible|at (?:least|most)|a multiple of|equal to|set|specified|provided|either)"
    r"|\bis not (?:a )?(?:supported|valid|allowed)\b|\bnot supported (?:yet|for|by|with|when|in)\b|\bexpected one of\b"))


_NESTED_TYPE = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): (.+)", re.S)


# The named-path family scans for path tokens, which is slow over text that cannot match: it is searched only in
# (lower-cased) texts that say something is missing, a gate of chosen words on top of its own literal gate.
_MISSING_GATE_WORDS = ("not found", "exist", "find", "found", "locat", "missing")   # on lower-cased text


class RuleSetV7(RuleSetV5):
    """Version 7: the argument-words family is read only where no rule and no exception type said anything (a
    TypeError about "an invalid combination of arguments" stays a type mismatch)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._rules = [(rule, literals.WordGate(_MISSING_GATE_WORDS, fast) if rule[0] == PATH_MISSING[0] else fast)
                       for rule, fast in self._rules]
        self._context_rules = [(rule, fast) for rule, fast in self._rules if rule[1] in _CONTEXT_CATEGORIES]

    def tag(self, exception_type: str, message: str, context: list[str] | None = None) -> Tag:
        nested = _NESTED_TYPE.match(message or "")
        if nested:   # "ValueError: TypeError: object of type 'RaggedTensor' has no len()": the inner error says why
            inner = self.tag(nested.group(1), nested.group(2), context)
            if inner.category != "unclassified":
                return inner
        found = super().tag(exception_type, message, context)
        if found.rule != "unclassified.no_rule":
            return found
        rid, category, confidence, pattern = ARGUMENT_WORDS
        text = _rule_text(exception_type.rsplit(".", 1)[-1], message)
        m = pattern.search(text)
        return Tag(category, confidence, rid, _evidence_line(text, m.start())) if m else found


def _v6_rules_with(path_missing) -> list[tuple[str, str, float, re.Pattern]]:
    """Version 6's list with a named-path family beside the missing-path rule."""
    rules = []
    for rule in RULES_V6_ADDED + FRAMEWORK_RULES + _without(MESSAGE_RULES, _V5_DROPPED):
        rules.append(rule)
        if rule[0] == "path_not_found.missing":
            rules.append(path_missing)
    return rules


# Readers and parsers of a file format that could not read what they were given (torchfile.T7ReaderException,
# xml.etree.ElementTree.ParseError, protobuf's DecodeError), after the rules that know a format's own words (JSON,
# pickles, images, codecs): the file's contents are not what its reader expects.
READER_EXCEPTIONS = ("corrupt_data.reader_exceptions", "corrupt_data", 0.8,
                     _r(r"^(?:[\w.]+\.)?\w*(?:ReaderException|ParseError|DecodeError):"))


# CPython's own TypeError texts for a call that does not fit the function's signature, where no type was printed
# ("**ERROR : CascadeRCNN: SwinTransformer: __init__() got an unexpected keyword argument 'embed_dim'**", a registry
# re-raising with the class names prepended): a type mismatch, as the taxonomy lists "unexpected keyword argument".
CALL_SIGNATURE = ("type_mismatch.call_signature", "type_mismatch", 0.85, _r(
    r"\(\) got an unexpected keyword argument|\(\) got multiple values for argument|\(\) missing \d+ required (?:positional |keyword-only )?arguments?"
    r"|\(\) takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given"))


# Version 7: its new families first, then version 6's rules with the named-path family, then the late families.
RULES_V7 = RuleSetV7("7", RULES_V7_ADDED + _v6_rules_with(PATH_MISSING) + [READER_EXCEPTIONS, CALL_SIGNATURE],
                     TYPE_DEFAULTS_V5)


# ------------------------------------------------------------------------------------------ version 8
# Tagging config "tagging:2026-11f". From a fifth development set sampled by repository (bench/devset/issues5),
# each rule from its producer's own text.
RULES_V8_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Windows' commit limit (winerror.h 1455 ERROR_COMMITMENT_LIMIT, "The paging file is too small for this operation
    # to complete"), met by Ray, PyTorch's DataLoader and NumPy on Windows: host memory (with swap) ran out.
    ("cpu_oom.windows_commit_limit", "cpu_oom", 0.85,
     r"paging file is too small|(?:GetLastError\(\) ?= ?|os error |WinError )1455\b"),
    # sentencepiece (sentencepiece_processor.cc): "model_proto->ParseFromArray(...)" failed: tokenizer.model is not a
    # serialized model (a git-lfs pointer, a cut download, another format).
    ("corrupt_data.sentencepiece_model", "corrupt_data", 0.85, r"model_proto->ParseFromArray|ParseFromArray\(serialized"),
    # NCCL's init check (init.cc: "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1a000"): two ranks
    # were given one GPU, a launch argument that does not fit the machine.
    ("illegal_argument.nccl_duplicate_gpu", "illegal_argument", 0.8, r"Duplicate GPU detected"),
    # A git-lfs pointer file read as data ("version https://git-lfs.github.com/spec/v1" in the error: kenlm's
    # FormatLoadException, tokenizers, safetensors headers): the repository was cloned without `git lfs pull`.
    ("corrupt_data.git_lfs_pointer", "corrupt_data", 0.85, r"version https://git-lfs\.github\.com/spec"),
    # TF on a TPU worker given a local path (tensorflow/core/platform/file_system: "File system scheme '[local]' not
    # implemented"): the worker cannot see the machine's disk; the data or checkpoint path must be on GCS. Before the
    # UNIMPLEMENTED status rule, which would say not_implemented.
    ("path_not_found.tpu_local_path", "path_not_found", 0.75, r"File system scheme '\[local\]' not implemented"),
    # TF graph and variable misuse in TF's own words: a variable read before it was initialised ("This could mean that
    # the variable was uninitialized", FailedPreconditionError), a graph built twice ("Duplicate node name in graph"),
    # variable scopes reused across towers ("variable_scope x/ was unused but the corresponding name_scope was already
    # taken").
    ("framework_api_misuse.tf_graph_texts", "framework_api_misuse", 0.85,
     r"This could mean that the variable was uninitialized|Duplicate node name in graph"
     r"|was unused but the corresponding name_scope was already taken"),
    # The shell's parse error on a script it was given (bash: "line 5: syntax error near unexpected token `,'"), as when
    # a Python file is run without its interpreter.
    ("syntax_error.shell", "syntax_error", 0.75, r"syntax error near unexpected token"),
    # torch.load of a file shorter than its records say ("unexpected EOF, expected 789915 more bytes. The file might be
    # corrupted."), and video loaders that cannot decode their input (PyTorchVideo / SlowFast: "Failed to decode by
    # pyav with exception", "Failed to fetch video after 10 retries"): the data on disk is damaged.
    ("corrupt_data.short_file_and_video_decode", "corrupt_data", 0.85,
     r"unexpected EOF, expected \d+ more bytes|The file might be corrupted|Failed to decode by \w+|Failed to fetch video after"),
    # The .NET and Java runtimes' null dereference (NullReferenceException "Object reference not set to an instance of an
    # object", NullPointerException), met where a trainer drives a C# or JVM side (Unity ML-Agents, Spark).
    ("null_reference.runtime_null", "null_reference", 0.9,
     r"NullReferenceException|Object reference not set to an instance of an object|NullPointerException"),
]]
# Configuration errors of a library's own kind (OLMoConfigurationError, hydra's ConfigCompositionException,
# DeepSpeed's DeepSpeedConfigError...), read after every rule whose message says more: a setting the job was given.
CONFIG_ERRORS = ("illegal_argument.config_error_type", "illegal_argument", 0.8,
                 _r(r"^(?:[\w.]+\.)?\w*(?<!mis)Config(?:uration|Composition)?(?:Error|Exception):"))   # not Lightning's Misconfiguration
# The named-path family of version 7, with libraries' "no <thing> found" wording ("No model found for dqn on
# SpaceInvadersNoFrameskip-v4, path: logs/dqn/SpaceInvadersNoFrameskip-v4.zip").
# A backslash separator needs a name before it: the "\\n" of a repr is no path.
_PATH_TOKEN_V8 = r"(?:(?<![\w.~-])(?:[\w.~-]*/|[\w.~-]+\\)[\w.~/\\-]*\w|" + _FILE_NAME_TOKEN + ")"
PATH_MISSING_V8 = _named_path_missing(r"(?:" + _NOT_FOUND_WORDS + r"|\bno [\w-]+ (?:was |were )?found\b)", _PATH_TOKEN_V8)


# Version 8: its new families before version 7's, and configuration error types before the late families.
RULES_V8 = RuleSetV7("8", RULES_V8_ADDED + RULES_V7_ADDED + _v6_rules_with(PATH_MISSING_V8)
                     + [CONFIG_ERRORS, READER_EXCEPTIONS, CALL_SIGNATURE], TYPE_DEFAULTS_V5)


# ------------------------------------------------------------------------------------------ version 9
# Tagging config "tagging:2026-11h". From a sixth development set sampled by repository (bench/devset/issues6), each
# rule from its producer's own text, and exception types whose library documents what they mean.
RULES_V9_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # TF's Saver (training/saver.py) when a checkpoint's variables do not fit the graph: "Restoring from checkpoint
    # failed. This is most likely due to a mismatch between the current graph and the graph from the checkpoint."
    ("tensor_mismatch.tf_restore_graph", "tensor_mismatch", 0.85,
     r"Restoring from checkpoint failed\. This is most likely due to a mismatch between the current graph and the graph"),
    # torch.distributions' argument validation (distribution.py: "Expected parameter loc (...) of distribution Normal
    # (...) to satisfy the constraint Real(), but found invalid values: tensor([[nan, ...") with NaN among the values:
    # the model's outputs went NaN.
    ("loss_nan.distribution_nan", "loss_nan", 0.8,
     r"to satisfy the constraint [\w.]+\(.{0,80}?\), but found invalid values:[\s\S]{0,400}?\bnan\b"),
    # torch's deserialiser (csrc/generic/serialization.cpp: "storage has wrong size: expected %ld got %ld"): the file's
    # storages are not what its records say, a cut or damaged checkpoint.
    ("corrupt_data.torch_storage_size", "corrupt_data", 0.8, r"storage has wrong size: expected \d+ got \d+"),
    # CPython's struct module packing a value its format cannot hold ("'i' format requires -2147483648 <= number <=
    # 2147483647", as multiprocessing does for a message over 2 GB): a value out of the argument's range.
    ("illegal_argument.struct_range", "illegal_argument", 0.75, r"format requires -?\d+ <= number <= \d+"),
    # TF graph misuse in TF's own words (ops/control_flow_util.py: "Cannot use 'a' as input to 'b' because they are in
    # different while loops"), torch's DataLoader refusing a changed attribute (utils/data/dataloader.py: "dataset
    # attribute should not be set after DataLoader is initialized"), torch.jit's tracer ("Only tensors or tuples of
    # tensors can be output from traced functions", "Tracing failed sanity checks! ... Graphs differed across
    # invocations"): the framework used against its rules.
    ("framework_api_misuse.graph_and_tracer_texts", "framework_api_misuse", 0.8,
     r"because they are in different while loops|attribute should not be set after \w+ is initialized"
     r"|can be output from traced functions|Tracing failed sanity checks|Graphs differed across invocations"),
    # TF's BFC allocator giving up on a GPU ("Allocator (GPU_0_bfc) ran out of memory trying to allocate 12.32MiB"), read
    # where no exception followed it (a log that ends on the allocator's report).
    ("gpu_oom.tf_bfc_allocator", "gpu_oom", 0.8, r"Allocator \(GPU_\d+_bfc\) ran out of memory trying to allocate"),
    # errno 21 EISDIR / 20 ENOTDIR in any wrapper ("Error: [Errno 21] Is a directory: '~/.cache/torch/hub/checkpoints/'"):
    # a path that names a directory where a file was meant, or the reverse.
    ("path_not_found.errno_directory", "path_not_found", 0.75, r"\[Errno 2[01]\] (?:Is a|Not a) directory"),
]]
# Exception types whose library says what they mean: librosa's ParameterError ("mal-formed inputs"), Python 3's
# aliases of OSError, validation errors (pydantic, jsonschema, marshmallow: a configuration that breaks its schema),
# huggingface_hub's and datasets' not-found errors (a repository, revision or file that does not exist), its
# HFValidationError (a repo id that is not one) and GatedRepoError (no access), TF's NotFoundError ("a requested
# entity, e.g. a file or directory, was not found"). Read after every message rule.
TYPE_DEFAULTS_V9: dict[str, tuple[str, float]] = {
    **TYPE_DEFAULTS_V5,
    "ParameterError": ("illegal_argument", 0.7),
    "IOError": ("path_not_found", 0.4), "EnvironmentError": ("path_not_found", 0.4),
    "ValidationError": ("illegal_argument", 0.7), "HFValidationError": ("illegal_argument", 0.8),
    "RepositoryNotFoundError": ("path_not_found", 0.75), "RevisionNotFoundError": ("path_not_found", 0.75),
    "EntryNotFoundError": ("path_not_found", 0.75), "LocalEntryNotFoundError": ("path_not_found", 0.75),
    "DatasetNotFoundError": ("path_not_found", 0.75), "GatedRepoError": ("permission_denied", 0.75),
    "NotFoundError": ("path_not_found", 0.6),
}
# TF's AutoGraph wraps an error raised inside a tf.function as "<Type>: in user code:" followed by the user's frames
# and, on its last typed line, the error itself ("    AssertionError: X must have rank 2").
_IN_USER_CODE = re.compile(r"^\s*in user code:\s*$", re.M)
_TYPED_LINE = re.compile(r"^\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)): (.+)$", re.M)


_ONLY_A_WRAPPER = re.compile(r"\s*\d+ root error\(s\) found\.?\s*")


class RuleSetV9(RuleSetV7):
    """Version 9: an error AutoGraph wrapped ("in user code:") is read by the error it wraps; a TF root error whose
    sub-error is only another wrapper line says no cause (version 9's type defaults must not read one into it)."""

    def tag(self, exception_type: str, message: str, context: list[str] | None = None) -> Tag:
        from .frameworks import tf_root_error
        sub = tf_root_error(message or "")
        if sub and _ONLY_A_WRAPPER.fullmatch(sub[1]):
            return Tag("unclassified", 0.2, "unclassified.tf_root_error",
                       (message or "").strip().splitlines()[0][:200] + " (no readable sub-error)")
        if message and _IN_USER_CODE.match(message):
            inner = _TYPED_LINE.findall(message)
            if inner:
                found = super().tag(inner[-1][0], inner[-1][1], context)
                if found.category != "unclassified":
                    return found
        return super().tag(exception_type, message, context)


RULES_V9 = RuleSetV9("9", RULES_V9_ADDED + RULES_V8_ADDED + RULES_V7_ADDED + _v6_rules_with(PATH_MISSING_V8)
                     + [CONFIG_ERRORS, READER_EXCEPTIONS, CALL_SIGNATURE], TYPE_DEFAULTS_V9)


# ------------------------------------------------------------------------------------------ version 10
# Tagging config "tagging:2026-11i". From a seventh development set sampled by repository (bench/devset/issues7),
# each rule from its producer's own text.
RULES_V10_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Python's recursion limit (RecursionError: "maximum recursion depth exceeded ..."): none of the 20 categories
    # fits; said plainly, so no model guesses one.
    ("unclassified.recursion_limit", "unclassified", 0.3, r"\bmaximum recursion depth exceeded\b"),
    # transformers' pipelines with no backend (pipelines/base.py: "At least one of TensorFlow 2.0 or PyTorch should be
    # installed."), and a library's "X should be installed" / "X is required but not installed".
    ("library_not_found.should_be_installed", "library_not_found", 0.8,
     r"\bshould be installed\b|\bis required but (?:is |was )?not installed\b"),
    # Gloo's TCP transport when the interface it was told to use (GLOO_SOCKET_IFNAME) has no address on this host
    # (gloo/transport/tcp/device.cc: "Unable to find address for: ib0"): a setting that names no interface here.
    ("illegal_argument.gloo_interface", "illegal_argument", 0.75, r"\bUnable to find address for: \S+"),
    # PyTorch 0.4's checked_cast_tensor ("Expected object of type CUDAByteType but found type CUDAFloatType for
    # argument #0 'result'"): a tensor of another dtype than the op takes.
    ("type_mismatch.expected_object_type", "type_mismatch", 0.85,
     r"Expected object of type \w+ but found type \w+ for argument"),
    # PyTorch's dimension wrapping (c10/core/WrapDimMinimal.cpp: "Dimension out of range (expected to be in range of
    # [-1, 0], but got 1)"): an index of a dimension the tensor does not have.
    ("illegal_index.dimension_out_of_range", "illegal_index", 0.8, r"\bdimension out of range \(expected to be\b"),
    # PyTorch's inference mode (autograd): "Inference tensors cannot be saved for backward", "Inplace update to
    # inference tensor outside InferenceMode is not allowed": a tensor made under torch.inference_mode used for training.
    ("framework_api_misuse.inference_tensor", "framework_api_misuse", 0.85,
     r"Inference tensors cannot be saved for backward|Inplace update to inference tensor outside InferenceMode"),
    # A glog CHECK on a shape, dimension or size ("Check failed: iz == filter_shape.dim(in_channel_index).size() (8
    # vs. 16)", as TF and MXNet print CHECK_EQ): two tensors' sizes disagree.
    ("tensor_mismatch.check_failed_shape", "tensor_mismatch", 0.7,
     r"Check failed: [^\n]*\b(?:shape|dims?|ndim|size|rank)\b[^\n]*\(\d+ vs\. \d+\)"),
    # TF's image decoders on a file of another format ("Got 30 frames, but animated gifs can only be decoded by
    # tf.image.decode_gif or tf.image.decode_image") and TF's Example parser on records of another schema
    # (example_proto_fast_parsing.cc: "Key: segment_ids.  Can't parse serialized Example.", "Could not parse example
    # input"): the data is not what the reader expects.
    ("corrupt_data.tf_record_or_image", "corrupt_data", 0.8,
     r"animated gifs can only be decoded by|Can't parse serialized Example|Could not parse example input"),
    # PyTorch's scatter/gather checks (ScatterGatherChecks.h: "Index tensor must have the same number of dimensions as
    # self tensor"): the index tensor's rank is not the data's.
    ("tensor_mismatch.index_tensor_rank", "tensor_mismatch", 0.8,
     r"Index tensor must have the same number of dimensions as (?:self|input|src|out(?:put)?) tensor"),
    # A library's shape check in its own words ("Expect node attribute `atom_feature` to have shape (8, *), but found
    # torch.Size([4, 18])", "expected input to have shape ... but got"): a tensor of another shape than expected.
    ("tensor_mismatch.to_have_shape", "tensor_mismatch", 0.75, r"\bto have shape\b[^\n]{0,80}?\bbut (?:found|got)\b"),
]]
# Python's OverflowError ("can't convert negative value to unsigned int", "Python int too large to convert to C long"):
# a value outside the range its parameter can hold.
TYPE_DEFAULTS_V10: dict[str, tuple[str, float]] = {**TYPE_DEFAULTS_V9, "OverflowError": ("illegal_argument", 0.6)}

RULES_V10 = RuleSetV9("10", RULES_V10_ADDED + RULES_V9_ADDED + RULES_V8_ADDED + RULES_V7_ADDED
                      + _v6_rules_with(PATH_MISSING_V8) + [CONFIG_ERRORS, READER_EXCEPTIONS, CALL_SIGNATURE],
                      TYPE_DEFAULTS_V10)

# Version 11 (tagging:2026-11n): the job's own failures among the platform's message templates
# (tests/fixtures/infra_templates, read in Slurm, botocore, requests and NCCL), each from its producer's text.
RULES_V11_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Slurm when the step's cgroup ran out of host memory: srun's "srun: error: <host>: task 3: Out Of Memory" and the
    # job state OUT_OF_MEMORY as sacct prints it.
    ("cpu_oom.slurm_out_of_memory", "cpu_oom", 0.85,
     r"\bsrun: error: \S+: tasks? [\d,\-\[\]]+: Out Of Memory\b|\bOUT_OF_MEMORY\b"),
    # An object that is not there: botocore's ClientError "An error occurred (404) when calling the HeadObject
    # operation: Not Found" / (NoSuchKey) / (NoSuchBucket), and requests' "404 Client Error: Not Found for url".
    ("path_not_found.remote_object", "path_not_found", 0.8,
     r"An error occurred \((?:404|NoSuchKey|NoSuchBucket)\) when calling the \w+ operation"
     r"|\b404 Client Error: Not Found for url\b"),
    # requests' "401 Client Error: Unauthorized for url" / "403 Client Error: Forbidden for url": no token, or no
    # access to a gated repository or a private bucket.
    ("permission_denied.http_unauthorized", "permission_denied", 0.8, r"\b40[13] Client Error: (?:Unauthorized|Forbidden) for url\b"),
    # ncclGetErrorString(ncclInvalidUsage): "invalid usage (run with NCCL_DEBUG=WARN for details)", and the detail
    # "ncclInvalidUsage: This usually reflects invalid usage of NCCL library." (two ranks on one GPU, mismatched calls).
    ("framework_api_misuse.nccl_invalid_usage", "framework_api_misuse", 0.75,
     r"\bncclInvalidUsage\b|invalid usage of NCCL library"),
]]
RULES_V11 = RuleSetV9("11", RULES_V11_ADDED + RULES_V10.message_rules, TYPE_DEFAULTS_V10)

# ------------------------------------------------------------------------------------------ version 12
# Tagging config "tagging:2026-11s". Each rule from its producer's own text; what they were prompted by is named in
# docs/grouping-configs.md (the retired held-out sets, training data since session 13).
RULES_V12_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # argparse's _get_value: "argument %s: invalid %(type)s value: %(value)r", where type is the converter's __name__ or
    # repr ("invalid typing.Optional[int] value", "invalid 'multitask_weights' value"), not only int/float/bool.
    ("illegal_argument.argparse_invalid_value", "illegal_argument", 0.9,
     r"\bargument [^\n:]{1,80}: invalid [^\n]{1,80}? value: "),
    # dash (Debian's /bin/sh, so os.system and subprocess with shell=True): "sh: 1: allennlp: not found", bash's
    # "command not found" in its own words: a program that is not installed or not on PATH.
    ("library_not_found.dash_not_found", "library_not_found", 0.85, r"^(?:/bin/)?(?:sh|dash): \d+: [^\s:]+: not found\s*$"),
    # PyTorch's zip checkpoint reader (caffe2/serialize/inline_container.cc) on a file that is not a whole torch.save
    # archive: "Expected hasRecord("version") to be true, but got false."
    ("corrupt_data.torch_archive_record", "corrupt_data", 0.8, r"\bhasRecord\(\"version\"\)"),
    # c10's size check when a tensor is made: "Trying to create tensor with negative dimension -1: [-1]".
    ("illegal_argument.negative_dimension", "illegal_argument", 0.8, r"\bTrying to create tensor with negative dimension\b"),
    # THC's device check in older PyTorch: "arguments are located on different GPUs at .../THCTensorMath...cu:31".
    ("framework_api_misuse.thc_different_gpus", "framework_api_misuse", 0.85, r"\barguments are located on different GPUs\b"),
]]
# Typographic quotes, as a pasted message picks them up from a word processor or a web page ("name ‘PeftModel’ is not
# defined"): read as the ASCII quotes the producers print.
_TYPOGRAPHIC_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


class RuleSetV12(RuleSetV9):
    """Version 12: version 11's rules and the ones above, on the message with typographic quotes read as ASCII."""

    def tag(self, exception_type: str, message: str, context: list[str] | None = None) -> Tag:
        return super().tag(exception_type, (message or "").translate(_TYPOGRAPHIC_QUOTES), context)


RULES_V12 = RuleSetV12("12", RULES_V12_ADDED + RULES_V11.message_rules, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 13
# Tagging config "tagging:2026-11v". A network that did not answer, in the C library's words (glibc's strerror for
# ENETUNREACH 101, ETIMEDOUT 110, EHOSTDOWN 112, EHOSTUNREACH 113, as Python's OSError prints them): before, an OSError
# with no other rule took its type's default, path_not_found with "do not retry", which is wrong advice for an outage.
# None of the 20 categories fits, and whether a platform's network failed or a node has no route out is not in the
# line: said plainly as unclassified (retry), so no model guesses a category. Where the infrastructure rules know the
# sender (NCCL's socket, c10d's store), they still decide after the tag.
RULES_V13_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    ("unclassified.network_unreachable", "unclassified", 0.3,
     r"\[Errno (?:101|110|112|113)\]|\bNetwork is unreachable\b|\bNo route to host\b|\bHost is down\b"),
]]
RULES_V13 = RuleSetV12("13", RULES_V13_ADDED + RULES_V12.message_rules, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 14
# Tagging config "tagging:2026-11x". Each rule from its producer's own text, none from a log we hold.
# First, two host-memory failures that the GPU rules read as GPU memory or not at all:
RULES_V14_FIRST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Ray's memory monitor (ray/exceptions.py OutOfMemoryError, "the node is running out of memory"): "Task was killed
    # due to the node running low on memory.", "1 worker(s) were killed due to the node running low on memory". Host
    # memory, not the GPU's, whatever the class is called.
    ("cpu_oom.ray_memory_monitor", "cpu_oom", 0.9, r"\bkilled due to the node running low on memory\b"),
    # PyTorch's shared-memory tensors (aten MapAllocator: "unable to open shared memory object <%s> in read-write mode:
    # %s (%d)", "unable to write to file <%s>: %s (%d)", "unable to mmap %d bytes from file <%s>: %s (%d)") when
    # /dev/shm is full: the data loader's shared memory, as "insufficient shared memory (shm)" already is.
    ("cpu_oom.torch_shared_memory_full", "cpu_oom", 0.85,
     r"\bunable to (?:open shared memory object|write to file|mmap \d+ bytes from file) <[^>\n]{1,200}>[^\n]{0,40}?: "
     r"No space left on device \(28\)"),
]]
# Then, after every other message rule and before the type defaults: an OSError whose errno says what failed, in the
# C library's words (glibc strerror, as Python prints "[Errno N] text"). Before, an OSError no rule knew took its type's
# default, path_not_found with "do not retry", even when its errno names no path. Errnos that name a path (ENOENT,
# ENOTDIR, EISDIR, EEXIST, ENOTEMPTY, EXDEV, ENAMETOOLONG, ELOOP, ENXIO, ENODEV) keep that default; the ones rules
# already read (EPERM, EACCES, EROFS, ENOMEM, EINVAL, the network's 101/110/112/113) and the storage errnos the
# infrastructure rules read keep their rules.
RULES_V14_LAST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # A system call that this kernel or file system does not provide (ENOSYS 38, EOPNOTSUPP 95): "Function not
    # implemented" (HDF5's file lock on a network file system), "Operation not supported".
    ("not_implemented.errno_unsupported", "not_implemented", 0.6,
     r"\[Errno (?:38|95)\]|\bFunction not implemented\b|\bOperation not supported\b"),
    # A per-process or system limit (EMFILE 24, ENFILE 23, EAGAIN 11, ENOBUFS 105; Python's "can't start new thread"):
    # none of the 20 categories fits; said plainly, so no model guesses one.
    ("unclassified.os_resource_limit", "unclassified", 0.3,
     r"\[Errno (?:11|23|24|105)\]|\bToo many open files\b|\bResource temporarily unavailable\b"
     r"|\bNo buffer space available\b|\bcan't start new thread\b"),
    # A port or address this host cannot bind (EADDRINUSE 98, EADDRNOTAVAIL 99): usually another run on the same port.
    ("unclassified.address_in_use", "unclassified", 0.3,
     r"\[Errno (?:98|99)\]|\bAddress already in use\b|\bCannot assign requested address\b"),
    # A connection refused, dropped or never made (ECONNREFUSED 111, EPIPE 32, ENETDOWN 100, ENETRESET 102,
    # ECONNABORTED 103, ENOTCONN 107, ESHUTDOWN 108) or a name that did not resolve (getaddrinfo's EAI_NONAME -2 and
    # EAI_AGAIN -3): whether the peer, the network or the job's own address is at fault is not in the line.
    ("unclassified.connection_failed", "unclassified", 0.3,
     r"\[Errno (?:32|100|102|103|107|108|111|-2|-3)\]|\bConnection refused\b|\bBroken pipe\b|\bNetwork is down\b"
     r"|\bSoftware caused connection abort\b|\bTransport endpoint is not connected\b"
     r"|\bCannot send after transport endpoint shutdown\b|\bTemporary failure in name resolution\b"
     r"|\bName or service not known\b"),
    # Any other errno that names no path (ESRCH, EINTR, EBADF, EBUSY, ETXTBSY, EFBIG, ERANGE...): an OSError, but not a
    # missing file; said plainly.
    ("unclassified.os_errno", "unclassified", 0.25,
     r"\[Errno (?!(?:2|6|17|18|19|20|21|36|39|40)\])\d+\]"),
]]
RULES_V14 = RuleSetV12("14", RULES_V14_FIRST + RULES_V13.message_rules + RULES_V14_LAST, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 15
# Tagging config "tagging:2026-11y". Common producers' texts that no labelled log we hold contains, each read as the
# taxonomy reads its kind: justified by the producer's text alone, as issue #14.7 asks of a rule with few examples.
RULES_V15_FIRST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # HDF5's file lock (h5py: "Unable to open file (unable to lock file, errno = 38, error message = 'Function not
    # implemented')"): a file system without locks (NFS, Lustre) is unsupported, not a missing file; errno 11 is another
    # process holding the lock, said plainly. Before the path rules, which read "Unable to open file".
    ("not_implemented.hdf5_lock_unsupported", "not_implemented", 0.8, r"\bunable to lock file, errno = (?:38|95)\b"),
    ("unclassified.hdf5_file_locked", "unclassified", 0.3, r"\bunable to lock file, errno = 11\b"),
]]
RULES_V15_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # CPython's codec registry (codecs.lookup: "unknown encoding: utf8mb4"): text in an encoding Python cannot read.
    ("unexpected_encoding.unknown_encoding", "unexpected_encoding", 0.85, r"\bunknown encoding: \S"),
    # A driver older than PyTorch's CUDA ("The NVIDIA driver on your system is too old (found version %d)"), as the CUDA
    # runtime's "CUDA driver version is insufficient" already is; a PyTorch build without a backend ("Distributed
    # package doesn't have NCCL built in"), as "Torch not compiled with CUDA enabled" already is.
    ("library_not_found.gpu_driver_or_build", "library_not_found", 0.85,
     r"NVIDIA driver on your system is too old|Distributed package doesn't have (?:NCCL|MPI|Gloo) built in"),
    # TF 1 graph APIs under TF 2's eager execution ("tf.placeholder() is not compatible with eager execution.",
    # "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead."), and PyTorch's
    # view of a non-contiguous tensor ("view size is not compatible with input tensor's size and stride ... Use
    # .reshape(...) instead."): an API used against the framework's assumptions.
    ("framework_api_misuse.eager_or_view", "framework_api_misuse", 0.85,
     r"is not compatible with eager execution|is not supported when eager execution is enabled"
     r"|view size is not compatible with input tensor's size and stride"),
    # An archive or a YAML file that is not what its reader expects: tarfile's ReadError "file could not be opened
    # successfully", PyYAML's scanner and parser ("mapping values are not allowed here", "could not find expected ':'",
    # "expected <block end>, but found", "found character '\t' that cannot start any token"), as a zip, a gzip or a
    # JSON file already is.
    ("corrupt_data.archive_or_yaml", "corrupt_data", 0.8,
     r"\bfile could not be opened successfully\b|\bmapping values are not allowed here\b"
     r"|could not find expected ':'|\bexpected <block end>, but found\b|that cannot start any token\b"),
    # An HTTP read that timed out (urllib3 "Read timed out."), where the infrastructure rules do not know the host as
    # an object store: said plainly, as a connection that failed.
    ("unclassified.read_timed_out", "unclassified", 0.3, r"\bRead timed out\b"),
]]
RULES_V15 = RuleSetV12("15", RULES_V15_FIRST + RULES_V14_FIRST + RULES_V13.message_rules + RULES_V15_ADDED
                       + RULES_V14_LAST, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 16
# Tagging config "tagging:2026-11z". Written from message templates read in their producers' sources
# (tests/fixtures/program_templates: PyTorch, TensorFlow, Keras, JAX, Flax, MXNet, Hugging Face, accelerate, peft,
# DeepSpeed, bitsandbytes, timm, apex, CPython, PyYAML, omegaconf, Pillow, conda), where version 15 said nothing
# or read a missing path, a weak type default or the wrong kind into them. Where the templates' readers chose another
# category than a rule the taxonomy backs, the rule stands (the table in the fixtures' README).
# First, texts that the path and attribute rules misread:
_ARCHIVE_OR_YAML = next(rule for rule in RULES_V15_ADDED if rule[0] == "corrupt_data.archive_or_yaml")
RULES_V16_FIRST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # PyTorch's dispatcher ("Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. ... or was omitted
    # during the selective/custom build process"): no kernel for this backend; its "selective/custom" read as a path.
    ("not_implemented.backend_kernel_missing", "not_implemented", 0.85,
     r"Could not run '[\w:.]+' with arguments from the '\w+' backend"),
    # TF 1's variable scopes ("Variable d/dense/kernel does not exist, or was not created with tf.get_variable(). Did
    # you mean to set reuse=tf.AUTO_REUSE in VarScope?"), as "already exists, disallowed" is.
    ("framework_api_misuse.tf_variable_reuse", "framework_api_misuse", 0.85,
     r"does not exist, or was not created with tf\.get_variable\(\)"),
    # Flax's scopes: a parameter of another shape than its initializer makes (ScopeParamShapeError), or none of that
    # name (ScopeParamNotFoundError): the parameters do not fit the model, as a state_dict that does not.
    ("tensor_mismatch.flax_params", "tensor_mismatch", 0.8,
     r"the given initializer is expected to generate shape|Could not find parameter named \"[^\"\n]+\" in scope"),
    # bitsandbytes' CUDA set-up ("CUDA Setup failed despite GPU being available", "CUDA SETUP ERROR: Missing dependency:
    # libcusparse.so.12", "CUDA VERSION MISMATCH"): its native library cannot load.
    ("library_not_found.bitsandbytes_cuda_setup", "library_not_found", 0.85,
     r"CUDA Setup failed despite GPU being available|CUDA SETUP ERROR: Missing dependency|CUDA VERSION MISMATCH"),
    # omegaconf's struct mode ("Key 'num_workers' is not in struct"), raised as ConfigAttributeError or ConfigKeyError.
    ("key_not_found.omegaconf_struct", "key_not_found", 0.85, r"\bKey '[^'\n]+' is not in struct\b"),
    # A script saved with Windows line ends ("/bin/bash^M: bad interpreter: No such file or directory").
    ("unexpected_encoding.crlf_script", "unexpected_encoding", 0.9, r"(?:\^M|\r): bad interpreter\b"),
    # Hugging Face: a gated model without access ("You are trying to access a gated repo", "Cannot access gated repo
    # for url"), as GatedRepoError is; a config that is not JSON ("It looks like the config file at '...' is not a
    # valid JSON file."); a local path that does not exist, read as a Hub id (HFValidationError "Repo id must be in
    # the form 'repo_name' or 'namespace/repo_name': '/models/x'").
    ("permission_denied.hf_gated_repo", "permission_denied", 0.85, r"\baccess (?:to )?(?:a |the )?gated repo\b"),
    ("corrupt_data.hf_config_not_json", "corrupt_data", 0.85, r"\bis not a valid JSON file\b"),
    ("path_not_found.hf_repo_id_is_a_path", "path_not_found", 0.8,
     r"Repo id must be in the form 'repo_name' or 'namespace/repo_name': '(?:/|\.{1,2}/|~)"),
]] + [_ARCHIVE_OR_YAML]   # version 15's, before the path rules now
RULES_V16_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # torchvision's datasets with no data where they look ("Dataset not found or corrupted. You can use download=True
    # to download it"; ImageFolder's "Found 0 images in subfolders of /data/train").
    ("path_not_found.torchvision_dataset", "path_not_found", 0.85,
     r"Dataset not found or corrupted\. You can use download=True|\bFound 0 (?:images|files) in subfolders of\b"),
    # Shapes in the producers' words: PyTorch's convolution ("Kernel size can't be greater than actual input size"),
    # nll_loss ("0D or 1D target tensor expected, multi-target not supported"), item() ("a Tensor with 32 elements
    # cannot be converted to Scalar"); TF's cross-entropy kernel ("logits and labels must be same size" /
    # "broadcastable") and tf.data's batching ("Cannot batch tensors with different shapes in component 0"); timm's
    # patch embedding ("Input height (384) doesn't match model (224)"); a tokenizer's batch of unequal lengths ("Unable
    # to create tensor, you should probably activate truncation and/or padding"); a checkpoint without a parameter the
    # model has (safetensors "File does not contain tensor lm_head.weight", MXNet's "Parameter 'w' is missing in
    # file"), as a state_dict's missing keys are.
    ("tensor_mismatch.producers_v16", "tensor_mismatch", 0.8,
     r"Kernel size can't be greater than actual input size|0D or 1D target tensor expected, multi-target not supported"
     r"|a Tensor with \d+ elements cannot be converted to Scalar|logits and labels must be (?:same size|broadcastable)"
     r"|Cannot batch tensors with different shapes in component|\bInput (?:height|width) \(\d+\) doesn't match model"
     r"|Unable to create tensor, you should probably activate truncation and/or padding"
     r"|\bFile does not contain tensor\b|\bParameter '[^'\n]+' is missing in '?file\b"),
    # dtypes in the producers' words: PyTorch's matmul ("mat1 and mat2 must have the same dtype") and cross-entropy with
    # class probabilities ("Expected floating point type for target with class probabilities, got Long"); FlashAttention
    # ("only support fp16 and bf16 data type"); a tokenizer's input ("text input must be of type `str`"); omegaconf's
    # typed fields ("Value '1e-3' of type 'str' could not be converted to Integer"); Pillow's writers ("cannot write
    # mode RGBA as JPEG").
    ("type_mismatch.producers_v16", "type_mismatch", 0.8,
     r"mat1 and mat2 must have the same dtype|Expected floating point type for target with class probabilities"
     r"|FlashAttention only supports? fp16 and bf16 data type|\btext input must be of type `str`"
     r"|\bValue '[^'\n]*' of type '\w+' could not be converted to \w+|\bcannot write mode \w+ as \w+"),
    # TF's sparse cross-entropy given a class id outside [0, n) ("Received a label value of 10 which is outside the
    # valid range of [0, 10)"), as CUDA's "t >= 0 && t < n_classes" is.
    ("illegal_index.label_out_of_range", "illegal_index", 0.85,
     r"Received a label value of -?\d+ which is outside the valid range"),
    # APIs used against their framework's assumptions: MXNet's autograd outside record() ("Cannot differentiate node
    # because it is not in a computational graph") and Gluon's deferred initialisation ("has not been initialized yet
    # because initialization was deferred"); JAX's jit across devices ("Received incompatible devices for jitted
    # computation") and grad of a non-scalar ("Gradient only defined for scalar-output functions"); Keras 3's
    # unregistered custom class ("Could not locate class 'X'. Make sure custom classes ... are decorated"), as Keras
    # 2's "Unknown layer" is; datasets' dropped loading scripts ("Dataset scripts are no longer supported");
    # safetensors' shared or non-contiguous tensors ("Some tensors share memory", "You are trying to save a non
    # contiguous tensor"); PyYAML's safe loader on Python tags ("could not determine a constructor for the tag
    # 'tag:yaml.org,2002:python/tuple'").
    ("framework_api_misuse.producers_v16", "framework_api_misuse", 0.8,
     r"Cannot differentiate node because it is not in a computational graph"
     r"|has not been initialized yet because initialization was deferred"
     r"|Received incompatible devices for jitted computation|Gradient only defined for scalar-output functions"
     r"|Could not locate class '[^'\n]+'\. Make sure custom classes|Dataset scripts are no longer supported"
     r"|Some tensors share memory, this will lead to duplicate memory|You are trying to save a non contiguous tensor"
     r"|could not determine a constructor for the tag 'tag:yaml\.org,2002:python/"),
    # transformers' models without a feature ("GPT2LMHeadModel does not support Flash Attention 2.0 yet", "does not
    # support gradient checkpointing").
    ("not_implemented.model_feature", "not_implemented", 0.8,
     r"\bdoes not support (?:Flash Attention 2\.0|gradient checkpointing)\b"),
    # transformers' NaN debugger ("DebugUnderflowOverflow: inf/nan detected, aborting").
    ("loss_nan.debug_underflow_overflow", "loss_nan", 0.85, r"\bDebugUnderflowOverflow: inf/nan detected\b"),
    # accelerate's find_executable_batch_size, which halves the batch on each CUDA OOM ("No executable batch size
    # found, reached zero.").
    ("gpu_oom.no_executable_batch_size", "gpu_oom", 0.85, r"\bNo executable batch size found, reached zero\b"),
    # peft's LoRA config naming modules the model does not have ("Target modules {'q_proj', 'v_proj'} not found in
    # the base model").
    ("illegal_argument.peft_target_modules", "illegal_argument", 0.8, r"\bTarget modules? [^\n]{0,300}? not found in the base model\b"),
    # Extensions that cannot be built or loaded here, as version 7's extension_build reads PyTorch's: DeepSpeed's op builder ("CUDA_HOME does not exist, unable to
    # compile CUDA op(s)", "Installed CUDA version 12.2 does not match the version torch was compiled with", "Unable
    # to JIT load the async_io op due to it not being compatible"), apex's setup ("Cuda extensions are being compiled
    # with a version of Cuda that does not match"), conda ("The following packages are not available from current
    # channels").
    ("library_not_found.op_builder_or_channel", "library_not_found", 0.8,
     r"CUDA_HOME does not exist, unable to compile CUDA op|Installed CUDA version [\d.]+ does not match the version torch"
     r"|Unable to JIT load the \w+ op due to it not being compatible"
     r"|Cuda extensions are being compiled with a version of Cuda that does not match"
     r"|The following packages are not available from current channels"),
    # conda given an environment that is not there ("Not a conda environment: /home/u/miniconda3/envs/train").
    ("path_not_found.conda_environment", "path_not_found", 0.8, r"\bNot a conda environment: \S"),
]]
# Every rule of version 16 but the errno rules, which stay last in every later version too.
_RULES_V16_BEFORE_ERRNOS = (RULES_V16_FIRST + RULES_V15_FIRST + RULES_V14_FIRST + RULES_V13.message_rules
                            + [rule for rule in RULES_V15_ADDED if rule is not _ARCHIVE_OR_YAML]
                            + RULES_V16_ADDED)
RULES_V16 = RuleSetV12("16", _RULES_V16_BEFORE_ERRNOS + RULES_V14_LAST, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 17
# Tagging config "tagging:2026-11zb". From a second round of program templates (tests/fixtures/program_templates:
# openmmlab_detectron2.tsv, toolkits.tsv), where version 16 said nothing or read a missing path, a syntax error or a
# missing key into a text that says otherwise. First, before the path, syntax and key rules that misread them:
RULES_V17_FIRST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # ultralytics raises SyntaxError for a data YAML or an argument it rejects (data/utils.py, cfg/__init__.py): "data.yaml
    # 'train:' key missing ❌", "'names' length 3 and 'nc: 80' must match", "'image_weights' is not a valid YOLO argument".
    ("key_not_found.ultralytics_data_yaml", "key_not_found", 0.85, r"\bkey missing ❌"),
    ("illegal_argument.ultralytics_arguments", "illegal_argument", 0.85,
     r"'names' length \d+ and 'nc: \d+' must match|\bis not a valid YOLO argument\b"),
    # A key error that is not a missing key: a registry's duplicate name (mmengine/mmcv Registry: "X is already
    # registered in model at ..."), a config's duplicate base keys, a config list index ("Index 3 exceeds the length of
    # list").
    ("framework_api_misuse.already_registered", "framework_api_misuse", 0.8, r"\bis already registered in \w+"),
    ("illegal_argument.config_duplicate_key", "illegal_argument", 0.8, r"\bDuplicate key is not allowed among bases\b"),
    ("illegal_index.config_list_index", "illegal_index", 0.8, r"\bIndex -?\d+ exceeds the length of list\b"),
    # mmcv's checkpoint loader on a file without weights ("No state_dict found in checkpoint file X"): the path rules
    # read its "found ... file" as a missing path.
    ("corrupt_data.no_state_dict_in_checkpoint", "corrupt_data", 0.8, r"\bNo state_dict found in checkpoint file\b"),
    # Audio I/O without its native library: torchaudio ("Couldn't find appropriate backend to handle uri X"),
    # soundfile ("sndfile library not found", cffi's "cannot load library 'libsndfile").
    ("library_not_found.audio_backend", "library_not_found", 0.85,
     r"\bCouldn't find appropriate backend to handle uri\b|\bsndfile library not found\b|cannot load library '?libsndfile"),
    # OSErrors that name no missing path: mmengine's config loader ("Only py/yml/yaml/json type are supported now!"),
    # OpenNMT-py's vocabulary guard ("path X exists, stop.") and corpus reader ("Empty line in corpus_1#10452").
    ("illegal_argument.config_file_type", "illegal_argument", 0.8, r"\bOnly py/yml/yaml/json type are supported\b"),
    ("illegal_argument.onmt_path_exists", "illegal_argument", 0.75, r"\bpath \S+ exists, stop\b"),
    ("corrupt_data.onmt_empty_line", "corrupt_data", 0.75, r"\bEmpty line +in \S+#\d+"),
]]
RULES_V17_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # fairseq: a checkpoint that is not one of its own ("Neither args nor cfg exist in state keys"), one of another
    # architecture ("Cannot load model parameters from checkpoint X; please ensure that the architectures match"), a
    # dictionary with an encoding or duplicate problem, a sample longer than the model takes, a language pair it
    # cannot infer, a dummy batch never set (too few examples for the batch).
    ("corrupt_data.fairseq_data", "corrupt_data", 0.8,
     r"\bNeither args nor cfg exist in state keys\b|\bDuplicate word found when loading Dictionary\b"),
    ("tensor_mismatch.fairseq_architecture", "tensor_mismatch", 0.85,
     r"\bCannot load model parameters from checkpoint \S+; please ensure that the architectures match\b"),
    ("unexpected_encoding.fairseq_dictionary", "unexpected_encoding", 0.85, r"\bIncorrect encoding detected in \S+"),
    ("illegal_argument.fairseq_arguments", "illegal_argument", 0.8,
     r"\bSize of sample #\d+ is invalid \(=\d+\) since max_positions=|\bCould not infer language pair\b"
     r"|\bTrying to use an uninitialized 'dummy' batch\b"),
    # Data a reader rejects: ultralytics ("No valid images found in X. Images with incorrectly formatted labels are
    # ignored"), soundfile ("Error opening 'x.mp3': Format not recognised."), ESPnet's Kaldi-style lists ("scp file
    # must have two or more columns", "utt_0012 is duplicated (dump/raw/train/text:13)", "keys are mismatched
    # between"), detectron2's annotation sizes (SizeMismatchError "Mismatched image shape for image").
    ("corrupt_data.reader_rejects_data", "corrupt_data", 0.8,
     r"\bNo valid images found in \S+\. Images with incorrectly formatted labels\b|\bError opening .{1,300}: Format not recognised\b"
     r"|\bscp file must have two or more columns\b|\bis duplicated \([^()\s]+:\d+\)|\bkeys are mismatched between\b"
     r"|\bMismatched image shape for image\b"),
    # soundfile on a file it cannot open at all ("Error opening '/data/wavs/utt001.wav': System error."): libsndfile's
    # word for a file that is not there or not readable.
    ("path_not_found.soundfile_open", "path_not_found", 0.7, r"\bError opening .{1,300}: System error\b"),
    # detectron2's model zoo ("model not present in the catalog: ImageNetPretrained/MSRA/R-50-typo").
    ("key_not_found.model_catalog", "key_not_found", 0.8, r"\bmodel not present in the catalog\b"),
    # mmcv's ops: tensors on different devices ("roi_align_forward_impl: at param 1, inconsistent device: cpu vs
    # cuda:0"), ops built without this device or missing from its extension ("nms_impl: implementation for device
    # cuda:0 not found", "nms_rotated miss in module _ext").
    ("framework_api_misuse.mmcv_op_device", "framework_api_misuse", 0.8, r"\bat param \d+, inconsistent device: \w+"),
    ("library_not_found.mmcv_op_missing", "library_not_found", 0.8,
     r"\bimplementation for device \S+ not found\b|\b\w+ miss in module _ext\b"),
    # mmengine's Runner asked to train without a train loop ("`self._train_loop` should not be None when calling train
    # method").
    ("framework_api_misuse.mmengine_loop", "framework_api_misuse", 0.8, r"`self\._(?:train|val|test)_loop` should not be None"),
]]
RULES_V17 = RuleSetV12("17", RULES_V17_FIRST + _RULES_V16_BEFORE_ERRNOS + RULES_V17_ADDED + RULES_V14_LAST,
                       TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 18
# Tagging config "tagging:2026-11zf". Keras calls a layer inside an error handler (keras/utils/traceback_utils.py in
# Keras 2.13+, keras/src/utils/traceback_utils.py in Keras 3) that re-raises the layer's error as
#   "Exception encountered when calling layer 'model' (type Functional).\n\n<the error>\n\nCall arguments received by
#   layer 'model' (type Functional):\n  • inputs=tf.Tensor(shape=(None, 128), dtype=uint8) ..."
# (Keras 3: "Exception encountered when calling Functional.call().", the error in bold, "Arguments received by
# Functional.call():"). Inside AutoGraph's "in user code:" version 9
# read only the last typed line, Keras' header, which says no cause; and anywhere, the arguments Keras lists after
# the error (shapes, dtypes, None masks) are no part of it. Version 18 reads the error between the two.


class RuleSetV18(RuleSetV12):
    """Version 18: an error Keras re-raised from a layer call is read by the error, not by Keras' header or the
    arguments it lists."""

    def tag(self, exception_type: str, message: str, context: list[str] | None = None) -> Tag:
        if message and _IN_USER_CODE.match(message):
            inner = list(_TYPED_LINE.finditer(message))
            if inner and KERAS_CALL_HEADER.match(inner[-1].group(2)):
                exception_type, message = inner[-1].group(1), message[inner[-1].start(2):]
        if message and KERAS_CALL_HEADER.match(message):
            arguments = KERAS_CALL_ARGUMENTS.search(message)
            message = message[:arguments.start()].rstrip() if arguments else message
        return super().tag(exception_type, message, context)


RULES_V18 = RuleSetV18("18", RULES_V17.message_rules, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 19
# Tagging config "tagging:2026-11zg". From a third round of program templates (tests/fixtures/program_templates3: the
# array, media, CUDA, distributed, LLM and configuration libraries), where version 18 said nothing, took a type's
# default or read a missing path or a permission into a text that says otherwise. Each rule is its producers' words.
RULES_V19_FIRST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Media and model files that do not decode: Pillow's decoders ("broken data stream when reading image file",
    # "decoder error -2 when reading image file", "cannot load this image"; its parsers raise SyntaxError: "broken PNG
    # file", "unknown pixel mode"), FFmpeg's AVERROR_INVALIDDATA text as PyAV and torchaudio print it ("Invalid data
    # found when processing input") and its mov demuxer ("moov atom not found"), decord's readers ("ERROR getting stream
    # info", "due to broken metadata", "av_read_frame failed", "the video might have corrupted frames"), nibabel's
    # ("could the file be damaged?"), pydicom's ("the dataset may be corrupted"), sentencepiece's model
    # ("could not parse ModelProto from"), tiktoken's download check ("Hash mismatch for data downloaded from"),
    # ONNX Runtime's ("INVALID_PROTOBUF", "Protobuf parsing failed"). Before, OSError's default read a missing path.
    ("corrupt_data.media_or_model_decode", "corrupt_data", 0.85,
     r"\b(?:broken data stream|decoder error -?\d+) when reading image file\b|\bcannot load this image\b"
     r"|\bbroken PNG file\b|\bunknown pixel mode\b|\bInvalid data found when processing input\b|\bmoov atom not found\b"
     r"|\bERROR getting stream info\b|\bdue to broken metadata\b|\bav_read_frame failed\b"
     r"|\b(?:may|might) (?:be|have) corrupted\b|\bcould the file be damaged\b|\bcould not parse ModelProto from\b"
     r"|\bHash mismatch for data downloaded from\b|\bINVALID_PROTOBUF\b|\bProtobuf parsing failed\b"),
    # A codec, backend or build the installed package lacks: Pillow ("decoder jpeg not available"), PyAV ("Decoder not
    # found", UnknownCodecError), decord built without CUDA ("CUDA not enabled. Requested context GPU(0)"), pydicom's
    # pixel handlers ("missing required dependencies"), headless OpenCV ("The function is not implemented. Rebuild the
    # library with Windows, GTK+ 2.x or Cocoa support"), bitsandbytes ("not available in CPU-only version of
    # bitsandbytes", "No compatible CUDA binary found at"), Horovod ("horovod does not find an installed MPI", "Neither
    # MPI nor Gloo support has been built").
    ("library_not_found.codec_or_build", "library_not_found", 0.8,
     r"\b(?:de|en)coder \w+ not available\b|\b(?:De|En)coder not found\b|\bUnknownCodecError\b"
     r"|\bCUDA not enabled\. Requested context GPU\b|\bmissing required dependencies\b|\bRebuild the library with\b"
     r"|\bnot available in CPU-only version of bitsandbytes\b|\bNo compatible CUDA binary found at\b"
     r"|\bhorovod does not find an installed MPI\b|\bNeither MPI nor Gloo support has been built\b"),
    # The toolchain a compiler or kernel library needs: torch.compile's ("No working C++ compiler found"), Triton's
    # ("Failed to find C compiler", "too old to be supported by the triton GPU compiler", ptxas's "is not defined for
    # option 'gpu-name'"), PyTorch's ("cuDNN/MIOpen library not found", "libcudart functions unavailable"), TF's ("DNN
    # library is not found"), flash-attn's ("is only supported on CUDA 11.7 and above").
    ("library_not_found.toolchain", "library_not_found", 0.8,
     r"\bNo working C\+\+ compiler found\b|\bFailed to find C compiler\b|\btoo old to be supported by the triton GPU compiler\b"
     r"|is not defined for option 'gpu-name'|\bcuDNN/MIOpen library not found\b|\blibcudart functions unavailable\b"
     r"|\bDNN library is not found\b|\bis only supported on CUDA \d+(?:\.\d+)? and above\b"),
    # CUDA's cudaErrorStreamCaptureUnsupported ("operation not permitted when stream is capturing"): a CUDA graph capture
    # that ran an op it cannot capture, not a file permission.
    ("framework_api_misuse.cuda_stream_capture", "framework_api_misuse", 0.85, r"\bnot permitted when stream is capturing\b"),
    # PyTorch's cuDNN convolution with no algorithm that runs ("Unable to find a valid cuDNN algorithm to run
    # convolution"), as TF's "No algorithm worked!" (version 10): GPU memory or a cuDNN mismatch; said plainly.
    ("unclassified.cudnn_no_algorithm", "unclassified", 0.3, r"\bUnable to find a valid cuDNN algorithm\b"),
]]
RULES_V19_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Arrays and tensors whose shapes disagree, in NumPy's ("all the input array dimensions except for the concatenation
    # axis must match exactly", "all the input arrays must have same number of dimensions", a gufunc's "has a mismatch in
    # its core dimension"), pandas' ("Length mismatch: Expected axis has 12 elements, new values have 10 elements"),
    # scikit-learn's ("Found array with dim 3. Estimator expected <= 2.", "y should be a 1d array, got an array of
    # shape"), Pillow's ("wrong number of bands", "images do not match", "Too many dimensions: 4 > 3."), imageio's, xformers'
    # and bitsandbytes' words, tensorboardX's image check and ONNX Runtime's ("Invalid rank for input").
    ("tensor_mismatch.array_shapes", "tensor_mismatch", 0.85,
     r"\ball the input array dimensions except for the concatenation axis must match exactly\b"
     r"|\ball the input arrays must have same number of dimensions\b|\bhas a mismatch in its core dimension\b"
     r"|\bLength mismatch: Expected axis has \d+ elements, new values have \d+ elements\b"
     r"|\bFound array with dim \d+\. \w+ expected <= \d+|\bshould be a 1d array, got an array of shape\b"
     r"|\bwrong number of bands\b|\bimages do not match\b|\bToo many dimensions: \d+ > \d+"
     r"|\bAll images in a movie should have same size\b|\bNumber of heads in key/value must divide number of heads\b"
     r"|\bTensor dimensions incorrect for matrix mul(?:ti|it)iplication\b|\bsize of input tensor and input format are different\b"
     r"|\bInvalid rank for input\b"),
    # Values of the wrong type or dtype: NumPy's ufuncs ("did not contain a loop with signature matching types") and
    # NumPy 2's integer bounds ("Python integer 300 out of bounds for uint8"), FSDP's flat parameters ("Must flatten
    # tensors with uniform dtype"), attention kernels' ("query and key must have the same dtype", "cu_seqlens_q must have
    # dtype int32"), Horovod's ("Mismatched data types: One rank had type"), imageio's ("Expected numpy array with dtype
    # `uint8` but got"), ONNX Runtime's ("Unexpected input data type"). Not scikit-learn's target types ("Classification
    # metrics can't handle a mix of binary and continuous targets") nor jsonschema's "is not of type": the study's
    # notebook crashes and heldout5 label them illegal_argument, the type's default.
    ("type_mismatch.array_dtypes", "type_mismatch", 0.85,
     r"\bdid not contain a loop with signature matching types\b|\bPython integer -?\d+ out of bounds for \w+"
     r"|\bMust flatten tensors with uniform dtype\b|\bquery and key must have the same dtype\b|\bmust have dtype (?:torch\.)?\w+\b"
     r"|\bMismatched data types: One rank had type\b|\bExpected numpy array with dtype `?\w+`? but got\b"
     r"|\bUnexpected input data type\b"),
    # An API used out of its order or contract: torch.distributed's ("trying to initialize the default process group
    # twice"), DeepSpeed's ("DeepSpeed backend not set, please initialize it", ZeRO's "Gradient computed twice for this
    # partition"), Horovod's ("Horovod has not been initialized"), FSDP's flat parameters ("Must flatten tensors with
    # uniform `requires_grad`", "... on the same device"), peft's ("Cannot delete adapter(s) ... while they are merged",
    # "does not work with gradient checkpointing"), trl's ("`model` and `ref_model` cannot be the same object"),
    # omegaconf's struct and read-only configs, wandb's and MLflow's logged parameters ("Attempted to change value of
    # key", "Changing param values is not allowed"), pydantic's model definitions ("Unable to generate pydantic-core
    # schema for", "A non-annotated attribute was detected").
    ("framework_api_misuse.api_contract", "framework_api_misuse", 0.8,
     r"\btrying to initialize the default process group twice\b|\bDeepSpeed backend not set, please initialize it\b"
     r"|\bGradient computed twice for this partition\b|\bHorovod has not been initialized\b"
     r"|\bMust flatten tensors (?:with uniform `requires_grad`|on the same device)\b|\bwhile they are merged\b"
     r"|\bdoes not work with gradient checkpointing\b|\bcannot be the same object\b|\bin struct mode does not support\b"
     r"|\bCannot change read-only config\b|\bAttempted to change value of key\b|\bChanging param values is not allowed\b"
     r"|\bUnable to generate pydantic-core schema for\b|\bA non-annotated attribute was detected\b"),
    # vLLM's engine start with too little GPU memory for its KV cache ("No available memory for the cache blocks", "larger
    # than the maximum number of tokens that can be stored in KV cache", "KV cache is needed, which is larger than the
    # available KV cache memory"): GPU memory, to change by its own settings.
    ("gpu_oom.kv_cache", "gpu_oom", 0.8,
     r"\bNo available memory for the cache blocks\b|\bthat can be stored in KV cache\b"
     r"|\bKV cache is needed, which is larger than the available KV cache memory\b"),
]]
_RULES_V19_BEFORE_ERRNOS = (RULES_V19_FIRST + RULES_V17_FIRST + _RULES_V16_BEFORE_ERRNOS + RULES_V17_ADDED
                            + RULES_V19_ADDED)
RULES_V19 = RuleSetV18("19", _RULES_V19_BEFORE_ERRNOS + RULES_V14_LAST, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 20
# Tagging config "tagging:2026-11zh". Third-round templates that version 19 left unclassified although their
# producers' words name a category.
RULES_V20_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # A configuration read with a key it does not have: omegaconf's ConfigKeyError ("Missing key optimizer"; a value
    # declared but never set, "Missing mandatory value", stays version 6's wrong argument), hydra's instantiate ("Input
    # config does not have a `_target_` field"), tokenizers' ("Unk token `<unk>` not found in the vocabulary").
    ("key_not_found.config_key", "key_not_found", 0.8,
     r"\bConfigKeyError: Missing key\b|\bInput config does not have a `_target_` field\b"
     r"|\bUnk token `[^`\n]{1,40}` not found in the vocabulary\b"),
    # A tracking service's credentials that are not there (wandb: "No API key configured. Use `wandb login` to log in.").
    ("permission_denied.api_key_missing", "permission_denied", 0.75, r"\bNo API key configured\b"),
    # Data that cannot be read as asked: pandas' IntCastingNaNError ("Cannot convert non-finite values (NA or inf) to
    # integer", a column with missing values), SimpleITK's readers ("Unable to determine ImageIO reader for"), pydicom's
    # ("Unable to decode as exceptions were raised by all available plugins").
    ("corrupt_data.values_or_format", "corrupt_data", 0.8,
     r"\bCannot convert non-finite values \(NA or inf\) to integer\b|\bUnable to determine ImageIO reader for\b"
     r"|\bUnable to decode as exceptions were raised by all available plugins\b"),
    # torch.compile's inductor with no lowering for an op ("LoweringException: MissingOperatorWithoutDecomp: missing
    # lowering"): not implemented there.
    ("not_implemented.inductor_lowering", "not_implemented", 0.8, r"\bMissingOperatorWithoutDecomp\b|\bmissing lowering\b"),
    # A name the job chose that its library does not know: torch._dynamo ("Invalid backend: 'tensorrt'"),
    # torch.distributed's rendezvous ("No rendezvous handler for localhost://").
    ("illegal_argument.unknown_backend_or_scheme", "illegal_argument", 0.8,
     r"\bInvalidBackend: Invalid backend\b|\bNo rendezvous handler for \S+://"),
    # nibabel's header ('data dtype "bool" not supported'): an array of a dtype the format cannot store.
    ("type_mismatch.format_dtype", "type_mismatch", 0.8, r"\bdata dtype \"?\w+\"? not supported\b"),
]]
RULES_V20 = RuleSetV18("20", _RULES_V19_BEFORE_ERRNOS + RULES_V20_ADDED + RULES_V14_LAST, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 21
# Tagging config "tagging:2026-11zk". From a fourth round of program templates (tests/fixtures/program_templates4: graph
# and reinforcement-learning libraries, 3D vision, Hugging Face's models and diffusers, torch.nn, JAX, Flax, Optax, Orbax,
# Keras 3 and TF's kernels, PaddlePaddle, MindSpore and MXNet), where version 20 took a type's default (mostly a
# ValueError's or an AssertionError's illegal_argument), said nothing, or read a missing path into a text that names
# another cause. Each rule is its producers' words; they come first, as the texts they match are more specific than the
# rules they would otherwise meet (a missing path read in "Cannot find DGL C++ sparse library at ...").
RULES_V21_FIRST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Shapes that disagree, in the words of Keras 3 ("must have the same rank (ndim)", "Computed output size would be
    # zero or negative", "Data cardinality is ambiguous", "expected 2 variables, but received 1 variables during
    # loading", "is not compatible with the stored shape"), JAX and its libraries ("Tuple arity mismatch", "tree
    # structures do not match", "carry input and carry output must have equal types", "cond branches must have equal
    # output types", "was given argument arrays with axis sizes that are not evenly divisible", "cannot reshape array of
    # shape"), TF's kernels ("ConcatOp : Ranks of all input tensors should match", "must have compatible batch
    # dimensions", "input depth must be evenly divisible by filter depth"), torch.nn ("was expecting embedding dimension
    # of", "expected 4D input (got 2D input)", "must have the same number of spatial dimensions"), torchmetrics ("should
    # have the same shape"), transformers ("should be divisible by patch size", "Image features and image tokens do not
    # match", "Input image size (256*256) doesn't match model", "Unable to infer channel dimension format", Whisper's
    # "expects the mel input features to be of length"), evaluate ("Mismatch in the number of predictions"),
    # stable-baselines3 and PettingZoo ("Observation spaces do not match", "Unexpected observation shape"), PyG and DGL
    # ("Encountered tensor with size 512 in dimension", "Expected 'edge_index' to have size", "Expect number of
    # features to match number of nodes"), PyTorch3D, kornia, spconv, MinkowskiEngine and torchvision's ops ("Wrong
    # number (4) of cameras for 8 meshes", "must have the same batch dimension", "Input size must have a shape of",
    # "Coordinate length 120384 != Feature length", "reach zero!!!", "offset.shape[1] is not valid"), PaddlePaddle
    # ("has error dim", "The 'shape' in ReshapeOp is invalid", "receives a shape [512, 1000], but the expected shape is",
    # "should be equal to filter's channels * groups", "should have dimensions = 4, shape ="), MindSpore ("Shape Join
    # Failed"), MXNet ("is not present in ParameterDict"), Keras' variables ("The shape of the target variable and the
    # shape of the target value") and batches ("Expected `labels` to have batch size 16, got 8"), Flax's ("Incompatible
    # input dimension, got 512 but module expects 768"), JAX's shardings ("is only valid for values of rank at least"),
    # Orbax's restores ("The target dict keys and state dict keys do not match"), and PyTorch3D's and torchvision's other
    # checks ("Expected points to be of shape", "tensors have incorrect dimensions", "the shape of the offset tensor").
    ("tensor_mismatch.shapes_v21", "tensor_mismatch", 0.85,
     r"\bmust have the same rank \(ndim\)|\bmust have rank \(ndim\)|\bComputed output size would be zero or negative\b"
     r"|\bData cardinality is ambiguous\b|\bexpected \d+ variables, but received \d+ variables\b"
     r"|\bis not compatible with the stored shape\b|\bTuple arity mismatch\b|\btree structures do not match\b"
     r"|\bcarry input and carry output must have (?:equal types|the same pytree structure)\b"
     r"|\bbranches must have equal output types\b|\baxis sizes that are not evenly divisible\b"
     r"|\bcannot reshape array of shape\b|\bConcatOp : Ranks of all input tensors should match\b"
     r"|\bmust have compatible batch dimensions\b|\binput depth must be evenly divisible by filter depth\b"
     r"|\bwas expecting embedding dimension of\b|\bexpected \d+D input \(got \d+D input\)"
     r"|\bmust have the same number of spatial dimensions\b|\bshould have the same shape\b"
     r"|\bshould be divisible by patch size\b|\bImage features and image tokens do not match\b"
     r"|\bInput image size \([^)\n]*\) doesn't match model\b|\bUnable to infer channel dimension format\b"
     r"|\bexpects the mel input features to be of length\b|\bMismatch in the number of predictions\b"
     r"|\b(?:Observation|Action) spaces do not match\b|\bUnexpected observation shape\b"
     r"|\bEncountered tensor with size \d+ in dimension\b|\bExpected '\w+' to have size\b"
     r"|\bExpect number of features to match number of nodes\b|\bWrong number \(\d+\) of cameras\b"
     r"|\bmust have the same batch dimension\b|\bInput size must have a shape of\b|\bCoordinate length \d+ != Feature length\b"
     r"|reach zero!!!|\boffset\.shape\[1\] is not valid\b|\bhas error dim\b|\bThe 'shape' in ReshapeOp is invalid\b"
     r"|\breceives a shape \[[^\]\n]*\], but the expected shape is\b|\bshould be equal to filter's channels\b"
     r"|\bshould have dimensions = \d+, shape =|\bShape Join Failed\b|\bis not present in ParameterDict\b"
     r"|\bThe shape of the target variable and the shape of the target value\b|\bto have batch size \d+, got \d+"
     r"|\bIncompatible input dimension, got \d+ but module expects\b|\bis only valid for values of rank at least\b"
     r"|\bstate dict (?:keys )?do not match\b|\bExpected \w+ to be of shape\b|\btensors have incorrect dimensions\b"
     r"|\bthe shape of the offset tensor at dimension\b|\binvalid batch size of offset\b|\btensor shape is not correct\b"),
    # An API used out of its order or contract: Flax's module errors (flax.errors' AssignSubModuleError, NameInUseError,
    # SetAttributeFrozenModuleError, ApplyScopeInvalidVariablesStructureError, InvalidRngError's "needs PRNG for"),
    # Keras' ("has never been called and thus has no defined input", "was never built and thus it doesn't have any
    # variables", "Only input tensors may be passed as positional arguments", "`y` should not be passed", "can only be
    # called for the variables it was originally built with", the file extensions its savers require), TF's graph mode
    # ("Using a symbolic `tf.Tensor` as a Python `bool` is not allowed", "Cannot convert a symbolic tf.Tensor",
    # "tf.function only supports singleton tf.Variables"), JAX's ("Non-hashable static arguments are not supported",
    # "Legacy uint32 key array passed as key", "accepts a single key, but was given a key array", "JAX arrays are
    # immutable", "must have static start/stop/step"), Optax's ("The number of updates and states has to be the same in
    # chain", "you are not passing `params` when calling `update`"), Orbax's StepAlreadyExistsError, torch.fx's
    # data-dependent guard, diffusers' and accelerate's device placement ("is not compatible with passing a
    # `device_map`", "activated a device mapping strategy", "activated sequential model offloading", "is on the meta
    # device, we need a `value`", "need to run 'set_timesteps'"), quantized models ("is not supported for quantized
    # model", "You cannot cast a bitsandbytes model"), Gymnasium's and PettingZoo's environment protocol ("Cannot call
    # env.step() before calling env.reset()", "reset() needs to be called before step", "expects agents to step in a
    # cycle", "Expected `Env.step` to return a four or five element tuple"), PyTorch3D's and kornia's devices ("should be
    # on same device", "Not same device for tensors"), spconv's ("you can't set feature directly"), MinkowskiEngine's
    # ("Direct modification of coordinates is not permitted", raised as a SyntaxError), PaddlePaddle's dygraph-to-static
    # ("Found return statement in While or For body") and uninitialised inputs, MindSpore's graph mode ("Unsupported
    # statement").
    ("framework_api_misuse.api_contract_v21", "framework_api_misuse", 0.8,
     r"\b(?:AssignSubModule|NameInUse|SetAttributeFrozenModule|ApplyScopeInvalidVariablesStructure)Error\b"
     r"|\bneeds PRNG for\b|\bhas never been called and thus has no defined input\b"
     r"|\bwas never built and thus it doesn't have any variables\b|\bOnly input tensors may be passed as positional arguments\b"
     r"|`y` should not be passed\b|\bcan only be called for the variables it was originally built with\b"
     r"|\bfilepath provided must end in `\.(?:keras|weights\.h5)`|\bThe filename must end in `\.weights\.h5`"
     r"|\bInvalid filepath extension for saving\b|\bUsing a symbolic `tf\.Tensor` as a Python `bool` is not allowed\b"
     r"|\bCannot convert a symbolic (?:tf\.)?Tensor\b|\bonly supports singleton tf\.Variables\b"
     r"|\bNon-hashable static arguments are not supported\b|\bLegacy uint32 key array passed as key\b"
     r"|\baccepts a single key, but was given a key array\b|\bJAX arrays are immutable\b"
     r"|\bmust have static start/stop/step\b|\bThe number of updates and states has to be the same in chain\b"
     r"|\bnot passing `params` when calling `update`|\bStepAlreadyExistsError\b|\bCould not guard on data-dependent expression\b"
     r"|\bis not compatible with passing a `device_map`|\bactivated a device mapping strategy\b"
     r"|\bactivated sequential model offloading\b|\bis on the meta device, we need a `value`"
     r"|\bneed to run 'set_timesteps'|\bis not supported for quantized model\b|\bYou cannot cast a bitsandbytes model\b"
     r"|\bCannot call env\.step\(\) before calling env\.reset\(\)|\breset\(\) needs to be called before step\b"
     r"|\bexpects agents to step in a cycle\b|\bExpected `Env\.step` to return a four or five element tuple\b"
     r"|\bshould be on same device\b|\bNot same device for tensors\b|\byou can't set feature directly\b"
     r"|\bDirect modification of coordinates is not permitted\b|\bFound return statement in While or For body\b"
     r"|\bOp's Input Variable \S+ is not initialized\b|\bUnsupported statement '\w+'"),
    # A name the job asked for that a registry does not hold: Gymnasium's NameNotFound and VersionNotFound ("Environment
    # `highway` doesn't exist"), DGL's ("Node type \"paper\" does not exist"), Flax's scope lookups
    # (ScopeVariableNotFoundError, ScopeCollectionNotFound), Optax's ("Some parameters have no corresponding
    # transformation"), PaddleDetection's ("The module YOLOv3Head is not registered").
    ("key_not_found.registry_v21", "key_not_found", 0.8,
     r"\b(?:NameNotFound|VersionNotFound): Environment\b|\b(?:Node|Edge) type \"[^\"\n]+\" does not exist\b"
     r"|\bScopeVariableNotFoundError\b|\bScopeCollectionNotFound\b|\bSome parameters have no corresponding transformation\b"
     r"|\bThe module \w+ is not registered\b"),
    # A native library or build the package cannot find or run: DGL's C++ libraries ("Cannot find DGL C++ sparse library
    # at", "Unable to locate the DGL C++ GraphBolt library"), MXNet's ("Cannot find the MXNet library"), tiny-cuda-nn's
    # ("Could not find compatible tinycudann extension", "Unknown compute capability. Ensure PyTorch with CUDA support"),
    # JAX's ("Unknown backend: 'gpu' requested, but no platforms"), torchvision's ("Couldn't load custom C++ ops"),
    # TorchScript's ("Unknown builtin op"), MuJoCo's OpenGL ("gladLoadGL error", "an OpenGL platform library has not been
    # loaded"), diffusers' ("PEFT backend is required"), PaddlePaddle's ("is not compiled with CUDA"), CUDA's
    # cudaErrorInvalidDeviceFunction ("invalid device function": a kernel not built for this GPU, as "no kernel image").
    ("library_not_found.native_v21", "library_not_found", 0.8,
     r"\bCannot find DGL C\+\+ \w+ library\b|\bUnable to locate the DGL C\+\+ \w+ library\b|\bCannot find the MXNet library\b"
     r"|\bCould not find compatible tinycudann extension\b|\bUnknown compute capability\. Ensure PyTorch with CUDA support\b"
     r"|\bUnknown backend: '\w+' requested, but no platforms\b|\bCouldn't load custom C\+\+ ops\b|\bUnknown builtin op\b"
     r"|\bgladLoadGL error\b|\ban OpenGL platform library has not been loaded\b|\bPEFT backend is required\b"
     r"|\bis not compiled with CUDA\b|\binvalid device function\b"),
    # Values out of the range an index or a class id must lie in: PyG's ("contains larger indices than the number of
    # nodes"), transformers' CTC labels ("Label values must be <= vocab_size"), torch.nn's and torchmetrics' ("Class
    # values must be non-negative", "Class values must be smaller than num_classes"), PaddlePaddle's embedding
    # ("expected >= 0 and < 30000, but got 30522").
    ("illegal_index.ids_out_of_range", "illegal_index", 0.8,
     r"\bcontains larger indices than the number of nodes\b|\bLabel values must be <= vocab_size\b"
     r"|\bClass values must be (?:non-negative|smaller than num_classes)\b|\bexpected >= 0 and < \d+, but got\b"),
    # Numbers that went NaN or infinite: Keras' TerminateOnNaN and MindSpore's LossMonitor ("Invalid loss, terminating
    # training"), stable-baselines3's and Gymnasium's actions ("found nan in actions", "cannot take in a nan action"),
    # PyTorch3D's ("Meshes contain nan or inf"), MuJoCo's and dm_control's unstable simulations ("Nan, Inf or huge value
    # in QACC", "Physics state is invalid"), PaddlePaddle's FLAGS_check_nan_inf ("There are NAN or INF").
    ("loss_nan.nonfinite_v21", "loss_nan", 0.85,
     r"\bInvalid loss, terminating training\b|\bfound nan in actions\b|\bcannot take in a nan action\b"
     r"|\bMeshes contain nan or inf\b|\bNan, Inf or huge value in Q\w+\b|\bPhysics state is invalid\b"
     r"|\bThere are NAN or INF\b"),
    # Files or records that do not parse: stable-baselines3's saved models ("wasn't a zip-file"), safetensors' archives
    # ("does not contain the valid metadata"), diffusers' weights ("Unable to load weights from checkpoint file", as
    # version 9 reads transformers' "... pytorch checkpoint file"), PyTorch3D's meshes ("Not a ply file!", "PLY is
    # unexpected length!", "Vertex properties are inconsistent"), open_clip's ("checksum does not not match"),
    # torchmetrics' targets ("Detected more unique values in `target` than expected"), PaddlePaddle's batches ("fields
    # number not same among samples in a batch"), Open3D's images ("Unknown file signature").
    ("corrupt_data.files_and_records_v21", "corrupt_data", 0.8,
     r"\bwasn't a zip-file\b|\bdoes not contain the valid metadata\b|\bUnable to load weights from checkpoint file\b"
     r"|\bNot a ply file\b|\bPLY is unexpected length\b|\bVertex properties are inconsistent\b"
     r"|\bchecksum does not (?:not )?match\b|\bDetected more unique values in `target` than expected\b"
     r"|\bfields number not same among samples in a batch\b|\bUnknown file signature\b"),
    # Values of the wrong type or dtype: PyG's ("Expected 'edge_index' to be of integer type"), torch.nn's ("RNN input
    # dtype (torch.float64) does not match weight dtype", "Expected tensor for argument #1 'indices' to have one of the
    # following scalar types", "Only Tensors of floating point and complex dtype can require gradients", "one_hot is only
    # applicable to index tensor"), torchvision's ops ("input should have the same type as rois"), transformers' images
    # ("Invalid image type. Expected either"), Open3D's ("Tensor has dtype"), PaddlePaddle's feeds ("The data type of fed
    # Variable", "does not match the type of data (int32) currently contained in the container").
    ("type_mismatch.dtypes_v21", "type_mismatch", 0.8,
     r"\bExpected '\w+' to be of integer type\b|\binput dtype \([\w.]+\) does not match weight dtype\b"
     r"|\bto have one of the following scalar types\b|\bOnly Tensors of floating point and complex dtype can require gradients\b"
     r"|\bone_hot is only applicable to index tensor\b|\binput should have the same type as rois\b"
     r"|\bInvalid image type\. Expected either\b|\bTensor has dtype\b|\bThe data type of fed Variable\b"
     r"|\bcurrently contained in the container\b"),
    # GPU memory in PaddlePaddle's and MindSpore's words (Paddle raises it as a MemoryError: "(ResourceExhausted) Out of
    # memory error on GPU 0"; MindSpore: "Device(id:0) memory isn't enough and alloc failed"), and accelerate's
    # quantized dispatch ("Make sure you have enough GPU RAM to fit the quantized model").
    ("gpu_oom.frameworks_v21", "gpu_oom", 0.85,
     r"\bOut of memory error on GPU\b|\bmemory isn't enough and alloc failed\b|\benough GPU RAM to fit the quantized model\b"),
    # A path or model file the job named that is not there: transformers' and accelerate's checkpoints ("is not a folder
    # containing a `.index.json` file", "`checkpoint` should be the path to a file containing"), diffusers' variants
    # ("no such modeling files are available"), trimesh's ("string is not a file"), timm's and open_clip's ("is not a
    # known tag or valid file path").
    ("path_not_found.model_files_v21", "path_not_found", 0.8,
     r"\bis not a folder containing a `\.index\.json` file\b|`checkpoint` should be the path to a file containing\b"
     r"|\bno such modeling files are available\b|\bstring is not a file\b|\bis not a known tag or valid file path\b"),
    # TorchScript's compiler on a name or attribute it cannot resolve ("undefined value np:", "Tried to access
    # nonexistent attribute or method 'hidden_dim' of type"), and PaddlePaddle's kernels missing for a device and dtype
    # ("The kernel with key (GPU, ..., float64) of kernel `conv2d` is not registered").
    ("undefined_variable.torchscript", "undefined_variable", 0.8, r"\bundefined value \w+:"),
    ("attribute_not_found.torchscript", "attribute_not_found", 0.8, r"\bTried to access nonexistent attribute or method\b"),
    ("not_implemented.kernel_not_registered", "not_implemented", 0.8, r"\bof kernel `\w+` is not registered\b"),
    # A version or option the library no longer or never accepted: Gymnasium's and PettingZoo's DeprecatedEnv, timm's
    # and open_clip's unknown pretrained tags and configs, torch.autocast's device type.
    ("illegal_argument.unknown_choice_v21", "illegal_argument", 0.8,
     r"\bDeprecatedEnv\b|\bInvalid pretrained tag\b|\bnot found in built-ins\b|\bunsupported autocast device_type\b"),
]]
RULES_V21 = RuleSetV18("21", RULES_V21_FIRST + RULES_V20.message_rules, TYPE_DEFAULTS_V10)


# ------------------------------------------------------------------------------------------ version 22
# Tagging config "tagging:2026-11zl". From heldout7, retired into development data when heldout8 was collected: texts
# whose producers say what failed, where version 21 took a type's default or said nothing. Each rule is the producer's
# words, not a case's.
RULES_V22_FIRST: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, _r(p)) for rid, cat, conf, p in [
    # Numbers that went non-finite, in their producers' words: SciPy's linear_sum_assignment given a cost matrix with
    # NaN or inf ("matrix contains invalid numeric entries", as DETR-style Hungarian matchers meet it), icefall's fp16
    # guard on a collapsed loss scale ("grad_scale is too small, exiting"; DeepSpeed's is read since version 2).
    ("loss_nan.nonfinite_v22", "loss_nan", 0.8, r"\bmatrix contains invalid numeric entries\b|\bgrad_scale is too small\b"),
    # Old PyTorch's dispatch for a dtype an op lacks ("reciprocal is not implemented for type torch.cuda.LongTensor"),
    # as version 10 reads the newer "\"addmm_cuda\" not implemented for 'Half'": a tensor of the wrong dtype.
    ("type_mismatch.old_dispatch_dtype", "type_mismatch", 0.85, r"\bis not implemented for type torch\.(?:cuda\.)?\w+Tensor\b"),
    # TF 1.x's variable scopes ("Trying to share variable gru1/kernel, but specified shape (24, 24) and found shape
    # (120, 120)").
    ("tensor_mismatch.tf_shared_variable", "tensor_mismatch", 0.85,
     r"\bTrying to share variable \S+, but specified shape .* and found shape\b"),
    # TorchScript's compiler on an attribute a module or object lacks ("object has no attribute sparse_csc_tensor:",
    # followed by the source it compiled), unquoted as Python's own AttributeError never is.
    ("attribute_not_found.torchscript_object", "attribute_not_found", 0.8, r"\bobject has no attribute \w+:"),
    # SimpleITK's reader failing inside a format's ImageIO ("Exception thrown in SimpleITK ImageFileReader_Execute:
    # .../itkNrrdImageIO.cxx:292"): a file that does not decode, as version 20's "Unable to determine ImageIO reader".
    ("corrupt_data.itk_image_io", "corrupt_data", 0.8, r"\bImageFileReader_Execute: \S*itk\w+ImageIO\.cxx"),
    # A CUDA-only extension op given CPU tensors ("CPU not supported (furthest_point_sampling at ...)").
    ("framework_api_misuse.cpu_not_supported", "framework_api_misuse", 0.8, r"\bCPU not supported\b"),
    # PyTorch's binary cross-entropy kernel assertion ("Assertion `input_val >= zero && input_val <= one` failed"): the
    # loss was given inputs outside [0, 1] (probabilities expected, logits or NaNs given), not an index.
    ("illegal_argument.bce_input_range", "illegal_argument", 0.8, r"Assertion `input_val >= zero && input_val <= one` failed"),
]]
RULES_V22 = RuleSetV18("22", RULES_V22_FIRST + RULES_V21.message_rules, TYPE_DEFAULTS_V10)
