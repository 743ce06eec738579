"""A live, read-only view over a registry (the store kinds of :mod:`memlab.kinds`, the
scenarios of :mod:`memlab.sim.registry`): a table keyed by name that is computed from the
registry at each lookup, so a record registered later (a plugin's kind, a notebook's
scenario) is in every view, and no copy can drift from the records."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Callable

__all__ = ["RegistryView"]


class RegistryView(Mapping):
    """``name -> value(record)`` over the records of ``records()`` (name -> record, in
    registration order) that ``keep`` accepts (all when it is None)."""

    def __init__(
        self,
        records: Callable[[], Mapping[str, Any]],
        value: Callable[[Any], Any],
        keep: Callable[[Any], bool] | None = None,
    ) -> None:
        self._records = records
        self._value = value
        self._keep = keep

    def _kept(self, record: Any) -> bool:
        return self._keep is None or bool(self._keep(record))

    def __getitem__(self, name: str) -> Any:
        record = self._records().get(name) if isinstance(name, str) else None
        if record is None or not self._kept(record):
            raise KeyError(name)
        return self._value(record)

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, record in self._records().items() if self._kept(record)])

    def __len__(self) -> int:
        return sum(1 for record in self._records().values() if self._kept(record))

    def __repr__(self) -> str:
        return repr(dict(self))
