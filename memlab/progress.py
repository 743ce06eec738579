"""Progress on long work: one mechanism for the whole library.

Every step that can take more than a couple of seconds (embedding, simulation cells, report
runs, review stages, migration and verification) reports through :func:`bar`, a ``tqdm`` bar
with done/total, rate and ETA. Bars and :func:`note` lines go to stderr, so they never mix
with a command's printed result or ``--json``.

When it shows:
- in a terminal (stderr is a TTY): text bars;
- in a Jupyter kernel: tqdm's notebook bars;
- never when stderr is not a TTY (a pipe, a cron log, a test), with ``memlab --quiet``,
  :func:`set_quiet`, or ``MEMLAB_QUIET=1`` in the environment (what report kernels get, so
  rendered HTML carries no bar). ``MEMLAB_PROGRESS=1`` forces bars on (a terminal that is not
  detected as one).

Example::

    from memlab.progress import bar, note
    note("embedding 14,000 texts, about 3 min; cached for next time")
    for item in bar(items, desc="checking", unit="item"):
        ...
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable

__all__ = ["bar", "note", "enabled", "set_quiet", "quiet", "duration"]

_QUIET_ENV = "MEMLAB_QUIET"
_FORCE_ENV = "MEMLAB_PROGRESS"
_quiet = False


def set_quiet(value: bool = True) -> None:
    """Silence (or re-enable) every bar and note in this process."""
    global _quiet
    _quiet = bool(value)


class quiet:
    """Context manager: no bars or notes inside the ``with`` block."""

    def __enter__(self) -> "quiet":
        self._before = _quiet
        set_quiet(True)
        return self

    def __exit__(self, *exc: Any) -> None:
        set_quiet(self._before)


def _in_notebook() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # IPython half-imported, or not a shell
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def enabled() -> bool:
    """True when bars and notes are shown (see the module docstring for the rules)."""
    if _quiet or _env_true(_QUIET_ENV):
        return False
    if _env_true(_FORCE_ENV) or _in_notebook():
        return True
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stderr
        return False


def bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: int | None = None,
    desc: str = "",
    unit: str = "it",
    leave: bool = False,
    **kwargs: Any,
):
    """A tqdm bar on stderr (a widget in Jupyter), disabled when progress is off.

    Use it like ``tqdm``: iterate over it, or ``update(n)`` it inside a ``with`` block;
    ``set_postfix_str`` says what is running now. ``disable=True`` hides this one bar. A
    disabled bar costs next to nothing.
    """
    hidden = bool(kwargs.pop("disable", False))
    show = enabled() and not hidden
    if show and _in_notebook():
        try:
            from tqdm.notebook import tqdm as cls
        except ImportError:  # no ipywidgets: text bars still work in a notebook
            from tqdm import tqdm as cls
    else:
        from tqdm import tqdm as cls
    options: dict[str, Any] = {"file": sys.stderr, "mininterval": 0.25}
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    # A pty that reports no width (some CI shells) would draw an empty bar: use 100 columns.
    options.update({"dynamic_ncols": True} if columns else {"ncols": 100})
    options.update(kwargs)
    return cls(
        iterable, total=total, desc=desc, unit=unit, leave=leave, disable=not show, **options
    )


def note(message: str) -> None:
    """One line on stderr (``memlab: ...``) when progress is shown: what a long step will cost."""
    if not enabled():
        return
    if _in_notebook():
        print(f"memlab: {message}", file=sys.stderr, flush=True)
        return
    from tqdm import tqdm

    tqdm.write(f"memlab: {message}", file=sys.stderr)  # above any bar, not through it


def duration(seconds: float) -> str:
    """'40 s', '3 min', '1 h 5 min': how long, to the precision a person plans with."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"
