"""What ``memlab discover`` lists for a folder of the markdown-in-git family (``letta_memfs``,
``souveraine``, ``elfmem_substrate``): its layout as the loader names it, and the row of such a
folder met on a walk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlab._escape import terminal_line
from memlab.errors import MemlabError, UnrecognizedStore
from memlab.kinds._memfs._locate import locate, reads_a_prompt
from memlab.sources._discover_rows import row

__all__ = ["memfs_layout", "walked_row"]


def memfs_layout(memory: Path, *, walked: bool = False) -> tuple[str | None, str | None]:
    """(the layout ``memlab.load`` gives this folder, None) from the loader's own detection
    (:func:`memlab.kinds._memfs._locate.locate`: HEAD's tree, or the files of a repository
    with no commits yet, and the evidence that Letta made it), or (None, why) when the loader
    would refuse the folder. ``walked``: a folder a walk met rather than one at a place where
    memory lives; then the loader's :class:`~memlab.errors.UnrecognizedStore` (a git repository
    whose HEAD has no ``system/``, ``MEMORY.md``, ``skills/`` or ``.letta/config.json``: a code
    project) is raised, for it is no store, not a store with a problem; so is one the loader
    reads as ``generic_markdown`` whose tree has no root ``MEMORY.md`` and no ``system/``
    (:func:`~memlab.kinds._memfs._locate.reads_a_prompt`: a docs or skills repository)."""
    try:
        source = locate(memory)
        if walked and source.layout == "generic_markdown" and not reads_a_prompt(source):
            raise UnrecognizedStore(
                "no sign that Letta made it and nothing an agent's prompt reads (no "
                "MEMORY.md or system/): a folder of markdown, not memory",
                path=memory,
            )
        return source.layout, None
    except MemlabError as exc:
        if walked and isinstance(exc, UnrecognizedStore):
            raise
        return None, f"memlab cannot load it: {terminal_line(exc.message, 200)}"


def walked_row(kind: str, folder: Path, *, named_by_id: bool = False) -> dict[str, Any]:
    """The inventory row of ``folder``, a store of ``kind`` that a walk of a folder the user
    named met: its layout as the loader names it (:func:`memfs_layout`, or why none). Raises
    :class:`~memlab.errors.UnrecognizedStore` for a folder the loader takes for no memory at
    all: discover lists nothing there."""
    layout, note = memfs_layout(folder, walked=True)
    return row(
        folder.name, kind, layout, folder, repos=[folder], note=note, named_by_id=named_by_id
    )
