"""The one way memlab runs git, for reading and for writing.

A memory repository is untrusted input: whoever wrote it controls its ``.git/config``, its
``.gitattributes`` and every file in it. Git will run programs a repository's config names
(``core.fsmonitor``, hooks, ``filter.<x>.clean/smudge/process``, ``diff.external``, textconv,
``core.pager``, ``core.sshCommand``, credential helpers, ``gpg.program``...). Every git process
memlab starts goes through :func:`run` (or :func:`stream`, :func:`pipe`), which

* starts git with a minimal environment: ``PATH``, ``TMPDIR``, ``LC_ALL=C``, no system or global
  config (``GIT_CONFIG_NOSYSTEM=1``, ``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_ATTR_NOSYSTEM=1``),
  no inherited ``GIT_*`` variable, no terminal prompt, stdin closed unless memlab sends input;
* overrides every program-naming key with ``-c`` (:data:`CONFIG_OVERRIDES`), plus an empty value
  for every ``filter.<x>.*``, ``diff.<x>.*`` and ``merge.<x>.driver`` the repository defines
  (command-line config wins over the repository's own);
* refuses (:class:`~memlab.errors.RepoError` naming the key) a repository whose config uses
  ``include``/``includeIf`` (memlab does not follow config into other files), and one that
  leads git to a FIFO, socket or device (git would block on it): in its git folder, its common
  folder, a folder a symlink there leads to, or along ``objects/info/alternates``;
* runs git through :mod:`memlab._proc` with a deadline (:data:`GIT_TIMEOUT_ENV`, default
  :data:`~memlab.constants.GIT_TIMEOUT_S`): past it git's whole process group is killed and a
  RepoError names the store and the variable (the backstop for what the checks cannot see).

memlab's own writes never need a checkout filter, and no git process makes an object: a
migration and review's apply write their blobs, trees and commits from Python through the one
writer, :mod:`memlab._gitobj` (:func:`write_object`, :func:`hash_object`, :func:`commit_tree`
here), and move the branch with ``update-ref``; working-tree files are written by memlab itself.
The analyst's own ``safe.directory`` entries (global config, which is theirs and trusted) are passed
through so a repository they allowed stays readable.
:data:`ENV_OVERRIDES` and :data:`CONFIG_OVERRIDES` are plain data so the standalone migration
plan script embeds exactly the same hardening.

This module is the public face: import from here. The code lives in private siblings, imported
one way (process <- check <- run <- plumbing):

* :mod:`~memlab._git_process`: starting one git process (``ENV_OVERRIDES``,
  ``CONFIG_OVERRIDES``, ``IDENTITY_KEYS``, ``env``, ``command``, ``deadline``,
  ``GIT_TIMEOUT_ENV``), without checking the repository;
* :mod:`~memlab._git_check`: finding the git folder without running git (``find_root``,
  ``git_dir``, ``common_dir``) and ``check_repo`` (includes, FIFOs, per-driver overrides;
  ``LINKED_ENTRIES``);
* :mod:`~memlab._git_run`: ``run``, ``returncode``, ``stream`` (``STREAM_GATHER_S``) and
  ``pipe``, each after ``check_repo``;
* :mod:`~memlab._git_plumbing`: what the writers use (``rev_parse``, ``read_blob``,
  ``tree_entries``, ``flat_tree``, ``symbolic_branch``, ``hash_object``, ``commit_tree``,
  ``write_object``, ``object_format``, ``update_ref``).
"""

from __future__ import annotations

from memlab._git_check import LINKED_ENTRIES, check_repo, common_dir, find_root, git_dir
from memlab._git_plumbing import (
    commit_tree,
    flat_tree,
    hash_object,
    object_format,
    read_blob,
    rev_parse,
    symbolic_branch,
    tree_entries,
    update_ref,
    write_object,
)
from memlab._git_process import (
    CONFIG_OVERRIDES,
    ENV_OVERRIDES,
    GIT_TIMEOUT_ENV,
    IDENTITY_KEYS,
    command,
    deadline,
    env,
)
from memlab._git_run import STREAM_GATHER_S, pipe, returncode, run, stream

__all__ = [
    "ENV_OVERRIDES",
    "CONFIG_OVERRIDES",
    "IDENTITY_KEYS",
    "env",
    "command",
    "run",
    "stream",
    "check_repo",
    "find_root",
    "git_dir",
    "returncode",
    "hash_object",
    "commit_tree",
    "update_ref",
    "rev_parse",
    "read_blob",
    "tree_entries",
    "write_object",
    "flat_tree",
    "symbolic_branch",
    "object_format",
    "common_dir",
    "deadline",
    "GIT_TIMEOUT_ENV",
    "pipe",
    "STREAM_GATHER_S",
    "LINKED_ENTRIES",
]
