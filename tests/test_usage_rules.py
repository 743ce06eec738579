"""One way to do each thing, checked by what the library code calls (its syntax tree), not by
what its modules are named (issue 23, item 5):

- HTML: only ``memlab._escape`` calls ``html.escape``; every other module goes through
  ``memlab._escape.html`` (controls and bidi characters made visible);
- YAML: only ``memlab.formats._yaml`` parses YAML (size limits, duplicate keys, one loader);
- errors: library code raises ``MemlabError`` subclasses, never a bare ``RuntimeError`` or
  ``Exception`` the CLI would print as a traceback;
- JSON: store text is parsed by ``memlab.formats._json.loads`` (duplicate keys, lone
  surrogates reported); plain ``json.loads`` is left only where memlab reads back a file it
  wrote itself, each listed below with the file it reads.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from _package_source import PACKAGE, Module, package, parse


#: module -> what memlab itself wrote (or only sniffs) that it reads there with plain json.loads
OWN_JSON_READS = {
    "kinds/agent_file/_walk.py": "sniffing only (is this an Agent File?); the loader reads it "
                                 "with _json.loads",
    "embed/_embedder.py": "the verification record memlab keeps in its own embedding cache",
    "embed/_precision.py": "the precision choice memlab cached",
    "embed/_shipped.py": "the manifest of the vectors memlab ships in its wheel",
    "lake/_sample.py": "the bundled sample fleet's usage rows and agent files (made by scripts/)",
    "lake/_layout.py": "the lake's own _manifests/*.json, and the pandas and memlab dtype "
                       "records in the schema metadata of the lake's Parquet files",
    "migrations/_verify_letta.py": "the side file memlab migrate wrote beside the migrated repo",
    "report/_runs.py": "runs.json written by report all",
    "report/__init__.py": "metrics.json written by memlab's own notebooks",
    "report/schedule.py": "runs.json written by report all",
    "reviews/_apply_edits.py": "a value memlab wrote into its own proposal file as JSON",
    "reviews/_proposal.py": "the proposal's .json memlab wrote beside its .md",
    "sim/real/_driver.py": "a request line from memlab's own simulation process",
    "sim/real/releases.py": "a result line from memlab's driver inside a release's venv",
    "sim/model/scenarios/concurrency.py": "the result line of memlab's own S8 writer process",
}


def _modules():
    for module in package():
        yield module.rel, module.tree


def _calls(tree: ast.AST, module: str, names: set[str]) -> list[int]:
    """Lines calling ``module.name`` for a name in ``names`` (``import module`` or
    ``from module import name`` either way)."""
    aliases = {module}
    direct = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == module}
        elif isinstance(node, ast.ImportFrom) and node.module == module:
            direct |= {a.asname or a.name for a in node.names if a.name in names}
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in names and isinstance(f.value, ast.Name)
                and f.value.id in aliases) or (isinstance(f, ast.Name) and f.id in direct):
            lines.append(node.lineno)
    return lines


def _found(module: str, names: set[str], allowed: set[str]) -> dict[str, list[int]]:
    return {rel: lines for rel, tree in _modules()
            if rel not in allowed and (lines := _calls(tree, module, names))}


def test_only_the_escaper_calls_html_escape():
    assert _found("html", {"escape"}, {"_escape.py"}) == {}


def test_only_the_yaml_reader_parses_yaml():
    parsers = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all",
               "compose", "compose_all", "parse", "scan"}
    assert _found("yaml", parsers, {"formats/_yaml.py"}) == {}


def test_library_code_raises_no_bare_runtime_error_or_exception():
    bare = {}
    for rel, tree in _modules():
        lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc is not None
                 and isinstance(call := n.exc, ast.Call) and isinstance(call.func, ast.Name)
                 and call.func.id in ("RuntimeError", "Exception")]
        if lines:
            bare[rel] = lines
    assert bare == {}


def test_plain_json_loads_only_where_memlab_reads_its_own_files():
    found = _found("json", {"loads", "load"}, {"formats/_json.py"})
    assert set(found) <= set(OWN_JSON_READS), {k: v for k, v in found.items()
                                               if k not in OWN_JSON_READS}
    # the list stays true: a module that no longer reads JSON this way leaves it
    assert set(OWN_JSON_READS) <= set(found), set(OWN_JSON_READS) - set(found)


@pytest.mark.parametrize("source, calls", [
    ("import html\nhtml.escape(x)\n", 1),
    ("import html as h\nh.escape(x)\n", 1),
    ("from html import escape as e\ne(x)\n", 1),
    ("from memlab._escape import html\nhtml(x)\n", 0),
])
def test_the_rule_sees_every_spelling(source, calls):
    assert len(_calls(ast.parse(source), "html", {"escape"})) == calls


# ---- git: only memlab._git starts it (its _git_process) ---------------------------------------

#: Modules that start git with ``subprocess`` themselves. Both run it only on repositories the
#: simulation itself just created, with ``memlab._git.env()``'s environment (no system or global
#: config, no inherited GIT_* variable): the S8 set-up, and the writer processes, which run as
#: standalone scripts (their git is what S8 measures, timed per call). The test requires this
#: list to be exact.
GIT_OUTSIDE_GIT_MODULE = {
    "sim/model/scenarios/concurrency.py": "S8's set-up runs git on the clones it made, memlab._git.env()",
    "sim/model/_writers.py": "S8's writer processes commit in those clones with that environment",
}

_SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output", "getoutput",
                     "getstatusoutput"}


def _is_git_word(node: ast.AST | None) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (node.value == "git" or node.value.endswith("/git")))


def _command_starts_with_git(node: ast.AST | None, assigned: dict[str, ast.AST]) -> bool:
    """Whether ``node`` (a subprocess command) is a list whose first word is ``git``: a literal
    list or tuple, a sum of lists, a string, or a name assigned one of those in the module."""
    if isinstance(node, ast.Name) and node.id in assigned:
        return _command_starts_with_git(assigned[node.id], {})
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _command_starts_with_git(node.left, assigned)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        first = node.elts[0]
        if isinstance(first, ast.Starred):
            return _command_starts_with_git(first.value, assigned)
        return _is_git_word(first) or (isinstance(first, ast.Name) and first.id in assigned
                                       and _is_git_word(assigned[first.id]))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split()[:1] == ["git"] or node.value.startswith("git ")
    return False


def _git_calls(tree: ast.AST) -> list[int]:
    """Lines where ``tree`` starts git through ``subprocess`` (any import spelling)."""
    aliases, direct = {"subprocess"}, set()
    assigned: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "subprocess"}
        elif isinstance(node, ast.ImportFrom) and node.module == "subprocess":
            direct |= {a.asname or a.name for a in node.names if a.name in _SUBPROCESS_CALLS}
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if not ((isinstance(f, ast.Attribute) and f.attr in _SUBPROCESS_CALLS
                 and isinstance(f.value, ast.Name) and f.value.id in aliases)
                or (isinstance(f, ast.Name) and f.id in direct)):
            continue
        cmd = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "args"), None)
        if _command_starts_with_git(cmd, assigned):
            lines.append(node.lineno)
    return lines


def test_only_the_git_module_starts_git():
    found = {rel: lines for rel, tree in _modules()
             if rel != "_git_process.py" and (lines := _git_calls(tree))}
    # exact both ways: a new caller fails, and so does a fixed one still listed
    assert set(found) == set(GIT_OUTSIDE_GIT_MODULE), found


@pytest.mark.parametrize("source, calls", [
    ("import subprocess\nsubprocess.run(['git', 'log'])\n", 1),
    ("import subprocess as sp\nsp.Popen(['/usr/bin/git', 'log'])\n", 1),
    ("from subprocess import check_output as co\nco(args=('git', 'status'))\n", 1),
    ("import subprocess\ncmd = ['git', '-C', d]\nsubprocess.run(cmd + ['log'])\n", 1),
    ("import subprocess\nsubprocess.run([*['git'], 'log'])\n", 1),
    ("import subprocess\nsubprocess.run('git log', shell=True)\n", 1),
    ("import subprocess\nsubprocess.run(['rg', 'git'])\n", 0),
    ("from memlab import _git\n_git.run(repo, ['log'])\n", 0),
])
def test_the_git_rule_sees_every_spelling(source, calls):
    assert len(_git_calls(ast.parse(source))) == calls


# ---- thresholds: written once, in memlab.constants ---------------------------------------------

#: constant -> the names (of a parameter, keyword, variable or field, or any name compared with
#: the literal) that mark a literal equal to it as that threshold. A literal equal to a
#: constant elsewhere (0.9 as a plot alpha, 90 as a column width, 64 as a hash length) is
#: something else and passes.
THRESHOLD_CONTEXTS = {
    "NEAR_DUP_THRESHOLD": r"thresh|cos|sim|dup|band|near",
    "EXACT_DUP_THRESHOLD": r"thresh|cos|sim|dup|band|exact",
    "CONTRADICTION_MIN": r"contradict",
    "PRUNE_THRESHOLD": r"prune|recency",
    "MAX_FILE_BYTES": r"size|bytes|cap",  # MAX_VALUE_BYTES is the same figure
    "PG_STATEMENT_TIMEOUT_MS": r"timeout",
    "PG_LOCK_TIMEOUT_MS": r"timeout",
    "STALE_AFTER_DAYS": r"stale",
    "SECONDS_PER_CALL": r"seconds_per_call|latency",
    "MAX_FOLDER_DEPTH": r"depth",
    "MAX_FM_COLUMNS": r"fm_col|columns",
    "MAX_YAML_NODES": r"yaml|nodes",
    "MAX_YAML_CHARS": r"yaml",
    "PENALTY_FACTOR": r"penalt",
    "LAMBDA_CEILING": r"lambda|ceiling",
    "PROTECTED_MAX_LAMBDA": r"lambda|protect",
}

#: Genuine hits allowed to stay literal: module -> {constant: why}. Empty since the simulation
#: uses the constants' names; the test requires this to be exact.
SIM_THRESHOLD_LITERALS: dict[str, dict[str, str]] = {}

#: A literal divided into a length is a characters- or bytes-per-token figure; the one number a
#: literal byte cap is compared with (``st_size``) or passed as (``max_bytes=``).
_SIZE_NAMES = r"^st_size$|^max_bytes$"
_MIN_CAP = 4096
BYTE_CAP = "a byte cap (MAX_FILE_BYTES or a constant of its own)"
#: what a length divided by 4 must be the length of to be a per-token figure (a quarter of the
#: notes is not)
_TEXTY = re.compile(r"text|char|byte|prompt|content|encode|value|body|answer")


def _names_in(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) < 40:
            out.add(n.value)  # a key: m.get("cosine")
    return out


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    return None


def _values(node: ast.AST):
    """The numeric literals of a default, keyword or assigned value, except those in a sequence
    of more than two numbers (a sweep of candidates or a table, not one threshold; a band is
    two)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and \
            sum(_number(e) is not None for e in node.elts) > 2:
        return
    if (v := _number(node)) is not None:
        yield v, node.lineno
        return
    for child in ast.iter_child_nodes(node):
        yield from _values(child)


