"""One git object and commit writer (issue 25, item 4), checked on the syntax tree of the
library code as tests/test_usage_rules.py checks its rules: only ``memlab/_gitobj.py`` frames an
object header (``b"blob %d\\0"``, ``f"{kind} {len(body)}"``...) or zlib-compresses, and no
module names ``git commit-tree``, ``hash-object``, ``mktree`` or ``write-tree`` (objects are never
made by a git process) — not even inside the code text of the plan script, which embeds the
writer's own source when it is rendered.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from _package_source import package

WRITER = "_gitobj.py"
KINDS = r"(?:blob|tree|commit|tag)"
OBJECT_COMMANDS = ("commit-tree", "hash-object", "mktree", "write-tree")
# A header in text: "blob %d\0", "tree {}\0", "commit %s\x00", b"%s %d\0"...
_HEADER_TEXT = re.compile(r"^(?:" + KINDS + r"|%s|\{\w*\}) (?:%d|%s|%i|\{[^}]*\})(?:\\0|\\x00|\x00)")
# The text before a length that makes a header: "blob ", "{kind} " (a value, then a space).
_KIND_SPACE = re.compile(r"^(?:" + KINDS + r" | )$")
# A format string that is a header: "{} {}", "{kind} {size}", "blob {}", "%s %d", "blob %d".
_FORMAT_HEADER = re.compile(r"^(?:" + KINDS + r"|\{\w*\}|%s) (?:\{\w*\}|%d|%s|%i)(?:\\0|\x00)?$")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the constants that are docstrings or bare string statements (prose, not code)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def _is_len(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"


def _zlib_calls(tree: ast.AST) -> list[int]:
    aliases, direct = {"zlib"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "zlib"}
        elif isinstance(node, ast.ImportFrom) and node.module == "zlib":
            direct |= {a.asname or a.name for a in node.names
                       if a.name in ("compress", "compressobj")}
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr in ("compress", "compressobj")
         and isinstance(node.func.value, ast.Name) and node.func.value.id in aliases)
        or (isinstance(node.func, ast.Name) and node.func.id in direct))]


def violations(source: str | ast.AST) -> list[tuple[int, str]]:
    """(line, what) for every object header, zlib compression or object-making git command, in
    a module's source or its syntax tree."""
    tree = source if isinstance(source, ast.AST) else ast.parse(source)
    prose = _docstrings(tree)
    found = [(line, "zlib compression") for line in _zlib_calls(tree)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) \
                and id(node) not in prose:
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            if _HEADER_TEXT.search(text) or re.search(KINDS + r" %d\\0", text):
                found.append((node.lineno, "object header"))
            if text in OBJECT_COMMANDS or any(re.search(rf"""["']{c}["']""", text) for c in OBJECT_COMMANDS):
                found.append((node.lineno, "git object command"))
            if "zlib.compress" in text:
                found.append((node.lineno, "zlib compression"))
        elif isinstance(node, ast.JoinedStr):
            # f"{kind} {len(body)}", f"blob {len(data)}\0": a kind, a space, then a length
            # that ends the string or is followed by NUL
            parts = node.values
            for i, value in enumerate(parts[1:], 1):
                before, after = parts[i - 1], parts[i + 1] if i + 1 < len(parts) else None
                if isinstance(value, ast.FormattedValue) and _is_len(value.value) \
                        and isinstance(before, ast.Constant) and _KIND_SPACE.match(before.value) \
                        and (after is None or (isinstance(after, ast.Constant)
                                               and after.value.startswith("\0"))):
                    found.append((node.lineno, "object header"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) \
                and isinstance(node.right, ast.Constant) and node.right.value in (b"\0", "\0") \
                and any(isinstance(n, (ast.JoinedStr, ast.BinOp)) for n in ast.walk(node.left)):
            # f"{kind} {size}".encode() + b"\0", ("%s %d" % (k, n)).encode() + b"\0"
            found.append((node.lineno, "object header"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "format" and isinstance(node.func.value, ast.Constant) \
                and isinstance(node.func.value.value, str) \
                and _FORMAT_HEADER.match(node.func.value.value):
            found.append((node.lineno, "object header"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
                and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, (str, bytes)):
            text = node.left.value if isinstance(node.left.value, str) \
                else node.left.value.decode("latin-1")
            if _FORMAT_HEADER.match(text):
                found.append((node.lineno, "object header"))
    return sorted(set(found))


def test_only_the_writer_frames_objects_or_compresses_them_and_no_git_process_makes_one():
    trees = {m.rel: m.tree for m in package()}
    found = {rel: v for rel, tree in trees.items() if rel != WRITER and (v := violations(tree))}
    assert found == {}
    # the writer itself is what the rule sees: it must be found there
    writer = violations(trees[WRITER])
    assert {what for _, what in writer} == {"object header", "zlib compression"}


@pytest.mark.parametrize("source, what", [
    ('h = b"blob %d\\0" % len(data)\n', "object header"),
    ('h = b"%s %d\\0" % (kind, len(data))\n', "object header"),
    ('h = f"{kind} {len(body)}".encode() + b"\\0"\n', "object header"),
    ('h = f"blob {len(body)}\\0"\n', "object header"),
    ('h = f"{kind} {size}".encode("ascii") + b"\\0"\n', "object header"),
    ('h = "{} {}".format(kind, len(body))\n', "object header"),
    ('h = "%s %d" % (kind, len(body))\n', "object header"),
    ("import zlib\nzlib.compress(raw)\n", "zlib compression"),
    ("import zlib as z\nz.compressobj(1)\n", "zlib compression"),
    ("from zlib import compress as c\nc(raw)\n", "zlib compression"),
    ('run(repo, "commit-tree", tree)\n', "git object command"),
    ('run(repo, "hash-object", "-w", "--stdin")\n', "git object command"),
    ('args = ["mktree"]\n', "git object command"),
    ('SCRIPT = """\\nsha = git("hash-object", "-w")\\n"""\n', "git object command"),
    ('SCRIPT = """\\nfh.write(zlib.compress(raw))\\n"""\n', "zlib compression"),
])
def test_the_rule_sees_every_spelling(source, what):
    assert what in {w for _, w in violations(source)}


@pytest.mark.parametrize("source", [
    '"""Docs may say git commit-tree and b"blob %d\\0"."""\n',
    "import zlib\nzlib.crc32(b'x')\n",
    'label = f"{n} {len(rows)} rows"\n',
    'label = "{} of {}".format(n, len(rows))\n',
    'label = "%s %d rows" % (name, len(rows))\n',
])
def test_prose_and_other_strings_and_zlib_calls_are_not_flagged(source):
    assert violations(source) == []


def test_the_writer_is_standard_library_only_so_the_plan_script_can_embed_it():
    """The embedded modules (the writer, and memlab.io's atomic writer and ls-tree parser it
    and the script use) import the standard library and only the ones embedded before them."""
    from memlab.migrations import _script

    before: set[str] = set()
    for module in _script.EMBEDDED:
        rel = module.__name__.removeprefix("memlab.").replace(".", "/") + ".py"
        tree = next(m.tree for m in package() if m.rel == rel)
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        own = {m for m in imported if m.split(".")[0] == "memlab"}
        assert own <= before, (rel, own)
        assert {m.split(".")[0] for m in imported - own} - {"__future__"} <= set(
            sys.stdlib_module_names), imported
        before.add(module.__name__)
    assert [m.__name__ for m in _script.EMBEDDED][-1] == "memlab._gitobj"


def test_the_plan_script_embeds_the_writers_own_source(tmp_path):
    import pandas as pd

    from memlab.migrations import _letta, _script
    from memlab.sources import load

    src = Path(__file__).resolve().parents[1] / "data/samples/letta-af/customer_service.af"
    plan = _letta.plan_memfs(load(src), src, target="letta",
                             when=pd.Timestamp("2026-01-02T03:04:05Z"))
    text = _script.render_script(plan, tmp_path / "out", branch="main", mode="new")
    rest = text
    for embedded in _script.EMBEDDED:
        module = Path(embedded.__file__).read_text(encoding="utf-8")
        body = "\n".join(line for line in module.splitlines()
                         if line != "from __future__ import annotations"
                         and not line.startswith("from memlab"))
        assert body.strip() in text, embedded  # generated from the module, byte for byte
        rest = rest.replace(body.strip(), "")
    assert not re.search(r"^\s*(from|import) memlab", text, re.M)  # nothing needs memlab
    body = rest
    assert text.count("def write_loose(") == 1 and text.count("def commit_files(") == 1
    assert violations(body) == []  # no other writer in the script
    ast.parse(text)
