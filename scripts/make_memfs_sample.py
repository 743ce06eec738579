"""Build the bundled memfs sample: data/samples/memfs/deep-research-memfs.bundle.

The sample is a Letta Code memfs repository with a lived-in history, made the way a real one
comes to be:

1. memlab migrates the bundled Agent File ``data/samples/letta-af/deep_research_agent.af``
   (migration dated 2026-04-06, after Letta Code's current hook arrived on 2026-03-22, so the
   history that follows is in the past);
2. six weeks of commits are replayed on top, each with the identity and message conventions of
   its author (formats-letta.md §1.5): the agent through Letta Code's ``memory`` tool (its
   ``reason`` as the message), the Letta server acting for an API user (``Update {label}
   block``), a human (GitHub noreply address), and a reflection subagent working on a
   ``letta/reflection/<id>`` branch merged back with ``merge(reflection): …``; one reflection
   branch is left open.

Seeded on purpose, so the 02 notebook has something to show (each is what real repos hold):
an agent commit that bypassed the hook (an unknown ``sources:`` key), a description an agent
wrote with a colon (``update_description`` writes it unquoted, which the server's YAML cannot
read), a file grown past its ``limit``, and a profile picture the harness committed (an image, not memory).

Run from the checkout (rewrites the bundle; the history is fixed, so the commit shas are too):

    python scripts/make_memfs_sample.py            # writes data/samples/memfs/
    python scripts/make_memfs_sample.py --check    # rebuilds in a temp dir, compares heads

Needs git; writes only under the output folder and a temporary directory.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memlab.formats.letta_memfs import render_memfs_file  # noqa: E402
from memlab.migrations._apply import apply_new  # noqa: E402
from memlab.migrations._letta import plan_memfs  # noqa: E402
from memlab.sources import load  # noqa: E402

SOURCE = ROOT / "data" / "samples" / "letta-af" / "deep_research_agent.af"
OUT = ROOT / "data" / "samples" / "memfs"
BUNDLE = "deep-research-memfs.bundle"
MIGRATED_AT = pd.Timestamp("2026-04-06T09:00:00Z")

AGENT_ID = "agent-7c1f4e2a-9b3d-4f6e-a8c5-2d0b1e9f3a64"
AGENT = ("deep-thought-research-agent", f"{AGENT_ID}@letta.com")
SERVER = ("User user-41d2c8e6-0a7b-4c39-b5f1-8e2d6a9c0b13",
          "user-41d2c8e6-0a7b-4c39-b5f1-8e2d6a9c0b13@letta.ai")
HUMAN = ("Maya Okafor", "90210+mokafor@users.noreply.github.com")
REFLECTION = ("Reflection Subagent", "agent-3e8a0d5b-6c2f-4a91-b7e4-0f9c1d2b8a57@letta.com")
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00"
       + bytes(range(256)) * 24)


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, env: dict | None = None) -> str:
        full = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                **(env or {})}
        return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false",
                               *args], cwd=self.path, env=full, check=True, capture_output=True,
                              text=True).stdout.strip()

    def read(self, rel: str) -> str:
        return (self.path / rel).read_text(encoding="utf-8")

    def write(self, rel: str, content: str | bytes) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def commit(self, message: str, who: tuple[str, str], when: str, files: dict | None = None,
               remove: tuple[str, ...] = ()) -> str:
        for rel, content in (files or {}).items():
            self.write(rel, content)
        if files:
            self.git("add", "--", *files)
        if remove:
            self.git("rm", "-q", "--", *remove)
        stamp = dt.datetime.fromisoformat(when).strftime("%Y-%m-%dT%H:%M:%S+0000")
        env = {"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1], "GIT_AUTHOR_DATE": stamp,
               "GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1], "GIT_COMMITTER_DATE": stamp}
        # Letta Code's hook is not installed here: this replays history, it does not enforce it.
        self.git("commit", "-q", "--no-verify", "-m", message, env=env)
        return self.git("rev-parse", "HEAD")

    def merge(self, branch: str, message: str, who: tuple[str, str], when: str) -> str:
        stamp = dt.datetime.fromisoformat(when).strftime("%Y-%m-%dT%H:%M:%S+0000")
        env = {"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1], "GIT_AUTHOR_DATE": stamp,
               "GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1], "GIT_COMMITTER_DATE": stamp}
        self.git("merge", "-q", "--no-ff", "--no-verify", "-m", message, branch, env=env)
        return self.git("rev-parse", "HEAD")


def _tool_edit(repo: Repo, rel: str, body: str, *, description: str | None = None) -> str:
    """The file as Letta Code's memory tool writes it: description (and read_only) only."""
    from memlab.formats.letta_memfs import read_as_client

    reading = read_as_client(repo.read(rel))
    lines = ["---", f"description: {' '.join((description or reading.description).split())}"]
    if reading.read_only is not None:
        lines.append(f"read_only: {reading.read_only}")
    return "\n".join(lines + ["---"]) + "\n" + body


