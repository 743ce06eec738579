"""A kind is one adapter (issue 25, item 1): code outside ``memlab/kinds/`` asks a store's
kind what it does (``kinds.get(store.kind).review.apply``, ``kinds.capable(name,
"elfmem_tables")``), never compares the kind with a kind's name. Counted on the package's
syntax trees.

A comparison counts when one side is a registered store kind's name (a string literal, or a
tuple, list or set literal holding one) and the other side is a kind: a name or attribute
called ``kind`` (``kind``, ``store.kind``, ``self.kind``), ``x.get("kind")`` or
``getattr(x, "kind", ...)``. Other things that happen to share a kind's name are not kinds: a
memfs ``layout == "souveraine"``, a migration ``target == "souveraine"``, a problem's
``row.kind == "odd_label"``.

The registry's own modules (``memlab/kinds/_*.py``, its ``__init__.py``) are left out; a kind's
package (``memlab/kinds/<kind>/``) may name its own kind, never another.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from _package_source import package

from memlab import kinds

PACKAGE = Path(__file__).resolve().parents[1] / "memlab"

#: None remain: a kind's own code asks its capabilities too. Never grow it.
ALLOWED: Counter = Counter()


def _names(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _is_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "kind"
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    if isinstance(node, ast.Call) and node.args:
        key = node.args[1] if isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) > 1 else node.args[0]
        is_get = isinstance(node.func, ast.Attribute) and node.func.attr == "get"
        is_getattr = isinstance(node.func, ast.Name) and node.func.id == "getattr"
        return (is_get or is_getattr) and isinstance(key, ast.Constant) and key.value == "kind"
    return False


def kind_comparisons(source: str | ast.AST, store_kinds: set[str]) -> list[int]:
    """The line of every comparison of a kind with a store kind's name in ``source`` (text or
    its syntax tree)."""
    lines = []
    for node in ast.walk(source if isinstance(source, ast.AST) else ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(_names(s) & store_kinds for s in sides) and any(_is_kind(s) for s in sides):
            lines.append(node.lineno)
    return sorted(lines)


def counted(rel: str, source: str | ast.AST, store_kinds: set[str]) -> list[int]:
    """The counted comparisons of the module at ``rel`` (relative to ``memlab/``): none in the
    registry's own modules, and in a kind's package none with its own name."""
    parts = rel.split("/")
    if parts[0] == "kinds" and len(parts) == 2:
        return []  # the registry itself
    own = {parts[1]} if parts[0] == "kinds" else set()
    return kind_comparisons(source, store_kinds - own)


def test_a_kinds_package_may_name_itself_and_no_other_kind():
    source = 'if store.kind == "letta_blocks": pass\nif store.kind == "agent_file": pass\n'
    names = {"letta_blocks", "agent_file"}
    assert counted("kinds/letta_blocks/__init__.py", source, names) == [2]
    assert counted("kinds/agent_file/_detect.py", source, names) == [1]
    assert counted("audits/agent_file.py", source, names) == [1, 2]
    assert counted("kinds/_registry.py", source, names) == []


def test_the_counter_counts_kinds_and_nothing_else():
    source = '''
if store.kind == "elfmem_db": pass
if kind in ("agent_file", "other"): pass
if s.get("kind") != "letta_memfs": pass
if getattr(store, "kind", None) != "souveraine": pass
if layout == "souveraine": pass
if target == "souveraine": pass
if row.kind == "odd_label": pass
if store.kind in MEMFS_KINDS: pass
'''
    assert kind_comparisons(source, {"elfmem_db", "agent_file", "letta_memfs",
                                     "souveraine"}) == [2, 3, 4, 5]


def test_no_store_kind_literal_comparisons_outside_the_adapters():
    store_kinds = {k.name for k in kinds.kinds()}
    assert {"elfmem_db", "letta_server", "letta_memfs", "souveraine", "elfmem_substrate",
            "agent_file", "letta_blocks"} <= store_kinds
    found: Counter = Counter()
    for module in package():
        n = len(counted(module.rel, module.tree, store_kinds))
        if n:
            found[module.rel] = n
    assert found == ALLOWED
