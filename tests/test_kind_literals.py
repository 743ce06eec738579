"""A kind is one adapter (issue 25, item 1): code outside ``memlab/kinds/`` asks a store's
kind what it does (``kinds.get(store.kind).review.resolved.apply.note(...)``,
``kind.elfmem_frames(store)``), never compares the kind with a kind's name; and (issue 36,
item 1) never compares a kind's fields with a string either (the second part of this file),
nor asks the registry a capability string (``capable(name, "...")``, the third). Counted on
the package's syntax trees.

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


# ---- a kind's fields are behaviour: never compared with a string outside memlab/kinds/ -----------
#
# Issue 36, item 1: a kind's review adapter and its verify are objects engines call, so code
# outside ``memlab/kinds/`` never compares a kind's fields with a string literal (``==``,
# ``!=``, ``in``, ``not in``, ``match``). A field is read as ``<x>.review.<field>`` (also
# through ``.resolved``, ``self.review``, a name ``review``), ``<x>.verify``,
# ``<x>.capabilities``, ``<x>.copy_of``, ``<kind>.name`` (a kind: ``kinds.get(...)``,
# ``kinds.lookup(...)``, a name ``kind``) or ``getattr(x, "<field>")``; a name assigned from an
# expression holding such a read (``how = review.apply if review else None``) counts as the
# field in the function that assigns it. ``kinds.capable(name, "...")`` is a question to the
# registry, not a comparison: the third part of this file counts it.

#: The string fields a kind's review adapter had before it held behaviour (issue 36), and
#: those it has now.
REVIEW_FIELDS = {"units", "share_of", "removal", "edit", "apply", "dated", "stale_basis",
                 "prompt_files", "drift", "rules", "describe_file", "recorded_contradictions",
                 "remember", "project_folder"}
#: A kind's own fields read on any object (names no other object memlab has uses).
KIND_FIELDS = {"verify", "capabilities", "copy_of"}


def _is_review(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "review"
    if isinstance(node, ast.Attribute):
        return node.attr == "review" or (node.attr == "resolved" and _is_review(node.value))
    return _getattr_of(node) == "review"


def _getattr_of(node: ast.AST) -> str | None:
    """The field ``getattr(x, "<field>", ...)`` reads, or None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "getattr" and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
        return node.args[1].value
    return None


def _is_a_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "kind"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "lookup") and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "kinds")


