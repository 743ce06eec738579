"""The one way memlab reads YAML it did not write: frontmatter, agent.yaml, proposal values.

``yaml.safe_load`` can fail three ways on text an agent wrote, and each is a value here, never
an exception: a syntax error (``yaml.YAMLError``, with the line it points at), nesting deep
enough to exhaust the recursion limit, and a value YAML parses but cannot build (``created:
2026-13-45`` matches YAML 1.1's timestamp rule, then ``datetime.date`` raises ValueError). The
last one matters for fidelity: the Letta server's ``parse_block_markdown`` catches only
``yaml.YAMLError``, so on such frontmatter its parser raises instead of falling back to the
whole file (``YamlRead.failure == "value"``).

Readings are memoised by text (a memory file's frontmatter recurs across commits, and each file
is read by several readers); every call gets its own copy of a mapping or list, so a caller
that changes what it got cannot change what the next caller reads.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import yaml

__all__ = ["YamlRead", "read_yaml"]

#: Texts longer than this are parsed every time instead of being kept in the memo.
_MEMO_CHARS = 65_536


@dataclass(frozen=True)
class YamlRead:
    """One YAML reading: ``ok`` and ``value``, or why not: ``failure`` is ``"syntax"``
    (``yaml.YAMLError``; ``line``, 0-based, is where YAML points), ``"depth"`` (nests too
    deeply) or ``"value"`` (a value that does not build; ``yaml.safe_load`` raises ValueError),
    and ``problem`` says it in words."""

    ok: bool
    value: object = None
    problem: str | None = None
    line: int | None = None
    failure: str | None = None


def _parse(text: str, base: bool) -> YamlRead:
    loader = yaml.BaseLoader if base else yaml.SafeLoader
    try:
        return YamlRead(True, yaml.load(text, Loader=loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        return YamlRead(False, problem=str(getattr(exc, "problem", None) or exc),
                        line=None if mark is None else mark.line, failure="syntax")
    except RecursionError:
        return YamlRead(False, problem="nests too deeply", failure="depth")
    except (ValueError, OverflowError) as exc:  # a value matched a YAML type and would not build
        return YamlRead(False, problem=f"a value YAML cannot build ({exc})", failure="value")


@functools.lru_cache(maxsize=4096)
def _memo(text: str, base: bool) -> YamlRead:
    return _parse(text, base)


def read_yaml(text: str, *, base: bool = False) -> YamlRead:
    """``yaml.safe_load(text)`` (``base=True``: the ``BaseLoader``, every scalar a string),
    as a :class:`YamlRead`. Never raises."""
    read = _memo(text, base) if len(text) <= _MEMO_CHARS else _parse(text, base)
    if isinstance(read.value, (dict, list)):
        return YamlRead(read.ok, copy.deepcopy(read.value), read.problem, read.line, read.failure)
    return read