def _literals_near(tree: ast.AST):
    """(number, its line, the names that give it its meaning) for each numeric literal compared,
    defaulted, passed by keyword, assigned or put in a field."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = _names_in(node)
            for operand in [node.left, *node.comparators]:
                if (v := _number(operand)) is not None:
                    yield v, operand.lineno, names
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            pos = [*a.posonlyargs, *a.args]
            pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults)) + \
                [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            for arg, default in pairs:
                for v, line in _values(default):
                    yield v, line, {arg.arg}
        elif isinstance(node, ast.keyword) and node.arg:
            for v, line in _values(node.value):
                yield v, line, {node.arg}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = set().union(*(_names_in(t) for t in targets))
            if node.value is not None and not isinstance(node.value, (ast.Call, ast.Lambda)):
                for v, line in _values(node.value):
                    yield v, line, names


def _threshold_literals(tree: ast.AST) -> dict[str, list[int]]:
    """constant -> lines where ``tree`` writes its value where it means that threshold."""
    from memlab import constants

    found: dict[str, list[int]] = {}
    rules = [(name, getattr(constants, name), re.compile(pattern, re.I))
             for name, pattern in THRESHOLD_CONTEXTS.items()]
    size = re.compile(_SIZE_NAMES)
    for value, line, names in _literals_near(tree):
        for name, wanted, pattern in rules:
            if value == wanted and any(pattern.search(n) for n in names):
                found.setdefault(name, []).append(line)
        if value >= _MIN_CAP and any(size.search(n) for n in names):
            found.setdefault(BYTE_CAP, []).append(line)
    for node in ast.walk(tree):  # len(text) / 4 or // 4: a per-token figure
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)) \
                and _number(node.right) in (4, 4.0) and "len" in (names := _names_in(node.left)) \
                and any(_TEXTY.search(n) for n in names):
            found.setdefault("CHARS_PER_TOKEN", []).append(node.lineno)
    return found


def test_threshold_literals_are_the_constants_names():
    found = {rel: set(hits) for rel, tree in _modules()
             if rel not in ("constants.py", "sim/real/_driver.py")
             and (hits := _threshold_literals(tree))}
    sim = {rel: set(v) for rel, v in SIM_THRESHOLD_LITERALS.items()}
    assert {k: v for k, v in found.items() if not k.startswith("sim/")} == {}
    # exact both ways for the simulation, which another branch fixes
    assert {k: v for k, v in found.items() if k.startswith("sim/")} == sim


@pytest.mark.parametrize("source, hits", [
    ("if cos >= 0.90:\n    pass\n", {"NEAR_DUP_THRESHOLD"}),
    ("ok = 0.90 <= m.get('cosine', 0) < 0.95\n", {"NEAR_DUP_THRESHOLD", "EXACT_DUP_THRESHOLD"}),
    ("def f(near_dup_threshold=0.9):\n    pass\n", {"NEAR_DUP_THRESHOLD"}),
    ("review(store, threshold=0.9)\n", {"NEAR_DUP_THRESHOLD"}),
    ("BAND = (0.90, 0.95)\n", {"NEAR_DUP_THRESHOLD", "EXACT_DUP_THRESHOLD"}),
    ("if p.stat().st_size > 1_000_000:\n    pass\n", {BYTE_CAP}),
    ("read_regular(p, max_bytes=10_000_000)\n", {"MAX_FILE_BYTES", BYTE_CAP}),
    ("tokens = len(text) // 4\n", {"CHARS_PER_TOKEN"}),
    ("early = len(notes) // 4\n", set()),
    ("def f(thresholds=(0.85, 0.90, 0.95)):\n    pass\n", set()),
    ("conn.execute(q, statement_timeout=60_000)\n", {"PG_STATEMENT_TIMEOUT_MS"}),
    ("if stale_days > 90:\n    pass\n", {"STALE_AFTER_DAYS"}),
    ("ax.bar(x, y, alpha=0.9)\n", set()),
    ("plt.text(x, y, s, rotation=90)\n", set()),
    ("ok = len(sha) == 64\n", set()),
    ("if cos >= NEAR_DUP_THRESHOLD:\n    pass\n", set()),
])
def test_the_threshold_rule_sees_its_meaning_not_just_its_number(source, hits):
    assert set(_threshold_literals(ast.parse(source))) == hits


# ---- figures: only memlab.plots draws them (issue 25, item 7) ----------------------------------

NOTEBOOKS = PACKAGE.parent / "notebooks"


def _matplotlib_imports(tree: ast.AST) -> list[int]:
    """Lines importing matplotlib (any submodule, any spelling)."""
    return [n.lineno for n in ast.walk(tree)
            if (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "matplotlib"
                                                  for a in n.names))
            or (isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "matplotlib")]


def _pandas_plot_calls(tree: ast.AST) -> list[int]:
    """Lines calling pandas' plotting (``df.plot(...)``, ``df.plot.bar(...)``) or drawing on
    an axes (``ax.plot(...)``): any ``.plot`` call or call on a ``.plot`` attribute."""
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(f := n.func, ast.Attribute)
            and (f.attr == "plot"
                 or (isinstance(f.value, ast.Attribute) and f.value.attr == "plot"))]


def test_only_the_figure_package_imports_matplotlib_or_plots():
    found = {rel: lines for rel, tree in _modules()
             if not rel.startswith("plots/")
             and (lines := _matplotlib_imports(tree) + _pandas_plot_calls(tree))}
    assert found == {}
    # the rule is not empty: memlab/plots/ is where matplotlib is, and where pandas draws
    inside = {rel: tree for rel, tree in _modules() if rel.startswith("plots/")}
    assert [rel for rel, tree in inside.items() if _matplotlib_imports(tree)]
    assert [rel for rel, tree in inside.items() if _pandas_plot_calls(tree)]


@pytest.mark.parametrize("source, lines", [
    ("import matplotlib\n", 1),
    ("import matplotlib.pyplot as plt\n", 1),
    ("from matplotlib import pyplot\n", 1),
    ("from matplotlib.figure import Figure\n", 1),
    ("import numpy, matplotlib.colors\n", 1),
    ("df.plot(x='a')\n", 1),
    ("df.plot.bar(stacked=True)\n", 1),
    ("from memlab import plots\nplots.show(plots.cluster_map(p))\n", 0),
    ("import matplotlib_inline\n", 0),
])
def test_the_figure_rule_sees_every_spelling(source, lines):
    tree = ast.parse(source)
    assert len(_matplotlib_imports(tree) + _pandas_plot_calls(tree)) == lines


def _notebook_code(path: Path) -> str:
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_notebooks_draw_only_through_memlab_plots():
    drawing = re.compile(r"%matplotlib|\bmatplotlib\b|\bplt\.|\.plot\(|\.plot\.\w+\(|savefig")
    found = {p.name: drawing.findall(code) for p in sorted(NOTEBOOKS.glob("*.ipynb"))
             if drawing.search(code := _notebook_code(p))}
    assert found == {}
    # and every notebook that shows a figure shows it with plots.show(plots.<figure>(...))
    shown = {p.name for p in NOTEBOOKS.glob("*.ipynb") if "plots.show(plots." in _notebook_code(p)}
    assert shown >= {"01-audit.ipynb", "02-memfs-audit.ipynb", "04-simulation.ipynb",
                     "05-review.ipynb", "06-fleet.ipynb"}, shown


# ---- one of each piece of plumbing (issue 36, item 3) ------------------------------------------
# The one ls-tree parser and its rule for non-UTF-8 names (memlab/io/_git_tree.py), the one
# atomic writer (memlab/io/_atomic.py), the one folder walker (memlab/_files.py: walk). Code
# text memlab renders (the plan script's machinery, a string constant that is Python) is
# checked too.

LS_TREE_PARSER = "io/_git_tree.py"
ATOMIC_WRITER = "io/_atomic.py"
WALKER = "_files.py"

#: module -> why it may decode bytes with surrogateescape outside the ls-tree rule
OWN_SURROGATEESCAPE = {
    "_git_check.py": "objects/info/alternates: a file of folder paths, not a git tree's names",
}
#: module -> what it walks with rglob: never a store's folder
OWN_TREE_WALKS = {
    "sim/cache.py": "memlab's own sim/ source and an installed elfmem release's .py files, "
                    "hashed for the result cache's key",
    "sim/real/release_facts.py": "two installed elfmem releases' .py files, compared",
    "sim/real/runner.py": "an installed elfmem release's .py files, hashed",
    "sim/real/_write_paths.py": "an installed elfmem release's .py files, parsed",
}
#: module -> why it renames or makes a temp file without the atomic writer
OWN_RENAMES = {
    "migrations/_apply.py": "moves a whole migrated folder into place (and back on failure)",
    "migrations/_script.py": "the plan script's machinery moves the whole folder into place "
                             "as the direct apply does",
    "sources/_bundle.py": "moves a whole cloned folder into place",
    "report/_stale.py": "renames an earlier run's report outputs aside in their own folder "
                        "(memlab's files moved, nothing written)",
    "sim/model/_writers.py": "the modelled store writer's own rename: what the simulation "
                             "measures, not memlab's plumbing",
}


def _code_units(module: Module) -> list[ast.AST]:
    """The module's syntax tree, and that of each string constant in it that is Python code."""
    units: list[ast.AST] = [module.tree]
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                "\ndef " in node.value:
            try:
                units.append(ast.parse(node.value))
            except SyntaxError:
                continue
    return units


