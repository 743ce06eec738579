"""Letta Code 0.34.12's memory constraints, ported rule by rule: the tracked
``.memfs.config.json`` policy, the tree validator its pre-commit hook and ``--audit`` run, the
memfs v2 frontmatter check, and which layout policy a checkout is under.

Part of :mod:`memlab.formats.letta_memfs`, which re-exports the public names. Pure: text and
``(path, mode, bytes)`` lists in, error lines out; no git, no files.

Sources, all in the ``letta==0.34.12`` wheel (``letta_code/_payload/app/``): the TypeScript of
``dist/memory-constraints.js`` (its source map holds ``src/memory-constraints.ts`` and
``src/memory-frontmatter.ts``: :func:`parse_constraints_config` is
``parseMemoryConstraintsConfig``, :func:`tree_errors` is ``validateMemoryTreeConstraints``,
:func:`frontmatter_errors` is ``validateMemoryFileFrontmatter``), and in ``letta.js`` the
validator script ``MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT`` (``letta-memory-constraints.cjs``:
:func:`validator_errors` is its ``main()``), ``memoryLayoutPolicy`` (:func:`layout_policy`) and
``buildPreCommitHookScript`` (which files the v2 hook's frontmatter check reads:
:func:`frontmatter_paths`). Every message is the release's own wording, so a row can be
compared with what Letta Code prints, line for line.

JavaScript details kept: globs and the legacy path rule are matched on UTF-16 code units with
``.`` not crossing line terminators (a ``?`` is half of an emoji, as in Node); limits count
Unicode code points of the whole file, frontmatter included, after UTF-8 decoding with U+FFFD for
bad bytes; JSON numbers are JavaScript numbers (``3.0`` is the integer 3; ``1e400`` is
``Infinity``; ``true`` is not 1); unknown config keys are listed in ``Object.keys`` order.

This module is the public face (the config, the tree validator, the layout policy): import from
here. The rest lives in private siblings, imported one way (js <- glob; frontmatter alone):

* :mod:`~memlab.kinds.letta_memfs._constraints_js`: JavaScript's values (UTF-16 code units,
  ``.`` and the legacy path rule, safe integers, ``Object.keys`` order, ``code_points``);
* :mod:`~memlab.kinds.letta_memfs._constraints_glob`: the globs of ``fileCharacterLimits`` and
  ``readOnlyFiles``, matched without backtracking (``glob_rules``);
* :mod:`~memlab.kinds.letta_memfs._constraints_frontmatter`: ``frontmatter_errors``,
  ``frontmatter_paths``, ``frontmatter_rule``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from memlab.formats import _json
from memlab.formats._memfs_paths import JS_TRIM
from memlab.kinds.letta_memfs._constraints_frontmatter import (
    frontmatter_errors,
    frontmatter_paths,
    frontmatter_rule,
)
from memlab.kinds.letta_memfs._constraints_glob import glob_rules
from memlab.kinds.letta_memfs._constraints_js import (
    LEGACY_RE,
    code_points,
    js_number,
    object_keys,
    safe_integer,
    utf16,
)

__all__ = [
    "CONSTRAINTS_CONFIG",
    "CONSTRAINTS_DEFAULTS",
    "LAYOUT_POLICIES",
    "LAYOUT_POLICY_FILE",
    "CONSTRAINTS_VALIDATOR",
    "CORE_MEMORY_PATH",
    "TreeFile",
    "Finding",
    "parse_constraints_config",
    "tree_errors",
    "validator_errors",
    "frontmatter_errors",
    "frontmatter_paths",
    "layout_policy",
    "frontmatter_rule",
    "code_points",
]

#: The tracked policy file (``MEMORY_CONSTRAINTS_CONFIG_PATH``).
CONSTRAINTS_CONFIG = ".memfs.config.json"
#: ``DEFAULT_MEMORY_CONSTRAINTS_CONFIG``: what a ``root-marker`` checkout gets when the config
#: leaves a key out (``legacy-only`` uses a config exactly as written, and none without one).
CONSTRAINTS_DEFAULTS: Mapping[str, int] = {
    "version": 1,
    "maxDepth": 2,
    "maxFileCharacters": 20_000,
    "maxCoreMemoryCharacters": 65_536,
}
#: What ``.git/letta-memory-layout-policy`` may say (``installPreCommitHookWithPolicy``).
LAYOUT_POLICIES = ("legacy-only", "root-marker", "shared-memory")
LAYOUT_POLICY_FILE = "letta-memory-layout-policy"
#: The validator Letta Code installs beside its pre-commit hook.
CONSTRAINTS_VALIDATOR = "hooks/letta-memory-constraints.cjs"
#: The path the validator's tree-wide error (the core-memory total) is reported under.
CORE_MEMORY_PATH = "core memory"

_KEYS = (
    "version",
    "maxDepth",
    "maxFileCharacters",
    "maxCoreMemoryCharacters",
    "fileCharacterLimits",
    "readOnlyFiles",
)


@dataclass(frozen=True)
class TreeFile:
    """One entry of a tree (``git ls-files --stage`` / ``ls-tree -r``): path, mode, bytes.

    ``data`` is None when the bytes were not read (a file over memlab's read cap); ``chars``
    then gives its code-point count if known. ``sha`` (the blob id), when both sides of a
    read-only comparison have one, decides "changed" without the bytes."""

    path: str
    mode: str
    data: bytes | None = None
    chars: int | None = None
    sha: str | None = None


# --------------------------------------------------------------------------- the config


def _pattern_errors(pattern: Any, label: str) -> list[str]:
    if (
        not isinstance(pattern, str)
        or not pattern
        or pattern.startswith("/")
        or "\\" in pattern
        or ".." in pattern.split("/")
    ):
        return [f"{label}: pattern must be a non-empty repo-relative glob using '/'"]
    if any("**" in segment and segment != "**" for segment in pattern.split("/")):
        return [f"{label}: '**' must be a complete path segment"]
    return []


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_constraints_config(text: str) -> tuple[dict[str, Any] | None, list[str]]:
    """``parseMemoryConstraintsConfig``: ``(config, [])`` or ``(None, error lines)``.

    The config comes back as written (no defaults filled in, numbers as JavaScript reads them).
    An invalid JSON document gives one ``invalid JSON (...)`` line whose parenthesis is Python's
    parser message, not V8's; every other line is word for word the release's.
    """
    path = CONSTRAINTS_CONFIG
    try:
        value, _ = _json.loads(text, reader="Letta Code", parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        return None, [f"{path}: invalid JSON ({_json.clean_text(str(exc))})"]
    if not isinstance(value, dict):
        return None, [f"{path}: expected a JSON object"]
    errors: list[str] = []
    for key in object_keys(value):
        if key not in _KEYS:
            errors.append(f"{path}: unknown field '{_json.clean_text(key)}'")
    version = value.get("version")
    if not (safe_integer(version) and version == 1):
        errors.append(f"{path}: version must be 1")
    if "maxDepth" in value and not (safe_integer(value["maxDepth"]) and value["maxDepth"] >= 0):
        errors.append(f"{path}: maxDepth must be a non-negative integer")
    for key in ("maxFileCharacters", "maxCoreMemoryCharacters"):
        if key in value and not (safe_integer(value[key]) and value[key] > 0):
            errors.append(f"{path}: {key} must be a positive integer")
    overrides = value.get("fileCharacterLimits")
    if "readOnlyFiles" in value:
        if not isinstance(value["readOnlyFiles"], list):
            errors.append(f"{path}: readOnlyFiles must be an array")
        else:
            for i, pattern in enumerate(value["readOnlyFiles"]):
                errors += _pattern_errors(pattern, f"{path}: readOnlyFiles[{i}]")
    if "fileCharacterLimits" in value and not isinstance(overrides, list):
        errors.append(f"{path}: fileCharacterLimits must be an array")
    if isinstance(overrides, list):
        for i, item in enumerate(overrides):
            label = f"{path}: fileCharacterLimits[{i}]"
            if not isinstance(item, dict):
                errors.append(f"{label} must be an object")
                continue
            for key in object_keys(item):
                if key not in ("pattern", "maxCharacters"):
                    errors.append(f"{label}: unknown field '{_json.clean_text(key)}'")
            errors += _pattern_errors(item.get("pattern"), label)
            limit = item.get("maxCharacters")
            if not ("maxCharacters" in item and limit is None) and not (
                safe_integer(limit) and limit > 0
            ):
                errors.append(f"{label}: maxCharacters must be a positive integer or null")
    if errors:
        return None, errors
    config = {k: js_number(v) for k, v in value.items()}
    if isinstance(overrides, list):
        config["fileCharacterLimits"] = [
            {**o, "maxCharacters": js_number(o.get("maxCharacters"))} for o in overrides
        ]
    return config, []


_PARSED: dict[tuple[str | None, bytes | None], tuple[dict[str, Any] | None, list[str]]] = {}
_PARSED_KEEP = 16


def _parsed_config(sha: str | None, data: bytes) -> tuple[dict[str, Any] | None, list[str]]:
    """:func:`parse_constraints_config` of a config blob, parsed once per blob id (or per bytes
    when there is no id): an audit validates every commit under the same config, and 10,000
    patterns parsed (and compiled) per commit made it 9x slower. The result is shared: callers
    must not change it."""
    key = (sha, None) if sha else (None, data)
    got = _PARSED.get(key)
    if got is None:
        if len(_PARSED) >= _PARSED_KEEP:
            _PARSED.pop(next(iter(_PARSED)))
        got = _PARSED[key] = parse_constraints_config(data.decode("utf-8", "replace"))
    return got


def _count(file: TreeFile) -> int | None:
    if file.chars is not None:
        return file.chars
    return None if file.data is None else code_points(file.data)


class Finding(str):
    """One validator line, word for word the release's (it is a ``str`` and compares as one),
    carrying the ``path`` it is about and its ``rule`` name, so no caller parses the wording."""

    path: str
    rule: str

    def __new__(cls, line: str, path: str, rule: str) -> "Finding":
        self = super().__new__(cls, line)
        self.path, self.rule = path, rule
        return self


def tree_errors(
    files: Sequence[TreeFile],
    *,
    config: Mapping[str, Any],
    layout: str,
    require_root_marker: bool,
    accepted: Sequence[TreeFile] | None = None,
    uncounted: list[str] | None = None,
) -> list[Finding]:
    """``validateMemoryTreeConstraints`` over a whole tree: error lines, in the release's order.

    ``accepted`` is the trusted tree before the change (the parent commit); it is needed only
    when the config has ``readOnlyFiles`` (a :class:`ValueError` otherwise, as in Node). A file
    whose characters are unknown (``data`` and ``chars`` None) cannot be judged against a
    limit: its path is appended to ``uncounted`` and it adds nothing to the core total.
    """
    errors: list[Finding] = []
    md = [f for f in files if f.path.endswith(".md")]
    paths = {f.path for f in md}
    v2 = layout == "root-marker" and (require_root_marker or "MEMORY.md" in paths)
    if v2 and "MEMORY.md" not in paths:
        errors.append(
            Finding(
                "MEMORY.md: root memory index is required for MemFS v2",
                "MEMORY.md",
                "root_index_required",
            )
        )
    memory = [
        f
        for f in md
        if not f.path.startswith("skills/")
        and (v2 or layout == "shared-memory" or LEGACY_RE.match(utf16(f.path)))
    ]
    if v2:
        for f in memory:
            current = ""
            for folder in f.path.split("/")[:-1]:
                current = f"{current}/{folder}" if current else folder
                if f"{current}/MEMORY.md" not in paths:
                    errors.append(
                        Finding(
                            f"{f.path}: missing required index {current}/MEMORY.md",
                            f.path,
                            "missing_index",
                        )
                    )
                    break
    limits = list(config.get("fileCharacterLimits") or [])
    protected = tuple(config.get("readOnlyFiles") or [])
    rules = glob_rules(tuple(o["pattern"] for o in limits), protected)
    if protected:
        if accepted is None:
            raise ValueError("readOnlyFiles requires the accepted memory tree")
        before = {f.path: f for f in accepted}
        after = {f.path: f for f in files}
        for path in dict.fromkeys([*before, *after]):
            if not rules.is_protected(path):
                continue
            old, new = before.get(path), after.get(path)
            changed = (old is None) != (new is None) or (
                old is not None
                and new is not None
                and (
                    old.mode != new.mode
                    or (old.sha != new.sha if old.sha and new.sha else old.data != new.data)
                )
            )
            if changed:
                errors.append(
                    Finding(
                        f"{path}: read-only file cannot be created, changed or removed",
                        path,
                        "read_only_file",
                    )
                )
    core = 0
    max_depth = config.get("maxDepth")
    max_core = config.get("maxCoreMemoryCharacters")
    for f in memory:
        if not f.mode.startswith("100"):
            errors.append(
                Finding(
                    f"{f.path}: memory Markdown must be a regular file", f.path, "not_regular_file"
                )
            )
            continue
        depth = f.path.count("/")
        if max_depth is not None and depth > max_depth:
            errors.append(
                Finding(
                    f"{f.path}: depth {depth} exceeds maxDepth {max_depth}", f.path, "max_depth"
                )
            )
        found = rules.override(f.path)
        override = None if found is None else limits[found]
        limit = override.get("maxCharacters") if override else config.get("maxFileCharacters")
        source = f"glob '{override['pattern']}'" if override else "maxFileCharacters"
        count_core = layout == "root-marker" and "/" not in f.path and max_core is not None
        if limit is None and not count_core:
            continue
        chars = _count(f)
        if chars is None:
            if uncounted is not None:
                uncounted.append(f.path)
            continue
        if count_core:
            core += chars
        if limit is not None and chars > limit:
            errors.append(
                Finding(
                    f"{f.path}: {chars} characters exceeds {limit} from {source}",
                    f.path,
                    "glob_characters" if override else "file_characters",
                )
            )
    if layout == "root-marker" and max_core is not None and core > max_core:
        errors.append(
            Finding(
                f"{CORE_MEMORY_PATH}: {core} characters exceeds {max_core} from "
                "maxCoreMemoryCharacters",
                CORE_MEMORY_PATH,
                "core_characters",
            )
        )
    return errors


def validator_errors(
    files: Sequence[TreeFile],
    *,
    policy: str,
    accepted: Sequence[TreeFile] | None,
    audit: bool = True,
    head_has_root: bool | None = None,
    config_approved: bool = False,
    uncounted: list[str] | None = None,
) -> list[Finding]:
    """What ``letta-memory-constraints.cjs`` prints for a tree (its ``main()``), one
    :class:`Finding` a line.

    ``audit=True`` is ``--audit`` over HEAD (``validateMemoryConstraintsHead``: the tree is
    HEAD and ``accepted`` is HEAD too). ``audit=False`` is the hook over a commit: ``files`` the
    commit's tree, ``accepted`` its parent's (None for a root commit), ``head_has_root`` whether
    the parent has a root ``MEMORY.md``; ``config_approved`` is
    ``LETTA_MEMORY_CONSTRAINTS_UPDATE=1``, without which a changed config is an error.
    """
    errors: list[Finding] = []
    if audit and accepted is None:
        accepted = files
    by_path = {f.path: f for f in files}
    old = {f.path: f for f in accepted or []}
    if not audit and not config_approved:
        a, b = by_path.get(CONSTRAINTS_CONFIG), old.get(CONSTRAINTS_CONFIG)
        if (a is None) != (b is None) or (
            a
            and b
            and (a.mode != b.mode or (a.sha != b.sha if a.sha and b.sha else a.data != b.data))
        ):
            errors.append(
                Finding(
                    f"{CONSTRAINTS_CONFIG} is protected and requires human approval to change",
                    CONSTRAINTS_CONFIG,
                    "config_changed",
                )
            )
    has_config = CONSTRAINTS_CONFIG in by_path
    parent_root = bool(head_has_root) if head_has_root is not None else "MEMORY.md" in old
    has_v2_root = policy == "root-marker" and (audit or "MEMORY.md" in by_path or parent_root)
    if not has_config and not has_v2_root:
        return errors
    config: Mapping[str, Any] = CONSTRAINTS_DEFAULTS
    if has_config:
        entry = by_path[CONSTRAINTS_CONFIG]
        if not entry.mode.startswith("100"):
            return [
                *errors,
                Finding(
                    f"{CONSTRAINTS_CONFIG}: constraint config must be a regular file",
                    CONSTRAINTS_CONFIG,
                    "config_not_regular",
                ),
            ]
        if entry.data is None:
            # Not read (over memlab's read cap): say so, and run what does not depend on the
            # config (the indexes, regular files) rather than calling its JSON invalid.
            from memlab.constants import MAX_FILE_BYTES

            errors.append(
                Finding(
                    f"{CONSTRAINTS_CONFIG}: not read: over {MAX_FILE_BYTES:,} bytes",
                    CONSTRAINTS_CONFIG,
                    "config_not_read",
                )
            )
            return [
                *errors,
                *tree_errors(
                    files,
                    config={},
                    layout=policy,
                    require_root_marker=audit or parent_root,
                    accepted=accepted if accepted is not None else [],
                    uncounted=uncounted,
                ),
            ]
        parsed, problems = _parsed_config(entry.sha, entry.data)
        if parsed is None or errors:
            return [*errors, *(Finding(p, CONSTRAINTS_CONFIG, "config_invalid") for p in problems)]
        config = {**CONSTRAINTS_DEFAULTS, **parsed} if policy == "root-marker" else parsed
    return [
        *errors,
        *tree_errors(
            files,
            config=config,
            layout=policy,
            require_root_marker=audit or parent_root,
            accepted=accepted if accepted is not None else [],
            uncounted=uncounted,
        ),
    ]


# --------------------------------------------------------------------------- the layout policy


def layout_policy(
    policy_file: str | None, *, memory_md_ever: bool, head_has_root: bool
) -> tuple[str, str]:
    """``memoryLayoutPolicy``: the policy ``--audit`` runs under, and why.

    ``policy_file`` is the text of ``.git/letta-memory-layout-policy`` (None: absent);
    ``memory_md_ever`` whether any commit reachable from HEAD touched ``MEMORY.md``;
    ``head_has_root`` whether HEAD has one.
    """
    word = (policy_file or "").strip(JS_TRIM)
    if policy_file is not None and word in ("legacy-only", "shared-memory"):
        return word, f".git/{LAYOUT_POLICY_FILE} says {word}"
    if policy_file is not None and word == "root-marker":
        if memory_md_ever:
            return word, f".git/{LAYOUT_POLICY_FILE} says root-marker and MEMORY.md is in history"
        return "legacy-only", (
            f".git/{LAYOUT_POLICY_FILE} says root-marker, but no commit has "
            "MEMORY.md yet, so Letta Code validates as legacy-only"
        )
    why = (
        "no policy file"
        if policy_file is None
        else f".git/{LAYOUT_POLICY_FILE} holds {word[:40]!r}, not a policy Letta Code knows"
    )
    if head_has_root:
        return "root-marker", f"{why}; HEAD has a root MEMORY.md"
    return "legacy-only", f"{why}; HEAD has no root MEMORY.md"
