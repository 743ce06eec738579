"""A release's write paths, found from what its code does (not from method names).

A *content writer* is a function of ``elfmem/db/queries.py`` that runs ``update(blocks)``
with a ``content=`` value: the only way a block's text changes in place. A *write path* is a
public ``MemorySystem`` method (``elfmem/api.py``) that reaches a content writer, directly or
through the operation it imports (``from elfmem.operations.X import f``); it *takes text* when
its signature has a ``str`` parameter after the block's id (the new wording; a restore such as
a revert takes only an id). For each path the module records, with file and line read from
the installed source: the call that writes the content, the tables the same function inserts
an audit row into (``insert(<table>)`` or ``INSERT INTO <table>`` in the query it
calls), whether it writes the event
ledger (``self._log``), and the operator surfaces that reach it: the CLI commands
(``elfmem/cli.py``, a typer command calling ``.method(`` directly or through one helper)
and the MCP tools (``elfmem/mcp.py``, an ``@mcp.tool()`` function doing the same).

:func:`write_paths` is read by the S1/S8/S9 scripts (which call the path an operator would:
:func:`operator_path`) and by the claims (each names the file and line that decides it).
"""

from __future__ import annotations

import ast
import re
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "write_paths",
    "find_write_paths",
    "operator_path",
    "undo_paths",
    "source_line",
    "parse_source",
    "PARSE_LOCK",
]

#: An audit row written in raw SQL (bounded quantifiers: the text is the release's source).
_INSERT_SQL = re.compile(
    r"\bINSERT\s{1,9}(?:OR\s{1,9}\w{1,20}\s{1,9})?INTO\s{1,9}(\w{1,64})", re.IGNORECASE
)


#: CPython 3.11's ast.parse is not safe across threads (two at once can raise "AST constructor
#: recursion depth mismatch"), and the releases' scripts run side by side in threads.
PARSE_LOCK = threading.Lock()


def parse_source(text: str | bytes) -> ast.Module:
    """``ast.parse`` one thread at a time (:data:`PARSE_LOCK`)."""
    with PARSE_LOCK:
        return ast.parse(text)


def _parse(root: Path, rel: str) -> ast.Module | None:
    try:
        return parse_source((root / rel).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _calls(fn: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call)]


#: A function definition, sync or async.
_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.Module) -> dict[str, _Def]:
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _content_writers(tree: ast.Module) -> tuple[dict[str, int], dict[str, list[str]]]:
    """(content writers: name -> def line; insert tables: query name -> tables it inserts)."""
    writers: dict[str, int] = {}
    inserts: dict[str, list[str]] = {}
    for name, fn in _functions(tree).items():
        calls = _calls(fn)
        updated = {_name(c.args[0]) for c in calls if _name(c.func) == "update" and c.args}
        sets_content = any(
            _name(c.func) == "values" and any(k.arg == "content" for k in c.keywords) for c in calls
        )
        if "blocks" in updated and sets_content:
            writers[name] = fn.lineno
        tables = {
            table
            for c in calls
            if _name(c.func) == "insert" and c.args and (table := _name(c.args[0]))
        }
        tables |= {
            m.group(1)
            for n in ast.walk(fn)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            for m in _INSERT_SQL.finditer(n.value)
        }
        if tables:
            inserts[name] = sorted(tables)
    return writers, inserts


def _writes_in(fn: ast.AST, writers: dict[str, int]) -> list[tuple[str, int]]:
    return [
        (called, c.lineno)
        for c in _calls(fn)
        if (called := _name(c.func)) is not None and called in writers
    ]


def _imports(fn: ast.AST) -> dict[str, tuple[str, str]]:
    """alias -> (module, name) of every ``from X import name as alias`` inside ``fn``."""
    out = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = (node.module, a.name)
    return out


