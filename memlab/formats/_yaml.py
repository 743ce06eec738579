"""The one way memlab reads YAML it did not write: frontmatter, agent.yaml, proposal values.

``yaml.safe_load`` can fail three ways on text an agent wrote, and each is a value here, never
an exception: a syntax error (``yaml.YAMLError``, with the line it points at), nesting deep
enough to exhaust the recursion limit, and a value YAML parses but cannot build (``created:
2026-13-45`` matches YAML 1.1's timestamp rule, then ``datetime.date`` raises ValueError). The
last one matters for fidelity: the Letta server's ``parse_block_markdown`` catches only
``yaml.YAMLError``, so on such frontmatter its parser raises instead of falling back to the
whole file (``YamlRead.failure == "value"``).

A fourth way is an alias bomb ("billion laughs"): ``&a [lol, ...]``, ``&b [*a, *a, ...]``, ...
PyYAML builds each alias as the same shared object, so loading is cheap, but anything that then
walks or stringifies the value (``str(name)``, a table cell) does the whole expansion: 316 bytes
become 10**8 strings. So the node graph is measured before anything is built, once per distinct
node (aliases share a node, so the count is linear in the text), and a document whose expanded
size is past :data:`~memlab.constants.MAX_YAML_NODES` nodes or
:data:`~memlab.constants.MAX_YAML_CHARS` characters of scalar text (or past the text's own
length, when that is larger: a document without aliases never expands past its own text) is a
failed reading (``failure == "size"``), as is an alias inside the node it names (``&a [*a]``,
which would build a list that contains itself). No caller ever gets the expanded value.

Readings are memoised by text (a memory file's frontmatter recurs across commits, and each file
is read by several readers; the last two texts longer than ``_MEMO_CHARS`` are kept too, so a
long frontmatter is parsed once, not once per reader); every call gets its own copy of a mapping or
list, so a caller
that changes what it got cannot change what the next caller reads.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import yaml

from memlab.constants import MAX_YAML_CHARS, MAX_YAML_NODES

__all__ = ["YamlRead", "read_yaml"]

#: Texts longer than this go to a memo of two instead of the big one.
_MEMO_CHARS = 65_536


@dataclass(frozen=True)
class YamlRead:
    """One YAML reading: ``ok`` and ``value``, or why not: ``failure`` is ``"syntax"``
    (``yaml.YAMLError``; ``line``, 0-based, is where YAML points), ``"depth"`` (nests too
    deeply), ``"value"`` (a value that does not build; ``yaml.safe_load`` raises ValueError) or
    ``"size"`` (aliases expand it past the bound, or an alias names the node it is in), and
    ``problem`` says it in words."""

    ok: bool
    value: object = None
    problem: str | None = None
    line: int | None = None
    failure: str | None = None


class _TooBig(Exception):
    pass


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_size(root: yaml.Node, text_chars: int) -> None:
    """Raise :class:`_TooBig` when ``root`` expands (aliases followed) past the bound, or an
    alias sits inside the node it names. Each distinct node is measured once (``sizes``), so
    this is linear in the composed graph, not in its expansion; iterative, so never deep."""
    max_nodes, max_chars = max(MAX_YAML_NODES, text_chars), max(MAX_YAML_CHARS, text_chars)
    sizes: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            nodes, chars = 1, 0
            for child in _children(node):
                n, c = sizes[id(child)]
                nodes, chars = nodes + n, chars + c
        elif key in sizes:
            continue
        elif key in open_nodes:  # every open node is an ancestor of the one popped
            raise _TooBig(
                "an alias refers to the node that contains it, so the value would "
                "contain itself without end (a recursive alias)"
            )
        elif isinstance(node, yaml.ScalarNode):
            nodes, chars = 1, len(node.value)
        else:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
            continue
        if nodes > max_nodes or chars > max_chars:
            raise _TooBig(
                f"its aliases expand it past {max_nodes:,} values or {max_chars:,} "
                "characters (an alias bomb)"
            )
        sizes[key] = (nodes, chars)


def _load(text: str, loader_class: type) -> object:
    """``yaml.load`` (one document), with the node graph measured before it is built."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_size(node, len(text))
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _parse(text: str, base: bool) -> YamlRead:
    loader = yaml.BaseLoader if base else yaml.SafeLoader
    try:
        return YamlRead(True, _load(text, loader))
    except _TooBig as exc:
        return YamlRead(False, problem=str(exc), failure="size")
    except yaml.reader.ReaderError as exc:  # a character YAML refuses; its str() is two lines
        # ``read_yaml`` reads text: the reader gives the refused character's code point.
        return YamlRead(
            False,
            problem=f"unacceptable character #x{exc.character:04x}: {exc.reason}",
            line=text.count("\n", 0, exc.position),
            failure="syntax",
        )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        return YamlRead(
            False,
            problem=str(getattr(exc, "problem", None) or exc),
            line=None if mark is None else mark.line,
            failure="syntax",
        )
    except RecursionError:
        return YamlRead(False, problem="nests too deeply", failure="depth")
    except (ValueError, OverflowError) as exc:  # a value matched a YAML type and would not build
        return YamlRead(False, problem=f"a value YAML cannot build ({exc})", failure="value")


@functools.lru_cache(maxsize=4096)
def _memo(text: str, base: bool) -> YamlRead:
    return _parse(text, base)


@functools.lru_cache(maxsize=2)
def _memo_long(text: str, base: bool) -> YamlRead:
    return _parse(text, base)


def read_yaml(text: str, *, base: bool = False) -> YamlRead:
    """``yaml.safe_load(text)`` (``base=True``: the ``BaseLoader``, every scalar a string),
    as a :class:`YamlRead`. Never raises."""
    read = _memo(text, base) if len(text) <= _MEMO_CHARS else _memo_long(text, base)
    if isinstance(read.value, (dict, list)):
        return YamlRead(read.ok, copy.deepcopy(read.value), read.problem, read.line, read.failure)
    return read
