"""memfs v2 migrations against Letta Code 0.34.12 itself, on generated block sets.

Hypothesis builds blocks lists (labels with folders, dashes, underscores, case twins, ``MEMORY``,
``.md`` suffixes, spaces; values with astral characters and line breaks; descriptions with
colons, ``#``, ``|``, newlines; limits near the values' sizes; read-only flags). For each, the
planned v2 tree must pass the release's own ``validateMemoryTreeConstraints`` (whole tree, the
config merged over the defaults as its validator script does, read-only files against the same
tree) and ``validateMemoryFileFrontmatter`` on every memory file; and wherever Letta's
``initialMemoryFilesFromCreateBody`` accepts the same blocks unchanged (no label memlab had to
sanitise, no collision it had to resolve, no description it had to flatten or quote, no name
Letta would leave empty, which its own validator refuses), memlab's files are byte for byte
Letta's.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings, strategies as st

from memlab.formats import letta_memfs as fmt
from memlab.migrations import _letta_v2, plan_migration

SETTINGS = settings(max_examples=400, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
DEFAULTS = dict(fmt.CONSTRAINTS_DEFAULTS)
SEGMENT = st.text(alphabet="abAB-_. :#é𝔸", min_size=1, max_size=6)
LABELS = st.one_of(st.lists(SEGMENT, min_size=1, max_size=3).map("/".join),
                   st.sampled_from(["MEMORY", "system/human", "human", "Human", "human_prefs",
                                    "system/human/prefs", "persona.md", "skills/x", "a-b", "a_b"]))
TEXT = st.text(alphabet=st.characters(blacklist_characters="\x00",
                                      blacklist_categories=("Cs",)), max_size=200)
DESCRIPTIONS = st.one_of(st.none(), st.just(""), st.text(alphabet="ab :#|\n\"'-", max_size=30),
                         st.sampled_from(["The human block: Stores key details.", "|", "''"]))
BLOCKS = st.lists(st.fixed_dictionaries({
    "label": LABELS, "value": TEXT, "description": DESCRIPTIONS,
    "limit": st.one_of(st.none(), st.integers(1, 400)), "read_only": st.booleans()}),
    min_size=1, max_size=6)
#: Flags that say memlab wrote something other than Letta would for the same block.
CHANGED = {"label_sanitised", "path_collision", "description_flattened", "description_quoted",
           "name_quoted", "name_fallback"}


def _tree(plan) -> dict[str, bytes]:
    (repo,) = plan.repos
    flat: dict[str, bytes] = {}
    for commit in repo.commits:
        flat.update(commit.files)
    return flat


@SETTINGS
@given(blocks=BLOCKS)
def test_generated_blocks_migrate_to_trees_letta_code_accepts(blocks, letta_code):
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "blocks.json"
        src.write_text(json.dumps([{"id": f"b{i}", **b} for i, b in enumerate(blocks)]),
                       encoding="utf-8")
        plan = plan_migration(src)
    tree = _tree(plan)
    texts = {p: d.decode("utf-8") for p, d in tree.items()}
    files = [{"path": p, "mode": "100644", "text": t} for p, t in sorted(texts.items())]
    config = json.loads(texts[fmt.CONSTRAINTS_CONFIG])
    assert letta_code.config(texts[fmt.CONSTRAINTS_CONFIG]) == {"config": config}
    assert letta_code.tree(files, config={**DEFAULTS, **config}, layout="root-marker",
                           require_root_marker=True, accepted=files) == []
    for path in fmt.frontmatter_paths(texts, "root-marker"):
        assert letta_code.frontmatter(path, texts[path], fmt="memfs-v2") == [], path

    moved = plan.moved[plan.moved["kind"] == "block"].set_index("item")["path"].to_dict()
    changed = set(plan.flags.loc[plan.flags["kind"].astype(str).isin(CHANGED), "item"])
    same = [dict(b, id=f"b{i}") for i, b in enumerate(blocks) if f"b{i}" not in changed
            and not (b["label"] == "MEMORY" and b["value"].split("\n", 1)[0] == "---")]
    letta = letta_code.initial([{k: b[k] for k in ("label", "value", "description")}
                                for b in same])
    by_path = {f["relativePath"]: f["content"] for f in letta}
    memory_block = any(b["label"] == "MEMORY" for b in blocks)
    event(f"{len(same)} of {len(blocks)} block(s) compared with Letta's own files")
    for b in same:
        path = moved[b["id"]]
        assert by_path.get(path) == texts[path], (b, path)
    if not memory_block:
        assert texts["MEMORY.md"] == by_path["MEMORY.md"] == "# Memory\n"
    # read-only blocks, exactly: listed by path
    protected = {moved[f"b{i}"] for i, b in enumerate(blocks) if b["read_only"]}
    assert {_letta_v2.glob_for(p)[0] for p in protected} == set(config.get("readOnlyFiles", []))
