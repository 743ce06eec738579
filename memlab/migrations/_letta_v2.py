"""Migrations to Letta Code memfs v2 (root-marker), the layout Letta Code 0.34.12 creates.

Sources in the 0.34.12 bundle (``letta_code/_payload/app/letta.js``):
``src/backend/local/initial-memory.ts`` (``initialMemoryFilesFromCreateBody``,
``renderInitialMemoryFile``, ``rootMemoryBlockPath``, ``memoryNameFromPath``), the validators in
``dist/memory-constraints.js`` (``validateMemoryTreeConstraints``, ``parseMemoryConstraintsConfig``,
``validateMemoryFileFrontmatter``) and the hook's ``MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT``.

What a v2 repository holds, and why:

* **Files.** A block labelled ``MEMORY`` is the root ``MEMORY.md`` (its value is the whole
  file); every other block is the root file ``rootMemoryBlockPath(label)`` (``system/`` stripped,
  ``/`` → ``_``, ``.md`` added), with frontmatter ``name`` (``memoryNameFromPath``) and
  ``description`` (newlines made spaces, fallback ``Memory block {label}``), written unquoted and
  joined to the value by one newline, byte for byte what ``renderInitialMemoryFile`` writes. A
  value is quoted only where Letta's own reader would get another value back (``|``, ``""``:
  :func:`memlab.formats.letta_memfs.frontmatter_value`); that is flagged. memlab sanitises a
  hostile label first (:func:`memlab.migrations._letta.sanitise_label`).
  Blocks attached to no agent go to ``detached/`` and elfmem's non-core files keep their folders;
  every folder gets a ``MEMORY.md`` index (v2 requires one), so they are projected, not core.
* **Collisions.** Letta refuses two blocks whose files differ only in case (``Initial memory
  path collision``); ``system/human`` and ``human``, or ``a/b`` and ``a_b``, map to one file.
  memlab keeps the first (in label order) and gives the next ``-2``, ``-3``… before ``.md``,
  case-insensitively, each with a ``path_collision`` flag.
* **Read-only blocks** are listed, by exact path, in ``.memfs.config.json`` ``readOnlyFiles``
  (v2 rejects ``read_only`` in frontmatter). The list is added by its own commit after the files
  exist, so no commit creates a file the config already protects.
* **Limits.** Letta counts Unicode code points of the *whole file*, frontmatter included; a
  block's ``limit`` counts its value. memlab writes, per block with a limit, an exact-path
  ``fileCharacterLimits`` entry of ``limit`` plus the code points of that file's frontmatter as
  written, so the value keeps exactly its budget. Where that cannot hold, a flag says so and the
  entry is what the file needs: a value already over its limit (``limit_not_carried``: the entry
  is the file's size), a block without a limit whose file is over Letta's 20,000 default
  (``file_limit_added``). All root files together are core memory, 65,536 code points by
  default: memlab never raises that silently; when the migrated core is larger,
  ``maxCoreMemoryCharacters`` is set to its size with a ``core_total_raised`` warning, and when
  the blocks' limits add up past the core total, ``core_limits_exceed_total`` says they cannot
  all be filled. A path holding ``*`` or ``?`` (glob characters in Letta's patterns) is written
  with ``?`` in their place, which matches it and any same-length name (``glob_inexact``).
* **Checked.** Every commit of the plan is run through memlab's port of Letta Code's validator
  (:func:`memlab.formats.letta_memfs.validator_errors`, as the hook would with human approval of
  the config) and the v2 frontmatter rule; a failure is a MigrationError (a memlab bug).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from memlab._escape import commit_line
from memlab._gitobj import Signature
from memlab.constants import (
    DEFAULT_MIGRATION_LAYOUT,
    MIGRATION_LAYOUTS,
    ROOT_MEMORY_LABEL,
    ROOT_MEMORY_TEXT,
)
from memlab.errors import MigrationError
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.migrations._plan import PlannedCommit, refuse_nul

__all__ = [
    "check_layout",
    "section",
    "section_of",
    "claim",
    "take_path",
    "file_name",
    "render",
    "description",
    "finish_repo",
    "budget_entry",
    "constraints",
    "protect_commit",
    "index_files",
    "config_bytes",
    "check",
    "quoted_flags",
    "glob_for",
    "v2_path_of_elfmem",
    "read_config",
    "unquoted",
    "protect_message",
]

INDEX = fmt.ROOT_INDEX
FOLDER_INDEX_NOTE = "Memory files memlab migrated into this folder (not core memory):"
_GLOB_CHARS = re.compile(r"[*?]")
# Controls (a tab aside) and the line breaks some reader honours: never inside a frontmatter line.
_BREAKS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def check_layout(layout: str | None, target: str) -> str:
    """``layout`` for ``target``, or MigrationError naming the choices."""
    if layout is None:
        return DEFAULT_MIGRATION_LAYOUT if target == "letta" else "v1"
    if layout not in MIGRATION_LAYOUTS:
        raise MigrationError(
            f"unknown memfs layout {layout!r}", hint=f"use one of {', '.join(MIGRATION_LAYOUTS)}"
        )
    if target != "letta" and layout != "v1":
        raise MigrationError(
            f"--layout {layout} is for Letta Code targets; a {target} migration has one layout",
            hint="leave --layout out",
        )
    return layout


def section(path: str, layout: str) -> str:
    """The ``moved`` table's section: a v1 path's first folder, v2's ``core`` or folder."""
    return section_of(path) if layout == "v2" else path.split("/", 1)[0]