def _is_field_read(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        if node.attr in KIND_FIELDS:
            return True
        if node.attr in REVIEW_FIELDS and _is_review(node.value):
            return True
        return node.attr == "name" and _is_a_kind(node.value)
    field = _getattr_of(node)
    if field in KIND_FIELDS or field == "review":
        return True
    return field in REVIEW_FIELDS and _is_review(node.args[0])  # type: ignore[attr-defined]


def _literal(node: ast.AST) -> bool:
    return bool(_names(node))


def _tainted(scope: ast.AST) -> set[str]:
    """Names assigned (anywhere in ``scope``) from an expression reading a kind's field."""
    out = set()
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            if any(_is_field_read(n) for n in ast.walk(node.value)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def field_comparisons(source: str) -> list[int]:
    """The line of every comparison of a kind's field with a string literal in ``source``."""
    tree = ast.parse(source)
    scopes = [tree, *(n for n in ast.walk(tree)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    found: set[tuple[int, int]] = set()
    for scope in scopes:
        names = _tainted(scope) if scope is not tree else set()

        def is_field(node: ast.AST) -> bool:
            return _is_field_read(node) or (isinstance(node, ast.Name) and node.id in names)

        for node in ast.walk(scope):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(is_field(s) for s in sides) and any(_literal(s) for s in sides):
                    found.add((node.lineno, node.col_offset))
            elif isinstance(node, ast.Match) and is_field(node.subject):
                if any(isinstance(p, ast.MatchValue) and _literal(p.value)
                       for case in node.cases for p in ast.walk(case.pattern)):
                    found.add((node.lineno, node.col_offset))
    return sorted(line for line, _ in found)


def test_the_field_counter_counts_field_comparisons_and_nothing_else():
    source = '''
if self.review.removal == "forget": pass
if kinds.get(store.kind).review.apply != "commit": pass
if "elfmem_tables" in kinds.get(store.kind).capabilities: pass
if getattr(kinds.lookup(store.kind), "verify", None) == "server": pass
def f(review):
    how = review.apply if review is not None else None
    if how == "script": pass
def g(kind):
    if kind.name in ("toy", "other"): pass
    match kind.copy_of:
        case "letta": pass
if self.review.resolved.drift == "seeds": pass
def h(store):
    target = getattr(kinds.lookup(store.kind), "copy_of", None) or store.kind
    if target == "substrate": pass
'''
    assert field_comparisons(source) == [2, 3, 4, 5, 8, 10, 11, 13, 16]
    negatives = '''
if layout == "souveraine": pass
if step["op"] == "forget": pass
if args.verify: pass
if kinds.capable(kind, "elfmem_tables"): pass
if path.name == ".elfmem": pass
if self.review.removal is None: pass
if review.rules is not None: review.rules.check(self)
if c.target == "substrate": pass
def f(review, target):
    if target == "letta": pass
def g(store):
    how = review.apply
def h():
    if how == "script": pass
if store.kind == other.kind: pass
if u["uid"] in self.review_units: pass
'''
    assert field_comparisons(negatives) == []


#: None remain. Never grow it.
FIELD_ALLOWED: Counter = Counter()


def test_no_kind_field_is_compared_with_a_string_outside_memlab_kinds():
    found: Counter = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("kinds/"):
            continue
        n = len(field_comparisons(path.read_text(encoding="utf-8")))
        if n:
            found[rel] = n
    assert found == FIELD_ALLOWED


# ---- a kind's behaviour is its methods: no capability string decides outside memlab/kinds/ ------
#
# Issue 36, item 1: ``kinds.capable(name, "elfmem_tables")`` was an engine choosing behaviour by
# a string a plugin kind could only copy. Engines now call the kind's methods
# (``elfmem_frames``, ``simulates``, ``doc_value``, ``walked_folder``, ``lists_file``), so a
# plugin kind brings its own. This counts every call of
# ``capable`` (``kinds.capable``, a bare ``capable``, any ``x.capable``) whose capability, the
# second argument or ``capability=``, is a string literal.


def capable_literals(source: str | ast.AST) -> list[int]:
    """The line of every ``capable(..., "<literal>")`` call in ``source``."""
    lines = []
    for node in ast.walk(source if isinstance(source, ast.AST) else ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else None)
        if name != "capable":
            continue
        asked = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "capability")]
        if any(_literal(a) for a in asked):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_capable_counter_counts_literal_capabilities_and_nothing_else():
    source = '''
if kinds.capable(store.kind, "elfmem_tables"): pass
if capable(kind, "json_file"): pass
ok = memlab.kinds.capable(getattr(store, "kind", None), capability="agents")
x = [k for k in ks if registry.capable(k, "uuid_folder")]
'''
    assert capable_literals(source) == [2, 3, 4, 5]
    negatives = '''
if kinds.capable(store.kind, flag): pass
if kind.elfmem_frames(store) is not None: pass
if kinds.lookup(kind).simulates(): pass
capable = "elfmem_tables"
if store.capable: pass
def f(capability="elfmem_tables"): pass
kinds.capable("elfmem_db")
'''
    assert capable_literals(negatives) == []


#: None remain. Never grow it.
CAPABLE_ALLOWED: Counter = Counter()


def test_no_capability_string_decides_outside_memlab_kinds():
    found: Counter = Counter()
    for module in package():
        if module.rel.startswith("kinds/"):
            continue
        n = len(capable_literals(module.tree))
        if n:
            found[module.rel] = n
    assert found == CAPABLE_ALLOWED
