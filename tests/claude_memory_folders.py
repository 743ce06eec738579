"""Claude Code auto-memory folders built to the documented layout (see
data/samples/claude-memory/SOURCES.md): a MEMORY.md index of markdown links and topic files
with name / description / type frontmatter, as Claude Code writes them."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

TOPICS = {
    "user_role.md": ("user-role", "who the user is", "user", "The user is a data engineer who "
                     "maintains the billing pipeline and prefers terse answers."),
    "feedback_testing.md": ("feedback-testing", "run the real database in tests", "feedback",
                            "Integration tests must hit a real PostgreSQL, never mocks.\n\n"
                            "**Why:** a mocked test passed while the migration failed in prod."),
    "project_release.md": ("project-release", "the release freeze", "project",
                           "Merge freeze starts on the first Thursday of each month for the "
                           "mobile release branch."),
    "reference_dashboards.md": ("reference-dashboards", "where latency is graphed", "reference",
                                "Oncall watches the grafana board api-latency for request "
                                "timings of the public API."),
}


def topic(name: str, description: str, kind: str | None, body: str, *, metadata: bool = False) -> str:
    head = f"---\nname: {name}\ndescription: {description}\n"
    if kind is not None:
        head += f"metadata:\n  type: {kind}\n" if metadata else f"type: {kind}\n"
    return head + "---\n\n" + body + "\n"


def build(folder: Path, topics: dict | None = None, *, index_extra: list[str] = ()) -> Path:
    """A clean folder: every topic file linked by one index line, nothing else."""
    folder.mkdir(parents=True, exist_ok=True)
    topics = TOPICS if topics is None else topics
    lines = ["# Memory index", ""]
    for i, (fname, (name, desc, kind, body)) in enumerate(sorted(topics.items())):
        (folder / fname).write_text(topic(name, desc, kind, body, metadata=i % 2 == 1))
        lines.append(f"- [{name}]({fname}) — {desc}")
    lines += list(index_extra)
    (folder / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return folder


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every entry under ``folder`` with its content hash (or link text) and mtime: what
    "nothing was written" is checked against."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            if os.path.islink(p):
                out[str(p)] = ("link:" + os.readlink(p), st.st_mtime_ns)
            elif p.is_file():
                out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns)
            else:
                out[str(p)] = ("dir", st.st_mtime_ns)
    return out
