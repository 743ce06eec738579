"""JavaScript's values, as Letta Code's constraints see them: strings as UTF-16 code units, ``.``
not crossing line terminators (and so the legacy path rule, ``LEGACY_RE``), JSON numbers as
JavaScript numbers, ``Object.keys`` order, and a file's characters as code points.

Part of :mod:`memlab.kinds.letta_memfs._constraints`, which re-exports :func:`code_points`.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, TypeGuard

__all__ = [
    "JS_DOT",
    "LEGACY_RE",
    "utf16",
    "safe_integer",
    "js_number",
    "object_keys",
    "code_points",
]

_SAFE = 2**53 - 1
# JavaScript's `.` (and so its `.*`) stops at these; Python's stops at "\n" only.
JS_DOT = "[^\n\r\u2028\u2029]"
LEGACY_RE = re.compile(f"^(?:memory/)?(?:system|reference)/{JS_DOT}*\\.md\\Z")


def utf16(text: str) -> str:
    """``text`` as a string of UTF-16 code units (an astral character becomes its surrogate
    pair), so a regex steps through it as JavaScript's does."""
    if all(ord(c) < 0x10000 for c in text):
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(data[i : i + 2], "little")) for i in range(0, len(data), 2))


def safe_integer(value: Any) -> TypeGuard[int | float]:
    """``Number.isSafeInteger``: a JSON number that is a whole number within 2**53 - 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return False
    return abs(value) <= _SAFE


def js_number(value: Any) -> Any:
    """A validated number as JavaScript prints it (``3.0`` → ``3``, ``-0`` → ``0``)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def object_keys(obj: Mapping[str, Any]) -> list[str]:
    """``Object.keys`` order: array-index keys ascending, then the rest as inserted."""

    def index(key: str) -> int | None:
        if key == "0" or (key[:1] in "123456789" and key.isdigit() and key.isascii()):
            n = int(key)
            return n if n < 2**32 - 1 else None
        return None

    numeric = sorted((index(k), k) for k in obj if index(k) is not None)
    return [k for _, k in numeric] + [k for k in obj if index(k) is None]


def code_points(data: bytes) -> int:
    """What Letta counts as a file's characters: code points of its UTF-8 text, a bad byte
    sequence counting as one U+FFFD (Node's decoder and Python's agree on where they split)."""
    return len(data.decode("utf-8", "replace"))