def section_of(path: str) -> str:
    """The ``moved`` table's section of a v2 path: ``core`` for a root file, else its folder."""
    return "core" if "/" not in path else path.split("/", 1)[0]


def claim(label: str, original: Any, value: str, prefix: str, spec: Any) -> tuple[str, str]:
    """``(path, wanted)`` for a block in a v2 repository: Letta's file for the label under
    ``prefix`` (``detached/`` or nothing), or that with ``-2``, ``-3``… when a file or folder
    already holds it in any letter case. ``MEMORY`` (exactly, as Letta checks) is the root index
    unless its value opens with a ``---`` line, which ``MEMORY.md`` may not have."""
    root = original == ROOT_MEMORY_LABEL and not prefix and value.split("\n", 1)[0] != "---"
    wanted = INDEX if root else prefix + fmt.root_memory_block_path(label)
    folded = {p.casefold() for p in spec.taken} | {d.casefold() for d in spec.dirs}
    # Index names are the migration's own: a block other than MEMORY never takes one.
    reserved = set() if root else {f"{prefix}{INDEX}".casefold()}
    return take_path(wanted, spec, folded, lambda c: c.casefold() in reserved), wanted


def take_path(wanted: str, spec: Any, folded: set[str], refused: Callable[[str], bool]) -> str:
    """``wanted`` (a ``.md`` path), or it with ``-2``, ``-3``… until it is neither in ``folded``
    (case-folded paths already used) nor ``refused``; recorded in ``spec.taken`` with its
    folders in ``spec.dirs``."""
    stem = wanted[:-3]
    candidate, n = wanted, 1
    while candidate.casefold() in folded or refused(candidate):
        n += 1
        candidate = f"{stem}-{n}.md"
    spec.taken.add(candidate)
    for i in range(1, candidate.count("/") + 1):
        spec.dirs.add("/".join(candidate.split("/")[:i]))
    return candidate


def description(raw: Any, label: str) -> str:
    """Letta's description (:func:`memlab.formats.letta_memfs.initial_description`); when that
    still holds a character some reader breaks a line at (a lone CR, NEL, U+2028, a control),
    every run of whitespace and controls becomes one space instead."""
    desc = fmt.initial_description(raw if isinstance(raw, str) else None, label)
    if _BREAKS.search(desc):
        desc = " ".join(_BREAKS.sub(" ", desc).split()) or f"Memory block {label}"
    return desc


def file_name(path: str) -> str:
    """The ``name`` of the v2 file at ``path``: Letta's ``memoryNameFromPath`` of its file name,
    or ``Memory`` where that is empty (``_.md``), which the validator would refuse."""
    return fmt.memory_name_from_path(path.rsplit("/", 1)[-1]) or "Memory"


def render(f: Any) -> bytes:
    """The bytes of one v2 memory file (``MEMORY.md``: the value alone)."""
    refuse_nul(f.path, f.body, f.item)
    if f.path == INDEX:
        return f.body.encode("utf-8")
    name = file_name(f.path)
    return fmt.render_initial_memory_file(name, f.description, f.body).encode("utf-8")


