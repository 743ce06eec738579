"""The shipped elfmem releases, run for real: each in its own venv, driven by operator scripts.

``releases`` (the venvs and the JSON-lines driver process, ``_driver.py`` run by path inside
a release's venv), ``runner`` (the real rows: ``run_real``, each measured cell and its place
in the result cache), ``scripts`` with ``_scale`` and ``_months`` (the operator scripts
S1-S11), ``_common`` (what the scripts share), ``_write_paths`` (a release's write paths read
from its code), ``release_facts`` (what a release has, for the claims) and ``replay_release``
(a real store replayed through a release). What the modelled and the measured cells share is
in :mod:`memlab.sim`; the modelled world in :mod:`memlab.sim.model`.

The runner's names are here too (``memlab.sim.real.RealParams``, ``run_real``, ...).
"""

from memlab.sim.real.runner import (
    LLM_STAND_INS,
    PROJECT_SCENARIOS,
    REAL_RULES,
    RULE_LLM,
    RealContext,
    RealParams,
    count_source_lines,
    file_block_text,
    llm_stand_in,
    project_config,
    project_substrate,
    release_row,
    run_real,
    simplicity,
)

__all__ = [
    "RealParams",
    "run_real",
    "release_row",
    "count_source_lines",
    "simplicity",
    "REAL_RULES",
    "RealContext",
    "RULE_LLM",
    "LLM_STAND_INS",
    "llm_stand_in",
    "PROJECT_SCENARIOS",
    "project_config",
    "project_substrate",
    "file_block_text",
]