def _takes_text(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    params = [a for a in fn.args.args + fn.args.kwonlyargs if a.arg != "self"]
    for a in params[1:]:
        ann = ast.unparse(a.annotation) if a.annotation is not None else ""
        if ann.split("|")[0].strip() == "str":
            return True
    return False


def _surfaces(tree: ast.Module | None, method: str, file: str, kind: str) -> list[str]:
    """The CLI commands or MCP tools whose function calls ``.method(`` (directly, or through a
    module-level helper they call), as ``"<name> (<file>:<line>)"``."""
    if tree is None:
        return []
    funcs = _functions(tree)
    direct = {
        n
        for n, fn in funcs.items()
        if any(isinstance(c.func, ast.Attribute) and c.func.attr == method for c in _calls(fn))
    }
    groups: dict[str, str] = {}
    for node in ast.walk(tree):  # app.add_typer(review_app, name="review")
        if isinstance(node, ast.Call) and _name(node.func) == "add_typer" and node.args:
            for k in node.keywords:
                if k.arg == "name" and isinstance(k.value, ast.Constant):
                    groups[_name(node.args[0]) or ""] = str(k.value.value)
    out = []
    for name, fn in funcs.items():
        label = _surface_label(fn, groups, kind)
        if label is None:
            continue
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        if name in direct or used & direct:
            out.append(f"{label} ({file}:{fn.lineno})")
    return out


def _surface_label(fn: Any, groups: dict[str, str], kind: str) -> str | None:
    for dec in fn.decorator_list:
        call = dec if isinstance(dec, ast.Call) else None
        target = call.func if call else dec
        if kind == "mcp" and _name(target) == "tool":
            return fn.name
        if kind == "cli" and _name(target) == "command" and isinstance(target, ast.Attribute):
            cmd = fn.name.replace("_", "-")
            if call and call.args and isinstance(call.args[0], ast.Constant):
                cmd = str(call.args[0].value)
            group = groups.get(_name(target.value) or "", "")
            return " ".join(p for p in ("elfmem", group, cmd) if p)
    return None


_MEMO: dict[tuple[str, tuple[tuple[str, int, int], ...]], list[dict[str, Any]]] = {}


def write_paths(folder: str | Path) -> list[dict[str, Any]]:
    """:func:`find_write_paths`, remembered per folder while no ``.py`` file under it changed
    (name, size, mtime); a copy each call."""
    import copy

    root = Path(folder)
    try:
        stamp = tuple(
            (p.relative_to(root).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*.py"))
        )
    except OSError:
        return find_write_paths(root)
    key = (str(root.resolve()), stamp)
    if key not in _MEMO:
        _MEMO[key] = find_write_paths(root)
    return copy.deepcopy(_MEMO[key])


def find_write_paths(folder: str | Path) -> list[dict[str, Any]]:
    """Every public ``MemorySystem`` method of the release at ``folder`` (its ``elfmem``
    directory) that rewrites a block's content in place, in source order, each as
    ``{"method", "api", "takes_text", "writes", "audit", "ledger", "cli", "mcp"}`` (file:line
    strings relative to the package's parent, e.g. ``elfmem/api.py:1896``)."""
    root = Path(folder)
    queries = _parse(root, "db/queries.py")
    api = _parse(root, "api.py")
    if queries is None or api is None:
        return []
    writers, inserts = _content_writers(queries)
    ops: dict[tuple[str, str], tuple[str, list[tuple[str, int]], _Def]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in ("api.py", "db/queries.py") or rel.startswith(("cli", "mcp")):
            continue
        tree = _parse(root, rel)
        if tree is None:
            continue
        module = "elfmem." + rel[:-3].replace("/", ".")
        for name, fn in _functions(tree).items():
            found = _writes_in(fn, writers)
            if found:
                ops[(module, name)] = (f"elfmem/{rel}", found, fn)
    cls = next(
        (n for n in api.body if isinstance(n, ast.ClassDef) and n.name == "MemorySystem"), None
    )
    if cls is None:
        return []
    cli, mcp = _parse(root, "cli.py"), _parse(root, "mcp.py")
    out = []
    methods = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in methods:
        if fn.name.startswith("_"):
            continue
        where = [("elfmem/api.py", _writes_in(fn, writers), fn)]
        aliases = _imports(fn)
        for c in _calls(fn):
            target = aliases.get(_name(c.func) or "")
            if target in ops:
                where.append(ops[target][:2] + (ops[target][2],))
        where = [w for w in where if w[1]]
        if not where:
            continue
        file, calls, body = where[0]
        audit = sorted({t for c in _calls(body) for t in inserts.get(_name(c.func) or "", ())})
        ledger = any(
            isinstance(c.func, ast.Attribute)
            and c.func.attr == "_log"
            and _name(c.func.value) == "self"
            for c in _calls(fn)
        )
        out.append(
            {
                "method": fn.name,
                "api": f"elfmem/api.py:{fn.lineno}",
                "takes_text": _takes_text(fn),
                "writes": f"{file}:{calls[0][1]} {calls[0][0]}",
                "audit": audit,
                "ledger": ledger,
                "cli": _surfaces(cli, fn.name, "elfmem/cli.py", "cli"),
                "mcp": _surfaces(mcp, fn.name, "elfmem/mcp.py", "mcp"),
            }
        )
    return out


def operator_path(paths: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The write path an operator rewording a block would use: one that takes the new text
    and that the release's CLI or MCP tools reach, the shortest CLI command first (a top-level
    ``elfmem edit`` before ``elfmem review accept``); None when there is none."""
    usable = [p for p in paths if p["takes_text"] and (p["cli"] or p["mcp"])]
    if not usable:
        return None

    def depth(p: dict[str, Any]) -> tuple[int, int]:
        cli = min((len(s.split(" (")[0].split()) for s in p["cli"]), default=99)
        return cli, int(p["api"].rsplit(":", 1)[1])

    return min(usable, key=depth)


def undo_paths(paths: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The write paths that restore content instead of taking new text (a revert)."""
    return [p for p in paths if not p["takes_text"]]


def source_line(folder: str | Path, rel: str, needle: str) -> str | None:
    """``elfmem/<rel>:<line>`` of the first line of ``rel`` (under the package folder) that
    contains ``needle``, or None: how a claim names the line that decides it."""
    try:
        text = (Path(folder) / rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return f"elfmem/{rel}:{i}"
    return None