def quoted_flags(files: list[Any]) -> list[dict]:
    """One flag per file whose name or description had to be quoted, whose name Letta would
    leave empty, or whose value Letta Code shows the agent otherwise than the source has it
    (beyond the surrounding whitespace Letta Code trims, which is not flagged)."""
    out = []
    for f in files:
        seen = fmt.agent_view(render(f).decode("utf-8"))
        if seen not in (f.body, f.body.strip(fmt.JS_TRIM)):
            out.append(
                {
                    "kind": "agent_view_differs",
                    "item": f.item,
                    "path": f.path,
                    "severity": "warning",
                    "message": "Letta Code shows the agent this value otherwise than the "
                    "source has it (parseFrontmatter reads CR LF and CR as LF, "
                    "drops a leading BOM and reads a leading '---' block as "
                    "frontmatter); the file keeps the source's bytes",
                }
            )
        if f.path == INDEX:
            continue
        name = file_name(f.path)
        if not fmt.memory_name_from_path(f.path.rsplit("/", 1)[-1]):
            out.append(
                {
                    "kind": "name_fallback",
                    "item": f.item,
                    "path": f.path,
                    "severity": "info",
                    "message": "Letta's name for this file is empty (memoryNameFromPath), "
                    "which its own validator refuses; written as 'Memory'",
                }
            )
        for key, value in (("name", name), ("description", f.description)):
            if fmt.frontmatter_value(value) != value:
                out.append(
                    {
                        "kind": f"{key}_quoted",
                        "item": f.item,
                        "path": f.path,
                        "severity": "info",
                        "message": f"{key} written JSON-quoted (unquoted, Letta Code would "
                        "read another value or none); Letta Code shows the quotes "
                        "literally",
                    }
                )
    return out


def v2_path_of_elfmem(path: str) -> str:
    """An elfmem file's v2 path: ``system/persona.md`` is core (``persona.md``); reference,
    inbox and archive files keep their folders, which get indexes."""
    return path[len("system/") :] if path.startswith("system/") else path


def unquoted(value: str | None) -> str | None:
    """A frontmatter value as written back to its text (JSON-quoted values unquoted)."""
    if value is None or not value.startswith('"'):
        return value
    try:
        out, _ = _json.loads(value)
    except (ValueError, RecursionError):  # not a JSON string: the text as written
        return value
    return out if isinstance(out, str) else value


def glob_for(path: str) -> tuple[str, bool]:
    """``(pattern, exact)``: Letta's glob for ``path`` (``*`` and ``?`` become ``?``)."""
    pattern = _GLOB_CHARS.sub("?", path)
    return pattern, pattern == path


def budget_entry(limit: int | None, overhead: int, biggest: int) -> tuple[int | None, str | None]:
    """``(maxCharacters or None, flag kind or None)`` for one file (see the module docstring):
    ``overhead`` is the code points of the file that are not its value, ``biggest`` the largest
    version of the file the plan commits."""
    if limit is not None:
        want = limit + overhead
        return (biggest, "limit_not_carried") if biggest > want else (want, None)
    if biggest > fmt.CONSTRAINTS_DEFAULTS["maxFileCharacters"]:
        return biggest, "file_limit_added"
    return None, None


def index_files(files: list[Any]) -> dict[str, bytes]:
    """The root ``MEMORY.md`` (Letta's default text unless a MEMORY block is the index) and a
    ``MEMORY.md`` for every folder, listing its files."""
    own = {f.path for f in files}
    out: dict[str, bytes] = {}
    if INDEX not in own:
        out[INDEX] = ROOT_MEMORY_TEXT.encode("utf-8")
    folders: dict[str, list[Any]] = {}
    for f in files:
        parts = f.path.split("/")
        for i in range(1, len(parts)):
            folders.setdefault("/".join(parts[:i]), [])
        if len(parts) > 1:
            folders["/".join(parts[:-1])].append(f)
    for folder, inside in sorted(folders.items()):
        subs = sorted(
            {p[len(folder) + 1 :].split("/", 1)[0] for p in folders if p.startswith(folder + "/")}
        )
        lines = [f"# {folder}", "", FOLDER_INDEX_NOTE, ""]
        lines += [
            f"- {f.path.rsplit('/', 1)[-1]}: {f.description}"
            for f in sorted(inside, key=lambda f: f.path)
        ]
        lines += [f"- {s}/ (see {s}/{INDEX})" for s in subs]
        out[f"{folder}/{INDEX}"] = ("\n".join(lines) + "\n").encode("utf-8")
    return out


def _cp(data: bytes) -> int:
    return len(data.decode("utf-8"))


def config_bytes(config: dict[str, Any]) -> bytes:
    # JSON.stringify(config, null, 2) + "\n", as Letta writes
    # DEFAULT_MEMORY_CONSTRAINTS_CONFIG_CONTENT.
    return (_json.dumps(config, indent=2) + "\n").encode("utf-8")


