"""Each figure memlab takes from elfmem or the v2 doc is defined once, in memlab.constants."""

from __future__ import annotations

import ast
import math

import pytest
from _package_source import package

from memlab import constants
from memlab.constants import DECAY_LAMBDA, is_penalised, tier_of_lambda

# The driver runs inside elfmem's own venv, where memlab is not installed: it keeps its chars/4.
STANDALONE = {"sim/real/_driver.py"}


def _modules():
    for module in package():
        if module.rel != "constants.py" and module.rel not in STANDALONE:
            yield module.rel, module.tree


def test_no_module_defines_a_constant_again():
    names = set(constants.__all__)
    again = []
    for rel, tree in _modules():
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id in names:
                    again.append(f"{rel}:{node.lineno} {t.id}")
            if isinstance(node, ast.FunctionDef) and node.name in names:
                again.append(f"{rel}:{node.lineno} def {node.name}")
    assert again == []


def test_the_decay_table_and_chars_per_token_are_written_once():
    tier_tables, quarter = [], []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                numbers = all(isinstance(v, ast.Constant) and isinstance(v.value, (int, float))
                              for v in node.values)
                if {"PERMANENT", "STANDARD"} <= keys and numbers:  # a lambda table, not colours
                    tier_tables.append(f"{rel}:{node.lineno}")
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
                    isinstance(node.right, ast.Constant) and node.right.value in (4, 4.0):
                quarter.append(f"{rel}:{node.lineno}")
    assert tier_tables == [] and quarter == []


@pytest.mark.parametrize("lam,tier", [
    (1e-5, "PERMANENT"), (0.001, "DURABLE"), (0.01, "STANDARD"), (0.05, "EPHEMERAL"),
    (0.02, "STANDARD"), (0.04, "STANDARD"),    # penalised STANDARD: x2, x4 (elfmem caps at 0.05)
    (0.003, None), (0.2, None), (0.0, None), (-1, None), (float("nan"), None), (None, None),
])
def test_tier_of_lambda_follows_elfmem(lam, tier):
    assert tier_of_lambda(lam) == tier


def test_penalised_lambdas_are_those_between_standard_and_the_ceiling():
    assert [is_penalised(x) for x in (0.01, 0.02, 0.04, 0.05, 0.001)] == \
        [False, True, True, False, False]
    assert math.isclose(DECAY_LAMBDA["STANDARD"] * constants.PENALTY_FACTOR ** 2, 0.04)


def test_the_figures_match_the_installed_elfmem():
    scoring = pytest.importorskip("elfmem.scoring")
    config = pytest.importorskip("elfmem.config")
    assert {t.name: v for t, v in scoring.LAMBDA.items()} == DECAY_LAMBDA
    memory = config.MemoryConfig()
    assert (memory.penalty_factor, memory.lambda_ceiling) == (constants.PENALTY_FACTOR,
                                                              constants.LAMBDA_CEILING)
    assert (memory.near_dup_near_threshold, memory.near_dup_exact_threshold) == (
        constants.NEAR_DUP_THRESHOLD, constants.EXACT_DUP_THRESHOLD)
