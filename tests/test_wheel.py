"""A wheel built from the checkout works outside it: `memlab report audit` renders the report from
the notebooks the wheel carries, with no checkout on the path (issue 25, item 6).

The wheel is built from a copy of the tracked files (so the build writes nothing into the
checkout) and installed with ``pip --no-deps --no-index`` into a fresh venv outside it; the
venv reads its dependencies from the test venv's site-packages through a ``.pth`` line (no
network), which adds that folder to ``sys.path`` without running its own ``.pth`` files, so the
checkout's editable install is not seen, and ``JUPYTER_PATH`` names the test venv's jupyter data
(nbconvert's templates, the kernelspec). The report runs from a third folder with that venv's
python, and its notebook kernel is that python too."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from memlab.report import NOTEBOOKS

REPO = Path(__file__).resolve().parents[1]


def _tracked_copy(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        src = REPO / os.fsdecode(name)
        if src.is_file() and not os.fsdecode(name).startswith("data/"):
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(name))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    _tracked_copy(src)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(src)], check=True, capture_output=True, timeout=600)
    (built,) = out.glob("memlab-*.whl")
    return built


def test_the_wheel_carries_every_report_notebook_and_template(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for nb in NOTEBOOKS.values():
        assert f"memlab/notebooks/{nb}" in names
    assert any(n.startswith("memlab/report/templates/memlab_offline/") for n in names)
    assert not any(n.startswith(("tests/", "data/", "notebooks/")) for n in names)


def _fresh_venv(where: Path, wheel: Path) -> Path:
    """A new venv at ``where`` with the wheel installed and the test venv's packages readable."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True,
                   capture_output=True, timeout=300)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True, text=True).stdout
    (Path(purelib.strip()) / "memlab-test-deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "--no-index", "--ignore-installed", "-q", str(wheel)], check=True,
                   capture_output=True, timeout=600)
    return python


