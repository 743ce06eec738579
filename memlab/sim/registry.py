"""The scenario register: one :class:`Scenario` record per scenario, found by its code.

A record holds everything memlab knows about a scenario: its code, title and nature, its
modelled function (``run``: the world model executing an iteration's design), its real
operator script (``real``: a ``"module:function"`` string, imported only when a real row runs
it; None when the scenario has no real script), its rule in words, the design flags its
modelled cells read, what stands in for the LLM in its measured cells, the metric names its
evidence carries, and the doc's claims it tests (:attr:`Scenario.claims`).

:func:`register_scenario` adds a record and :func:`unregister_scenario` removes it; S1-S11
are registered, one call each, in :mod:`memlab.sim.catalog`, which ``memlab/sim/__init__.py``
imports, so they are in the register once any ``memlab.sim`` module is imported. The names
the rest of memlab reads (``SCENARIOS``, ``REAL_SCENARIOS``, ``RULES``, ``REAL_RULES``,
``LLM_STAND_INS``, ``SCENARIO_FLAGS``) are :class:`ScenarioView` objects: read-only mappings
computed from the register at each lookup, so a scenario registered later is in every one of
them. This module imports no ``memlab.sim`` module at import time (``memlab.errors`` and
``memlab._registry`` only), so any module can read the register without an import cycle.
"""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from memlab._registry import RegistryView
from memlab.errors import SimulationError

if TYPE_CHECKING:
    from memlab.sim.claims import Claim

__all__ = [
    "Scenario",
    "ScenarioView",
    "register_scenario",
    "unregister_scenario",
    "get_scenario",
    "registered_scenarios",
]


@dataclass(frozen=True)
class Scenario:
    """One scenario, everything about it in one record."""

    code: str
    title: str
    nature: str
    #: The modelled function ``(Context, Iteration) -> ScenarioResult``.
    run: Callable[..., Any]
    #: The rule its outcome follows, in words, for modelled and measured cells alike.
    rule: str = ""
    #: Its real operator script ``(RealContext) -> ScenarioResult`` as ``"module:function"``,
    #: imported when first run (:meth:`real_script`); None: no real script, so the real rows
    #: do not run it.
    real: str | None = None
    #: The iteration's design flags and constants its modelled cells read (their assumptions).
    flags: tuple[str, ...] = ()
    #: What stands in for the LLM in its measured cells; None: the default, RuleLLM
    #: (``memlab.sim.real.RULE_LLM``).
    llm: str | None = None
    #: Evidence schema: the metric names every modelled cell that grades a measure (outcome
    #: other than ``n/a``) carries; a cell may carry more.
    modelled_metrics: tuple[str, ...] = ()
    #: The same for its measured cells (each also gets ``seconds`` from the runner).
    measured_metrics: tuple[str, ...] = ()

    def real_script(self) -> Callable[..., Any] | None:
        """The real operator script, imported from ``real`` (None when there is none)."""
        if self.real is None:
            return None
        return pkgutil.resolve_name(self.real)

    @property
    def claims(self) -> "tuple[Claim, ...]":
        """The doc's claims whose measured cell is this scenario's (``memlab.sim.claims``)."""
        from memlab.sim.claims import CLAIMS

        return tuple(c for c in CLAIMS if c.scenario == self.code)


_REGISTER: dict[str, Scenario] = {}


def register_scenario(
    code: str,
    title: str,
    nature: str,
    run: Callable[..., Any],
    *,
    rule: str,
    real: str | None = None,
    flags: tuple[str, ...] = (),
    llm: str | None = None,
    modelled_metrics: tuple[str, ...] = (),
    measured_metrics: tuple[str, ...] = (),
) -> Scenario:
    """Add scenario ``code`` to the register and return its record.

    ``code``: upper case, not registered yet (``unregister_scenario`` first to replace one);
    ``run``: the modelled function; ``rule``: the rule in words (required: every cell shows
    it); ``real``: ``"module:function"`` of the real operator script, or None."""
    if not code or code != code.upper():
        raise SimulationError(f"scenario code {code!r} must be non-empty and upper case")
    if code in _REGISTER:
        raise SimulationError(
            f"scenario {code} is already registered",
            hint="unregister_scenario it first to replace it",
        )
    if not callable(run):
        raise SimulationError(f"scenario {code}: run must be the modelled function, not {run!r}")
    if not rule:
        raise SimulationError(f"scenario {code} needs its rule in words")
    if real is not None and (real.count(":") != 1 or not all(real.split(":"))):
        raise SimulationError(f"scenario {code}: real must be 'module:function', not {real!r}")
    record = Scenario(
        code,
        title,
        nature,
        run,
        rule=rule,
        real=real,
        flags=tuple(flags),
        llm=llm,
        modelled_metrics=tuple(modelled_metrics),
        measured_metrics=tuple(measured_metrics),
    )
    _REGISTER[code] = record
    return record


def unregister_scenario(code: str) -> Scenario:
    """Remove scenario ``code`` from the register and return its record."""
    try:
        return _REGISTER.pop(code)
    except KeyError:
        raise SimulationError(f"scenario {code!r} is not registered") from None


def get_scenario(code: str) -> Scenario:
    """The record of ``code``; KeyError when it is not registered."""
    return _REGISTER[code]


def registered_scenarios() -> tuple[Scenario, ...]:
    """Every record, in registration order."""
    return tuple(_REGISTER.values())


class ScenarioView(RegistryView):
    """A read-only mapping ``code -> value(record)`` over the records ``keep`` accepts,
    computed from the register at each lookup (registration order)."""

    def __init__(
        self, value: Callable[[Scenario], Any], keep: Callable[[Scenario], bool] | None = None
    ) -> None:
        super().__init__(lambda: _REGISTER, value, keep)
