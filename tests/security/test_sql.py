"""No lake or store text in SQL (issue 34, hole 1): values go to DuckDB and SQL as parameters,
identifiers through one quoting function, and a lake's partition folder name is a run date only
when it is one.

The repro: a ``run_date=…`` folder planted in a lake was formatted into notebook 06's DuckDB
query (``memlab report fleet LAKE``) and ran a ``COPY … TO`` of the attacker's choice. The test
runs the shipped notebook's own cell on a real lake; the usage rule then forbids composing the
SQL text of any execute call from anything but constants and quoted identifiers, across memlab
and the notebooks.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from _package_source import package

import memlab
from memlab.lake import read_fleet

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
DATE = "2026-12-01"
#: A folder name with no ``=`` or ``/`` (hive partitioning and the file system both take it)
#: that closes the query's string, writes ``pwned.csv`` and ends in a valid statement.
EVIL = "9999' GROUP BY 1; COPY (SELECT 42) TO 'pwned.csv'; SELECT 'a' AS b WHERE 'x' <> 'y"


def _duckdb_cell() -> str:
    nb = json.loads((NOTEBOOKS / "06-fleet.ipynb").read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in nb["cells"]
             if c["cell_type"] == "code" and "duckdb" in "".join(c["source"])]
    assert len(cells) == 1, cells
    return cells[0]


def _run_cell(run) -> object:
    cell = _duckdb_cell()
    tree = ast.parse(cell)
    last = tree.body.pop()  # the cell's value, as the notebook shows it
    scope = {"run": run}
    exec(compile(tree, "06-fleet.ipynb", "exec"), scope)
    return eval(compile(ast.Expression(last.value), "06-fleet.ipynb", "eval"), scope)


@pytest.fixture
def lake(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = ROOT / "data" / "samples" / "elfmem" / "elfmem-0.19.2-schema5.db"
    memlab.export_parquet([store], out=tmp_path / "lake", run_date=DATE)
    table = tmp_path / "lake" / "headline"
    (kind_dir,) = table.iterdir()
    planted = kind_dir / f"run_date={EVIL}"
    planted.mkdir()
    shutil.copy(next((kind_dir / f"run_date={DATE}").glob("*.parquet")), planted / "part-x-0.parquet")
    return tmp_path / "lake"


def test_a_planted_partition_folder_is_not_a_run_and_runs_no_sql(lake, tmp_path):
    run = read_fleet(lake)
    assert run.run_date == DATE  # the planted name sorted last; it is not a date
    assert len(run.notes) == 1 and "not a YYYY-MM-DD date" in run.notes[0]
    assert "'" in run.notes[0]  # named (through the terminal-line rule), not dropped
    shown = _run_cell(run)
    assert not (tmp_path / "pwned.csv").exists()
    assert isinstance(shown, pd.DataFrame) and shown["stores"].tolist() == [1], shown


def test_the_notebook_query_takes_lake_text_as_values(lake, tmp_path):
    """Even given the planted name as its run date (a reader that trusted it), the notebook's
    query compares it as a value: no statement of its own, no rows."""
    run = SimpleNamespace(out=lake, run_date=EVIL, notes=[],
                          failures=pd.DataFrame(columns=["path"]))
    shown = _run_cell(run)
    assert not (tmp_path / "pwned.csv").exists()
    assert len(shown) == 1 and shown["stores"].tolist() == [1]  # the planted folder's file
    # and a quote in the lake's own path is a path, not SQL
    odd = tmp_path / "it's a lake"
    shutil.copytree(lake, odd)
    good = _run_cell(SimpleNamespace(out=odd, run_date=DATE, notes=[],
                                     failures=pd.DataFrame(columns=["path"])))
    assert good["stores"].tolist() == [1]


def test_an_explicit_run_date_that_is_not_a_date_is_one_error(lake):
    with pytest.raises(memlab.errors.FleetError, match="not YYYY-MM-DD"):
        read_fleet(lake, run_date=EVIL)


# ---- the rule: the SQL text of an execute call is constants and quoted identifiers ----------

#: Calls whose first argument is SQL text (sqlite3, psycopg, DuckDB, pandas).
SQL_CALLS = {"execute", "executemany", "executescript", "sql", "query", "read_sql",
             "read_sql_query", "from_query"}
#: The identifier quoting functions (double quotes doubled, the whole name quoted); an SQL text
#: may interpolate only their results.
QUOTERS = {"q", "quote", "qualified"}

#: Modules that still compose SQL text from names that are not store text, each with where its
#: names come from. The test requires this list to be exact.
COMPOSED_SQL = {
    "browse/_meta.py": "FTS5 column lists joined from quote() of names memlab cleaned; canned "
                       "queries are memlab's constant SQL with quote()d table names",
    "browse/_sqlite.py": "CREATE TABLE column definitions joined from quote() of cleaned names; "
                         "'?' placeholders, one per column (values are parameters)",
    "embed/_cache.py": "'?' placeholders, as many as the chunk has keys (values are parameters)",
    "formats/elfmem_schema.py": "table and column names from memlab's own copy of elfmem's "
                                "DDL and migrations, run on databases memlab creates",
    "kinds/mem0/_load.py": "column names from memlab's fixed lists (mem0's history shapes, the "
                           "messages columns), each quote()d, kept when PRAGMA lists them",
    "sim/real/_months.py": "table names from sqlite_master of a database the simulation built",
    "sim/real/_common.py": "column names from a fixed list, kept when PRAGMA lists them, in "
                              "databases the simulation's release run created",
}


def _quoted(node: ast.AST) -> bool:
    """Whether ``node`` is SQL text made of constants and quoted identifiers only."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) or _quoted(v.value) for v in node.values)
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name) and f.id in QUOTERS:
            return True
        if isinstance(f, ast.Attribute) and f.attr == "join" and _quoted(f.value) \
                and len(node.args) == 1:
            arg = node.args[0]
            if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
                return _quoted(arg.elt)
            if isinstance(arg, (ast.List, ast.Tuple)):
                return all(_quoted(e) for e in arg.elts)
        return False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _quoted(node.left) and _quoted(node.right)
    if isinstance(node, ast.IfExp):
        return _quoted(node.body) and _quoted(node.orelse)
    return False


