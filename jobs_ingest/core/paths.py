"""Confining file names that come from outside (manifests, scheduler output) to a folder the operator chose.

A name is resolved the way the kernel would open it (symlinks followed, `..` collapsed) and must land
inside the root, so neither `../../etc/passwd`, an absolute path nor a symlink pointing out of the folder
can make the product copy a file the operator did not hand over.
"""
from __future__ import annotations

from pathlib import Path


class OutsideRoot(ValueError):
    """The name resolves outside the folder it must stay in."""


def resolve_inside(root: Path | str, candidate: Path | str, *, found_under_root: bool = False) -> Path:
    """The resolved path of `candidate`, a name relative to `root`, or OutsideRoot.

    Absolute names are refused, even when they point into the root: a manifest that names absolute
    paths is the usual shape of an attack. `found_under_root` is for paths the caller listed itself
    (e.g. `root.rglob(...)`), which start with `root`; they are checked for symlinks all the same."""
    given_root, root = Path(root), Path(root).resolve()
    name = Path(candidate)
    if found_under_root:
        try:
            name = name.relative_to(given_root)
        except ValueError:
            raise OutsideRoot(f"{str(candidate)!r} is not under {given_root}") from None
    elif name.is_absolute():
        raise OutsideRoot(f"{str(candidate)!r} is an absolute path; name a file inside {root}")
    resolved = (root / name).resolve()
    if resolved != root and root not in resolved.parents:
        reason = "is a symlink that points" if (root / name).is_symlink() else "resolves"
        raise OutsideRoot(f"{str(candidate)!r} {reason} outside {root}")
    return resolved