@pytest.mark.slow
def test_an_installed_wheel_renders_the_audit_report_outside_the_checkout(wheel, tmp_path, data_dir):
    venv = tmp_path / "venv"
    python = _fresh_venv(venv, wheel)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy2(data_dir / "demo" / "elfmem-demo.db", work / "mine.db")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMLAB_REPORTS_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    # the data files nbconvert and ipykernel install beside them (the report's HTML templates,
    # the python3 kernelspec, whose "python" jupyter_client runs as the venv's own python)
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    where = subprocess.run(
        [str(python), "-c", "import sys, memlab, memlab.report as r; print(memlab.__file__); "
                            "print(r.notebook_folder()); print(r.reports_root()); "
                            "print(any('__editable__' in str(f) for f in sys.meta_path))"],
        cwd=work, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert Path(where[0]).is_relative_to(venv) and Path(where[1]).is_relative_to(venv)
    assert where[2] == "reports"  # outside a checkout: ./reports in the working folder
    assert where[3] == "False"  # the checkout's editable install is not on this venv's path
    run = subprocess.run([str(python), "-m", "memlab", "-q", "report", "audit", "mine.db",
                          "--as-of", "2026-08-04"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    # the default folder names the day and the store (a second store would not overwrite it)
    [html] = (work / "reports").glob("*/mine-audit")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", html.parent.name)
    pages = list(html.glob("*.html"))
    assert pages and pages[0].stat().st_size > 50_000, run.stdout
    metrics = json.loads((html / "metrics.json").read_text())["mine.db"]
    with sqlite3.connect(f"file:{work / 'mine.db'}?mode=ro", uri=True) as db:  # the oracle
        counts = dict(db.execute("SELECT status, count(*) FROM blocks GROUP BY status"))
    assert (metrics["blocks_active"], metrics["blocks_archived"]) == (counts["active"],
                                                                       counts["archived"])


# --------------------------------------------------------------------------- issue 39, item 5

# Each process writes the top-level names of what it imported to <dump>/<pid>.txt, as it goes:
# on every import it meets (a finder first on sys.meta_path that finds nothing itself) and at
# exit. A kernel that jupyter_client stops with SIGTERM or SIGKILL after its grace period (a
# loaded machine) runs no atexit hook, so a dump written only at exit would miss the kernel.
_DUMP = """import atexit, os, sys
_FOLDER = os.environ.get("MEMLAB_MODULE_DUMP")
_SEEN = set()
def _dump():
    if not _FOLDER or _Recorder.busy:
        return
    _Recorder.busy = True
    try:
        new = {m.split(".")[0] for m in list(sys.modules)} - _SEEN
        if new:
            _SEEN.update(new)
            with open(os.path.join(_FOLDER, f"{os.getpid()}.txt"), "a") as f:
                f.write("".join(f"{m}\\n" for m in sorted(new)))
    finally:
        _Recorder.busy = False
class _Recorder:
    busy = False
    _count = 0
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if len(sys.modules) != cls._count:
            cls._count = len(sys.modules)
            _dump()
        return None
sys.meta_path.insert(0, _Recorder)
atexit.register(_dump)
"""


def _base_requirements(wheel: Path) -> list[str]:
    """The wheel's METADATA Requires-Dist lines that no extra guards."""
    with zipfile.ZipFile(wheel) as zf:
        [meta] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        text = zf.read(meta).decode()
    return [line.split(":", 1)[1].strip() for line in text.splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def _closure(requirements: list[str]) -> set[str]:
    """Every distribution ``pip install`` of ``requirements`` brings in, as installed here:
    followed through each installed distribution's own requirements (markers evaluated,
    extras followed only where a requirement names them)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        for wanted in [""] + sorted(req.extras):
            key = f"{name}[{wanted}]"
            if key in seen:
                continue
            seen.add(key)
            try:
                reqs = metadata.requires(req.name) or []
            except metadata.PackageNotFoundError:
                continue
            todo += [(Requirement(r), wanted) for r in reqs]
    return {k.split("[")[0] for k in seen}


#: Modules the render imports only when they are installed (each import is guarded by its
#: importer, which carries on without it): not requirements of the audit report.
_OPPORTUNISTIC = {
    # jsonschema's format checkers (nbformat validates the notebook with jsonschema), each
    # tried in a try/except ImportError, and what they import
    "arrow", "fqdn", "isoduration", "jsonpointer", "lark", "regex", "rfc3339-validator",
    "rfc3986-validator", "rfc3987-syntax", "six", "uri-template", "webcolors",
    "msgpack",  # jupyter_client.session: `try: import msgpack`
    "cloudpickle",  # pyarrow/__init__.py: `try: import cloudpickle`
    "setuptools",  # its _distutils_hack, imported by the venv's .pth at startup, not the report
}


@pytest.mark.slow
def test_the_base_install_covers_every_module_the_audit_report_imports(wheel, tmp_path, data_dir):
    """`pip install memlab` (no extra) must run `memlab report audit`: every distribution
    whose modules the CLI process or the notebook's kernel imported while rendering the audit
    report is among the wheel's base requirements or theirs (issue 39, item 5)."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    base = _base_requirements(wheel)
    assert base, "the wheel declares no base requirements"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_DUMP)
    dump = tmp_path / "dump"
    dump.mkdir()
    shutil.copy2(data_dir / "demo" / "elfmem-demo.db", tmp_path / "mine.db")
    env = {k: v for k, v in os.environ.items() if k != "MEMLAB_REPORTS_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(hook), str(REPO)])
    env["MEMLAB_MODULE_DUMP"] = str(dump)
    run = subprocess.run([sys.executable, "-m", "memlab", "-q", "report", "audit",
                          str(tmp_path / "mine.db"), "--as-of", "2026-08-04", "--out",
                          str(tmp_path / "out")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    dumps = list(dump.glob("*.txt"))
    assert len(dumps) >= 2, dumps  # the CLI and the notebook's kernel
    modules = {m for d in dumps for m in d.read_text().split()}
    assert {"papermill", "nbconvert", "ipykernel", "matplotlib"} <= modules  # the hook saw them
    owners = metadata.packages_distributions()
    needed = {canonicalize_name(dist) for m in modules - set(sys.stdlib_module_names)
              for dist in owners.get(m, ()) if canonicalize_name(dist) != "memlab"}
    covered = _closure(base)
    missing = sorted(needed - covered - _OPPORTUNISTIC)
    assert missing == [], (f"the audit report imports {missing}, which `pip install memlab` "
                           f"does not install (base requirements: {base})")
