"""elfmem's markdown substrate: block files under ``.elfmem/memory/`` and the JSONL ledger.

Reader and writer are one module's names so a round trip cannot drift: the migration exporter
writes with :func:`format_blockfile` and the loader reads with :func:`parse_blockfile`, the
parser the writer checks its own text with.

The reading rules follow ``elfmem.memory.blockfile`` in elfmem 0.20.0 exactly (the tests run a
differential check against it). One block is::

    ## <title>
    <!-- id: <id>  cls: <cls>  tags: [a, b]  pinned: true|false  created: <ISO>  <key>: <value> -->
    cue:: <text>
    supports:: [[<id>]], [[<id>]]
    <any-relation>:: [[<id>]]

    <body>

Where memlab differs from elfmem, it is only in what it reports, never in what it reads:

- elfmem raises on a duplicate ``id`` in one file and loses the whole file; memlab keeps every
  block and adds a ``duplicate_id`` problem.
- Silent losses in elfmem's reading (text before the first heading, comment text that is not a
  ``key: value`` pair, prose after a relation's links, ``##`` headings absorbed into the previous
  block) become problem rows.
- elfmem records a relation outside its vocabulary only by name; memlab keeps its targets too.
  The writer emits such relations as ``<rel>:: [[id]]`` lines, which elfmem's parser accepts
  without error (it lists them in ``unknown_relations``), so no edge is lost on the way.

Ledger lines (``.elfmem/ledger/YYYY-MM.jsonl``) are ``{"t", "s", "ah", "k", ...payload}``, one JSON
object per line, each under 4000 bytes so that one ``write(2)`` stays atomic.

This module is the public face: import from here. The code lives in private siblings, imported
one way (model <- read <- write; model <- ledger):

* :mod:`~memlab.formats._blockfile_model`: the vocabulary (``LINK_RELATIONS``,
  ``SYSTEM_RELATIONS``, ``ALL_RELATIONS``, ``KNOWN_FIELDS``), ``Block``, ``content_id``, and the
  layout (``SECTIONS``, ``INDEXED_SECTIONS``, ``MEMORY_DIR``, ``LEDGER_DIR``, ``SELF_FILE``);
* :mod:`~memlab.formats._blockfile_read`: ``parse_blockfile`` and its linear-time scanners;
* :mod:`~memlab.formats._blockfile_write`: ``format_block``, ``format_blockfile`` (each checked
  by reading it back), ``substrate_path``;
* :mod:`~memlab.formats._blockfile_ledger`: ``MAX_LEDGER_LINE_BYTES``,
  ``LEDGER_REQUIRED_FIELDS``, ``parse_ledger``, ``format_ledger_line``, ``format_ledger``,
  ``fit_ledger_event``, ``ledger_path``.
"""

from __future__ import annotations

from memlab.formats._blockfile_ledger import (
    LEDGER_REQUIRED_FIELDS,
    MAX_LEDGER_LINE_BYTES,
    fit_ledger_event,
    format_ledger,
    format_ledger_line,
    ledger_path,
    parse_ledger,
)
from memlab.formats._blockfile_model import (
    ALL_RELATIONS,
    INDEXED_SECTIONS,
    KNOWN_FIELDS,
    LEDGER_DIR,
    LINK_RELATIONS,
    MEMORY_DIR,
    SECTIONS,
    SELF_FILE,
    SYSTEM_RELATIONS,
    Block,
    content_id,
)
from memlab.formats._blockfile_read import parse_blockfile
from memlab.formats._blockfile_write import format_block, format_blockfile, substrate_path

__all__ = [
    "Block",
    "LINK_RELATIONS",
    "SYSTEM_RELATIONS",
    "ALL_RELATIONS",
    "KNOWN_FIELDS",
    "SECTIONS",
    "INDEXED_SECTIONS",
    "MEMORY_DIR",
    "LEDGER_DIR",
    "SELF_FILE",
    "MAX_LEDGER_LINE_BYTES",
    "LEDGER_REQUIRED_FIELDS",
    "parse_blockfile",
    "format_block",
    "format_blockfile",
    "content_id",
    "substrate_path",
    "parse_ledger",
    "format_ledger_line",
    "format_ledger",
    "fit_ledger_event",
    "ledger_path",
]