def _attr_calls(tree: ast.AST, names: set[str], on: str | None = None) -> list[int]:
    """Lines calling ``<x>.<name>(...)`` (``on``: only where ``x`` is that plain name)."""
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in names
            and (on is None or (isinstance(n.func.value, ast.Name) and n.func.value.id == on))]


def _plumbing(modules) -> dict[str, list[str]]:
    """module -> what it does that the one implementation should do."""
    found: dict[str, list[str]] = {}
    for module in modules:
        rel, what = module.rel, []
        for tree in _code_units(module):
            prose = _docstrings(tree)
            consts = [n for n in ast.walk(tree) if isinstance(n, ast.Constant)
                      and id(n) not in prose]
            names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
                n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            if rel != LS_TREE_PARSER:
                if any(c.value == "ls-tree" for c in consts) and "parse_ls_tree" not in names:
                    what.append("runs git ls-tree and parses it itself")
                if rel not in OWN_SURROGATEESCAPE and any(
                        isinstance(c, ast.Constant) and c.value == "surrogateescape"
                        for n in ast.walk(tree) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute) and n.func.attr == "decode"
                        for c in [*n.args, *(k.value for k in n.keywords)]):
                    what.append("decodes a name with its own rule")
            if rel != WALKER:
                what += [f"os.walk (line {n})" for n in _attr_calls(tree, {"walk", "fwalk"}, "os")]
                if rel not in OWN_TREE_WALKS:
                    what += [f"rglob (line {n})" for n in _attr_calls(tree, {"rglob"})]
            if rel != ATOMIC_WRITER and rel not in OWN_RENAMES:
                what += [f"{n.func.value.id}.{n.func.attr} (line {n.lineno})"
                         for n in ast.walk(tree)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                         and isinstance(n.func.value, ast.Name)
                         and (n.func.value.id, n.func.attr) in {
                             ("os", "replace"), ("os", "rename"), ("tempfile", "mkstemp"),
                             ("tempfile", "NamedTemporaryFile")}]
        if what:
            found[rel] = what
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def test_one_ls_tree_parser_one_walker_one_atomic_writer():
    assert _plumbing(package()) == {}


