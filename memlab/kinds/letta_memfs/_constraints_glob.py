"""Letta Code's globs (``compilePattern``), matched as Node matches them but in linear time: its
own regular expression for a pattern with at most one unbounded part, else an automaton with the
same matches; and a config's ``fileCharacterLimits`` and ``readOnlyFiles`` globs compiled once
(:func:`glob_rules`).

Part of :mod:`memlab.kinds.letta_memfs._constraints`, whose tree validator uses it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Sequence

from memlab.kinds.letta_memfs._constraints_js import JS_DOT, utf16

__all__ = ["glob_rules"]

_LINE_TERMINATORS = frozenset("\n\r\u2028\u2029")
# Glob tokens: a literal code unit, "?", "*", "**" and "**/".
_LIT, _ONE, _STAR, _ANY, _DIRS = range(5)


def _glob_tokens(units: str) -> list[tuple[int, str]]:
    """``compilePattern``'s reading of a pattern (UTF-16 units): ``**/`` any folders, ``**``
    anything, ``*`` within a segment, ``?`` one code unit, anything else itself."""
    out, i = [], 0
    while i < len(units):
        c = units[i]
        if c == "*":
            if units[i + 1 : i + 2] == "*":
                if units[i + 2 : i + 3] == "/":
                    out.append((_DIRS, ""))
                    i += 2
                else:
                    out.append((_ANY, ""))
                    i += 1
            else:
                out.append((_STAR, ""))
        elif c == "?":
            out.append((_ONE, ""))
        else:
            out.append((_LIT, c))
        i += 1
    return out


def _glob_regex(tokens: Sequence[tuple[int, str]]) -> re.Pattern[str]:
    """The regular expression Letta Code compiles for the pattern (``compilePattern``), for a
    pattern with at most one unbounded part: then a backtracking match is linear."""
    source = "^" + "".join(
        {_DIRS: f"(?:{JS_DOT}*/)?", _ANY: f"{JS_DOT}*", _STAR: "[^/]*", _ONE: "[^/]"}.get(kind)
        or re.escape(c)
        for kind, c in tokens
    )
    return re.compile(source + r"\Z", re.DOTALL)


class _GlobAutomaton:
    """The same language as :func:`_glob_regex`, matched without backtracking: the set of glob
    positions a prefix can reach (a Thompson NFA simulation), each set's step on a code unit
    cached (a lazy DFA), so a match costs one step per unit of the path whatever the pattern
    (``*a*a*a...*b`` made Python's backtracking regex take exponential time). State ``k`` is
    "token k next"; ``-(k + 1)`` is "inside the ``**/`` at k, its closing '/' still to come"."""

    _MAX_STEPS = 50_000  # cached set transitions kept per pattern (then the cache starts again)

    def __init__(self, tokens: Sequence[tuple[int, str]]) -> None:
        self.tokens = list(tokens)
        self.end = len(self.tokens)
        self.start = self._closure({0})
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _closure(self, states: Iterable[int]) -> frozenset[int]:
        out, stack = set(states), list(states)
        while stack:
            k = stack.pop()
            if 0 <= k < self.end and self.tokens[k][0] in (_STAR, _ANY, _DIRS) and k + 1 not in out:
                out.add(k + 1)
                stack.append(k + 1)
        return frozenset(out)

    def _step(self, states: frozenset[int], c: str) -> frozenset[int]:
        nxt: set[int] = set()
        plain = c not in _LINE_TERMINATORS
        for k in states:
            if k < 0:  # inside "**/" at -(k + 1)
                if plain:
                    nxt.add(k)
                if c == "/":
                    nxt.add(-k)  # -(k + 1) + 1 as a position: the token after the "**/"
                continue
            if k == self.end:
                continue
            kind, lit = self.tokens[k]
            if kind == _LIT:
                if c == lit:
                    nxt.add(k + 1)
            elif kind == _ONE:
                if c != "/":
                    nxt.add(k + 1)
            elif kind == _STAR:
                if c != "/":
                    nxt.add(k)
            elif kind == _ANY:
                if plain:
                    nxt.add(k)
            else:  # _DIRS: its first unit, or its closing '/' right away
                if plain:
                    nxt.add(-(k + 1))
                if c == "/":
                    nxt.add(k + 1)
        return self._closure(nxt)

    def match(self, units: str) -> bool:
        states, steps = self.start, self._steps
        for c in units:
            key = (states, c)
            got = steps.get(key)
            if got is None:
                if len(steps) >= self._MAX_STEPS:
                    steps.clear()
                got = steps[key] = self._step(states, c)
            states = got
            if not states:
                return False
        return self.end in states


@lru_cache(maxsize=4096)
def _glob(pattern: str) -> re.Pattern[str] | _GlobAutomaton:
    """``compilePattern`` for ``pattern``, as something with ``.match(units)`` (truthy on a
    match) to call on :func:`utf16` paths: Letta's own regex when the pattern has at most one
    ``*``/``**``/``**/`` (a backtracking match is then linear), else :class:`_GlobAutomaton`
    (the same matches, without backtracking)."""
    tokens = _glob_tokens(utf16(pattern))
    if sum(kind in (_STAR, _ANY, _DIRS) for kind, _ in tokens) <= 1:
        return _glob_regex(tokens)
    return _GlobAutomaton(tokens)


class _Rules:
    """A config's ``fileCharacterLimits`` and ``readOnlyFiles`` globs compiled once, with each
    path's answer remembered: an audit asks about the same paths commit after commit."""

    _MAX_PATHS = 200_000

    def __init__(self, overrides: Sequence[str], protected: Sequence[str]) -> None:
        self.overrides = [_glob(p) for p in overrides]
        self.protected = [_glob(p) for p in protected]
        self._override: dict[str, int | None] = {}
        self._protected: dict[str, bool] = {}

    def override(self, path: str) -> int | None:
        """The index of the first ``fileCharacterLimits`` glob matching ``path``, or None."""
        if path not in self._override:
            if len(self._override) >= self._MAX_PATHS:
                self._override.clear()
            units = utf16(path)
            self._override[path] = next(
                (i for i, rx in enumerate(self.overrides) if rx.match(units)), None
            )
        return self._override[path]

    def is_protected(self, path: str) -> bool:
        if path not in self._protected:
            if len(self._protected) >= self._MAX_PATHS:
                self._protected.clear()
            units = utf16(path)
            self._protected[path] = any(p.match(units) for p in self.protected)
        return self._protected[path]


@lru_cache(maxsize=8)
def glob_rules(overrides: tuple[str, ...], protected: tuple[str, ...]) -> _Rules:
    return _Rules(overrides, protected)
