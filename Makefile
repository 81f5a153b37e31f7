# constructs-fifo: every command works on a fresh clone; nothing is installed globally.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
NODE_BIN := $(CURDIR)/node_modules/.bin

export PATH := $(NODE_BIN):$(CURDIR)/$(BIN):$(PATH)
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
# jsii's end-of-life warning is silenced per Node major version (Node 20 reached it on 2026-10-30); its
# Python runtime prints it as bytes (b'!!...', aws/jsii#4065). `constructs-fifo deploy` shows it as text.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := $(shell node -p "process.versions.node.split('.')[0]" 2>/dev/null)
export CDK_DISABLE_VERSION_CHECK := 1

.PHONY: setup lint typecheck test test-fast synth scan demo bench chaos docs site clean

# uv installs into the project's .venv in ~35 s where pip needs ~2 min on 2 cores (its resolver is
# the cost), which keeps `make demo` from a fresh clone under 3 minutes. Bytecode is compiled at
# install because this machine sets PYTHONDONTWRITEBYTECODE: without it every jsii process would
# recompile aws_cdk's multi-megabyte modules.
UV := $(BIN)/uv
UV_PIP := $(UV) pip install --quiet --python $(PY) --compile-bytecode

# aws-cdk-lib and its dependency aws-cdk.cloud-assembly-schema both ship aws_cdk/cloud_assembly_schema/__init__.py
# (two jsii assemblies, one path). pip installs a dependency before its dependent, so aws-cdk-lib's copy wins;
# uv installs wheels in parallel, so either can. When the schema package's copy wins, aws-cdk-lib's
# cloud_assembly_schema types never register and reading a synthesized app's annotations
# (Annotations.find_warning) fails with "Unknown interface: aws-cdk-lib.cloud_assembly_schema.MetadataEntry"
# (CI failed so once). Reinstalling aws-cdk-lib alone (~9 s) puts its copy back; the check reads the file
# (importing aws_cdk would start jsii).
CDK_SCHEMA_IS_LIBS := $(PY) -c "import pathlib, sys, sysconfig; p = pathlib.Path(sysconfig.get_paths()['purelib'], 'aws_cdk', 'cloud_assembly_schema', '__init__.py'); sys.exit(0 if 'aws-cdk-lib.cloud_assembly_schema' in p.read_text() else 'aws_cdk/cloud_assembly_schema is aws-cdk.cloud-assembly-schema\'s copy, not aws-cdk-lib\'s (see the Makefile)')"

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv==0.13.9
	$(UV_PIP) -e '.[dev]'
	$(CDK_SCHEMA_IS_LIBS) || $(UV_PIP) --no-deps --reinstall-package aws-cdk-lib "aws-cdk-lib==$$($(PY) -c 'import importlib.metadata as m; print(m.version("aws-cdk-lib"))')"
	$(CDK_SCHEMA_IS_LIBS)
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(VENV)/.installed node_modules/.installed

# actionlint and zizmor check .github/workflows; zizmor --offline runs every audit that needs no network
# (no GitHub API calls, no token), which is all this machine and a pull request from a fork can do.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/actionlint
	$(BIN)/zizmor --offline --quiet .github/workflows

typecheck: setup
	$(BIN)/mypy

