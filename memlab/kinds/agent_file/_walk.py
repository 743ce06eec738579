"""Whether a JSON file a walk of a folder meets is a Letta agent file or blocks list (the
``agent_file`` and ``letta_blocks`` kinds' :meth:`~memlab.kinds.KindBase.lists_file`): their
detectors claim any JSON text, so a walk must not list manifests and summaries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memlab._files import NotRegularFile, read_regular

__all__ = ["lists_json"]

#: A walked JSON file up to this size is parsed to check that it is an agent file or a blocks
#: list; a larger one is listed (its loader decides).
_MAX_WALK_JSON = 8 << 20


def _agent_json(doc: Any) -> bool:
    if isinstance(doc, str):  # a double-encoded agent file
        try:
            doc = json.loads(doc)
        except ValueError:
            return False
    if isinstance(doc, list):
        return bool(doc) and all(isinstance(b, dict) and "value" in b for b in doc)
    return isinstance(doc, dict) and any(isinstance(doc.get(k), list) for k in ("agents", "blocks"))


def lists_json(path: Path) -> bool:
    """True for an ``.af`` file, a file over the size parsed, or one parsing as an agent file
    (``agents``/``blocks`` lists) or a blocks list; False for any other or unreadable file."""
    if path.suffix == ".af":
        return True
    try:
        if path.stat().st_size > _MAX_WALK_JSON:
            return True
        return _agent_json(json.loads(read_regular(path)))
    except (OSError, NotRegularFile, ValueError, RecursionError):
        return False
