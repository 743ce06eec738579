"""``__all__`` is each module's door (docs/DESIGN.md: "what one module takes from another is a
public name listed in that module's ``__all__``"; issue 36, item 5), checked on the package's
syntax trees (one shared parse, ``tests/_package_source.py``):

- every module of memlab has an ``__all__``: a literal list or tuple of strings (memlab's
  ``__init__`` spells its lazy verbs ``[*_LAZY]``, read from that dict's keys);
- every name in it exists in the module: bound at module level (assigned, defined, imported;
  inside ``if``/``try``/``with``/``for`` too), or served lazily by a module ``__getattr__`` from a
  module-level dict that maps the name to the memlab module that has it in its own ``__all__``;
- a name one memlab module takes from another (``from memlab.x import name``, relative or not,
  inside a function too, or ``x.name`` on a module it imported) is in that module's ``__all__``,
  unless it is itself a module (``from memlab.formats import _json``). Dunders
  (``__version__``, ``__file__``) are left to Python.

A name a module only re-exports needs no ``__all__`` entry where it is defined beyond the one in
the module that re-exports it: the rule asks the module named in the import.
"""

from __future__ import annotations

import ast

import pytest
from _package_source import Module, package, parse

#: Modules exempt from the rules: none (the exemption for memlab/sim, while it was being split,
#: is gone). Kept as the one place an exemption would be written, so a test reads it.
SIM_WITHOUT_ALL: set[str] = set()
SIM_NOT_IN_ALL: set[str] = set()


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _top_level(body: list[ast.stmt]):
    """The module's statements, into ``if``/``try``/``with``/``for``/``while`` blocks (they run
    at import), never into a function or class."""
    for node in body:
        yield node
        if isinstance(node, ast.Try | ast.TryStar):
            blocks = [node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)]
        elif isinstance(node, ast.If | ast.For | ast.AsyncFor | ast.While):
            blocks = [node.body, node.orelse]
        elif isinstance(node, ast.With | ast.AsyncWith):
            blocks = [node.body]
        else:
            blocks = []
        for block in blocks:
            yield from _top_level(block)


def _target_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def bound_names(tree: ast.Module) -> set[str]:
    """Names the module binds at module level."""
    out: set[str] = set()
    for node in _top_level(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                out |= _target_names(t)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            if not (isinstance(node, ast.AnnAssign) and node.value is None):
                out |= _target_names(node.target)
        elif isinstance(node, ast.For | ast.AsyncFor):
            out |= _target_names(node.target)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    out |= _target_names(item.optional_vars)
        elif isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Try | ast.TryStar):
            out |= {h.name for h in node.handlers if h.name}
    return out


def _dict_literals(tree: ast.Module) -> dict[str, ast.Dict]:
    return {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for t in node.targets
        if isinstance(t, ast.Name)
    }


def declared_all(tree: ast.Module) -> list[str] | None:
    """The module's ``__all__`` (None when it has none). Raises ValueError when it is not a
    literal list or tuple of strings (``*NAME`` of a module-level dict or list literal allowed)."""
    found = None
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                if found is not None or node.value is None or isinstance(node, ast.AugAssign):
                    raise ValueError(f"line {node.lineno}: __all__ is assigned more than once")
                found = node
    if found is None:
        return None
    if not isinstance(found.value, ast.List | ast.Tuple):
        raise ValueError(f"line {found.lineno}: __all__ is not a literal list or tuple")
    dicts = _dict_literals(tree)
    names: list[str] = []
    for e in found.value.elts:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            names.append(e.value)
        elif isinstance(e, ast.Starred) and isinstance(e.value, ast.Name) \
                and e.value.id in dicts and all(isinstance(k, ast.Constant)
                                                and isinstance(k.value, str)
                                                for k in dicts[e.value.id].keys):
            names += [k.value for k in dicts[e.value.id].keys]  # type: ignore[union-attr]
        else:
            raise ValueError(f"line {found.lineno}: __all__ holds something not a string")
    return names