# The suite on every core (pytest-xdist; `TEST_WORKERS=0` runs it in one process). Each test file is one
# unit of work, and tests/e2e, tests/examples, tests/infrastructure and tests/conformance one each
# (tests/conftest.py says why); units go out in collection order, so tests/e2e, the longest (~6 minutes),
# starts in the first minute.
TEST_WORKERS ?= auto
PYTEST_WORKERS := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# CI's command (13 min 25 s from a fresh clone on 2 cores, `make setup` included; pytest 12 min 37 s). checkov
# (docs/security.md's scanner rows) runs inside it from uv's own environment. mypy (~2 minutes with no
# cache, mostly aws_cdk's modules) and then the docs site (`make site`, ~25 s) run beside pytest, whose
# workers spend much of their time waiting on emulators and the CDK CLI; their reports follow pytest's,
# and any of the three failing fails the target.
test: lint
	@echo "$(BIN)/mypy, then make site (beside pytest; their reports follow pytest's)"
	@{ $(BIN)/mypy >$(VENV)/typecheck.log 2>&1; echo $$? >$(VENV)/typecheck.rc; \
	   $(MAKE) --no-print-directory site >$(VENV)/site.log 2>&1; echo $$? >$(VENV)/site.rc; } & beside=$$!; \
	CHECKOV="$(CHECKOV)" $(BIN)/pytest $(PYTEST_WORKERS); tests=$$?; \
	wait $$beside; typed=$$(cat $(VENV)/typecheck.rc); built=$$(cat $(VENV)/site.rc); \
	echo "$(BIN)/mypy:"; cat $(VENV)/typecheck.log; echo "make site:"; cat $(VENV)/site.log; \
	if [ $$tests -ne 0 ]; then exit $$tests; fi; if [ $$typed -ne 0 ]; then exit $$typed; fi; exit $$built

test-fast: setup
	$(BIN)/pytest $(PYTEST_WORKERS) -m "not e2e"

synth: setup
	cdk synth --quiet

# docs/security.md's checkov rows, checked too: checkov cannot share the dev venv (it requires
# packaging<24, pytest packaging>=24), so uv runs it from an environment of its own (PyPI, once).
CHECKOV_VERSION := 3.3.30
CHECKOV := $(UV) tool run --from checkov==$(CHECKOV_VERSION) checkov
scan: setup
	CHECKOV="$(CHECKOV)" $(BIN)/pytest -q -p no:randomly tests/infrastructure/test_security.py

# The main job: the embedded emulator, the real CDK CLI deploying the sample app, real jobs, verified;
# then the events scenario (seed 004's shuffled account events through the sample's bus and pipe,
# converging by seq) in an emulator of its own (~50 s: its own deploy is most of it).
demo: setup
	$(BIN)/constructs-fifo demo --report reports/demo.json
	$(BIN)/constructs-fifo demo --scenario events --report reports/demo-events.json

# One run of every figure (issue 8's eight, ~3-4 minutes on 2 cores, and issue 17's figure 9, what a
# job costs and what the steering controls cost, ~1 minute more): prints the table and writes
# reports/bench/BENCHMARKS.md and its charts; `BENCH_ARGS="--only 9"` runs figure 9 alone (`--no-controls`
# leaves its controls out). `make bench BENCH_ARGS="--out ."` refreshes the committed
# BENCHMARKS.md and benchmarks.png; `--json` prints the figures for machines; `--help` lists the rest.
bench: setup
	$(PY) -m benchmarks $(BENCH_ARGS)

# The model and property tests with many more examples than CI's bounded, reproducible run, and the
# chaos suite (tests/chaos: several workers, faults at any call, crashes, stale workers), which ends
# by printing how many schedules it played and which faults it injected where.
CHAOS_EXAMPLES ?= 500
chaos: setup
	CONSTRUCTS_FIFO_HYPOTHESIS_PROFILE=chaos CONSTRUCTS_FIFO_EXAMPLES=$(CHAOS_EXAMPLES) \
		$(BIN)/pytest -q -p no:randomly --hypothesis-show-statistics \
		tests/functional/test_runtime_model.py tests/functional/test_runtime_state_model.py \
		tests/functional/test_worker_model.py tests/functional/test_worker_loop.py \
		tests/unit/test_runtime_state_core_apply.py tests/chaos

# The props tables of README.md and docs/construct.md, written from the settings spec
# (constructs_fifo/runtime/settings/spec.py); tests/unit/test_construct_settings_props_table.py fails when one drifts.
docs: setup
	$(PY) -m constructs_fifo.construct.settings.props_table

# The documentation site (mkdocs.yml): docs/ as its pages and the API reference generated from the
# docstrings, into site/. --strict: a broken link or anchor, an unresolved cross-reference or a page left
# out of the nav fails it. Needs only the Python environment (no Node); the release workflow publishes it.
# Material for MkDocs prints a banner about its successor on every build; NO_MKDOCS_2_WARNING silences it.
site: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf cdk.out site .pytest_cache .mypy_cache .ruff_cache dist build
