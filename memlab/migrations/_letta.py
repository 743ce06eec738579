"""Letta blocks (.af, blocks JSON) or an elfmem DB → Letta Code memfs or a Souveraine agent dir.

The paths and frontmatter below are the v1 layout (``layout="v1"``, and Souveraine's); the Letta
target's default, memfs v2, is :mod:`memlab.migrations._letta_v2`, which keeps the label
sanitising, side file, dates, agents and detached blocks described here and replaces the paths,
the frontmatter, ``read_only`` and ``limit`` (moved into ``.memfs.config.json``).

Decisions, each visible in the result's ``flags`` table when it applies:

* **Paths.** A plain label goes to ``system/{label}.md``; a label that already carries a path
  (``reference/faq``, ``system/persona``) keeps it (the label *is* the path in memfs-era agents).
  A hostile or odd label is sanitised, never refused outright, and always reported: backslashes
  become ``/``; empty, ``.`` and ``..`` segments are dropped (``../x`` → ``system/x``, an absolute
  ``/etc/x`` → ``etc/x``); leading dots are removed so no label can reach ``.git`` or hide a
  file; whitespace becomes ``-`` (the Letta hook splits file names on whitespace). Two labels
  that land on one path get ``-2``, ``-3``… suffixes.
* **Frontmatter.** ``description`` on one line, with Letta's fallback ``Memory block {label}``
  when empty; ``read_only: true`` only when set; ``limit`` kept when the block has one. Blocks
  over their limit are flagged, never truncated. Every file is checked with Letta Code's
  pre-commit rules (:func:`memlab.formats.letta_memfs.check_precommit`). The one rule a
  migration breaks on purpose is "agents may not set ``read_only``": like the Letta server's own
  initial commit when it enables memfs, the migration sets it (plumbing commits run no hooks);
  each such file is flagged.
* **Side file.** ``.memlab/letta-blocks.json`` holds, per block, every source field a memfs file
  cannot hold (block id, metadata, template fields, hidden, tags, the original label and
  description), so nothing is lost; it is JSON, so Letta never loads it as a block.
* **Dates.** Commits are dated when the migration runs (so a repository's history starts when
  it came to be, and the audit's time axes span its real life); the source's own timestamp is
  kept in every commit message's ``Memlab-Source-Created-At`` trailer and in the side file's
  ``source_created_at``. Re-running the same migration into the same destination reuses the
  earlier run's date (:func:`previous_migration_time`), so it changes nothing. Commits are
  attributed to memlab (author kind ``migration``), which runs no hook, as the Letta server's
  own plumbing commits do.
* **Agents and shared blocks.** memfs is one repository per agent (Letta has no shared-memory
  primitive, LET-8217; Souveraine's decision record rejects shared blocks). A file with one
  agent (or a blocks JSON list, which has none) becomes one repository at the destination. A file
  with several agents becomes one repository per agent in ``<dest>/<agent-name>/``; a block
  attached to several agents is *copied* into each of their repositories at the same path, and
  the side file lists ``shared_with`` and the value's sha256 so later drift between the copies
  can be detected.
* **Detached blocks** (in the file but attached to no agent; ezra.af has 35) go to
  ``detached/<path>`` in the single repository (outside ``system/``, so they do not enter the
  prompt), or to a ``<dest>/_detached/`` repository when there are several agents.

From an elfmem DB the memfs files hold elfmem block-format bodies: the constitution in
``system/persona.md``, other pinned blocks in ``system/pinned.md``, active blocks in
``reference/<category>.md``, inbox blocks in ``reference/inbox/<category>.md`` and archived blocks
in ``archive/<category>.md``; the ledger (see :mod:`memlab.migrations._elfmem`) goes to
``.memlab/ledger/``.

This module is the public face: import from here. The code lives in private siblings, imported
one way (files <- repos <- plan):

* :mod:`~memlab.migrations._letta_files`: one memory file (``MemFile``, ``value_or_none``,
  ``sanitise_label``, ``path_for``, ``json_safe``, ``sha256``, ``render``, ``check_hook``);
* :mod:`~memlab.migrations._letta_repos`: the repositories and their files (``RepoSpec``,
  ``letta_repos``, ``elfmem_repo``, ``DETACHED_DIR``, ``DETACHED_REPO``, ``DERIVED_COLUMNS``);
* :mod:`~memlab.migrations._letta_plan`: the plan (``plan_memfs``, ``side_file``,
  ``SIDE_FILE``, ``LEDGER_PREFIX``, ``AGENT_YAML``, ``file_sha``, ``source_time_letta``,
  ``TRAILER_SHA``, ``TRAILER_CREATED``, ``previous_migration_time``).
"""

from __future__ import annotations

from memlab.migrations._letta_files import (
    MemFile,
    check_hook,
    json_safe,
    path_for,
    render,
    sanitise_label,
    sha256,
    value_or_none,
)
from memlab.migrations._letta_plan import (
    AGENT_YAML,
    LEDGER_PREFIX,
    SIDE_FILE,
    TRAILER_CREATED,
    TRAILER_SHA,
    file_sha,
    plan_memfs,
    previous_migration_time,
    side_file,
    source_time_letta,
)
from memlab.migrations._letta_repos import (
    DERIVED_COLUMNS,
    DETACHED_DIR,
    DETACHED_REPO,
    RepoSpec,
    elfmem_repo,
    letta_repos,
)

__all__ = [
    "SIDE_FILE",
    "LEDGER_PREFIX",
    "DETACHED_DIR",
    "DETACHED_REPO",
    "AGENT_YAML",
    "DERIVED_COLUMNS",
    "MemFile",
    "value_or_none",
    "sanitise_label",
    "path_for",
    "json_safe",
    "sha256",
    "render",
    "check_hook",
    "RepoSpec",
    "letta_repos",
    "elfmem_repo",
    "side_file",
    "file_sha",
    "source_time_letta",
    "TRAILER_SHA",
    "TRAILER_CREATED",
    "previous_migration_time",
    "plan_memfs",
]