def test_every_exception_is_still_there():
    rels = {m.rel for m in package()}
    assert {*OWN_SURROGATEESCAPE, *OWN_TREE_WALKS, *OWN_RENAMES} <= rels
    assert {LS_TREE_PARSER, ATOMIC_WRITER, WALKER} <= rels


_SCRATCH_PARSER = '''
def entries(repo):
    out = run(repo, "ls-tree", "-r", "-z", "HEAD")
    return {rec.partition(b"\\t")[2].decode("utf-8", "surrogateescape"): rec
            for rec in out.split(b"\\0")}
'''
_MACHINERY_TEXT = 'CODE = r"""\nimport os\n\ndef swap(a, b):\n    os.replace(a, b)\n"""\n'


@pytest.mark.parametrize("source, expected", [
    (_SCRATCH_PARSER, ["runs git ls-tree and parses it itself", "decodes a name with its own rule"]),
    ("import os\nfor d, _, fs in os.walk(store):\n    pass\n", ["os.walk (line 2)"]),
    ("files = sorted(store.rglob('*.md'))\n", ["rglob (line 1)"]),
    ("import os\nos.replace(tmp, target)\n", ["os.replace (line 2)"]),
    ("import tempfile\nfd, tmp = tempfile.mkstemp(dir=d)\n", ["tempfile.mkstemp (line 2)"]),
    (_MACHINERY_TEXT, ["os.replace (line 5)"]),  # rendered code text is code too
])
def test_the_plumbing_rule_fails_on_a_scratch_violation(source, expected):
    assert _plumbing(parse({"kinds/scratch/_load.py": source})) == {
        "kinds/scratch/_load.py": expected}