def read_config(text: str | None) -> dict[str, Any]:
    """A migrated repository's ``.memfs.config.json`` (``{}`` when absent or unreadable)."""
    if not text:
        return {}
    parsed, _ = fmt.parse_constraints_config(text)
    return dict(parsed or {})


def constraints(
    files: list[Any], body: list[PlannedCommit], indexes: dict[str, bytes], flags: list[dict]
) -> dict[str, Any]:
    """The ``.memfs.config.json`` for ``files`` (committed by ``body``, beside ``indexes``):
    limits per file, and the core total and depth only where the defaults would not hold, each
    flagged (see the module docstring). Without ``readOnlyFiles``."""
    versions: dict[str, list[bytes]] = {}
    for commit in body:
        for path, data in commit.files:
            versions.setdefault(path, []).append(data)
    config: dict[str, Any] = {"version": 1}
    entries: list[tuple[bool, str, int]] = []
    root_limits = 0
    for f in sorted(files, key=lambda f: f.path):
        seen = versions.get(f.path) or [render(f)]
        final = seen[-1]
        overhead = _cp(final) - len(f.body)
        want, why = budget_entry(f.limit, overhead, max(map(_cp, seen)))
        if why == "limit_not_carried":
            flags.append(
                {
                    "kind": why,
                    "item": f.item,
                    "path": f.path,
                    "severity": "warning",
                    "message": f"the value ({len(f.body)} characters) is over its limit of "
                    f"{f.limit}; the file's limit is its size, {want} code points",
                }
            )
        elif why == "file_limit_added":
            flags.append(
                {
                    "kind": why,
                    "item": f.item,
                    "path": f.path,
                    "severity": "warning",
                    "message": f"{want} code points, over Letta Code's default of "
                    f"{fmt.CONSTRAINTS_DEFAULTS['maxFileCharacters']} per file; "
                    "a fileCharacterLimits entry of its size keeps it valid",
                }
            )
        if want is None:
            continue
        pattern, exact = glob_for(f.path)
        if not exact:
            flags.append(
                {
                    "kind": "glob_inexact",
                    "item": f.item,
                    "path": f.path,
                    "severity": "info",
                    "message": f"Letta's globs cannot name {f.path!r} exactly; written as "
                    f"{pattern!r}, which also matches same-length names",
                }
            )
        entries.append((not exact, pattern, want))
        if "/" not in f.path:
            root_limits += want
    depth = max((f.path.count("/") for f in files), default=0)
    if depth > fmt.CONSTRAINTS_DEFAULTS["maxDepth"]:
        config["maxDepth"] = depth
        flags.append(
            {
                "kind": "depth_raised",
                "item": None,
                "path": None,
                "severity": "warning",
                "message": f"memory files {depth} folders deep, past Letta Code's maxDepth "
                f"of {fmt.CONSTRAINTS_DEFAULTS['maxDepth']}: maxDepth is set to "
                f"{depth} so the repository is valid",
            }
        )
    # Core memory: every root .md at every commit of the plan.
    flat = dict(indexes)
    core_max = sum(_cp(d) for p, d in indexes.items() if "/" not in p)
    for commit in body:
        flat.update(commit.files)
        core_max = max(
            core_max, sum(_cp(d) for p, d in flat.items() if "/" not in p and p.endswith(".md"))
        )
    core_limit = fmt.CONSTRAINTS_DEFAULTS["maxCoreMemoryCharacters"]
    if core_max > core_limit:
        config["maxCoreMemoryCharacters"] = core_max
        flags.append(
            {
                "kind": "core_total_raised",
                "item": None,
                "path": fmt.CORE_MEMORY_PATH,
                "severity": "warning",
                "message": f"the root files hold {core_max} code points, over Letta Code's "
                f"core memory total of {core_limit}: maxCoreMemoryCharacters is "
                f"set to {core_max} so the repository is valid; move detail into "
                "folders behind MEMORY.md indexes to bring it down",
            }
        )
        core_limit = core_max
    if root_limits > core_limit:
        flags.append(
            {
                "kind": "core_limits_exceed_total",
                "item": None,
                "path": fmt.CORE_MEMORY_PATH,
                "severity": "info",
                "message": f"the root blocks' limits add up to {root_limits} code points, "
                f"more than the core total of {core_limit}: they cannot all be "
                "filled to their limits",
            }
        )
    if entries:
        config["fileCharacterLimits"] = [
            {"pattern": p, "maxCharacters": n} for _, p, n in sorted(entries)
        ]
    return config


