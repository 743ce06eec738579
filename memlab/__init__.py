"""memlab: a research workbench for agent memory.

Load elfmem databases, elfmem markdown substrates, Letta Code memfs repos, Souveraine agent dirs
and Letta Agent Files into typed pandas frames, read-only; audit them; simulate architectures;
propose reviews; migrate between forms.

    >>> import memlab
    >>> store = memlab.load("data/demo/elfmem-demo.db")
    >>> print(memlab.audit(store, as_of="2026-08-04").summary())

Heavy parts (embeddings, papermill) import lazily, so ``import memlab`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from memlab.errors import (
    CorruptStore,
    MemlabError,
    MigrationError,
    MissingExtra,
    OutputExists,
    ParityError,
    ProposalError,
    ProposalRejected,
    RepoError,
    ReportError,
    SourceError,
    StaleProposal,
    StoreNotFound,
    UnrecognizedStore,
    UnsafePath,
    UnsupportedSchema,
)
from memlab.store import Store

# Imported eagerly (they are light: no torch, no faiss until used) so that memlab.audit,
# memlab.review and memlab.migrate name the functions, not the same-named subpackages that the
# import system binds on the package the first time a submodule is imported.
from memlab.audit import Audit, audit, compare  # noqa: E402
from memlab.migrate import migrate, verify  # noqa: E402
from memlab.review import Proposal, apply_proposal, review  # noqa: E402

__version__ = "0.1.0"

# name -> module that defines it; resolved on first use (PEP 562).
_LAZY = {
    "load": "memlab.sources",
    "load_elfmem": "memlab.sources.elfmem_db",
    "load_memfs": "memlab.sources.memfs",
    "load_agent_file": "memlab.sources.agent_file",
    "discover": "memlab.sources.discover",
    "simulate": "memlab.sim",
}

__all__ = [
    "__version__",
    "Store",
    "audit",
    "compare",
    "Audit",
    "review",
    "Proposal",
    "apply_proposal",
    "migrate",
    "verify",
    *_LAZY,
    # errors
    "MemlabError",
    "SourceError",
    "StoreNotFound",
    "UnrecognizedStore",
    "CorruptStore",
    "UnsupportedSchema",
    "RepoError",
    "UnsafePath",
    "OutputExists",
    "MigrationError",
    "ParityError",
    "ProposalError",
    "StaleProposal",
    "ProposalRejected",
    "ReportError",
    "MissingExtra",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
