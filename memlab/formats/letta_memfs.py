"""Letta Code memfs: the on-disk format, shared by the reader (kinds/_memfs) and the writer
(migrate/), so a round trip cannot drift.

Everything here is pure: text in, values out. No git, no filesystem.

Sources (see shared/reference/formats-letta.md §1): letta-code ``memory-filesystem.ts``
(``labelFromRelativePath``), ``memory-format.ts`` (v2 root layout), ``memory-git-hooks.ts``
(the pre-commit hook, ported rule by rule in :func:`check_precommit`), and letta
``block_markdown.py`` (server frontmatter).

This module is the public face: import from here. The code lives in private siblings, and
the ports of Letta Code's own rules (its pre-commit hook, its memory constraints) in the
``letta_memfs`` kind's package, re-exported here as this module's documented names:

* :mod:`~memlab.formats._memfs_paths`: ``CONFIG_PATH``, ``ROOT_INDEX``, ``SKILL_FILE``, the
  hook's path filters, and paths to labels and back (``safe_relative_path``, ``is_git_name``,
  ``label_for_path``, ``path_for_label``, ...);
* :mod:`~memlab.formats._memfs_authors`: ``AUTHOR_KINDS``, memlab's migration and review
  identities, ``classify_author``;
* :mod:`~memlab.formats._memfs_frontmatter`: ``DEFAULT_LIMIT``, ``Frontmatter``,
  ``split_frontmatter``, each consumer's reading (``read_as_client``, ``read_as_server``,
  ``strict_yaml``) and ``read_frontmatter``;
* :mod:`~memlab.kinds.letta_memfs._hook`: the hook's keys, variants and dates, ``Violation``,
  ``hook_variant_at``, ``hook_variant_reason``, ``check_precommit``, ``hook_text``;
* :mod:`~memlab.kinds.letta_memfs._constraints`: Letta Code 0.34.12's ``.memfs.config.json``
  (``CONSTRAINTS_CONFIG``, ``CONSTRAINTS_DEFAULTS``, ``parse_constraints_config``), its tree
  validator (``tree_errors``, ``validator_errors``), the v2 frontmatter check
  (``frontmatter_errors``, ``frontmatter_paths``) and the layout policy (``layout_policy``);
* :mod:`~memlab.formats._memfs_writers`: ``render_memfs_file``, ``render_memfs_v2_file``,
  ``yaml_text``, ``quoted_line``; Letta Code 0.34.12's own v2 file (``renderInitialMemoryFile``):
  ``render_initial_memory_file``, ``initial_description``, ``frontmatter_value``;
* :mod:`~memlab.formats._memfs_paths` also holds that release's block-to-file mapping
  (``root_memory_block_path``, ``memory_name_from_path``).
"""

from __future__ import annotations

from memlab.formats._memfs_authors import (
    AUTHOR_KINDS,
    BRANCH_ROLES,
    HARNESS_EMAIL,
    HARNESS_LABELS,
    HARNESS_MERGES,
    MIGRATION_EMAIL,
    MIGRATION_NAME,
    REVIEW_EMAIL,
    REVIEW_NAME,
    branch_role,
    classify_author,
)
from memlab.formats._memfs_frontmatter import (
    DEFAULT_LIMIT,
    ClientReading,
    Frontmatter,
    ServerReading,
    agent_view,
    body_as_letta_code,
    read_as_client,
    read_as_server,
    read_frontmatter,
    split_frontmatter,
    strict_yaml,
)
from memlab.formats._memfs_paths import (
    CONFIG_PATH,
    JS_TRIM,
    ROOT_INDEX,
    SKILL_FILE,
    is_flat_skill_path,
    is_git_name,
    is_validated_path,
    label_for_path,
    label_from_relative_path,
    memory_name_from_path,
    path_for_label,
    root_memory_block_path,
    root_memory_path_from_legacy_label,
    safe_relative_path,
    strip_memory_prefix,
)
from memlab.formats._memfs_writers import (
    frontmatter_value,
    initial_description,
    quoted_line,
    render_initial_memory_file,
    render_memfs_file,
    render_memfs_v2_file,
    yaml_text,
)
from memlab.kinds.letta_memfs._constraints import (
    CONSTRAINTS_CONFIG,
    CONSTRAINTS_DEFAULTS,
    CONSTRAINTS_VALIDATOR,
    CORE_MEMORY_PATH,
    LAYOUT_POLICIES,
    LAYOUT_POLICY_FILE,
    Finding,
    TreeFile,
    code_points,
    frontmatter_errors,
    frontmatter_paths,
    frontmatter_rule,
    layout_policy,
    parse_constraints_config,
    tree_errors,
    validator_errors,
)
from memlab.kinds.letta_memfs._hook import (
    AGENT_EDITABLE_KEYS,
    ALLOWED_KEYS,
    HOOK_INSTALLED,
    HOOK_LIMIT_TOLERATED,
    HOOK_VARIANTS,
    LETTA_HOOK_MARKER,
    PROTECTED_KEYS,
    V2_KEYS,
    Violation,
    check_precommit,
    hook_text,
    hook_variant_at,
    hook_variant_reason,
)

__all__ = [
    "ALLOWED_KEYS",
    "AGENT_EDITABLE_KEYS",
    "PROTECTED_KEYS",
    "V2_KEYS",
    "AUTHOR_KINDS",
    "BRANCH_ROLES",
    "HARNESS_EMAIL",
    "HARNESS_LABELS",
    "HARNESS_MERGES",
    "branch_role",
    "HOOK_VARIANTS",
    "HOOK_INSTALLED",
    "HOOK_LIMIT_TOLERATED",
    "DEFAULT_LIMIT",
    "CONFIG_PATH",
    "ROOT_INDEX",
    "SKILL_FILE",
    "Frontmatter",
    "ClientReading",
    "ServerReading",
    "Violation",
    "MIGRATION_NAME",
    "MIGRATION_EMAIL",
    "REVIEW_NAME",
    "REVIEW_EMAIL",
    "LETTA_HOOK_MARKER",
    "read_frontmatter",
    "body_as_letta_code",
    "agent_view",
    "JS_TRIM",
    "read_as_client",
    "read_as_server",
    "strict_yaml",
    "split_frontmatter",
    "label_from_relative_path",
    "label_for_path",
    "path_for_label",
    "safe_relative_path",
    "is_git_name",
    "strip_memory_prefix",
    "is_validated_path",
    "is_flat_skill_path",
    "root_memory_path_from_legacy_label",
    "classify_author",
    "hook_variant_at",
    "hook_variant_reason",
    "check_precommit",
    "hook_text",
    "render_memfs_file",
    "render_memfs_v2_file",
    "quoted_line",
    "yaml_text",
    "frontmatter_value",
    "initial_description",
    "render_initial_memory_file",
    "root_memory_block_path",
    "memory_name_from_path",
    "CONSTRAINTS_CONFIG",
    "CONSTRAINTS_DEFAULTS",
    "CONSTRAINTS_VALIDATOR",
    "CORE_MEMORY_PATH",
    "LAYOUT_POLICIES",
    "LAYOUT_POLICY_FILE",
    "Finding",
    "TreeFile",
    "code_points",
    "frontmatter_errors",
    "frontmatter_rule",
    "frontmatter_paths",
    "layout_policy",
    "parse_constraints_config",
    "tree_errors",
    "validator_errors",
]