def protect_commit(
    files: list[Any],
    config: dict[str, Any],
    flags: list[dict],
    message: str,
    author: Signature | None,
) -> PlannedCommit | None:
    """The commit adding ``readOnlyFiles`` for the read-only ``files`` (None when none is)."""
    protected = sorted(glob_for(f.path)[0] for f in files if f.read_only)
    if not protected:
        return None
    for f in files:
        if f.read_only:
            flags.append(
                {
                    "kind": "read_only_by_migration",
                    "item": f.item,
                    "path": f.path,
                    "severity": "info",
                    "message": "listed in .memfs.config.json readOnlyFiles by the "
                    "migration (v2 has no read_only frontmatter); Letta "
                    "Code's hook now refuses any change to the file",
                }
            )
    return PlannedCommit(
        message,
        ((fmt.CONSTRAINTS_CONFIG, config_bytes({**config, "readOnlyFiles": protected})),),
        author=author,
    )


def finish_repo(
    files: list[Any],
    body: list[PlannedCommit],
    side: PlannedCommit,
    flags: list[dict],
    *,
    init_message: str,
    protect_message: Callable[[int], str],
    init_author: Signature | None = None,
) -> list[PlannedCommit]:
    """The commits of one v2 repository: init (``MEMORY.md``, folder indexes and the
    constraints config with its limits), ``body`` (the memory files), a commit adding
    ``readOnlyFiles`` when a block is read-only, and ``side``; checked with Letta's rules."""
    indexes = index_files(files)
    config = constraints(files, body, indexes, flags)
    init_files = {**indexes, fmt.CONSTRAINTS_CONFIG: config_bytes(config)}
    commits = [
        PlannedCommit(init_message, tuple(sorted(init_files.items())), author=init_author),
        *body,
    ]
    last = commits[-1].author
    protect = protect_commit(
        files,
        config,
        flags,
        protect_message(sum(f.read_only for f in files)),
        None
        if last is None
        else Signature(fmt.MIGRATION_NAME, fmt.MIGRATION_EMAIL, last.timestamp),
    )
    commits += [protect] if protect is not None else []
    commits.append(side)
    flags.extend(quoted_flags(files))
    check(commits)
    return commits


def protect_message(source_name: str, trailers: str = "") -> Callable[[int], str]:
    """The read-only commit's message (the source name is store text: one safe line)."""
    return lambda n: (
        f"chore: protect {n} read-only memory file(s)\n\nBlocks read_only in "
        f"{commit_line(source_name)}, listed in .memfs.config.json readOnlyFiles "
        "(memfs v2 has no read_only frontmatter)." + trailers
    )


def check(commits: list[PlannedCommit], base: dict[str, bytes] | None = None) -> None:
    """MigrationError when a commit would fail Letta Code's hook (with the config approved) or
    the final tree its ``--audit``: memlab's port of the 0.34.12 validator and frontmatter rule.
    ``base`` is the tree the commits go on top of (``{path: bytes}``), if any."""
    flat: dict[str, bytes] = dict(base or {})
    prev: list[Any] | None = (
        [fmt.TreeFile(p, "100644", d) for p, d in sorted(flat.items())] if base else None
    )
    prev_flat: dict[str, bytes] = dict(flat)
    for n, commit in enumerate(commits):
        flat = {p: d for p, d in flat.items() if p not in commit.removed}
        flat.update(commit.files)
        tree = [fmt.TreeFile(p, "100644", d) for p, d in sorted(flat.items())]
        errors: list[str] = []  # validator Findings (str) and frontmatter lines
        errors += fmt.validator_errors(
            tree,
            policy="root-marker",
            accepted=prev,
            audit=False,
            head_has_root=INDEX in prev_flat,
            config_approved=True,
        )
        for path in fmt.frontmatter_paths(flat, "root-marker"):
            old = prev_flat.get(path)
            errors += fmt.frontmatter_errors(
                path,
                flat[path].decode("utf-8"),
                None if old is None else old.decode("utf-8"),
                fmt="memfs-v2",
            )
        if errors:
            raise MigrationError(
                f"commit {n + 1} of the plan would fail Letta Code's validator: "
                + "; ".join(errors[:3]),
                hint="report this as a memlab bug",
            )
        prev, prev_flat = tree, flat
    final = fmt.validator_errors(prev or [], policy="root-marker", accepted=None, audit=True)
    if final:
        raise MigrationError(
            "the migrated tree would fail Letta Code's audit: " + "; ".join(final[:3]),
            hint="report this as a memlab bug",
        )
