"""Build the bundled memfs v2 sample: data/samples/memfs/letta-code-v2.bundle.

A Letta Code 0.34.12 memory repository (memfs v2, "root-marker") made with Letta Code's own
code wherever Letta Code has code for the step, and validated by it at every commit:

1. the initial files are what Letta Code 0.34.12 creates for the blocks of the bundled Agent
   File ``data/samples/letta-af/deep_research_agent.af``: the bundle's own
   ``initialMemoryFilesFromCreateBody`` run with the wheel's Node (tests/letta_code.py), which
   maps ``persona`` to ``persona.md`` and adds the root ``MEMORY.md``;
2. Letta Code's pre-commit hook, its validator ``letta-memory-constraints.cjs`` and the layout
   policy file are installed as ``installPreCommitHookWithPolicy(dir, "root-marker")`` writes
   them, so every ordinary commit below is checked by the release itself and refused if it
   breaks a rule (the build fails then). Two commits bypass it with ``--no-verify``, as an
   agent can;
3. the history uses the 0.34 conventions (formats-letta-code-0.34.md §2.7-2.9): the agent's
   identity ``{agentId}@letta.com`` and ``Update memory file {path}`` messages; a human adds
   ``.memfs.config.json`` with ``LETTA_MEMORY_CONSTRAINTS_UPDATE=1`` (human approval); a
   reflection subagent on ``letta/reflection/{id}`` merged with ``merge(reflection): …`` and a
   ``Reflection-Subagent-ID:`` trailer; a memory worker on ``letta/memory-worker/{id}`` merged
   with ``merge(memory): letta/memory-worker/{id}`` by the harness identity ``Letta Code
   <noreply@letta.com>``; the dashboard's Memory Palace (``palace/MEMORY.md`` and a section
   file); a second reflection branch left open.

Seeded on purpose: a bypassing commit that writes a root file past 20,000 code points, edits
the read-only ``persona.md`` and adds a nested file without its folder's index (fixed by the
next commit, which the hook accepts); a last bypass that leaves ``scratch/todo.md`` without
``scratch/MEMORY.md`` at HEAD. Everything after the initial files is invented.

Needs git and the Letta Code 0.34.12 side venv (``python tests/letta_code.py`` builds it):

    python scripts/make_memfs_v2_sample.py            # writes data/samples/memfs/
    python scripts/make_memfs_v2_sample.py --check    # rebuilds in a temp dir, compares heads
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from letta_code import letta_code  # noqa: E402
from memlab.sources import load  # noqa: E402

SOURCE = ROOT / "data" / "samples" / "letta-af" / "deep_research_agent.af"
OUT = ROOT / "data" / "samples" / "memfs"
BUNDLE = "letta-code-v2.bundle"

AGENT_ID = "agent-4b9e2c71-0d3a-4f58-9e6b-7a1c2d3e4f50"
AGENT = ("deep_research_agent", f"{AGENT_ID}@letta.com")
HARNESS = ("Letta Code", "noreply@letta.com")
HUMAN = ("Maya Okafor", "90210+mokafor@users.noreply.github.com")
REFLECTION_ID = "agent-0c5d9e3f-7a1b-4c2d-8e6f-9a0b1c2d3e4f"
REFLECTION = ("Reflection Subagent", f"{REFLECTION_ID}@letta.com")
WORKER_ID = "agent-6e2f1a0b-3c4d-4e5f-a6b7-c8d9e0f1a2b3"
WORKER = ("Memory Worker", f"{WORKER_ID}@letta.com")


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, env: dict | None = None, hooks: bool = False) -> str:
        full = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                **(env or {})}
        config = ["-c", "commit.gpgsign=false"] + ([] if hooks else ["-c", "core.hooksPath=/dev/null"])
        run = subprocess.run(["git", *config, *args], cwd=self.path, env=full, capture_output=True,
                             text=True)
        if run.returncode != 0:
            raise SystemExit(f"git {' '.join(args[:2])} failed:\n{run.stdout}{run.stderr}")
        return run.stdout.strip()

    def write(self, rel: str, content: str) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")

    def read(self, rel: str) -> str:
        return (self.path / rel).read_text(encoding="utf-8")

    @staticmethod
    def _env(who: tuple[str, str], when: str) -> dict:
        return {"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1], "GIT_AUTHOR_DATE": when,
                "GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1],
                "GIT_COMMITTER_DATE": when}

    def commit(self, message: str, who: tuple[str, str], when: str, files: dict | None = None,
               remove: tuple[str, ...] = (), *, verify: bool = True, approve: bool = False) -> str:
        for rel, content in (files or {}).items():
            self.write(rel, content)
        self.git("add", "-A")
        if remove:
            self.git("rm", "-q", "--", *remove)
        env = self._env(who, when)
        if approve:
            env["LETTA_MEMORY_CONSTRAINTS_UPDATE"] = "1"
        # With verify, Letta Code's own hook runs and must accept the commit.
        self.git("commit", "-q", *([] if verify else ["--no-verify"]), "-m", message, env=env,
                 hooks=verify)
        return self.git("rev-parse", "HEAD")

    def merge(self, branch: str, message: str, who: tuple[str, str], when: str) -> str:
        self.git("merge", "-q", "--no-ff", "-m", message, branch, env=self._env(who, when))
        return self.git("rev-parse", "HEAD")


def _file(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def build(dest: Path) -> dict[str, str]:
    lc = letta_code()
    store = load(SOURCE)
    blocks = [{"label": b.label, "value": b.value, "description": b.description}
              for b in store.frames["blocks"].itertuples()]
    initial = lc.initial(blocks)
    dest.mkdir(parents=True)
    r = Repo(dest)
    r.git("init", "-q", "-b", "main")
    shas = {}
    shas["init"] = r.commit("chore: initialize local memory", AGENT, "2026-10-20T09:00:00+0000",
                            {f["relativePath"]: f["content"] for f in initial}, verify=False)
    lc.install_hooks(dest, "root-marker")

    index = r.read("MEMORY.md")
    shas["notes"] = r.commit("Update memory file notes/MEMORY.md", AGENT, "2026-10-22T10:30:00+0000", {
        "MEMORY.md": index + "\n- notes/: sources and topics, read on demand\n",
        "notes/MEMORY.md": "# Notes\n\n- sources.md: where each claim came from\n",
        "notes/sources.md": _file("Sources", "Where each research claim came from",
                                  "- MemGPT (Packer et al. 2023): paging between contexts\n"
                                  "- Generative Agents (Park et al. 2023): reflection trees\n")})
    config = {"version": 1, "readOnlyFiles": ["persona.md"],
              "fileCharacterLimits": [{"pattern": "notes/**", "maxCharacters": 8000}]}
    shas["config"] = r.commit("chore: protect the persona and cap notes", HUMAN,
                              "2026-10-25T16:00:00+0000",
                              {".memfs.config.json": json.dumps(config, indent=2) + "\n"},
                              approve=True)

    r.git("checkout", "-q", "-b", f"letta/reflection/{AGENT_ID}")
    r.commit("Update memory file research_plan.md", REFLECTION, "2026-10-28T02:10:00+0000", {
        "research_plan.md": r.read("research_plan.md") + "\n1. Question: how do agents forget?\n"
        "2. Survey decay models.\n3. Draft the report.\n"})
    r.git("checkout", "-q", "main")
    shas["reflection_merge"] = r.merge(
        f"letta/reflection/{AGENT_ID}",
        f"merge(reflection): tighten the research plan\n\nReflection-Subagent-ID: {REFLECTION_ID}",
        AGENT, "2026-10-28T02:30:00+0000")
    r.git("branch", "-q", "-D", f"letta/reflection/{AGENT_ID}")

    r.git("checkout", "-q", "-b", f"letta/memory-worker/{WORKER_ID}")
    r.commit("Update memory file notes/topics.md", WORKER, "2026-10-30T11:00:00+0000", {
        "notes/MEMORY.md": r.read("notes/MEMORY.md") + "- topics.md: themes across the sources\n",
        "notes/topics.md": _file("Topics", "Themes across the sources",
                                 "## Forgetting\n- decay curves\n## Architecture\n- paging\n")})
    r.git("checkout", "-q", "main")
    shas["memory_merge"] = r.merge(f"letta/memory-worker/{WORKER_ID}",
                                   f"merge(memory): letta/memory-worker/{WORKER_ID}",
                                   HARNESS, "2026-10-30T11:05:00+0000")
    r.git("branch", "-q", "-D", f"letta/memory-worker/{WORKER_ID}")

    shas["palace"] = r.commit("Update memory file palace/MEMORY.md", HARNESS, "2026-11-01T08:00:00+0000", {
        "palace/MEMORY.md": "# Memory Palace\n\n## Feedback\n- keep the plan short\n\n## Dismissed\n",
        "palace/focus.md": _file("Focus", "What the agent is working on this week",
                                 "Drafting the forgetting report.\n\n```palace-action\n"
                                 '{"label": "Mark done", "action": "dismiss"}\n```\n')})

    # The agent bypasses the hook: a root file past 20,000 code points, the read-only persona
    # edited, a nested file without its folder's index.
    shas["bypass"] = r.commit("Update memory file research_plan.md", AGENT, "2026-11-05T14:00:00+0000", {
        "research_plan.md": r.read("research_plan.md") + "".join(
            f"- finding {i}: forgetting curves and what they mean for agent memory \u2014 caveat.\n"
            for i in range(300)),
        "persona.md": r.read("persona.md") + "\nI also keep a running log of every search.\n",
        "archive/2026/old-plan.md": _file("Old Plan", "The plan before October", "- superseded\n")},
        verify=False)
    # The next commit must satisfy the whole tree, so the agent repairs all three; the hook runs.
    plan = r.read("research_plan.md")
    persona_before = r.git("show", f"{shas['init']}:persona.md")
    shas["repair"] = r.commit("Update memory file research_plan.md", AGENT, "2026-11-06T09:00:00+0000", {
        "research_plan.md": plan[:plan.index("- finding 0:")],
        "archive/MEMORY.md": "# Archive\n\n- 2026/: earlier plans\n",
        "archive/2026/MEMORY.md": "# 2026\n\n- old-plan.md\n"})
    # The read-only persona stays as the bypass left it: restoring it is a change too, which
    # readOnlyFiles forbids; only a human can change it now.
    del persona_before

    r.git("checkout", "-q", "-b", f"letta/reflection/{AGENT_ID}-2")
    r.commit("Update memory file notes/sources.md", REFLECTION, "2026-11-10T03:00:00+0000", {
        "notes/sources.md": r.read("notes/sources.md") + "- A-MEM (2025): linked notes\n"})
    r.git("checkout", "-q", "main")
    shas["open_issue"] = r.commit("Update memory file scratch/todo.md", AGENT, "2026-11-12T17:45:00+0000", {
        "scratch/todo.md": _file("Todo", "Loose ends", "- ask Maya about the deadline\n")},
        verify=False)
    return shas


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="rebuild in a temp dir, compare heads")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "memory"
        shas = build(repo)
        head = shas["open_issue"]
        if args.check:
            bundle = OUT / BUNDLE
            listed = subprocess.run(["git", "bundle", "list-heads", str(bundle)], capture_output=True,
                                    text=True, check=True).stdout
            ok = f"{head} refs/heads/main" in listed
            print(("same main head " if ok else "DIFFERENT main head ") + head)
            return 0 if ok else 1
        OUT.mkdir(parents=True, exist_ok=True)
        Repo(repo).git("bundle", "create", "-q", str(OUT / BUNDLE), "--all")
        for name, sha in shas.items():
            print(f"{name:18} {sha}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
