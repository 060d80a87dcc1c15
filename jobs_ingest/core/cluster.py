"""Reason-level clusters beside exact signatures, as LUCI Analysis clusters failures by reason.

An exact signature (normalise.fingerprint) keeps apart failures of different code: it hashes the user's
innermost function and keeps quoted names and file base names. A cluster gathers the same failure reason
across code bases: the short exception type plus the message with everything that names *which* thing
failed masked (quoted names, identifiers, paths with their base names, numbers, sizes, shapes, hosts,
URLs). `'DataParallel' object has no attribute 'foo'` and `... 'bar'` share a cluster; so do
FileNotFoundErrors for different dataset files.

Version 2 (grouping:2026-11c) reads the reason more closely: the message's first line (or, under a
header such as "Error(s) in loading state_dict for X:" or TF's "2 root error(s) found.", the line that
says what), a pasted exception inside quotes by its own type and message, and one reason in its producers'
several wordings as one cluster (a segfault said by the shell, by Python's faulthandler or by torchrun's
exit code; CUDA running out of memory; a missing module under ImportError or ModuleNotFoundError).

Version 3 (grouping:2026-11d) masks what version 2 still kept of *which* thing (devices, Python's spelling
hint, a count's plural, a KeyError's key type, the sequence indexed) and gathers two more reasons said in
several ways: a path that does not exist (ENOENT) and host memory running out.

Version 4 (grouping:2026-11g) gathers more reasons in their producers' wordings (a checkpoint that does not fit
the model, tensor shapes, an index past the end, GPU allocators, OOM kills, the shells' signal words), reads a
pasted line through Markdown bold or after other text, and keys a sentence without its exception type.

Version 5 (grouping:2026-11h) gathers what version 4 still split by which object, device or library: None used
as a value, an attribute that is not there, tensors on different devices, an undefined symbol, Windows' access
violation, a missing file said in prose.

Pure; part of the grouping config (configs.py): its output never changes once released.
"""
from __future__ import annotations

import hashlib
import re

from .normalise import mask as normalise_mask, mask_dates, mask_pci, mask_units, short_type

CLUSTER_VERSION = "1"
MAX_CLUSTER_CHARS = 300

_QUOTED = re.compile(r"'[^'\n]{1,300}'|\"[^\"\n]{1,300}\"|`[^`\n]{1,300}`|‘[^’\n]{1,300}’")
_PLACEHOLDER_PATH = re.compile(r"<PATH>/\S*")
_DOTTED = re.compile(r"(?<![<\w])[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+(?![\w>])")  # fc.weight, torch.nn.Linear
_SNAKE_OR_DIGITS = re.compile(r"(?<![<\w])(?=\w*(?:_|\d))[A-Za-z_]\w*(?![\w>])")  # my_var, conv2d_1, lr_0
_CAMEL = re.compile(r"(?<![<\w'])[A-Z][a-z\d]+(?:[A-Z][a-z\d]*)+(?![\w>'])")  # ResNet, BertModel: which class
_PLACEHOLDER_RUN = re.compile(r"(<[A-Z]+>)(?:[\s,]*\1)+")
_SPACE = re.compile(r"\s+")


_TYPE_BEFORE_OBJECT = re.compile(r"\s*object\b")


def _mask_quoted(match: re.Match) -> str:
    """A quoted name is masked, except a type in Python's "'NoneType' object ..." wording: which type
    it is *is* the reason ('NoneType' has no attribute: a missing value; 'DataParallel': the wrapper)."""
    if _TYPE_BEFORE_OBJECT.match(match.string, match.end()) and re.fullmatch(r".[A-Za-z_][\w.]{0,60}.", match.group(0)):
        return match.group(0)
    return " <Q> "


def cluster_message(exception_type: str, message: str) -> str:
    """The reason: short exception type and the message's first line(s), identifiers masked."""
    head = " ".join(message.splitlines()[:3])
    text = _QUOTED.sub(_mask_quoted, head)
    text = normalise_mask(text)                       # URLs, uuids, times, hex, IPs, sizes, shapes, paths, hosts, numbers
    text = _PLACEHOLDER_PATH.sub("<PATH>", text)      # the base name too: which file is missing is not the reason
    text = _DOTTED.sub("<ID>", text)
    text = _SNAKE_OR_DIGITS.sub("<ID>", text)
    text = _CAMEL.sub("<ID>", text)
    text = _PLACEHOLDER_RUN.sub(r"\1", text)          # "<NUM>, <NUM>, <NUM>" says no more than "<NUM>"
    text = _SPACE.sub(" ", text).strip()[:MAX_CLUSTER_CHARS]
    kind = short_type(exception_type)
    return f"{kind}: {text}" if kind and text else kind or text


