# Two entry points, both self-installing on first use: `make report` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.memlab-installed
TODAY  := $(shell date -u +%Y-%m-%d)

.PHONY: report test bench clean-venv

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "memlab needs $(PYTHON) on PATH (set PYTHON=...)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The CPU wheel of torch; a looser spec would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[all]'
	@touch $(STAMP)

## The main job: audit the bundled demo instance and render the report.
report: $(STAMP)
	$(BIN)/memlab report audit data/demo/elfmem-demo.db --as-of 2026-08-04 --out reports/$(TODAY)/demo-audit

## The whole test suite (CI runs this through .ci/run).
test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-venv:
	rm -rf $(VENV)
