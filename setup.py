"""The wheel carries the notebooks and their templates (`memlab report` works from an installed
wheel, outside any checkout). Everything else about the build is in pyproject.toml.

The notebooks live at the checkout's top level (``notebooks/``, where JupyterLab and papermill
users open them); a regular build copies them into the package as ``memlab/notebooks/``. An
editable install reads them from the checkout (``memlab.report.notebook_folder``).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class build_py_with_notebooks(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "memlab" / "notebooks"
        target.mkdir(parents=True, exist_ok=True)
        for nb in sorted(Path("notebooks").glob("*.ipynb")):
            self.copy_file(str(nb), str(target / nb.name))


setup(cmdclass={"build_py": build_py_with_notebooks})
