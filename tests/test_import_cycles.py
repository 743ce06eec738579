"""No import cycle of any length among memlab's modules (docs/DESIGN.md: "no two modules import
each other, not even lazily inside a function"; issue 36, item 5), on the package's syntax
trees (one shared parse, ``tests/_package_source.py``).

An edge runs from a module to each memlab module it imports, at module level or inside a
function (a deferred import is still an import: it only moves the cycle to the first call).
``from memlab.x import name`` is an edge to ``memlab.x``, or to ``memlab.x.name`` when that is
a module; relative imports are resolved. Imports under ``if TYPE_CHECKING:`` are left out: they
never run. Importing ``memlab.x.y`` also runs ``memlab/x/__init__.py``, but that is not
counted as an edge to ``memlab.x``: a package's ``__init__`` importing its own submodules, which
import their siblings, is the normal shape of a package. Importing the package itself by name
(``from memlab.x import name``) is an edge, so a submodule importing its package back is a cycle.

The test finds the strongly connected components of that graph (Tarjan) and names each cycle
with one shortest loop through it, with the file and line of every import on the loop.

It passes once the sim split (issue 36 item 4, branch sim36) lands. At 2c54640 it finds one
cycle, all inside memlab/sim, 9 modules: sim._release_common, sim.cache, sim.claims, sim.real,
sim.real_scripts, sim.registry, sim.rules, sim.scenarios, sim.scenarios._base; one loop through
it: sim._release_common -> sim.registry (module level) -> sim.claims (deferred, registry.py:78)
-> sim.real (deferred, claims.py:472) -> sim._release_common (real.py:29). Outside memlab/sim
there is none.
"""

from __future__ import annotations

import ast

import pytest
from _package_source import Module, package, parse


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            if (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
                isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
            ):
                for sub in node.body:
                    out |= {id(n) for n in ast.walk(sub)}
    return out


def import_edges(mods: tuple[Module, ...]) -> dict[str, dict[str, str]]:
    """module -> {imported memlab module: ``rel:line`` of the first such import}."""
    names = {m.name for m in mods}
    edges: dict[str, dict[str, str]] = {m.name: {} for m in mods}
    for m in mods:
        package_name = m.name if m.is_package else m.name.rsplit(".", 1)[0]
        typing_only = _type_checking_nodes(m.tree)
        for node in ast.walk(m.tree):
            if id(node) in typing_only:
                continue
            deps: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package_name.split(".")
                    base = parts[: len(parts) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for a in node.names:
                    if f"{target}.{a.name}" in names:
                        deps.append(f"{target}.{a.name}")
                    elif target in names:
                        deps.append(target)
            elif isinstance(node, ast.Import):
                deps = [a.name for a in node.names if a.name in names]
            for dep in deps:
                if dep != m.name:
                    edges[m.name].setdefault(dep, f"{m.rel}:{node.lineno}")
    return edges


def cycles(edges: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(root: str) -> None:  # iterative Tarjan: no recursion limit on a deep chain
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def shortest_loop(component: list[str], edges: dict[str, dict[str, str]]) -> list[str]:
    """One shortest loop through the component's first module, as ``a -> b (rel:line)`` hops."""
    inside = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier and start not in previous:  # breadth first, back to the start
        nxt = []
        for v in frontier:
            for w in sorted(edges[v]):
                if w in inside and w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    hops, w = [], start
    while True:
        v = previous[w]
        hops.append(f"{v} -> {w} ({edges[v][w]})")
        w = v
        if w == start:
            return hops[::-1]


def describe(edges: dict[str, dict[str, str]]) -> list[str]:
    return [
        f"{len(c)} modules {c}: " + "; ".join(shortest_loop(c, edges)) for c in cycles(edges)
    ]


def test_no_import_cycles_among_memlab_modules():
    edges = import_edges(package())
    assert describe(edges) == []


def test_the_graph_is_the_package():
    """The graph is not empty (a parser that saw no import would pass the test above)."""
    edges = import_edges(package())
    assert len(edges) == len(package()) > 100
    assert sum(map(len, edges.values())) > 300
    assert "memlab.store" in edges["memlab.sources"] or any(
        "memlab.store" in deps for deps in edges.values()
    )


def _cycles(files: dict[str, str]) -> list[list[str]]:
    return cycles(import_edges(parse(files)))


@pytest.mark.parametrize("files, found", [
    # negative controls
    ({"a.py": "from memlab.b import x\n", "b.py": "x = 1\n"}, []),
    ({"a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memlab.b import R\n",
      "b.py": "from memlab.a import x\n"}, []),
    ({"p/__init__.py": "from ._s import x\n", "p/_s.py": "from ._t import y\n",
      "p/_t.py": "y = 1\n"}, []),
    ({"a.py": "import os\nfrom memlab.b import x\n", "b.py": "from memlab.c import y\n",
      "c.py": "import json\n"}, []),
    # cycles of every length and spelling
    ({"a.py": "from memlab.b import x\n", "b.py": "def f():\n    from memlab.a import y\n"},
     [["memlab.a", "memlab.b"]]),
    ({"a.py": "import memlab.b\n", "b.py": "from memlab import c\n",
      "c.py": "def f():\n    from . import d\n", "d.py": "from .a import x\n"},
     [["memlab.a", "memlab.b", "memlab.c", "memlab.d"]]),
    ({"p/__init__.py": "from ._s import x\n", "p/_s.py": "from memlab.p import y\n"},
     [["memlab.p", "memlab.p._s"]]),
    ({"a.py": "from memlab.b import x\n", "b.py": "from memlab.a import y\n",
      "c.py": "from memlab.d import x\n", "d.py": "class K:\n    def f(self):\n"
      "        import memlab.c\n"}, [["memlab.a", "memlab.b"], ["memlab.c", "memlab.d"]]),
])
def test_the_rule_finds_cycles_of_any_length(files, found):
    assert _cycles(files) == found


def test_a_cycle_is_named_with_its_imports():
    edges = import_edges(parse({"a.py": "from memlab.b import x\n",
                                "b.py": "import json\n\ndef f():\n    from memlab.c import y\n",
                                "c.py": "from memlab.a import z\n"}))
    assert describe(edges) == [
        "3 modules ['memlab.a', 'memlab.b', 'memlab.c']: memlab.a -> memlab.b (a.py:1); "
        "memlab.b -> memlab.c (b.py:4); memlab.c -> memlab.a (c.py:1)"
    ]
