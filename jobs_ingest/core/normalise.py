"""Mask the variable parts of a failure message and fingerprint it.

Two jobs that fail the same way on different machines, users, ranks, paths, batch sizes or days must
share a fingerprint; different failures must not. So we mask what varies between runs (paths,
numbers, hex ids, uuids, tensor shapes, memory sizes, timestamps, hosts) and keep what names the
failure (exception type, message words, quoted identifiers, the failing file's base name) plus the
function of the user's innermost frame, as Sentry groups by in-app frames.

This module is the normaliser of the grouping config "grouping:2026-11" (see configs.py and
docs/grouping-configs.md). Its output must not change: a change is a new grouping config with its
own NORMALISER_VERSION, since fingerprints of different versions are not comparable and stored
signatures are keyed by (fingerprint, normaliser_version).
"""
from __future__ import annotations

import functools
import hashlib
import re

NORMALISER_VERSION = "2"
MAX_MESSAGE_CHARS = 600

_SUBSTITUTIONS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"https?://\S+"), "<URL>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<UUID>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?\b"), "<TIME>"),
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b"), "<TIME>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<HEX>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I), "<HEX>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<IP>"),
    # Memory sizes: "2.00 GiB", "1.2GiB", "4096 bytes", "512MB".
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes?)\b", re.I), "<SIZE>"),
    # Tensor shapes: torch.Size([2, 3]), [2, 3, 224, 224], (32, 10), shape[64,128].
    (re.compile(r"torch\.Size\(\[[\d,\s]*\]\)"), "<SHAPE>"),
    (re.compile(r"\[\s*-?\d+(?:\s*,\s*-?\d+)+\s*,?\s*\]|\(\s*-?\d+(?:\s*,\s*-?\d*)+\s*\)|\(\s*\d+\s*,\s*\)"), "<SHAPE>"),
    (re.compile(r"\b\d+(?:x\d+)+\b"), "<SHAPE>"),
]
# A path: absolute (/a/b, ~/a, C:\a) or relative with a folder (data/train/x.jpg). Its directory is
# masked; its base name is kept with digits masked, since "config.yaml" and "model_best.pth"
# missing are different failures while /home/alice/… and /mnt/bob/… are not.
_PATH = re.compile(r"(?:(?<=[\s'\"(=:\[,])|^)(?:[A-Za-z]:\\|~?/|\.{1,2}/|[\w.-]+/)[^\s'\"(),:\[\]]*")
_NUMBER = re.compile(r"(?<![<\w])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w>])", re.I)
_DIGITS_IN_WORD = re.compile(r"\d+")
_HOSTLIKE = re.compile(r"\b[a-z][\w-]*-\d+[\w.-]*\b", re.I)  # node-017, gpu-a100-03, pod-7f9c


def _mask_path(match: re.Match) -> str:
    path = match.group(0).rstrip(".")
    base = re.split(r"[\\/]", path.rstrip("/\\"))[-1]
    base = _DIGITS_IN_WORD.sub("<NUM>", base) if base else ""
    return f"<PATH>/{base}" if base else "<PATH>"


# Cached: an analysis masks its message for the signature, the fingerprint and the cluster.
@functools.lru_cache(maxsize=512)
def mask(text: str) -> str:
    """The message with its variable parts replaced by placeholders, whitespace folded."""
    text = text[:MAX_MESSAGE_CHARS * 4]
    for pattern, token in _SUBSTITUTIONS[:3]:
        text = pattern.sub(token, text)
    text = _PATH.sub(_mask_path, text)
    for pattern, token in _SUBSTITUTIONS[3:]:
        text = pattern.sub(token, text)
    text = _HOSTLIKE.sub(lambda m: _DIGITS_IN_WORD.sub("<NUM>", m.group(0)), text)
    text = _NUMBER.sub("<NUM>", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:MAX_MESSAGE_CHARS]


# An exit status, a signal number or a Windows NTSTATUS code names how a process ended (1; 127, a command not found;
# -9, killed; 0xC0000005, an access violation; 0xC0000374, heap corruption): since normaliser version 11 it is kept,
# not masked as a number. Written as a placeholder the later substitutions leave alone.
_STATUS = re.compile(r"\b(?P<word>exit(?:ed)?(?: with)?[ _]?(?:code|status)|exitcode|return[ _]?code|returncode"
                     r"|non-zero (?:exit )?status|signal)(?P<sep>\s*[:=]?\s*)(?P<num>-?\d+)\b"
                     r"|\b(?P<nt>0x[Cc][0-9A-Fa-f]{7})\b", re.I)


def _status(match: re.Match) -> str:
    if match.group("nt"):
        return f"<STATUS_{match.group('nt').upper()}>"
    return f"{match.group('word')}{match.group('sep')}<STATUS_{match.group('num').replace('-', 'm')}>"


def mask_keeping_statuses(text: str) -> str:
    """mask(), with exit statuses, signal numbers and NTSTATUS codes kept."""
    return mask(_STATUS.sub(_status, text[:MAX_MESSAGE_CHARS * 4]))


