"""memlab's port of Letta Code 0.34.12's memory constraints, against the release itself.

Differential: hypothesis builds trees (depths, MEMORY.md indexes present or not, sizes either
side of a limit, astral characters, modes, globs, read-only files against an accepted tree),
configs (valid, invalid, odd JSON numbers) and frontmatter; the answer memlab's
:mod:`memlab.formats.letta_memfs` gives must equal, line for line, the one the release's own
functions give when run with the Node it bundles (tests/letta_code.py). Nothing here is an
expected value written by hand, except the pinned examples at the end, which are the cases a
reader can check by eye.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memlab.formats import letta_memfs as fmt

SETTINGS = settings(max_examples=1500, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.data_too_large])

# --------------------------------------------------------------------------- strategies

SEGMENTS = st.sampled_from(["a", "b", "notes", "system", "reference", "memory", "skills",
                            "palace", "MEMORY.md", "ü", "\U0001F600", "x y", "a.md", ".hidden"])
NAMES = st.sampled_from(["MEMORY.md", "persona.md", "human.md", "a.md", "b.md", "\U0001F600.md",
                         "SKILL.md", "notes.txt", "image.png", "x.MD", "é.md"])
CHARS = st.sampled_from(["a", "é", "\U0001F600", "\n", "-"])
MODES = st.sampled_from(["100644"] * 8 + ["100755", "120000", "160000"])


@st.composite
def paths(draw):
    folders = draw(st.lists(SEGMENTS, max_size=4))
    return "/".join([*folders, draw(NAMES)])


@st.composite
def texts(draw, near=(0, 8, 12, 20)):
    """Text whose code-point count sits on either side of the small limits the configs use."""
    n = draw(st.sampled_from(near)) + draw(st.integers(-2, 2))
    unit = draw(CHARS)
    head = draw(st.sampled_from(["", "---\nname: N\ndescription: d\n---\n", "# Memory\n"]))
    return head + unit * max(n, 0)


@st.composite
def trees(draw):
    entries = draw(st.lists(st.tuples(paths(), MODES, texts()), max_size=10,
                            unique_by=lambda e: e[0]))
    if draw(st.booleans()):
        entries = [e for e in entries if e[0] != "MEMORY.md"] + [("MEMORY.md", "100644", "# Memory\n")]
    return [{"path": p, "mode": m, "text": t} for p, m, t in entries]


GLOB_PARTS = st.sampled_from(["*", "**", "?", "a", "b", "notes", "\U0001F600", "ü", "*.md",
                              "MEMORY.md", "system", "x[1]", "a.b", "(c)", "+"])


@st.composite
def globs(draw):
    if draw(st.booleans()):  # whole globs people write, which match the trees above often
        return draw(st.sampled_from(["**", "*.md", "**/*.md", "a/*", "?.md", "*/MEMORY.md",
                                     "persona.md", "a/**", "**/a.md", "\U0001F600.md", "??.md"]))
    return "/".join(draw(st.lists(GLOB_PARTS, min_size=1, max_size=4)))


@st.composite
def valid_configs(draw):
    config: dict = {"version": 1}
    for key, low, high in (("maxDepth", 0, 4), ("maxFileCharacters", 1, 40),
                           ("maxCoreMemoryCharacters", 1, 80)):
        if draw(st.integers(0, 3)):
            config[key] = draw(st.integers(low, high))
    if draw(st.booleans()):
        config["fileCharacterLimits"] = draw(st.lists(st.fixed_dictionaries({
            "pattern": globs(), "maxCharacters": st.one_of(st.none(), st.integers(1, 30))}),
            max_size=3))
    if draw(st.booleans()):
        config["readOnlyFiles"] = draw(st.lists(globs(), max_size=3))
    return config


def _oracle_files(files):
    return [{"path": f["path"], "mode": f["mode"], "text": f["text"]} for f in files]


def _tree_files(files):
    return [fmt.TreeFile(f["path"], f["mode"], f["text"].encode("utf-8")) for f in files]


@st.composite
def accepted_trees(draw, files):
    """The tree before the change: the same files, some dropped, changed, re-moded or added."""
    out = []
    for f in files:
        roll = draw(st.integers(0, 5))
        if roll == 0:
            continue
        if roll == 1:
            f = {**f, "text": f["text"] + "x"}
        elif roll == 2:
            f = {**f, "mode": "100755" if f["mode"] == "100644" else "100644"}
        out.append(f)
    out += draw(st.lists(st.builds(lambda p, t: {"path": p, "mode": "100644", "text": t},
                                   paths(), texts()), max_size=2))
    seen: dict = {}
    for f in out:
        seen.setdefault(f["path"], f)
    return list(seen.values())


# --------------------------------------------------------------------------- differential

@SETTINGS
@given(data=st.data())
def test_tree_errors_equal_the_release(letta_code, data):
    files = data.draw(trees())
    config = data.draw(st.one_of(valid_configs(), st.just(dict(fmt.CONSTRAINTS_DEFAULTS))))
    layout = data.draw(st.sampled_from(fmt.LAYOUT_POLICIES))
    require = data.draw(st.booleans())
    accepted = data.draw(accepted_trees(files)) if config.get("readOnlyFiles") else None
    expected = letta_code.tree(_oracle_files(files), config=config, layout=layout,
                               require_root_marker=require,
                               accepted=None if accepted is None else _oracle_files(accepted))
    got = fmt.tree_errors(_tree_files(files), config=config, layout=layout,
                          require_root_marker=require,
                          accepted=None if accepted is None else _tree_files(accepted))
    assert got == expected


CONFIG_VALUES = st.one_of(st.integers(-3, 40), st.sampled_from([0, 1, 2**53, 2**53 - 1, 2**60]),
                          st.sampled_from([1.0, 2.5, -0.0, 1e400, True, False, None, "3", [], {}]))


@st.composite
def config_texts(draw):
    config: dict = {}
    if draw(st.integers(0, 4)):
        config["version"] = draw(st.sampled_from([1, 1, 1, 1.0, 2, "1", True]))
    keys = ["maxDepth", "maxFileCharacters", "maxCoreMemoryCharacters", "extra", "7", "0", "10",
            "__proto__"]
    for key in draw(st.lists(st.sampled_from(keys), max_size=4, unique=True)):
        config[key] = draw(CONFIG_VALUES)
    if draw(st.booleans()):
        item = st.one_of(
            st.fixed_dictionaries({"pattern": st.one_of(globs(), st.sampled_from(
                ["", "/abs", "a\\b", "../x", "a/**b", "a/**/b"])),
                "maxCharacters": CONFIG_VALUES}),
            st.dictionaries(st.sampled_from(["pattern", "maxCharacters", "max"]),
                            st.one_of(globs(), CONFIG_VALUES), max_size=3),
            CONFIG_VALUES)
        config["fileCharacterLimits"] = draw(st.one_of(st.lists(item, max_size=3), CONFIG_VALUES))
    if draw(st.booleans()):
        config["readOnlyFiles"] = draw(st.one_of(
            st.lists(st.one_of(globs(), st.sampled_from(["", "/x", "a/../b", "**x", 3])), max_size=3),
            CONFIG_VALUES))
    text = json.dumps(config, ensure_ascii=draw(st.booleans()))
    text = text.replace("Infinity", "1e400")  # json.dumps spells 1e400 as Infinity; JSON has none
    return draw(st.sampled_from([text, text, text, "[1]", "null", '"x"', text[:-1],
                                 text + " ", "\ufeff" + text, text.replace("1e400", "NaN")]))


@SETTINGS
@given(text=config_texts())
def test_config_parser_equals_the_release(letta_code, text):
    expected = letta_code.config(text)
    config, errors = fmt.parse_constraints_config(text)
    if "errors" in expected:
        assert config is None
        invalid = [e for e in expected["errors"] if "invalid JSON" in e]
        if invalid:  # the parser's own message differs between V8 and Python; the verdict not
            assert len(errors) == 1 and errors[0].startswith(".memfs.config.json: invalid JSON (")
        else:
            assert errors == expected["errors"]
    else:
        assert errors == [] and config == expected["config"]


FM_LINES = st.sampled_from(["name: N", "name:", "name: ''", 'name: ""', "description: d",
                            "description:", "description:  ", "read_only: true", "read_only: false",
                            "limit: 5", "  continued", "\tx: y", "name : N", " name: N", "other: 1",
                            "novalue", "", "description: a: b", "limit: x"])


@st.composite
def memory_texts(draw):
    lines = draw(st.lists(FM_LINES, max_size=6))
    opening = draw(st.sampled_from(["---", "---", "--- ", "# heading", ""]))
    closing = draw(st.sampled_from([["---"], ["---"], []]))
    return "\n".join([opening, *lines, *closing, draw(st.sampled_from(["body", "", "---"]))])


@SETTINGS
@given(path=st.sampled_from(["system/human.md", "MEMORY.md", "notes/MEMORY.md", "persona.md",
                             "reference/a/b.md"]),
       content=memory_texts(), previous=st.one_of(st.none(), st.just(""), memory_texts()),
       form=st.sampled_from(["memfs-v2", "legacy"]))
def test_frontmatter_equals_the_release(letta_code, path, content, previous, form):
    expected = letta_code.frontmatter(path, content, fmt=form, previous=previous)
    assert fmt.frontmatter_errors(path, content, previous, fmt=form) == expected


# --------------------------------------------------------------------------- pinned examples

def test_limits_count_code_points_of_the_whole_file():
    body = "\U0001F600" * 19_990
    text = "---\nname: N\ndescription: d\n---\n" + body  # 31 + 19,990 code points
    files = [fmt.TreeFile("MEMORY.md", "100644", b"# Memory\n"),
             fmt.TreeFile("persona.md", "100644", text.encode())]
    errors = fmt.validator_errors(files, policy="root-marker", accepted=None)
    assert errors == ["persona.md: 20021 characters exceeds 20000 from maxFileCharacters"]


def test_glob_question_mark_is_one_utf16_unit_as_in_node(letta_code):
    # Node matches globs on UTF-16 code units: '?' is half an emoji, '??' a whole one.
    text = "---\nname: N\ndescription: d\n---\nxx"  # 33 code points
    files = [fmt.TreeFile("MEMORY.md", "100644", b"# Memory\n"),
             fmt.TreeFile("\U0001F600.md", "100644", text.encode())]
    for pattern, expected in (("?.md", []),
                              ("??.md", ["\U0001F600.md: 33 characters exceeds 1 from glob '??.md'"])):
        config = {"version": 1, "fileCharacterLimits": [{"pattern": pattern, "maxCharacters": 1}]}
        got = fmt.tree_errors(files, config=config, layout="root-marker", require_root_marker=True)
        assert got == expected == letta_code.tree(
            [{"path": f.path, "mode": f.mode, "text": f.data.decode()} for f in files],
            config=config, layout="root-marker", require_root_marker=True)


@pytest.mark.parametrize("policy_file, ever, root, expected", [
    ("root-marker\n", True, True, "root-marker"),
    ("root-marker\n", False, False, "legacy-only"),   # policy set, MEMORY.md never committed
    ("shared-memory\n", False, False, "shared-memory"),
    ("\ufeffroot-marker \n", True, False, "root-marker"),  # JavaScript's trim removes a BOM
    ("nonsense", True, True, "root-marker"),          # unknown word: decided by HEAD's tree
    (None, False, False, "legacy-only"),
])
def test_layout_policy(policy_file, ever, root, expected):
    assert fmt.layout_policy(policy_file, memory_md_ever=ever, head_has_root=root)[0] == expected
