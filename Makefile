# Entry points, each self-installing on first use: `make report`, `make test`, `make lab`.
# Installs are quiet: pip's output goes to $(LOG); on failure its last lines are shown.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.memlab-installed
LOG    := $(VENV)/install.log
# JupyterLab: no browser to open in a container; listen on this machine only. As root (a
# container's default user) JupyterLab refuses to start without --allow-root.
LAB_IP    ?= 127.0.0.1
LAB_FLAGS ?= --no-browser --ip=$(LAB_IP) $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: report test lint fmt lab bench envs clean-venv

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "memlab needs $(PYTHON) on PATH (set PYTHON=...)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing memlab and its dependencies into $(VENV) (a few minutes the first time; log: $(LOG))"
	@: > $(LOG)
	@# The CPU wheel of torch; a looser spec would pull a multi-GB CUDA build.
	@{ $(BIN)/python -m pip install --upgrade pip \
	   && $(BIN)/python -m pip install torch==2.13.0 \
	   && $(BIN)/python -m pip install -e '.[all]'; } >>$(LOG) 2>&1 \
	   || { echo "install failed; the end of $(LOG):"; tail -n 25 $(LOG); exit 1; }
	@touch $(STAMP)

## The main job: audit the bundled demo instance and render the report.
report: $(STAMP)
	@$(BIN)/memlab report audit data/demo/elfmem-demo.db --as-of 2026-08-04

## The whole test suite (CI runs this through .ci/run).
test: $(STAMP)
	$(BIN)/python -m pytest

## Lint and type-check the package (CI runs this through .ci/run, before the tests);
## ruff and mypy are pinned in the dev extra, configured in pyproject.toml.
lint: $(STAMP)
	$(BIN)/ruff format --check memlab
	$(BIN)/ruff check memlab
	$(BIN)/mypy

## Format the package with ruff (`make lint` checks it is formatted).
fmt: $(STAMP)
	$(BIN)/ruff format memlab

## JupyterLab on the notebooks (prints the URL with its token).
lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(LAB_FLAGS)

## The shipped elfmem releases the simulation runs for real: one venv each under
## $$MEMLAB_ENVS_DIR (pip from the package index, under a minute each, once); then offline.
envs: $(STAMP)
	@$(BIN)/python -c "from memlab.sim.real.releases import RELEASES, release_env; [release_env(r) for r in RELEASES]"

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-venv:
	rm -rf $(VENV)