def cluster_key(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message); ("", "") when there is nothing to cluster on."""
    return _keyed(CLUSTER_VERSION, cluster_message(exception_type, message))


def _keyed(version: str, reason: str) -> tuple[str, str]:
    """(key, reason): the key hashes the reason salted with its cluster version; ("", "") for no reason."""
    if not reason:
        return "", ""
    return hashlib.sha256(f"{version}\x1f{reason}".encode("utf-8", errors="replace")).hexdigest()[:16], reason


# ---- version 2 -------------------------------------------------------------------------------------------

CLUSTER_VERSION_2 = "2"

# An exception pasted into prose or quotes: "I get `TypeError: f() got ...`", "'KeyError: ...'".
_PASTED_EXCEPTION = re.compile(r"(?:^|[\s:(`'\"])((?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z\d]*(?:Error|Exception|Interrupt|Exit|Failure))"
                               r"\s*:\s*(\S.*)")
_WHOLLY_QUOTED = re.compile(r"^\s*(?:```(?P<c>[^`]+)```|`(?P<b>[^`]+)`|\"{3}(?P<t>.+?)\"{3}|\"(?P<d>[^\"]+)\"|'(?P<s>[^']+)'"
                            r"|‘(?P<u>[^’]+)’)\s*$")
_HEADER = re.compile(r":\s*$|\broot error\(s\) found\b")
_LIST_ITEM = re.compile(r"^\s*\(\d+\)\s*")                # TF's "  (0) Resource exhausted: ..."
_HAS_WORD = re.compile(r"[^\W\d_]{2,}")
_PLACEHOLDER = re.compile(r"<[A-Z]+>")

# One reason in its producers' several wordings; the first that matches the reason's line names the cluster.
# The texts are the producers' own: the shell's and faulthandler's "Segmentation fault", signal names and
# numbers, an exit status of 128 + signal (bash) or a negative signal (torch.multiprocessing, torchrun's
# "exitcode: -11"), PyTorch's and CUDA's out-of-memory sentences, Python 2's and 3's missing-module errors.
_EXIT_STATUS = r"\bexit(?:ed with)?[ _]?(?:code|status)\s*[:=]?\s*"
CANONICAL_REASONS: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"\bCUDA out of memory\b|\bCUDA error: out of memory\b|\bCUDA_ERROR_OUT_OF_MEMORY\b", re.I),
     "GPU memory: CUDA out of memory"),
    (re.compile(r"\bSIGSEGV\b|\bSegmentation fault\b|\bsignal 11\b|" + _EXIT_STATUS + r"(?:139|-11)\b", re.I),
     "native crash: SIGSEGV (segmentation fault)"),
    (re.compile(r"\bSIGBUS\b|\bBus error\b|\bsignal 7\b|" + _EXIT_STATUS + r"(?:135|-7)\b", re.I),
     "native crash: SIGBUS (bus error)"),
    (re.compile(r"\bSIGABRT\b|\bFatal Python error: Aborted\b|\bsignal 6\b|" + _EXIT_STATUS + r"(?:134|-6)\b"),
     "native crash: SIGABRT (abort)"),
    (re.compile(r"\bSIGKILL\b|\bsignal 9\b|^Killed\b|" + _EXIT_STATUS + r"(?:137|-9)\b"),
     "killed: SIGKILL"),
)
_MISSING_MODULE = re.compile(r"\bNo module named\b")
_CALLED = re.compile(r"(?<![<\w.])[A-Za-z_]\w*(?=\(\))")           # forward() takes ...: which function is not the reason


def _reason_line(message: str) -> str:
    """The line that says what failed: the first, or the one under a header that only announces it."""
    lines = [line for line in message.splitlines() if line.strip()][:4]
    if not lines:
        return ""
    first = lines[0]
    if _HEADER.search(first) and len(lines) > 1:
        follow = _LIST_ITEM.sub("", lines[1])
        return follow if "root error(s)" in first else f"{first.strip()} {follow.strip()}"
    return first


def _unwrapped(exception_type: str, line: str) -> tuple[str, str]:
    """A message wholly in quotes is read inside them (a KeyError's sentence, a pasted line); an exception
    pasted into the text of a failure with no type of its own is read by its type and message."""
    quoted = _WHOLLY_QUOTED.match(line)
    inside = next((text for text in quoted.groups() if text), "") if quoted else ""
    if inside and (not exception_type or len(inside.split()) >= 3):
        line = inside
    if not exception_type or exception_type == "Exception":
        pasted = _PASTED_EXCEPTION.search(line)
        if pasted:
            exception_type, line = pasted.group(1), pasted.group(2)
    line = line.strip().rstrip("`")
    for quote in "'\"":
        if line.endswith(quote) and line.count(quote) % 2:
            line = line[:-1]
    return exception_type, line


def cluster_message_v2(exception_type: str, message: str,
                       canonical: tuple[tuple[re.Pattern, str], ...] = CANONICAL_REASONS) -> str:
    exception_type, line = _unwrapped(exception_type, _reason_line(message))
    for pattern, reason in canonical:
        if pattern.search(line) or (exception_type and pattern.search(exception_type)):
            return reason
    if _MISSING_MODULE.search(line):  # Python 2's ImportError, unquoted names, a library's wrapper around it
        return "ModuleNotFoundError: No module named <Q>"
    reason = cluster_message(exception_type, _CALLED.sub("<ID>", line))
    return reason if _HAS_WORD.search(_PLACEHOLDER.sub("", reason)) else ""


def cluster_key_v2(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 2; ("", "") when nothing names a reason (a bare quoted name)."""
    return _keyed(CLUSTER_VERSION_2, cluster_message_v2(exception_type, message))


# ---- version 3 -------------------------------------------------------------------------------------------

CLUSTER_VERSION_3 = "3"

# Version 3's further producers' wordings of one reason, after version 2's: Python's, the C library's and TF's
# texts for a path that does not exist (ENOENT), and Python's, NumPy's, PyTorch's, C++'s and Windows' for host
# memory running out. (A None used as a value stays split by what was done with it: a cluster is finer than
# the category null_reference.)
CANONICAL_REASONS_V3 = CANONICAL_REASONS + (
    (re.compile(r"^(?!.*\bshared (?:object|librar))(?:.*\[Errno 2\]|.*\bNo such file or directory\b|.*\bENOENT\b"
                r"|FileNotFoundError$)"),                     # a shared library the loader cannot find is not a path
     "path not found: No such file or directory (ENOENT)"),
    (re.compile(r"^MemoryError$|\bDefaultCPUAllocator: (?:can't|not enough memory)|\bUnable to allocate [^ ]+ [KMGT]?i?B\b"
                r"|\bstd::bad_alloc\b|\[Errno 12\] Cannot allocate memory|\bpaging file is too small\b|\[WinError 1455\]", re.I),
     "host memory: out of memory"),
)

# What version 2 still kept of *which* thing failed, or of the sentence's grammar: a device name, Python's
# spelling hint, a count's plural and verb agreement, several masked names in a list, a KeyError's key
# type, the kind of sequence indexed.
_DEVICE = re.compile(r"(?<![\w<])(?:cuda|cpu|mps|xla|xpu|hpu|meta|tpu|gpu)(?::<NUM>)?(?![\w>])", re.I)
_SPELLING_HINT = re.compile(r"\.?\s*(?:Did you mean|Perhaps you meant)\b.*$")      # Python 3.10+: "Did you mean: 'x'?"
_COUNTED_PLURAL = re.compile(r"(<NUM> (?:[a-z-]+ ){0,2}?[a-z]{2,}[^\Wsiu])s\b")  # "missing <NUM> required positional arguments"
_COUNTED_VERB = re.compile(r"(<NUM>) (?:was|were)\b")                            # "but <NUM> was given" / "were given"
_NAME_LIST = re.compile(r"(<[A-Z]+>)(?:\s*,?\s*(?:and|or)?\s*\1)+")             # "<Q>, <Q>, and <Q>"
_BARE_KEY = re.compile(r"^KeyError: (?:<Q>|<NUM>|<ID>)$")
_SEQUENCE_INDEX = re.compile(r"\b(?:list|tuple|string|str|array|bytes|range)( assignment)? index out of range")
_CANONICAL_V3 = frozenset(reason for _, reason in CANONICAL_REASONS_V3)


def cluster_message_v3(exception_type: str, message: str) -> str:
    reason = cluster_message_v2(exception_type, message, CANONICAL_REASONS_V3)
    if not reason or reason in _CANONICAL_V3:
        return reason
    return _masked_v3(reason)


def _masked_v3(reason: str) -> str:
    """What version 3 masks on top of version 2's reason."""
    reason = _SPELLING_HINT.sub("", reason)
    reason = _DEVICE.sub("<DEVICE>", reason)
    reason = _COUNTED_PLURAL.sub(r"\1", _COUNTED_VERB.sub(r"\1 were", reason))
    reason = _NAME_LIST.sub(r"\1", reason)
    reason = _SEQUENCE_INDEX.sub(r"<SEQ>\1 index out of range", reason)
    return "KeyError: <KEY>" if _BARE_KEY.match(reason) else reason.strip()


def cluster_key_v3(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 3: version 2's reason with the rest of *which* masked."""
    return _keyed(CLUSTER_VERSION_3, cluster_message_v3(exception_type, message))


# ---- version 4 -------------------------------------------------------------------------------------------

CLUSTER_VERSION_4 = "4"

# Version 4's further producers' wordings of one reason. The texts are the frameworks' own: PyTorch's
# load_state_dict and TF's checkpoint restore for a checkpoint that does not fit the model (before the shape
# wordings: "size mismatch for x: copying a param with shape ..." is a checkpoint's); PyTorch's, TF's, Keras',
# NumPy's and einops' sentences for tensors whose shapes disagree; Python's, NumPy's, PyTorch's and TF's
# gather for an index past the end; TF's and JAX's GPU allocators; the kernel's, Slurm's and Kubernetes' OOM
# kills; the shells' job-status words for a killed, aborted or illegal-instruction child; and the wordings of a
# missing path that name no errno (TF's file system, Hugging Face's "does not appear to have a file named").
_CHECKPOINT_MISMATCH = re.compile(
    r"\bError\(s\) in loading state_dict\b|\bsize mismatch for \S+: copying a param\b"
    r"|\b(?:Missing|Unexpected) key\(s\) in state_dict\b|\bRestoring from checkpoint failed\b"
    r"|\bnot found in checkpoint\b|\bYou are trying to load a weight file containing \d+ layers? into a model with\b")
_SHAPE_MISMATCH = re.compile(
    r"\bmat1 and mat2 shapes cannot be multiplied\b|\bThe size of tensor a \(\d+\) must match the size of tensor b\b"
    r"|\bshape '\[[^\]]*\]' is invalid for input of size\b|\bSizes of tensors must match except in dimension\b"
    r"|\bGiven groups=\d+, weight of size\b.*\bexpected input\b|\bExpected input batch_size \(\d+\) to match target batch_size\b"
    r"|\bTarget size \([^)]*\) must be the same as input size\b"
    r"|\bIncompatible shapes\b|\bDimensions must be equal, but are\b|\bDimensions of inputs should match\b"
    r"|\bInput to reshape is a tensor with \d+ values, but the requested shape\b|\bCannot feed value of shape\b"
    r"|\bShape must be rank \d+ but is rank\b|\bShapes \(.*?\) and \(.*?\) are incompatible\b|\bInfeed shape mismatch\b"
    r"|\bAssign requires shapes of both tensors to match\b|\bError when checking (?:model )?(?:input|target): expected\b"
    r"|\bis incompatible with (?:the )?layer\b|\bexpected (?:min_|max_)?ndim=\d+, found ndim=\d+"
    r"|\boperands could not be broadcast together with shapes\b|\bcould not broadcast input array from shape\b"
    r"|\bcannot reshape array of size \d+ into shape\b|\b[Ss]hapes? (?:mismatch|do(?:es)? not match|must match)\b"
    r"|\b(?:same|different|incompatible) shapes?\b|\bShapes of all inputs must match\b|\bShape inconsistent\b")
_INDEX_PAST_END = re.compile(
    r"\b(?:list|tuple|string|str|array|bytes|range)(?: assignment)? index out of range\b|\bindex -?\d+ is out of bounds for"
    r" (?:axis|dimension)\b|\bindex out of range in self\b|\bindices\[[^\]]*\] = -?\d+ is not in \[")
CANONICAL_REASONS_V4 = (
    (re.compile(r"\bCUDA out of memory\b|\bCUDA error: out of memory\b|\bCUDA_ERROR_OUT_OF_MEMORY\b"
                r"|\bOOM when allocating tensor\b|\bAllocator \(GPU_\d+_bfc\) ran out of memory\b"
                r"|\bRESOURCE_EXHAUSTED: Out of memory\b|\bcudaMalloc\b.*\bout of memory\b", re.I),
     "GPU memory: CUDA out of memory"),
    (_CHECKPOINT_MISMATCH, "checkpoint does not match the model"),
    (_SHAPE_MISMATCH, "tensor shapes do not match"),
    (_INDEX_PAST_END, "index out of range"),
) + CANONICAL_REASONS_V3[1:] + (
    (re.compile(r"\bSIGILL\b|\bIllegal instruction\b|\bsignal 4\b|非法指令|" + _EXIT_STATUS + r"(?:132|-4)\b"),
     "native crash: SIGILL (illegal instruction)"),
    (re.compile(r"\bSIGFPE\b|\bFloating point exception\b|\bsignal 8\b|" + _EXIT_STATUS + r"(?:136|-8)\b"),
     "native crash: SIGFPE (floating point exception)"),
    (re.compile(r"段错误"), "native crash: SIGSEGV (segmentation fault)"),        # glibc's zh_CN signal names
    (re.compile(r"总线错误"), "native crash: SIGBUS (bus error)"),
    (re.compile(r"\bAborted\s+\(core dumped\)|已放弃"), "native crash: SIGABRT (abort)"),
    (re.compile(r"\bzsh: killed\b|\b\d+\s+Killed\b|已杀死"), "killed: SIGKILL"),
    (re.compile(r"\blocal variable \S+ referenced before assignment\b"                        # Python 3.10 and older
                r"|\bcannot access local variable \S+ where it is not associated with a value\b"),  # 3.11+
     "undefined variable: a local variable used before assignment"),
    (re.compile(r"\bcannot import name\b"), "ImportError: cannot import name <Q> from <Q>"),
    (re.compile(r"\boom[-_]kill\b|\bOOMKilled\b|\bOut of memory: Kill(?:ed)? process\b|\bOut Of Memory\b|\bOUT_OF_MEMORY\b"),
     "host memory: out of memory"),
    (re.compile(r"\b(?:[Ff]ile|[Dd]irectory|[Pp]ath|[Ff]older)\b[^\n]{0,200}? (?:does not exist|not found)\b"
                r"|\bdoes not appear to have a file named\b|\bNewRandomAccessFile failed to\b"
                r"|\bFailed to find any matching files for\b"),
     "path not found: No such file or directory (ENOENT)"),
)
_CANONICAL_V4 = frozenset(reason for _, reason in CANONICAL_REASONS_V4)
# Python 3 made these one type: OSError (the reason's leading type, whether the parser or a paste named it).
_OS_ERROR_ALIAS = re.compile(r"^(?:IOError|EnvironmentError|WindowsError)(?=: |$)")
_ARGUMENT_RANGE = re.compile(r"\bfrom <NUM> to <NUM>(?= positional)")            # "takes from 1 to 2 positional arguments"
# An exception pasted in double quotes or backquotes and followed by more prose: read inside the quotes.
_QUOTED_PASTE = re.compile(r"([\"`“])((?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z\d]*(?:Error|Exception)\s*:\s*[^\"`”\n]+)[\"`”]")
_EMPHASIS = re.compile(r"^\s*(\*\*|__)(.+)\1\s*$")                   # a pasted line in Markdown bold
_PASTED_AFTER_TEXT = re.compile(r"(?<![A-Za-z0-9_.])((?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z\d]*(?:Error|Exception))\s*:\s*(\S.*)")
_SENTENCE_WORDS = re.compile(r"(?<![<\w])[^\W\d_]{2,}(?![\w>])")
SENTENCE_MIN_WORDS = 4
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_NAMES_ITS_TYPE = re.compile(r"^Caught <ID> in ")                      # PyTorch's DataLoader: "Caught KeyError in ..."
_CUT_NAME = re.compile(r"^([A-Z]\w*) \(the log is cut inside its exception line: ")  # pipeline's reading of a cut name


def cluster_message_v4(exception_type: str, message: str,
                       canonical: tuple[tuple[re.Pattern, str], ...] = CANONICAL_REASONS_V4,
                       canonical_reasons: frozenset[str] = _CANONICAL_V4) -> str:
    """Version 3's reason, read through Markdown bold and a pasted exception that follows other text, with
    Python 3's type aliases as one type and more reasons in their producers' several wordings; a reason that is
    a sentence (four words or more) is keyed without its type, which people paste or leave out."""
    cut = _CUT_NAME.match(message)
    if cut and not exception_type:
        return f"{cut.group(1)}: the log is cut inside its exception line"
    line = _EMPHASIS.sub(r"\2", _reason_line(message))
    if exception_type in _SHELLS:                 # "zsh: killed  python main.py" is the shell's word, not a type
        exception_type, line = "", f"{exception_type}: {line}"
    if not exception_type:
        quoted = _QUOTED_PASTE.search(line)
        line = quoted.group(2) if quoted else line
        pasted = _PASTED_AFTER_TEXT.search(line)
        if pasted and not _PASTED_EXCEPTION.search(line):
            line = pasted.group(0)
    reason = cluster_message_v2(exception_type, line, canonical)
    if not reason or reason in canonical_reasons:
        return reason
    reason = _ARGUMENT_RANGE.sub("<NUM>", _masked_v3(_OS_ERROR_ALIAS.sub("OSError", reason)))
    kind, _, text = reason.partition(": ")
    if text and " " not in kind and not _NAMES_ITS_TYPE.match(text) and len(_SENTENCE_WORDS.findall(text)) >= SENTENCE_MIN_WORDS:
        return text
    return reason


def cluster_key_v4(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 4."""
    return _keyed(CLUSTER_VERSION_4, cluster_message_v4(exception_type, message))


# ---- version 5 -------------------------------------------------------------------------------------------

CLUSTER_VERSION_5 = "5"

# Version 5 gathers reasons that version 4 still split by *which* object, device or library, in Python's,
# PyTorch's and the loaders' own words: None used as a value, whatever was done with it ('NoneType' object has
# no attribute / is not subscriptable / is not iterable, an operand or argument of NoneType); an attribute
# that is not there, on any object, module or class, or on a pickled class (pickle's "Can't get attribute");
# tensors on different devices; a native library missing a symbol it was built against; Windows' access
# violation (0xC0000005, its segmentation fault); and a file or directory that cannot be found, said in prose.
_NONE_VALUE = re.compile(r"\bNoneType\b")
_MISSING_ATTRIBUTE = re.compile(r"\bhas no attribute\b|\bCan't get attribute\b|\binstance has no attribute\b")
_DEVICE_MISMATCH = re.compile(
    r"\bExpected all tensors to be on the same device\b|\bto have the same device as\b"
    r"|\bshould be either on \w+ or on the same device as\b|\bExpected object of device type \w+ but got device type\b"
    r"|\bInput type \([\w.]*cuda[\w.]*\) and weight type \([\w.]*\) should be the same\b"
    r"|\bInput type \([\w.]*\) and weight type \([\w.]*cuda[\w.]*\) should be the same\b"
    r"|\bis on \w+, but expected (?:it|them) to be on\b|\bare on different devices\b")
_MISSING_PATH_PROSE = re.compile(
    r"\b(?:[Cc]an ?not|[Cc]ould not|[Cc]ouldn't|[Uu]nable to|[Ff]ailed to) (?:find|locate)\b[^\n]{0,80}?"
    r"\b(?:files?|director(?:y|ies)|folders?|path)\b"
    r"|\b[Nn]o (?:such )?(?:file|directory) named\b|\b(?:[Ff]ile|[Dd]irectory|[Pp]ath|[Ff]older)\b[^\n]{0,200}? does not exists\b")
CANONICAL_REASONS_V5 = ((_NONE_VALUE, "None used as a value: 'NoneType' object"),) + CANONICAL_REASONS_V4 + (
    (_MISSING_ATTRIBUTE, "AttributeError: <X> has no attribute <Q>"),
    (_DEVICE_MISMATCH, "tensors on different devices"),
    (re.compile(r"\bundefined symbol\b"), "native library: undefined symbol"),
    (re.compile(r"\b0xC0000005\b|-1073741819\b|\b3221225477\b|\bAccess violation\b", re.I),
     "native crash: SIGSEGV (segmentation fault)"),
    (_MISSING_PATH_PROSE, "path not found: No such file or directory (ENOENT)"),
)
_CANONICAL_V5 = frozenset(reason for _, reason in CANONICAL_REASONS_V5)


def cluster_message_v5(exception_type: str, message: str) -> str:
    """Version 4's reading with version 5's reasons."""
    return cluster_message_v4(exception_type, message, CANONICAL_REASONS_V5, _CANONICAL_V5)


def cluster_key_v5(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 5."""
    return _keyed(CLUSTER_VERSION_5, cluster_message_v5(exception_type, message))


CLUSTER_VERSION_6 = "6"

# Version 6 is version 5 with one fix: a *library* that cannot be found, said in prose ("Could not find the library
# file libcudart.so"), is the loader's reason, not a missing path, as version 3 already reads ENOENT.
_LIBRARY_FILE = r"(?i:\blibrar(?:y|ies)\b|\bshared object\b|\.(?:so|dll|dylib)\b)"
CANONICAL_REASONS_V6 = tuple(
    (re.compile(r"^(?!.*" + _LIBRARY_FILE + r")(?:.*(?:" + pattern.pattern + r"))", re.S)
     if pattern is _MISSING_PATH_PROSE else pattern, reason)
    for pattern, reason in CANONICAL_REASONS_V5)


def cluster_key_v6(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 6."""
    return _keyed(CLUSTER_VERSION_6, cluster_message_v4(exception_type, message, CANONICAL_REASONS_V6, _CANONICAL_V5))


CLUSTER_VERSION_7 = "7"


def _reason_v7(exception_type: str, message: str, canonical: tuple[tuple[re.Pattern, str], ...] = CANONICAL_REASONS_V6,
               canonical_reasons: frozenset[str] = _CANONICAL_V5) -> str:
    return mask_units(cluster_message_v4(exception_type, mask_pci(message), canonical, canonical_reasons))


def cluster_key_v7(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 7: version 6's reason with PCI addresses, numbers glued to units, ordinals
    and ports after hosts masked (normaliser 12), so which GPU slot, a timeout's length, a node's free memory or a
    peer's port no longer split one reason."""
    return _keyed(CLUSTER_VERSION_7, _reason_v7(exception_type, message))


CLUSTER_VERSION_8 = "8"


def cluster_key_v8(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 8: version 7's reason with the dates of timestamps folded into their time
    (normaliser 13), so a platform line's day or month no longer splits one reason."""
    return _keyed(CLUSTER_VERSION_8, mask_dates(_reason_v7(exception_type, message)))


CLUSTER_VERSION_9 = "9"

# Version 9 reads past what a log record puts before its message, and gathers more reasons in their producers'
# words. A log record's header (a bracket holding a timestamp, c10's older "[E ProcessGroupNCCL.cpp:828]",
# PyTorch's "[Rank 3]" and "[PG 0 Rank 3]", a bare leading time and the "[c10d]" tag after them) named which
# run, rank or PyTorch version logged the reason; so did the wrapper "Process group watchdog thread terminated with
# exception:". The texts are the producers' own:
# - NVIDIA's driver: "NVRM: Xid (PCI:0000:3b:00): 79, ..." is keyed by its Xid code, which names the fault
#   (NVIDIA's Xid catalogue); PyTorch's NCCL watchdog and its follow-up line, whatever the op and its fields;
# - a checkpoint that does not fit: accelerate's set_module_tensor_to_device, diffusers' missing keys, Keras' layer
#   count; tensor shapes: PyTorch's stack, expand, view, RNN, conv and old TH/THC texts, TF's reshape and squeeze,
#   MXNet's shape check;
# - a file that cannot be unpickled (pickle's own errors, NumPy's, torch.load's weights-only refusal) and a checkpoint
#   that is corrupt or cut (PyTorch's zip reader and storage sizes, safetensors' header, TF's sstable, HDF5's
#   signature);
# - a CUDA kernel's own assertion line ("block: [0,0,0], thread: [5,0,0] Assertion ... failed.") is the
#   device-side assert; glibc's translations of "Segmentation fault".
# A trailing full stop is no part of a reason ("name 'x' is not defined." is Python's sentence too).
_LOG_HEADERS = re.compile(r"^(?:(?:\[[^\]\n]*<TIME>[^\]\n]*\]|<TIME>|\[[EWFI] <ID>:<NUM>\]|\[(?:PG [^\]\n]*?)?Rank <NUM>\])"
                          r":?\s*)+")
_LOGGER_TAG = re.compile(r"^\[<ID>\]:?\s*")
_WATCHDOG_WRAPPER = re.compile(r"\bProcess group watchdog thread terminated with exception:\s*")
_XID = re.compile(r"\bNVRM: Xid \((?:PCI:)?[^)\n]*\):\s*(\d+)")
CANONICAL_REASONS_V9 = (
    (re.compile(r"\bWatchdog caught collective operation timeout\b"), "NCCL watchdog: collective operation timeout"),
    (re.compile(r"\bSome NCCL operations have failed or timed out\b"), "NCCL: some operations have failed or timed out"),
    (re.compile(r"\bTrying to set a tensor of shape .{1,200}? \(which has shape\b"
                r"|\bbecause the following keys are missing\b|\bLayer count mismatch when loading weights from file\b"),
     "checkpoint does not match the model"),
    (re.compile(r"\bstack expects each tensor to be equal size\b|\bThe expanded size of the tensor \(\d+\) must match\b"
                r"|\bcannot reshape tensor of \d+ elements? into shape\b|\bCannot reshape a tensor with \d+ elements to shape\b"
                r"|\bCan not squeeze dim\[\d+\], expected a dimension of\b|\binput\.size\(-1\) must be equal to input_size\b"
                r"|\bExpected hidden(?:\[\d\])? size\b|\bExpected \d+-dimensional input for \d+-dimensional weight\b"
                r"|\bExpected \w+ \(unbatched\) or \w+ \(batched\) input to\b|\bsize mismatch, m1: \["
                r"|\binvalid argument \d+: sizes do not match\b|\bIncompatible input shape: expected\b"),
     "tensor shapes do not match"),
    (re.compile(r"\binvalid load key\b|\bcould not find MARK\b|^(?:EOFError: )?Ran out of input$|\bunpickling stack underflow\b"
                r"|\bpickle data was truncated\b|\bWeights only load failed\b|\bFailed to interpret file \S+ as a pickle\b"
                r"|\bA load persistent id instruction was encountered\b"),
     "a file that cannot be unpickled"),
    (re.compile(r"\bPytorchStreamReader failed reading\b|\bstorage has wrong (?:byte )?size\b"
                r"|\bError while deserializing header\b|\bnot an sstable \(bad magic number\)"
                r"|\bUnable to open file \((?:truncated file|file signature not found)\b"),
     "checkpoint file is corrupt or truncated"),
    (re.compile(r"\bdevice-side assert triggered\b|\bblock: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion\b"),
     "CUDA error: device-side assert triggered"),
    (re.compile(r"Speicherzugriffsfehler|Erreur de segmentation|Violación de segmento|Falha de segmentação"
                r"|Ошибка сегментирования|セグメンテーション違反"),
     "native crash: SIGSEGV (segmentation fault)"),
) + CANONICAL_REASONS_V6
_CANONICAL_V9 = frozenset(reason for _, reason in CANONICAL_REASONS_V9)


def _without_log_header(reason: str) -> str:
    stripped = _LOG_HEADERS.sub("", reason, count=1)
    return _LOGGER_TAG.sub("", stripped) if stripped != reason else reason


def _reason_v9(exception_type: str, message: str) -> str:
    xid = _XID.search(message)
    if xid:
        return f"GPU: Xid {xid.group(1)}"
    message = _WATCHDOG_WRAPPER.sub("", message, count=1)
    reason = mask_dates(_reason_v7(exception_type, message, CANONICAL_REASONS_V9, _CANONICAL_V9))
    return _without_log_header(reason).rstrip(" .") or reason


def cluster_key_v9(exception_type: str, message: str) -> tuple[str, str]:
    """(key, cluster message) of version 9: version 8's reason without its log record's header and trailing full stop,
    with more reasons in their producers' words (see above)."""
    return _keyed(CLUSTER_VERSION_9, _reason_v9(exception_type, message))
