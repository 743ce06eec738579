"""memlab's own source, read and parsed once per test session, for the tests that check house
rules on the package's syntax trees (private names, ``__all__``, import cycles, kind-name
comparisons, SQL composition, regular expressions, ...).

``package()`` walks ``memlab/`` once (cached) and gives one ``Module`` per ``.py`` file, in
path order. ``parse({relative path: source})`` builds the same records from text, so a test can
show its rule failing on a scratch package without writing files.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "memlab"


@dataclass(frozen=True)
class Module:
    name: str  #: dotted module name: ``memlab.kinds._base``, ``memlab.kinds`` for its __init__
    rel: str  #: path relative to ``memlab/``, with ``/``: ``kinds/_base.py``
    path: Path  #: the file (under PACKAGE for the real package)
    source: str
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.rel == "__init__.py" or self.rel.endswith("/__init__.py")


def module_name(rel: str) -> str:
    """``kinds/_base.py`` -> ``memlab.kinds._base``; ``kinds/__init__.py`` -> ``memlab.kinds``."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["memlab", *parts])


def parse(sources: dict[str, str]) -> tuple[Module, ...]:
    """Records for a package given as ``{path relative to memlab/: source}``, in path order."""
    return tuple(
        Module(module_name(rel), rel, PACKAGE / rel, text, ast.parse(text, filename=rel))
        for rel, text in sorted(sources.items())
    )


@functools.cache
def package() -> tuple[Module, ...]:
    """Every module of memlab, read and parsed once per session."""
    return parse(
        {
            p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8")
            for p in PACKAGE.rglob("*.py")
        }
    )
