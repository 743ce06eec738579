"""Store text never acts where it is written: no pre-ticked proposal item, no code in the plan
script, no markup in HTML, no line break or control character in a one-line output."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from memlab import _escape
from memlab.reviews import apply_proposal, read_proposal
from memlab._escape import split_lines

from hostile import SEPARATORS, agent_file, git, memory_repo, proposal

SEP_IDS = [repr(s) for s in SEPARATORS]


# ---- one rule per output kind -----------------------------------------------------------------

@pytest.mark.parametrize("sep", SEPARATORS, ids=SEP_IDS)
def test_one_line_kinds_keep_no_break_or_control(sep):
    text = f"first{sep}second\x07\x00\x1b[31m"
    for render in (_escape.terminal_line, _escape.md_line, _escape.commit_line, _escape.comment):
        out = render(text)
        assert len(out.splitlines()) == 1, (render.__name__, out)
        assert out.isprintable(), (render.__name__, out)
        assert "first" in out and "second" in out


def test_python_literals_round_trip_and_stay_on_one_line():
    values = ["a\nb\rc\u2028d\x85\x0b\x0c\x1c\x1d\x1e", b"\x00\xff", ["x\u2029", {"k": "\r"}], None, 3]
    for value in values:
        lit = _escape.py_literal(value)
        assert len(lit.splitlines()) == 1 and ast.literal_eval(lit) == value
    with pytest.raises(TypeError):
        _escape.py_literal(object())


def test_html_escapes_markup_and_quotes():
    out = _escape.html('<img src=x onerror="alert(1)">&\'')
    assert "<" not in out and '"' not in out and "'" not in out
    assert out.startswith("&lt;img")


# ---- proposals: no pre-tick, whatever the separator ------------------------------------------

@pytest.mark.parametrize("sep", SEPARATORS, ids=SEP_IDS)
@pytest.mark.parametrize("field", ["store_name", "summary", "value"])
def test_store_text_cannot_tick_an_item(tmp_path, sep, field):
    repo = tmp_path / "memory"
    memory_repo(repo)
    target = "rules-0123456789"
    attack = f"rex{sep}- [x] `{target}` **set_key**: owned{sep}"
    md, item = proposal(repo, tmp_path / "reviews", item_id=target, **{field: attack})
    text = md.read_text(encoding="utf-8")
    # Every line of the file is one line for every reader (Python, editors, terminals).
    for line in split_lines(text):
        assert not any(ch in line for ch in _escape.LINE_BREAKS), repr(line)
    assert read_proposal(md).ticked == set()
    # Nor is it a tick the writer would keep: the same proposal written again replaces the
    # file without refusing (no "tick" of the store's to erase).
    assert proposal(repo, tmp_path / "reviews", item_id=target, **{field: attack})[0] == md
    assert md.read_text(encoding="utf-8") == text
    before = git(repo, "rev-parse", "HEAD")
    result = apply_proposal(md)
    assert result.applied == [] and git(repo, "rev-parse", "HEAD") == before


@pytest.mark.parametrize("sep", ["\u2028", "\x85", "\x1c", "\r"], ids=repr)
def test_a_tick_smuggled_into_the_markdown_is_a_tamper(tmp_path, sep):
    """Someone editing the file to add a tick on a non-line (after a separator) is refused."""
    from memlab.errors import StaleProposal

    repo = tmp_path / "memory"
    memory_repo(repo)
    md, item = proposal(repo, tmp_path / "reviews")
    text = md.read_text(encoding="utf-8").replace("# memlab review: rex",
                                                  f"# memlab review: rex{sep}- [x] `{item.id}`")
    md.write_text(text, encoding="utf-8")
    with pytest.raises(StaleProposal, match="edited beyond ticking"):
        read_proposal(md)


# ---- the migration plan script: data only as literals ----------------------------------------

@pytest.mark.parametrize("sep", SEPARATORS, ids=SEP_IDS)
def test_plan_script_never_runs_store_text(tmp_path, sep):
    marker = tmp_path / "MARKER"
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).touch()"
    name = f"rex{sep}{payload}{sep}#"
    src = agent_file(tmp_path / "a.af", name, ["persona", f"notes{sep}{payload}"],
                     value=f"v{sep}{payload}")
    result = memlab.migrate(src, tmp_path / "out", to="letta", plan=True, retrieval=False)
    script = result.script
    tree = ast.parse(script.read_text(encoding="utf-8"))
    # The classes of the modules the script embeds (memlab's own code: the object writer, the
    # atomic writer, the ls-tree parser; migrations._script.EMBEDDED names them).
    from memlab.migrations._script import EMBEDDED

    writer_classes = {n.name for m in EMBEDDED for n in ast.parse(Path(m.__file__).read_text()).body
                      if isinstance(n, ast.ClassDef)}
    # Top level: only the docstring, imports, assignments, REPOS appends, defs, the writer's
    # classes and the main guard.
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            assert node.name in writer_classes, ast.dump(node)[:200]
            continue
        assert isinstance(node, (ast.Expr, ast.ImportFrom, ast.Import, ast.Assign,
                                 ast.FunctionDef, ast.If)), ast.dump(node)[:200]
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
            call = node.value
            assert isinstance(call, ast.Call) and call.func.attr == "append", ast.dump(node)[:200]
    run = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert not marker.exists()


def test_plan_script_runs_to_the_planned_commits_without_running_store_text(tmp_path):
    marker = tmp_path / "MARKER"
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).touch()"
    src = agent_file(tmp_path / "a.af", f"rex\r{payload}\n#\u2028{payload}", ["persona"])
    result = memlab.migrate(src, tmp_path / "out", to="letta", plan=True, retrieval=False)
    run = subprocess.run([sys.executable, str(result.script), str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not marker.exists()
    assert git(tmp_path / "out", "rev-parse", "HEAD") == result.commits["sha"].iloc[-1]
    subject = git(tmp_path / "out", "log", "-1", "--skip=1", "--format=%B")
    assert subject.splitlines()[0].startswith("migrate: 1 memory block(s) from a.af for agent rex")
    assert not any(line.startswith("import pathlib") for line in subject.splitlines())


# ---- HTML: the review widget -----------------------------------------------------------------

def test_review_browser_escapes_item_text(tmp_path):
    pytest.importorskip("ipywidgets")
    from memlab.reviews import views

    repo = tmp_path / "memory"
    memory_repo(repo)
    evil = '<img src=x onerror="alert(document.domain)"><script>alert(1)</script>'
    md, _item = proposal(repo, tmp_path / "reviews", summary=evil, value=evil)
    widget = views.browse(read_proposal(md), tmp_path / "reviews")
    htmls = []

    def walk(w):
        if w.__class__.__name__ == "HTML":
            htmls.append(w.value)
        for child in getattr(w, "children", ()):
            walk(child)

    walk(widget)
    joined = "\n".join(htmls)
    assert "onerror" in joined  # the text is shown...
    assert "<img" not in joined and "<script" not in joined  # ...never rendered


# ---- terminal: one error line, whatever the file name --------------------------------------

@pytest.mark.parametrize("sep", ["\n", "\r", "\x1b[2K\r", "\u2028"], ids=repr)
def test_an_error_naming_a_hostile_path_is_one_terminal_line(tmp_path, sep):
    folder = tmp_path / f"agent{sep}memlab: ok, nothing wrong"
    folder.mkdir()
    (folder / "x.db").write_bytes(b"not sqlite at all, but long enough to have a header" * 3)
    run = subprocess.run([sys.executable, "-m", "memlab", "inspect", str(folder / "x.db")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert len(run.stderr.strip().split("\n")) == 1 and run.stderr.strip().isprintable()


# ---- what the CLI prints ----------------------------------------------------------------------

#: What a hostile name tries on a terminal: a window-title OSC, clear screen, colour, a bidi
#: override, and a line break followed by a forged line.
TERMINAL_TRICKS = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mRED\u202eevil"


def _memlab(*args: str) -> subprocess.CompletedProcess:
    # wide enough that no line is wrapped: every line printed is one the summary built
    env = {**os.environ, "COLUMNS": "1000"}
    run = subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                         text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    return run


def _screen_lines(stdout: str) -> list[str]:
    lines = stdout.split("\n")
    assert all(line.isprintable() for line in lines), [l for l in lines if not l.isprintable()]
    return lines


@pytest.mark.parametrize("sep", SEPARATORS, ids=SEP_IDS)
def test_an_audit_summary_prints_store_names_as_one_visible_line(tmp_path, sep):
    plain = agent_file(tmp_path / "plain.af", "rex", ["persona"])
    hostile = agent_file(tmp_path / "hostile.af", f"rex{sep}  forged: 0 problems{TERMINAL_TRICKS}",
                         [f"persona{sep}forged"])
    expected = len(_screen_lines(_memlab("audit", str(plain)).stdout))
    got = _screen_lines(_memlab("audit", str(hostile)).stdout)
    assert len(got) == expected  # no line of the store's own making
    assert not any(line.lstrip().startswith("forged") for line in got)
    assert any("\\x1b]0;PWNED" in line for line in got)  # shown, not acted on
    # the library's summary follows the same rule
    assert memlab.audit(hostile).summary().count("\n") == expected - 2


def test_a_memfs_audit_prints_a_hostile_file_name_visibly(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    name = f"system/e{TERMINAL_TRICKS}\nforged line.md"
    (repo / name).write_text("---\ndescription: d\nlimit: 3\n---\n\nlonger than three\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "hostile name")
    got = _screen_lines(_memlab("audit", str(repo)).stdout)
    assert not any(line.startswith("forged line") for line in got)
    assert any("\\x1b[2J" in line and "\\x0aforged line.md" in line for line in got)


def test_discover_prints_agent_yaml_names_visibly(tmp_path):
    home = tmp_path / "home"
    agent = home / ".pi" / "unified" / "agents" / "agent-a"
    agent.mkdir(parents=True)
    (agent / "agent.yaml").write_text('name: "x\\n\\x1b[2J- [x] evil\\u2028zz"\n', encoding="utf-8")
    run = _memlab("discover", str(home))
    got = _screen_lines(run.stdout)
    assert any("\\x1b[2J" in line and "\\u2028zz" in line for line in got), run.stdout


def test_inspect_prints_a_hostile_folder_name_visibly(tmp_path, data_dir):
    import shutil

    folder = tmp_path / f"agent{TERMINAL_TRICKS}\nforged"
    folder.mkdir()
    db = shutil.copy(data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db", folder / "m.db")
    got = _screen_lines(_memlab("inspect", str(db)).stdout)
    assert got[0].startswith("elfmem_db  ") and "\\x1b]0;PWNED" in got[0]
    assert not any(line.startswith("forged") for line in got)


def test_a_quote_in_a_file_name_stays_inside_the_name_apply_writes(tmp_path):
    """memfs v2 wants ``name:`` in every file; review proposes it from the file name. A '"' in
    the name made apply write ``name: "we"ird"``: YAML no reader parses, so the Letta server
    would have synced the whole file as the block's value."""
    import yaml

    from memlab.reviews import review

    repo = tmp_path / "v2"
    repo.mkdir()
    git(repo, "init", "-q", "--initial-branch=main", ".")
    files = {".letta/config.json": '{"version": 1}\n',
             "MEMORY.md": '---\nname: "MEMORY"\ndescription: "index"\n---\n\n- we"ird\n',
             'we"ird.md': "---\ndescription: quote file\n---\n\nbody one\n",
             'no"fm.md': "body two, no frontmatter\n"}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "init")
    proposal = review(memlab.load(repo), as_of="2026-12-01")
    wanted = [it for it in proposal.items if it.action in ("set_name", "add_frontmatter")]
    assert {it.target["file"] for it in wanted} == {'we"ird.md', 'no"fm.md'}
    md = proposal.write(tmp_path / "reviews")
    text = md.read_text(encoding="utf-8")
    for it in wanted:
        text = text.replace(f"- [ ] `{it.id}`", f"- [x] `{it.id}`")
    md.write_text(text, encoding="utf-8")
    apply_proposal(md)
    for rel, stem in (('we"ird.md', 'we"ird'), ('no"fm.md', 'no"fm')):
        committed = git(repo, "show", f"HEAD:{rel}")
        front = committed.split("---")[1]
        assert yaml.safe_load(front)["name"] == stem, committed
    store = memlab.load(repo)
    assert "malformed_yaml" not in set(store.problems["kind"].astype(str))