@pytest.mark.parametrize("source", [
    # negative controls: the one implementations used, and look-alikes that are not plumbing
    'from memlab.io import parse_ls_tree\nrecs = parse_ls_tree(run(r, "ls-tree", "-z", c))\n',
    '"""Lists the tree with ls-tree."""\n',  # prose
    "from memlab._files import walk\nfor d, dirs, names in walk(store):\n    pass\n",
    "import ast\nnodes = list(ast.walk(tree))\n",
    "df = df.rename(columns={'a': 'b'})\ntext = text.replace('a', 'b')\n",
    "raw = name.encode('utf-8', 'surrogateescape')\n",  # encoding back is the same rule
    "from memlab.io import write_atomic\nwrite_atomic(target, data)\n",
    "import tempfile\nwith tempfile.TemporaryDirectory() as d:\n    pass\n",
])
def test_the_plumbing_rule_leaves_the_one_implementations_alone(source):
    assert _plumbing(parse({"kinds/scratch/_load.py": source})) == {}


# ---- one copy of each function: a split moves code, it never copies it -------------------------
# Splitting a big module into private ones (memlab/plots/, memlab/formats/_blockfile_*.py) is where
# a helper is most easily copied into two of them instead of imported from one. No two
# module-level functions of memlab have the same body (docstring and comments aside, whatever
# their names): one statement (a delegating ``return f(x)``) is too little to call a copy.

