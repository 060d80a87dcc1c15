"""Literal gates for regular expressions: the words a pattern cannot match without, found from its parse tree.

A rule list is searched rule by rule until one matches, so most searches fail; a failing search costs CPython's
engine a pass over the text, where `word in text` is a C memory scan. `required_words` finds, for a pattern, a set
of literal strings at least one of which every match contains; `gated` wraps a compiled pattern so that it is only
searched in texts holding one of them. The answer is the pattern's own whenever the gate lets it through, so a gate
never changes what a rule finds (tests/unit/test_literals.py checks that on every rule and development text).
"""
from __future__ import annotations

import functools
import re

try:                                   # the parser of the `re` module (Python 3.11+); older names as a fallback
    from re import _constants as _c, _parser as _sre_parse
except ImportError:                    # pragma: no cover
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}
_ATOMIC = getattr(_c, "ATOMIC_GROUP", None)


@functools.lru_cache(maxsize=None)   # each released rule set repeats most of the one before: 851 rules, 125 patterns
def required_words(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """Literal strings one of which every match of `pattern` contains, or None when none can be named (or the
    pattern ignores case somewhere, where a literal would not be exact)."""
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except (re.error, TypeError, ValueError):   # pragma: no cover (a compiled pattern always parses)
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    return _required(parsed.data)


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more selective of two word sets: the longer shortest word, then the fewer words."""
    if a is None or b is None:
        return a if b is None else b
    return a if (min(map(len, a)), -len(a)) >= (min(map(len, b)), -len(b)) else b


def _required(items) -> frozenset[str] | None:
    """Of a sequence of parsed items, one item's words (or a run of literal characters) every match holds."""
    best: frozenset[str] | None = None
    run: list[str] = []
    for op, av in items:
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            best, run = _better(best, frozenset({"".join(run)})), []
        if op is _c.SUBPATTERN:
            _group, add_flags, _del_flags, sub = av
            found = None if add_flags & re.IGNORECASE else _required(sub.data)
        elif op is _c.BRANCH:
            branches = [_required(branch.data) for branch in av[1]]
            found = None if any(b is None for b in branches) else frozenset().union(*branches)
        elif op in _REPEATS:
            low, _high, sub = av
            found = _required(sub.data) if low >= 1 else None
        elif _ATOMIC is not None and op is _ATOMIC:
            found = _required(av.data)
        else:                          # classes, any character, anchors, look-arounds, back references
            found = None
        best = _better(best, found)
    if run:
        best = _better(best, frozenset({"".join(run)}))
    return best


class WordGate:
    """A pattern (anything with `search`) searched only in texts that hold one of `words`."""
    __slots__ = ("words", "pattern")

    def __init__(self, words: tuple[str, ...], pattern):
        self.words, self.pattern = words, pattern

    def search(self, text: str):
        for word in self.words:
            if word in text:
                return self.pattern.search(text)
        return None


class _OneWordGate(WordGate):
    __slots__ = ()

    def search(self, text: str):
        return self.pattern.search(text) if self.words[0] in text else None


def gated(pattern: re.Pattern):
    """`pattern`, or a gate with its `search` that skips texts without any of its required words."""
    words = required_words(pattern.pattern, pattern.flags & ~re.UNICODE)
    if not words:
        return pattern
    ordered = tuple(sorted(words, key=lambda w: (-len(w), w)))
    return (_OneWordGate if len(ordered) == 1 else WordGate)(ordered, pattern)
