"""Migrations to Letta Code 0.34.12's memfs v2 (the default), and ``--layout v1`` kept exactly.

The golden tree shas below were recorded from main's code (commit ff2fc4f) before v2 existed:
each planned commit's tree for every bundled Agent File and an elfmem DB (commits dated at a fixed
time, so the side file's ``migrated_at`` is fixed too) and for both Letta server SQLite fixtures
(dated from the source). ``layout="v1"`` must still give exactly these trees.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memlab.migrations import _letta, plan_migration
from memlab.sources import load

DATA = Path(__file__).resolve().parents[1] / "data"
WHEN = pd.Timestamp("2026-01-02T03:04:05Z")
V1_SOURCES = {p.name: p for p in [*sorted((DATA / "samples/letta-af").glob("*.af")),
                                   DATA / "samples/elfmem/elfmem-0.20.0-schema9.db"]}
SERVER_SOURCES = {p.name: p for p in [DATA / "samples/letta-server/letta-0.11.7.db",
                                       DATA / "samples/letta-server/letta-0.11.7-nohistory.db"]}

GOLDEN_V1_TREES = {
    'customer_service.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '3c5ded056171b5123eb85e5b498b5070de57f741',
            '1d5bd6820bdcbe04619197b82faf99a9cf4bfb9c',
        ],
    },
    'deep-thought.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '225f719387058e90689ac2e0707481daae041c09',
            '1bb6b7a006fe2f8eef96eb0ca461aaea19e86c3d',
        ],
    },
    'deep_research_agent.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'e0ecc2176c7c10818289e9cf4a8462106437dea0',
            '542260c4b2eaddb205613753a55add995c18c25c',
        ],
    },
    'ezra.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '471ebc323403b0df14791d056b007bda8705b6d4',
            '35e31b0ded8faa6ff333da4fbc5e4d3fa2d80409',
        ],
    },
    'elfmem-0.20.0-schema9.db': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'a5e06b7af207518086085669effce557b68198b6',
            '9d1666da91f02bb6e69da28f1e72772d4c12662c',
        ],
    },
    'letta-0.11.7.db': {
        'ezra': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '21e23255a9cf9f108b0d5f50ab5ce8a2634704c4',
            '27799d22f81686ade8b2b4d1868b685591a473d6',
            'd5340ca048241c086d9c4904c6d04ab6dc0198cc',
            '046ec042e2b3b88e2a1f2e32d085a7dc815dd152',
            '6b5aed916604818cdef95f263f2152f761cad3d6',
            '316763bb9be7bba1423a615252c9cb129ac52cb1',
            'b2fdffe412cfcfcd8d5edb76e4e1b8e7b9d281ce',
            'cd6d1d641110244c4d90ecbb805c37cc99a1f6c7',
            'ab6fff94951cd35d4a7fee0dddace3ed0d661d29',
        ],
        'juno': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'b393e522b7953cd35599720fc6825711426e7b91',
            '04699ebb6af29b0e6e0e1b22c334c0629877c8fb',
            'a5d8ecd16559ca70a7f6028acc4392d6cd40775b',
            'c625761c689e0ad00078cfa9a1c562b97798d079',
            '1b868d7dfe41a0b5c4cb7718efed23ac0e0054df',
            '5c90c4dfc01f9547456d8309d3760737be48a874',
            '1459bcd092188ad2f1eb9ae1ba81a2f6adfed633',
            'a36d7e6295c0b9b284370558bab3fecb3afc53a8',
            '62e19f9c3414584f6b138f7895d1d2cc9c86776d',
        ],
        'orion': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '3e42d4e65ac9c2010b420d7c75c55c8f6cae1b63',
            '374f98ac9720adba0559034089688eb691540396',
        ],
        'vega': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '238f7c0c9a4f9cc6cf7a4e438c46040fb217b972',
            'aa7075950c29640ae05b0df91c0e6717922248f1',
            '46a4e3c0142bc6ceef896c5a3ff1988db574a77c',
        ],
    },
    'letta-0.11.7-nohistory.db': {
        'ezra': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'aae7feb05b876dee67f1a3b3f9ce1c18d9625b13',
            'd61f053c8d7aad4240158b72ceb0be94623e3699',
        ],
        'juno': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'a795c3448a9bcdfd349186430fe4964415da4f6f',
            '1e37d908b790ed41309682950e182f47481bbdf5',
        ],
        'orion': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '3e42d4e65ac9c2010b420d7c75c55c8f6cae1b63',
            '41cff669cb19234f8d59fde0b3073645a25243c9',
        ],
        'vega': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '6767a7b7d90646aed3a39c335c13085fd7bb7579',
            'ca5a16394444f2925097b962b9aaa869508cea48',
        ],
    },
}


def _trees(plan) -> dict[str, list[str]]:
    return {sub: [tree for tree, _ in chain] for sub, chain in sorted(plan.expected_heads().items())}


@pytest.mark.parametrize("name", sorted(V1_SOURCES))
def test_v1_layout_of_block_sources_is_byte_identical_to_before(name):
    src = V1_SOURCES[name].resolve()
    plan = _letta.plan_memfs(load(src), src, target="letta", when=WHEN, layout="v1")
    assert _trees(plan) == GOLDEN_V1_TREES[name]


@pytest.mark.parametrize("name", sorted(SERVER_SOURCES))
def test_v1_layout_of_server_sources_is_byte_identical_to_before(name):
    plan = plan_migration(SERVER_SOURCES[name].resolve(), layout="v1")
    assert _trees(plan) == GOLDEN_V1_TREES[name]
