# One place for every routine command. `make setup` once, then `make analyze` / `make test`;
# a contributor runs `make dev` once more (the lint, type and docs tools).
PYTHON ?= python3
include scripts/common.mk
CONFIG ?= configs/default.toml

.PHONY: setup dev lexicon aot test test-integration test-slow test-all check format format-check lint typecheck docs clean analyze notebook

setup: $(VENV)/.installed lexicon aot  ## create .venv with what running, analysing and `make test` need (the [test] extra: [analyze], polars, pytest), and the prove and analyze commands' kernels compiled ahead of time

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m compileall -q -j 0 pipeline >/dev/null  # pip compiles what it installs, not an editable package
	touch $@

dev: $(VENV)/.dev aot  ## a contributor's setup (CI's): `make setup` plus every extra, the docs, lint and type-check tools

$(VENV)/.dev: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

lexicon:  ## install Debian's tanglet-data (14 more languages) where apt and root are available; optional: enable2k is embedded
	@if [ -f "$${TANGLET_DATA:-/usr/share/tanglet/gamedata}/en/words" ]; then \
	  echo "tanglet-data: installed"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y -qq tanglet-data >/dev/null || echo "note: apt-get install tanglet-data failed; the embedded enable2k is used by default"; \
	elif command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  sudo apt-get install -y -qq tanglet-data >/dev/null || echo "note: apt-get install tanglet-data failed; the embedded enable2k is used by default"; \
	else \
	  echo "note: tanglet-data (tanglet:<lang> word lists) not installed: needs apt and root; the embedded enable2k is the default"; \
	fi

aot: $(VENV)/.installed  ## compile the kernels of boggle prove and boggle analyze ahead of time (pipeline/_kernels_aot*.so, about 30 s on 2 cores; needs a C compiler; `make setup` runs it): about 110 MB less a process, and 0.5 CPU-s less an analysis, see docs/performance.md; without it both use numba's JIT, with the same results
	@$(PY) -m pipeline.aot --if-stale || echo "note: boggle prove and boggle analyze keep numba's JIT (more memory and start-up, the same results)"

# the default suite runs on this many pytest-xdist processes (the integration and slow checks
# stay serial: they time real processes and signals)
TEST_WORKERS ?= 2

test:  ## the default suite: unit tests and a few end-to-end smoke runs (tests/test_smoke.py), on 2 processes: about 4 minutes on 2 cores
	$(PY) -m pytest -q -n $(TEST_WORKERS)

test-integration:  ## end to end with real processes: killed jobs, big runs, dask, S3 (moto), the notebook, a browser
	$(PY) -m pytest -q -m "integration and not slow"

test-slow:  ## only the slow checks (the ENABLE2K 3x3 proof, the 4x4 optimum, more cases of each check): CI runs them
	$(PY) -m pytest -q -m slow

test-all:  ## every test: the default suite, the integration and the slow checks
	$(PY) -m pytest -q -m ""

format: $(VENV)/.dev
	$(BIN)/ruff format pipeline benchmarks tests docs/_hooks
	$(BIN)/ruff check --fix pipeline benchmarks tests docs/_hooks

format-check: $(VENV)/.dev
	$(BIN)/ruff format --check pipeline benchmarks tests docs/_hooks

lint: $(VENV)/.dev  ## ruff, and the import contract of pyproject.toml ([tool.importlinter])
	$(BIN)/ruff check pipeline benchmarks tests docs/_hooks
	$(BIN)/lint-imports

typecheck: $(VENV)/.dev
	$(BIN)/mypy

docs: $(VENV)/.dev  ## the documentation site (mkdocs.yml, docs/) into site/; --strict: a warning (a broken link) fails
	$(BIN)/mkdocs build --strict --site-dir site

check: format-check lint typecheck test  ## everything CI checks

# Benchmarks and the long experiments live in scripts/ (bench.mk, experiments.mk); these two
# rules reach them, so `make bench`, `make bench-prove`, `make prove-3x4` work from here.
BENCH := bench-lexicon bench-vs-cpp bench-prove bench-verify bench-cluster bench-algorithms bench-pipeline bench-analyze
EXPERIMENTS := optimize-4x4 prove-3x3 prove-3x4 prove-4x4 sample-4x4 prove-3x4-tanglet estimate-4x4
.PHONY: bench $(BENCH) $(EXPERIMENTS)
bench $(BENCH):  ## benchmarks (scripts/bench.mk): make bench, or one of make bench-NAME
	@$(MAKE) --no-print-directory -f scripts/bench.mk $@
$(EXPERIMENTS):  ## the long experiments behind the certificates (scripts/experiments.mk)
	@$(MAKE) --no-print-directory -f scripts/experiments.mk $@

RUN_DIR ?= runs/$(basename $(notdir $(CONFIG)))
REPORT_DIR ?= reports/$(basename $(notdir $(CONFIG)))
.PHONY: analyze
# Each stage is skipped when done: `boggle run` does nothing for a finished run (it resumes an
# interrupted one), and the analysis reruns only when the run's marker (_SUCCESS.parquet; a run
# of schema 5: _SUCCESS) is newer than the report.
analyze: setup  ## generate, solve and analyse $(CONFIG) into $(RUN_DIR) and $(REPORT_DIR)/report.html
	$(BIN)/boggle run $(CONFIG) --out $(RUN_DIR)
	@marker=$(RUN_DIR)/_SUCCESS.parquet; [ -f $$marker ] || marker=$(RUN_DIR)/_SUCCESS; \
	if [ -f $$marker ] && [ $(REPORT_DIR)/report.html -nt $$marker ]; then \
	  echo "$(REPORT_DIR) is up to date with $(RUN_DIR)"; \
	  echo "report: $(abspath $(REPORT_DIR))/report.html"; \
	else \
	  $(BIN)/boggle analyze $(RUN_DIR) --out $(REPORT_DIR); \
	fi

.PHONY: notebook
# The notebook reads $(RUN_DIR) (BOGGLE_RUN_DIR), made or brought up to date by `make analyze`;
# outputs go to $(REPORT_DIR)/board_quality.ipynb, so the committed notebook stays output-free.
notebook: analyze $(VENV)/.notebook  ## run $(CONFIG) if needed, then execute notebooks/board_quality.ipynb on it
	BOGGLE_RUN_DIR=$(abspath $(RUN_DIR)) $(BIN)/jupyter execute notebooks/board_quality.ipynb \
	  --output=$(abspath $(REPORT_DIR))/board_quality.ipynb
	@echo "notebook: $(abspath $(REPORT_DIR))/board_quality.ipynb"

$(VENV)/.notebook: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[notebook]'
	touch $@

clean:
	rm -rf runs reports site .pytest_cache .mypy_cache .ruff_cache