def build(dest: Path) -> dict[str, str]:
    """Migrate the Agent File into ``dest`` and replay the history; returns named commit shas."""
    store = load(SOURCE)
    plan = plan_memfs(store, SOURCE, target="letta", when=MIGRATED_AT, layout="v1")  # a v1 sample
    apply_new(plan, dest, branch="main", force=False)
    r = Repo(dest)
    shas: dict[str, str] = {}
    plan_file = "system/research_plan.md"
    cites = "system/research_citations.md"
    human = "system/human.md"

    steps = [
        "1. Clarify the question: how do agent memory systems decide what to forget?",
        "2. Survey: MemGPT, Letta memfs, elfmem, Generative Agents' reflection.",
        "3. Read the Letta memfs hook and server sync code.",
        "4. Compare decay models (exponential, power law, reinforcement).",
        "5. Draft the report outline.",
    ]
    day = pd.Timestamp("2026-04-07T10:15:00Z")

    def at(days: float, hours: float = 0) -> str:
        return (day + pd.Timedelta(days=days, hours=hours)).isoformat()

    shas["plan"] = r.commit("Create a research plan for the memory-forgetting question", AGENT, at(0),
                            {plan_file: _tool_edit(r, plan_file, "\n".join(f"- [ ] {s}" for s in steps) + "\n")})
    r.commit("Update system/human block", SERVER, at(0, 3), {human: _tool_edit(
        r, human, r.read(human).split("---\n", 2)[2].lstrip("\n")
        + "\nThe user is Maya, a researcher at a small lab; she prefers sources over summaries.\n")})
    citations: list[str] = []
    for i, (title, note) in enumerate([
        ("Packer et al. 2023, MemGPT", "virtual context: main vs external memory, paging by the agent"),
        ("Park et al. 2023, Generative Agents", "reflection trees; importance x recency x relevance"),
        ("Letta Code memory-git-hooks.ts", "the pre-commit hook validates system/ and reference/ frontmatter"),
        ("letta#3241", "block limit not enforced on the git-backed write path"),
        ("Ebbinghaus 1885", "forgetting curve; spacing effect"),
        ("Wixted & Ebbesen 1991", "power-law forgetting fits better than exponential"),
    ]):
        citations.append(f"- **{title}**: {note}.")
        done = [f"- [x] {s}" if k <= min(i // 2 + 1, 3) else f"- [ ] {s}" for k, s in enumerate(steps)]
        r.commit(f"Record citation: {title}", AGENT, at(1 + i * 0.7, 1 + i % 3),
                 {cites: _tool_edit(r, cites, "\n".join(citations) + "\n"),
                  plan_file: _tool_edit(r, plan_file, "\n".join(done) + "\n")})
    shas["human_notes"] = r.commit("docs: add reading list and lab context", HUMAN, at(5, 6), {
        "reference/reading-list.md": render_memfs_file(
            "Papers Maya wants covered, in order", "1. MemGPT\n2. Generative Agents\n3. A-MEM\n"),
        "notes/meeting-2026-04-12.md": "# Lab meeting\n- focus on forgetting, not retrieval\n",
    })
    # Letta Code's personality presets commit a picture with the agent's identity.
    shas["profile"] = r.commit("chore: set default research profile picture", AGENT, at(6), {
        "profile.png": PNG})
    # The agent renames its scratch description with a colon; Letta Code writes it unquoted.
    shas["colon"] = r.commit("Clarify what the citations scratchpad is for", AGENT, at(9, 2), {
        cites: _tool_edit(r, cites, r.read(cites).split("---\n", 2)[2],
                          description="Citations scratchpad: sources read so far, one line each")})
    # A reflection subagent consolidates on its own branch; merged back by the agent.
    r.git("checkout", "-q", "-b", "letta/reflection/refl-0417")
    r.commit("chore: consolidate the citations into themes \U0001f52e", REFLECTION, at(10, 4), {
        "reference/themes.md": render_memfs_file(
            "Themes across the sources", "## Forgetting\n- decay curves (Ebbinghaus, Wixted)\n"
            "## Memory architecture\n- paging (MemGPT), reflection (Generative Agents)\n")})
    r.commit("chore: note open questions \U0001f52e", REFLECTION, at(10, 5), {
        "reference/open-questions.md": render_memfs_file(
            "Questions the sources leave open", "- Does reinforcement beat recency for agents?\n")})
    r.git("checkout", "-q", "main")
    shas["merge"] = r.merge("letta/reflection/refl-0417", "merge(reflection): themes and open questions",
                            AGENT, at(10, 8))
    r.git("branch", "-q", "-D", "letta/reflection/refl-0417")
    # The agent bypasses the hook once: an unknown key (the hook would refuse it).
    text = r.read(human)
    shas["bypass"] = r.commit("Tag the human block with where facts came from", AGENT, at(13, 3), {
        human: text.replace("---\n", "---\nsources: chat, lab wiki\n", 1)})
    r.commit("Update system/human block", SERVER, at(15, 2), {
        human: r.read(human) + "Maya's deadline for the draft is 2026-05-22.\n"})
    # The report draft grows past its limit over a few weeks (letta#3241: nothing stops it).
    draft = "reference/report-draft.md"
    body = ""
    for week in range(4):
        body += "".join(f"{week * 10 + k + 1}. Finding about forgetting and consolidation, with "
                        f"the evidence and a caveat on how it transfers to agents.\n"
                        for k in range(10))
        r.commit(f"Extend the report draft (section {week + 1})", AGENT, at(17 + week * 5, 4),
                 {draft: render_memfs_file("Working draft of the report", body, limit=2500)})
    r.commit("docs: comments on the draft", HUMAN, at(33, 7), {
        "notes/review-2026-05-10.md": "# Review\n- cite power-law results before exponential\n"})
    steps_done = "\n".join(f"- [x] {s}" for s in steps) + "\n"
    shas["plan_done"] = r.commit("Mark the research plan done", AGENT, at(36, 2),
                                 {plan_file: _tool_edit(r, plan_file, steps_done)})
    # A reflection still in progress: its branch is not merged.
    r.git("checkout", "-q", "-b", "letta/reflection/refl-0514")
    r.commit("chore: draft lessons learned \U0001f52e", REFLECTION, at(37, 5), {
        "reference/lessons.md": render_memfs_file("What this research taught me",
                                                  "- check the hook before editing system/\n")})
    r.git("checkout", "-q", "main")
    shas["head"] = r.git("rev-parse", "main")
    return shas


def write_bundle(repo: Path, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    Repo(repo).git("bundle", "create", "-q", str(tmp), "--branches")
    tmp.replace(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true",
                        help="rebuild in a temporary folder and compare with the committed bundle")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memlab-memfs-sample-") as tmp:
        repo = Path(tmp) / "repo"
        shas = build(repo)
        if args.check:
            heads = Repo(Path(tmp)).git("bundle", "list-heads", str(args.out / BUNDLE))
            ok = shas["head"] in heads
            print(("same" if ok else "DIFFERENT") + f" main head {shas['head']}")
            return 0 if ok else 1
        write_bundle(repo, args.out / BUNDLE)
        print(f"wrote {args.out / BUNDLE}: main at {shas['head']}")
        print(Repo(repo).git("log", "--all", "--format=%h %ad %an: %s", "--date=short"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
