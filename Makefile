# evald — every task a person runs starts here. `make help` lists them.

PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
CONFIG ?= config/evald.yaml
STAMP   = $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help run test lint format typecheck unit bench clean prometheus compiler

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# The compiled modules (setup.py) are rebuilt when their sources change: the decoder's
# .pyx and the normalizer's .py files (mypyc).
COMPILED = collector/decode/_wire.pyx $(wildcard collector/normalize/*.py collector/normalize/*/*.py)
$(STAMP): pyproject.toml setup.py $(COMPILED) | compiler
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
	$(BIN)/ruff check collector evaluators tests benchmarks deploy
	$(BIN)/ruff format --check collector evaluators tests benchmarks deploy

format: $(STAMP)  ## apply ruff formatting and safe fixes
	$(BIN)/ruff check --fix collector evaluators tests benchmarks deploy
	$(BIN)/ruff format collector evaluators tests benchmarks deploy

typecheck: $(STAMP)  ## mypy --strict on the packages
	$(BIN)/mypy

unit: $(STAMP) prometheus  ## pytest (unit, golden and loopback integration tests)
	$(BIN)/pytest -q

# The integration tests scrape evald with a real Prometheus server (tests/test_prometheus_*.py).
# Debian's package provides `prometheus` and `promtool`; nothing happens when both are on PATH.
# Root (CI) installs directly, anyone else through sudo.
SUDO = $(shell [ "$$(id -u)" = 0 ] || echo sudo)
prometheus:  ## install the Prometheus server the integration tests need (Debian/apt, once)
	@command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || { \
		command -v apt-get >/dev/null 2>&1 \
			|| { echo "install Prometheus (prometheus and promtool on PATH) to run the tests"; exit 1; }; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
			prometheus >/dev/null; }

# The OTLP protobuf walker and the normalizer are compiled at install (setup.py). The
# install succeeds without a compiler, but the tests require the compiled modules.
compiler:  ## install a C compiler for the compiled modules (Debian/apt, once)
	@command -v cc >/dev/null 2>&1 || { \
		command -v apt-get >/dev/null 2>&1 \
			|| { echo "install a C compiler (cc) to build the compiled modules"; exit 1; }; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
			gcc libc6-dev >/dev/null; }
	@$(PYTHON) -c 'import os, sysconfig, sys; h = sysconfig.get_paths()["include"]; \
		sys.exit(0 if os.path.exists(os.path.join(h, "Python.h")) else \
		f"the Python headers are missing ({h}/Python.h): install python3-dev")'

bench: $(STAMP)  ## throughput benchmarks (prints ratios against an in-run baseline)
	$(BIN)/python benchmarks/run_all.py

clean:  ## remove the virtualenv and caches
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info build
	rm -f collector/decode/_wire.c
	find collector -name '*.so' -delete
