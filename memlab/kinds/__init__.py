"""The store kinds memlab knows, in one registry: how each is detected, loaded, audited,
migrated and found.

A kind is one value of ``Store.kind``. Each declares, in one :func:`register` call:

* ``display``: the name shown to people ("elfmem database");
* ``detect``: a function of a :class:`Probe` (the path, its first bytes, its entries) that
  returns what it saw ("starts with the SQLite header") or ``None``. Detectors run from the
  highest ``priority`` down (registration order breaks ties); the first to answer wins, and
  ``memlab.load`` records its :class:`Evidence` in ``store.meta["detected"]``. A detector that
  claims broadly (any SQLite file, any JSON) registers with a low priority, so a more specific
  kind sharing the format (a Letta server database) is asked first. ``locate`` claims a source
  that is not a path (a ``postgresql://`` DSN) from its text, before any path is looked at;
* ``load``: the loader, ``load(path, **kwargs) -> Store``. Kinds may share one: the loader
  decides the final ``Store.kind`` from what it reads (a git repository whose HEAD holds
  ``agent.yaml`` is ``souveraine`` even when only ``.git`` was probed);
* ``audit``: ``audit(store, *, as_of, **options) -> Audit``, or ``None`` when memlab has no
  audit for the kind. An option that ``load`` or ``audit`` does not name as a parameter (a
  ``**kwargs`` catch-all names none) is an :class:`~memlab.errors.UnknownOption` naming the
  kind and the option, never silently dropped;
* ``migrations``: target name -> planner ``plan(store, source_path, *, target, dest) -> Plan``
  (``dest`` is the destination folder, or None when planning without one), and
  ``default_target``, where ``memlab.migrate`` sends the store when no target is named;
* ``find``: where the kind lives on a machine, ``find(search) -> rows`` for
  :func:`memlab.sources.discover.discover` (a row needs ``agent_id`` and ``path``; the other
  inventory columns default to missing and ``kind`` to this kind);
* ``review``: a :class:`Review`, how ``memlab.review`` and ``memlab apply`` treat the kind's
  stores: its units, and behaviour objects for how a unit is removed (a :class:`Removal`) or
  edited (an :class:`Edit`), how ticks are applied (an :class:`Apply`), where drift is looked
  for (a :class:`Drift`) and which rules are checked (a :class:`Rules`); or ``None`` when
  review does not cover the kind. Engines call these objects' methods; code outside this
  package never compares a kind's fields (its name, review, verify, capabilities, copy_of)
  with a string (``tests/test_kind_literals.py`` counts such comparisons: none);
* ``verify``: a :class:`Verifier`, the parity check ``memlab migrate --verify`` runs on a
  migrated copy of the kind's stores (memlab's: ``ElfmemParity``, blocks and ledger;
  ``BlocksParity``, Letta blocks, one file per block; ``ServerParity``, a Letta server's
  blocks with their history, per agent; ``UpgradeParity``, a memfs v1 repository moved to v2,
  history kept; all in :mod:`memlab.migrations`), or ``None`` (memlab cannot verify it).
  Behaviour may be given as a ``"module:attribute"`` string, resolved on first use, as
  memlab's own registrations do;
* ``capabilities``: descriptive tags (:func:`capable` answers them); no engine decides on
  one, and memlab's own kinds declare none. What a kind does differently is a method of its
  class (:class:`KindBase`): ``elfmem_frames(store)``, the elfmem tables the simulations and
  the elfmem block and ledger migrations read; ``doc_value(metric)``, a design doc's value
  shown beside a headline metric; ``walked_folder(folder)`` and ``lists_file(path)``, what
  ``memlab discover`` lists for a store it meets walking a folder; ``simulates()`` is True
  for a kind giving ``elfmem_frames`` (a scheduled run's simulation reads its first store);
* ``reports``: the report kinds ``memlab report all`` renders for each of the kind's stores
  (``("audit", "review")``); none, and a scheduled run only loads it;
* ``headline``: the metrics a scheduled run's index charts and compares for the kind's stores
  by default (the config's ``metrics:`` overrides them);
* ``copy_of``: the migration target whose output is a store of this kind (a migrated copy
  that loads as ``letta_memfs`` is a ``"letta"`` copy), which ``migrate --verify`` re-plans.

:func:`by_kind` is a read-only mapping over one of these fields (kind name -> value, kinds
that declare none left out), so a table keyed by kind is a view of the registry, not a copy.

Functions may be given as ``"module:attribute"`` strings, resolved on first use, so
``import memlab`` imports no loader. Adding a kind is one module (its loader) plus one
``register`` line, like papermill's engines::

    register("toy", display="toy store", detect=lambda p: "ends in .toy" if
             p.path.suffix == ".toy" else None, load=load_toy, audit=audit_toy)

Another distribution adds kinds through the ``memlab.kinds`` entry point group
(:data:`ENTRY_POINT_GROUP`): each entry point names a function of no arguments that calls
:func:`register`; memlab calls each once, on the first look-up. ``docs/examples/memlab-toy-kind``
is a complete one::
    [project.entry-points."memlab.kinds"]
    toy = "memlab_toy:register"

Every kind is a :class:`KindBase` (``memlab/kinds/_base.py``), the one protocol engines call:
``detect(probe)``, ``locate(text)``, ``load(source, **options)``, ``audit(store, *, as_of,
**options)``, ``plan(store, source, target, *, dest, **options)``, ``find(search)`` and
``findings()`` (audit table -> the columns identifying a finding), and the attributes above.
A ``register(name, ...)`` call makes a :class:`Kind`, a record whose methods
are the protocol's defaults (they delegate to its fields); a kind written as a class, one
package under ``memlab/kinds/`` (``memlab/kinds/letta_blocks/``), overrides the methods it
implements itself and is registered as an instance, ``register(LettaBlocks())``. The
registry lives in ``memlab/kinds/_registry.py``, the built-in kinds' detectors and
registrations in ``memlab/kinds/_builtin.py``.
"""

from __future__ import annotations

from memlab.kinds._base import HEAD_BYTES, Evidence, KindBase, Probe, Review, Search
from memlab.kinds._behaviour import Apply, Drift, Edit, Removal, Rules, Verifier, behaviour
from memlab.kinds._builtin import MEMFS_KINDS
from memlab.kinds._registry import (
    ENTRY_POINT_GROUP,
    Kind,
    by_kind,
    capable,
    detect,
    get,
    kinds,
    lookup,
    plugin_failures,
    register,
    targets,
    unregister,
)

__all__ = [
    "by_kind",
    "Kind",
    "KindBase",
    "Review",
    "Removal",
    "Edit",
    "Apply",
    "Drift",
    "Rules",
    "Verifier",
    "behaviour",
    "Evidence",
    "Probe",
    "Search",
    "register",
    "unregister",
    "get",
    "lookup",
    "capable",
    "kinds",
    "detect",
    "targets",
    "MEMFS_KINDS",
    "ENTRY_POINT_GROUP",
    "plugin_failures",
    "HEAD_BYTES",
]
