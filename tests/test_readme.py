"""The README's library tour runs as written (paths redirected into a temp folder)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.slow


def test_readme_python_example_runs(repo_root, tmp_path, capsys):
    readme = (repo_root / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    code = (code.replace('"data/', f'"{repo_root}/data/')
                .replace('"reviews/"', repr(str(tmp_path / "reviews")))
                .replace('"/tmp/demo-substrate"', repr(str(tmp_path / "demo-substrate"))))
    exec(compile(code, "README.md", "exec"), {"display": print})
    out = capsys.readouterr().out
    assert "52.1×" in out and "Iteration x Scenario" in out
    assert list((tmp_path / "reviews").glob("review-*.md"))
    assert (tmp_path / "demo-substrate" / ".elfmem" / "memory").is_dir()