def lazy_names(tree: ast.Module) -> dict[str, str]:
    """name -> memlab module, for a module with a module-level ``__getattr__`` (PEP 562): the
    entries of its module-level dict literals that map a name to a ``memlab`` module."""
    if not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        return {}
    return {
        k.value: v.value
        for d in _dict_literals(tree).values()
        for k, v in zip(d.keys, d.values)
        if isinstance(k, ast.Constant) and isinstance(k.value, str)
        and isinstance(v, ast.Constant) and isinstance(v.value, str)
        and (v.value == "memlab" or v.value.startswith("memlab."))
    }


def _imported_module(mod: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = mod.name if mod.is_package else mod.name.rsplit(".", 1)[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def taken_names(mod: Module, modules: set[str]):
    """(line, memlab module, name) for each name ``mod`` takes from another memlab module that
    is not itself a module: ``from memlab.x import name`` and ``alias.name`` on a module alias."""
    aliases: dict[str, str] = {}  # local name -> the memlab module it is bound to
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.ImportFrom):
            target = _imported_module(mod, node)
            if target not in modules:
                continue
            for a in node.names:
                if f"{target}.{a.name}" in modules:
                    aliases[a.asname or a.name] = f"{target}.{a.name}"
                elif a.name != "*" and target != mod.name and not _is_dunder(a.name):
                    yield node.lineno, target, a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in modules:
                    aliases[a.asname or a.name.split(".")[0]] = a.asname and a.name or "memlab"
    for node in ast.walk(mod.tree):
        # the longest chain of attributes on a module alias that names modules, then one name
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
            continue
        chain, base = [node.attr], node.value
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in aliases):
            continue
        target = aliases[base.id]
        for i, part in enumerate(chain):
            if f"{target}.{part}" in modules:
                target = f"{target}.{part}"
                continue
            if i == len(chain) - 1 and target != mod.name and not _is_dunder(part):
                yield node.lineno, target, part
            break


def check(mods: tuple[Module, ...]) -> dict[str, list[str]]:
    """Per rule, the violations (``module[:line]: what``) of a package."""
    by_name = {m.name: m for m in mods}
    alls: dict[str, list[str] | None] = {}
    out: dict[str, list[str]] = {"no __all__": [], "bad __all__": [], "not in module": [],
                                 "not in __all__": []}
    for m in mods:
        try:
            alls[m.name] = declared_all(m.tree)
        except ValueError as e:
            out["bad __all__"].append(f"{m.rel}: {e}")
            alls[m.name] = []
        if alls[m.name] is None:
            out["no __all__"].append(m.rel)
    for m in mods:
        bound, lazy = bound_names(m.tree), lazy_names(m.tree)
        for name in alls[m.name] or []:
            if name in bound:
                continue
            source = lazy.get(name)
            if source is None or name not in (alls.get(source) or []):
                out["not in module"].append(f"{m.rel}: {name}")
        for line, target, name in taken_names(m, set(by_name)):
            if name not in (alls[target] or []):
                out["not in __all__"].append(f"{m.rel}:{line}: {target}.{name}")
    return out


def test_every_module_has_an_all():
    missing = check(package())["no __all__"]
    present = {m.rel for m in package()}
    assert set(missing) - SIM_WITHOUT_ALL == set()
    # the exemption only shrinks: a listed module that exists and now has __all__ leaves it
    assert SIM_WITHOUT_ALL & present <= set(missing), (SIM_WITHOUT_ALL & present) - set(missing)


def test_every_all_is_a_literal_list_of_names_the_module_has():
    found = check(package())
    assert found["bad __all__"] == []
    assert found["not in module"] == []


def test_what_one_module_takes_from_another_is_in_its_all():
    found = check(package())["not in __all__"]
    assert [v for v in found if v.split(": ", 1)[1] not in SIM_NOT_IN_ALL] == []
    # the exemption only shrinks: a listed name now in its module's __all__ leaves the list
    alls = {m.name: declared_all(m.tree) or [] for m in package()}
    fixed = {n for n in SIM_NOT_IN_ALL if n.rsplit(".", 1)[1] in alls.get(n.rsplit(".", 1)[0], [])}
    assert fixed == set()