def _composed(tree: ast.AST) -> list[int]:
    """Lines of execute calls whose SQL text is composed (f-string, ``%``, ``.format``, ``+``,
    ``.join``) from anything but constants and quoted identifiers. A plain name is allowed: it
    holds a constant or a statement memlab wrote (DDL lists), not an expression built here."""
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in SQL_CALLS and node.args):
            continue
        sql = node.args[0]
        if isinstance(sql, (ast.Name, ast.Attribute, ast.Subscript)):
            continue
        if not _quoted(sql):
            lines.append(node.lineno)
    return lines


def _trees():
    for module in package():
        yield module.rel, module.tree
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code":
                yield f"notebooks/{path.name}#{i}", ast.parse("".join(cell["source"]))


def test_no_sql_text_is_composed_from_values():
    found = {name: lines for name, tree in _trees() if (lines := _composed(tree))}
    # exact both ways: a new composer fails, and so does a fixed one still listed
    assert set(found) == set(COMPOSED_SQL), found


@pytest.mark.parametrize("source, hits", [
    ("con.execute('SELECT 1')\n", 0),
    ("con.execute('SELECT * FROM t WHERE a = ?', (a,))\n", 0),
    ("con.execute(f'SELECT * FROM {q(t)}')\n", 0),
    ("con.execute(f\"SELECT {', '.join(q(c) for c in cols)} FROM {q(t)}\")\n", 0),
    ("con.execute('LOCK TABLE ' + ', '.join(qualified(t) for t in ts))\n", 0),
    ("con.execute(SQL)\n", 0),
    ("con.execute(f'SELECT * FROM t WHERE d = {d}')\n", 1),
    ("con.execute(f\"SELECT * FROM '{path}'\")\n", 1),
    ("duckdb.sql(f'''SELECT * FROM read_parquet('{p}')''')\n", 1),
    ("con.execute('SELECT * FROM t WHERE d = %s' % d)\n", 1),
    ("con.execute('SELECT * FROM t WHERE d = {}'.format(d))\n", 1),
    ("con.execute('SELECT * FROM ' + t)\n", 1),
    ("con.executemany(f'INSERT INTO {t} VALUES (?)', rows)\n", 1),
    ("con.execute(f\"SELECT {', '.join(cols)} FROM t\")\n", 1),
    ("pd.read_sql(f'SELECT * FROM {t}', con)\n", 1),
])
def test_the_sql_rule_sees_every_spelling(source, hits):
    assert len(_composed(ast.parse(source))) == hits
