"""Letta Code memfs commit authors: the author kinds, memlab's own commit identities (migrations
and review applies) and :func:`classify_author`. Part of :mod:`memlab.formats.letta_memfs`,
which re-exports the public names.
"""

from __future__ import annotations

__all__ = [
    "AUTHOR_KINDS",
    "HARNESS_EMAIL",
    "HARNESS_LABELS",
    "HARNESS_MERGES",
    "BRANCH_ROLES",
    "MIGRATION_NAME",
    "MIGRATION_EMAIL",
    "REVIEW_NAME",
    "REVIEW_EMAIL",
    "classify_author",
    "branch_role",
]

AUTHOR_KINDS = (
    "agent",
    "server_user",
    "human",
    "reflection_subagent",
    "memory_worker",
    "harness",
    "system",
    "migration",
    "review",
)
#: Letta Code's own identity for commits it makes itself (merges of memory-worker branches,
#: the dashboard's Memory Palace): ``Letta Code <noreply@letta.com>`` (0.34, memory-worktree.ts).
HARNESS_EMAIL = "noreply@letta.com"
#: The labels of Letta Code's harness branches ``letta/{label}/{id}`` (worktrees under
#: ``memory-worktrees/``), and the merge subject prefix that brings each back.
HARNESS_LABELS = ("reflection", "memory-worker")
HARNESS_MERGES = {"merge(reflection)": "reflection", "merge(memory)": "memory-worker"}
#: What :func:`branch_role` calls a branch.
BRANCH_ROLES = ("main", "reflection", "memory_worker", "other")
#: Who memlab's own migration commits are attributed to (author kind ``migration``): not an
#: agent and not a human, so an audit can tell a migration apart from the memory's own history.
MIGRATION_NAME = "memlab migrate"
MIGRATION_EMAIL = "migrate@memlab.invalid"
#: Who ``memlab apply`` commits a ticked review proposal as (author kind ``review``): a change a
#: human chose, written by memlab with git plumbing (no hook runs), so not a human's commit.
REVIEW_NAME = "memlab"
REVIEW_EMAIL = "memlab@localhost"


# --------------------------------------------------------------------------- authors


def classify_author(
    name: str | None, email: str | None, *, message: str | None = None, branch: str | None = None
) -> str:
    """One of :data:`AUTHOR_KINDS` for a commit author (formats-letta.md §1.5).

    ``agent-…@letta.com`` is an agent (also the hand-typed truncated ids); reflection subagents
    use their own agent ids, so they are told apart by name, the 🔮 suffix or a
    ``letta/reflection/*`` branch; ``user-…@letta.ai`` is a server/API user; the server's
    fallback identities (``system@letta.ai``, ``agent@letta.ai``) are ``system``; Souveraine
    agents commit as ``{agent_id}@souveraine.local``; memlab's own migrations
    (:data:`MIGRATION_EMAIL`) are ``migration`` and its review applies (:data:`REVIEW_EMAIL`)
    ``review``; Letta Code's harness identity (:data:`HARNESS_EMAIL`) is ``harness``; an
    agent id on a ``letta/memory-worker/*`` branch (or merged by ``merge(memory): …``) is a
    ``memory_worker``; anyone else is a human.
    """
    email = (email or "").strip().lower()
    name = (name or "").strip()
    if email == MIGRATION_EMAIL:
        return "migration"
    if email == REVIEW_EMAIL:
        return "review"
    if email == HARNESS_EMAIL:
        return "harness"
    local, _, domain = email.partition("@")
    if domain == "letta.ai" and local in ("system", "agent"):
        return "system"
    if domain == "letta.ai" and local.startswith("user-"):
        return "server_user"
    is_agent = (
        domain == "letta.com" and local.startswith("agent-")
    ) or domain == "souveraine.local"
    if is_agent:
        reflective = (
            "reflection" in name.lower()
            or (message is not None and "\U0001f52e" in message)
            or (branch is not None and "letta/reflection/" in branch)
        )
        if reflective:
            return "reflection_subagent"
        if branch is not None and "letta/memory-worker/" in branch:
            return "memory_worker"
        return "agent"
    return "human"


def branch_role(branch: str) -> str:
    """``reflection`` / ``memory_worker`` for Letta Code's harness branches
    (``letta/reflection/…``, ``letta/memory-worker/…``, also their ``(merged)`` names),
    ``main`` for ``main``, ``master`` and ``HEAD``, else ``other``.

    A name's role only: which branch a commit was made on, by first-parent containment, and
    the main line's role ``main`` whatever it is called (with its upstream), are decided by
    :mod:`memlab.sources._git_branches`, which asks this function for every other line."""
    name = branch.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")
    if "letta/reflection/" in name:
        return "reflection"
    if "letta/memory-worker/" in name:
        return "memory_worker"
    return "main" if name in ("main", "master", "HEAD") else "other"