# Since normaliser version 12: a number glued to its unit ("timed out after 1800000ms", Kubernetes' quantities
# "available: 88412Ki"), an ordinal ("returned nan values in its 0th output") and a port in angle brackets after a host
# (NCCL's "10.1.2.3<41233>") vary between runs as a bare number does, which mask() leaves alone as part of a word; and
# a PCI address (the driver's "Xid (PCI:0000:3b:00): 79", nvidia-smi's "GPU00000000:3B:00.0") names which slot of which
# node, as a host name does, so it is masked before the rest (mask() would keep its hex letters).
_PCI = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{4}):[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?"
                  r"(?![0-9A-Fa-f])")
_UNIT_NUMBER = re.compile(r"(?<![\w.<>])\d+(?:\.\d+)?(?=(?:ns|us|ms|s|sec|min|h|Ki|Mi|Gi|Ti|Pi)\b)")
_ORDINAL = re.compile(r"(?<![\w.<>])\d+(?:st|nd|rd|th)\b")
_PORT = re.compile(r"(?<=[\w>])<\d{1,5}>")
_DIGIT = re.compile(r"\d")   # each mask above needs one: a text without is returned as it is


def mask_pci(text: str) -> str:
    """PCI addresses replaced by <PCI> (normaliser 12), before mask()."""
    return _PCI.sub("<PCI>", text) if ":" in text else text


def mask_units(masked: str) -> str:
    """A masked text with numbers glued to units, ordinals and ports after hosts masked too (normaliser 12)."""
    if not _DIGIT.search(masked):
        return masked
    return _UNIT_NUMBER.sub("<NUM>", _ORDINAL.sub("<NUM>th", _PORT.sub("<PORT>", masked)))


# Since normaliser version 13: a timestamp's date varies between runs as its time does, which mask() already reads as
# <TIME>: syslog's "Nov 18 03:12:44" (and the kubelet's "Nov 18, 2026 03:12:44", ctime's "Wed Nov 18 03:12:44"), and
# the severity-and-date prefix of glog, absl and PyTorch's c10 logging ("E1118 03:12:44.123456", "[E1118 ...]"). Left
# in, they made one NCCL timeout or one Xid a new signature every day (or month).
_MONTH_DATE = re.compile(r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +<NUM>,?"
                         r"(?: <NUM>)? <TIME>")
_GLOG_DATE = re.compile(r"(?<![\w<])[IWEF]\d{4} <TIME>")


def mask_dates(masked: str) -> str:
    """A masked text with the dates of its timestamps folded into their <TIME> (normaliser 13)."""
    if "<TIME>" not in masked:
        return masked
    return _GLOG_DATE.sub("<TIME>", _MONTH_DATE.sub("<TIME>", masked))


def mask_dated(text: str) -> str:
    """mask(), with the dates of timestamps folded into <TIME> (normaliser 13): for lines hashed as a location."""
    return mask_dates(mask(text))


def short_type(exception_type: str) -> str:
    """torch.cuda.OutOfMemoryError and torch.OutOfMemoryError are one type across versions."""
    return exception_type.rsplit(".", 1)[-1]


def masked_message(exception_type: str, message: str, *, statuses: bool = False, units: bool = False,
                   dates: bool = False) -> str:
    first = "\n".join(message.splitlines()[:6])  # long multi-line messages: their head names them
    first = mask_pci(first) if units else first
    kind = short_type(exception_type)
    masked = mask_keeping_statuses(first) if statuses else mask(first)
    masked = mask_units(masked) if units else masked
    masked = mask_dates(masked) if dates else masked
    return f"{kind}: {masked}" if kind else masked


def fingerprint(exception_type: str, message: str, user_function: str = "", *,
                version: str = NORMALISER_VERSION, statuses: bool = False, units: bool = False,
                dates: bool = False) -> str:
    """A stable 16-hex-digit id of the failure. `user_function` is the function of the innermost
    frame of the user's own code (blank when the log has no traceback); `version` salts it per
    grouping config (configs.py); `statuses` keeps exit statuses (normaliser version 11 on); `units` masks numbers
    glued to units, ordinals and ports (version 12 on); `dates` folds timestamps' dates into their time (13 on)."""
    key = "\x1f".join([version, masked_message(exception_type, message, statuses=statuses, units=units, dates=dates),
                        user_function])
    return hashlib.sha256(key.encode("utf-8", errors="replace")).hexdigest()[:16]


def location(frame) -> str:
    """What the fingerprint hashes besides the message: the function of the user's innermost frame
    (a tracebacks.Frame, or None when the log has no traceback). Code at module level or in a
    notebook cell has no such name, so its (masked) failing statement stands in for it, as Sentry
    uses a frame's context line. Otherwise two scripts' "SyntaxError: invalid syntax" would merge."""
    if frame is None:
        return ""
    if frame.function and not frame.function.startswith("<"):
        return frame.function
    return f"{frame.function}|{mask(frame.code)}" if frame.code else frame.function
