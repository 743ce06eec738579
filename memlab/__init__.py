"""memlab: a research workbench for agent memory.

Load elfmem databases, elfmem markdown substrates, Letta Code memfs repos, Souveraine agent dirs
and Letta Agent Files into typed pandas frames, read-only; audit them; simulate architectures;
propose reviews; migrate between forms.

    >>> import memlab
    >>> store = memlab.load("data/demo/elfmem-demo.db")
    >>> print(memlab.audit(store, as_of="2026-08-04").summary())

Everything imports lazily (PEP 562), so ``import memlab`` costs milliseconds and
a command imports only what it uses.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# name -> module that defines it; resolved on first use (PEP 562), so ``memlab --help`` or a
# command that needs only the loaders does not import pandas, review, migrate or the simulation.
# The verbs live in subpackages named differently from them (audits/, reviews/, migrations/),
# so importing a submodule never rebinds a verb.
_LAZY = {
    "Store": "memlab.store",
    "load": "memlab.sources",
    "load_elfmem": "memlab.kinds.elfmem_db._load",
    "load_memfs": "memlab.kinds._memfs._load",
    "load_agent_file": "memlab.kinds.agent_file._load",
    "load_letta_server": "memlab.kinds.letta_server._load",
    "discover": "memlab.sources.discover",
    "audit": "memlab.audits",
    "compare": "memlab.audits",
    "review": "memlab.reviews",
    "apply_proposal": "memlab.reviews",
    "migrate": "memlab.migrations",
    "verify": "memlab.migrations",
    "simulate": "memlab.sim",
    "fleet": "memlab.lake",
    "export_parquet": "memlab.lake",
    "read_lake": "memlab.lake",
}

#: The verbs (``load`` and the per-format loaders it picks from, ``audit``, ...) and Store.
#: Exceptions are in :mod:`memlab.errors`; result types (``memlab.audits.Audit``,
#: ``memlab.reviews.Proposal``) and the kind registry (:mod:`memlab.kinds`) in their modules.
__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
