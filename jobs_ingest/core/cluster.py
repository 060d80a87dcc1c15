"""Reason-level clusters beside exact signatures, as LUCI Analysis clusters failures by reason.

An exact signature (normalise.fingerprint) keeps apart failures of different code: it hashes the user's
innermost function and keeps quoted names and file base names. A cluster gathers the same failure reason
across code bases: the short exception type plus the message with everything that names *which* thing
failed masked (quoted names, identifiers, paths with their base names, numbers, sizes, shapes, hosts,
URLs). `'DataParallel' object has no attribute 'foo'` and `... 'bar'` share a cluster; so do
FileNotFoundErrors for different dataset files.

Pure; part of the grouping config (configs.py): its output never changes once released.
"""
from __future__ import annotations

import hashlib
import re

from .normalise import mask as normalise_mask, short_type

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
    reason = cluster_message(exception_type, message)
    if not reason:
        return "", ""
    digest = hashlib.sha256(f"{CLUSTER_VERSION}\x1f{reason}".encode("utf-8", errors="replace")).hexdigest()[:16]
    return digest, reason
