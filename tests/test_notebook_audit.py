"""01-audit runs through the same papermill path as `memlab report`, on the demo data."""

from __future__ import annotations

import json

import nbformat
import pytest

from memlab.report import execute_notebook, notebook_path, report

pytestmark = pytest.mark.slow


def test_committed_without_outputs():
    nb = nbformat.read(notebook_path("audit"), as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in nb.cells if c.cell_type == "code")
    assert "parameters" in nb.cells[1].metadata.get("tags", [])


def test_audit_report_on_the_demo_instance(tmp_path, data_dir):
    result = report("audit", [data_dir / "demo/elfmem-demo.db"], out=tmp_path, as_of="2026-08-04")
    metrics = result.metrics["elfmem-demo.db"]
    assert metrics["llm_calls"] == 2903
    assert round(metrics["calls_per_surviving_block"], 1) == 20.7
    assert round(metrics["input_per_corpus_token"], 1) == 52.1
    assert json.loads((tmp_path / "metrics.json").read_text()) == result.metrics
    html = result.html.read_text()
    assert html.count("data:image/png;base64") >= 4  # archival, recency, Lorenz, token spend
    assert "20.7" in html


def test_several_stores_share_one_report(tmp_path, data_dir):
    stores = [data_dir / "demo/elfmem-demo.db", data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db"]
    result = execute_notebook("audit", {"stores": stores, "as_of": "2026-11-30"}, tmp_path)
    assert set(result.metrics) == {"elfmem-demo.db", "elfmem-0.20.0-schema9.db"}


# Text only an elfmem database's report may hold: the design record and its sections.
ELFMEM_ONLY = ("elfmem v2 re-evaluation", "2,903 LLM calls", "archive_reason", "constitution",
               "Lorenz", "decay", "curate()", "supersession")


def _visible_text(html: str) -> str:
    import html as html_lib
    import re

    html = re.sub(r"<style.*?</style>|<script.*?</script>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html)))


def test_a_mem0_store_and_a_claude_memory_folder_get_their_own_sections(tmp_path, data_dir):
    stores = [data_dir / "samples/mem0/2.2.1/history.db",
              data_dir / "samples/claude-memory/openai-anthropic-bridge"]
    result = report("audit", stores, out=tmp_path)
    text = _visible_text(result.html.read_text())
    for heading in ("mem0: each memory's life", "mem0: churn over time",
                    "mem0: rewrites, deletions and near-duplicates",
                    "Claude Code memory: the index against the files",
                    "Claude Code memory: duplicates, frontmatter and size per type"):
        assert heading in text, heading
    for elfmem_text in ELFMEM_ONLY:
        assert elfmem_text not in text, elfmem_text
    assert "History you can trust" not in text  # neither kind has an integrity table
    # the evidence itself: mem0's rewritten memories, the folder's five orphans
    assert "Bob's travel budget is 4000 euros." in text and "Alice lives in Porto." in text
    for orphan in ("development_workflow.md", "project_context.md", "user_role.md"):
        assert orphan in text
    assert "no dangling index lines found" in text
    # the headline panel picks each store's rows by its kind (written into metrics.json)
    assert {m["kind"] for m in result.metrics.values()} == {"mem0", "claude_memory"}
    assert "rewrites_per_surviving_memory" in text and "n_orphan_files" in text


def test_an_elfmem_report_keeps_its_sections_and_shows_no_other_kinds(tmp_path, data_dir):
    result = report("audit", [data_dir / "demo/elfmem-demo.db"], out=tmp_path, as_of="2026-08-04")
    text = _visible_text(result.html.read_text())
    for heading in ("elfmem: where archival comes from", "elfmem: does decay do any work?",
                    "elfmem: the constitution", "elfmem: rich get richer",
                    "elfmem: what the curation cost", "2,903 LLM calls"):
        assert heading in text, heading
    assert "mem0:" not in text and "Claude Code memory:" not in text
