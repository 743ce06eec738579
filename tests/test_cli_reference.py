"""The README's CLI reference is generated from the parser, and the options several commands
share are declared once (issue 25, item 5)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from _package_source import package

from memlab.cli import COMMANDS, build_parser
from memlab.cli._reference import BEGIN, END, main, readme_section, reference, with_reference

REPO = Path(__file__).resolve().parents[1]


def _help(*args: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([*args, "--help"])
    return out.getvalue()


def test_the_readme_reference_is_what_the_parser_renders():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    # on drift: python -m memlab.cli._reference rewrites the section
    assert readme_section(readme) == "\n" + reference() + "\n"
    assert with_reference(readme) == readme
    assert main(["--check"]) == 0


def test_the_reference_names_every_option_help_prints(monkeypatch):
    text = reference()
    sections = dict(re.findall(r"#### `memlab ?([a-z]*)`\n(.*?)(?=\n#### |\Z)", text, re.S))
    assert set(sections) == {"", *COMMANDS}
    for name in COMMANDS:
        options = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", _help(name).split("options:")[1]
                                 .split("Example:")[0])) - {"-h", "--help", "-q", "--quiet"}
        assert options, name
        missing = {o for o in options
                   if f"`{o}" not in sections[name] and f", {o}" not in sections[name]}
        assert missing == set(), name
        assert COMMANDS[name].help in sections[name]
    # the reference follows the declarations: a changed help text changes it
    monkeypatch.setitem(COMMANDS["inspect"].arguments[0].kwargs, "help", "a changed help text")
    assert "a changed help text" in reference()


def test_a_readme_without_markers_is_refused():
    with pytest.raises(ValueError, match="cli-reference"):
        with_reference("# no markers\n")
    assert readme_section(f"a\n{BEGIN}\nx\n{END}\n") == "\nx\n"


# ---- the shared options: declared once, one help text each -----------------------------------

SHARED_FLAGS = {"--as-of", "--json", "--out", "--quiet", "-q", "--config", "--fail-on-alert",
                "--force", "--branch"}


def test_shared_option_flags_are_written_only_in_the_command_module():
    found = {}
    cli = {m.rel.removeprefix("cli/"): m.tree for m in package()
           if m.rel.startswith("cli/") and m.rel.count("/") == 1}
    for name, tree in cli.items():
        if name == "_command.py":
            continue
        lines = [n.lineno for n in ast.walk(tree)
                 if isinstance(n, ast.Constant) and n.value in SHARED_FLAGS]
        if lines:
            found[name] = lines
    assert found == {}
    written = [n.value for n in ast.walk(cli["_command.py"])
               if isinstance(n, ast.Constant) and n.value in SHARED_FLAGS]
    assert sorted(written) == sorted(SHARED_FLAGS)  # each exactly once


def _option_helps(flag: str) -> dict[str, str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return {name: a.help for name, p in sub.choices.items() for a in p._actions
            if flag in a.option_strings}


def test_each_shared_option_reads_the_same_in_every_command():
    as_of = _option_helps("--as-of")
    assert set(as_of) == {"audit", "review", "report", "fleet", "export"}
    pattern = re.compile(r"date staleness is measured against, YYYY-MM-DD \(default: [^)]+\)")
    assert all(pattern.fullmatch(h) for h in as_of.values()), as_of
    assert _option_helps("--json") == dict.fromkeys(["inspect", "audit", "discover", "simulate"],
                                                    "print JSON")
    quiet = _option_helps("--quiet")
    assert set(quiet) == set(COMMANDS) and len(set(quiet.values())) == 1
    out = _option_helps("--out")
    assert set(out) == {"review", "report", "fleet", "export"}
    assert all(h.startswith("the folder for ") and "(created if absent" in h for h in out.values())


def test_the_overview_table_names_only_options_its_command_has():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Command line", 1)[1].split(BEGIN, 1)[0]
    rows = re.findall(r"^\| `memlab ([a-z]+)([^`]*)` \|", table, re.M)
    assert {name for name, _ in rows} == set(COMMANDS)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    wrong = {}
    for name, usage in rows:
        known = {s for a in sub.choices[name]._actions for s in a.option_strings}
        if bad := set(re.findall(r"--[a-z][a-z-]*", usage)) - known:
            wrong[name] = bad
    assert wrong == {}
