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
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memlab"

#: module -> what memlab itself wrote (or only sniffs) that it reads there with plain json.loads
OWN_JSON_READS = {
    "embed/_embedder.py": "the verification record memlab keeps in its own embedding cache",
    "embed/_precision.py": "the precision choice memlab cached",
    "embed/_shipped.py": "the manifest of the vectors memlab ships in its wheel",
    "lake/_sample.py": "the bundled sample fleet's usage rows and agent files (made by scripts/)",
    "lake/_layout.py": "the lake's own _manifests/*.json, and the pandas and memlab dtype "
                       "records in the schema metadata of the lake's Parquet files",
    "migrations/_verify.py": "the side file memlab migrate wrote beside the migrated repo",
    "report/_runs.py": "runs.json written by report all",
    "report/__init__.py": "metrics.json written by memlab's own notebooks",
    "report/schedule.py": "runs.json written by report all",
    "reviews/_apply_edits.py": "a value memlab wrote into its own proposal file as JSON",
    "reviews/_proposal.py": "the proposal's .json memlab wrote beside its .md",
    "sim/_driver.py": "a request line from memlab's own simulation process",
    "sim/releases.py": "a result line from memlab's driver inside a release's venv",
    "sim/scenarios/concurrency.py": "the result line of memlab's own S8 writer process",
    "sources/discover.py": "sniffing only (is this an Agent File?); the loader reads it with "
                           "_json.loads",
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


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
