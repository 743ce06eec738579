"""Private modules, public names (issue 25, item 3), checked on the package's syntax trees.

httpx's rule: a module may be private (``memlab/kinds/_memfs/_locate.py``), but the names one
module takes from another are that module's public names. So no module of memlab

- imports another module's ``_name`` (``from memlab.x import _name``, relative or absolute), or
- reaches one through a module it imported (``from memlab.formats import _json`` then
  ``_json._private``; the module ``_json`` itself is fine, its ``_private`` is not);

and no two modules import each other (a package and its own submodule included), at module
level or inside a function. Imports under ``if TYPE_CHECKING:`` are left out of the cycle
count: they run only for a type checker, never at import time, so they cannot make an import
cycle (``kinds/elfmem_db/_frames.py`` names ``_load.Reader`` in annotations that way).
"""

from __future__ import annotations

import ast

import pytest
from _package_source import Module, package, parse


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            if (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
                    isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"):
                for sub in node.body:
                    out |= {id(n) for n in ast.walk(sub)}
    return out


def scan(mods: tuple[Module, ...]) -> tuple[list[str], set[tuple[str, str]]]:
    """(private-name uses as ``module:line: target.name``, mutual-import pairs) of a package's
    parsed modules (``_package_source.package()``, or ``parse()`` of a scratch package)."""
    modules = {m.name: m for m in mods}
    private: list[str] = []
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for mod, module in modules.items():
        tree = module.tree
        package = mod if module.is_package else mod.rsplit(".", 1)[0]
        typing_only = _type_checking_nodes(tree)
        aliases: dict[str, str] = {}  # local name -> memlab module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != "memlab" and not target.startswith("memlab."):
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in modules:  # `from memlab.formats import _json`: a module
                        aliases[a.asname or a.name] = sub
                        dep = sub
                    else:
                        dep = target
                        if _is_private(a.name):
                            private.append(f"{mod}:{node.lineno}: {target}.{a.name}")
                    if id(node) not in typing_only and dep != mod:
                        edges[mod].add(dep)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "memlab" or a.name.startswith("memlab."):
                        if a.asname:
                            aliases[a.asname] = a.name
                        if id(node) not in typing_only and a.name != mod:
                            edges[mod].add(a.name)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _is_private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and aliases[node.value.id] != mod):
                private.append(f"{mod}:{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    mutual = {tuple(sorted((a, b))) for a in edges for b in edges[a]
              if b in edges and a in edges[b]}
    return private, mutual


def test_no_module_imports_another_modules_private_name():
    private, _ = scan(package())
    assert private == []


def test_no_two_modules_import_each_other():
    _, mutual = scan(package())
    assert sorted(mutual) == []


@pytest.mark.parametrize("files, private, mutual", [
    ({"a.py": "from memlab.b import _x\n", "b.py": "_x = 1\n"}, ["memlab.a:1: memlab.b._x"], set()),
    ({"p/__init__.py": "", "p/a.py": "from ._b import _x\n", "p/_b.py": "_x = 1\n"},
     ["memlab.p.a:1: memlab.p._b._x"], set()),
    ({"p/__init__.py": "", "p/a.py": "def f():\n    from .. import _c\n    return _c._y\n",
      "_c.py": "_y = 1\n"}, ["memlab.p.a:3: memlab._c._y"], set()),
    ({"a.py": "import memlab.b as b\nb._x\n", "b.py": "_x = 1\n"}, ["memlab.a:2: memlab.b._x"],
     set()),
    ({"a.py": "from memlab.b import x\n", "b.py": "def f():\n    from memlab.a import y\n"},
     [], {("memlab.a", "memlab.b")}),
    ({"p/__init__.py": "from ._s import x\n", "p/_s.py": "from memlab.p import y\n"},
     [], {("memlab.p", "memlab.p._s")}),
    ({"a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memlab.b import R\n",
      "b.py": "from memlab.a import x\n"}, [], set()),
    ({"a.py": "from memlab.b import x, __version__\n", "b.py": "x = 1\n"}, [], set()),
])
def test_the_rules_see_every_spelling(files, private, mutual):
    assert scan(parse(files)) == (private, mutual)
