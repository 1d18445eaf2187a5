# evald — every task a person runs starts here. `make help` lists them.

PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
CONFIG ?= config/evald.yaml
STAMP   = $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help run test lint format typecheck unit bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "evald needs Python >= 3.11 (set PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)  ## start the daemon on the default config (OTLP :4317/:4318, admin :9464)
	$(BIN)/evald serve --config $(CONFIG)

test: lint typecheck unit  ## lint, type-check and run the whole test suite

lint: $(STAMP)  ## ruff lint + format check
	$(BIN)/ruff check collector evaluators tests benchmarks
	$(BIN)/ruff format --check collector evaluators tests benchmarks

format: $(STAMP)  ## apply ruff formatting and safe fixes
	$(BIN)/ruff check --fix collector evaluators tests benchmarks
	$(BIN)/ruff format collector evaluators tests benchmarks

typecheck: $(STAMP)  ## mypy --strict on the packages
	$(BIN)/mypy

unit: $(STAMP)  ## pytest (unit, golden and loopback integration tests)
	$(BIN)/pytest -q

bench: $(STAMP)  ## throughput benchmarks (prints ratios against an in-run baseline)
	$(BIN)/python benchmarks/run_all.py

clean:  ## remove the virtualenv and caches
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info
