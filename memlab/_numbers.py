"""Gaps and repeats in a store's sequence numbers, computed from the numbers it holds.

A Letta ``block_history.sequence_number`` is any integer the database holds; one row of
9,000,000,000,000,000,000 made ``set(range(1, max + 1))`` ask for that many integers. Here the
work and the memory are proportional to how many numbers the store holds, whatever their size:
the gaps come from the sorted distinct values (arithmetic between neighbours), and only the
first ``show`` missing numbers are listed.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

__all__ = ["missing_numbers", "repeated_numbers"]


def missing_numbers(
    values: Iterable[int], *, first: int = 1, show: int = 10
) -> tuple[list[int], int]:
    """The first ``show`` integers of ``first..max(values)`` that ``values`` lacks, and how
    many it lacks in all (0 when nothing is missing or ``values`` is empty). Values below
    ``first`` are not counted as filling anything."""
    distinct = sorted({int(v) for v in values if int(v) >= first})
    shown: list[int] = []
    count = 0
    expected = first
    for v in distinct:
        if v > expected:
            count += v - expected
            shown.extend(range(expected, min(v, expected + show - len(shown))))
        expected = v + 1
    return shown, count


def repeated_numbers(values: Iterable[int], *, show: int = 10) -> tuple[list[int], int]:
    """The smallest ``show`` values that appear more than once, and how many distinct values do."""
    seen = Counter(int(v) for v in values)
    dupes = sorted(v for v, n in seen.items() if n > 1)
    return dupes[:show], len(dupes)