def _violations(files: dict[str, str]) -> dict[str, list[str]]:
    return {k: v for k, v in check(parse(files)).items() if v}


@pytest.mark.parametrize("files, found", [
    # negative controls: each of these keeps the rules
    ({"__init__.py": "__all__ = []\n", "a.py": "__all__ = ['f']\ndef f(): pass\n",
      "b.py": "__all__ = []\nfrom memlab.a import f\nfrom memlab import a\na.f()\n"}, {}),
    ({"__init__.py": "__all__ = ['x', '__version__']\n__version__ = '1'\nif True:\n"
      "    x = 1\n", "a.py": "__all__ = []\nfrom memlab import __version__, x\n"}, {}),
    ({"__init__.py": "__all__ = []\n", "p/__init__.py": "__all__ = []\n",
      "p/_m.py": "__all__ = []\n_y = 1\n", "a.py": "__all__ = []\nfrom memlab.p import _m\n"}, {}),
    ({"__init__.py": "__all__ = [*_LAZY]\n_LAZY = {'f': 'memlab.a'}\n"
      "def __getattr__(n): pass\n", "a.py": "__all__ = ['f']\nf = 1\n"}, {}),
    ({"__init__.py": "__all__ = []\n", "a.py": "__all__ = ['E']\ntry:\n    import x\n"
      "except ImportError:\n    E = None\n"}, {}),
    ({"__init__.py": "__all__ = []\n", "a.py": "__all__ = []\nimport os\nos.path.join\n"}, {}),
    # each rule broken once
    ({"__init__.py": "__all__ = []\n", "a.py": "x = 1\n"}, {"no __all__": ["a.py"]}),
    ({"__init__.py": "__all__ = []\n", "a.py": "__all__ = ['x', 'gone']\nx = 1\n"},
     {"not in module": ["a.py: gone"]}),
    ({"__init__.py": "__all__ = ['g']\n_LAZY = {'g': 'memlab.a'}\ndef __getattr__(n): pass\n",
      "a.py": "__all__ = []\ng = 1\n"}, {"not in module": ["__init__.py: g"]}),
    ({"__init__.py": "__all__ = []\n", "a.py": "__all__ = NAMES\n"},
     {"bad __all__": ["a.py: line 1: __all__ is not a literal list or tuple"]}),
    ({"__init__.py": "__all__ = []\n", "a.py": "__all__ = []\nx = 1\n",
      "b.py": "__all__ = []\ndef f():\n    from memlab.a import x\n"},
     {"not in __all__": ["b.py:3: memlab.a.x"]}),
    ({"__init__.py": "__all__ = []\n", "p/__init__.py": "__all__ = []\n",
      "p/a.py": "__all__ = []\nx = 1\n", "p/b.py": "__all__ = []\nfrom .a import x\n"},
     {"not in __all__": ["p/b.py:2: memlab.p.a.x"]}),
    ({"__init__.py": "__all__ = []\n", "a.py": "__all__ = []\nx = 1\n",
      "b.py": "__all__ = []\nimport memlab.a as m\nm.x\n"},
     {"not in __all__": ["b.py:3: memlab.a.x"]}),
    ({"__init__.py": "__all__ = []\n", "p/__init__.py": "__all__ = []\n",
      "p/a.py": "__all__ = []\nx = 1\n", "b.py": "__all__ = []\nimport memlab.p.a\nmemlab.p.a.x\n"},
     {"not in __all__": ["b.py:3: memlab.p.a.x"]}),
    ({"__init__.py": "__all__ = []\n", "a.py": "x = 1\n", "b.py": "__all__ = []\n"
      "from memlab.a import x\n"}, {"no __all__": ["a.py"], "not in __all__":
                                    ["b.py:2: memlab.a.x"]}),
])
def test_the_rules_see_every_spelling(files, found):
    assert _violations(files) == found
