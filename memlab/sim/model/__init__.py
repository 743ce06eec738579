"""The modelled world: the doc's Iterations (unbuilt designs) executed by a world model.

``iterations`` (the designs' choices as data), ``world`` (the store that executes an
iteration), ``scenarios`` (S1-S11 as modelled experiments on that world), ``cells`` (one
modelled cell and its place in the result cache), ``replay`` (a real store's history replayed
under an iteration) and ``_writers.py`` (S8's writer process, started by path). What the
modelled and the measured cells share (the scenario register, the result type, the rules,
fitness, the run engine) is in :mod:`memlab.sim`; the shipped releases in
:mod:`memlab.sim.real`.
"""

__all__: list[str] = []