#: the copies there are, each as its "module:function" places, with why they are left; it only
#: shrinks (test_every_known_copy_is_still_there)
KNOWN_COPIES: dict[frozenset[str], str] = {}


def _body_key(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    tree = ast.Module(body=body, type_ignores=[])
    if sum(isinstance(n, ast.stmt) for n in ast.walk(tree)) < 2:
        return None
    return ast.dump(node.args) + ast.dump(tree)


def _copies(modules) -> set[frozenset[str]]:
    """Groups of module-level functions with the same arguments and body, as "module:name"."""
    by_body: dict[str, set[str]] = {}
    for module in modules:
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    (key := _body_key(node)) is not None:
                by_body.setdefault(key, set()).add(f"{module.rel}:{node.name}")
    return {frozenset(places) for places in by_body.values() if len(places) > 1}


def test_no_function_is_copied():
    assert _copies(package()) - set(KNOWN_COPIES) == set()


def test_every_known_copy_is_still_there():
    assert set(KNOWN_COPIES) <= _copies(package())


_HELPER = "def {name}(ax):\n    {doc}from m import L\n    ax.set_major_locator(L(integer=True))\n"


@pytest.mark.parametrize("files, found", [
    # a helper copied into a sibling module, renamed and with another docstring: a copy
    ({"p/_a.py": _HELPER.format(name="_whole", doc=""),
      "p/_b.py": _HELPER.format(name="ticks", doc='"""Whole ticks."""\n    ')},
     {frozenset({"p/_a.py:_whole", "p/_b.py:ticks"})}),
    ({"a.py": _HELPER.format(name="f", doc="") + _HELPER.format(name="g", doc="")},
     {frozenset({"a.py:f", "a.py:g"})}),
    # negative controls: imported, not copied; the same name with another body; a one-line
    # delegation; the same body as two methods (a protocol's hooks, not helpers to import)
    ({"p/_a.py": _HELPER.format(name="whole", doc=""),
      "p/_b.py": "from memlab.p._a import whole\n\ndef f(ax):\n    whole(ax)\n    return ax\n"},
     set()),
    ({"a.py": _HELPER.format(name="f", doc=""),
      "b.py": "def f(ax):\n    from m import L\n    ax.set_minor_locator(L(integer=True))\n"},
     set()),
    ({"a.py": "def f(x):\n    return g(x)\n", "b.py": "def h(x):\n    return g(x)\n"}, set()),
    ({"a.py": "class A:\n    def f(self, x):\n        from m import g\n        return g(x)\n",
      "b.py": "class B:\n    def f(self, x):\n        from m import g\n        return g(x)\n"},
     set()),
])
def test_the_copy_rule_sees_a_copy_and_only_a_copy(files, found):
    assert _copies(parse(files)) == found
