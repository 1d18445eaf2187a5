# evald — every task a person runs starts here. `make help` lists them.

PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
CONFIG ?= config/evald.yaml
DIST   ?= dist
STAMP   = $(VENV)/.installed
RUNTIME = $(VENV)/.installed-runtime
# A second venv with evald installed pure (EVALD_PURE_PYTHON=1: nothing compiled), where
# the decode, normalize and replay tests run again so the interpreted fallback cannot rot.
PURE_VENV  = .venv-pure
PURE_STAMP = $(PURE_VENV)/.installed
PURE_TESTS = tests/unit/decode tests/unit/normalize tests/unit/offline tests/unit/core \
	tests/unit/evaluators tests/golden

.DEFAULT_GOAL := help
.PHONY: help run install-runtime test lint format typecheck unit pure dist bench clean \
	prometheus compiler

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# The compiled modules (setup.py) are rebuilt when their sources change: the decoder's
# .pyx and the files it includes, the normalizer's .py files and the evaluators'
# algorithms (mypyc).
COMPILED = collector/decode/_wire.pyx $(wildcard collector/decode/*.pxi) \
	$(wildcard collector/normalize/*.py collector/normalize/*/*.py) \
	evaluators/matching.py evaluators/match_details.py evaluators/call_identity.py
BUILD    = pyproject.toml setup.py MANIFEST.in build_backend/evald_build.py
PYTHON_OK = $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	|| { echo "evald needs Python >= 3.11 (set PYTHON=...)"; exit 1; }

# Runtime dependencies only (what `make run` needs): no test or lint tool. Compiles the
# hot path when a C compiler is there, else installs it interpreted (a warning at start).
$(RUNTIME): $(BUILD) $(COMPILED)
	@$(PYTHON_OK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME)

# The dev extra on top (pytest, ruff, mypy …); the tests require the compiled modules.
$(STAMP): $(BUILD) $(COMPILED) | compiler
	@$(PYTHON_OK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUNTIME)

install-runtime: $(RUNTIME)  ## install evald with its runtime dependencies only (VENV=...)

run: $(RUNTIME)  ## start the daemon on the default config (OTLP :4317/:4318, admin :9464)
	$(BIN)/evald serve --config $(CONFIG)

test: lint typecheck unit pure  ## lint, type-check, the whole test suite, and the pure-Python install's tests

lint: $(STAMP)  ## ruff lint + format check
	$(BIN)/ruff check collector evaluators tests benchmarks deploy build_backend setup.py
	$(BIN)/ruff format --check collector evaluators tests benchmarks deploy build_backend setup.py

format: $(STAMP)  ## apply ruff formatting and safe fixes
	$(BIN)/ruff check --fix collector evaluators tests benchmarks deploy build_backend setup.py
	$(BIN)/ruff format collector evaluators tests benchmarks deploy build_backend setup.py

typecheck: $(STAMP)  ## mypy --strict on the packages and the build backend
	$(BIN)/mypy
	$(BIN)/mypy --strict build_backend/evald_build.py

unit: $(STAMP) prometheus  ## pytest (unit, golden and loopback integration tests)
	$(BIN)/pytest -q

# Not editable: the source tree holds the compiled modules of the editable dev install,
# which would shadow the interpreted code. pip rebuilds and reinstalls a local project
# every time, so a changed source is picked up.
SOURCES = $(shell find collector evaluators -name '*.py' -o -name '*.pyx' -o -name '*.pyi')
$(PURE_STAMP): $(BUILD) $(SOURCES)
	@$(PYTHON_OK)
	test -x $(PURE_VENV)/bin/python || $(PYTHON) -m venv $(PURE_VENV)
	EVALD_PURE_PYTHON=1 $(PURE_VENV)/bin/python -m pip install --quiet '.[test]'
	touch $(PURE_STAMP)

# pytest runs from the venv's script (not `python -m`), so `collector` is imported from
# the pure install, not from this tree; EVALD_EXPECT_BUILD makes the tests check that.
pure: $(PURE_STAMP)  ## decode, normalize, evaluator and replay tests on a pure-Python install (.venv-pure)
	EVALD_EXPECT_BUILD=pure $(PURE_VENV)/bin/pytest -q -p no:cacheprovider $(PURE_TESTS) \
		--ignore=tests/unit/evaluators/test_langchain_adapter.py  # langchain-core: a dev extra

# Needs only the `build` tool in $(VENV), not the dev install (which would compile).
dist:  ## build the sdist and the wheel into dist/ (python -m build; DIST=...)
	@$(PYTHON_OK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -c 'import build' 2>/dev/null || $(BIN)/python -m pip install --quiet 'build>=1.2'
	$(BIN)/python -m build --outdir $(DIST) .

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
# install succeeds without a compiler (make install-runtime, make run), but the tests
# require the compiled modules.
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

clean:  ## remove the virtualenvs, builds and caches
	rm -rf $(VENV) $(PURE_VENV) $(DIST) .mypy_cache .ruff_cache .pytest_cache *.egg-info build
	rm -f collector/decode/_wire.c
	find collector evaluators -name '*.so' -delete
	rm -f evald_normalizer__mypyc.*.so evald_evaluators__mypyc.*.so
