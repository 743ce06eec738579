"""memlab: a research workbench for agent memory.

Load elfmem databases, elfmem markdown substrates, Letta Code memfs repos, Souveraine agent dirs
and Letta Agent Files into typed pandas frames, read-only; audit them; simulate architectures;
propose reviews; migrate between forms.

    >>> import memlab
    >>> store = memlab.load("data/demo/elfmem-demo.db")
    >>> print(memlab.audit(store, as_of="2026-08-04").summary())

Everything but the errors imports lazily (PEP 562), so ``import memlab`` costs milliseconds and
a command imports only what it uses.
"""

from __future__ import annotations

import importlib
import sys
import types
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

__version__ = "0.1.0"

# name -> module that defines it; resolved on first use (PEP 562), so ``memlab --help`` or a
# command that needs only the loaders does not import pandas, review, migrate or the simulation.
_LAZY = {
    "Store": "memlab.store",
    "audit": "memlab.audit",
    "compare": "memlab.audit",
    "Audit": "memlab.audit",
    "review": "memlab.review",
    "Proposal": "memlab.review",
    "apply_proposal": "memlab.review",
    "migrate": "memlab.migrate",
    "verify": "memlab.migrate",
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


#: Subpackages named like the function they export: ``memlab.audit`` must stay the function
#: even after ``import memlab.audit.elfmem`` (the import system binds each imported subpackage
#: on its parent); the subpackage itself is always ``sys.modules["memlab.audit"]``.
_FUNCTION_NAMES = frozenset({"audit", "review", "migrate"})


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FUNCTION_NAMES and isinstance(value, types.ModuleType):
            return  # the import system binding a subpackage over the lazily-resolved function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
